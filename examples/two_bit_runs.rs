//! What two-bit literal slices whose exceptions are *runs* would give an archive: the design
//! measured before it is built (the slice form is not in FORMAT.md).
//!
//! A two-bit literal slice (FORMAT.md §5.7) codes every literal in two bits and lists the
//! literals that are none of its four bytes one by one, a byte or more each: a FASTA line feed
//! every 61 bytes, every soft-masked (lower-case) base, every N. The form measured here lists
//! them as runs instead: an arithmetic progression of positions with one value (first
//! position, stride, count, value: the line feeds of a stretch of literals are one entry, an N
//! run one entry), lower-case letters as intervals over the upper-case codes, and codes only
//! for the literals that are not exceptions. Per block of each archive it prices that slice
//! (four symbol bytes; varints for counts, gaps, strides and lengths; a byte a value) against
//! the literal slice the archive stores, and prints, per archive: blocks whose slice it would
//! replace under the encoder's rule for two-bit slices (at most `1 / TWO_BIT_MAX_LOSS` longer,
//! `encode::TWO_BIT_MAX_LOSS`), how many of all blocks would then need no rANS stage (raw
//! match streams and a two-bit slice: `--target gpu` archives), and the archive's ratio
//! with them.
//!
//!     cargo run --release --example two_bit_runs -- ARCHIVE.acx...

use aceapex::decode::streams::{decode_streams, Scratch};
use aceapex::device::format::{LANES_RAW, STREAM_COUNT, STREAM_LITERALS};
use aceapex::encode::TWO_BIT_MAX_LOSS;
use aceapex::format::Archive;

/// Bytes of `v` as a LEB128 varint (FORMAT.md §4.2's encoding).
fn varint_len(v: u64) -> u64 {
    (64 - v.max(1).leading_zeros() as u64).div_ceil(7)
}

/// Bytes of the slice with runs for `lits` (see the file's header).
fn runs_slice_len(lits: &[u8]) -> u64 {
    let n = lits.len();
    // lower-case letters: intervals, gap from the end of the one before, and length
    let mut case = 0u64;
    let (mut runs, mut end, mut i) = (0u64, 0usize, 0usize);
    while i < n {
        if lits[i].is_ascii_lowercase() {
            let s = i;
            while i < n && lits[i].is_ascii_lowercase() {
                i += 1;
            }
            case += varint_len((s - end) as u64) + varint_len((i - s) as u64);
            runs += 1;
            end = i;
        } else {
            i += 1;
        }
    }
    let folded: Vec<u8> = lits.iter().map(u8::to_ascii_uppercase).collect();
    let mut hist = [0u64; 256];
    for &b in &folded {
        hist[b as usize] += 1;
    }
    let mut order: Vec<usize> = (0..256).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(hist[b]), b));
    let mut is_sym = [false; 256];
    for &b in &order[..4] {
        is_sym[b] = true;
    }
    // exceptions by value, each value's positions cut into arithmetic progressions
    let mut by_value: Vec<Vec<usize>> = vec![Vec::new(); 256];
    for (p, &b) in folded.iter().enumerate() {
        if !is_sym[b as usize] {
            by_value[b as usize].push(p);
        }
    }
    let mut entries: Vec<(usize, usize, usize)> = Vec::new(); // (first, stride, count)
    let mut exceptions = 0usize;
    for ps in by_value.iter().filter(|v| !v.is_empty()) {
        exceptions += ps.len();
        let mut k = 0;
        while k < ps.len() {
            if k + 1 == ps.len() {
                entries.push((ps[k], 1, 1));
                break;
            }
            let stride = ps[k + 1] - ps[k];
            let mut j = k + 1;
            while j + 1 < ps.len() && ps[j + 1] - ps[j] == stride {
                j += 1;
            }
            entries.push((ps[k], stride, j - k + 1));
            k = j + 1;
        }
    }
    entries.sort_unstable();
    let mut prev = 0usize;
    let mut listed = 0u64;
    for &(first, stride, count) in &entries {
        listed += varint_len((first - prev) as u64)
            + varint_len(stride as u64)
            + varint_len(count as u64)
            + 1;
        prev = first;
    }
    let codes = (n - exceptions).div_ceil(4) as u64;
    4 + varint_len(entries.len() as u64) + listed + varint_len(runs) + case + codes
}

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
                    runs_slice_len(&s.literals.data()[..n])
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
