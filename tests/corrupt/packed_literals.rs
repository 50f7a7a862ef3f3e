//! Packed literals (kind-3 table records, FORMAT.md §5.2, §5.3,
//! §5.6): the reference rANS decoder with its expansion (`aceapex::device::rans::
//! decode_slice`, `expand_in_place`) against the fast CPU decoder (host/cpu/rans.rs:
//! `decode_slice`, `SliceDecoder` stepwise, `fast_rows_together`, `finish` with its
//! fixed-width expansion) on valid, damaged and hostile packed slices (every alphabet size
//! 1..=16, so widths 4, 3 and 2, every lane count 1..=32, decoded lengths that are not a
//! multiple of the width, nonzero padding digits, which decoders must ignore); the table
//! reader on kind-3 records in every stream position, alphabet sizes
//! 0..=255, unsorted and repeated alphabets, symbols at and beyond `a^w`; whole archives:
//! encoder archives relabelled (alphabets, kinds, versions, decoded lengths, lanes),
//! hand-made archives (chosen alphabets with unused letters, any lane counts, raw literal
//! slices in packed groups, nonzero padding digits, small groups), resealed random mutation,
//! real DNA (corpora/dna) at levels 1, 5 and 9; and the encoder on random small-alphabet
//! inputs (1-16 letters, and 17+ letters in a few blocks) at every level. Nothing may panic,
//! the decoders agree on every slice and block (status, and bytes when Ok), and no decoder
//! returns Ok with bytes other than the original.
//!
//! Env (counts scale the work; the defaults run in well under a minute in release):
//! ATTACK_SEED, ATTACK_ITERS (direct slices), ATTACK_ROUNDS (slices decoded together,
//! hand-made archive rounds), ATTACK_ENC_ROUNDS (encoder archives), ATTACK_ENC_SCALE (input
//! size multiplier of the encoder round trips), ATTACK_FUZZ_ITERS (resealed mutation),
//! ATTACK_DAMAGE (damaged variants per archive), ATTACK_CORPORA (the corpora folder, default
//! `corpora/`, for the ignored real-data test), ATTACK_KIB (KiB taken from each
//! DNA file).

use crate::common::attack::{
    check_slice, combos, compare_archive, env, gen_lits, never_wrong_grouped, random_alphabet,
    table_below, width,
};
use crate::common::parts::{assemble, body_len, parts, with_tables, Parts};
use crate::common::{get_u32, put_u32, Rng};
use aceapex::device::format::*;
use aceapex::device::rans::{self as reference, SliceTables};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{
    encode_context_slice, encode_slice_with, expansion_table, pack_literals, EncodeTable, FreqTable,
};
use aceapex::format::Archive;
use aceapex::{DecodeError, FormatError, Settings};
use std::panic::{catch_unwind, AssertUnwindSafe};

const HEADER_SIZE: usize = 96;
const H_VERSION: usize = 4;
const H_GROUP_BLOCKS: usize = 24;
const H_GROUP_COUNT: usize = 28;
const H_BASE: usize = 85;

// ---------------------------------------------------------------------------------------
// FORMAT.md §5.6, written out from the text (not from the crate)
// ---------------------------------------------------------------------------------------

/// Packs `lits` (every one in `alphabet`) per §5.6: symbol `j` is `sum c_t a^t` over the
/// literals `w j + t`; the digits past the last literal come from `pad` (the writer's 0, or
/// anything below `a`: decoders ignore them).
fn pack_spec(lits: &[u8], alphabet: &[u8], pad: &mut dyn FnMut() -> u8) -> Vec<u8> {
    let a = alphabet.len();
    let w = width(a);
    let code = |x: u8| {
        alphabet
            .iter()
            .position(|&y| y == x)
            .expect("letter in alphabet")
    };
    (0..lits.len().div_ceil(w))
        .map(|j| {
            let mut s = 0usize;
            for t in (0..w).rev() {
                let c = match lits.get(w * j + t) {
                    Some(&x) => code(x),
                    None => pad() as usize % a,
                };
                s = s * a + c;
            }
            assert!(s < combos(a));
            s as u8
        })
        .collect()
}

/// A random valid table over all 256 symbols or a few (hostile: unrelated to any data).
fn random_table(r: &mut Rng) -> FreqTable {
    let mut h = [0u64; 256];
    match r.below(3) {
        0 => h[r.below(256) as usize] = 1,
        1 => {
            for _ in 0..r.range(1, 8) {
                h[r.below(256) as usize] += r.range(1, 1000);
            }
        }
        _ => {
            for x in h.iter_mut() {
                *x = r.range(1, 50);
            }
        }
    }
    FreqTable::from_histogram(&h).unwrap()
}

fn encode(symbols: &[u8], lanes: usize, t: &FreqTable) -> Vec<u8> {
    let et = EncodeTable::new(t, &t.cumulative());
    let mut out = Vec::new();
    encode_slice_with(symbols, lanes, &et, &mut out);
    out
}

fn packed_tables<'a>(t: &'a DecodeTable, exp: &'a DecodeTable) -> SliceTables<'a> {
    SliceTables {
        pack: Some(exp),
        ..SliceTables::single(t)
    }
}

// ---------------------------------------------------------------------------------------
// slices: fast vs reference
// ---------------------------------------------------------------------------------------

/// The crate's packing helpers against the text of §5.6: `pack_literals` (zero padding) and
/// `expansion_table` (slot `s`: its `w` literals, the first in the low byte; the width at
/// `PACK_WIDTH_SLOT`; nothing at or beyond `a^w`).
#[test]
fn pack_helpers_follow_the_text() {
    let mut r = Rng(0xC6_0000 + env("ATTACK_SEED", 0));
    for a in 1..=16usize {
        for _ in 0..4 {
            let alphabet = random_alphabet(&mut r, a);
            let w = width(a);
            assert_eq!(pack_width(a) as usize, w, "pack_width({a})");
            let exp = expansion_table(&alphabet);
            assert_eq!(exp.slots[PACK_WIDTH_SLOT] as usize, w, "a {a}");
            assert_eq!(reference::pack_width_of(&exp), w);
            for (s, &got) in exp.slots[..256].iter().enumerate() {
                let want = if s < combos(a) {
                    let mut rest = s;
                    let mut v = 0u32;
                    for t in 0..w {
                        v |= (alphabet[rest % a] as u32) << (8 * t);
                        rest /= a;
                    }
                    v
                } else {
                    0
                };
                assert_eq!(got, want, "a {a}, symbol {s}");
            }
            for n in [0usize, 1, w - 1, w, w + 1, 3 * w + 1, 1000] {
                let lits = gen_lits(&mut r, &alphabet, n);
                let mut got = Vec::new();
                pack_literals(&lits, &alphabet, &mut got);
                assert_eq!(got, pack_spec(&lits, &alphabet, &mut || 0), "a {a}, n {n}");
                // and back: expansion of the symbols (with any padding) gives the literals
                let mut buf = pack_spec(&lits, &alphabet, &mut || r.next() as u8);
                buf.resize(n, 0x77);
                reference::expand_in_place(&mut buf, &exp);
                assert_eq!(buf, lits, "expand_in_place, a {a}, n {n}");
            }
        }
    }
}

/// One packed slice: alphabet size `a`, `lanes` lanes, `n` literals, padding digits zero or
/// random; returns (literals, alphabet, table, slice).
fn packed_case(
    r: &mut Rng,
    a: usize,
    lanes: usize,
    n: usize,
    pad_nonzero: bool,
) -> (Vec<u8>, Vec<u8>, FreqTable, Vec<u8>) {
    let alphabet = random_alphabet(r, a);
    let lits = gen_lits(r, &alphabet, n);
    let mut pr = Rng(r.next());
    let syms = pack_spec(&lits, &alphabet, &mut || {
        if pad_nonzero {
            pr.next() as u8
        } else {
            0
        }
    });
    let mut h = [0u64; 256];
    aceapex::encode::entropy::count(&mut h, &syms);
    let t = table_below(r, h, combos(a));
    let enc = encode(&syms, lanes, &t);
    (lits, alphabet, t, enc)
}

/// Every alphabet size 1..=16 (widths 4, 3, 2) with every lane count 1..=32, lengths around
/// multiples of the width and of the lane count, padding digits zero and nonzero: every
/// decoder gives the literals (FORMAT.md §5.6: decoders ignore the padding digits).
#[test]
fn every_alphabet_and_lane_count() {
    let mut r = Rng(0xC6_0001 + env("ATTACK_SEED", 0));
    let mut count = 0;
    for a in 1..=16usize {
        let w = width(a);
        for lanes in 1..=32usize {
            let (x, y) = (r.below(w as u64) as usize, r.below(5000) as usize);
            for n in [
                0usize,
                1,
                w - 1,
                w + 1,
                w * lanes - 1,
                w * lanes + 1,
                w * lanes * 7 + x,
                y,
                3001,
            ] {
                let pad = r.below(2) == 0 || n % w != 0;
                let (lits, alphabet, t, enc) = packed_case(&mut r, a, lanes, n, pad);
                let dt = t.decode_table();
                let exp = expansion_table(&alphabet);
                let w_ = || format!("a {a}, lanes {lanes}, n {n}, pad {pad}");
                let (st, got) = check_slice(&mut r, &enc, lanes, packed_tables(&dt, &exp), n, &w_);
                assert_eq!(st, Ok(()), "{}", w_());
                assert!(got == lits, "wrong literals: {}", w_());
                count += 1;
            }
        }
    }
    eprintln!("{count} valid packed slices");
}

/// One random packed slice, valid, then damaged every way: lane counts, decoded lengths
/// (within the last symbol and beyond), truncation, flips, appended words, the slice read
/// unpacked, another alphabet of the same or another size, hostile tables and (out of
/// contract: the host builds them) hostile expansion tables and a context pair with packing.
fn direct_case(r: &mut Rng, it: usize, stats: &mut [usize; 2]) {
    let a = r.range(1, 16) as usize;
    let w = width(a);
    let n = match r.below(4) {
        0 => r.below(40) as usize,
        1 => r.below(700) as usize,
        _ => r.below(40000) as usize,
    };
    let lanes = if r.below(2) == 0 {
        r.pick(&[1usize, 2, 4, 8, 16, 24, 32])
    } else {
        r.range(1, 32) as usize
    };
    let pad = r.below(2) == 0;
    let (lits, alphabet, t, enc) = packed_case(r, a, lanes, n, pad);
    let dt = t.decode_table();
    let exp = expansion_table(&alphabet);
    let w_ = || format!("it {it}: valid, a {a}, n {n}, lanes {lanes}, pad {pad}");
    let (st, got) = check_slice(r, &enc, lanes, packed_tables(&dt, &exp), n, &w_);
    assert_eq!(st, Ok(()), "{}", w_());
    assert!(got == lits, "valid slice decodes wrong: {}", w_());

    for v in 0..18 {
        let mut s = enc.clone();
        let mut l = lanes;
        let mut len = n;
        let mut tabs = vec![*dt];
        let mut ex = Some(*exp);
        match v {
            0 => l = r.range(0, 33) as usize,
            1 => len = n + r.range(1, w as u64) as usize,
            2 => len = n.saturating_sub(r.range(1, w as u64) as usize),
            3 => len = n + r.range(1, 200) as usize,
            4 if !s.is_empty() => s.truncate(r.below(s.len() as u64) as usize),
            5 if s.len() >= 2 => s.truncate(s.len() - 2),
            6 if !s.is_empty() => {
                let i = r.below((4 * lanes).min(s.len()) as u64) as usize;
                s[i] ^= 1 << r.below(8);
            }
            7 if !s.is_empty() => {
                for _ in 0..r.range(1, 4) {
                    let i = r.below(s.len() as u64) as usize;
                    s[i] ^= 1 << r.below(8);
                }
            }
            8 => s.extend_from_slice(&(r.next() as u16).to_le_bytes()),
            // read unpacked: the symbols as bytes, n symbols instead of ceil(n / w)
            9 => ex = None,
            // another alphabet of the same size: same width, other letters
            10 => ex = Some(*expansion_table(&random_alphabet(r, a))),
            // another size: maybe another width
            11 => {
                let k = r.range(1, 16) as usize;
                ex = Some(*expansion_table(&random_alphabet(r, k)));
            }
            12 => tabs = vec![*random_table(r).decode_table()],
            13 => {
                l = r.range(1, 32) as usize;
                len = r.below(2 * n as u64 + 40) as usize;
            }
            // out of contract from here on (an archive cannot make these): hostile width slot
            14 => {
                let mut e = *exp;
                e.slots[PACK_WIDTH_SLOT] = r.pick(&[0u32, 1, 2, 3, 4, 5, 8, 255, u32::MAX]);
                ex = Some(e);
            }
            // garbage expansion slots
            15 => {
                let mut e = *exp;
                for x in e.slots[..256].iter_mut() {
                    *x = r.next() as u32;
                }
                ex = Some(e);
            }
            // a context pair and packing at once
            16 => tabs = vec![*dt, *random_table(r).decode_table()],
            17 => {
                s.clear();
                s.extend((0..r.below(400)).map(|_| r.next() as u8));
            }
            _ => continue,
        }
        let st = SliceTables {
            tables: &tabs,
            ctx_bit: r.below(8) as u32,
            pack: ex.as_ref(),
        };
        let w_ = || {
            format!(
                "it {it}: variant {v}, a {a}, n {n}->{len}, lanes {lanes}->{l}, slice {}",
                s.len()
            )
        };
        let (res, got) = check_slice(r, &s, l, st, len, &w_);
        stats[res.is_ok() as usize] += 1;
        // a length within the last symbol: the same symbols, so the literals (a prefix, or
        // the padding digits' letters after them)
        if v == 2 && res.is_ok() {
            assert!(got[..] == lits[..len], "{}", w_());
        }
        if v == 1 && n.div_ceil(w) == len.div_ceil(w) {
            assert_eq!(res, Ok(()), "{}", w_());
            assert!(got[..n] == lits[..], "{}", w_());
        }
    }
}

#[test]
fn direct_slices() {
    let mut r = Rng(0xC6_0002 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 2];
    for it in 0..env("ATTACK_ITERS", 2500) as usize {
        direct_case(&mut r, it, &mut stats);
    }
    eprintln!("damaged slices: {} failed, {} decoded", stats[0], stats[1]);
}

/// One slice of a batch decoded together.
struct Case {
    enc: Vec<u8>,
    lanes: usize,
    tables: Vec<DecodeTable>,
    exp: Option<DecodeTable>,
    len: usize,
}

/// 1-40 slices, packed (any alphabet), plain and context-coded, lane counts mostly those
/// `fast_rows_together` groups, some damaged, decoded with `fast_rows_together` (some first
/// advanced alone a few rows), then each to its end: status and bytes of every slice as the
/// reference's.
fn together_case(r: &mut Rng, round: usize) {
    let count = r.range(1, 40) as usize;
    let lane_set = r.pick(&[
        &[1usize, 2, 4, 8, 16, 24][..],
        &[4, 4, 4, 8, 8][..],
        &[1, 1, 2, 2][..],
        &[8, 16, 24, 32][..],
        &[1, 2, 3, 4, 5, 8, 16, 24, 31, 32][..],
    ]);
    let pack_pct = r.pick(&[50u64, 90, 100]);
    let mut cases = Vec::new();
    for _ in 0..count {
        let max = r.pick(&[64u64, 600, 4000, 20000]);
        let n = r.below(max) as usize;
        let lanes = r.pick(lane_set);
        let mut c = if r.below(100) < pack_pct {
            let a = r.range(1, 16) as usize;
            let pad = r.below(2) == 0;
            let (_, alphabet, t, enc) = packed_case(r, a, lanes, n, pad);
            Case {
                enc,
                lanes,
                tables: vec![*t.decode_table()],
                exp: Some(*expansion_table(&alphabet)),
                len: n,
            }
        } else {
            let k = r.range(1, 40) as usize;
            let alphabet = random_alphabet(r, k);
            let data = gen_lits(r, &alphabet, n);
            let mut h = [0u64; 256];
            aceapex::encode::entropy::count(&mut h, &data);
            let t = table_below(r, h, 256);
            if r.below(3) == 0 {
                // a context pair (bit 0 of the previous symbol), both tables holding every symbol
                let t1 = table_below(r, h, 256);
                let et = [
                    EncodeTable::new(&t, &t.cumulative()),
                    EncodeTable::new(&t1, &t1.cumulative()),
                ];
                let mut enc = Vec::new();
                encode_context_slice(&data, lanes, [&et[0], &et[1]], 0, &mut enc);
                Case {
                    enc,
                    lanes,
                    tables: vec![*t.decode_table(), *t1.decode_table()],
                    exp: None,
                    len: n,
                }
            } else {
                Case {
                    enc: encode(&data, lanes, &t),
                    lanes,
                    tables: vec![*t.decode_table()],
                    exp: None,
                    len: n,
                }
            }
        };
        match r.below(12) {
            0 if !c.enc.is_empty() => {
                let i = r.below(c.enc.len() as u64) as usize;
                c.enc[i] ^= 1 << r.below(8);
            }
            1 if c.enc.len() > 2 => {
                let l = c.enc.len();
                c.enc.truncate(l - 2);
            }
            2 => c.len += r.range(1, 40) as usize,
            3 => c.len = c.len.saturating_sub(r.range(1, 5) as usize),
            4 => c.lanes = r.pick(lane_set),
            5 if c.exp.is_some() => c.exp = None,
            6 if c.exp.is_some() => {
                let k = r.range(1, 16) as usize;
                c.exp = Some(*expansion_table(&random_alphabet(r, k)))
            }
            _ => {}
        }
        cases.push(c);
    }
    fn st_of(c: &Case) -> SliceTables<'_> {
        SliceTables {
            tables: &c.tables,
            ctx_bit: 0,
            pack: c.exp.as_ref(),
        }
    }
    let want: Vec<(Result<(), Status>, Vec<u8>)> = cases
        .iter()
        .map(|c| {
            let mut o = vec![0u8; c.len];
            let st = reference::decode_slice(&c.enc, c.lanes, st_of(c), &mut o);
            (st, o)
        })
        .collect();
    let slices: Vec<_> = (cases.iter())
        .map(|c| (&c.enc[..], c.lanes, st_of(c), c.len))
        .collect();
    let (got, outs): (Vec<_>, Vec<_>) = crate::common::attack::decode_together(r, &slices)
        .into_iter()
        .map(|(st, o)| (Some(st), o))
        .unzip();
    for (i, (st, o)) in want.iter().enumerate() {
        let c = &cases[i];
        let what = format!(
            "round {round} slice {i}/{count}: lanes {}, tables {}, packed {}, len {}",
            c.lanes,
            c.tables.len(),
            c.exp.is_some(),
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
    let mut r = Rng(0xC6_0003 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ROUNDS", 150) as usize {
        together_case(&mut r, round);
    }
}

// ---------------------------------------------------------------------------------------
// archives: parts, records, assembly
// ---------------------------------------------------------------------------------------

/// One table record of a table section, located (FORMAT.md §5.2).
#[derive(Clone, Debug)]
struct Rec {
    start: usize,
    end: usize,
    kind: u8,
    /// Stream of the record (position in its group).
    stream: usize,
    /// kind 3: the alphabet bytes.
    alpha: std::ops::Range<usize>,
    /// kind 1 and 3: the body; kind 2: both.
    bodies: Vec<std::ops::Range<usize>>,
}

/// The records of a valid table section.
fn records(s: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut p = 0;
    let mut i = 0;
    while p < s.len() {
        let start = p;
        let kind = s[p];
        p += 1;
        let mut bodies = Vec::new();
        let mut alpha = 0..0;
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
            3 => {
                let a = s[p] as usize;
                alpha = p + 1..p + 1 + a;
                p += 1 + a;
                let l = body_len(s, p).unwrap();
                bodies.push(p..p + l);
                p += l;
            }
            _ => panic!("bad kind {kind} at {p}"),
        }
        out.push(Rec {
            start,
            end: p,
            kind,
            stream: i % STREAM_COUNT,
            alpha,
            bodies,
        });
        i += 1;
    }
    out
}

fn version_of(b: &[u8]) -> u16 {
    (get_u32(b, H_VERSION) & 0xFFFF) as u16
}

/// Same archive, same version, other entries / tables / data.
fn rebuilt(p: &Parts, entries: &[BlockEntry], tables: &[u8], data: &[u8]) -> Vec<u8> {
    let v = version_of(&p.header);
    let b85 = p.header[H_BASE];
    assemble(p, v, b85, entries, tables, data)
}

/// The parse error's table message, or a panic naming what parsed.
fn table_err(b: &[u8], what: &str) -> &'static str {
    match Archive::parse(b) {
        Err(FormatError::GroupTable { what: w, .. }) => w,
        Err(e) => panic!("{what}: expected a table error, got {e:?}"),
        Ok(_) => panic!("{what}: parsed"),
    }
}

/// Each block's literal slice, decoded with the reference (all streams: `decode_streams`).
fn block_streams(a: &Archive<'_>) -> Vec<[Vec<u8>; STREAM_COUNT]> {
    (0..a.block_count())
        .map(|b| {
            let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
            aceapex::decode::decode_streams(a, b, &mut bufs).unwrap();
            bufs
        })
        .collect()
}

/// Block `b`'s streams, decoded with the reference.
fn block_streams_one(a: &Archive<'_>, b: usize) -> [Vec<u8>; STREAM_COUNT] {
    let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
    aceapex::decode::decode_streams(a, b, &mut bufs).unwrap();
    bufs
}

// ---------------------------------------------------------------------------------------
// data and encoder archives
// ---------------------------------------------------------------------------------------

/// DNA-like data over `letters` (repeats copied now and then, so the parser finds matches),
/// optionally soft-masked (the letters' lower case too) and with newlines.
fn small_alphabet_data(r: &mut Rng, n: usize, letters: &[u8]) -> Vec<u8> {
    let mut d: Vec<u8> = Vec::with_capacity(n);
    let skew = r.below(2) == 0;
    while d.len() < n {
        if d.len() > 500 && r.below(8) == 0 {
            let back = r.range(1, d.len().min(60_000) as u64) as usize;
            let len = r.range(4, 300) as usize;
            let from = d.len() - back;
            for i in 0..len {
                let c = d[from + i % back];
                d.push(c);
            }
        } else {
            for _ in 0..r.range(1, 200) {
                let k = letters.len() as u64;
                let i = if skew {
                    r.below(k).min(r.below(k))
                } else {
                    r.below(k)
                };
                d.push(letters[i as usize]);
            }
        }
    }
    d.truncate(n);
    d
}

/// Data whose literals use `k` letters: distinct bytes drawn at random (or DNA letters).
fn letters_for(r: &mut Rng, k: usize) -> Vec<u8> {
    random_alphabet(r, k)
}

/// An encoder archive with packed literals: DNA-like data of 1-16 letters, soft-masked
/// DNA, or DNA with a FASTA header; random level, block size, context tables, window.
fn encoder_archive(r: &mut Rng, round: usize) -> (Vec<u8>, Vec<u8>, Settings) {
    let bs = [4096u32, 16384, 65536, 8192][round % 4];
    let n = r.range(20_000, 200_000) as usize;
    let data = match round % 3 {
        0 => {
            let k = r.range(1, 16) as usize;
            let l = letters_for(r, k);
            small_alphabet_data(r, n, &l)
        }
        1 => small_alphabet_data(r, n, b"ACGTacgt\nN"),
        _ => {
            let mut d = b">chr1 some header line: 123,456 bp [test] {v6}\n".to_vec();
            d.extend(small_alphabet_data(r, n, b"ACGT\n"));
            d
        }
    };
    let level = [1u32, 5, 9, 6, 8, 3][round % 6];
    let opts = Settings {
        block_size: bs,
        window: if round % 5 == 4 { Some(bs * 4) } else { None },
        level,
        min_match: [6u32, 4, 5][round % 3],
        context_tables: round.is_multiple_of(2),
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    (data, packed, opts)
}

/// Rebuilds a table section with record `i` replaced by `bytes`.
fn replace_record(t: &[u8], rec: &Rec, bytes: &[u8]) -> Vec<u8> {
    let mut out = t[..rec.start].to_vec();
    out.extend_from_slice(bytes);
    out.extend_from_slice(&t[rec.end..]);
    out
}

/// A kind-3 record: `a` (the size byte), the alphabet bytes, a table body.
fn kind3(a: u8, alphabet: &[u8], t: &FreqTable) -> Vec<u8> {
    let mut out = vec![3u8, a];
    out.extend_from_slice(alphabet);
    t.serialize_body(&mut out);
    out
}

fn freq_of(body: &[u8]) -> FreqTable {
    // a valid body: read it back as a kind-1 record
    let mut rec = vec![1u8];
    rec.extend_from_slice(body);
    let mut pos = 0;
    FreqTable::deserialize(&rec, &mut pos).unwrap().unwrap()
}

// ---------------------------------------------------------------------------------------
// hand-made archives
// ---------------------------------------------------------------------------------------

/// Options of a hand-made archive with packed literals.
#[derive(Clone, Copy, Debug)]
struct Hand {
    group_blocks: u32,
    /// % of groups whose literals get a kind-3 record (where the letters allow).
    pack_pct: u64,
    /// % of blocks of a packed group stored raw.
    raw_pct: u64,
    /// % of packed slices with random (nonzero) padding digits.
    pad_pct: u64,
    /// % of other streams' records that are context pairs.
    ctx_pct: u64,
    /// Extra (unused) letters in alphabets.
    extra: bool,
}

/// `n` bytes of ACGT compressed in 4 KiB blocks at `level`, then rebuilt by [`handmade`] with
/// one group per block, every group packed, `pad_pct` % of the packed slices with nonzero
/// padding digits and, with `extra`, unused letters in the alphabets. Returns the data and
/// the archive.
fn packed_groups_archive(
    r: &mut Rng,
    n: usize,
    level: u32,
    pad_pct: u64,
    extra: bool,
) -> (Vec<u8>, Vec<u8>) {
    let data = small_alphabet_data(r, n, b"ACGT");
    let opts = Settings {
        block_size: 4096,
        level,
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    let hand = Hand {
        group_blocks: 1,
        pack_pct: 100,
        raw_pct: 0,
        pad_pct,
        ctx_pct: 0,
        extra,
    };
    let b = handmade(r, &packed, hand);
    (data, b)
}

/// A hand-made archive from the LZ streams of `packed` (decoded by the reference): each
/// group's literals a kind-3 record where its packed blocks' letters fit 16 (alphabet: those
/// letters and, with `extra`, unused ones up to a random size), the other streams no table,
/// one or a pair; each rANS slice any lane count 1..=32; packed slices with padding digits
/// chosen by `pad_pct`; some literal slices raw (match base as the source).
fn handmade(r: &mut Rng, packed: &[u8], o: Hand) -> Vec<u8> {
    let a = Archive::parse(packed).unwrap();
    let p = parts(packed);
    let nb = a.block_count();
    let streams = block_streams(&a);
    let gb = o.group_blocks as usize;
    let mut entries = p.entries.clone();
    let mut tables = Vec::new();
    let mut encoded: Vec<[Option<Vec<u8>>; STREAM_COUNT]> = vec![Default::default(); nb];
    let lane = |r: &mut Rng| {
        if r.below(2) == 0 {
            r.range(1, 32) as usize
        } else {
            r.pick(&[1usize, 2, 4, 8, 16, 24, 32])
        }
    };
    for g in 0..nb.div_ceil(gb) {
        let blocks = g * gb..((g + 1) * gb).min(nb);
        for k in 0..STREAM_COUNT {
            if k == STREAM_LITERALS && r.below(100) < o.pack_pct {
                // raw blocks chosen first; the alphabet from the others' letters
                let raw: Vec<bool> = blocks.clone().map(|_| r.below(100) < o.raw_pct).collect();
                let mut seen = [false; 256];
                for (b, &rw) in blocks.clone().zip(&raw) {
                    if !rw {
                        for &x in &streams[b][k] {
                            seen[x as usize] = true;
                        }
                    }
                }
                let mut al: Vec<u8> = (0..=255u8).filter(|&x| seen[x as usize]).collect();
                if al.len() <= 16 {
                    let want = if o.extra {
                        r.range(al.len().max(1) as u64, 16) as usize
                    } else {
                        al.len().max(1)
                    };
                    while al.len() < want {
                        let x = r.next() as u8;
                        if !al.contains(&x) {
                            al.push(x);
                        }
                    }
                    al.sort_unstable();
                    let syms: Vec<Vec<u8>> = blocks
                        .clone()
                        .map(|b| {
                            let pad = r.below(100) < o.pad_pct;
                            let mut pr = Rng(r.next());
                            let lits = &streams[b][k];
                            let mut f = || if pad { pr.next() as u8 } else { 0 };
                            if raw[b - blocks.start] {
                                Vec::new()
                            } else {
                                pack_spec(lits, &al, &mut f)
                            }
                        })
                        .collect();
                    let mut h = [0u64; 256];
                    for s in &syms {
                        aceapex::encode::entropy::count(&mut h, s);
                    }
                    let t = table_below(r, h, combos(al.len()));
                    tables.extend_from_slice(&kind3(al.len() as u8, &al, &t));
                    for (j, b) in blocks.clone().enumerate() {
                        if raw[j] || (streams[b][k].is_empty() && r.below(2) == 0) {
                            encoded[b][k] = None;
                            entries[b].lanes[k] = LANES_RAW;
                        } else {
                            let l = lane(r);
                            encoded[b][k] = Some(encode(&syms[j], l, &t));
                            entries[b].lanes[k] = l as u8;
                        }
                    }
                    continue;
                }
            }
            let kind = if k != STREAM_LITERALS && r.below(100) < o.ctx_pct {
                2
            } else {
                r.pick(&[0u8, 1, 1, 1])
            };
            let bit = r.below(8) as u32;
            let lanes: Vec<usize> = blocks.clone().map(|_| lane(r)).collect();
            let mut h = [[0u64; 256]; 2];
            for (b, &l) in blocks.clone().zip(&lanes) {
                let s = &streams[b][k];
                for (i, &x) in s.iter().enumerate() {
                    let c = if kind == 2 && i >= l {
                        (s[i - l] >> bit) & 1
                    } else {
                        0
                    };
                    h[c as usize][x as usize] += 1;
                }
            }
            let ft: Vec<FreqTable> = match kind {
                0 => {
                    tables.push(0);
                    Vec::new()
                }
                1 => {
                    let t = table_below(r, h[0], 256);
                    t.serialize(&mut tables);
                    vec![t]
                }
                _ => {
                    let ts = vec![table_below(r, h[0], 256), table_below(r, h[1], 256)];
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
                    let et: Vec<EncodeTable> = ft
                        .iter()
                        .map(|t| EncodeTable::new(t, &t.cumulative()))
                        .collect();
                    let mut out = Vec::new();
                    if et.len() == 2 {
                        encode_context_slice(s, l, [&et[0], &et[1]], bit, &mut out);
                    } else {
                        encode_slice_with(s, l, &et[0], &mut out);
                    }
                    encoded[b][k] = Some(out);
                    entries[b].lanes[k] = l as u8;
                }
            }
        }
    }
    let mut data = Vec::new();
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
    let mut hp = p.clone();
    put_u32(&mut hp.header, H_GROUP_BLOCKS, o.group_blocks);
    put_u32(&mut hp.header, H_GROUP_COUNT, nb.div_ceil(gb) as u32);
    assemble(
        &hp,
        1,
        a.header().match_base() as u8,
        &entries,
        &tables,
        &data,
    )
}

// ---------------------------------------------------------------------------------------
// the encoder
// ---------------------------------------------------------------------------------------

/// Checks an encoder archive of `data`: parses, decodes to `data` through `decompress`,
/// block by block fast and reference, and a few extracts.
fn roundtrip(r: &mut Rng, data: &[u8], opts: &Settings, what: &str) -> Vec<u8> {
    let packed = match catch_unwind(AssertUnwindSafe(|| {
        aceapex::compress_settings(data, opts, &|_| {})
    })) {
        Ok(p) => p.unwrap(),
        Err(_) => panic!("compress panicked ({what}, {opts:?})"),
    };
    let a = Archive::parse(&packed).unwrap();
    match aceapex::decode::decompress(&a) {
        Ok(out) => assert!(out == data, "decodes wrong ({what}, {opts:?})"),
        Err(e) => panic!("fails: {e:?} ({what}, {opts:?})"),
    }
    compare_archive(&packed, what);
    let size = data.len() as u64;
    for _ in 0..2 {
        let off = r.below(size + 1);
        let len = r.below(size - off + 1);
        let got = aceapex::decode::extract(&a, off, len).unwrap();
        assert!(
            got[..] == data[off as usize..(off + len) as usize],
            "{what}"
        );
    }
    packed
}

// ---------------------------------------------------------------------------------------
// real DNA
// ---------------------------------------------------------------------------------------

mod archives;
