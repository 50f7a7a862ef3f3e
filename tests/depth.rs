//! The encoder's dependency depths (block table `max_depth`, FORMAT.md §3.1) against levels
//! recomputed here from the decoded commands, independently of the encoder: for every block,
//! the largest level of its matches, where a match's level is 0 when the first
//! `min(len, dist)` bytes it reads are literals and otherwise one more than the largest level
//! of the matches that wrote them. The wavefront GPU decoder sizes its launches from these
//! fields, so an understated depth costs it a second decode.

use aceapex::device::lz::{BlockStreams, Command, Parser};
use aceapex::encode::{compress_settings, Settings};
use aceapex::format::Archive;

/// Per block: the largest recomputed level (0 without matches).
fn recomputed_depths(a: &Archive<'_>, n: usize) -> Vec<u32> {
    // per output byte: 0 = literal, else level + 1 of the match that wrote it
    let mut val = vec![0u32; n];
    let mut bufs: [Vec<u8>; aceapex::device::format::STREAM_COUNT] = Default::default();
    let mut depths = Vec::new();
    for b in 0..a.block_count() {
        aceapex::decode::decode_streams(a, b, &mut bufs).unwrap();
        let s = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
        let mut p = Parser::new(s, a.header().match_base());
        let mut cur = a.block_range(b).start as usize;
        let mut depth = 0;
        while let Some(c) = p.next_command().unwrap() {
            match c {
                Command::Literals(k) => {
                    val[cur..cur + k as usize].fill(0);
                    cur += k as usize;
                }
                Command::Match { dist, len } => {
                    let src = cur - dist as usize;
                    let read = len.min(dist) as usize;
                    let lvl = val[src..src + read].iter().copied().max().unwrap();
                    depth = depth.max(lvl);
                    val[cur..cur + len as usize].fill(lvl + 1);
                    cur += len as usize;
                }
                Command::Reset => {}
            }
        }
        depths.push(depth);
    }
    depths
}

#[test]
fn block_table_depths_equal_the_recomputed_levels() {
    let mut r = aceapex::gpu::tokens::Rng::new(11);
    let words = [
        "the ", "whale ", "sea ", "ship ", "Ahab ", "and ", "of ", "a ", "white ", "\n",
    ];
    let text: Vec<u8> = (0..400_000)
        .flat_map(|_| words[r.below(10) as usize].bytes().collect::<Vec<_>>())
        .collect();
    let dna: Vec<u8> = (0..600_000u64)
        .map(|i| b"ACGT"[((i * i / 7) % 4) as usize])
        .collect();
    for (name, data) in [("text-like", &text), ("dna-like", &dna)] {
        for level in [1, 5, 6, 9] {
            for (block_size, window) in [
                (16384u32, None),
                (4096, Some(65536u32)),
                (16384, Some(1 << 20)),
            ] {
                let opts = Settings {
                    level,
                    block_size,
                    window,
                    ..Default::default()
                };
                let packed = compress_settings(data, &opts, &|_| {}).unwrap();
                let a = Archive::parse(&packed).unwrap();
                let table: Vec<u32> = a.entries().iter().map(|e| e.max_depth).collect();
                let got = recomputed_depths(&a, data.len());
                assert_eq!(
                    table, got,
                    "{name} level {level} block {block_size} window {window:?}: block table max_depth differs from the levels of the decoded commands"
                );
            }
        }
    }
}

/// The text-like sample of the GPU tests (tests/gpu.rs `sample_inputs`), whose cross-block
/// archive once made the wavefront report an understated depth.
#[test]
fn gpu_sample_text_depths_equal_the_recomputed_levels() {
    let mut r = aceapex::gpu::tokens::Rng::new(7);
    for i in 0..3_000_000 {
        if (i / 5000) % 7 != 3 {
            r.below(8);
        }
    }
    let words = [
        "the ", "whale ", "sea ", "ship ", "Ahab ", "and ", "of ", "a ", "white ", "\n",
    ];
    let text: Vec<u8> = (0..2_000_000)
        .flat_map(|_| words[r.below(10) as usize].bytes().collect::<Vec<_>>())
        .collect();
    let opts = Settings {
        block_size: 4096,
        window: Some(65536),
        ..Default::default()
    };
    let packed = compress_settings(&text, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    let table: Vec<u32> = a.entries().iter().map(|e| e.max_depth).collect();
    let got = recomputed_depths(&a, text.len());
    let first = table.iter().zip(&got).position(|(x, y)| x != y);
    assert_eq!(
        first,
        None,
        "first differing block (table vs recomputed): {:?}",
        first.map(|i| (i, table[i], got[i]))
    );
}
