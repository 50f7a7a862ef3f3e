//! Two-bit literal slices with runs (FORMAT.md §5.8) on the GPU: the dense kernel's expansion
//! (`expand_own_runs`), the rANS stage's hand-back to the lane kernel, and the seek, against
//! the original and the CPU decoder.

use super::*;
use aceapex::device::format::LANES_TWO_BIT_RUNS;
use aceapex::Options;

/// FASTA of `width` bases a line (a header per 1,000 lines), with soft-masked stretches
/// (lower case, some across line ends), runs of `N` (some lower case) and stray IUPAC
/// letters: the cases of §5.8's runs and intervals.
pub(crate) fn fasta_with_runs(width: usize, lines: usize, seed: u64) -> Vec<u8> {
    let mut r = aceapex::gpu::tokens::Rng::new(seed);
    let mut out = Vec::new();
    let (mut lower, mut ns) = (0usize, 0usize);
    for line in 0..lines {
        if line % 1000 == 0 {
            out.extend_from_slice(format!(">seq{line} test sequence\n").as_bytes());
        }
        for _ in 0..width {
            if lower == 0 && r.below(400) == 0 {
                lower = 1 + r.below(300) as usize;
            }
            if ns == 0 && r.below(3000) == 0 {
                ns = 1 + r.below(500) as usize;
            }
            let mut b = match (ns > 0, r.below(2000)) {
                (true, _) => b'N',
                (false, 0) => b"RYKMSW"[r.below(6) as usize],
                _ => b"ACGT"[r.below(4) as usize],
            };
            if lower > 0 {
                b = b.to_ascii_lowercase();
            }
            lower = lower.saturating_sub(1);
            ns = ns.saturating_sub(1);
            out.push(b);
        }
        out.push(b'\n');
    }
    out
}

/// `--target gpu` archives of FASTA with runs (three line widths, soft masks, `N` runs)
/// take slices with runs in most blocks, and every GPU path restores them: the dense kernel
/// alone or beside the rANS stage, with and without the overlap; with the self-contained
/// path off (the rANS stage hands those blocks to the lane kernel); the lane kernel alone;
/// and the seek's random ranges. Outputs poisoned first; statuses checked per block.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn slices_with_runs_decode_on_every_gpu_path() {
    let g = gpu();
    for (width, seed) in [(60usize, 1u64), (70, 2), (50, 3)] {
        let data = fasta_with_runs(width, 40_000, seed);
        let opts = Options::new().with_target(aceapex::Target::Gpu);
        let packed = aceapex::compress(&data, &opts).unwrap();
        let a = Archive::parse(&packed).unwrap();
        assert!(
            aceapex::decode::decompress(&a).unwrap() == data,
            "width {width}: CPU"
        );
        let runs = (a.entries().iter())
            .filter(|e| e.lanes[0] == LANES_TWO_BIT_RUNS)
            .count();
        assert!(
            runs * 10 >= a.block_count() * 9,
            "width {width}: {runs} of {} blocks with runs",
            a.block_count()
        );
        let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
        assert!(ga.self_contained_blocks() as usize >= runs, "width {width}");
        super::fail_closed::dense_decodes_every_way(&g, &ga, &a, &data, &format!("width {width}"));
        for d in [decoder::Decoder::Dense, decoder::Decoder::Lane] {
            let got = decoder::decompress_with(&g, &a, d).unwrap();
            assert!(got == data, "width {width}: {d:?} differs");
        }
        assert!(
            decoder::decompress_with(&g, &a, decoder::Decoder::Wavefront).is_err(),
            "width {width}: the wavefront refuses slices with runs"
        );
        let ranges = super::seek::random_ranges(data.len() as u64, 16384, 500, seed);
        let total: u64 = ranges.iter().map(|r| r.1).sum();
        let mut got = g.alloc_filled(total as usize, 0xA5).unwrap();
        let found = ga.read_ranges(&g, &ranges, &mut got).unwrap();
        let host = g.download(&got).unwrap();
        let mut at = 0usize;
        for (i, (&(off, len), st)) in ranges.iter().zip(&found).enumerate() {
            assert!(
                matches!(st, aceapex::gpu::seek::RangeStatus::Ok),
                "width {width}: range {i}"
            );
            assert!(
                host[at..at + len as usize] == data[off as usize..(off + len) as usize],
                "width {width}: range {i} ({off}+{len}) differs"
            );
            at += len as usize;
        }
    }
}

/// Bit flips inside slices with runs (the head, the runs' values and varints, the intervals,
/// the codes) fail closed on the GPU decoders that read them: an error, or the original.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn slices_with_runs_fail_closed_on_corrupt_bytes() {
    let g = gpu();
    let data = fasta_with_runs(60, 6_000, 7);
    let opts = Options::new().with_target(aceapex::Target::Gpu);
    let packed = aceapex::compress(&data, &opts).unwrap();
    let a = Archive::parse(&packed).unwrap();
    let slices: Vec<(usize, usize)> = (0..a.block_count())
        .filter(|&b| a.entries()[b].lanes[0] == LANES_TWO_BIT_RUNS)
        .map(|b| {
            let at = a.data_offset() as usize + a.block_offsets()[b] as usize;
            (at, a.entries()[b].stored_len[0] as usize)
        })
        .collect();
    assert!(slices.len() >= 10, "{} slices with runs", slices.len());
    let mut r = aceapex::gpu::tokens::Rng::new(17);
    let (mut tried, mut failed) = (0, 0);
    for &(at, len) in slices.iter().take(24) {
        // the head's bytes more often than the codes' (where a flip is a wrong base, which
        // the block checksum catches)
        for k in 0..12 {
            let off = if k < 8 {
                r.below(len.min(64) as u64) as usize
            } else {
                r.below(len as u64) as usize
            };
            let mut bad = packed.clone();
            bad[at + off] ^= 1 << r.below(8);
            // (a flip the meta checksum does not cover: the data section)
            let Ok(b) = Archive::parse(&bad) else {
                continue;
            };
            tried += 1;
            failed += super::fail_closed::failures_of_flip(
                &g,
                &b,
                &data,
                &[decoder::Decoder::Dense, decoder::Decoder::Lane],
                at + off,
            );
        }
    }
    assert!(tried >= 200, "{tried} flips tried");
    assert!(failed > tried / 2, "{failed} of {tried} decodes failed");
}
