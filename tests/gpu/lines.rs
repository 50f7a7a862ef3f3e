//! Line layouts (FORMAT.md §4.6) on the GPU: FASTA of several line widths and line ends,
//! compressed with layouts under the default target and with the self-contained blocks of
//! `--target gpu` (two-bit literals, raw match streams), decoded by the dense pipe, the lane
//! kernel and the sequential-parse stage (which hands layout blocks to the lane kernel), and
//! read back by random ranges and whole tiles through the seek, every output poisoned first
//! and compared with the original; the wavefront decoder refuses such archives.

use super::*;
use aceapex::gpu::GpuError;

/// FASTA of `seqs` sequences of lines of `width` bases ended by `end`: repeats with point
/// changes, runs of N, a soft-masked stretch now and then, and a short last line per
/// sequence (the line ends a layout leaves out, and the ones it keeps).
fn fasta(seed: u64, width: usize, end: &[u8], seqs: &[usize]) -> Vec<u8> {
    let mut r = aceapex::gpu::tokens::Rng::new(seed);
    let mut out = Vec::new();
    for (i, &len) in seqs.iter().enumerate() {
        out.extend_from_slice(format!(">seq{i} width {width}").as_bytes());
        out.extend_from_slice(end);
        let mut bases: Vec<u8> = Vec::with_capacity(len);
        while bases.len() < len {
            match r.below(1500) {
                0 if bases.len() > 1000 => {
                    let from = r.below(bases.len() as u64 - 800) as usize;
                    let n = (200 + r.below(600) as usize).min(len - bases.len());
                    for k in 0..n {
                        let b = bases[from + k];
                        bases.push(if r.below(60) == 0 {
                            b"ACGT"[r.below(4) as usize]
                        } else {
                            b
                        });
                    }
                }
                1 => bases.extend(std::iter::repeat_n(
                    b'N',
                    (1 + r.below(300) as usize).min(len - bases.len()),
                )),
                2 => {
                    for _ in 0..(1 + r.below(200) as usize).min(len - bases.len()) {
                        bases.push(b"acgt"[r.below(4) as usize]);
                    }
                }
                _ => bases.push(b"ACGT"[r.below(4) as usize]),
            }
        }
        for line in bases.chunks(width) {
            out.extend_from_slice(line);
            out.extend_from_slice(end);
        }
    }
    out
}

/// The inputs: widths 50 to 80 and 120, `\n` and `\r\n`, one and many sequences.
fn inputs() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "60 LF".into(),
            fasta(1, 60, b"\n", &[700_000, 123_457, 90_001]),
        ),
        ("70 LF".into(), fasta(2, 70, b"\n", &[500_003])),
        ("80 CRLF".into(), fasta(3, 80, b"\r\n", &[300_000, 200_000])),
        ("50 LF, many".into(), fasta(4, 50, b"\n", &[9_000; 40])),
        ("120 LF".into(), fasta(5, 120, b"\n", &[400_000])),
    ]
}

/// The settings: the default target's (16 and 4 KiB blocks) and the GPU target's
/// self-contained blocks, each with line layouts.
fn settings() -> Vec<(&'static str, Settings)> {
    let gpu = aceapex::Options::new()
        .with_target(aceapex::Target::Gpu)
        .settings();
    vec![
        ("size 16K", aceapex::Options::new().settings()),
        (
            "size 4K",
            aceapex::Options::new().with_block_size(4096).settings(),
        ),
        (
            "gpu 16K",
            Settings {
                line_layout: true,
                ..gpu
            },
        ),
    ]
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn line_layouts_decode_bit_exact_on_every_gpu_path() {
    let g = gpu();
    for (name, data) in inputs() {
        for (sname, s) in settings() {
            let what = format!("{name}, {sname}");
            let packed = compress_settings(&data, &s, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            assert!(a.has_line_layouts(), "{what}: no layout");
            for d in [
                decoder::Decoder::Dense,
                decoder::Decoder::Lane,
                decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
            ] {
                let out = decoder::decompress_with(&g, &a, d)
                    .unwrap_or_else(|e| panic!("{what} {d:?}: {e}"));
                assert!(
                    out == data,
                    "{what} {d:?}: GPU output differs from the original"
                );
            }
            match decoder::decompress_with(&g, &a, decoder::Decoder::Wavefront) {
                Err(GpuError::Unsupported(_)) => {}
                other => panic!(
                    "{what}: the wavefront decoder gave {:?}",
                    other.map(|v| v.len())
                ),
            }
            let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
            let bs = s.block_size as u64;
            let ranges = random_ranges(data.len() as u64, bs, 300, 17);
            let total: u64 = ranges.iter().map(|r| r.1).sum();
            let mut out = g.alloc_filled(total as usize, 0xA5).unwrap();
            for overlap in [true, false] {
                ga.set_overlap(overlap);
                let w = format!("{what}: ranges, overlap {overlap}");
                read_checked(&g, &ga, &mut out, &ranges, &data, s.block_size, &w);
            }
            ga.set_overlap(true);
            // every block as a tile (a direct request), then the first and last alone
            let n = data.len() as u64;
            let tiles: Vec<(u64, u64)> = (0..n.div_ceil(bs))
                .map(|b| (b * bs, bs.min(n - b * bs)))
                .collect();
            let mut tiled = g.alloc_filled(n as usize, 0xA5).unwrap();
            read_checked(
                &g,
                &ga,
                &mut tiled,
                &tiles,
                &data,
                s.block_size,
                &format!("{what}: tiles"),
            );
            for t in [tiles[0], *tiles.last().unwrap()] {
                read_checked(
                    &g,
                    &ga,
                    &mut tiled,
                    &[t],
                    &data,
                    s.block_size,
                    &format!("{what}: tile {t:?}"),
                );
            }
        }
    }
}

/// Without a GPU too: the inputs take layouts in most blocks under every setting, and the
/// GPU target's archives have self-contained blocks with layouts (so the dense kernel's
/// own-block path meets them).
#[test]
pub(crate) fn line_layout_inputs_reach_every_path() {
    use aceapex::device::format::{LANES_RAW, LANES_TWO_BIT_RUNS, STREAM_COMMANDS};
    for (name, data) in inputs() {
        for (sname, s) in settings() {
            let packed = compress_settings(&data, &s, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            let mut with = 0;
            let mut own = 0;
            let mut bufs: [Vec<u8>; 5] = Default::default();
            for b in 0..a.block_count() {
                aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
                if bufs[STREAM_COMMANDS][0] != 0xFF {
                    with += 1;
                    let e = &a.entries()[b];
                    let two_bit = matches!(e.lanes[0], LANES_TWO_BIT | LANES_TWO_BIT_RUNS);
                    if two_bit && e.lanes[1..].iter().all(|&l| l == LANES_RAW) {
                        own += 1;
                    }
                }
            }
            assert!(
                with * 10 >= a.block_count() * 8,
                "{name}, {sname}: {with} of {} blocks with a layout",
                a.block_count()
            );
            if sname.starts_with("gpu") {
                assert!(
                    own * 2 >= with,
                    "{name}, {sname}: {own} of {with} self-contained"
                );
            }
        }
    }
}
