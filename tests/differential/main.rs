//! Differential tests: the fast CPU decoders against the reference decoders of the device
//! crate (`aceapex::device::lz::decode_block`, `aceapex::device::rans::decode_slice`) on the
//! same input, block by block (same bytes, or the same status), and whole decodes against
//! region decodes. Buffers are exact-size so ASan sees overruns.
//!
//! - this file: the CPU match layer's batch fast path (host/cpu/lz.rs `fast_batches`) on
//!   hand-made five streams aimed at the batch limits inside whole archives (4 KiB .. 4 MiB
//!   blocks, cross-block windows, group decoding), and encoder archives re-stored raw;
//! - [`match_base`]: the match layer at every match base (4..=6), streams decoded directly
//!   and in archives relabelled to other bases;
//! - [`damaged_archives`]: encoder archives damaged in their slices, entries and table
//!   records, compared block by block.
//!
//! The counts scale with the environment (defaults run in seconds): ATTACK_SEED,
//! ATTACK_ITERS, ATTACK_ROUNDS, ATTACK_BIG_ROUNDS, ATTACK_ENC_ROUNDS, ATTACK_FUZZ_ITERS,
//! ATTACK_CASES.

#[path = "../common/mod.rs"]
mod common;
mod damaged_archives;
mod match_base;

use aceapex::device::format::*;
use aceapex::format::Archive;
use common::attack::*;
use common::{build, Blk, Hdr, Rng};

// ---------------------------------------------------------------------------------------
// whole archives
// ---------------------------------------------------------------------------------------

/// An archive of [`gen_archive`] at base 6: fast and reference paths agree per block, and
/// the whole decode and some extracts equal the reference's output ([`check_whole`]).
fn archive_case(r: &mut Rng, bs: usize, nb: usize, last: usize, cross: bool, mutate_blocks: usize) {
    let (packed, out, all_ok) = gen_archive(r, bs, nb, last, cross, mutate_blocks, MATCH_BASE);
    let what = format!("bs {bs}, cross {cross}");
    compare_archive(&packed, &what);
    check_whole(r, &packed, &out, all_ok, &what);
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
    let mut h = Hdr::new(0, a.header().block_size);
    h.flags = a.header().flags;
    h.window = a.header().window;
    let mut blocks = Vec::new();
    for b in 0..a.block_count() {
        let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        blocks.push(Blk {
            slices: bufs,
            decoded: None,
            lanes: [0; 5],
            lowest: Some(a.entries()[b].lowest_source_block),
            checksum: None,
        });
    }
    (h, blocks)
}

#[test]
fn encoder_blocks_restored_raw_and_damaged() {
    let mut r = Rng(0xA77A_3000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ENC_ROUNDS", 6) as usize {
        let bs = [4096u32, 16384, 65536][round % 3];
        let cross = round / 3 % 2 == 1;
        let n = r.range(50_000, 200_000) as usize;
        let data = text(&mut r, n);
        let opts = aceapex::Settings {
            block_size: bs,
            window: if cross { Some(bs * 4) } else { None },
            level: [1, 5, 9][round % 3],
            ..Default::default()
        };
        let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
        let (h, blocks) = restore_raw(&packed);
        let raw = build(h.clone(), &data, &blocks, None);
        let a = Archive::parse(&raw).unwrap();
        assert!(aceapex::decode::decompress(&a).unwrap() == data);
        for _ in 0..60 {
            let mut bl = blocks.clone();
            for _ in 0..r.range(1, 3) {
                let b = r.below(bl.len() as u64) as usize;
                mutate(&mut r, &mut bl[b].slices);
            }
            // the checksums stay those of the original data (build): blocks the mutation
            // leaves decodable to other bytes fail with Checksum on both paths
            let bad = build(h.clone(), &data, &bl, None);
            compare_archive(&bad, &format!("encoder archive, bs {bs}, cross {cross}"));
        }
    }
}
