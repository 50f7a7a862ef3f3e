//! Hand-made archives for the tests (tests/corrupt/, tests/differential/): header, block
//! table, tables and data assembled byte by byte from FORMAT.md §2-§5 (not from the crate's
//! own structs, so a layout change also fails the tests), with the meta checksum (XXH3-64 of
//! header[0..88] ++ block table ++ table section ++ extension area, at header offset 88)
//! sealed. Block entries are written with the widest field widths (32 bits, 8 for lane
//! counts), which puts every field at a fixed byte offset ([`ENTRY`]).

// each test crate uses a different part
#![allow(dead_code)]

pub mod attack;
#[cfg(feature = "cli")]
pub mod cli;
pub mod parts;

use xxhash_rust::xxh3::xxh3_64;

/// SplitMix64: small, seedable, good enough for test data (tests/round_trip.rs,
/// tests/differential/).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`; 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// Uniform in `lo..=hi_incl`.
    pub fn range(&mut self, lo: u64, hi_incl: u64) -> u64 {
        lo + self.below(hi_incl - lo + 1)
    }
    /// A uniformly chosen element of `s` (non-empty).
    pub fn pick<T: Copy>(&mut self, s: &[T]) -> T {
        s[self.below(s.len() as u64) as usize]
    }
}

/// DNA-like data, `n` bytes: runs of random bases and, past the first 20,000 bytes, copies of
/// earlier stretches (50 to 3,000 bytes, from anywhere before, so near and far beyond a 4 KiB
/// block: a cross-block window has matches to use) with one base changed in each copy.
pub fn dna_with_repeats(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut v: Vec<u8> = Vec::with_capacity(n);
    while v.len() < n {
        if v.len() > 20_000 && r.below(3) == 0 {
            let len = r.range(50, 3_000) as usize;
            let from = r.below((v.len() - len) as u64) as usize;
            v.extend_from_within(from..from + len);
            let at = v.len() - 1 - r.below(len as u64) as usize;
            v[at] = b"ACGT"[r.below(4) as usize];
        } else {
            for _ in 0..r.range(1, 500) {
                v.push(b"ACGT"[r.below(4) as usize]);
            }
        }
    }
    v.truncate(n);
    v
}

pub fn get_u32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
pub fn get_u64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}
pub fn put_u16(b: &mut [u8], o: usize, v: u16) {
    b[o..o + 2].copy_from_slice(&v.to_le_bytes());
}
pub fn put_u32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}
pub fn put_u64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// Header size (FORMAT.md §2).
pub const HEADER: usize = 96;
/// Block-table entry size of the hand-made archives (FORMAT.md §3.1 with the widths of
/// [`FIXED_ENTRY_BITS`]): checksum at 0, `stored_len[5]` (u32) at 8, `decoded_len[5]` at
/// 28, `lanes[5]` (bytes) at 48, `max_depth` (u32) at 53, source distance `i -
/// lowest_source_block` (u32) at 57; 424 bits of fields, no padding.
pub const ENTRY: usize = 61;
/// Header bytes 72..88 of the hand-made archives (FORMAT.md §2): stored and decoded widths
/// 32, lanes 8, depth and source 32, match base 6, reserved zero.
pub const FIXED_ENTRY_BITS: [u8; 16] = [32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 8, 32, 32, 6, 0, 0];

/// FORMAT.md §6: the value XORed into block `i`'s XXH3-64 to give its stored checksum
/// (SplitMix64's first output for state `i`), written out here from the spec.
pub fn position_mix(i: u32) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
/// Streams per block (FORMAT.md §1): literals, lengths, offsets, commands, offset tails.
pub const STREAMS: usize = 5;

#[derive(Clone)]
pub struct Hdr {
    pub flags: u16,
    pub original_size: u64,
    pub block_size: u32,
    pub block_count: Option<u32>,
    pub group_blocks: u32,
    pub group_count: Option<u32>,
    pub window: u32,
    pub table_bytes: Option<u64>,
    pub data_bytes: Option<u64>,
    pub content: u64,
}

impl Hdr {
    pub fn new(original_size: u64, block_size: u32) -> Hdr {
        Hdr {
            flags: 0,
            original_size,
            block_size,
            block_count: None,
            group_blocks: 1 << 20 >> block_size.trailing_zeros().min(20),
            group_count: None,
            window: block_size,
            table_bytes: None,
            data_bytes: None,
            content: 0,
        }
    }
}

/// A block entry's fields; `checksum` is the block's plain XXH3-64 (the position mix is
/// applied by [`Ent::bytes`] and removed by [`packed_entries`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ent {
    pub checksum: u64,
    pub stored: [u32; STREAMS],
    pub decoded: [u32; STREAMS],
    pub depth: u32,
    pub lowest: u32,
    pub lanes: [u8; STREAMS],
}

impl Ent {
    /// The entry as entry `i` of a hand-made archive ([`ENTRY`] layout); `lowest` must be at
    /// most `i` (a larger one wraps, which the reader rejects as a source before block 0).
    pub fn bytes(&self, i: u32) -> [u8; ENTRY] {
        let mut e = [0u8; ENTRY];
        put_u64(&mut e, 0, self.checksum ^ position_mix(i));
        for k in 0..STREAMS {
            put_u32(&mut e, 8 + 4 * k, self.stored[k]);
            put_u32(&mut e, 28 + 4 * k, self.decoded[k]);
            e[48 + k] = self.lanes[k];
        }
        put_u32(&mut e, 53, self.depth);
        put_u32(&mut e, 57, i.wrapping_sub(self.lowest));
        e
    }
}

/// Offset of the entry widths in the header (FORMAT.md §2).
pub const H_ENTRY_BITS: usize = 72;

/// The field widths of an archive's packed entries in packing order (FORMAT.md §3.1): five
/// stored lengths, five decoded lengths, the lane width five times, depth, source distance.
pub fn packed_widths(archive: &[u8]) -> [u32; 17] {
    let b = &archive[H_ENTRY_BITS..H_ENTRY_BITS + 16];
    let mut w = [0u32; 17];
    for k in 0..STREAMS {
        w[k] = b[k] as u32;
        w[STREAMS + k] = b[STREAMS + k] as u32;
        w[2 * STREAMS + k] = b[10] as u32;
    }
    w[15] = b[11] as u32;
    w[16] = b[12] as u32;
    w
}

/// Bytes of one packed entry: 8 + the widths' sum in whole bytes.
pub fn packed_entry_size(archive: &[u8]) -> usize {
    8 + (packed_widths(archive).iter().sum::<u32>() as usize).div_ceil(8)
}

/// Reads the packed block table of an archive, bit by bit as FORMAT.md §3.1 says (LSB first
/// after the 8-byte checksum; the last field is `i - lowest_source_block`); the checksums
/// come back with the position mix removed (§6).
pub fn packed_entries(archive: &[u8]) -> Vec<Ent> {
    assert_eq!(get_u32(archive, 4) & 0xFFFF, 1, "not a format-1 archive");
    let n = get_u32(archive, 20) as usize;
    let size = packed_entry_size(archive);
    let w = packed_widths(archive);
    (0..n)
        .map(|i| {
            let e = &archive[HEADER + i * size..HEADER + (i + 1) * size];
            let bit = |j: usize| ((e[8 + j / 8] >> (j % 8)) & 1) as u32;
            let mut pos = 0usize;
            let mut v = [0u32; 17];
            for (x, &wd) in v.iter_mut().zip(&w) {
                for j in 0..wd as usize {
                    *x |= bit(pos + j) << j;
                }
                pos += wd as usize;
            }
            let mut ent = Ent {
                checksum: get_u64(e, 0) ^ position_mix(i as u32),
                depth: v[15],
                lowest: i as u32 - v[16],
                ..Default::default()
            };
            for k in 0..STREAMS {
                ent.stored[k] = v[k];
                ent.decoded[k] = v[STREAMS + k];
                ent.lanes[k] = v[2 * STREAMS + k] as u8;
            }
            ent
        })
        .collect()
}

/// The same archive with its entries repacked in the widths of [`FIXED_ENTRY_BITS`] (the
/// match base kept), so that the tests that patch entry fields at fixed offsets run on what
/// the encoder makes.
pub fn with_fixed_entries(archive: &[u8]) -> Vec<u8> {
    let entries = packed_entries(archive);
    let rest = HEADER + entries.len() * packed_entry_size(archive);
    let mut out = archive[..HEADER].to_vec();
    let base = out[85];
    out[H_ENTRY_BITS..H_ENTRY_BITS + 16].copy_from_slice(&FIXED_ENTRY_BITS);
    out[85] = base;
    for (i, e) in entries.iter().enumerate() {
        out.extend_from_slice(&e.bytes(i as u32));
    }
    out.extend_from_slice(&archive[rest..]);
    reseal_entries(&mut out, ENTRY);
    out
}

/// Assembles header, block table (given as raw bytes), tables and data; seals the meta
/// checksum. Fields left `None` are computed consistently.
pub fn assemble(h: &Hdr, block_table: &[u8], tables: &[u8], data: &[u8]) -> Vec<u8> {
    let bs = h.block_size as u64;
    let block_count = h
        .block_count
        .unwrap_or(h.original_size.div_ceil(bs.max(1)) as u32);
    let group_count = h
        .group_count
        .unwrap_or((block_count as u64).div_ceil(h.group_blocks.max(1) as u64) as u32);
    let mut out = vec![0u8; HEADER];
    out[0..4].copy_from_slice(b"ACPX");
    put_u16(&mut out, 4, 1);
    put_u16(&mut out, 6, h.flags);
    put_u64(&mut out, 8, h.original_size);
    put_u32(&mut out, 16, h.block_size);
    put_u32(&mut out, 20, block_count);
    put_u32(&mut out, 24, h.group_blocks);
    put_u32(&mut out, 28, group_count);
    put_u32(&mut out, 32, 6);
    put_u32(&mut out, 36, h.window);
    put_u32(&mut out, 44, 5);
    put_u64(&mut out, 48, h.table_bytes.unwrap_or(tables.len() as u64));
    put_u64(&mut out, 56, h.data_bytes.unwrap_or(data.len() as u64));
    put_u64(&mut out, 64, h.content);
    out[H_ENTRY_BITS..H_ENTRY_BITS + 16].copy_from_slice(&FIXED_ENTRY_BITS);
    let mut covered = out[..88].to_vec();
    covered.extend_from_slice(block_table);
    covered.extend_from_slice(tables);
    put_u64(&mut out, 88, xxh3_64(&covered));
    out.extend_from_slice(block_table);
    out.extend_from_slice(tables);
    out.extend_from_slice(data);
    out
}

/// One block: five stored slices, decoded lengths (None: = stored, raw), lanes, lowest.
#[derive(Clone)]
pub struct Blk {
    /// Stored slices: literals, lengths, offsets, commands, offset tails.
    pub slices: [Vec<u8>; STREAMS],
    /// Decoded lengths (default: the stored lengths, as raw slices need).
    pub decoded: Option<[u32; STREAMS]>,
    pub lanes: [u8; STREAMS],
    /// Lowest source block (default: own index).
    pub lowest: Option<u32>,
    /// Checksum override (default: XXH3 of the block's original bytes).
    pub checksum: Option<u64>,
}

impl Blk {
    /// Raw slices, every default; `offs` holds the distances as whole LEB128 varints, which
    /// `aceapex::encode::lz::split_offsets` cuts into the offset and offset-tail streams.
    pub fn raw(lits: &[u8], lens: &[u8], offs: &[u8], cmds: &[u8]) -> Blk {
        let (heads, tails) = aceapex::encode::lz::split_offsets(offs);
        Blk {
            slices: [lits.to_vec(), lens.to_vec(), heads, cmds.to_vec(), tails],
            decoded: None,
            lanes: [0; STREAMS],
            lowest: None,
            checksum: None,
        }
    }
}

/// Builds a whole archive whose block and content checksums match `original`.
pub fn build(mut h: Hdr, original: &[u8], blocks: &[Blk], tables: Option<Vec<u8>>) -> Vec<u8> {
    h.original_size = original.len() as u64;
    h.content = xxh3_64(original);
    let bs = h.block_size as usize;
    let bc = original.len().div_ceil(bs);
    assert_eq!(bc, blocks.len());
    let gc = bc.div_ceil(h.group_blocks as usize);
    let tables = tables.unwrap_or_else(|| vec![0u8; STREAMS * gc]);
    let mut bt = Vec::new();
    let mut data = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let r = i * bs..((i + 1) * bs).min(original.len());
        let mut e = Ent {
            checksum: b.checksum.unwrap_or_else(|| xxh3_64(&original[r])),
            lowest: b.lowest.unwrap_or(i as u32),
            lanes: b.lanes,
            ..Default::default()
        };
        for k in 0..STREAMS {
            e.stored[k] = b.slices[k].len() as u32;
            e.decoded[k] = b.decoded.map_or(b.slices[k].len() as u32, |d| d[k]);
            data.extend_from_slice(&b.slices[k]);
        }
        bt.extend_from_slice(&e.bytes(i as u32));
    }
    assemble(&h, &bt, &tables, &data)
}

pub fn one_block(original: &[u8], blk: Blk) -> Vec<u8> {
    build(Hdr::new(0, 4096), original, &[blk], None)
}

/// kind-1 table record.
pub fn table_record(freqs: &[(u8, u32)]) -> Vec<u8> {
    let mut bitmap = [0u8; 32];
    let mut sorted = freqs.to_vec();
    sorted.sort();
    for &(s, _) in &sorted {
        bitmap[s as usize / 8] |= 1 << (s % 8);
    }
    let mut out = vec![1u8];
    out.extend_from_slice(&bitmap);
    for (_, f) in sorted {
        let mut v = f - 1;
        loop {
            let b = (v & 0x7F) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }
    out
}

pub fn varint(mut v: u32, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Writes `value` into packed field `field` (0..17, [`packed_widths`] order) of entry `i` of an
/// archive, bit by bit (the meta checksum is left stale: [`reseal_packed`]).
pub fn packed_set(archive: &mut [u8], i: usize, field: usize, value: u32) {
    let w = packed_widths(archive);
    let start = HEADER + i * packed_entry_size(archive) + 8;
    let pos: usize = w[..field].iter().map(|&x| x as usize).sum();
    for j in 0..w[field] as usize {
        let (byte, bit) = (start + (pos + j) / 8, (pos + j) % 8);
        archive[byte] = (archive[byte] & !(1 << bit)) | ((((value >> j) & 1) as u8) << bit);
    }
}

/// Recomputes an archive's meta checksum from its own header fields.
pub fn reseal_packed(archive: &mut [u8]) {
    let size = packed_entry_size(archive);
    reseal_entries(archive, size);
}

/// Recomputes the meta checksum (FORMAT.md §6: header bytes 0..88, block table, table
/// section, extension area) from the header's own block count, table and data bytes, for
/// entries of `entry_size` bytes; a section past the file's end is cut at the end.
pub fn reseal_entries(archive: &mut [u8], entry_size: usize) {
    let n = get_u32(archive, 20) as usize;
    let tb = get_u64(archive, 48) as usize;
    let db = get_u64(archive, 56) as usize;
    let end = HEADER
        .saturating_add(n.saturating_mul(entry_size))
        .saturating_add(tb)
        .min(archive.len());
    let data_end = end.saturating_add(db).min(archive.len());
    let mut covered = archive[..88].to_vec();
    covered.extend_from_slice(&archive[HEADER..end]);
    covered.extend_from_slice(&archive[data_end..]);
    put_u64(archive, 88, xxh3_64(&covered));
}

/// The largest block size (FORMAT.md §2).
const MAX_BLOCK: u32 = 4 << 20;

/// A ~1 MB archive (tests/corrupt, tests/cli_decompress.rs): 15,000 empty entries of 4 MiB blocks: original_size ~ 63 GB.
pub fn huge_original_archive() -> Vec<u8> {
    let nb = 15_000usize;
    let h = Hdr::new(nb as u64 * MAX_BLOCK as u64, MAX_BLOCK);
    let bt: Vec<u8> = (0..nb)
        .flat_map(|i| {
            Ent {
                lowest: i as u32,
                ..Default::default()
            }
            .bytes(i as u32)
        })
        .collect();
    let gc = nb.div_ceil(h.group_blocks as usize);
    assemble(&h, &bt, &vec![0u8; STREAMS * gc], &[])
}

/// Flips a bit in the middle of block `b`'s stored bytes (its slices in the data section),
/// leaving every checksum as it was: the block then fails to decode or its checksum.
pub fn damage_block_middle(archive: &mut [u8], b: usize) {
    let (start, end) = {
        let a = aceapex::format::Archive::parse(archive).unwrap();
        let off = a.data_offset();
        let next = a
            .block_offsets()
            .get(b + 1)
            .copied()
            .unwrap_or(a.header().data_bytes);
        (off + a.block_offsets()[b], off + next)
    };
    archive[((start + end) / 2) as usize] ^= 0x10;
}
