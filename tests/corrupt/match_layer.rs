//! The match layer (FORMAT.md §4): command varints, literal runs, match lengths and the match
//! base, distances (zero, before the block, beyond the window, exactly the window), the repeat
//! history at block start, writes past the block end, leftovers, and cross-block sources (the
//! lowest source block, chains, extracts of every region).

use super::*;

#[path = "../first_rule/mod.rs"]
mod first_rule;

/// A two-block cross-block archive: block 1 copies from block 0.
fn cross_spec(lowest1: u32, flags: u16, window: u32) -> Spec {
    let mut original: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251) as u8).collect();
    original.extend_from_within(..100);
    let b0 = Blk::raw(
        &original[..4096],
        &[],
        &[],
        &std::iter::once(0xFF)
            .chain(std::iter::repeat_n(0x7F, 32))
            .collect::<Vec<_>>(),
    );
    // block 1: new match of length 100 (0xFE, varint 94) at distance 4096 (varint 0x80 0x20)
    let mut b1 = Blk::raw(&[], &[94], &[0x80, 0x20], &[0xFF, 0xFE]);
    b1.lowest = Some(lowest1);
    Spec {
        original,
        block_size: 4096,
        window,
        flags,
        blocks: vec![b0, b1],
        tables: None,
    }
}

#[test]
fn cross_block_hand_made_decodes_and_rejects_reads_below_the_lowest_source_block() {
    let good = cross_spec(0, 2, 8192);
    decodes_to(&good.build(), &good.original);
    let a_bytes = good.build();
    let a = Archive::parse(&a_bytes).unwrap();
    assert_eq!(extract(&a, 4096, 100).unwrap(), &good.original[4096..]);
    // block table claims block 1 reads only itself: the match below it is a bad distance
    assert_eq!(
        block_status(&cross_spec(1, 2, 8192).build()),
        (1, Status::BadDistance)
    );
    // a distance larger than the window
    assert_eq!(
        block_status(&cross_spec(0, 2, 4095).build()).1,
        Status::BadDistance
    );
    // without the cross-block flag, a block may not name an earlier source block
    assert_eq!(entry_err_block(&cross_spec(0, 0, 4096).build()), 1);
    // and with its own index the read before the block start is a bad distance
    assert_eq!(
        block_status(&cross_spec(1, 0, 4096).build()),
        (1, Status::BadDistance)
    );
    // a lowest source block above the block's own index
    assert_eq!(entry_err_block(&cross_spec(2, 2, 8192).build()), 1);
}

#[test]
fn varint_of_six_bytes_is_bad() {
    // the 5th byte may only carry 4 bits without continuation
    let blk = Blk::raw(b"abcXY", &[], &[0x83, 0x80, 0x80, 0x80, 0x80, 0x00], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
}

#[test]
fn varint_beyond_u32_is_bad() {
    let blk = Blk::raw(b"abcXY", &[], &[0xFF, 0xFF, 0xFF, 0xFF, 0x10], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
}

#[test]
fn varint_cut_off_at_stream_end_is_bad() {
    let blk = Blk::raw(b"abcXY", &[], &[0x83], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
    // escaped repeat whose length varint is missing
    assert_eq!(
        only_block_status(Blk::raw(b"z", &[], &[], &[0xFF, 0x00, 0x8F]), &[b'z'; 25]),
        Status::BadVarint
    );
    // long match whose distance varint is missing
    assert_eq!(
        only_block_status(
            Blk::raw(b"q", &[0xC8, 0x01], &[], &[0xFF, 0x00, 0xFE]),
            &[b'q'; 207]
        ),
        Status::BadVarint
    );
}

/// A broken length varint (tests/first_rule/): the block's status is the first rule broken
/// in FORMAT.md §4.5's order, whether the varint is read, read after another rule breaks,
/// or never read (a leftover).
#[test]
fn a_broken_length_varint_yields_to_the_first_rule_broken() {
    let cases = first_rule::cases();
    assert_eq!(cases.len(), 24);
    for (what, archive, want) in cases {
        assert_eq!(block_status(&archive), (0, want), "{what}");
    }
}

#[test]
fn distance_zero_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[0], CMDS20), ORIG20),
        Status::BadDistance
    );
}

#[test]
fn distance_before_block_start_is_bad() {
    // cursor is 3 after "abc": distance 4 reaches one byte before the block
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[4], CMDS20), ORIG20),
        Status::BadDistance
    );
    // a repeat of slot 3 (distance 8) right after one literal
    assert_eq!(
        only_block_status(Blk::raw(b"a", &[], &[], &[0xFF, 0x00, 0xB3]), b"aaaaaaaaaa"),
        Status::BadDistance
    );
}

#[test]
fn distance_beyond_window_is_bad() {
    let mut s = Spec::one(ORIG20, good20());
    s.window = 2;
    assert_eq!(block_status(&s.build()), (0, Status::BadDistance));
    s.window = 3;
    decodes_to(&s.build(), ORIG20);
}

#[test]
fn block_not_starting_with_reset_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3], &[0x02, 0xC9, 0x01]), ORIG20),
        Status::NoLeadingReset
    );
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3], &[]), ORIG20),
        Status::NoLeadingReset
    );
}

#[test]
fn literal_run_past_the_literals_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcX", &[], &[3], CMDS20), ORIG20),
        Status::LiteralsExhausted
    );
}

#[test]
fn writing_past_the_block_end_is_bad() {
    // match of 30 (0xC0 + 24) after 3 literals in a 20-byte block
    assert_eq!(
        only_block_status(
            Blk::raw(b"abcXY", &[], &[3], &[0xFF, 0x02, 0xD8, 0x01]),
            ORIG20
        ),
        Status::OutputOverrun
    );
    // literals past the end: 3 + 15 + 3 literals (block is 20)
    assert_eq!(
        only_block_status(
            Blk::raw(b"abcXYZ", &[], &[3], &[0xFF, 0x02, 0xC9, 0x02]),
            ORIG20
        ),
        Status::OutputOverrun
    );
    // a length varint so large that 21 + extra overflows u32 must not wrap around
    let blk = Blk::raw(
        b"z",
        &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        &[],
        &[0xFF, 0x00, 0x8F],
    );
    assert_eq!(only_block_status(blk, &[b'z'; 25]), Status::OutputOverrun);
    let blk = Blk::raw(
        b"z",
        &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        &[1],
        &[0xFF, 0x00, 0xFE],
    );
    assert_eq!(only_block_status(blk, &[b'z'; 25]), Status::OutputOverrun);
}

#[test]
fn leftovers_and_short_blocks_are_trailing() {
    // commands end at 18 of 20 bytes
    assert_eq!(
        only_block_status(Blk::raw(b"abc", &[], &[3], &[0xFF, 0x02, 0xC9]), ORIG20),
        Status::Trailing
    );
    // an unused literal
    assert_eq!(
        only_block_status(Blk::raw(b"abcXYZ", &[], &[3], CMDS20), ORIG20),
        Status::Trailing
    );
    // an unused offset varint
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3, 5], CMDS20), ORIG20),
        Status::Trailing
    );
    // an unused length byte
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[0], &[3], CMDS20), ORIG20),
        Status::Trailing
    );
}

/// [`prose`] compressed with minimum match `min_match` (4 KiB blocks, level 8).
fn archive_with_min_match(min_match: u32) -> (Vec<u8>, Vec<u8>) {
    let data = prose(40_000, 5);
    let packed = compress_settings(
        &data,
        &Settings {
            block_size: 4096,
            level: 8,
            min_match,
            context_tables: false,
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    (data, packed)
}

#[test]
fn short_minimum_matches_write_their_base() {
    // FORMAT.md §2: base = the minimum match, at most 6
    for (min_match, version, base) in [(4u32, 1u16, 4u8), (5, 1, 5), (6, 1, 6), (9, 1, 6)] {
        let (data, a) = archive_with_min_match(min_match);
        assert_eq!(
            u16::from_le_bytes([a[4], a[5]]),
            version,
            "min match {min_match}"
        );
        assert_eq!(a[H_MATCH_BASE], base, "min match {min_match}");
        assert_eq!(get_u32(&a, H_MIN_MATCH), min_match);
        decodes_to(&a, &data);
    }
    // the base matters: the prose has 4- and 5-byte repeats that base 4 codes
    let (_, a4) = archive_with_min_match(4);
    let (_, a6) = archive_with_min_match(6);
    assert!(a4.len() < a6.len(), "{} >= {}", a4.len(), a6.len());
}

#[test]
fn match_base_is_checked() {
    let (_, a) = archive_with_min_match(4);
    for bad in [0u8, 1, 3, 7, 255] {
        let mut b = a.clone();
        b[H_MATCH_BASE] = bad;
        common::reseal_packed(&mut b);
        assert_eq!(header_field(&b), "match_base", "base {bad}");
    }
    // the minimum match may not lie below the base
    let mut b = a.clone();
    put_u32(&mut b, H_MIN_MATCH, 3);
    common::reseal_packed(&mut b);
    assert_eq!(header_field(&b), "min_match");
    let (_, a6) = archive_with_min_match(6);
    let mut b = a6.clone();
    put_u32(&mut b, H_MIN_MATCH, 5);
    common::reseal_packed(&mut b);
    assert_eq!(header_field(&b), "min_match", "base 6");
}

#[test]
fn a_wrong_match_base_fails_closed() {
    // an archive relabelled with another base parses (the header is consistent) but its
    // matches then have other lengths: every decoder must report an error, never the
    // wrong bytes as right
    let (data, a) = archive_with_min_match(4);
    for base in [5u8, 6] {
        let mut b = a.clone();
        b[H_MATCH_BASE] = base;
        put_u32(&mut b, H_MIN_MATCH, 6);
        common::reseal_packed(&mut b);
        let arc = Archive::parse(&b).expect("a consistent header");
        match decompress(&arc) {
            Err(DecodeError::Block { .. }) | Err(DecodeError::ContentChecksum) => {}
            Ok(out) => panic!("base {base}: decoded {} bytes without an error", out.len()),
            Err(e) => panic!("base {base}: unexpected error {e:?}"),
        }
        assert!(extract(&arc, 0, data.len() as u64).is_err());
    }
}

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

fn cross_hdr(bs: u32, window: u32) -> Hdr {
    let mut h = Hdr::new(0, bs);
    h.flags = 2;
    h.window = window;
    h
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
