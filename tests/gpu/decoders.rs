//! Whole decoders, bit-exact against the original and the CPU decoder on the sample inputs
//! and encoder settings, with either staging of the context pairs and packed tables.

#[allow(unused_imports)]
use super::*;

pub(crate) fn sample_inputs() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    let mut r = aceapex::gpu::tokens::Rng::new(7);
    let dna: Vec<u8> = (0..3_000_000)
        .map(|i| {
            if (i / 5000) % 7 == 3 {
                b'N'
            } else {
                b"ACGTacgt"[r.below(8) as usize]
            }
        })
        .collect();
    v.push(("dna-like".into(), dna));
    // soft-masked: case in runs, so the literal stream takes context tables (FORMAT.md §5.4)
    let mut lower = false;
    let masked: Vec<u8> = (0..2_000_000)
        .map(|i| {
            if r.below(300) == 0 {
                lower = !lower;
            }
            let b = if i % 61 == 60 {
                b'\n'
            } else {
                b"ACGT"[r.below(4) as usize]
            };
            if lower {
                b.to_ascii_lowercase()
            } else {
                b
            }
        })
        .collect();
    v.push(("soft-masked".into(), masked));
    // upper-case FASTA with line feeds every 61 bytes, runs of N and a lone IUPAC code now and
    // then: the exceptions of two-bit literal slices (FORMAT.md §5.7); an odd length, so the
    // last block's codes end inside a byte
    let fasta: Vec<u8> = (0..1_500_003)
        .map(|i| match i {
            _ if i % 61 == 60 => b'\n',
            _ if (i / 3000) % 11 == 5 && i % 3000 < 200 => b'N',
            _ if r.below(5000) == 0 => b'R',
            _ => b"ACGT"[r.below(4) as usize],
        })
        .collect();
    v.push(("fasta".into(), fasta));
    let words = [
        "the ", "whale ", "sea ", "ship ", "Ahab ", "and ", "of ", "a ", "white ", "\n",
    ];
    let text: Vec<u8> = (0..2_000_000)
        .flat_map(|_| words[r.below(10) as usize].bytes().collect::<Vec<_>>())
        .collect();
    v.push(("text-like".into(), text));
    let rnd: Vec<u8> = (0..100_000).map(|_| r.next_u64() as u8).collect();
    v.push(("random".into(), rnd));
    v.push(("one byte".into(), vec![42]));
    v.push(("deep chains".into(), deep_chains()));
    v.push((
        "period runs".into(),
        (0..500_000u32).map(|i| (i % 97 % 13) as u8).collect(),
    ));
    // short tokens: new matches near and beyond the dense kernel's distance cap
    for (len, kinds) in TOKEN_SAMPLES {
        v.push((format!("{len}-byte tokens"), tokens(len, kinds)));
    }
    // real corpora when the bundle carries them (scripts/gpu-bundle.sh)
    if let Ok(dir) = std::env::var("ACEAPEX_TEST_CORPORA") {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if let Ok(b) = std::fs::read(e.path()) {
                    v.push((e.path().display().to_string(), b));
                }
            }
        }
    }
    v
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn gpu_decoders_are_bit_exact_against_original_and_cpu() {
    let g = gpu();
    for (name, data) in sample_inputs() {
        for (block_size, min_match, opts) in sample_options() {
            let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            let cpu = aceapex::decode::decompress(&a).unwrap();
            for d in [
                decoder::Decoder::Dense,
                decoder::Decoder::Lane,
                decoder::Decoder::Wavefront,
                // the dense pipe with the sequential one-lane parse (parse comparison)
                decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
            ] {
                let raw = opts.raw_match_streams;
                let gpu = decoder::decompress_with(&g, &a, d).unwrap_or_else(|e| {
                    panic!("{name} bs {block_size} mm {min_match} raw {raw} {d:?}: {e}")
                });
                assert!(
                    gpu == data,
                    "{name} bs {block_size} mm {min_match} raw {raw} {d:?}: GPU output differs from the original"
                );
                assert!(
                    gpu == cpu,
                    "{name} bs {block_size} mm {min_match} raw {raw} {d:?}: GPU output differs from the CPU decoder"
                );
            }
        }
    }
}

/// A context archive (FORMAT.md §5.4) decodes the same with the pairs' second tables staged in
/// shared memory and read from global memory (`GpuTuning::stage_pair_tables`), every decoder.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn context_pairs_decode_staged_and_unstaged() {
    let samples = sample_inputs();
    let data = &samples.iter().find(|(n, _)| n == "soft-masked").unwrap().1;
    for level in [5u32, 9] {
        let opts = Settings {
            level,
            packed_literals: false,
            ..Default::default()
        };
        let packed = compress_settings(data, &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        assert!(
            a.tables()
                .iter()
                .flatten()
                .flatten()
                .any(|t| t.has_context()),
            "level {level}: no context pair"
        );
        for stage in [false, true] {
            let g = gpu_with(&GpuTuning::default().with_stage_pair_tables(Some(stage)));
            let a = Archive::parse(&packed).unwrap();
            for d in [decoder::Decoder::Dense, decoder::Decoder::Wavefront] {
                let out = decoder::decompress_with(&g, &a, d)
                    .unwrap_or_else(|e| panic!("level {level} staged {stage} {d:?}: {e}"));
                assert!(
                    &out == data,
                    "level {level} staged {stage} {d:?}: output differs"
                );
            }
        }
    }
}

/// The encoder settings of the bit-exact test: block sizes, minimum matches 4 and 5 (match
/// bases below 6, format version 4, FORMAT.md §2), context tables and packed literal tables
/// on (the defaults: version 5 or 6 where they pay) and off, and once the match streams raw
/// (`raw_match_streams`, the literal slice alone in the warp). Returns `(block_size,
/// min_match, options)`.
pub(crate) fn sample_options() -> Vec<(u32, u32, Settings)> {
    [
        (4096u32, 6, true, true, false),
        (16384, 6, true, true, false),
        (16384, 6, true, true, true),
        (16384, 6, true, false, false),
        (16384, 6, false, false, false),
        (65536, 6, true, true, false),
        (16384, 4, true, false, false),
        (4096, 5, false, false, false),
    ]
    .into_iter()
    .map(|(b, m, c, p, r)| (b, m, c, p, r, false, false))
    // wide lanes (format version 7, with raw match streams: a 64-lane literal slice that two
    // warps decode): packed literals, context pairs, and plain tables at 4 KiB blocks
    // (FORMAT.md §5.4, §5.5)
    .chain([
        (16384, 6, true, true, true, true, false),
        (16384, 6, true, false, true, true, false),
        (4096, 6, false, false, true, true, false),
    ])
    // two-bit literal slices (format version 8, FORMAT.md §5.7): with raw match streams (the
    // narrow packed rANS kernel on small archives) and with coded ones, at 16 and 4 KiB
    .chain([
        (16384, 6, true, true, true, false, true),
        (4096, 6, true, true, false, false, true),
    ])
    .map(
        |(
            block_size,
            min_match,
            context_tables,
            packed_literals,
            raw_match_streams,
            wide_lanes,
            two_bit_literals,
        )| {
            let opts = Settings {
                block_size,
                min_match,
                level: if min_match < 6 { 8 } else { 5 },
                context_tables,
                packed_literals,
                raw_match_streams,
                wide_lanes,
                two_bit_runs: false,
                line_layout: false,
                two_bit: if two_bit_literals {
                    TwoBit::WithinLoss
                } else {
                    TwoBit::Off
                },
                ..Default::default()
            };
            (block_size, min_match, opts)
        },
    )
    .collect()
}

/// Without a GPU too: the bit-exact test's samples and settings give archives with every
/// feature the writer uses (a match base below 6, context pairs, packed literals, wide and
/// two-bit slices), so the GPU decoders see each.
#[test]
pub(crate) fn bit_exact_samples_cover_every_feature() {
    let mut features = std::collections::BTreeSet::new();
    let samples = sample_inputs();
    for (name, data) in samples
        .iter()
        .filter(|(n, _)| n == "soft-masked" || n == "text-like" || n == "fasta")
    {
        for (_, _, opts) in sample_options() {
            let packed = compress_settings(data, &opts, &|_| {}).unwrap();
            assert_eq!(u16::from_le_bytes([packed[4], packed[5]]), 1);
            let a = Archive::parse(&packed).unwrap();
            let tables = || a.tables().iter().flatten().flatten();
            // the features, numbered by the pre-release version that brought them
            let v = if a.entries().iter().any(|e| e.lanes[0] == LANES_TWO_BIT) {
                8
            } else if a.entries().iter().any(|e| e.has_wide_slice()) {
                7
            } else if tables().any(|t| t.is_packed()) {
                6
            } else if tables().any(|t| t.has_context()) {
                5
            } else if a.header().match_base() < 6 {
                4
            } else {
                3
            };
            features.insert(v);
            // soft-masked: a context pair, or (16 KiB blocks) packed literals
            if name == "fasta" && (opts.two_bit != TwoBit::Off) {
                // every block of upper-case FASTA takes a two-bit slice
                assert_eq!(v, 8, "fasta, {opts:?}: two-bit literals");
                assert!(
                    a.entries().iter().all(|e| e.lanes[0] == LANES_TWO_BIT),
                    "fasta, {opts:?}: a block without a two-bit slice"
                );
            } else if name == "soft-masked" && opts.wide_lanes && opts.raw_match_streams {
                assert_eq!(v, 7, "soft-masked, {opts:?}: wide lanes");
            } else if name == "soft-masked" && opts.packed_literals && opts.block_size == 16384 {
                assert_eq!(v, 6, "soft-masked, {opts:?}: packed literals");
            } else if name == "soft-masked" && opts.context_tables {
                assert!(v >= 5, "soft-masked, {opts:?}: a context pair");
            }
        }
    }
    assert_eq!(features.into_iter().collect::<Vec<_>>(), [3, 4, 5, 6, 7, 8]);
}

/// Without a GPU too: the rANS stage's entry point follows the archive's table kinds (a
/// kernel without a kind would fail such slices closed, `device/src/dense/` `rans_decode_slices`).
#[test]
pub(crate) fn rans_kernel_follows_the_table_kinds() {
    use decoder::RansKernel;
    let samples = sample_inputs();
    let masked = &samples.iter().find(|(n, _)| n == "soft-masked").unwrap().1;
    let text = &samples.iter().find(|(n, _)| n == "text-like").unwrap().1;
    let kind = |data: &[u8], context_tables: bool, packed_literals: bool| {
        let opts = Settings {
            context_tables,
            packed_literals,
            ..Default::default()
        };
        let packed = compress_settings(data, &opts, &|_| {}).unwrap();
        RansKernel::for_archive(&Archive::parse(&packed).unwrap())
    };
    assert_eq!(kind(text, false, false), RansKernel::Plain);
    assert_eq!(kind(masked, false, false), RansKernel::Plain);
    assert_eq!(kind(masked, true, false), RansKernel::Context);
    assert_eq!(kind(masked, true, true), RansKernel::Packed);
}

/// Packed literal archives (FORMAT.md §5.6: widths 2, 3 and 4) decode the same with the
/// expansion table staged in shared memory and read from global memory
/// (`GpuTuning::stage_expansion_tables`), every decoder, at levels 5 and 9 (few lanes).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn packed_literals_decode_staged_and_unstaged() {
    let mut r = aceapex::gpu::tokens::Rng::new(5);
    // width 3: ACGT (a base repeats the one before it a third of the time, so that
    // packed symbols code smaller than single letters, as on real genomes), N and the newline
    let mut prev = b'A';
    let fasta: Vec<u8> = (0..1_500_000u32)
        .map(|i| match i % 61 {
            60 => b'\n',
            _ if (i / 9000) % 11 == 4 => b'N',
            _ => {
                if r.below(3) != 0 {
                    prev = b"ACGT"[r.below(4) as usize];
                }
                prev
            }
        })
        .collect();
    // width 4: four letters, a base repeating the one before it a third of the time
    let four: Vec<u8> = (0..600_000u32)
        .map(|_| {
            if r.below(3) != 0 {
                prev = b"ACGT"[r.below(4) as usize];
            }
            prev
        })
        .collect();
    // width 2: the FASTA soft-masked, case in runs of about 40 bases
    let mut lower = false;
    let masked: Vec<u8> = (fasta.iter())
        .map(|&b| {
            if r.below(40) == 0 {
                lower = !lower;
            }
            if lower {
                b.to_ascii_lowercase()
            } else {
                b
            }
        })
        .collect();
    // (at level 9 the soft-masked sample takes a context pair instead: smaller there)
    let inputs = [
        ("fasta".to_string(), fasta, 3, &[5u32, 9][..]),
        ("four letters".to_string(), four, 4, &[5, 9]),
        ("soft-masked".to_string(), masked, 2, &[5]),
    ];
    // the archives and their widths are checked without a GPU too
    let mut archives = Vec::new();
    for (name, data, width, levels) in &inputs {
        for &level in *levels {
            let opts = Settings {
                level,
                ..Default::default()
            };
            let packed = compress_settings(data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            assert_eq!(a.header().version, 1, "{name} level {level}");
            assert_eq!(
                a.literal_width(a.block_count() - 1),
                *width,
                "{name} level {level}"
            );
            // the CPU decoder first
            assert!(
                aceapex::decode::decompress(&a).unwrap() == *data,
                "{name} level {level}: CPU"
            );
            archives.push((name, data, level, packed));
        }
    }
    for (name, data, level, packed) in archives {
        {
            for stage in [false, true] {
                let g = gpu_with(&GpuTuning::default().with_stage_expansion_tables(Some(stage)));
                let a = Archive::parse(&packed).unwrap();
                for d in [
                    decoder::Decoder::Dense,
                    decoder::Decoder::Lane,
                    decoder::Decoder::Wavefront,
                ] {
                    let out = decoder::decompress_with(&g, &a, d).unwrap_or_else(|e| {
                        panic!("{name} level {level} staged {stage} {d:?}: {e}")
                    });
                    assert!(
                        out == *data,
                        "{name} level {level} staged {stage} {d:?}: output differs"
                    );
                }
            }
        }
    }
}
