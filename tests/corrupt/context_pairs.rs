//! Context pairs (kind-2 table records, FORMAT.md §5.2, §5.4):
//! the fast CPU rANS decoder (host/cpu/rans.rs: `decode_slice`, `SliceDecoder` with its
//! scalar and AVX2 context rows, the tail loop, `fast_rows_together` with context slices
//! mixed in) against the reference (`aceapex::device::rans::decode_slice`) on valid,
//! damaged and hostile slices (every lane count 1..=32, context bits 0-7), and whole
//! archives: encoder archives with their context bits relabelled, pair bodies swapped or
//! cut, kinds changed, versions relabelled (pre-release and unknown versions refused),
//! hand-made archives with chosen lanes and context bits, resealed random mutation. Nothing may panic, the two
//! decoders agree on every slice (status, and bytes when Ok), and no decoder returns Ok with
//! bytes other than the original.
//!
//! Env (counts scale the work; defaults run in seconds): ATTACK_SEED, ATTACK_ITERS (direct
//! slices), ATTACK_ROUNDS (slices decoded together, archive rounds), ATTACK_FUZZ_ITERS
//! (resealed mutation), ATTACK_ENC_ROUNDS (encoder archives), ATTACK_CORPORA (the corpora
//! folder, default `corpora/`, for the ignored real-data test), ATTACK_KIB (KiB
//! taken from each corpus file).

use crate::common::attack::{check_slice, compare_archive, env, text};
use crate::common::parts::{assemble, body_len, parts, with_tables, Parts};
use crate::common::{get_u32, put_u32, Rng};
use aceapex::decode::rans::SliceDecoder;
use aceapex::device::format::*;
use aceapex::device::rans::{self as reference, SliceTables};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{encode_context_slice, encode_slice_with, EncodeTable, FreqTable};
use aceapex::format::Archive;
use aceapex::{FormatError, Settings};
use std::panic::{catch_unwind, AssertUnwindSafe};

const HEADER_SIZE: usize = 96;
const H_VERSION: usize = 4;
const H_GROUP_BLOCKS: usize = 24;
const H_GROUP_COUNT: usize = 28;
const H_BASE: usize = 85;

// ---------------------------------------------------------------------------------------
// data and tables
// ---------------------------------------------------------------------------------------

/// Test data of `n` bytes in one of several shapes: a small skewed alphabet, soft-masked
/// DNA (long case runs, where a lane's previous symbol predicts the next one's case), text,
/// uniform noise, one repeated byte, bytes with only bit `b` varying.
fn gen_data(r: &mut Rng, n: usize) -> Vec<u8> {
    match r.below(7) {
        0 => {
            let alpha = r.pick(&[2u64, 3, 4, 20, 256]);
            (0..n)
                .map(|_| (r.below(alpha)).min(r.below(alpha)) as u8)
                .collect()
        }
        1 => {
            let mut d = Vec::with_capacity(n);
            let mut lower = false;
            while d.len() < n {
                let run = r.range(1, 400) as usize;
                for _ in 0..run {
                    let alpha = if r.below(50) == 0 { 5 } else { 4 };
                    let c = b"ACGTN"[r.below(alpha) as usize];
                    d.push(if lower { c.to_ascii_lowercase() } else { c });
                }
                if r.below(30) == 0 {
                    d.push(b'\n');
                }
                lower = !lower;
            }
            d.truncate(n);
            d
        }
        2 => text(r, n),
        3 => (0..n).map(|_| r.next() as u8).collect(),
        4 => vec![r.next() as u8; n],
        5 => {
            let b = r.below(8);
            let base = r.next() as u8 & !(1 << b);
            let mut d = Vec::with_capacity(n);
            let mut on = false;
            while d.len() < n {
                for _ in 0..r.range(1, 64) {
                    d.push(base | (on as u8) << b);
                }
                on = !on;
            }
            d.truncate(n);
            d
        }
        _ => {
            // runs of a few symbols (LZ command-like streams)
            let syms: Vec<u8> = (0..r.range(1, 6)).map(|_| r.next() as u8).collect();
            (0..n).map(|_| r.pick(&syms)).collect()
        }
    }
}

/// Histogram counts per (context bit `bit` of the lane's previous symbol, symbol) of `data`
/// coded with `lanes` lanes (FORMAT.md §5.4: context 0 for each lane's first symbol).
fn pair_hist(data: &[u8], lanes: usize, bit: u32, h: &mut [[u64; 256]; 2]) {
    for (i, &x) in data.iter().enumerate() {
        let c = if i >= lanes {
            (data[i - lanes] >> bit) & 1
        } else {
            0
        };
        h[c as usize][x as usize] += 1;
    }
}

/// A random valid table (`from_histogram` of random counts): one symbol, a few, all 256,
/// or one dominant symbol with every other at frequency 1.
fn random_table(r: &mut Rng) -> FreqTable {
    let mut h = [0u64; 256];
    match r.below(4) {
        0 => h[r.below(256) as usize] = 1,
        1 => {
            for _ in 0..r.range(1, 8) {
                h[r.below(256) as usize] += r.range(1, 1000);
            }
        }
        2 => {
            for x in h.iter_mut() {
                *x = r.range(1, 50);
            }
        }
        _ => {
            for x in h.iter_mut() {
                *x = 1;
            }
            h[r.below(256) as usize] = 1 << 30;
        }
    }
    FreqTable::from_histogram(&h).unwrap()
}

/// A table holding every symbol of `h` (which may be empty: then a random table), and
/// sometimes extra symbols.
fn table_for(r: &mut Rng, mut h: [u64; 256]) -> FreqTable {
    if r.below(4) == 0 {
        for _ in 0..r.range(1, 20) {
            h[r.below(256) as usize] += r.range(1, 5);
        }
    }
    FreqTable::from_histogram(&h).unwrap_or_else(|| random_table(r))
}

/// Encodes `data` with `lanes` lanes: with a pair (`tables.len() == 2`, context `bit`) or one
/// table. Every symbol must be present in the table its context picks.
fn encode(data: &[u8], lanes: usize, tables: &[FreqTable], bit: u32) -> Vec<u8> {
    let et: Vec<EncodeTable> = tables
        .iter()
        .map(|t| EncodeTable::new(t, &t.cumulative()))
        .collect();
    let mut out = Vec::new();
    if et.len() == 2 {
        encode_context_slice(data, lanes, [&et[0], &et[1]], bit, &mut out);
    } else {
        encode_slice_with(data, lanes, &et[0], &mut out);
    }
    out
}

/// The tables to code `data` with `lanes` lanes: a pair for context `bit` (`ctx`) built from
/// the data, or one table.
fn tables_for(r: &mut Rng, data: &[u8], lanes: usize, bit: u32, ctx: bool) -> Vec<FreqTable> {
    if ctx {
        let mut h = [[0u64; 256]; 2];
        pair_hist(data, lanes, bit, &mut h);
        h.map(|h| table_for(r, h)).to_vec()
    } else {
        let mut h = [0u64; 256];
        aceapex::encode::entropy::count(&mut h, data);
        vec![table_for(r, h)]
    }
}

fn slice_tables(t: &[DecodeTable], bit: u32) -> SliceTables<'_> {
    SliceTables {
        tables: t,
        ctx_bit: bit,
        pack: None,
    }
}

fn decode_tables(ts: &[FreqTable]) -> Vec<DecodeTable> {
    ts.iter().map(|t| *t.decode_table()).collect()
}

// ---------------------------------------------------------------------------------------
// slices: fast vs reference
// ---------------------------------------------------------------------------------------

/// One random slice (data, lanes 1..=32, a pair or one table, a context bit), encoded and
/// checked valid, then damaged every way: wrong lane counts and lengths, truncation, flips
/// in the states and the words, appended words, another context bit, the pair's tables
/// swapped or read as one table, one table read as a pair, hostile random tables.
fn direct_case(r: &mut Rng, it: usize) {
    let n = match r.below(5) {
        0 => r.below(40) as usize,
        1 => r.below(600) as usize,
        2 => r.below(5000) as usize,
        _ => r.below(40000) as usize,
    };
    let data = gen_data(r, n);
    let lanes = if r.below(2) == 0 {
        r.pick(&[1usize, 2, 4, 8, 16, 24, 32])
    } else {
        r.range(1, 32) as usize
    };
    let ctx = r.below(4) != 0;
    let bit = r.below(8) as u32;
    let ft = tables_for(r, &data, lanes, bit, ctx);
    let dt = decode_tables(&ft);
    let enc = encode(&data, lanes, &ft, bit);
    let t = slice_tables(&dt, bit);
    let w = || format!("it {it}: valid, n {n}, lanes {lanes}, ctx {ctx}, bit {bit}");
    let (st, got) = check_slice(r, &enc, lanes, t, n, &w);
    assert_eq!(st, Ok(()), "valid slice fails: {}", w());
    assert!(got == data, "valid slice decodes wrong: {}", w());

    for v in 0..16 {
        let mut s = enc.clone();
        let mut l = lanes;
        let mut len = n;
        let mut bt = bit;
        let mut tabs = dt.clone();
        match v {
            0 => l = r.range(0, 33) as usize,
            1 => len = n + r.range(1, 70) as usize,
            2 => len = n.saturating_sub(r.range(1, 70) as usize),
            3 if !s.is_empty() => s.truncate(r.below(s.len() as u64) as usize),
            4 if s.len() >= 2 => s.truncate(s.len() - 2),
            5 if !s.is_empty() => {
                let i = r.below((4 * lanes).min(s.len()) as u64) as usize;
                s[i] ^= 1 << r.below(8);
            }
            6 if !s.is_empty() => {
                let i = r.below(s.len() as u64) as usize;
                s[i] ^= 1 << r.below(8);
            }
            7 if !s.is_empty() => {
                let i = s.len() - 1 - r.below(s.len().min(16) as u64) as usize;
                s[i] = r.next() as u8;
            }
            8 => s.extend_from_slice(&(r.next() as u16).to_le_bytes()),
            9 => bt = (bit + r.range(1, 7) as u32) % 8,
            10 if tabs.len() == 2 => tabs.swap(0, 1),
            11 if tabs.len() == 2 => tabs.truncate(1),
            11 => tabs.push(tabs[0]),
            12 => {
                // hostile tables: random pair or single, unrelated to the data
                let k = r.range(1, 2) as usize;
                tabs = (0..k).map(|_| *random_table(r).decode_table()).collect();
            }
            13 => {
                // both: another lane count and another length
                l = r.range(1, 32) as usize;
                len = r.below(2 * n as u64 + 40) as usize;
            }
            14 if tabs.len() == 2 => tabs[1] = *random_table(r).decode_table(),
            15 if !s.is_empty() => {
                for _ in 0..r.range(2, 8) {
                    let i = r.below(s.len() as u64) as usize;
                    s[i] ^= 1 << r.below(8);
                }
            }
            _ => continue,
        }
        let w = || {
            format!("it {it}: variant {v}, n {n}->{len}, lanes {lanes}->{l}, bit {bit}->{bt}, tables {}, slice {}", tabs.len(), s.len())
        };
        let _ = check_slice(r, &s, l, slice_tables(&tabs, bt), len, &w);
    }

    // pure noise: random states and words, random tables
    let len = r.below(3000) as usize;
    let noise: Vec<u8> = (0..r.below(4000) as usize)
        .map(|_| r.next() as u8)
        .collect();
    let k = r.range(1, 2) as usize;
    let tabs: Vec<DecodeTable> = (0..k).map(|_| *random_table(r).decode_table()).collect();
    let l = r.range(0, 33) as usize;
    let bt = r.below(8) as u32;
    let w = || format!("it {it}: noise, lanes {l}, len {len}, bit {bt}, tables {k}");
    let _ = check_slice(r, &noise, l, slice_tables(&tabs, bt), len, &w);
}

#[test]
fn direct_slices() {
    let seed = 0xC5_0001 + env("ATTACK_SEED", 0);
    let mut r = Rng(seed);
    let iters = env("ATTACK_ITERS", 400) as usize;
    for it in 0..iters {
        direct_case(&mut r, it);
    }
}

/// Every lane count 1..=32 and every context bit 0..=7 at least once, on soft-masked data
/// and on uniform noise (where both tables hold all 256 symbols).
#[test]
fn every_lane_count_and_bit() {
    let mut r = Rng(0xC5_0002 + env("ATTACK_SEED", 0));
    for lanes in 1..=32usize {
        for bit in 0..8u32 {
            let n = r.pick(&[0usize, 1, lanes, lanes + 1, 8 * lanes + 3, 3000]);
            let data = gen_data(&mut r, n);
            let ft = tables_for(&mut r, &data, lanes, bit, true);
            let dt = decode_tables(&ft);
            let enc = encode(&data, lanes, &ft, bit);
            let w = || format!("lanes {lanes}, bit {bit}, n {n}");
            let (st, got) = check_slice(&mut r, &enc, lanes, slice_tables(&dt, bit), n, &w);
            assert_eq!(st, Ok(()), "{}", w());
            assert!(got == data, "{}", w());
        }
    }
}

/// A pair of two identical tables decodes exactly as the one table (any context bit).
#[test]
fn identical_pair_equals_single() {
    let mut r = Rng(0xC5_0003 + env("ATTACK_SEED", 0));
    for it in 0..env("ATTACK_ROUNDS", 40) as usize {
        let n = r.below(20000) as usize;
        let data = gen_data(&mut r, n);
        let lanes = r.range(1, 32) as usize;
        let ft = tables_for(&mut r, &data, lanes, 0, false);
        let dt = decode_tables(&ft);
        let enc = encode(&data, lanes, &ft, 0);
        let pair = [dt[0], dt[0]];
        let bit = r.below(8) as u32;
        let w = || format!("it {it}: lanes {lanes}, bit {bit}");
        let (st, got) = check_slice(&mut r, &enc, lanes, slice_tables(&pair, bit), n, &w);
        assert_eq!(st, Ok(()), "{}", w());
        assert!(got == data, "{}", w());
    }
}

/// One slice of a batch decoded together.
struct Case {
    enc: Vec<u8>,
    lanes: usize,
    tables: Vec<DecodeTable>,
    bit: u32,
    len: usize,
}

/// 1-40 slices (a group's worth: 8 blocks x 5 streams) with and without context pairs,
/// lane counts mostly those `fast_rows_together` groups (1, 2, 4, 8, 16, 24), some damaged,
/// decoded with `fast_rows_together` (some first advanced alone a few rows, then again
/// together), then each to its end: status and bytes of every slice as the reference's.
fn together_case(r: &mut Rng, round: usize) {
    let count = r.range(1, 40) as usize;
    let mut cases = Vec::new();
    let lane_set = r.pick(&[
        &[1usize, 2, 4, 8, 16, 24][..],
        &[4, 4, 4, 8, 8][..],
        &[1, 1, 2, 2][..],
        &[8, 16, 24, 32][..],
        &[1, 2, 3, 4, 5, 8, 16, 24, 31, 32][..],
    ]);
    let ctx_pct = r.pick(&[0u64, 20, 50, 90, 100]);
    for _ in 0..count {
        let max = r.pick(&[64u64, 600, 4000, 20000]);
        let n = r.below(max) as usize;
        let data = gen_data(r, n);
        let lanes = r.pick(lane_set);
        let ctx = r.below(100) < ctx_pct;
        let bit = r.below(8) as u32;
        let ft = tables_for(r, &data, lanes, bit, ctx);
        let mut enc = encode(&data, lanes, &ft, bit);
        let mut tables = decode_tables(&ft);
        let mut len = n;
        let mut bit_d = bit;
        let mut lanes_d = lanes;
        match r.below(12) {
            0 if !enc.is_empty() => {
                let i = r.below(enc.len() as u64) as usize;
                enc[i] ^= 1 << r.below(8);
            }
            1 if enc.len() > 2 => enc.truncate(enc.len() - 2),
            2 => len += r.range(1, 40) as usize,
            3 => len = len.saturating_sub(r.range(1, 40) as usize),
            4 if tables.len() == 2 => bit_d = (bit + 1) % 8,
            5 if tables.len() == 2 => tables.swap(0, 1),
            6 => lanes_d = r.pick(lane_set),
            7 if tables.len() == 1 => tables.push(tables[0]),
            _ => {}
        }
        cases.push(Case {
            enc,
            lanes: lanes_d,
            tables,
            bit: bit_d,
            len,
        });
    }
    let want: Vec<(Result<(), Status>, Vec<u8>)> = cases
        .iter()
        .map(|c| {
            let mut o = vec![0u8; c.len];
            let st =
                reference::decode_slice(&c.enc, c.lanes, slice_tables(&c.tables, c.bit), &mut o);
            (st, o)
        })
        .collect();
    let mut outs: Vec<Vec<u8>> = cases.iter().map(|c| vec![0xEEu8; c.len]).collect();
    let mut got: Vec<Option<Result<(), Status>>> = vec![None; cases.len()];
    let mut decs = Vec::new();
    let mut owner = Vec::new();
    for (i, (c, o)) in cases.iter().zip(outs.iter_mut()).enumerate() {
        match SliceDecoder::new(&c.enc, c.lanes, slice_tables(&c.tables, c.bit), o) {
            Ok(d) => {
                decs.push(d);
                owner.push(i);
            }
            Err(st) => got[i] = Some(Err(st)),
        }
    }
    let pre = r.below(3);
    if pre == 1 {
        for d in decs.iter_mut() {
            if r.below(2) == 0 {
                d.fast_rows(r.range(1, 5) as usize);
            }
        }
    }
    SliceDecoder::fast_rows_together(&mut decs);
    if pre == 2 {
        for d in decs.iter_mut() {
            if r.below(2) == 0 {
                d.fast_rows(r.range(1, 3) as usize);
            }
        }
        SliceDecoder::fast_rows_together(&mut decs);
    }
    for (d, i) in decs.into_iter().zip(owner) {
        let mut d = d;
        while d.fast_rows(r.pick(&[1usize, 5, usize::MAX])) > 0 {}
        got[i] = Some(d.finish());
    }
    for (i, (st, o)) in want.iter().enumerate() {
        let c = &cases[i];
        let what = format!(
            "round {round} slice {i}/{count}: lanes {}, tables {}, bit {}, len {}",
            c.lanes,
            c.tables.len(),
            c.bit,
            c.len
        );
        assert_eq!(got[i], Some(*st), "together: status differs ({what})");
        if st.is_ok() {
            assert!(outs[i] == *o, "together: bytes differ ({what})");
        }
    }
}

#[test]
fn slices_together() {
    let mut r = Rng(0xC5_0004 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ROUNDS", 40) as usize {
        together_case(&mut r, round);
    }
}

// ---------------------------------------------------------------------------------------
// archives
// ---------------------------------------------------------------------------------------

/// One table record of a table section, located (FORMAT.md §5.2).
#[derive(Clone, Debug)]
struct Rec {
    start: usize,
    end: usize,
    kind: u8,
    /// kind 2: the offsets of the two bodies.
    bodies: Vec<std::ops::Range<usize>>,
}

/// The records of a valid table section.
fn records(s: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < s.len() {
        let start = p;
        let kind = s[p];
        p += 1;
        let mut bodies = Vec::new();
        match kind {
            0 => {}
            1 => {
                let l = body_len(s, p).unwrap();
                bodies.push(p..p + l);
                p += l;
            }
            2 => {
                p += 1;
                for _ in 0..2 {
                    let l = body_len(s, p).unwrap();
                    bodies.push(p..p + l);
                    p += l;
                }
            }
            _ => panic!("bad kind {kind} at {p}"),
        }
        out.push(Rec {
            start,
            end: p,
            kind,
            bodies,
        });
    }
    out
}

/// [`crate::common::attack::never_wrong`]: whether the archive parsed and `decompress` succeeded.
fn never_wrong(packed: &[u8], data: &[u8], r: &mut Rng, what: &str) -> (bool, bool) {
    let res = crate::common::attack::never_wrong(packed, data, r, what);
    (res.is_some(), res == Some(true))
}

fn soft_masked(r: &mut Rng, n: usize) -> Vec<u8> {
    let mut d = Vec::with_capacity(n);
    let mut lower = false;
    while d.len() < n {
        let run = r.range(20, 3000) as usize;
        for _ in 0..run {
            // repeats: copy an earlier stretch now and then
            let c = if d.len() > 1000 && r.below(3) == 0 {
                d[d.len() - r.range(100, 1000) as usize]
            } else {
                b"ACGT"[r.below(4) as usize]
            };
            d.push(if lower {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            });
        }
        if r.below(3) == 0 {
            d.push(b'\n');
        }
        lower = !lower;
    }
    d.truncate(n);
    d
}

/// An encoder archive with context pairs (text or soft-masked DNA at level 9 or 5); returns
/// the data, the archive and its options.
fn encoder_archive(r: &mut Rng, round: usize) -> (Vec<u8>, Vec<u8>, Settings) {
    let bs = [4096u32, 16384, 65536, 16384][round % 4];
    let cross = round / 4 % 2 == 1;
    let n = r.range(30_000, 300_000) as usize;
    let data = if round.is_multiple_of(2) {
        soft_masked(r, n)
    } else {
        text(r, n)
    };
    let opts = Settings {
        block_size: bs,
        window: if cross { Some(bs * 4) } else { None },
        level: [9, 5, 9, 8][round % 4],
        min_match: [4, 6, 5, 6, 4][round % 5],
        // no packed literal tables: these tests are about context pairs
        packed_literals: false,
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    (data, packed, opts)
}

/// Encoder archives: valid; relabelled context bits (0-7: never wrong, 8-255: refused),
/// swapped pair bodies, a pair cut to one table, one table doubled to a pair (same bytes),
/// version labels and match bases.
#[test]
fn encoder_relabelled() {
    let mut r = Rng(0xC5_1000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 4];
    let mut pairs_seen = 0;
    for round in 0..env("ATTACK_ENC_ROUNDS", 6) as usize {
        let (data, packed, opts) = encoder_archive(&mut r, round);
        let a = Archive::parse(&packed).unwrap();
        assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
        compare_archive(&packed, "encoder archive");
        let version = a.header().version;
        let base = a.header().match_base() as u8;
        let p = parts(&packed);
        let recs = records(&p.tables);
        let ctx: Vec<&Rec> = recs.iter().filter(|x| x.kind == 2).collect();
        assert_eq!(version, 1);
        pairs_seen += ctx.len();
        let b85 = base;
        // same archive rebuilt: identical
        assert_eq!(with_tables(&p, version, b85, &p.tables), packed);
        let what = |s: &str| format!("round {round} (v{version}, {opts:?}): {s}");

        // version labels
        for v in [0u16, 1, 2, 4, 5, 8, 9] {
            for byte85 in [0u8, base, 6] {
                let b = with_tables(&p, v, byte85, &p.tables);
                let parsed = Archive::parse(&b);
                let mm = get_u32(&packed, 32);
                let header_ok = (4..=6).contains(&byte85) && mm >= byte85 as u32;
                let ok = header_ok && v == 1;
                match &parsed {
                    Ok(_) => assert!(ok, "{}", what(&format!("v{v} b85 {byte85} parsed"))),
                    Err(FormatError::PreReleaseVersion { got }) => {
                        assert!(*got == v && (2..=8).contains(&v), "{}", what("pre-release"));
                        stats[0] += 1;
                        continue;
                    }
                    Err(FormatError::Version { got }) => {
                        assert!(*got == v && v != 1, "{}", what("unknown version"));
                        stats[0] += 1;
                        continue;
                    }
                    Err(FormatError::Header { .. }) => {
                        assert!(!header_ok, "{}", what(&format!("v{v} b85 {byte85}")));
                        stats[0] += 1;
                        continue;
                    }
                    Err(e) => panic!("{}: {e:?}", what(&format!("v{v} b85 {byte85}"))),
                }
                let (_, dec) = never_wrong(&b, &data, &mut r, &what(&format!("v{v}")));
                if byte85 as u32 == a.header().match_base() {
                    assert!(
                        dec,
                        "{}",
                        what(&format!("v{v} b85 {byte85}: same base fails"))
                    );
                }
            }
        }

        // context bits relabelled, per record and all at once
        for rec in ctx.iter().take(6) {
            for nb in 0..=255u8 {
                if nb > 9 && nb != 0x80 && nb != 0xFF {
                    continue;
                }
                let mut t = p.tables.clone();
                t[rec.start + 1] = nb;
                let b = with_tables(&p, 1, base, &t);
                let w = what(&format!("record at {} bit {nb}", rec.start));
                if nb > 7 {
                    match Archive::parse(&b) {
                        Err(FormatError::GroupTable { .. }) => stats[0] += 1,
                        other => panic!("{w}: {:?}", other.err()),
                    }
                    continue;
                }
                let (parsed, ok) = never_wrong(&b, &data, &mut r, &w);
                assert!(parsed, "{w}");
                stats[1 + ok as usize] += 1;
            }
        }
        if !ctx.is_empty() {
            let mut t = p.tables.clone();
            for rec in &ctx {
                t[rec.start + 1] = r.below(8) as u8;
            }
            never_wrong(
                &with_tables(&p, 1, base, &t),
                &data,
                &mut r,
                &what("all bits"),
            );
        }

        // bodies swapped; a pair cut to either table; truncated second body
        for rec in ctx.iter().take(6) {
            let (b0, b1) = (rec.bodies[0].clone(), rec.bodies[1].clone());
            let mut swapped = p.tables[..rec.start + 2].to_vec();
            swapped.extend_from_slice(&p.tables[b1.clone()]);
            swapped.extend_from_slice(&p.tables[b0.clone()]);
            swapped.extend_from_slice(&p.tables[rec.end..]);
            never_wrong(
                &with_tables(&p, 1, base, &swapped),
                &data,
                &mut r,
                &what("swapped"),
            );
            for keep in [b0.clone(), b1.clone()] {
                let mut one = p.tables[..rec.start].to_vec();
                one.push(1);
                one.extend_from_slice(&p.tables[keep]);
                one.extend_from_slice(&p.tables[rec.end..]);
                for v in [3u16, 4, 5] {
                    let b85 = if v >= 4 { base } else { 0 };
                    never_wrong(
                        &with_tables(&p, v, b85, &one),
                        &data,
                        &mut r,
                        &what("pair cut to one"),
                    );
                }
            }
            // the second body cut short (the section shrinks; later records shift)
            for cut in [1usize, 2, 31, 32, b1.len() - 1] {
                if cut > b1.len() {
                    continue;
                }
                let mut t = p.tables[..b1.end - cut].to_vec();
                t.extend_from_slice(&p.tables[b1.end..]);
                let b = with_tables(&p, 1, base, &t);
                let w = what(&format!("second body cut by {cut}"));
                match Archive::parse(&b) {
                    Err(_) => stats[0] += 1,
                    Ok(_) => {
                        never_wrong(&b, &data, &mut r, &w);
                    }
                }
            }
            // the section ends inside the second body (last record only makes sense, but try
            // every pair): cut everything after
            let t = p.tables[..b1.start + r.below(b1.len() as u64) as usize].to_vec();
            assert!(
                Archive::parse(&with_tables(&p, 1, base, &t)).is_err(),
                "{}",
                what("section ends inside a second body")
            );
        }

        // one-table records doubled to a pair (same bytes, any bit): must decode the same
        let mut doubled = Vec::new();
        for rec in &recs {
            if rec.kind == 1 && r.below(2) == 0 {
                doubled.push(2);
                doubled.push(r.below(8) as u8);
                doubled.extend_from_slice(&p.tables[rec.bodies[0].clone()]);
                doubled.extend_from_slice(&p.tables[rec.bodies[0].clone()]);
            } else {
                doubled.extend_from_slice(&p.tables[rec.start..rec.end]);
            }
        }
        let b = with_tables(&p, 1, base.max(4), &doubled);
        let a2 = Archive::parse(&b).expect("doubled tables parse");
        assert_eq!(
            aceapex::decode::decompress(&a2).unwrap(),
            data,
            "{}",
            what("doubled")
        );
        compare_archive(&b, &what("doubled"));
    }
    eprintln!(
        "pairs {pairs_seen}; refused {}, decode failed {}, decoded {}",
        stats[0], stats[1], stats[2]
    );
}

/// Archives without pairs relabelled to every match base: parsed only with a base of 4 to 6
/// not above the minimum match, never wrong, and the true base decodes.
#[test]
fn archives_without_pairs_relabelled() {
    let mut r = Rng(0xC5_2000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ENC_ROUNDS", 6) as usize {
        let n = r.range(20_000, 120_000) as usize;
        let data = text(&mut r, n);
        let mm = [4u32, 6, 5][round % 3];
        let opts = Settings {
            block_size: 16384,
            level: [5, 9][round % 2],
            min_match: mm,
            context_tables: false,
            ..Default::default()
        };
        let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
        let p = parts(&packed);
        let v = get_u32(&packed, H_VERSION) & 0xFFFF;
        assert_eq!(v, 1);
        let base = mm.min(6) as u8;
        for byte85 in [0u8, 4, 5, 6, 7] {
            let b = with_tables(&p, 1, byte85, &p.tables);
            let w = format!("round {round}: min match {mm}, byte85 {byte85}");
            let parsed = Archive::parse(&b).is_ok();
            assert_eq!(
                parsed,
                (4..=6).contains(&byte85) && byte85 <= mm as u8,
                "{w}"
            );
            let (_, ok) = never_wrong(&b, &data, &mut r, &w);
            if byte85 == base {
                assert!(ok, "{w}");
            }
        }
    }
}

/// A hand-made archive from the LZ streams of `packed` (decoded by the reference): each
/// group and stream gets no table, one table or a context pair with a random bit; each rANS
/// slice any lane count 1..=32; `group_blocks` as given.
fn handmade(r: &mut Rng, packed: &[u8], group_blocks: u32, ctx_pct: u64) -> Vec<u8> {
    let a = Archive::parse(packed).unwrap();
    let p = parts(packed);
    let nb = a.block_count();
    let mut streams = Vec::with_capacity(nb);
    for b in 0..nb {
        let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        streams.push(bufs);
    }
    let gb = group_blocks as usize;
    let mut entries = p.entries.clone();
    let mut tables = Vec::new();
    let mut data = Vec::new();
    let lane_mode = r.below(3);
    let mut encoded: Vec<[Option<Vec<u8>>; STREAM_COUNT]> = vec![Default::default(); nb];
    for g in 0..nb.div_ceil(gb) {
        let blocks = g * gb..((g + 1) * gb).min(nb);
        for k in 0..STREAM_COUNT {
            let kind = if r.below(100) < ctx_pct {
                2
            } else {
                r.pick(&[0u8, 1, 1, 1])
            };
            let bit = r.below(8) as u32;
            let lanes: Vec<usize> = blocks
                .clone()
                .map(|_| match lane_mode {
                    0 => r.pick(&[1usize, 2, 4, 8, 16, 24, 32]),
                    1 => r.range(1, 32) as usize,
                    _ => r.pick(&[4usize, 8, 24]),
                })
                .collect();
            let mut h = [[0u64; 256]; 2];
            for (b, &l) in blocks.clone().zip(&lanes) {
                if kind == 2 {
                    pair_hist(&streams[b][k], l, bit, &mut h);
                } else {
                    aceapex::encode::entropy::count(&mut h[0], &streams[b][k]);
                }
            }
            let ft: Vec<FreqTable> = match kind {
                0 => {
                    tables.push(0);
                    Vec::new()
                }
                1 => {
                    let t = table_for(r, h[0]);
                    t.serialize(&mut tables);
                    vec![t]
                }
                _ => {
                    let ts = vec![table_for(r, h[0]), table_for(r, h[1])];
                    tables.push(2);
                    tables.push(bit as u8);
                    ts[0].serialize_body(&mut tables);
                    ts[1].serialize_body(&mut tables);
                    ts
                }
            };
            for (b, &l) in blocks.clone().zip(&lanes) {
                let s = &streams[b][k];
                if ft.is_empty() || (s.is_empty() && r.below(2) == 0) {
                    encoded[b][k] = None;
                    entries[b].lanes[k] = LANES_RAW;
                } else {
                    encoded[b][k] = Some(encode(s, l, &ft, bit));
                    entries[b].lanes[k] = l as u8;
                }
            }
        }
    }
    for b in 0..nb {
        for k in 0..STREAM_COUNT {
            let bytes = encoded[b][k]
                .clone()
                .unwrap_or_else(|| streams[b][k].clone());
            entries[b].stored_len[k] = bytes.len() as u32;
            entries[b].decoded_len[k] = streams[b][k].len() as u32;
            data.extend_from_slice(&bytes);
        }
    }
    let base = a.header().match_base() as u8;
    let mut hp = Parts {
        header: p.header.clone(),
        entries: Vec::new(),
        tables: Vec::new(),
        data: Vec::new(),
    };
    put_u32(&mut hp.header, H_GROUP_BLOCKS, group_blocks);
    put_u32(&mut hp.header, H_GROUP_COUNT, nb.div_ceil(gb) as u32);
    assemble(&hp, 1, base, &entries, &tables, &data)
}

/// Hand-made archives with context pairs (pairs with random bits, any lane counts, small groups): decode to
/// the original through every path; then damaged slices, entries (lane counts) and
/// context bits, resealed: never wrong, fast == reference.
#[test]
fn handmade_archives() {
    let mut r = Rng(0xC5_3000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 2];
    for round in 0..env("ATTACK_ENC_ROUNDS", 6) as usize {
        let (data, packed, _) = encoder_archive(&mut r, round);
        let gb = r.pick(&[1u32, 2, 3, 8, 64]);
        let ctx_pct = r.pick(&[30u64, 70, 100]);
        let b = handmade(&mut r, &packed, gb, ctx_pct);
        let what = format!("round {round}, group_blocks {gb}");
        let a = Archive::parse(&b).expect("hand-made archive parses");
        assert_eq!(
            aceapex::decode::decompress(&a).unwrap(),
            data,
            "hand-made ({what})"
        );
        compare_archive(&b, &what);
        let (parsed, ok) = never_wrong(&b, &data, &mut r, &what);
        assert!(parsed && ok, "{what}");
        // damage
        let p = parts(&b);
        let recs = records(&p.tables);
        for it in 0..env("ATTACK_DAMAGE", 20) as usize {
            let mut t = p.tables.clone();
            let mut entries = p.entries.clone();
            let mut d = p.data.clone();
            for _ in 0..r.range(1, 3) {
                match r.below(6) {
                    0 | 1 if !d.is_empty() => {
                        let i = r.below(d.len() as u64) as usize;
                        d[i] ^= 1 << r.below(8);
                    }
                    2 => {
                        let ctxr: Vec<&Rec> = recs.iter().filter(|x| x.kind == 2).collect();
                        if !ctxr.is_empty() {
                            let rec = ctxr[r.below(ctxr.len() as u64) as usize];
                            t[rec.start + 1] = r.below(8) as u8;
                        }
                    }
                    3 => {
                        let bi = r.below(entries.len() as u64) as usize;
                        let k = r.below(STREAM_COUNT as u64) as usize;
                        if entries[bi].lanes[k] != 0 {
                            entries[bi].lanes[k] = r.range(1, 32) as u8;
                        }
                    }
                    4 => {
                        let bi = r.below(entries.len() as u64) as usize;
                        let k = r.below(STREAM_COUNT as u64) as usize;
                        if entries[bi].lanes[k] != 0 {
                            let dl = &mut entries[bi].decoded_len[k];
                            *dl = dl.saturating_add_signed(r.range(0, 6) as i32 - 3);
                        }
                    }
                    _ => {
                        // a byte of a pair body (frequencies): must still sum to 4096 to parse
                        if !t.is_empty() {
                            let i = r.below(t.len() as u64) as usize;
                            t[i] = t[i].wrapping_add(1);
                        }
                    }
                }
            }
            let v = (get_u32(&b, H_VERSION) & 0xFFFF) as u16;
            let bad = assemble(&p, v, b[H_BASE], &entries, &t, &d);
            let (_, ok) = never_wrong(&bad, &data, &mut r, &format!("{what}, damage {it}"));
            stats[ok as usize] += 1;
        }
    }
    eprintln!("damaged: {} failed, {} decoded", stats[0], stats[1]);
}

/// Resealed random byte mutations of encoder archives with context pairs, aimed at the table section
/// (kind bytes, context bits, bodies) and the block table: no panic, never wrong.
#[test]
fn encoder_mutation_fuzz() {
    let mut r = Rng(0xC5_4000 + env("ATTACK_SEED", 0));
    let iters = env("ATTACK_FUZZ_ITERS", 300) as usize;
    let mut archives = Vec::new();
    for round in 0..4 {
        let (data, packed, _) = encoder_archive(&mut r, round);
        let p = parts(&packed);
        let recs = records(&p.tables);
        archives.push((data, packed, recs));
    }
    let mut stats = [0usize; 3];
    for it in 0..iters {
        let (data, packed, recs) = &archives[it % archives.len()];
        let a = Archive::parse(packed).unwrap();
        let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
        let tables_end = bt_end + a.header().table_bytes as usize;
        let mut b = packed.clone();
        for _ in 0..r.range(1, 4) {
            let rec = &recs[r.below(recs.len() as u64) as usize];
            let at = match r.below(8) {
                0 => bt_end + rec.start,
                1 | 2 if rec.kind == 2 => bt_end + rec.start + 1,
                3 if rec.kind == 2 => {
                    bt_end
                        + r.range(rec.bodies[1].start as u64, rec.bodies[1].end as u64 - 1) as usize
                }
                4 => r.range(HEADER_SIZE as u64, bt_end as u64 - 1) as usize,
                5 => r.range(tables_end as u64, b.len() as u64 - 1) as usize,
                6 => H_VERSION,
                _ => r.range(bt_end as u64, tables_end as u64 - 1) as usize,
            };
            match r.below(5) {
                0 => b[at] ^= 1 << r.below(8),
                1 => b[at] = r.next() as u8,
                2 => b[at] = b[at].wrapping_add(1),
                3 => b[at] = b[at].wrapping_sub(1),
                _ => b[at] = r.below(9) as u8,
            }
        }
        crate::common::attack::fuzz_round(&mut b, it, "context_pairs", &mut stats, |b, what| {
            never_wrong(b, data, &mut Rng(it as u64), what).1
        });
    }
    eprintln!(
        "fuzz: {} failed cleanly, {} decoded, {} panics",
        stats[0], stats[1], stats[2]
    );
    assert_eq!(stats[2], 0, "panics");
}

/// Real soft-masked genomes and text (corpora/): the encoder's
/// archives at levels 5 and 9 decode right through every path, and survive relabelled
/// context bits and damaged slices (never wrong, fast == reference).
#[test]
#[ignore = "needs the corpora (ATTACK_CORPORA, default corpora/): cargo test --release --test corrupt -- --ignored real_"]
fn real_corpora() {
    let dir = std::env::var("ATTACK_CORPORA").unwrap_or_else(|_| "corpora".into());
    let kib = env("ATTACK_KIB", 256) as usize;
    let mut r = Rng(0xC5_5000 + env("ATTACK_SEED", 0));
    let files = [
        "dna/dm3_chr2R.fa",
        "dna/TAIR10_chr1.fna",
        "text/moby_dick.txt",
        "fastq/mouse_RNAseq_top100k_1.fq",
    ];
    for (i, f) in files.iter().enumerate() {
        let Ok(mut data) = std::fs::read(format!("{dir}/{f}")) else {
            panic!("{dir}/{f} not found: this test reads the corpora");
        };
        // a stretch from inside the file (the soft-masked runs are not at the start)
        let start = if data.len() > kib << 10 {
            r.below((data.len() - (kib << 10)) as u64) as usize
        } else {
            0
        };
        data = data[start..(start + (kib << 10)).min(data.len())].to_vec();
        for level in [5u32, 9] {
            let opts = Settings {
                block_size: [16384u32, 4096, 65536][(i + level as usize) % 3],
                level,
                min_match: if level == 9 { 4 } else { 6 },
                // no packed literal tables: these tests are about context pairs
                packed_literals: false,
                ..Default::default()
            };
            let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
            let what = format!("{f} at {start}, level {level}");
            let a = Archive::parse(&packed).unwrap();
            assert_eq!(aceapex::decode::decompress(&a).unwrap(), data, "{what}");
            compare_archive(&packed, &what);
            let p = parts(&packed);
            let recs = records(&p.tables);
            let ctx: Vec<&Rec> = recs.iter().filter(|x| x.kind == 2).collect();
            eprintln!(
                "{what}: version {}, {} of {} records are pairs",
                a.header().version,
                ctx.len(),
                recs.len()
            );
            let base = packed[H_BASE];
            for rec in ctx.iter().take(10) {
                for nb in 0..8u8 {
                    let mut t = p.tables.clone();
                    t[rec.start + 1] = nb;
                    never_wrong(
                        &with_tables(&p, 1, base, &t),
                        &data,
                        &mut r,
                        &format!("{what}: bit {nb}"),
                    );
                }
            }
            for it in 0..20 {
                let mut d = p.data.clone();
                let i = r.below(d.len() as u64) as usize;
                d[i] ^= 1 << r.below(8);
                let bad = assemble(&p, a.header().version, base, &p.entries, &p.tables, &d);
                never_wrong(&bad, &data, &mut r, &format!("{what}: flip {it}"));
            }
        }
    }
}

/// A hostile archive of `groups` one-block groups (4 KiB of zeros each), every stream a
/// 1-lane rANS slice under a context pair: memory per group must stay bounded.
fn many_groups(groups: usize) -> (Vec<u8>, Vec<u8>) {
    let data = vec![0u8; groups * 4096];
    let opts = Settings {
        block_size: 4096,
        level: 1,
        // no packed literal tables: these tests are about context pairs
        packed_literals: false,
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    let mut r = Rng(7);
    (data, handmade(&mut r, &packed, 1, 100))
}

/// Many groups of pairs parse and decode (the reader's memory per group is checked in
/// `container::parse_memory_is_proportionate_to_the_file`).
#[test]
fn many_groups_of_pairs() {
    let (data, b) = many_groups(env("ATTACK_GROUPS", 200) as usize);
    let a = Archive::parse(&b).unwrap();
    assert_eq!(a.header().version, 1);
    assert!(a
        .tables()
        .iter()
        .flatten()
        .flatten()
        .all(|t| t.has_context()));
    assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
}

/// Out of contract: a `SliceTables` with a context bit above 7 (no archive has one:
/// `Archive::parse` rejects the record). The fast decoder must still agree with the
/// reference: every decoder reads the bit modulo 8 (the AVX2 context
/// rows, the scalar rows and the reference alike, and no shift overflows in a debug build).
#[test]
fn direct_ctx_bit_out_of_range() {
    let mut r = Rng(0xC5_7000);
    let mut bad = Vec::new();
    for bit in [8u32, 9, 11, 12, 13, 31, 32, 200] {
        for lanes in [1usize, 4, 8, 16, 32] {
            let data = soft_masked(&mut r, 5000);
            let ft = tables_for(&mut r, &data, lanes, bit % 8, true);
            let dt = decode_tables(&ft);
            let enc = encode(&data, lanes, &ft, bit % 8);
            let res = catch_unwind(AssertUnwindSafe(|| {
                let _ = check_slice(
                    &mut Rng(1),
                    &enc,
                    lanes,
                    slice_tables(&dt, bit),
                    data.len(),
                    &|| format!("bit {bit}, lanes {lanes}"),
                );
            }));
            if res.is_err() {
                bad.push((bit, lanes));
            }
        }
    }
    assert!(bad.is_empty(), "disagree or panic at (bit, lanes): {bad:?}");
}
