//! The kernels one by one: the smoke test, the token kernels, the dense kernel on deep
//! chains and the rANS stage on grids of two rounds and of one CTA per SM.

#[allow(unused_imports)]
use super::*;

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn smoke_kernel_adds_one() {
    let g = gpu();
    let host: Vec<u32> = (0..10_000).collect();
    let mut d = g.stream().clone_htod(&host).unwrap();
    launch::smoke_add_one(&g, &mut d).unwrap();
    let back = g.stream().clone_dtoh(&d).unwrap();
    assert!(back.iter().zip(&host).all(|(a, b)| *a == b + 1));
}

pub(crate) fn run_token_set(g: &Gpu, seed: u64, shape: Shape, variant: CopyVariant) {
    let ts = generate(seed, shape);
    let mut out = g.alloc_filled(ts.expected.len(), 0xA5).unwrap();
    let lits = g.upload(&ts.literals).unwrap();
    let runs = g.upload(bytemuck::cast_slice(&ts.runs)).unwrap();
    let mut status = g.stream().alloc_zeros::<u32>(1).unwrap();
    launch::literal_scatter(g, &mut out, &lits, &runs, ts.runs.len() as u32, &mut status).unwrap();
    for level in &ts.levels {
        let toks = g.upload(bytemuck::cast_slice(level)).unwrap();
        launch::match_copy(g, variant, &mut out, &toks, level.len() as u32, &mut status).unwrap();
    }
    let st = g.stream().clone_dtoh(&status).unwrap();
    assert_eq!(
        st[0], 0,
        "kernel reported a bad token (seed {seed}, {variant:?})"
    );
    let got = g.download(&out).unwrap();
    assert_eq!(got.len(), ts.expected.len());
    if let Some(i) = got.iter().zip(&ts.expected).position(|(a, b)| a != b) {
        panic!(
            "seed {seed} {variant:?}: first wrong byte at {i} of {} ({} levels)",
            got.len(),
            ts.levels.len()
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn match_copy_and_literal_scatter_match_cpu_reference() {
    let g = gpu();
    let seed0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    for i in 0..6u64 {
        let seed = seed0 ^ (i * 0x9E37_79B9_7F4A_7C15);
        let shape = if i % 2 == 0 {
            Shape::stress(4 << 20)
        } else {
            Shape::realistic(8 << 20)
        };
        for v in [
            CopyVariant::WarpPeriodAware,
            CopyVariant::WarpRounds,
            CopyVariant::ThreadPerMatch,
        ] {
            run_token_set(&g, seed, shape, v);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn match_copy_rejects_out_of_bounds_tokens() {
    let g = gpu();
    use aceapex::device::format::CopyToken;
    let bad = [
        CopyToken {
            dst: 10,
            dist: 11,
            len: 6,
        }, // source before the output start
        CopyToken {
            dst: 1000,
            dist: 1,
            len: 100,
        }, // past the end
        CopyToken {
            dst: 50,
            dist: 0,
            len: 6,
        }, // distance 0
        CopyToken {
            dst: u64::MAX - 3,
            dist: 1,
            len: 8,
        }, // overflow
    ];
    for t in bad {
        for v in [
            CopyVariant::WarpPeriodAware,
            CopyVariant::WarpRounds,
            CopyVariant::ThreadPerMatch,
        ] {
            let mut out = g.alloc_filled(1024, 0x5A).unwrap();
            let toks = g.upload(bytemuck::bytes_of(&t)).unwrap();
            let mut status = g.stream().alloc_zeros::<u32>(1).unwrap();
            launch::match_copy(&g, v, &mut out, &toks, 1, &mut status).unwrap();
            assert_ne!(
                g.stream().clone_dtoh(&status).unwrap()[0],
                0,
                "{t:?} {v:?} not reported"
            );
            assert!(
                g.download(&out).unwrap().iter().all(|&b| b == 0x5A),
                "{t:?} {v:?} wrote bytes"
            );
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn copy_kernels_reproduce_real_archives_from_their_token_lists() {
    let g = gpu();
    for (name, data) in sample_inputs().into_iter().take(3) {
        let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        let ts = aceapex::gpu::tokens::from_archive(&a, &data).unwrap();
        let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
        let lits = g.upload(&ts.literals).unwrap();
        let runs = g.upload(bytemuck::cast_slice(&ts.runs)).unwrap();
        let mut status = g.stream().alloc_zeros::<u32>(1).unwrap();
        launch::literal_scatter(
            &g,
            &mut out,
            &lits,
            &runs,
            ts.runs.len() as u32,
            &mut status,
        )
        .unwrap();
        for level in &ts.levels {
            let toks = g.upload(bytemuck::cast_slice(level)).unwrap();
            launch::match_copy(
                &g,
                CopyVariant::WarpPeriodAware,
                &mut out,
                &toks,
                level.len() as u32,
                &mut status,
            )
            .unwrap();
        }
        assert_eq!(g.stream().clone_dtoh(&status).unwrap()[0], 0, "{name}");
        assert!(
            g.download(&out).unwrap() == data,
            "{name}: wavefront copy of real tokens differs"
        );
    }
}

/// Pieces of 48 letters, each the previous one with one letter changed: the matches of a
/// piece read the previous piece, so a byte's pointer chain grows by one per piece until it
/// is changed (hundreds of hops inside a 16 KiB block), which the dense kernel's stage 3
/// (`write_memo` in device/src/dense/) must follow to the end.
pub(crate) fn deep_chains() -> Vec<u8> {
    let mut r = aceapex::gpu::tokens::Rng::new(11);
    let mut piece: Vec<u8> = (0..48).map(|_| b'a' + r.below(26) as u8).collect();
    let mut out = Vec::with_capacity(48 * 12_000);
    for _ in 0..12_000 {
        out.extend_from_slice(&piece);
        let k = r.below(48) as usize;
        piece[k] = b'a' + r.below(26) as u8;
    }
    out
}

/// 1 MiB of `len`-letter tokens drawn from `kinds` random ones: at minimum match 4 (match
/// base 4, format v4) nearly every token is a new match.
pub(crate) fn tokens(len: usize, kinds: usize) -> Vec<u8> {
    let mut r = aceapex::gpu::tokens::Rng::new(len as u64 * 1000 + kinds as u64);
    let toks: Vec<Vec<u8>> = (0..kinds)
        .map(|_| (0..len).map(|_| b'a' + r.below(26) as u8).collect())
        .collect();
    let mut t = Vec::with_capacity(1 << 20);
    while t.len() < 1 << 20 {
        t.extend_from_slice(&toks[r.below(kinds as u64) as usize]);
    }
    t.truncate(1 << 20);
    t
}

/// The token samples: 5-byte tokens give more new matches per 16 KiB block than the dense
/// kernel holds (`OFFV_CAP`: the lane kernel takes those blocks), 6-byte ones between the
/// cap before format v4 (2048) and today's.
pub(crate) const TOKEN_SAMPLES: [(usize, usize); 2] = [(5, 300), (6, 400)];

/// The token samples really reach those counts at level 8 with minimum match 4 (runs
/// without a GPU: it checks the test data, not a decoder).
#[test]
pub(crate) fn token_samples_straddle_the_dense_distance_cap() {
    use aceapex::device::dense_layout::OFFV_CAP;
    use aceapex::device::format::STREAM_OFFSETS;
    for ((len, kinds), (lo, hi)) in TOKEN_SAMPLES
        .into_iter()
        .zip([(OFFV_CAP + 1, usize::MAX), (2049, OFFV_CAP)])
    {
        let opts = Settings {
            level: 8,
            min_match: 4,
            ..Default::default()
        };
        let packed = compress_settings(&tokens(len, kinds), &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        let inside = a
            .entries()
            .iter()
            .filter(|e| (lo..=hi).contains(&(e.decoded_len[STREAM_OFFSETS] as usize)))
            .count();
        assert!(
            inside * 2 > a.entries().len(),
            "{len}-byte tokens: {inside} of {} blocks have {lo}..={hi} new matches",
            a.entries().len()
        );
    }
}

/// The "deep chains" sample really has deep blocks (runs without a GPU: it checks the test
/// data, not a decoder).
#[test]
pub(crate) fn deep_chains_sample_has_deep_blocks() {
    let packed = compress_settings(&deep_chains(), &Settings::default(), &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    let deepest = a.entries().iter().map(|e| e.max_depth).max().unwrap();
    assert!(deepest >= 64, "deepest block {deepest}");
}

/// The dense pipe on pointer chains hundreds of hops long, with the blocks' true depths in
/// the table and with every entry claiming depth 0 (the hint is not trusted, FORMAT.md
/// §3.1); both bit-exact (small enough for the compute-sanitizer run).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn dense_kernel_decodes_deep_chains() {
    let g = gpu();
    let data = deep_chains();
    let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
    let mut a = Archive::parse(&packed).unwrap();
    let gpu = decoder::decompress_with(&g, &a, decoder::Decoder::Dense).unwrap();
    assert!(gpu == data, "dense output differs on deep chains");
    for e in a.entries_mut() {
        e.max_depth = 0;
    }
    let gpu = decoder::decompress_with(&g, &a, decoder::Decoder::Dense).unwrap();
    assert!(
        gpu == data,
        "dense output differs on deep chains whose depth hint says 0"
    );
}

/// An archive of more blocks than the rANS stage's CTAs hold at once (two 16-warp CTAs per
/// SM, one block per warp; the launch makes no more CTAs than that), so some CTAs take a
/// second chunk of blocks in the host's longest-first serpentine order
/// (`schedule::rans_chunk_order`; the second round padded with chunks to skip),
/// staging a second table group; the dense pipe and the wavefront bit-exact.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn rans_stage_decodes_archives_of_two_rounds() {
    let g = gpu();
    let opts = Settings {
        block_size: 4096,
        level: 1,
        ..Settings::default()
    };
    // one round holds 2 * SMs * 16 blocks; 300 more
    let blocks = 2 * g.sm_count() as usize * 16 + 300;
    let mut r = aceapex::gpu::tokens::Rng::new(11);
    let mut data = Vec::with_capacity(blocks * 4096);
    while data.len() < blocks * 4096 {
        // DNA with 40 KiB runs of N now and then (blocks that decode in a few steps)
        if r.below(16) == 0 {
            data.extend(std::iter::repeat_n(b'N', 40 << 10));
        } else {
            data.extend((0..4096).map(|_| b"ACGT"[r.below(4) as usize]));
        }
    }
    data.truncate(blocks * 4096);
    let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    assert_eq!(a.block_count(), blocks);
    let wpc = aceapex::device::rans::KERNEL_MAX_WARPS;
    let chunks = schedule::rans_chunks(blocks, a.header().group_blocks, wpc);
    let order = schedule::rans_chunk_order(
        a.entries(),
        |b| a.literal_width(b) as u32,
        &chunks,
        schedule::rans_grid(chunks.len(), g.sm_count()),
    );
    assert!(
        order.len() > 2 * g.sm_count() as usize,
        "more chunks than CTAs"
    );
    // (chunk i starts at block i * wpc: groups of 256 blocks of 4 KiB, chunks of 16)
    assert!(
        (order.iter().enumerate())
            .any(|(i, &k)| k != schedule::RANS_NO_CHUNK && i as u32 * wpc != k),
        "the sample should reorder the chunks"
    );
    for d in [decoder::Decoder::Dense, decoder::Decoder::Wavefront] {
        let out = decoder::decompress_with(&g, &a, d).unwrap();
        assert!(out == data, "{d:?} output differs on a two-round archive");
    }
}

/// An archive whose usual rANS grid would run two CTAs on some SMs and one on the others
/// (more chunks of 8 blocks than SMs) and whose blocks fit one CTA of at most
/// `KERNEL_SOLO_WARPS` warps per SM: the stage runs `rans_decode_slices_pack_solo` on chunks
/// cut at the 64-block table groups (`schedule::rans_solo_blocks`, `schedule::rans_chunks`),
/// pairs of warps for its wide slices; the dense pipe and the wavefront bit-exact.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn rans_stage_decodes_a_grid_of_one_cta_per_sm() {
    let g = gpu();
    let opts = Settings {
        raw_match_streams: true,
        wide_lanes: true,
        ..Settings::default()
    };
    // 9 blocks of 16 KiB per SM: the usual 8-block chunks outnumber the SMs
    let blocks = 9 * g.sm_count() as usize;
    let mut r = aceapex::gpu::tokens::Rng::new(27);
    let mut data = Vec::with_capacity(blocks << 14);
    while data.len() < blocks << 14 {
        // DNA, a repeat of an earlier stretch now and then, a run of N seldom
        match r.below(32) {
            0 => data.extend(std::iter::repeat_n(b'N', 3000)),
            1..=4 if data.len() > 5000 => {
                let at = data.len() - 1000 - r.below(4000) as usize;
                data.extend_from_within(at..at + 500);
            }
            _ => data.extend((0..2000).map(|_| b"ACGT"[r.below(4) as usize])),
        }
    }
    data.truncate(blocks << 14);
    let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    assert_eq!(a.block_count(), blocks);
    assert_eq!(
        schedule::rans_halves(a.entries()),
        2,
        "wide slices expected"
    );
    assert_eq!(
        decoder::RansKernel::for_archive(&a),
        decoder::RansKernel::Packed
    );
    let bpc = schedule::rans_solo_blocks(blocks, a.header().group_blocks, 2, g.sm_count())
        .expect("the sample should take the one-CTA-per-SM grid");
    assert!(
        !a.header().group_blocks.is_multiple_of(bpc),
        "chunks of {bpc} should not divide a group of {}",
        a.header().group_blocks
    );
    for d in [decoder::Decoder::Dense, decoder::Decoder::Wavefront] {
        let out = decoder::decompress_with(&g, &a, d).unwrap();
        assert!(out == data, "{d:?} output differs on a one-CTA-per-SM grid");
    }
}
