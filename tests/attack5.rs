//! Differential attack on the fast CPU decoder, on archives with fixed-offset entries (the
//! encoder's output repacked by `common::with_fixed_entries`; ignored: it needs the real
//! corpora): real archives of the current
//! encoder, damaged in their five slices (with damage aimed at the split distances: offsets =
//! first varint bytes, offset tails = the rest, FORMAT.md §4.2), their block entries and
//! table records, compared block by block against the reference decoder. Run with
//! `cargo test --release --test attack5 -- --ignored --nocapture`
//! (env: ATTACK_CASES, ATTACK_SEED, ATTACK_KIB = KiB taken from each corpus file,
//! ACEAPEX_ATTACK_CORPORA = the corpora folder, default `corpora/`; failing archives are kept
//! in `target/attack5-fails/`).

use aceapex::decode::streams;
use aceapex::decode::{decode_block_at, decode_block_reference, decode_streams};
use aceapex::decode::{decompress, extract};
use aceapex::device::status::Status;
use aceapex::encode::compress_settings;
use aceapex::encode::entropy::{count, encode_slice, FreqTable};
use aceapex::encode::lz::{join_offsets, split_offsets};
use aceapex::format::Archive;
use aceapex::{DecodeError, Settings};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

mod common;

use common::{Rng, ENTRY, HEADER, STREAMS as NS};

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// A block: `entry` in the [`ENTRY`] layout, but position-free: its checksum without the
/// position mix and, at offset 57, its lowest source block itself (the build converts both
/// for the block's index, FORMAT.md §3.1, §6).
#[derive(Clone)]
struct Blk {
    entry: [u8; ENTRY],
    slices: [Vec<u8>; NS],
    /// reference-decoded streams (for LZ-level damage)
    decoded: [Vec<u8>; NS],
}
impl Blk {
    fn decoded_len(&self, k: usize) -> u32 {
        u32_at(&self.entry, 28 + 4 * k)
    }
    fn set_decoded_len(&mut self, k: usize, v: u32) {
        self.entry[28 + 4 * k..32 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    fn lanes(&self, k: usize) -> u8 {
        self.entry[48 + k]
    }
    fn set_lanes(&mut self, k: usize, v: u8) {
        self.entry[48 + k] = v;
    }
    fn set_lowest(&mut self, v: u32) {
        self.entry[57..61].copy_from_slice(&v.to_le_bytes());
    }
    fn lowest(&self) -> u32 {
        u32_at(&self.entry, 57)
    }
}

struct Source {
    name: String,
    header: [u8; HEADER],
    orig: Vec<u8>,
    bs: usize,
    group_blocks: usize,
    cross: bool,
    /// per group: the four table records (serialized) and the parsed tables
    tables: Vec<(Vec<u8>, [Option<FreqTable>; NS])>,
    /// per group: the five table records, one by one
    recs: Vec<[Vec<u8>; NS]>,
    blocks: Vec<Blk>,
}

fn load(name: &str, data: Vec<u8>, opts: &Settings) -> Source {
    // fixed-offset entries, which this harness rebuilds field by field
    let packed = common::with_fixed_entries(&compress_settings(&data, opts, &|_| {}).unwrap());
    let a = Archive::parse(&packed).unwrap();
    if !matches!(decompress(&a), Ok(ref v) if *v == data) {
        eprintln!("WARNING: {name}: decompress of the valid archive fails");
    }
    let bc = a.block_count();
    let gb = a.header().group_blocks as usize;
    let tb = u64_at(&packed, 48) as usize;
    let bt_end = HEADER + bc * ENTRY;
    let tsec = &packed[bt_end..bt_end + tb];
    let mut pos = 0;
    let mut tables = Vec::new();
    let mut recs = Vec::new();
    for _ in 0..a.header().group_count {
        let start = pos;
        let mut rec: [Vec<u8>; NS] = Default::default();
        let t: [Option<FreqTable>; NS] = std::array::from_fn(|k| {
            let p0 = pos;
            let t = FreqTable::deserialize(tsec, &mut pos).unwrap();
            rec[k] = tsec[p0..pos].to_vec();
            t
        });
        tables.push((tsec[start..pos].to_vec(), t));
        recs.push(rec);
    }
    let mut bufs: [Vec<u8>; NS] = Default::default();
    let mut blocks = Vec::new();
    for b in 0..bc {
        decode_streams(&a, b, &mut bufs).unwrap();
        let mut entry: [u8; ENTRY] = packed[HEADER + b * ENTRY..HEADER + (b + 1) * ENTRY]
            .try_into()
            .unwrap();
        let sum = u64_at(&entry, 0) ^ common::position_mix(b as u32);
        entry[..8].copy_from_slice(&sum.to_le_bytes());
        let lowest = b as u32 - u32_at(&entry, 57);
        entry[57..61].copy_from_slice(&lowest.to_le_bytes());
        blocks.push(Blk {
            entry,
            slices: a.slices(b).map(|s| s.to_vec()),
            decoded: bufs.clone(),
        });
    }
    let mut lanes_hist: BTreeMap<(usize, u8), usize> = BTreeMap::new();
    let mut vlen_hist: BTreeMap<usize, usize> = BTreeMap::new();
    for b in &blocks {
        for k in 0..NS {
            *lanes_hist.entry((k, b.lanes(k))).or_default() += 1;
        }
        for l in distance_lens(&b.decoded[2], &b.decoded[4]) {
            *vlen_hist.entry(l).or_default() += 1;
        }
    }
    eprintln!(
        "{name}: {} bytes, {bc} blocks of {}, {} groups of {gb}, cross {} window {}, distance varint bytes -> count {vlen_hist:?}, (stream, lanes) -> blocks {lanes_hist:?}",
        data.len(),
        a.header().block_size,
        a.header().group_count,
        a.cross_block(),
        a.header().window,
    );
    Source {
        name: name.into(),
        header: packed[..HEADER].try_into().unwrap(),
        orig: data,
        bs: a.header().block_size as usize,
        group_blocks: gb,
        cross: a.cross_block(),
        tables,
        recs,
        blocks,
    }
}

/// The byte counts of the distance varints of a valid block (heads + their tails).
fn distance_lens(heads: &[u8], tails: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut tp = 0;
    for &h in heads {
        let mut n = 1;
        if h & 0x80 != 0 {
            while tp < tails.len() {
                n += 1;
                tp += 1;
                if tails[tp - 1] & 0x80 == 0 {
                    break;
                }
            }
        }
        out.push(n);
    }
    out
}

/// A sub-archive: blocks `first..first + n` of one source (lowest source blocks rebased).
struct Sub<'s> {
    src: &'s Source,
    window: Option<u32>,
    first: usize,
    blocks: Vec<Blk>,
    /// replaces the table section (per-group records of the source otherwise)
    tables_override: Option<Vec<u8>>,
    /// bytes of the header set after assembly (before the checksum)
    header_patch: Vec<(usize, u8)>,
    /// Archive::parse must reject the result
    expect_reject: bool,
}

impl<'s> Sub<'s> {
    fn new(src: &'s Source, rng: &mut Rng) -> Sub<'s> {
        let bc = src.blocks.len();
        let (first, n) = if src.cross {
            // from block 0 (sources may reach back anywhere before)
            // (more blocks for small blocks: a 64 KiB window spans 16 blocks of 4 KiB)
            let most = if src.bs <= 4096 {
                24
            } else if src.blocks.len() <= 12 {
                12
            } else {
                8
            };
            (0, 1 + rng.below(most.min(bc as u64)) as usize)
        } else {
            // within one table group (blocks keep their tables), mostly 4-8 blocks
            let g = rng.below(bc.div_ceil(src.group_blocks) as u64) as usize;
            let gstart = g * src.group_blocks;
            let gend = (gstart + src.group_blocks).min(bc);
            let n = (1 + rng.below(8)).min((gend - gstart) as u64) as usize;
            let n = if rng.below(3) > 0 {
                n.max(4.min(gend - gstart))
            } else {
                n
            };
            let first = gstart + rng.below((gend - gstart - n + 1) as u64) as usize;
            (first, n)
        };
        let mut blocks: Vec<Blk> = src.blocks[first..first + n].to_vec();
        for b in blocks.iter_mut() {
            let l = b.lowest() - first as u32;
            b.set_lowest(l);
        }
        Sub {
            src,
            window: None,
            first,
            blocks,
            tables_override: None,
            header_patch: Vec::new(),
            expect_reject: false,
        }
    }

    fn orig(&self) -> &[u8] {
        let s = self.first * self.src.bs;
        let e = ((self.first + self.blocks.len()) * self.src.bs).min(self.src.orig.len());
        &self.src.orig[s..e]
    }

    fn group(&self) -> usize {
        self.first / self.src.group_blocks
    }

    fn table(&self, k: usize) -> Option<&FreqTable> {
        self.src.tables[self.group()].1[k].as_ref()
    }

    fn assemble(&self) -> Vec<u8> {
        let orig = self.orig();
        let mut h = self.src.header;
        if let Some(w) = self.window {
            h[36..40].copy_from_slice(&w.to_le_bytes());
        }
        let n = self.blocks.len();
        let gb = self.src.group_blocks;
        h[8..16].copy_from_slice(&(orig.len() as u64).to_le_bytes());
        h[20..24].copy_from_slice(&(n as u32).to_le_bytes());
        let groups = n.div_ceil(gb);
        h[28..32].copy_from_slice(&(groups as u32).to_le_bytes());
        let mut tables = Vec::new();
        for g in 0..groups {
            tables.extend_from_slice(&self.src.tables[self.group() + g].0);
        }
        if let Some(t) = &self.tables_override {
            tables = t.clone();
        }
        h[72..88].copy_from_slice(&common::FIXED_ENTRY_BITS);
        h[85] = self.src.header[85];
        for &(i, v) in &self.header_patch {
            h[i] = v;
        }
        let mut bt = Vec::new();
        let mut data = Vec::new();
        for (j, b) in self.blocks.iter().enumerate() {
            let mut e = b.entry;
            let sum = u64_at(&e, 0) ^ common::position_mix(j as u32);
            e[..8].copy_from_slice(&sum.to_le_bytes());
            let dist = (j as u32).wrapping_sub(b.lowest());
            e[57..61].copy_from_slice(&dist.to_le_bytes());
            for k in 0..NS {
                e[8 + 4 * k..12 + 4 * k].copy_from_slice(&(b.slices[k].len() as u32).to_le_bytes());
                data.extend_from_slice(&b.slices[k]);
            }
            bt.extend_from_slice(&e);
        }
        h[48..56].copy_from_slice(&(tables.len() as u64).to_le_bytes());
        h[56..64].copy_from_slice(&(data.len() as u64).to_le_bytes());
        h[64..72].copy_from_slice(&xxh3_64(orig).to_le_bytes());
        let mut covered = h[..88].to_vec();
        covered.extend_from_slice(&bt);
        covered.extend_from_slice(&tables);
        h[88..96].copy_from_slice(&xxh3_64(&covered).to_le_bytes());
        let mut out = h.to_vec();
        out.extend_from_slice(&bt);
        out.extend_from_slice(&tables);
        out.extend_from_slice(&data);
        out
    }
}

// ---------------------------------------------------------------------------------------
// damage
// ---------------------------------------------------------------------------------------

const KINDS: [&str; 20] = [
    "bitflip",
    "byte_overwrite",
    "state_overwrite",
    "stored_truncate",
    "stored_extend",
    "decoded_len",
    "lane_swap",
    "lz_raw",
    "lz_rans",
    "reencode_lanes",
    "lz_rans_lanes",
    "multi_block_bitflip",
    "lz_tail",
    "frame_window_lowest",
    "tail_stream",
    "join_resplit",
    "offsets_tails_slices",
    "table5",
    "reserved",
    "lz_tail_v2",
];

fn stream_pick(rng: &mut Rng) -> usize {
    // commands, offsets, offset tails, lengths mostly; literals sometimes
    rng.pick(&[3, 3, 3, 2, 2, 2, 4, 4, 4, 4, 1, 1, 0])
}

fn special_byte(rng: &mut Rng) -> u8 {
    if rng.below(2) == 0 {
        rng.next() as u8
    } else {
        rng.pick(&[
            0x00, 0xFF, 0xFE, 0xFD, 0xC0, 0xBF, 0x80, 0x8F, 0x7F, 0x01, 0x0F, 0x10,
        ])
    }
}

fn swap_lanes(rng: &mut Rng, l: u8) -> u8 {
    match l {
        4 => rng.pick(&[2, 8, 1, 3, 5, 16, 2, 8]),
        24 => rng.pick(&[16, 32, 8, 12, 23, 25, 16, 32]),
        16 => rng.pick(&[8, 24, 32, 4, 15, 17]),
        8 => rng.pick(&[4, 16, 2, 24, 7, 9]),
        2 => rng.pick(&[1, 4, 8, 3]),
        0 => rng.pick(&[4, 24, 1, 16]),
        _ => 1 + rng.below(32) as u8,
    }
}

/// Damages a decoded LZ-level stream (commands, offsets, lengths or literals).
fn damage_decoded(rng: &mut Rng, s: &mut Vec<u8>, k: usize) {
    let reps = 1 + rng.below(3);
    for _ in 0..reps {
        let n = s.len();
        match rng.below(9) {
            0 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s[i] = special_byte(rng);
            }
            2 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s.remove(i);
            }
            3 => {
                let i = rng.below(n as u64 + 1) as usize;
                let b = special_byte(rng);
                s.insert(i, b);
            }
            4 if n > 0 => {
                let cut = 1 + rng.below(8.min(n as u64)) as usize;
                s.truncate(n - cut);
            }
            5 => {
                for _ in 0..1 + rng.below(8) {
                    let b = special_byte(rng);
                    s.push(b);
                }
            }
            6 if n > 1 => {
                let i = rng.below(n as u64) as usize;
                let j = rng.below(n as u64) as usize;
                s.swap(i, j);
            }
            7 if n > 0 && k == 4 => {
                // plant a tail (the bytes after a first byte with bit 7 set)
                let i = rng.below(n as u64 + 1) as usize;
                let v = tail_pattern(rng);
                s.splice(i..i, v.iter().copied());
            }
            7 if n > 0 && (k == 1 || k == 2) => {
                // plant an overlong / huge / zero / 5-byte varint
                let i = rng.below(n as u64) as usize;
                let v: &[u8] = rng.pick(&[
                    &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01][..],
                    &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
                    &[0xFF, 0xFF, 0xFF, 0xFF, 0x1F],
                    &[0x00],
                    &[0x80, 0x00],
                    &[0x81, 0x80, 0x80, 0x80, 0x00],
                    &[0xFF, 0x7F],
                    &[0x80, 0x80, 0x04],
                ]);
                s.splice(i..i, v.iter().copied());
            }
            8 if n > 0 && k == 3 => {
                // rewrite a command into another kind
                let i = rng.below(n as u64) as usize;
                s[i] = rng.pick(&[0x00, 0x7F, 0x80, 0x8F, 0xBF, 0xC0, 0xFD, 0xFE, 0xFF])
                    | if rng.below(2) == 0 {
                        0
                    } else {
                        (rng.next() as u8) & 0x3F
                    };
            }
            _ => {
                if n > 0 {
                    let i = rng.below(n as u64) as usize;
                    s[i] = s[i].wrapping_add(1 + rng.below(3) as u8);
                }
            }
        }
    }
}

fn varints(s: &[u8]) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        v.push(aceapex::device::lz::read_varint(s, &mut pos).ok()?);
    }
    Some(v)
}

/// The distances of a block's heads and tails, by the reference read_offset.
fn distances(heads: &[u8], tails: &[u8]) -> Option<Vec<u32>> {
    let (mut hp, mut tp) = (0, 0);
    let mut v = Vec::new();
    while hp < heads.len() {
        v.push(aceapex::device::lz::read_offset(heads, &mut hp, tails, &mut tp).ok()?);
    }
    (tp == tails.len()).then_some(v)
}

fn put_distances(v: &[u32]) -> (Vec<u8>, Vec<u8>) {
    let (mut h, mut t) = (Vec::new(), Vec::new());
    for &x in v {
        aceapex::device::lz::write_offset(x, &mut h, &mut t);
    }
    (h, t)
}

fn put_varints(v: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for &x in v {
        aceapex::device::lz::write_varint(x, &mut out);
    }
    out
}

/// Damage aimed at the end of the block: the last commands, the last length / offset
/// varints, the literal stream's length.
fn damage_tail(rng: &mut Rng, b: &Blk) -> Vec<(usize, Vec<u8>)> {
    let delta = |rng: &mut Rng| -> i64 {
        let d = 1 + rng.below(40) as i64;
        if rng.below(2) == 0 {
            d
        } else {
            -d
        }
    };
    loop {
        match rng.below(7) {
            0 => {
                let mut c = b.decoded[3].clone();
                if c.is_empty() {
                    continue;
                }
                let back = 1 + rng.below(8.min(c.len() as u64)) as usize;
                let i = c.len() - back;
                c[i] = if rng.below(2) == 0 {
                    special_byte(rng)
                } else {
                    (c[i] as i64 + delta(rng)).clamp(0, 255) as u8
                };
                return vec![(3, c)];
            }
            1 | 2 => {
                let k = if rng.below(2) == 0 { 1 } else { 2 };
                let Some(mut v) = (if k == 1 {
                    varints(&b.decoded[1])
                } else {
                    distances(&b.decoded[2], &b.decoded[4])
                }) else {
                    continue;
                };
                if v.is_empty() {
                    continue;
                }
                let back = 1 + rng.below(3.min(v.len() as u64)) as usize;
                let i = v.len() - back;
                v[i] = (v[i] as i64 + delta(rng)).clamp(0, u32::MAX as i64) as u32;
                if rng.below(4) == 0 {
                    v[i] = rng.pick(&[
                        0,
                        1,
                        127,
                        128,
                        16383,
                        16384,
                        16385,
                        65536,
                        65537,
                        1 << 21,
                        (1 << 28) - 1,
                        1 << 28,
                        u32::MAX,
                        u32::MAX - 5,
                    ]);
                }
                if k == 1 {
                    return vec![(1, put_varints(&v))];
                }
                let (h, t) = put_distances(&v);
                return vec![(2, h), (4, t)];
            }
            3 => {
                let mut l = b.decoded[0].clone();
                let d = delta(rng);
                if d < 0 {
                    l.truncate(l.len().saturating_sub((-d) as usize));
                } else {
                    l.extend((0..d).map(|_| rng.next() as u8));
                }
                return vec![(0, l)];
            }
            4 => {
                let mut c = b.decoded[3].clone();
                for _ in 0..1 + rng.below(3) {
                    let x = rng.pick(&[0x00, 0x1F, 0x7F, 0xC0, 0xC5, 0xFD, 0xFF, 0x80, 0x9F]);
                    c.push(x);
                }
                return vec![(3, c)];
            }
            5 => {
                let mut c = b.decoded[3].clone();
                let cut = (1 + rng.below(3) as usize).min(c.len());
                c.truncate(c.len() - cut);
                return vec![(3, c)];
            }
            _ => {
                // the last literal run one longer / shorter, literals adjusted to match
                let mut c = b.decoded[3].clone();
                let Some(i) = c.iter().rposition(|&x| x < 0x80) else {
                    continue;
                };
                let d = if rng.below(2) == 0 { 1i64 } else { -1 };
                let n = c[i] as i64 + d;
                if !(0..0x80).contains(&n) {
                    continue;
                }
                c[i] = n as u8;
                return vec![(3, c)];
            }
        }
    }
}

/// Stores `sym` in block `b` stream `k`: rANS with `lanes` under the group table if every
/// symbol is in it (and lanes > 0), else raw.
fn store(sub: &Sub, b: &mut Blk, k: usize, sym: &[u8], lanes: u8) {
    if lanes > 0 && !sym.is_empty() {
        if let Some(t) = sub.table(k) {
            let mut h = [0u64; 256];
            count(&mut h, sym);
            if t.cost_bits(&h).is_some() {
                let mut out = Vec::new();
                encode_slice(sym, lanes as usize, t, &t.cumulative(), &mut out);
                b.slices[k] = out;
                b.set_lanes(k, lanes);
                b.set_decoded_len(k, sym.len() as u32);
                return;
            }
        }
    }
    b.slices[k] = sym.to_vec();
    b.set_lanes(k, 0);
    b.set_decoded_len(k, sym.len() as u32);
}

/// The tail of one distance varint (the bytes after its first byte): valid ones of 1-4 bytes,
/// overlong ones, a 5th byte above 0x0F, 6- and 7-byte varints, an unterminated run.
fn tail_pattern(rng: &mut Rng) -> Vec<u8> {
    let v: &[u8] = rng.pick(&[
        &[0x01][..],
        &[0x00],
        &[0x7F],
        &[0x80, 0x01],
        &[0xFF, 0x7F],
        &[0x80, 0x00],
        &[0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x00],
        &[0x80, 0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x80, 0x00],
        &[0xFF, 0xFF, 0xFF, 0x0F],
        &[0x80, 0x80, 0x80, 0x0F],
        &[0x80, 0x80, 0x80, 0x10],
        &[0xFF, 0xFF, 0xFF, 0x1F],
        &[0x80, 0x80, 0x80, 0x7F],
        &[0x80, 0x80, 0x80, 0x80, 0x00],
        &[0x80, 0x80, 0x80, 0x80, 0x01],
        &[0xFF, 0xFF, 0xFF, 0x8F, 0x00],
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
        &[0x80],
        &[0x80, 0x80],
        &[0xFF, 0xFF, 0xFF],
    ]);
    if rng.below(4) == 0 {
        // a random tail of 1-6 bytes, continuation bits on all but (maybe) the last
        let n = 1 + rng.below(6) as usize;
        let mut t: Vec<u8> = (0..n).map(|_| rng.next() as u8 | 0x80).collect();
        if rng.below(4) > 0 {
            t[n - 1] &= 0x7F;
        }
        return t;
    }
    v.to_vec()
}

/// The tail byte ranges of a block's distances: `(head index, tail range)` for each head with
/// bit 7 set (the range cut at the end of the tails).
fn tail_spans(heads: &[u8], tails: &[u8]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut tp = 0;
    for (i, &h) in heads.iter().enumerate() {
        if h & 0x80 != 0 {
            let s = tp;
            while tp < tails.len() {
                tp += 1;
                if tails[tp - 1] & 0x80 == 0 {
                    break;
                }
            }
            out.push((i, s..tp));
        }
    }
    out
}

fn lane_pick(rng: &mut Rng) -> u8 {
    rng.pick(&[0, 0, 4, 4, 24, 1, 2, 3, 8, 16, 32])
}

/// Damage aimed at the split distances: the offset-tail stream, the split of the distances,
/// slice 2 vs slice 4, the fifth table record, reserved entry bytes.
fn damage_v2(sub: &mut Sub, rng: &mut Rng, kind: usize, bi: usize, mut b: Blk) {
    let heads = b.decoded[2].clone();
    let tails = b.decoded[4].clone();
    match kind {
        14 => {
            // LZ-level damage of the tails (and the heads they belong to)
            let (mut h, mut t) = (heads.clone(), tails.clone());
            let spans = tail_spans(&h, &t);
            for _ in 0..1 + rng.below(2) {
                match rng.below(12) {
                    0 => t.clear(),
                    1 if !t.is_empty() => {
                        let cut = (1 + rng.below(4) as usize).min(t.len());
                        if rng.below(3) == 0 {
                            let i = rng.below((t.len() - cut + 1) as u64) as usize;
                            t.drain(i..i + cut);
                        } else {
                            t.truncate(t.len() - cut);
                        }
                    }
                    2 => {
                        for _ in 0..1 + rng.below(4) {
                            let x = rng.pick(&[0x00, 0x01, 0x0F, 0x10, 0x7F, 0x80, 0x8F, 0xFF]);
                            t.push(x);
                        }
                    }
                    3 | 4 if !spans.is_empty() => {
                        // replace one distance's tail by a pattern
                        let (_, r) = spans[rng.below(spans.len() as u64) as usize].clone();
                        if r.end <= t.len() {
                            let p = tail_pattern(rng);
                            t.splice(r, p);
                        }
                    }
                    5 if !h.is_empty() => {
                        // a one-byte distance becomes multi-byte: head bit 7 set, tail inserted
                        let i = rng.below(h.len() as u64) as usize;
                        if h[i] & 0x80 == 0 {
                            // its tail goes where the tails of the heads after it start
                            let at = tail_spans(&h[..i], &t).last().map_or(0, |(_, r)| r.end);
                            h[i] |= 0x80;
                            let p = tail_pattern(rng);
                            if at <= t.len() {
                                t.splice(at..at, p);
                            }
                        }
                    }
                    6 if !h.is_empty() => {
                        // bit 7 set on a head, no tail added (the last head mostly)
                        let i = if rng.below(2) == 0 {
                            h.len() - 1
                        } else {
                            rng.below(h.len() as u64) as usize
                        };
                        h[i] |= 0x80;
                    }
                    7 if !spans.is_empty() => {
                        // bit 7 cleared on a head with a tail, the tail left in place
                        let (i, _) = spans[rng.below(spans.len() as u64) as usize].clone();
                        h[i] &= 0x7F;
                    }
                    8 if !t.is_empty() => {
                        // bit 7 set on the last tail byte or a random one
                        let i = if rng.below(2) == 0 {
                            t.len() - 1
                        } else {
                            rng.below(t.len() as u64) as usize
                        };
                        t[i] |= 0x80;
                    }
                    9 if !spans.is_empty() => {
                        // a distance loses its tail (head bit 7 cleared, tail removed)
                        let (i, r) = spans[rng.below(spans.len() as u64) as usize].clone();
                        if r.end <= t.len() {
                            h[i] &= 0x7F;
                            t.drain(r);
                        }
                    }
                    10 if !spans.is_empty() => {
                        // the last distance's tail removed, its head keeps bit 7
                        let (_, r) = spans.last().unwrap().clone();
                        if r.end <= t.len() {
                            t.drain(r);
                        }
                    }
                    _ if !t.is_empty() => {
                        let i = rng.below(t.len() as u64) as usize;
                        t[i] = special_byte(rng);
                    }
                    _ => t.push(special_byte(rng)),
                }
            }
            let nl = lane_pick(rng);
            store(sub, &mut b, 4, &t, nl);
            if h != heads {
                let nl = if rng.below(2) == 0 {
                    b.lanes(2)
                } else {
                    lane_pick(rng)
                };
                store(sub, &mut b, 2, &h, nl);
            }
        }
        15 => {
            // joined LEB128 distances damaged as one stream, split again
            let Some(mut j) = join_offsets(&heads, &tails) else {
                return;
            };
            damage_decoded(rng, &mut j, 2);
            let (h, t) = split_offsets(&j);
            let nl = lane_pick(rng);
            store(sub, &mut b, 2, &h, nl);
            let nl = lane_pick(rng);
            store(sub, &mut b, 4, &t, nl);
        }
        16 => {
            match rng.below(10) {
                0 => {
                    // slices (with their entry fields) of offsets and tails swapped
                    b.slices.swap(2, 4);
                    let (d2, d4) = (b.decoded_len(2), b.decoded_len(4));
                    b.set_decoded_len(2, d4);
                    b.set_decoded_len(4, d2);
                    let (l2, l4) = (b.lanes(2), b.lanes(4));
                    b.set_lanes(2, l4);
                    b.set_lanes(4, l2);
                }
                1 => {
                    // streams swapped at the LZ level, stored again
                    let (nl2, nl4) = (lane_pick(rng), lane_pick(rng));
                    store(sub, &mut b, 2, &tails, nl2);
                    store(sub, &mut b, 4, &heads, nl4);
                }
                2 => store(sub, &mut b, 4, &[], 0),
                3 => store(sub, &mut b, 2, &[], 0),
                4 => {
                    let nl = lane_pick(rng);
                    store(sub, &mut b, 4, &heads, nl);
                }
                5 => {
                    let nl = lane_pick(rng);
                    store(sub, &mut b, 2, &tails, nl);
                }
                6 => {
                    // zeroed bytes, the entry unchanged
                    let k = rng.pick(&[2, 4, 4]);
                    let s = &mut b.slices[k];
                    let n = s.len();
                    let (lo, hi) = if rng.below(2) == 0 {
                        (0, n)
                    } else {
                        let i = rng.below(n as u64 + 1) as usize;
                        (i, (i + 1 + rng.below(8) as usize).min(n))
                    };
                    s[lo..hi].fill(0);
                }
                7 => {
                    let nl = swap_lanes(rng, b.lanes(4));
                    b.set_lanes(4, nl);
                }
                8 => {
                    // decoded length of slice 4 changed (raw: the slice follows)
                    let d = b.decoded_len(4) as i64;
                    let nd = match rng.below(5) {
                        0 => d + 1,
                        1 => d - 1,
                        2 => d + rng.pick(&[2, 3, 4, 5, 8, 16]),
                        3 => d - rng.pick(&[2, 3, 4, 5, 8, 16]),
                        _ => rng.pick(&[0, 1, 2, sub.src.bs as i64 + 1]),
                    }
                    .max(0);
                    b.set_decoded_len(4, nd as u32);
                    if b.lanes(4) == 0 {
                        let fill = rng.pick(&[0x00, 0x01, 0x80, 0xFF]);
                        b.slices[4].resize(nd as usize, fill);
                    }
                }
                _ => {
                    // tails re-encoded with another lane count (valid)
                    let nl = rng.pick(&[1, 2, 3, 4, 5, 8, 12, 16, 24, 31, 32]);
                    store(sub, &mut b, 4, &tails, nl);
                }
            }
        }
        17 => {
            // the table section: the fifth record of a group missing, absent, garbage,
            // another stream's, or an extra record
            let groups = sub.blocks.len().div_ceil(sub.src.group_blocks);
            let g0 = sub.group();
            let mut recs: Vec<[Vec<u8>; NS]> = sub.src.recs[g0..g0 + groups].to_vec();
            let g = rng.below(groups as u64) as usize;
            let mut extra: Option<Vec<u8>> = None;
            match rng.below(8) {
                0 => recs[g][4].clear(),
                1 => recs[g][4] = vec![0],
                2 => {
                    let mut r = vec![rng.pick(&[1, 1, 2, 0xFF])];
                    let n = rng.below(48) as usize;
                    r.extend((0..n).map(|_| rng.next() as u8));
                    recs[g][4] = r;
                }
                3 => recs[g][4] = recs[g][2].clone(),
                4 => recs[g].swap(2, 4),
                5 => {
                    let r = &mut recs[g][4];
                    if r.len() > 1 {
                        let i = 1 + rng.below(r.len() as u64 - 1) as usize;
                        r[i] = special_byte(rng);
                    } else {
                        r[0] = 1;
                    }
                }
                6 => {
                    extra = Some(if rng.below(2) == 0 {
                        vec![0]
                    } else {
                        recs[g][4].clone()
                    })
                }
                _ => {
                    let r = &mut recs[g][4];
                    let cut = (1 + rng.below(4) as usize).min(r.len());
                    r.truncate(r.len() - cut);
                }
            }
            let mut t: Vec<u8> = recs
                .iter()
                .flat_map(|r| r.iter().flatten().copied())
                .collect();
            if let Some(e) = extra {
                t.extend(e);
            }
            sub.tables_override = Some(t);
        }
        18 => {
            // reserved header bytes (86..88), or an entry width above 32 (72..85, FORMAT.md §2)
            if rng.below(4) > 0 {
                let i = 86 + rng.below(2) as usize;
                sub.header_patch.push((i, 1 << rng.below(8)));
            } else {
                let i = 72 + rng.below(13) as usize;
                sub.header_patch.push((i, 33 + rng.below(200) as u8));
            }
            sub.expect_reject = true;
        }
        _ => {
            // 19: the end of the block's distances: left-over tails, a last head with no
            // tail, a last distance of another byte count
            let (mut h, mut t) = (heads.clone(), tails.clone());
            match rng.below(6) {
                0 => {
                    for _ in 0..1 + rng.below(3) {
                        let x = rng.pick(&[0x00, 0x01, 0x05, 0x7F, 0x0F]);
                        t.push(x);
                    }
                }
                1 if !h.is_empty() => {
                    let i = h.len() - 1;
                    h[i] |= 0x80;
                    if rng.below(2) == 0 {
                        t.push(0x80);
                    }
                }
                2 if !h.is_empty() => {
                    // the last distance's tail cut short
                    let spans = tail_spans(&h, &t);
                    if let Some((_, r)) = spans.last() {
                        let cut = 1 + rng.below(r.len() as u64) as usize;
                        t.truncate(r.end - cut);
                    } else {
                        t.push(0x80);
                    }
                }
                3 => {
                    // the last head removed, its tail left over
                    h.pop();
                }
                _ => {
                    let Some(mut v) = distances(&h, &t) else {
                        return;
                    };
                    if v.is_empty() {
                        return;
                    }
                    let back = 1 + rng.below(3.min(v.len() as u64)) as usize;
                    let i = v.len() - back;
                    v[i] = rng.pick(&[
                        0,
                        1,
                        127,
                        128,
                        255,
                        16383,
                        16384,
                        65535,
                        65536,
                        (1 << 21) - 1,
                        1 << 21,
                        (1 << 28) - 1,
                        1 << 28,
                        u32::MAX,
                    ]);
                    (h, t) = put_distances(&v);
                }
            }
            let nl = if rng.below(2) == 0 { 0 } else { 4 };
            store(sub, &mut b, 2, &h, nl);
            store(sub, &mut b, 4, &t, nl);
        }
    }
    sub.blocks[bi] = b;
}

fn damage(sub: &mut Sub, rng: &mut Rng, kind: usize) {
    let n = sub.blocks.len();
    let count_blocks = if kind == 11 {
        2 + rng.below(n as u64) as usize
    } else {
        1
    };
    for _ in 0..count_blocks {
        let bi = rng.below(n as u64) as usize;
        let k = stream_pick(rng);
        let mut b = sub.blocks[bi].clone();
        let lanes = b.lanes(k) as usize;
        if kind == 13 {
            if sub.src.cross && rng.below(2) == 0 {
                let l = rng.below(bi as u64 + 1) as u32;
                b.set_lowest(l);
            } else {
                let bs = sub.src.bs as u32;
                let w = u32_at(&sub.src.header, 36);
                sub.window = Some(match rng.below(3) {
                    0 => rng.pick(&[
                        1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 255, 256, 4095, 4096,
                    ]),
                    1 => rng.pick(&[bs - 1, bs / 2, w - 1, w / 2 + 1]).max(1),
                    _ => 1 + rng.below(w as u64) as u32,
                });
            }
            sub.blocks[bi] = b;
            continue;
        }
        if kind == 12 {
            let nl = if rng.below(2) == 0 { 0 } else { 4 };
            for (kk, d) in damage_tail(rng, &b) {
                store(sub, &mut b, kk, &d, nl);
            }
            sub.blocks[bi] = b;
            continue;
        }
        if kind >= 14 {
            damage_v2(sub, rng, kind, bi, b);
            continue;
        }
        if (7..=10).contains(&kind) {
            match kind {
                7 | 8 | 10 => {
                    // LZ-level damage; stored raw (7), rANS with the block's lanes (8) or
                    // rANS with 4 / 24 / other lanes (10)
                    let mut d = b.decoded[k].clone();
                    damage_decoded(rng, &mut d, k);
                    let nl = match kind {
                        7 => 0,
                        8 => {
                            if lanes == 0 {
                                4
                            } else {
                                lanes as u8
                            }
                        }
                        _ => rng.pick(&[4, 4, 24, 24, 2, 8, 16, 32, 1]),
                    };
                    store(sub, &mut b, k, &d, nl);
                }
                9 => {
                    // valid re-encode with another lane count (every stream of the block)
                    for kk in 0..NS {
                        if rng.below(2) == 0 {
                            let d = b.decoded[kk].clone();
                            let nl = rng.pick(&[4, 4, 24, 24, 2, 8, 16, 32, 1, 3, 12]);
                            store(sub, &mut b, kk, &d, nl);
                        }
                    }
                }
                _ => unreachable!(),
            }
            sub.blocks[bi] = b;
            continue;
        }
        let s = &mut b.slices[k];
        match kind {
            0 | 11 if !s.is_empty() => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(s.len() as u64) as usize;
                    s[i] ^= 1 << rng.below(8);
                }
            }
            1 if !s.is_empty() => {
                for _ in 0..1 + rng.below(3) {
                    let i = rng.below(s.len() as u64) as usize;
                    s[i] = special_byte(rng);
                }
            }
            2 if !s.is_empty() => {
                // a lane state (or the first words after them)
                let head = (lanes * 4 + 8).min(s.len());
                let i = rng.below(head as u64) as usize;
                s[i] = special_byte(rng);
            }
            3 if !s.is_empty() => {
                let cut = rng.pick(&[1, 2, 2, 4, 6, 8, 16]).min(s.len());
                if rng.below(3) == 0 {
                    let i = rng.below((s.len() - cut + 1) as u64) as usize;
                    s.drain(i..i + cut);
                } else {
                    s.truncate(s.len() - cut);
                }
                if lanes == 0 {
                    let l = s.len() as u32;
                    b.set_decoded_len(k, l);
                }
            }
            4 => {
                let add = rng.pick(&[1, 2, 2, 4, 6, 8, 16]);
                let bytes: Vec<u8> = (0..add)
                    .map(|_| {
                        if rng.below(2) == 0 {
                            0
                        } else {
                            rng.next() as u8
                        }
                    })
                    .collect();
                if rng.below(3) == 0 {
                    let i = rng.below(s.len() as u64 + 1) as usize;
                    s.splice(i..i, bytes);
                } else {
                    s.extend_from_slice(&bytes);
                }
                if lanes == 0 {
                    let l = s.len() as u32;
                    b.set_decoded_len(k, l);
                }
            }
            5 => {
                let d = b.decoded_len(k) as i64;
                let nd = match rng.below(6) {
                    0 => d + 1,
                    1 => d - 1,
                    2 => d + rng.pick(&[2, 3, 4, 8, 16, 24, 32, 48]),
                    3 => d - rng.pick(&[2, 3, 4, 8, 16, 24, 32, 48]),
                    4 => rng.below(sub.src.bs as u64 + 2) as i64,
                    _ => rng.pick(&[0, 1, sub.src.bs as i64, sub.src.bs as i64 + 1]),
                }
                .max(0);
                b.set_decoded_len(k, nd as u32);
                if lanes == 0 {
                    // raw: resize the slice too (else the parser rejects it)
                    b.slices[k].resize(nd as usize, 0);
                }
            }
            6 => {
                let nl = swap_lanes(rng, lanes as u8);
                b.set_lanes(k, nl);
            }
            _ => {}
        }
        sub.blocks[bi] = b;
    }
    // sometimes combine with an LZ-level damage of another stream, rANS 4-lane
    if kind != 9 && rng.below(8) == 0 {
        let bi = rng.below(n as u64) as usize;
        let k = rng.pick(&[1, 2, 3]);
        let mut b = sub.blocks[bi].clone();
        let mut d = b.decoded[k].clone();
        damage_decoded(rng, &mut d, k);
        store(sub, &mut b, k, &d, 4);
        sub.blocks[bi] = b;
    }
}

// ---------------------------------------------------------------------------------------
// comparison
// ---------------------------------------------------------------------------------------

fn st(x: &Result<(), DecodeError>) -> Option<Status> {
    match x {
        Ok(()) => None,
        Err(DecodeError::Block { status, .. }) => Some(*status),
        Err(e) => panic!("unexpected {e:?}"),
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    parse_rejected: usize,
    all_ok: usize,
    statuses: BTreeMap<String, usize>,
}

/// Returns Err(description) on a disagreement.
fn check(
    bytes: &[u8],
    orig: &[u8],
    expect_reject: bool,
    rng: &mut Rng,
    tally: &mut Tally,
) -> Result<(), String> {
    let a = match Archive::parse(bytes) {
        Ok(a) => a,
        Err(_) => {
            tally.parse_rejected += 1;
            return Ok(());
        }
    };
    if expect_reject {
        return Err("Archive::parse accepted an archive it must reject".into());
    }
    let n = orig.len();
    let bc = a.block_count();
    let bs = a.header().block_size as usize;
    // 1. block by block, fast vs reference
    let mut fast = vec![0x5Au8; n];
    let mut refr = vec![0x5Au8; n];
    let mut first: Option<(usize, Status)> = None;
    let mut block_st = vec![None; bc];
    #[allow(clippy::needless_range_loop)] // b also names the block to both decoders
    for b in 0..bc {
        let f = decode_block_at(&a, b, &mut fast, 0);
        let r = decode_block_reference(&a, b, &mut refr, 0);
        let rg = a.block_range(b);
        let rg = rg.start as usize..rg.end as usize;
        if st(&f) != st(&r) {
            return Err(format!(
                "block {b}: decode_block_at {:?} reference {:?}",
                st(&f),
                st(&r)
            ));
        }
        if f.is_ok() && fast[rg.clone()] != refr[rg.clone()] {
            return Err(format!("block {b}: both ok but bytes differ"));
        }
        if f.is_ok() && refr[rg.clone()] != orig[rg.clone()] {
            return Err(format!(
                "block {b}: reference ok but bytes differ from original"
            ));
        }
        // keep later (cross-block) sources identical
        let (rs, re) = (rg.start, rg.end);
        fast[rs..re].copy_from_slice(&refr[rs..re]);
        block_st[b] = st(&r);
        if first.is_none() {
            if let Some(s) = st(&r) {
                first = Some((b, s));
            }
        }
        *tally.statuses.entry(format!("{:?}", st(&r))).or_default() += 1;
    }
    // 2. stream level: the group path and the single-block path vs the reference streams
    {
        let mut one = streams::Scratch::default();
        let g = streams::group_blocks(bs);
        let mut scratch: Vec<streams::Scratch> = (0..g).map(|_| Default::default()).collect();
        let mut bufs: [Vec<u8>; NS] = Default::default();
        let mut first_b = 0;
        while first_b < bc {
            let m = g.min(bc - first_b);
            let stat = streams::decode_streams_group(&a, first_b, &mut scratch[..m]);
            for j in 0..m {
                let b = first_b + j;
                let r = decode_streams(&a, b, &mut bufs);
                if stat[j] != r {
                    return Err(format!(
                        "block {b}: decode_streams_group {:?} reference streams {r:?}",
                        stat[j]
                    ));
                }
                match streams::decode_streams(&a, b, &mut one) {
                    Ok(p) => {
                        if r.is_err() {
                            return Err(format!(
                                "block {b}: streams::decode_streams ok, reference {r:?}"
                            ));
                        }
                        let got = [p.literals, p.lengths, p.offsets, p.commands, p.offset_tails];
                        for k in 0..NS {
                            if got[k].data() != &bufs[k][..] {
                                return Err(format!("block {b} stream {k}: single bytes differ"));
                            }
                        }
                    }
                    Err(e) => {
                        if r != Err(e) {
                            return Err(format!(
                                "block {b}: streams::decode_streams {e:?}, reference {r:?}"
                            ));
                        }
                    }
                }
                if r.is_ok() {
                    let p = streams::padded_streams(&a, b, &scratch[j]);
                    let got = [p.literals, p.lengths, p.offsets, p.commands, p.offset_tails];
                    for k in 0..NS {
                        if got[k].data() != &bufs[k][..] {
                            return Err(format!("block {b} stream {k}: group bytes differ"));
                        }
                    }
                }
            }
            first_b += m;
        }
    }
    // 3. decompress and extract on one thread: the first failing block, in order
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let d = pool.install(|| decompress(&a));
    match (&first, &d) {
        (None, Ok(v)) => {
            if v != orig {
                return Err("decompress ok but wrong bytes".into());
            }
        }
        (Some((b, s)), Err(DecodeError::Block { block, status, .. })) => {
            if *block as usize != *b || status != s {
                return Err(format!(
                    "decompress: block {block} {status:?}, reference first failure block {b} {s:?}"
                ));
            }
        }
        _ => {
            return Err(format!(
                "decompress {d:?} vs reference first failure {first:?}"
            ))
        }
    }
    // the global (multi-thread) pool: any failing block may be reported
    let d2 = decompress(&a);
    match (&first, &d2) {
        (None, Ok(v)) if v == orig => {}
        (Some(_), Err(DecodeError::Block { block, status, .. }))
            if block_st.get(*block as usize).copied().flatten() == Some(*status) => {}
        _ => {
            return Err(format!(
                "parallel decompress {d2:?} vs reference first failure {first:?}"
            ))
        }
    }
    if n > 0 {
        let off = rng.below(n as u64);
        let len = 1 + rng.below((n as u64 - off).min(3 * bs as u64));
        let x = pool.install(|| extract(&a, off, len));
        let lo = off as usize / bs;
        let hi = (off + len - 1) as usize / bs;
        // the blocks extract needs: lo..=hi plus their sources
        let mut lowest = lo;
        for e in &a.entries()[lo..=hi] {
            lowest = lowest.min(e.lowest_source_block as usize);
        }
        let lowest = if a.cross_block() {
            let mut l = lo;
            let mut b = hi;
            loop {
                l = l.min(a.entries()[b].lowest_source_block as usize);
                if b == 0 || b <= l {
                    break;
                }
                b -= 1;
            }
            l
        } else {
            lowest
        };
        let exp = (lowest..=hi).find_map(|b| block_st[b].map(|s| (b, s)));
        match (&exp, &x) {
            (None, Ok(v)) => {
                if v[..] != orig[off as usize..(off + len) as usize] {
                    return Err("extract ok but wrong bytes".into());
                }
            }
            (Some((b, s)), Err(DecodeError::Block { block, status, .. })) => {
                if *block as usize != *b || status != s {
                    return Err(format!(
                        "extract {off}+{len}: block {block} {status:?}, expected block {b} {s:?}"
                    ));
                }
            }
            _ => return Err(format!("extract {off}+{len}: {x:?} vs expected {exp:?}")),
        }
    }
    if first.is_none() {
        tally.all_ok += 1;
    }
    Ok(())
}

fn sources(kib: usize) -> Vec<Source> {
    // ACEAPEX_ATTACK_CORPORA, default `corpora/` of the crate (../shared/corpora/fetch.sh)
    let c = std::env::var("ACEAPEX_ATTACK_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/corpora").to_string());
    let read = |p: &str, max: usize| {
        let mut d = std::fs::read(format!("{c}/{p}")).unwrap();
        d.truncate(max);
        d
    };
    let bytes = kib << 10;
    let def = Settings::default();
    let small = Settings {
        block_size: 4096,
        ..Default::default()
    };
    let cross = Settings {
        window: Some(64 << 10),
        ..Default::default()
    };
    let cross4k = Settings {
        window: Some(64 << 10),
        block_size: 4096,
        ..Default::default()
    };
    let moby = read("text/moby_dick.txt", bytes);
    let fq = read("fastq/mouse_RNAseq_top100k_1.fq", bytes);
    let dna = read("dna/E_coli_K12_MG1655_NC_000913.2.fa", bytes);
    let far = {
        let mut r = Rng(0xFA4);
        let a: Vec<u8> = (0..48 << 10).map(|_| r.next() as u8).collect();
        let mut v = a.clone();
        v.extend(
            moby.iter()
                .cycle()
                .take((2 << 20) + 12345)
                .map(|&x| x ^ 0x20),
        );
        // a's 1 KiB pieces in another order: one far match each
        for i in 0..48 {
            let j = (i * 29) % 48;
            v.extend_from_slice(&a[j << 10..(j + 1) << 10]);
            v.extend(moby.iter().skip(i * 1000).take(300));
        }
        v
    };
    vec![
        load("moby", moby.clone(), &def),
        load("fastq", fq.clone(), &def),
        load("ecoli", dna.clone(), &def),
        load(
            "moby-4k",
            moby[..moby.len().min(512 << 10)].to_vec(),
            &small,
        ),
        load("fastq-4k", fq[..fq.len().min(512 << 10)].to_vec(), &small),
        load(
            "moby-64k",
            moby.clone(),
            &Settings {
                block_size: 64 << 10,
                ..Default::default()
            },
        ),
        load(
            "fastq-32k",
            fq.clone(),
            &Settings {
                block_size: 32 << 10,
                ..Default::default()
            },
        ),
        load(
            "moby-cross",
            moby[..moby.len().min(256 << 10)].to_vec(),
            &cross,
        ),
        load(
            "ecoli-cross",
            dna[..dna.len().min(256 << 10)].to_vec(),
            &cross,
        ),
        // `--window 64K` with 4 KiB blocks: distances up to 65536, so 2- and 3-byte varints
        // (1- and 2-byte tails) in valid data
        load(
            "moby-cross-4k",
            moby[..moby.len().min(256 << 10)].to_vec(),
            &cross4k,
        ),
        load(
            "fastq-cross-4k",
            fq[..fq.len().min(256 << 10)].to_vec(),
            &cross4k,
        ),
        load(
            "ecoli-cross-4k",
            dna[..dna.len().min(256 << 10)].to_vec(),
            &cross4k,
        ),
        // far repeats under a 4 MiB window: 4-byte distance varints (3-byte tails)
        load(
            "far-4m",
            far,
            &Settings {
                window: Some(4 << 20),
                block_size: 256 << 10,
                ..Default::default()
            },
        ),
    ]
}

#[test]
#[ignore = "throwaway attack harness (wt-attack5)"]
fn attack_fast_decoder_with_damaged_real_archives() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let cases = env("ATTACK_CASES", 20_000) as usize;
    let seed = env("ATTACK_SEED", 0xA77AC4);
    let kib = env("ATTACK_KIB", 2048) as usize;
    let t0 = Instant::now();
    eprintln!(
        "cpu: avx2 {} bmi2 {}",
        std::is_x86_feature_detected!("avx2"),
        std::is_x86_feature_detected!("bmi2")
    );
    let srcs = sources(kib);
    eprintln!("sources ready in {:.1?}", t0.elapsed());
    // watchdog: a case running for more than WATCH_S seconds is a hang
    let watch_case = Arc::new(AtomicU64::new(u64::MAX));
    let watch_start = Arc::new(AtomicU64::new(0));
    {
        let (c, st) = (watch_case.clone(), watch_start.clone());
        let limit = env("ATTACK_WATCH_S", 120) * 1000;
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
            let now = t0.elapsed().as_millis() as u64;
            let s = st.load(Ordering::Relaxed);
            if c.load(Ordering::Relaxed) != u64::MAX && now.saturating_sub(s) > limit {
                eprintln!(
                    "HANG: case {} running for {} ms",
                    c.load(Ordering::Relaxed),
                    now - s
                );
                std::process::abort();
            }
        });
    }
    let mut total_bytes = 0usize;
    let mut per_kind: Vec<Tally> = (0..KINDS.len()).map(|_| Tally::default()).collect();
    let mut failures = Vec::new();
    let mut slowest = (0.0f64, 0usize);
    for case in 0..cases {
        let mut rng = Rng(seed ^ (case as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let si = rng.below(srcs.len() as u64) as usize;
        let kind = rng.below(KINDS.len() as u64) as usize;
        let mut sub = Sub::new(&srcs[si], &mut rng);
        damage(&mut sub, &mut rng, kind);
        let bytes = sub.assemble();
        let orig = sub.orig().to_vec();
        let expect_reject = sub.expect_reject;
        total_bytes += bytes.len();
        let t = Instant::now();
        watch_case.store(case as u64, Ordering::Relaxed);
        watch_start.store(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(&bytes, &orig, expect_reject, &mut rng, &mut per_kind[kind])
        }));
        let el = t.elapsed().as_secs_f64();
        if el > slowest.0 {
            slowest = (el, case);
        }
        per_kind[kind].cases += 1;
        let msg = match r {
            Ok(Ok(())) => None,
            Ok(Err(m)) => Some(m),
            Err(p) => Some(format!(
                "PANIC {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        };
        if let Some(m) = msg {
            eprintln!(
                "FAIL case {case} src {} kind {}: {m}",
                srcs[si].name, KINDS[kind]
            );
            if failures.len() < 5 {
                let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/target/attack5-fails");
                std::fs::create_dir_all(dir).ok();
                std::fs::write(format!("{dir}/case{case}.acx"), &bytes).ok();
            }
            failures.push(case);
        }
        if case % 2000 == 1999 {
            eprintln!(
                "{} cases, {:.1?}, {} failures",
                case + 1,
                t0.elapsed(),
                failures.len()
            );
        }
    }
    for (k, t) in per_kind.iter().enumerate() {
        eprintln!(
            "{:>20}: {:>6} cases, {:>5} rejected by parse, {:>5} fully ok; block statuses {:?}",
            KINDS[k], t.cases, t.parse_rejected, t.all_ok, t.statuses
        );
    }
    eprintln!(
        "total {cases} cases ({total_bytes} archive bytes) in {:.1?}; slowest case {} {:.3}s; {} failures {:?}",
        t0.elapsed(),
        slowest.1,
        slowest.0,
        failures.len(),
        &failures[..failures.len().min(20)]
    );
    assert!(failures.is_empty());
}
