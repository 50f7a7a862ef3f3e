//! What two-bit literal slices whose exceptions are *runs* (FORMAT.md §5.8) give an archive
//! written without them, block by block.
//!
//! A two-bit literal slice (FORMAT.md §5.7) codes every literal in two bits and lists the
//! literals that are none of its four bytes one by one, a byte or more each: a FASTA line feed
//! every 61 bytes, every soft-masked (lower-case) base, every N. A slice with runs lists them
//! as arithmetic progressions of positions with one value (the line feeds of a stretch of
//! literals are one entry, an N run one entry), lower-case letters as intervals over the
//! upper-case codes, and codes only the literals that are not exceptions. Per block of each
//! archive it writes that slice (`encode::runs`), checks that it decodes to the block's
//! literals (`device::two_bit::decode_runs`), and prints, per archive: blocks whose slice it
//! would replace under the encoder's rule for two-bit slices (at most `1 / TWO_BIT_MAX_LOSS`
//! longer, `encode::TWO_BIT_MAX_LOSS`), how many of all blocks would then need no rANS stage
//! (raw match streams and a two-bit slice: `--target gpu` archives), and the archive's ratio
//! with them.
//!
//!     cargo run --release --example two_bit_runs -- ARCHIVE.acx...

use aceapex::decode::streams::{decode_streams, Scratch};
use aceapex::device::format::{LANES_RAW, STREAM_COUNT, STREAM_LITERALS};
use aceapex::encode::TWO_BIT_MAX_LOSS;
use aceapex::format::Archive;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() || paths.iter().any(|p| p == "-h" || p == "--help") {
        eprintln!("usage: two_bit_runs ARCHIVE.acx...");
        std::process::exit(2);
    }
    for path in &paths {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let a = Archive::parse(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut scratch = Scratch::default();
        let (mut saved, mut taken, mut own_now, mut own_then) = (0i64, 0usize, 0usize, 0usize);
        for b in 0..a.entries().len() {
            let e = &a.entries()[b];
            let raw_match = (0..STREAM_COUNT)
                .filter(|&k| k != STREAM_LITERALS)
                .all(|k| e.lanes[k] == LANES_RAW);
            let two_bit = e.lanes[STREAM_LITERALS] == aceapex::device::format::LANES_TWO_BIT;
            let stored = e.stored_len[STREAM_LITERALS] as u64;
            let n = e.decoded_len[STREAM_LITERALS] as usize;
            let runs = match n {
                0 => u64::MAX,
                _ => {
                    let s = decode_streams(&a, b, &mut scratch)
                        .unwrap_or_else(|st| panic!("{path}: block {b}: {st:?}"));
                    let lits = &s.literals.data()[..n];
                    let mut slice = Vec::new();
                    match aceapex::encode::runs::encode_two_bit_runs(lits, &mut slice) {
                        Some(len) => {
                            let mut back = vec![0; n];
                            aceapex::device::two_bit::decode_runs(&slice, &mut back)
                                .unwrap_or_else(|st| panic!("{path}: block {b}: {st:?}"));
                            assert!(back == lits, "{path}: block {b}: not restored");
                            len as u64
                        }
                        None => u64::MAX,
                    }
                }
            };
            // the encoder's rule for a two-bit slice: at most 1 / TWO_BIT_MAX_LOSS longer
            let take = runs <= stored + stored / TWO_BIT_MAX_LOSS as u64;
            if take {
                taken += 1;
                saved += stored as i64 - runs as i64;
            }
            own_now += (raw_match && two_bit) as usize;
            own_then += (raw_match && (two_bit || take)) as usize;
        }
        let size = a.header().original_size as f64;
        println!(
            "{path}: {} blocks; slice with runs taken in {taken}; blocks needing no rANS stage {own_now} -> {own_then}; ratio {:.3} -> {:.3}",
            a.entries().len(),
            size / bytes.len() as f64,
            size / (bytes.len() as i64 - saved) as f64
        );
    }
}
