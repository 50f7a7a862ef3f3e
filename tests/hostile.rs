//! Hostile archives: hand-built inputs aimed at the reader (`Archive::parse`), the fast CPU
//! decoder (`host/cpu`, unsafe chunked copies and AVX2/scalar rANS loops) and the reference
//! decoders (`device/src/{lz,rans}.rs`). Every archive must fail closed: a clear error, never a
//! panic, hang, out-of-bounds access, huge allocation, or wrong bytes reported as right.
//!
//! Archives are assembled byte by byte here (FORMAT.md §2-§5), with the meta checksum
//! (XXH3-64 of header[0..88] ++ block table ++ table section, at header offset 88) recomputed.
//! Tests that show a current bug are `#[ignore = "BUG: ..."]`.

mod common;

use aceapex::decode::{decode_block_at, decode_block_reference};
use aceapex::decode::{decompress, extract};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{count, encode_slice, FreqTable};
use aceapex::format::Archive;
use aceapex::{DecodeError, FormatError};
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::xxh3_64;

// ---------------------------------------------------------------------------------------
// per-thread allocation accounting (Archive::parse is single-threaded)
// ---------------------------------------------------------------------------------------

struct Counting;
thread_local! {
    static CUR: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}
fn note(delta: isize) {
    let _ = CUR.try_with(|c| {
        let v = c.get() + delta;
        c.set(v);
        let _ = PEAK.try_with(|p| {
            if v > p.get() {
                p.set(v)
            }
        });
    });
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size() as isize);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        note(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note(n as isize - l.size() as isize);
        unsafe { System.realloc(p, l, n) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated (net) on this thread while running `f`.
fn peak_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = CUR.with(|c| c.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(|p| p.get());
    (r, (peak - base).max(0) as usize)
}

// ---------------------------------------------------------------------------------------
// archive assembly
// ---------------------------------------------------------------------------------------

const MAX_BS: u32 = 4 << 20;
const L: u32 = 65536;

fn parse_err(b: &[u8]) -> FormatError {
    match Archive::parse(b) {
        Ok(_) => panic!("archive parsed but should be rejected"),
        Err(e) => e,
    }
}

/// Decodes every block with the fast and the reference decoder (in order, one buffer), asserts
/// they agree, and returns the first block error's status (None if all blocks and the whole
/// file decode). Also checks `decompress` and `extract` agree with it.
fn outcome(b: &[u8]) -> Option<(u32, Status)> {
    let a = Archive::parse(b).expect("archive parses");
    let n = a.header().original_size as usize;
    let mut fast = vec![0u8; n];
    let mut refr = vec![0u8; n];
    let mut first = None;
    for blk in 0..a.block_count() {
        let f = decode_block_at(&a, blk, &mut fast, 0);
        let r = decode_block_reference(&a, blk, &mut refr, 0);
        let st = |x: &Result<(), DecodeError>| match x {
            Ok(()) => None,
            Err(DecodeError::Block { status, .. }) => Some(*status),
            Err(e) => panic!("unexpected {e:?}"),
        };
        assert_eq!(st(&f), st(&r), "block {blk}: fast and reference disagree");
        if f.is_ok() {
            let rg = a.block_range(blk);
            assert!(
                fast[rg.start as usize..rg.end as usize]
                    == refr[rg.start as usize..rg.end as usize]
            );
        }
        if first.is_none() {
            if let Some(s) = st(&f) {
                first = Some((blk as u32, s));
            }
        }
    }
    let d = decompress(&a);
    let x = extract(&a, 0, n as u64);
    match first {
        None => {
            let d = d.expect("decompress");
            assert!(xxh3_64(&d) == a.header().content_checksum);
            assert!(x.expect("extract") == d);
        }
        Some((blk, s)) => {
            for r in [d.map(|_| ()), x.map(|_| ())] {
                match r {
                    Err(DecodeError::Block { status, block, .. }) if !a.cross_block() => {
                        // parallel decode may report any failing block; ours is the first
                        assert!(block >= blk || status == s, "{block} {status:?}");
                    }
                    Err(DecodeError::Block { .. }) => {}
                    other => panic!("expected a block error, got {other:?}"),
                }
            }
        }
    }
    first
}

fn status_of(b: &[u8]) -> Status {
    outcome(b).expect("expected a block error").1
}

// ---------------------------------------------------------------------------------------
// header and container attacks
// ---------------------------------------------------------------------------------------

#[test]
fn max_block_count_with_consistent_original_size_is_rejected_before_allocating() {
    // block_count = u32::MAX, original_size = u32::MAX * 4 MiB (consistent), 96-byte file.
    let mut h = Hdr::new((u32::MAX as u64) * MAX_BS as u64, MAX_BS);
    h.group_blocks = 1;
    let b = assemble(&h, &[], &[], &[]);
    let (r, peak) = peak_alloc(|| Archive::parse(&b).map(|_| ()));
    assert!(matches!(r, Err(FormatError::Size { .. })), "{r:?}");
    assert!(
        peak < 1 << 20,
        "parse allocated {peak} bytes for a 96-byte file"
    );
}

#[test]
fn group_blocks_u32_max_is_one_group() {
    let mut h = Hdr::new(0, 4096);
    h.group_blocks = u32::MAX;
    let orig = b"abcabcabcabcabcabcXY";
    let b = build(
        h,
        orig,
        &[Blk::raw(b"abcXY", &[], &[3], &[0xFF, 0x02, 0xC9, 0x01])],
        None,
    );
    assert_eq!(outcome(&b), None);
}

#[test]
fn section_sizes_near_u64_max_are_rejected() {
    for (tb, db) in [
        (u64::MAX, 0),
        (0, u64::MAX),
        (u64::MAX - 95, 0),
        (u64::MAX / 2, u64::MAX / 2 + 2),
        (1 << 63, 1 << 63),
        (u64::MAX - 96 - 56 + 1, 0),
    ] {
        let mut h = Hdr::new(1, 4096);
        h.table_bytes = Some(tb);
        h.data_bytes = Some(db);
        let e = Ent {
            decoded: [0, 0, 0, 0, 0],
            ..Default::default()
        };
        let b = assemble(&h, &e.bytes(0), &[0, 0, 0, 0, 0], &[]);
        let err = parse_err(&b);
        assert!(
            matches!(err, FormatError::Size { .. } | FormatError::Header { .. }),
            "{tb} {db}: {err:?}"
        );
    }
}

#[test]
fn zero_kind_tables_with_rans_slices_are_rejected_for_every_stream_and_group() {
    // two groups of one block; group 1 lacks the table that block 1 references
    let orig = vec![b'a'; 8192];
    for k in 0..5 {
        let mut tables = Vec::new();
        for g in 0..2 {
            for s in 0..5 {
                if s == k && g == 1 {
                    tables.push(0);
                } else {
                    tables.extend(table_record(&[(b'a', 4096)]));
                }
            }
        }
        let mut blk = Blk::raw(b"a", &[], &[], &[0xFF]);
        blk.lanes[k] = 1;
        blk.slices[k] = L.to_le_bytes().to_vec();
        let mut dec = [1u32, 0, 0, 1, 0];
        dec[k] = 1;
        blk.decoded = Some(dec);
        let mut h = Hdr::new(0, 4096);
        h.group_blocks = 1;
        let b = build(h, &orig, &[blk.clone(), blk], Some(tables));
        match parse_err(&b) {
            FormatError::BlockEntry { block: 1, .. } => {}
            e => panic!("stream {k}: {e:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// rANS slices
// ---------------------------------------------------------------------------------------

/// A one-block archive (original `orig`, 'a' * n) whose literal stream is a rANS slice.
fn rans_lit_archive(orig: &[u8], slice: Vec<u8>, lanes: u8, table: Vec<u8>) -> Vec<u8> {
    let n = orig.len();
    assert!(n <= 128);
    let blk = Blk {
        slices: [slice, vec![], vec![], vec![0xFF, (n - 1) as u8], vec![]],
        decoded: Some([n as u32, 0, 0, 2, 0]),
        lanes: [lanes, 0, 0, 0, 0],
        lowest: None,
        checksum: None,
    };
    let mut t = table;
    t.extend_from_slice(&[0, 0, 0, 0]);
    build(Hdr::new(0, 4096), orig, &[blk], Some(t))
}

#[test]
fn every_lane_count_with_slice_lengths_at_the_boundaries() {
    let one = table_record(&[(b'a', 4096)]);
    for lanes in 1u8..=32 {
        let head: Vec<u8> = (0..lanes).flat_map(|_| L.to_le_bytes()).collect();
        let orig = vec![b'a'; 100];
        // exactly 4 * lanes: valid (single-symbol table, states never move)
        assert_eq!(
            outcome(&rans_lit_archive(&orig, head.clone(), lanes, one.clone())),
            None,
            "lanes {lanes}"
        );
        // 4 * lanes + 1: odd word area
        let mut s = head.clone();
        s.push(0);
        assert_eq!(
            status_of(&rans_lit_archive(&orig, s, lanes, one.clone())),
            Status::RansHeader
        );
        // 4 * lanes - 1: too short
        let s = head[..head.len() - 1].to_vec();
        assert_eq!(
            status_of(&rans_lit_archive(&orig, s, lanes, one.clone())),
            Status::RansHeader
        );
        // 4 * lanes + 2: one unread word
        let mut s = head.clone();
        s.extend_from_slice(&[0, 0]);
        assert_eq!(
            status_of(&rans_lit_archive(&orig, s, lanes, one.clone())),
            Status::RansTrailer
        );
        // empty slice
        assert_eq!(
            status_of(&rans_lit_archive(&orig, vec![], lanes, one.clone())),
            Status::RansHeader
        );
    }
}

#[test]
fn extreme_rans_states_fail_cleanly_for_every_lane_count() {
    let one = table_record(&[(b'a', 4096)]);
    let two = table_record(&[(b'a', 4095), (b'b', 1)]);
    let orig = vec![b'a'; 100];
    for lanes in 1u8..=32 {
        for (state, table, want) in [
            (65535u32, &one, Some(Status::RansHeader)),
            (0, &one, Some(Status::RansHeader)),
            (65536, &one, None),
            (65537, &one, Some(Status::RansTrailer)),
            (u32::MAX, &one, Some(Status::RansTrailer)),
            (u32::MAX, &two, None), // any status, but fast == reference and no panic
            (0x8000_0000, &two, None),
            (65536, &two, None),
        ] {
            let mut s: Vec<u8> = (0..lanes).flat_map(|_| state.to_le_bytes()).collect();
            // a few words so that lanes can renormalise
            s.extend(std::iter::repeat_n(0xFFu8, 2 * lanes as usize));
            let b = rans_lit_archive(&orig, s, lanes, table.clone());
            let got = outcome(&b).map(|x| x.1);
            if let Some(w) = want {
                if state != 65536 {
                    // with the extra words the trailer must fail anyway
                    assert!(got.is_some(), "lanes {lanes} state {state}");
                    if w == Status::RansHeader {
                        assert_eq!(got, Some(w));
                    }
                }
            }
            // one-symbol table, state 65536, words left: trailer
            if state == 65536 && table == &one {
                assert_eq!(got, Some(Status::RansTrailer));
            }
        }
    }
}

#[test]
fn random_rans_slices_fast_equals_reference_for_all_lane_counts() {
    // valid slices from the crate's encoder, then corrupted, for lane counts 1..=32
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for lanes in 1usize..=32 {
        let n = 128;
        let orig: Vec<u8> = (0..n).map(|_| b"ab"[(rnd() % 7 == 0) as usize]).collect();
        let mut hst = [0u64; 256];
        count(&mut hst, &orig);
        let ft = FreqTable::from_histogram(&hst).unwrap();
        let mut tbl = Vec::new();
        ft.serialize(&mut tbl);
        let mut enc = Vec::new();
        encode_slice(&orig, lanes, &ft, &ft.cumulative(), &mut enc);
        assert_eq!(
            outcome(&rans_lit_archive(
                &orig,
                enc.clone(),
                lanes as u8,
                tbl.clone()
            )),
            None
        );
        for _ in 0..30 {
            let mut bad = enc.clone();
            let i = (rnd() as usize) % bad.len();
            bad[i] ^= 1 << (rnd() % 8);
            let _ = outcome(&rans_lit_archive(&orig, bad, lanes as u8, tbl.clone()));
        }
        // wrong lane count for the same slice
        let other = (lanes % 32) as u8 + 1;
        let _ = outcome(&rans_lit_archive(&orig, enc.clone(), other, tbl.clone()));
    }
}

#[test]
fn max_decoded_len_single_symbol_streams_are_bounded_and_rejected() {
    // every stream: 1-symbol table, decoded_len = block + 1, one lane state 65536 (no words);
    // commands are all resets: the cursor never moves -> Trailing.
    let bs = 4096u32;
    let orig = vec![0u8; bs as usize];
    let mut tables = Vec::new();
    for sym in [0u8, 0, 1, 0xFF, 0x80] {
        tables.extend(table_record(&[(sym, 4096)]));
    }
    let head = L.to_le_bytes().to_vec();
    let blk = Blk {
        slices: [
            head.clone(),
            head.clone(),
            head.clone(),
            head.clone(),
            head.clone(),
        ],
        decoded: Some([bs + 1; 5]),
        lanes: [1, 1, 1, 1, 1],
        lowest: None,
        checksum: None,
    };
    let b = build(
        Hdr::new(0, bs),
        &orig,
        std::slice::from_ref(&blk),
        Some(tables.clone()),
    );
    assert_eq!(status_of(&b), Status::Trailing);
    // block + 2 is refused by the reader
    let mut big = blk;
    big.decoded = Some([bs + 2, 0, 0, 1, 0]);
    let b = build(Hdr::new(0, bs), &orig, &[big], Some(tables));
    assert!(matches!(parse_err(&b), FormatError::BlockEntry { .. }));
}

// ---------------------------------------------------------------------------------------
// match layer
// ---------------------------------------------------------------------------------------

#[test]
fn five_byte_varints() {
    let orig = vec![b'z'; 30];
    // u32::MAX as a distance: BadDistance
    let b = one_block(
        &orig,
        Blk::raw(
            b"z",
            &[],
            &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
            &[0xFF, 0x00, 0xC0],
        ),
    );
    assert_eq!(status_of(&b), Status::BadDistance);
    // fifth byte 0x10 / 0x8F / 0xFF: BadVarint
    for fifth in [0x10u8, 0x8F, 0xFF, 0x80] {
        let b = one_block(
            &orig,
            Blk::raw(
                b"z",
                &[],
                &[0xFF, 0xFF, 0xFF, 0xFF, fifth],
                &[0xFF, 0x00, 0xC0],
            ),
        );
        assert_eq!(status_of(&b), Status::BadVarint, "fifth {fifth:#x}");
    }
    // overlong 5-byte encoding of 1: valid
    let b = one_block(
        &orig,
        Blk::raw(
            b"z",
            &[0x80, 0x80, 0x80, 0x80, 0x00],
            &[0x81, 0x80, 0x80, 0x80, 0x00],
            &[0xFF, 0x00, 0xFE, 0xC0 + 17],
        ),
    );
    // 0xFE len 6 + 0 = 6 dist 1, then short match 0xC0+17 = 23 with dist: offsets stream
    // holds only one varint -> BadVarint
    assert_eq!(status_of(&b), Status::BadVarint);
    let b = one_block(
        &orig,
        Blk::raw(
            b"z",
            &[0x80, 0x80, 0x80, 0x80, 0x00],
            &[0x81, 0x80, 0x80, 0x80, 0x00, 1],
            &[0xFF, 0x00, 0xFE, 0xC0 + 17],
        ),
    );
    assert_eq!(outcome(&b), None);
    // long match with v = u32::MAX (6 + v overflows): OutputOverrun
    let b = one_block(
        &orig,
        Blk::raw(
            b"z",
            &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
            &[1],
            &[0xFF, 0x00, 0xFE],
        ),
    );
    assert_eq!(status_of(&b), Status::OutputOverrun);
    // escaped repeat with v = u32::MAX - 21 (len = u32::MAX, no overflow) and u32::MAX - 20
    for v in [u32::MAX - 21, u32::MAX - 20, u32::MAX] {
        let mut lens = Vec::new();
        varint(v, &mut lens);
        let b = one_block(&orig, Blk::raw(b"z", &lens, &[], &[0xFF, 0x00, 0x8F]));
        assert_eq!(status_of(&b), Status::OutputOverrun, "v {v}");
    }
}

#[test]
fn distance_window_plus_one_and_window_exactly() {
    let mut orig = b"0123456789abcdef".to_vec();
    orig.extend_from_slice(b"0123456789");
    for (window, want) in [(16, None), (15, Some(Status::BadDistance))] {
        let mut h = Hdr::new(0, 4096);
        h.window = window;
        let b = build(
            h,
            &orig,
            &[Blk::raw(
                b"0123456789abcdef",
                &[],
                &[16],
                &[0xFF, 0x0F, 0xC4],
            )],
            None,
        );
        assert_eq!(outcome(&b).map(|x| x.1), want, "window {window}");
    }
}

#[test]
fn repeat_commands_at_block_start_use_the_reset_history() {
    // history [1, 2, 4, 8]: slot s at position p must satisfy H[s] <= p
    let slots = [(0x80u8, 1usize), (0x90, 2), (0xA0, 4), (0xB0, 8)];
    for (c, d) in slots {
        for p in 0..10usize {
            let lits: Vec<u8> = (0..p as u8).map(|i| b'A' + i).collect();
            let mut orig = lits.clone();
            if p >= d {
                for _ in 0..6 {
                    let b = orig[orig.len() - d];
                    orig.push(b);
                }
            }
            let mut cmds = vec![0xFF];
            if p > 0 {
                cmds.push(p as u8 - 1);
            }
            cmds.push(c);
            if p < d {
                // can't build the original (source missing); reuse literals + garbage
                let orig2 = [lits.clone(), vec![0; 6]].concat();
                let b = one_block(&orig2, Blk::raw(&lits, &[], &[], &cmds));
                assert_eq!(status_of(&b), Status::BadDistance, "slot {c:#x} p {p}");
            } else {
                let b = one_block(&orig, Blk::raw(&lits, &[], &[], &cmds));
                assert_eq!(outcome(&b), None, "slot {c:#x} p {p}");
            }
        }
    }
    // a reset in the middle restores [1,2,4,8]
    let orig = b"abcdefghabcdefgh".to_vec();
    let b = one_block(
        &orig,
        Blk::raw(b"abcdefgh", &[], &[3], &[0xFF, 0x07, 0xFF, 0xB2]),
    );
    // 0xB2: slot 3 (dist 8), len 8; offsets stream has an unread byte -> Trailing
    assert_eq!(status_of(&b), Status::Trailing);
    let b = one_block(
        &orig,
        Blk::raw(b"abcdefgh", &[], &[], &[0xFF, 0x07, 0xFF, 0xB2]),
    );
    assert_eq!(outcome(&b), None);
}

/// Naive model of a block built from literal prefix + one trailing match.
fn model(prefix: &[u8], dist: usize, len: usize) -> Vec<u8> {
    let mut v = prefix.to_vec();
    for _ in 0..len {
        v.push(v[v.len() - dist]);
    }
    v
}

#[test]
fn matches_and_literal_runs_ending_at_and_past_the_block_end() {
    // two 4 KiB blocks; block 0 ends with a match of (dist, len) that ends exactly at its end,
    // exercising the wild-copy margin boundary; block 1 is fixed bytes that must not be touched.
    let bs = 4096usize;
    let second: Vec<u8> = (0..bs).map(|i| (i * 7 + 3) as u8).collect();
    let blk1 = {
        let mut cmds = vec![0xFF];
        let mut n = bs;
        while n > 0 {
            let k = n.min(128);
            cmds.push(k as u8 - 1);
            n -= k;
        }
        Blk::raw(&second, &[], &[], &cmds)
    };
    for dist in [1usize, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33] {
        for len in [6usize, 7, 15, 16, 17, 30, 31, 32, 33, 67, 68, 200] {
            // literal prefix of bs - len bytes
            let plen = bs - len;
            if plen < dist {
                continue;
            }
            let prefix: Vec<u8> = (0..plen).map(|i| (i * 31 + dist * 5 + len) as u8).collect();
            let block0 = model(&prefix, dist, len);
            let mut cmds = vec![0xFF];
            let mut n = plen;
            while n > 0 {
                let k = n.min(128);
                cmds.push(k as u8 - 1);
                n -= k;
            }
            let mut lens = Vec::new();
            let mut offs = Vec::new();
            cmds.push(0xFE);
            varint((len - 6) as u32, &mut lens);
            varint(dist as u32, &mut offs);
            let blk0 = Blk::raw(&prefix, &lens, &offs, &cmds);
            let orig = [block0.clone(), second.clone()].concat();
            let b = build(
                Hdr::new(0, bs as u32),
                &orig,
                &[blk0.clone(), blk1.clone()],
                None,
            );
            assert_eq!(outcome(&b), None, "dist {dist} len {len}");
            // one byte longer: OutputOverrun
            let mut lens2 = Vec::new();
            varint((len - 5) as u32, &mut lens2);
            let blk0b = Blk::raw(&prefix, &lens2, &offs, &cmds);
            let b = build(Hdr::new(0, bs as u32), &orig, &[blk0b, blk1.clone()], None);
            assert_eq!(
                outcome(&b),
                Some((0, Status::OutputOverrun)),
                "dist {dist} len {len}"
            );
        }
    }
    // literal runs of every length ending exactly at the block end, and one past
    for run in 1usize..=128 {
        let plen = bs - run;
        let lits: Vec<u8> = (0..bs).map(|i| (i * 13 + run) as u8).collect();
        let mut cmds = vec![0xFF];
        let mut n = plen;
        while n > 0 {
            let k = n.min(128);
            cmds.push(k as u8 - 1);
            n -= k;
        }
        cmds.push(run as u8 - 1);
        let b = build(
            Hdr::new(0, bs as u32),
            &[lits.clone(), second.clone()].concat(),
            &[Blk::raw(&lits, &[], &[], &cmds), blk1.clone()],
            None,
        );
        assert_eq!(outcome(&b), None, "run {run}");
        if run < 128 {
            // one more literal than the block holds
            let mut lits2 = lits.clone();
            lits2.push(0);
            let mut c2 = cmds.clone();
            *c2.last_mut().unwrap() += 1;
            let b = build(
                Hdr::new(0, bs as u32),
                &[lits.clone(), second.clone()].concat(),
                &[Blk::raw(&lits2, &[], &[], &c2), blk1.clone()],
                None,
            );
            assert_eq!(outcome(&b), Some((0, Status::OutputOverrun)), "run {run}");
        }
    }
}

#[test]
fn literal_runs_that_exactly_exhaust_the_literals() {
    let orig = b"0123456789".to_vec();
    assert_eq!(
        outcome(&one_block(
            &orig,
            Blk::raw(&orig, &[], &[], &[0xFF, 0x04, 0x04])
        )),
        None
    );
    assert_eq!(
        status_of(&one_block(
            &orig,
            Blk::raw(&orig, &[], &[], &[0xFF, 0x04, 0x05])
        )),
        Status::LiteralsExhausted
    );
    // 128-literal run with 127 literals in a large block (fast path reads padding)
    let orig: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
    assert_eq!(
        status_of(&one_block(
            &orig,
            Blk::raw(&orig[..127], &[], &[], &[0xFF, 0x7F])
        )),
        Status::LiteralsExhausted
    );
}

// ---------------------------------------------------------------------------------------
// cross-block
// ---------------------------------------------------------------------------------------

fn cross_hdr(bs: u32, window: u32) -> Hdr {
    let mut h = Hdr::new(0, bs);
    h.flags = 2;
    h.window = window;
    h
}

/// Block of bs bytes that copies `dist` back for bs bytes (one long match).
fn copy_block(bs: usize, dist: u32, lowest: u32) -> Blk {
    let mut lens = Vec::new();
    let mut offs = Vec::new();
    varint(bs as u32 - 6, &mut lens);
    varint(dist, &mut offs);
    let mut b = Blk::raw(&[], &lens, &offs, &[0xFF, 0xFE]);
    b.lowest = Some(lowest);
    b
}

fn lit_block(bytes: &[u8]) -> Blk {
    let mut cmds = vec![0xFF];
    let mut n = bytes.len();
    while n > 0 {
        let k = n.min(128);
        cmds.push(k as u8 - 1);
        n -= k;
    }
    Blk::raw(bytes, &[], &[], &cmds)
}

#[test]
fn cross_block_lowest_source_self_but_distance_into_previous_block() {
    let bs = 4096usize;
    let b0: Vec<u8> = (0..bs).map(|i| (i * 5) as u8).collect();
    let orig = [b0.clone(), b0.clone()].concat();
    // lowest = 1 (itself) with dist = bs: must be BadDistance even though window allows it
    let b = build(
        cross_hdr(bs as u32, 1 << 20),
        &orig,
        &[lit_block(&b0), copy_block(bs, bs as u32, 1)],
        None,
    );
    assert_eq!(outcome(&b), Some((1, Status::BadDistance)));
    // lowest = 0: valid
    let b = build(
        cross_hdr(bs as u32, 1 << 20),
        &orig,
        &[lit_block(&b0), copy_block(bs, bs as u32, 0)],
        None,
    );
    assert_eq!(outcome(&b), None);
    // lowest = 0 but window = bs - 1: BadDistance
    let b = build(
        cross_hdr(bs as u32, bs as u32 - 1),
        &orig,
        &[lit_block(&b0), copy_block(bs, bs as u32, 0)],
        None,
    );
    assert_eq!(outcome(&b), Some((1, Status::BadDistance)));
    // same without the cross-block flag (lowest = 0 refused by the reader)
    let mut h = Hdr::new(0, bs as u32);
    h.window = bs as u32;
    let b = build(
        h,
        &orig,
        &[lit_block(&b0), copy_block(bs, bs as u32, 0)],
        None,
    );
    assert!(matches!(
        parse_err(&b),
        FormatError::BlockEntry { block: 1, .. }
    ));
}

#[test]
fn cross_block_chains_and_extract_of_every_region() {
    // blocks: 0 literals; 1 copies 0; 2 copies 1 (lowest 1); 3 literals (lowest 3);
    // 4 copies from block 2 (lowest 2, transitively needs 0..=2); 5 copies 4 but declares lowest 5
    let bs = 4096usize;
    let b0: Vec<u8> = (0..bs).map(|i| (i * 11 + 1) as u8).collect();
    let b3: Vec<u8> = (0..bs).map(|i| (i * 3 + 7) as u8).collect();
    let mut orig = Vec::new();
    orig.extend(&b0);
    orig.extend(&b0);
    orig.extend(&b0);
    orig.extend(&b3);
    orig.extend(&b0);
    let good = vec![
        lit_block(&b0),
        copy_block(bs, bs as u32, 0),
        copy_block(bs, bs as u32, 1),
        lit_block(&b3),
        copy_block(bs, 2 * bs as u32, 2),
    ];
    let b = build(cross_hdr(bs as u32, 1 << 20), &orig, &good, None);
    assert_eq!(outcome(&b), None);
    let a = Archive::parse(&b).unwrap();
    for off in (0..orig.len()).step_by(1000) {
        for len in [1usize, 100, 4096, 9000] {
            if off + len <= orig.len() {
                assert_eq!(
                    extract(&a, off as u64, len as u64).unwrap(),
                    &orig[off..off + len]
                );
            }
        }
    }
    // corrupt block 1 (wrong distance -> wrong bytes, checksum): every region that needs it
    // fails, regions that do not (block 0, block 3 alone) succeed
    let mut bad = good.clone();
    bad[1] = copy_block(bs, bs as u32 - 1, 0);
    let b = build(cross_hdr(bs as u32, 1 << 20), &orig, &bad, None);
    let a = Archive::parse(&b).unwrap();
    assert!(matches!(
        decompress(&a),
        Err(DecodeError::Block {
            block: 1,
            status: Status::Checksum,
            ..
        })
    ));
    assert_eq!(extract(&a, 0, bs as u64).unwrap(), &orig[..bs]);
    assert_eq!(
        extract(&a, 3 * bs as u64, bs as u64).unwrap(),
        &orig[3 * bs..4 * bs]
    );
    for blk in [1usize, 2, 4] {
        let r = extract(&a, (blk * bs + 5) as u64, 10);
        assert!(
            matches!(r, Err(DecodeError::Block { block: 1, .. })),
            "block {blk}: {r:?}"
        );
    }
    let r = extract(&a, 0, orig.len() as u64);
    assert!(matches!(r, Err(DecodeError::Block { block: 1, .. })));
}

#[test]
fn extract_spanning_many_blocks_of_a_corrupt_independent_archive() {
    let bs = 4096usize;
    let nb = 40;
    let blocks_data: Vec<Vec<u8>> = (0..nb)
        .map(|b| (0..bs).map(|i| (i * 7 + b * 13) as u8).collect())
        .collect();
    let orig: Vec<u8> = blocks_data.concat();
    let mut blocks: Vec<Blk> = blocks_data.iter().map(|d| lit_block(d)).collect();
    // block 17: a literal byte flipped (checksum), block 29: match before block start
    blocks[17].slices[0][100] ^= 1;
    blocks[29] = copy_block(bs, 1, 29);
    let b = build(Hdr::new(0, bs as u32), &orig, &blocks, None);
    let a = Archive::parse(&b).unwrap();
    for (off, len) in [
        (0usize, 17 * bs),
        (18 * bs, 11 * bs),
        (30 * bs, 10 * bs),
        (5, 17 * bs - 5),
    ] {
        assert_eq!(
            extract(&a, off as u64, len as u64).unwrap(),
            &orig[off..off + len]
        );
    }
    for (off, len) in [
        (0usize, nb * bs),
        (17 * bs - 1, 2),
        (20 * bs, 10 * bs),
        (29 * bs + 4095, 1),
    ] {
        let r = extract(&a, off as u64, len as u64);
        match r {
            Err(DecodeError::Block {
                block: 17,
                status: Status::Checksum,
                ..
            })
            | Err(DecodeError::Block {
                block: 29,
                status: Status::BadDistance,
                ..
            }) => {}
            other => panic!("{off} {len}: {other:?}"),
        }
    }
    assert!(decompress(&a).is_err());
    // regions overflowing u64 or the size
    assert!(matches!(
        extract(&a, u64::MAX, 2),
        Err(DecodeError::Region { .. })
    ));
    assert!(matches!(
        extract(&a, 1, u64::MAX),
        Err(DecodeError::Region { .. })
    ));
    assert!(matches!(
        extract(&a, orig.len() as u64, 1),
        Err(DecodeError::Region { .. })
    ));
    assert_eq!(extract(&a, orig.len() as u64, 0).unwrap(), Vec::<u8>::new());
}

// ---------------------------------------------------------------------------------------
// resources and timing
// ---------------------------------------------------------------------------------------

/// A ~1 MB archive of single-block groups, every group carrying four one-symbol tables
/// (35 bytes of file each); every block empty-ish. The reader expands each table record into
/// a 16 KiB decode table up front.
fn many_tables_archive(target: usize) -> Vec<u8> {
    let bs = 4096u32;
    let per_group = ENTRY + STREAMS * 35;
    let nb = target / per_group;
    let mut h = Hdr::new(nb as u64 * bs as u64, bs);
    h.group_blocks = 1;
    let bt: Vec<u8> = (0..nb)
        .flat_map(|i| {
            Ent {
                lowest: i as u32,
                ..Default::default()
            }
            .bytes(i as u32)
        })
        .collect();
    let rec = table_record(&[(0, 4096)]);
    assert_eq!(rec.len(), 35);
    let tables: Vec<u8> = (0..STREAMS * nb).flat_map(|_| rec.clone()).collect();
    assemble(&h, &bt, &tables, &[])
}

#[test]
fn parse_memory_is_proportionate_to_the_file() {
    let b = many_tables_archive(1 << 20);
    let t = Instant::now();
    parses_within_32x(&b);
    let dt = t.elapsed();
    assert!(dt < Duration::from_secs(1), "parse took {dt:?}");
}

/// Parses `b` and asserts the reader allocated at most 32 times its size at its peak;
/// returns the block count.
fn parses_within_32x(b: &[u8]) -> usize {
    let (r, peak) = peak_alloc(|| Archive::parse(b).map(|a| a.block_count()));
    eprintln!("parse of {} bytes: peak {} MB", b.len(), peak >> 20);
    assert!(
        peak <= 32 * b.len(),
        "parse of a {} byte archive allocated {} bytes ({}x)",
        b.len(),
        peak,
        peak / b.len()
    );
    r.expect("parses")
}

#[test]
fn parse_time_of_a_1mb_table_heavy_archive() {
    let b = many_tables_archive(1 << 20);
    let t = Instant::now();
    let a = Archive::parse(&b).unwrap();
    let dt = t.elapsed();
    eprintln!(
        "parse 1 MB table-heavy archive: {dt:?}, {} blocks",
        a.block_count()
    );
    assert!(dt < Duration::from_secs(2), "parse took {dt:?}");
    // and rejecting it (every block empty: NoLeadingReset) is quick
    let t = Instant::now();
    assert!(matches!(
        decompress(&a),
        Err(DecodeError::Block {
            status: Status::NoLeadingReset,
            ..
        })
    ));
    assert!(t.elapsed() < Duration::from_secs(2));
}

/// `nb` blocks of 4 MiB, every stream a one-symbol rANS slice of block + 1 symbols with a
/// 4-byte slice (state 65536): the most decode work per archive byte. Commands are all
/// resets, so every block ends in Trailing after decoding 5 x 4 MiB of symbols.
fn max_work_archive(nb: usize, cross: bool) -> Vec<u8> {
    let bs = MAX_BS;
    let mut h = Hdr::new(nb as u64 * bs as u64, bs);
    h.group_blocks = 1 << 20;
    if cross {
        h.flags = 2;
        h.window = u32::MAX;
    }
    let mut bt = Vec::new();
    for i in 0..nb {
        let e = Ent {
            stored: [4; 5],
            decoded: [bs + 1; 5],
            lanes: [1; 5],
            lowest: if cross { 0 } else { i as u32 },
            ..Default::default()
        };
        bt.extend_from_slice(&e.bytes(i as u32));
    }
    let mut tables = Vec::new();
    for sym in [b'x', 0, 1, 0xFF, 0x80] {
        tables.extend(table_record(&[(sym, 4096)]));
    }
    let data: Vec<u8> = (0..STREAMS * nb).flat_map(|_| L.to_le_bytes()).collect();
    assemble(&h, &bt, &tables, &data)
}

#[test]
fn worst_case_rejection_time() {
    for cross in [false, true] {
        let b = max_work_archive(64, cross);
        let a = Archive::parse(&b).unwrap();
        let t = Instant::now();
        let r = decompress(&a);
        let dt = t.elapsed();
        eprintln!(
            "max-work archive ({} bytes, 64 x 4 MiB, cross {cross}): rejected in {dt:?}",
            b.len()
        );
        assert!(
            matches!(
                r,
                Err(DecodeError::Block {
                    status: Status::Trailing,
                    ..
                })
            ),
            "{r:?}"
        );
        assert!(dt < Duration::from_secs(2), "took {dt:?}");
        let t = Instant::now();
        let r = extract(&a, 63 * MAX_BS as u64, 1);
        assert!(r.is_err());
        eprintln!("  extract of the last byte: {:?}", t.elapsed());
    }
}

#[test]
fn one_block_worst_case_decode_time() {
    // a valid 4 MiB block whose commands are 4 MiB - 1 resets... : reset, 4 MiB resets is not
    // possible with a full block, so: 2 MiB resets + one literal + a 4 MiB - 1 match
    let bs = MAX_BS as usize;
    let orig = vec![b'q'; bs];
    let n_resets = bs / 2;
    let cmds: Vec<u8> = std::iter::repeat_n(0xFF, n_resets)
        .chain([0x00, 0xFE])
        .collect();
    let mut lens = Vec::new();
    varint(bs as u32 - 1 - 6, &mut lens);
    let blk = Blk::raw(b"q", &lens, &[1], &cmds);
    let b = build(Hdr::new(0, bs as u32), &orig, &[blk], None);
    let a = Archive::parse(&b).unwrap();
    let t = Instant::now();
    assert_eq!(decompress(&a).unwrap().len(), bs);
    eprintln!("valid 4 MiB block with 2M resets: {:?}", t.elapsed());
}

// ---------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_aceapex"))
        .args(args)
        .env("ACEAPEX_SKIP_PTX", "1")
        .output()
        .unwrap()
}

fn assert_clean_failure(o: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{what}: succeeded");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: status {:?}, stderr {err}",
        o.status
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(!err.trim().is_empty(), "{what}: no message");
}

#[test]
fn cli_on_empty_and_zero_files() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("empty.acx", vec![]), ("zeros.acx", vec![0u8; 96])] {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let p = p.to_str().unwrap();
        let out = dir.path().join(format!("{name}.out"));
        let o = cli(&["decompress", p, "-o", out.to_str().unwrap()]);
        assert_clean_failure(&o, name);
        assert!(!out.exists());
        assert_clean_failure(&cli(&["info", p]), name);
        assert_clean_failure(
            &cli(&["extract", p, "--offset", "0", "--length", "1"]),
            name,
        );
    }
}

/// ~1 MB archive: 15,000 empty entries of 4 MiB blocks: original_size ~ 63 GB.
fn huge_original_archive() -> Vec<u8> {
    let nb = 15_000usize;
    let h = Hdr::new(nb as u64 * MAX_BS as u64, MAX_BS);
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

#[test]
fn cli_huge_original_size_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.acx");
    let b = huge_original_archive();
    assert!(b.len() < 1_100_000);
    std::fs::write(&p, &b).unwrap();
    let out = dir.path().join("huge.out");
    let o = cli(&[
        "decompress",
        p.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cpu",
    ]);
    assert_clean_failure(&o, "huge original_size");
}

#[test]
fn huge_original_size_info_and_extract_are_fine() {
    let b = huge_original_archive();
    let a = Archive::parse(&b).unwrap();
    let r = extract(&a, 1 << 35, 10);
    assert!(
        matches!(
            r,
            Err(DecodeError::Block {
                status: Status::NoLeadingReset,
                ..
            })
        ),
        "{r:?}"
    );
}

/// An archive of `n` blocks of `bs` bytes, one group per block (`group_blocks` 1), every
/// entry width 0 (8-byte entries: a checksum alone), every table absent, no data: the fewest
/// bytes per block and per group the format allows.
fn zero_width_v3(n: usize, bs: u32, group_blocks: u32) -> Vec<u8> {
    let mut h = Hdr::new(n as u64 * bs as u64, bs);
    h.group_blocks = group_blocks;
    let groups = n.div_ceil(group_blocks as usize);
    let mut b = assemble(&h, &vec![0u8; 8 * n], &vec![0u8; STREAMS * groups], &[]);
    b[72..85].fill(0);
    reseal_v3(&mut b);
    b
}

#[test]
fn v3_parse_memory_is_proportionate_to_the_file() {
    // 13 bytes per group on disk (ninth-session attack: the reader held 2,680 bytes for each)
    let b = zero_width_v3(100_000, 4096, 1);
    assert_eq!(parses_within_32x(&b), 100_000);
}

#[test]
fn v3_huge_declared_output_fails_without_touching_it() {
    // 2,000 blocks of 4 MiB (8 GiB declared) in 16 KB; block 0 has no commands. The output is
    // allocated zeroed by the allocator (or refused), never filled first (took 15 s and 8 GiB)
    let b = zero_width_v3(2000, MAX_BS, 64);
    assert!(b.len() < 20_000);
    let a = Archive::parse(&b).expect("parses");
    let t = Instant::now();
    let r = decompress(&a);
    let dt = t.elapsed();
    assert!(
        matches!(
            r,
            Err(DecodeError::Block {
                status: Status::NoLeadingReset,
                ..
            }) | Err(DecodeError::Alloc { .. })
        ),
        "{r:?}"
    );
    assert!(dt < Duration::from_secs(3), "took {dt:?}");
}
