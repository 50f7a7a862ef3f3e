//! Attack on the CPU match layer's batch fast path (host/cpu/lz.rs `fast_batches`): the fast
//! decoder against the reference (`aceapex::device::lz::decode_block`) on hand-made five
//! streams aimed at the batch limits, directly and inside whole archives (4 KiB .. 4 MiB
//! blocks, cross-block windows, group decoding). Buffers are exact-size so ASan sees overruns.

mod common;

use aceapex::archive::Archive;
use aceapex::device::format::*;
use aceapex::device::lz::{self as ref_lz, BlockFrame, BlockStreams};
use aceapex::DecodeError;
use common::{build, Blk, Hdr, Rng};

use common::attack::*;

#[test]
fn direct_valid_short_blocks() {
    direct(
        0xA77A_0001 + env("ATTACK_SEED", 0),
        env("ATTACK_ITERS", 40_000) as usize,
        60,
        0,
        &[MATCH_BASE],
        false,
    );
}

#[test]
fn direct_valid_long_blocks() {
    direct(
        0xA77A_0002 + env("ATTACK_SEED", 0),
        env("ATTACK_ITERS", 40_000) as usize / 10,
        3000,
        0,
        &[MATCH_BASE],
        false,
    );
}

#[test]
fn direct_mutated_blocks() {
    direct(
        0xA77A_0003 + env("ATTACK_SEED", 0),
        env("ATTACK_ITERS", 40_000) as usize,
        400,
        100,
        &[MATCH_BASE],
        false,
    );
}

// ---------------------------------------------------------------------------------------
// whole archives
// ---------------------------------------------------------------------------------------

/// Builds an archive of `nb` blocks of `bs` bytes (the last `last` bytes long), cross-block
/// when `cross` (window `window`, lowest source block up to 3 back); blocks made valid with
/// the reference decoding them in order; then `mutate_blocks` of them damaged (checksums
/// stay those of the reference's output on the damaged streams when it succeeds).
fn archive_case(r: &mut Rng, bs: usize, nb: usize, last: usize, cross: bool, mutate_blocks: usize) {
    let total = bs * (nb - 1) + last;
    let mut out = vec![0u8; total];
    let window = if cross {
        r.pick(&[u32::MAX, (bs * 4) as u32])
    } else {
        bs as u32
    };
    let mut blocks = Vec::new();
    let mut sums = Vec::new();
    for i in 0..nb {
        let len = if i + 1 == nb { last } else { bs };
        let lowest = if cross {
            i - r.below(i as u64 + 1).min(3) as usize
        } else {
            i
        };
        let room = if cross {
            ((i - lowest) * bs).min(window as usize)
        } else {
            0
        };
        let (mut s, _) = gen_block(r, room, 0, Some(len), true, MATCH_BASE);
        if mutate_blocks > 0 && r.below(nb as u64) < mutate_blocks as u64 {
            mutate(r, &mut s);
        }
        let frame = BlockFrame {
            dst_start: i * bs,
            dst_end: i * bs + len,
            src_floor: lowest * bs,
            window,
            match_base: MATCH_BASE,
        };
        let rs = BlockStreams::from_slices(s.each_ref().map(|v| v.as_slice()));
        let st = ref_lz::decode_block(rs, &mut out, &frame);
        sums.push(st);
        blocks.push(Blk {
            slices: s,
            decoded: None,
            lanes: [0; 5],
            lowest: Some(lowest as u32),
            checksum: None,
        });
    }
    let mut h = Hdr::new(0, bs as u32);
    if cross {
        h.flags = 2;
        h.window = window;
    }
    let packed = build(h, &out, &blocks, None);
    compare_archive(&packed, cross, &format!("bs {bs}, cross {cross}"));
    let all_ok = sums.iter().all(|s| s.is_ok());
    let a = Archive::parse(&packed).unwrap();
    let whole = aceapex::decompress(&a);
    if all_ok {
        assert!(
            whole.as_deref().ok() == Some(&out[..]),
            "decompress differs: {:?}",
            whole.err()
        );
        for _ in 0..3 {
            let off = r.below(total as u64);
            let len = r.below(total as u64 - off + 1);
            let got = aceapex::extract(&a, off, len).unwrap();
            assert!(got[..] == out[off as usize..(off + len) as usize]);
        }
    } else {
        assert!(whole.is_err(), "a block the reference rejects decoded Ok");
    }
}

#[test]
fn archives_small_blocks() {
    let mut r = Rng(0xA77A_1000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ROUNDS", 60) {
        let bs = r.pick(&[4096usize, 4096, 16384, 65536]);
        let nb = r.range(1, 20) as usize;
        let rr = r.range(1, bs as u64) as usize;
        let last = r.pick(&[bs, bs, rr, 1024, 33, 195 + 32]);
        let cross = round % 2 == 1;
        let m = [0, 0, 1, 3][r.below(4) as usize];
        archive_case(&mut r, bs, nb, last, cross, m);
    }
}

#[test]
fn archives_4mib_blocks() {
    let mut r = Rng(0xA77A_2000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_BIG_ROUNDS", 3) {
        let bs = 4 << 20;
        let nb = r.range(1, 2) as usize;
        let rr = r.range(1, bs as u64) as usize;
        let last = r.pick(&[bs, rr]);
        archive_case(&mut r, bs, nb, last, round % 2 == 1, (round == 2) as usize);
    }
}

// ---------------------------------------------------------------------------------------
// encoder archives re-stored raw (text-like dense blocks), then damaged at the match layer
// ---------------------------------------------------------------------------------------

fn restore_raw(packed: &[u8]) -> (Hdr, Vec<Blk>) {
    let a = Archive::parse(packed).unwrap();
    let mut h = Hdr::new(0, a.header.block_size);
    h.flags = a.header.flags;
    h.window = a.header.window;
    let mut blocks = Vec::new();
    for b in 0..a.block_count() {
        let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        blocks.push(Blk {
            slices: bufs,
            decoded: None,
            lanes: [0; 5],
            lowest: Some(a.entries[b].lowest_source_block),
            checksum: None,
        });
    }
    (h, blocks)
}

/// Every block of `packed` decoded by the fast and the reference path: same bytes or the
/// same status. (`what` names the case in the messages.)
fn compare_archive(packed: &[u8], cross: bool, what: &str) {
    let fast = per_block(packed, true);
    let reference = per_block(packed, false);
    for (b, (f, rf)) in fast.iter().zip(&reference).enumerate() {
        // a failed block's bytes are unspecified: with cross-block sources, later blocks may
        // read them, so compare only up to the first failure
        if cross && b > 0 && (fast[b - 1].is_err() || reference[b - 1].is_err()) {
            break;
        }
        match (f, rf) {
            (Ok(x), Ok(y)) => assert!(x == y, "block {b}: bytes differ ({what})"),
            (
                Err(DecodeError::Block { status: sf, .. }),
                Err(DecodeError::Block { status: sr, .. }),
            ) => {
                assert_eq!(sf, sr, "block {b}: status differs ({what})")
            }
            _ => panic!("block {b}: fast {f:?} vs reference {rf:?}"),
        }
    }
}

#[test]
fn encoder_blocks_restored_raw_and_damaged() {
    let mut r = Rng(0xA77A_3000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ENC_ROUNDS", 6) as usize {
        let bs = [4096u32, 16384, 65536][round % 3];
        let cross = round / 3 % 2 == 1;
        let n = r.range(50_000, 200_000) as usize;
        let data = text(&mut r, n);
        let opts = aceapex::EncodeOptions {
            block_size: bs,
            window: if cross { Some(bs * 4) } else { None },
            level: [1, 5, 9][round % 3],
            ..Default::default()
        };
        let packed = aceapex::compress(&data, &opts, &|_| {}).unwrap();
        let (h, blocks) = restore_raw(&packed);
        let raw = build(h.clone(), &data, &blocks, None);
        let a = Archive::parse(&raw).unwrap();
        assert!(aceapex::decompress(&a).unwrap() == data);
        for _ in 0..60 {
            let mut bl = blocks.clone();
            for _ in 0..r.range(1, 3) {
                let b = r.below(bl.len() as u64) as usize;
                mutate(&mut r, &mut bl[b].slices);
            }
            // the checksums stay those of the original data (build): blocks the mutation
            // leaves decodable to other bytes fail with Checksum on both paths
            let bad = build(h.clone(), &data, &bl, None);
            compare_archive(
                &bad,
                cross,
                &format!("encoder archive, bs {bs}, cross {cross}"),
            );
        }
    }
}
