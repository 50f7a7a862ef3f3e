//! The checks behind the fuzz targets (`fuzz/fuzz_targets/*.rs`), shared word for word with
//! the regression replay (`tests/fuzz_regressions.rs`) and the hostile-archive campaign
//! (`examples/hostile_campaign.rs`), which include this file with `#[path]`: a committed
//! input runs through exactly the checks that found it, without libFuzzer.
//!
//! Every target takes raw bytes and reads its choices (options, ranges, mutations) from
//! them with [`Cursor`], which yields zeros once the bytes run out, so any input is valid
//! and a replay needs no crate beyond the library's own.
//!
//! What the checks demand (docs/RELIABILITY.md): bad input gives an `Err`, never a panic,
//! a hang or unbounded memory; an `Ok` decode equals every other decode path (whole decode,
//! `Reader`, region reads, the reference block decoder) and, where the archive was built
//! from known data and only its meta checksum was recomputed, equals that data.

// each includer uses a different part
#![allow(dead_code)]

use aceapex::decode::decode_block_reference;
use aceapex::device::format::{
    block_position_mix, EntryBits, LANES_RAW, LANES_TWO_BIT, MAX_LANES, STREAM_LITERALS,
};
use aceapex::format::Archive;
use aceapex::{DecodeError, Reader, Settings, Status, TwoBit};
use std::sync::OnceLock;
use xxhash_rust::xxh3::xxh3_64;

/// Header bytes (FORMAT.md §2).
const HEADER: usize = 96;
/// Header offsets (FORMAT.md §2) of the fields the reseal reads and writes.
const H_ORIGINAL_SIZE: usize = 8;
const H_BLOCK_COUNT: usize = 20;
const H_TABLE_BYTES: usize = 48;
const H_DATA_BYTES: usize = 56;
const H_CONTENT: usize = 64;
const H_ENTRY_BITS: usize = 72;
const H_META: usize = 88;

/// Largest original size the checks decode whole: an archive may declare far more than its
/// own size (a decompression bomb, issue 39's bounded-memory work), which the decoder meets
/// with an address-space reservation that libFuzzer's malloc limit would count as a leak of
/// memory; above this only bounded region reads run.
pub const MAX_WHOLE_DECODE: u64 = 16 << 20;
/// Largest region a check reads.
const MAX_REGION: u64 = 1 << 20;
/// Region reads per decode check.
const REGION_READS: usize = 4;

/// A reader of fuzzer choices: little-endian integers from the front of the input, zeros
/// once it is used up.
pub struct Cursor<'a>(pub &'a [u8]);

impl<'a> Cursor<'a> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    pub fn u64(&mut self) -> u64 {
        (self.u32() as u64) | ((self.u32() as u64) << 32)
    }
    /// Up to `n` bytes, fewer where the input ends.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.0.len())
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn get_u32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn get_u64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}
fn put_u64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// Bytes of one packed block entry under the header's widths (FORMAT.md §3.1), computed
/// without checking them (the reseal runs before the parse).
fn entry_size(archive: &[u8]) -> usize {
    let bits: EntryBits = bytemuck::pod_read_unaligned(&archive[H_ENTRY_BITS..H_ENTRY_BITS + 16]);
    let w: usize = bits
        .stored
        .iter()
        .chain(&bits.decoded)
        .map(|&w| w as usize)
        .sum::<usize>()
        + 5 * bits.lanes as usize
        + bits.depth as usize
        + bits.source as usize;
    8 + w.div_ceil(8)
}

/// Recomputes the meta checksum (FORMAT.md §6: XXH3-64 of header bytes 0..88, the block
/// table, the table section and the extension area) from the archive's own header fields; a
/// section that runs past the end is cut there. Archives shorter than a header are left.
pub fn reseal_meta(archive: &mut [u8]) {
    if archive.len() < HEADER {
        return;
    }
    let n = get_u32(archive, H_BLOCK_COUNT) as usize;
    let tb = get_u64(archive, H_TABLE_BYTES);
    let db = get_u64(archive, H_DATA_BYTES);
    let end = (HEADER as u64)
        .saturating_add((n as u64).saturating_mul(entry_size(archive) as u64))
        .saturating_add(tb)
        .min(archive.len() as u64) as usize;
    let data_end = (end as u64).saturating_add(db).min(archive.len() as u64) as usize;
    let mut covered = archive[..H_META].to_vec();
    covered.extend_from_slice(&archive[HEADER..end]);
    covered.extend_from_slice(&archive[data_end..]);
    put_u64(archive, H_META, xxh3_64(&covered));
}

/// Recomputes, after [`reseal_meta`], every block checksum the reference decoder can make
/// true: block by block in order, a block whose only fault is its checksum gets the XXH3-64
/// of the bytes it decoded to (XOR its position mix, FORMAT.md §6), and when every block
/// decodes the content checksum becomes that of the whole output; the meta checksum is
/// recomputed last. Returns the reference output when every block decoded (the bytes every
/// decoder must then give), else `None`. Does nothing (`None`) to an archive that does not
/// parse or declares more than [`MAX_WHOLE_DECODE`] bytes.
pub fn reseal_blocks(archive: &mut [u8]) -> Option<Vec<u8>> {
    let (fixes, out) = {
        let a = Archive::parse(archive).ok()?;
        let size = a.header().original_size;
        if size > MAX_WHOLE_DECODE {
            return None;
        }
        let mut out = vec![0u8; size as usize];
        let mut fixes = Vec::new();
        let mut all_ok = true;
        for b in 0..a.block_count() {
            match decode_block_reference(&a, b, &mut out, 0) {
                Ok(()) => {}
                Err(DecodeError::Block {
                    status: Status::Checksum,
                    ..
                }) => {
                    let r = a.block_range(b);
                    let hash = xxh3_64(&out[r.start as usize..r.end as usize]);
                    fixes.push((b, hash ^ block_position_mix(b as u32)));
                }
                Err(_) => all_ok = false,
            }
        }
        (fixes, all_ok.then_some(out))
    };
    let es = entry_size(archive);
    for (b, stored) in fixes {
        put_u64(archive, HEADER + b * es, stored);
    }
    if let Some(out) = &out {
        put_u64(archive, H_CONTENT, xxh3_64(out));
    }
    reseal_meta(archive);
    out
}

/// Header fields a mutation may set, with their widths: the u32 fields from the block size
/// to the level, the section sizes, the content checksum's low word, the entry widths.
const HEADER_FIELDS: &[(usize, usize)] = &[
    (4, 2),
    (6, 2),
    (8, 8),
    (16, 4),
    (20, 4),
    (24, 4),
    (28, 4),
    (32, 4),
    (36, 4),
    (40, 4),
    (44, 4),
    (48, 8),
    (56, 8),
    (72, 1),
    (77, 1),
    (82, 1),
    (83, 1),
    (84, 1),
    (85, 1),
    (86, 1),
];

/// Values a header-field mutation picks from (besides the field's own value plus or minus
/// a little).
const EDGE_VALUES: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    31,
    32,
    33,
    255,
    4096,
    65536,
    1 << 22,
    u32::MAX as u64,
    u64::MAX,
];

/// Applies the mutation script `script` to `base` (a valid archive): up to 8 operations,
/// each chosen and parameterised by the script's bytes (a bit flip, a byte or u32 written,
/// bytes inserted or deleted, a range copied over another, a header field set to an edge
/// value, two blocks' entries swapped, a byte in one section: header, block table, tables,
/// data). Sizes and checksums are left as the operations leave them; see [`reseal_meta`].
pub fn mutate(base: &[u8], script: &mut Cursor<'_>) -> Vec<u8> {
    let mut m = base.to_vec();
    let (table_start, tables_start, data_start) = match Archive::parse(base) {
        Ok(a) => {
            let t = HEADER + a.block_count() * a.entry_size();
            (HEADER, t, a.data_offset() as usize)
        }
        Err(_) => (HEADER.min(base.len()), base.len(), base.len()),
    };
    let ops = 1 + script.u8() as usize % 8;
    for _ in 0..ops {
        if m.is_empty() {
            break;
        }
        let len = m.len();
        match script.u8() % 10 {
            0 => {
                let p = script.u32() as usize % len;
                m[p] ^= 1 << (script.u8() % 8);
            }
            1 => {
                let p = script.u32() as usize % len;
                m[p] = script.u8();
            }
            2 => {
                let p = script.u32() as usize % len;
                let v = script.u32().to_le_bytes();
                let n = 4.min(len - p);
                m[p..p + n].copy_from_slice(&v[..n]);
            }
            3 => {
                let p = script.u32() as usize % len;
                let n = (script.u8() as usize % 16 + 1).min(len - p);
                m.drain(p..p + n);
            }
            4 => {
                let p = script.u32() as usize % (len + 1);
                let n = script.u8() as usize % 16 + 1;
                let bytes = script.take(n).to_vec();
                m.splice(p..p, bytes);
            }
            5 => {
                let src = script.u32() as usize % len;
                let dst = script.u32() as usize % len;
                let n = (script.u16() as usize % 512 + 1)
                    .min(len - src)
                    .min(len - dst);
                m.copy_within(src..src + n, dst);
            }
            6 => {
                let (off, width) = HEADER_FIELDS[script.u8() as usize % HEADER_FIELDS.len()];
                if off + width <= len {
                    let mut old = [0u8; 8];
                    old[..width].copy_from_slice(&m[off..off + width]);
                    let old = u64::from_le_bytes(old);
                    let k = script.u8();
                    let v = if k.is_multiple_of(2) {
                        EDGE_VALUES[k as usize / 2 % EDGE_VALUES.len()]
                    } else {
                        old.wrapping_add((k as i8 >> 1) as i64 as u64)
                    };
                    m[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
                }
            }
            7 => {
                // two blocks' packed entries swapped (their slices then lie elsewhere)
                if let Ok(a) = Archive::parse(base) {
                    let (n, es) = (a.block_count(), a.entry_size());
                    if n > 1 {
                        let i = script.u16() as usize % n;
                        let j = script.u16() as usize % n;
                        let (pi, pj) = (HEADER + i * es, HEADER + j * es);
                        if pi.max(pj) + es <= len && i != j {
                            let ei = m[pi..pi + es].to_vec();
                            m.copy_within(pj..pj + es, pi);
                            m[pj..pj + es].copy_from_slice(&ei);
                        }
                    }
                }
            }
            _ => {
                // one byte inside a chosen section, XORed with a nonzero value
                let (lo, hi) = match script.u8() % 4 {
                    0 => (0, HEADER),
                    1 => (table_start, tables_start),
                    2 => (tables_start, data_start),
                    _ => (data_start, base.len()),
                };
                let hi = hi.min(len);
                if lo < hi {
                    let p = lo + script.u32() as usize % (hi - lo);
                    m[p] ^= script.u8().max(1);
                }
            }
        }
    }
    m
}

/// The archives the mutation targets start from: the golden archives of tests/golden, and
/// archives of the golden originals made here with the choices no golden archive shows (raw
/// match streams, wide lanes, two-bit literals, a cross-block window, small blocks), each
/// with its original.
pub fn bases() -> &'static [(Vec<u8>, &'static [u8])] {
    static BASES: OnceLock<Vec<(Vec<u8>, &'static [u8])>> = OnceLock::new();
    BASES.get_or_init(|| {
        let dna: &'static [u8] = include_bytes!("../../tests/golden/dna.fa");
        let ecoli: &'static [u8] = include_bytes!("../../tests/golden/ecoli_48k.fa");
        let moby: &'static [u8] = include_bytes!("../../tests/golden/moby_dick_64k.txt");
        let csv: &'static [u8] = include_bytes!("../../tests/golden/records.csv");
        let mut v: Vec<(Vec<u8>, &'static [u8])> = vec![
            (
                include_bytes!("../../tests/golden/dna.fa.acx").to_vec(),
                dna,
            ),
            (
                include_bytes!("../../tests/golden/dna.fa.ctx.acx").to_vec(),
                dna,
            ),
            (
                include_bytes!("../../tests/golden/dna.fa.w64k-b4k.acx").to_vec(),
                dna,
            ),
            (
                include_bytes!("../../tests/golden/ecoli_48k.fa.acx").to_vec(),
                ecoli,
            ),
            (
                include_bytes!("../../tests/golden/moby_dick_64k.txt.acx").to_vec(),
                moby,
            ),
            (
                include_bytes!("../../tests/golden/moby_dick_64k.txt.l8-mm4.acx").to_vec(),
                moby,
            ),
            (
                include_bytes!("../../tests/golden/moby_dick_64k.txt.l9-mm4-ctx.acx").to_vec(),
                moby,
            ),
            (
                include_bytes!("../../tests/golden/moby_dick_64k.txt.w64k-b4k.acx").to_vec(),
                moby,
            ),
            (
                include_bytes!("../../tests/golden/records.csv.acx").to_vec(),
                csv,
            ),
            (
                include_bytes!("../../tests/golden/records.csv.ext.acx").to_vec(),
                csv,
            ),
            (
                include_bytes!("../../tests/golden/records.csv.l8-mm5-b4k.acx").to_vec(),
                csv,
            ),
            (
                include_bytes!("../../tests/golden/records.csv.w64k-b4k.acx").to_vec(),
                csv,
            ),
        ];
        for (data, opts) in [
            (ecoli, [6, 0, 0, 6, 0b111_1111, 0, 0, 0]),
            (dna, [6, 0, 2, 4, 0b111_1111, 3, 0, 0]),
            (moby, [3, 0, 0, 6, 0b000_1011, 0, 0, 0]),
            (csv, [2, 1, 3, 5, 0b010_0101, 2, 0, 0]),
        ] {
            let o = options_from(&mut Cursor(&opts));
            let archive =
                aceapex::compress_settings(data, &o, &|_| {}).expect("valid options compress");
            v.push((archive, data));
        }
        v
    })
}

/// Encoder options read from the cursor, each within its valid range (FORMAT.md §2;
/// `Options::validate`): level 1-9, block size 4 KiB to 4 MiB, window none / small / the
/// block size / larger (cross-block), minimum match 4-67, depth cap 0-39, the encoder's
/// codings (repeat codes, context and packed tables, raw match streams at levels 1-7, wide
/// lanes with raw match streams, each two-bit literal rule). Reads 8 bytes.
pub fn options_from(c: &mut Cursor<'_>) -> Settings {
    let b: [u8; 8] = std::array::from_fn(|_| c.u8());
    let mut o = Settings::default();
    o.level = 1 + b[0] as u32 % 9;
    o.block_size = 4096 << (b[1] % 11);
    o.window = match b[2] % 6 {
        0 | 1 => None,
        2 => Some(o.block_size),
        3 => Some(o.block_size << (1 + b[7] % 4)),
        4 => Some(1 + b[7] as u32 * 64),
        _ => Some(1 << (10 + b[7] % 15)),
    };
    o.min_match = 4 + (b[3] as u32 % 64);
    if b[3] & 0x80 == 0 {
        // mostly the minimum matches the command line uses
        o.min_match = 4 + b[3] as u32 % 4;
    }
    let f = b[4];
    o.repeat_codes = f & 1 != 0;
    o.context_tables = f & 2 != 0;
    o.packed_literals = f & 4 != 0;
    o.raw_match_streams = f & 8 != 0 && o.level <= 7;
    o.wide_lanes = f & 16 != 0 && o.raw_match_streams;
    o.two_bit = match (f >> 5) & 3 {
        0 => TwoBit::Off,
        1 => TwoBit::Smaller,
        _ => TwoBit::WithinLoss,
    };
    o.depth_cap = if b[5].is_multiple_of(3) {
        0
    } else {
        b[5] as u32 % 40
    };
    o
}

/// The bytes a round-trip or determinism check compresses: the cursor's rest, or, when
/// `b` has its top bit set, that rest repeated with a varying first byte up to `b & 0x3F`
/// times 8 KiB (so that inputs span several blocks and table groups); with a depth cap at
/// most [`DEPTH_CAP_TILE`] bytes (see there).
fn input_from(c: &mut Cursor<'_>, o: &Settings) -> Vec<u8> {
    let b = c.u8();
    let rest = c.rest();
    if b & 0x80 == 0 || rest.is_empty() {
        return rest.to_vec();
    }
    let mut want = (b & 0x3F) as usize * (8 << 10);
    if o.depth_cap > 0 {
        want = want.min(DEPTH_CAP_TILE);
    }
    let mut v = Vec::with_capacity(want);
    let mut k = 0u8;
    while v.len() < want {
        let start = v.len();
        v.extend_from_slice(rest);
        v[start] ^= k;
        k = k.wrapping_add(1);
    }
    v
}

/// Largest tiled input under a depth cap: the capped parser takes time quadratic in a
/// block's length on periodic data (docs/RELIABILITY.md, open finding; the ignored test
/// `depth_cap_periodic_input_is_not_quadratic` in tests/fuzz_regressions.rs shows it), which
/// would stop the round-trip and determinism targets on a timeout.
pub const DEPTH_CAP_TILE: usize = 64 << 10;

/// Target `decode`: `data` as an archive. Parse failure must be the same for every entry
/// point; otherwise [`check_archive`].
pub fn fuzz_decode(data: &[u8]) {
    // the ranges come from the archive's own tail bytes (any choice will do)
    let tail = &data[data.len().saturating_sub(32)..];
    check_archive(data, &mut Cursor(tail), None);
}

/// Target `decode_mutated`: the first byte picks a base archive ([`bases`]), the rest is a
/// mutation script ([`mutate`]); the mutant gets its meta checksum recomputed, so it reaches
/// the block layers, and must decode to the base's original or fail; then its block and
/// content checksums are recomputed too ([`reseal_blocks`]), so a mutation that still
/// decodes is accepted, and every decode path must give the reference decoder's bytes.
pub fn fuzz_decode_mutated(data: &[u8]) {
    let mut c = Cursor(data);
    let bases = bases();
    let (base, original) = &bases[c.u8() as usize % bases.len()];
    let mut m = mutate(base, &mut c);
    reseal_meta(&mut m);
    check_archive(&m, &mut c, Some(original));
    if let Some(want) = reseal_blocks(&mut m) {
        let got = aceapex::decompress(&m);
        assert!(
            got.as_deref().ok() == Some(&want[..]),
            "resealed archive: decompress {:?} differs from the reference decoder",
            got.err()
        );
    }
    check_archive(&m, &mut c, None);
}

/// The decode checks on one archive: `decompress`, `Reader::decompress` and
/// `Reader::read_range` at ranges read from `c` never panic; both whole decodes agree; a
/// whole decode that succeeds equals `original` (when given: the data it was built from),
/// every region read succeeds and equals its slice, and every block decodes by the
/// reference decoder to the same bytes; a region read that succeeds where the whole decode
/// fails equals the reference decoder's bytes for its blocks.
pub fn check_archive(archive: &[u8], c: &mut Cursor<'_>, original: Option<&[u8]>) {
    let parsed = Archive::parse(archive);
    let reader = Reader::new(archive);
    let a = match parsed {
        Err(_) => {
            assert!(
                reader.is_err(),
                "Reader::new accepts what Archive::parse refuses"
            );
            assert!(
                aceapex::decompress(archive).is_err(),
                "decompress accepts what Archive::parse refuses"
            );
            return;
        }
        Ok(a) => a,
    };
    let reader = reader.expect("Reader::new accepts what Archive::parse accepts");
    let size = a.header().original_size;
    assert_eq!(reader.len(), size);
    if size > MAX_WHOLE_DECODE {
        // a declared size beyond what the checks allocate: bounded region reads only
        for _ in 0..REGION_READS {
            let off = c.u64() % (size + 1);
            let len = (c.u32() as u64 % (size - off + 1)).min(MAX_REGION >> 4);
            let mut buf = vec![0u8; len as usize];
            let _ = reader.read_range(off, &mut buf);
        }
        return;
    }
    let whole = aceapex::decompress(archive);
    let again = reader.decompress();
    match (&whole, &again) {
        (Ok(x), Ok(y)) => assert!(x == y, "decompress and Reader::decompress differ"),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "decompress {:?} vs Reader::decompress {:?}",
            whole.as_ref().err(),
            again.as_ref().err()
        ),
    }
    if let (Ok(out), Some(orig)) = (&whole, original) {
        assert!(
            out[..] == orig[..],
            "decompress Ok with bytes other than the original"
        );
    }
    // the reference decoder, block by block in order, where the archive is small
    let reference = (size <= 4 * MAX_REGION).then(|| reference_blocks(&a));
    if let (Ok(out), Some((ref_out, ok))) = (&whole, &reference) {
        assert!(
            ok.iter().all(|&x| x),
            "decompress Ok where the reference decoder fails a block"
        );
        assert!(
            out == ref_out,
            "decompress and the reference decoder differ"
        );
    }
    for _ in 0..REGION_READS {
        let off = c.u64() % (size + 1);
        let len = (c.u32() as u64 % (size - off + 1)).min(MAX_REGION);
        let mut buf = vec![0u8; len as usize];
        let r = reader.read_range(off, &mut buf);
        match (&whole, &r) {
            (Ok(out), Ok(())) => assert!(
                buf[..] == out[off as usize..(off + len) as usize],
                "read_range({off}, {len}) differs from the whole decode"
            ),
            (Ok(_), Err(e)) => {
                panic!("read_range({off}, {len}) fails ({e}) where the whole decode succeeds")
            }
            (Err(_), Ok(())) if len > 0 => {
                if let Some((ref_out, ok)) = &reference {
                    let bs = a.header().block_size as u64;
                    let blocks = (off / bs) as usize..=((off + len - 1) / bs) as usize;
                    // a verified block decodes alike in both decoders; with cross-block
                    // sources its reference bytes are defined only when every block before
                    // it decoded
                    let defined = if a.cross_block() {
                        ok[..=*blocks.end()].iter().all(|&x| x)
                    } else {
                        assert!(
                            ok[blocks.clone()].iter().all(|&x| x),
                            "read_range Ok where the reference decoder fails a block it covers"
                        );
                        true
                    };
                    if defined {
                        assert!(
                            buf[..] == ref_out[off as usize..(off + len) as usize],
                            "read_range({off}, {len}) differs from the reference decoder"
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every block of `a` decoded in order by the reference decoder into one buffer: the bytes
/// and, per block, whether it decoded and verified.
fn reference_blocks(a: &Archive<'_>) -> (Vec<u8>, Vec<bool>) {
    let mut out = vec![0u8; a.header().original_size as usize];
    let ok = (0..a.block_count())
        .map(|b| decode_block_reference(a, b, &mut out, 0).is_ok())
        .collect();
    (out, ok)
}

/// Target `container`: the first byte chooses arbitrary bytes (even) or a mutated base
/// archive with its meta checksum recomputed (odd); `Archive::parse` must return, and what
/// it accepts must hold together ([`check_parsed`]).
pub fn fuzz_container(data: &[u8]) {
    let mut c = Cursor(data);
    if c.u8() % 2 == 0 {
        check_parsed(c.rest());
    } else {
        let bases = bases();
        let (base, _) = &bases[c.u8() as usize % bases.len()];
        let mut m = mutate(base, &mut c);
        reseal_meta(&mut m);
        check_parsed(&m);
    }
}

/// What `Archive::parse` promises of an archive it accepts (FORMAT.md §2-§3): the block
/// count fits the original size, every block's slices lie inside the data section, sources
/// never come after their block, every rANS slice's group has its table, and the extension
/// records read back. Parsing the same bytes twice gives the same result.
pub fn check_parsed(bytes: &[u8]) {
    let Ok(a) = Archive::parse(bytes) else {
        assert!(Archive::parse(bytes).is_err(), "parse is not deterministic");
        return;
    };
    let h = a.header();
    let bs = h.block_size as u64;
    assert!(bs.is_power_of_two(), "block size {bs} accepted");
    assert_eq!(
        a.block_count() as u64,
        h.original_size.div_ceil(bs),
        "block count"
    );
    let data = a.data();
    for b in 0..a.block_count() {
        let e = &a.entries()[b];
        assert!(
            e.lowest_source_block as usize <= b,
            "block {b}: source after the block"
        );
        let stored: u64 = e.stored_len.iter().map(|&n| n as u64).sum();
        assert!(
            a.block_offsets()[b] + stored <= data.len() as u64,
            "block {b}: slices past the data"
        );
        let slices = a.slices(b);
        assert!(slices
            .iter()
            .zip(&e.stored_len)
            .all(|(s, &n)| s.len() == n as usize));
        let r = a.block_range(b);
        assert!(
            r.start < r.end && r.end <= h.original_size,
            "block {b}: empty range"
        );
        for (k, &lanes) in e.lanes.iter().enumerate() {
            // FORMAT.md §3.1: a raw slice stores its decoded bytes, a two-bit slice holds
            // literals only, any other slice is rANS-coded with at most 64 lanes and a table
            match lanes {
                LANES_RAW => assert_eq!(
                    e.stored_len[k], e.decoded_len[k],
                    "block {b} stream {k}: raw slice of another length"
                ),
                LANES_TWO_BIT => assert!(
                    k == STREAM_LITERALS && e.decoded_len[k] > 0,
                    "block {b} stream {k}: two-bit slice accepted"
                ),
                l => assert!(
                    l <= MAX_LANES && a.table(b, k).is_some(),
                    "block {b} stream {k}: {l} lanes without a table accepted"
                ),
            }
        }
    }
    for x in a.extensions() {
        assert!(x.kind != 0, "extension record of type 0 accepted");
    }
}

/// Target `roundtrip`: options ([`options_from`], 8 bytes) and an input (the rest,
/// [`input_from`]); `compress` succeeds and `decompress` gives the input back bit-exactly,
/// as does a region read of the first, the middle and the last bytes.
pub fn fuzz_roundtrip(data: &[u8]) {
    let mut c = Cursor(data);
    let o = options_from(&mut c);
    let input = input_from(&mut c, &o);
    let archive = aceapex::compress_settings(&input, &o, &|_| {})
        .unwrap_or_else(|e| panic!("compress {o:?}: {e}"));
    let out = aceapex::decompress(&archive).unwrap_or_else(|e| panic!("decompress {o:?}: {e}"));
    assert!(out == input, "round trip differs under {o:?}");
    let reader = Reader::new(&archive).expect("own archive parses");
    let n = input.len();
    for (off, len) in [
        (0, n.min(100)),
        (n / 2, (n - n / 2).min(5000)),
        (n.saturating_sub(7), n.min(7)),
    ] {
        let mut buf = vec![0u8; len];
        reader
            .read_range(off as u64, &mut buf)
            .expect("region of an own archive");
        assert!(
            buf[..] == input[off..off + len],
            "read_range({off}, {len}) under {o:?}"
        );
    }
}

/// Thread pools of 1, 2 and 3 threads, made once.
fn pools() -> &'static [rayon::ThreadPool; 3] {
    static POOLS: OnceLock<[rayon::ThreadPool; 3]> = OnceLock::new();
    POOLS.get_or_init(|| {
        std::array::from_fn(|i| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(i + 1)
                .build()
                .expect("thread pool")
        })
    })
}

/// Target `determinism`: options and an input as for [`fuzz_roundtrip`]; `compress` on 1,
/// 2 and 3 threads (`ThreadPool::install`) gives the same archive bytes.
pub fn fuzz_determinism(data: &[u8]) {
    let mut c = Cursor(data);
    let o = options_from(&mut c);
    let input = input_from(&mut c, &o);
    let runs: Vec<Result<Vec<u8>, aceapex::OptionsError>> = pools()
        .iter()
        .map(|p| p.install(|| aceapex::compress_settings(&input, &o, &|_| {})))
        .collect();
    let first = runs[0]
        .as_ref()
        .unwrap_or_else(|e| panic!("compress {o:?}: {e}"));
    for (i, r) in runs.iter().enumerate().skip(1) {
        let r = r
            .as_ref()
            .unwrap_or_else(|e| panic!("compress {o:?} on {} threads: {e}", i + 1));
        assert!(
            r == first,
            "archive on {} threads differs from 1 thread under {o:?}",
            i + 1
        );
    }
}
