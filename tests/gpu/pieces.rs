//! GPU decode in pieces (`GpuDecoder::decompress_to`, `gpu::pieces`): forced piece counts
//! restore the original bit-exactly (the device output poisoned before each piece decodes),
//! a damaged block fails naming its block with nothing of its piece written, a wrong content
//! checksum fails after the last piece, and a cross-block archive is refused.

#[allow(unused_imports)]
use super::*;
use aceapex::gpu::pieces::{PiecePlan, PieceStats};
use aceapex::{DecodeError, Error, GpuDecoder, GpuError};

/// A file of tests/golden, built into the test binary (which runs on GPU machines where the
/// checkout it was built in is not).
fn golden(name: &str) -> &'static [u8] {
    match name {
        "moby_dick_64k.txt" => include_bytes!("../golden/moby_dick_64k.txt"),
        "ecoli_48k.fa" => include_bytes!("../golden/ecoli_48k.fa"),
        "dna.fa" => include_bytes!("../golden/dna.fa"),
        "records.csv" => include_bytes!("../golden/records.csv"),
        "moby_dick_64k.txt.acx" => include_bytes!("../golden/moby_dick_64k.txt.acx"),
        "moby_dick_64k.txt.l9-mm4-ctx.acx" => {
            include_bytes!("../golden/moby_dick_64k.txt.l9-mm4-ctx.acx")
        }
        "dna.fa.ctx.acx" => include_bytes!("../golden/dna.fa.ctx.acx"),
        "ecoli_48k.fa.acx" => include_bytes!("../golden/ecoli_48k.fa.acx"),
        "records.csv.l8-mm5-b4k.acx" => include_bytes!("../golden/records.csv.l8-mm5-b4k.acx"),
        _ => panic!("{name} is not among the golden files built in"),
    }
}

/// The golden originals (real text and genome excerpts, tests/golden) tiled with seeded
/// changes, then generated DNA-like bytes with repeats: `n` bytes, many 1 MiB table groups.
fn tiled_sample(n: usize) -> Vec<u8> {
    let golden: Vec<Vec<u8>> = ["moby_dick_64k.txt", "ecoli_48k.fa", "dna.fa", "records.csv"]
        .iter()
        .map(|f| golden(f).to_vec())
        .collect();
    let mut r = aceapex::gpu::tokens::Rng::new(0x0051_ece5);
    let mut v = Vec::with_capacity(n + (1 << 16));
    while v.len() < n / 2 {
        let mut g = golden[r.below(golden.len() as u64) as usize].clone();
        for _ in 0..64 {
            let i = r.below(g.len() as u64) as usize;
            g[i] = b"ACGTN acgt,\n"[r.below(12) as usize];
        }
        v.extend_from_slice(&g);
    }
    while v.len() < n {
        if r.below(4) == 0 && v.len() > 5000 {
            let back = 1 + r.below(4000) as usize;
            let len = 8 + r.below(200) as usize;
            let at = v.len() - back;
            for j in 0..len {
                v.push(v[at + j]);
            }
        } else {
            for _ in 0..r.below(300) {
                v.push(b"ACGT"[r.below(4) as usize]);
            }
            v.push(b'\n');
        }
    }
    v.truncate(n);
    v
}

/// `packed` with up to 8 bytes in the middle of block `block`'s stored slices inverted (the
/// data section is outside the meta checksum: the archive still parses).
fn damage_block(packed: &[u8], block: usize) -> Vec<u8> {
    let a = Archive::parse(packed).unwrap();
    let stored: u32 = a.entries()[block].stored_len.iter().sum();
    let span = (stored as usize).min(8);
    assert!(span > 0, "block {block} stores no byte");
    let at =
        a.data_offset() as usize + a.block_offsets()[block] as usize + (stored as usize - span) / 2;
    let mut bad = packed.to_vec();
    for b in &mut bad[at..at + span] {
        *b ^= 0xFF;
    }
    bad
}

/// Decodes `packed` in `plan`'s pieces into a fresh vector.
fn in_pieces(
    dec: &GpuDecoder,
    packed: &[u8],
    plan: PiecePlan,
) -> (Result<PieceStats, Error>, Vec<u8>) {
    let mut out = Vec::new();
    let r = dec.decompress_to_with(packed, &mut out, plan);
    (r, out)
}

/// 1, 2, 3, 8 and 17 pieces of a 21 MiB input of real and generated data, under several
/// block sizes and codings, restore the original bit-exactly, with as many pieces as asked;
/// so do the golden archives of independent blocks (one table group each: one piece) and the
/// free-memory plan (one piece for this size), and an empty archive writes nothing.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn pieces_restore_the_original_for_forced_piece_counts() {
    let dec = GpuDecoder::open().unwrap_or_else(|e| panic!("this GPU test needs a GPU: {e}"));
    let data = tiled_sample(21 << 20 | 4321);
    let options = [
        Settings::default(),
        Settings {
            block_size: 4096,
            level: 1,
            ..Default::default()
        },
        Settings {
            block_size: 65536,
            raw_match_streams: true,
            level: 3,
            ..Default::default()
        },
        // two-bit literal slices in every block, raw match streams: the dense kernel alone
        Settings {
            two_bit_runs: false,
            line_layout: false,
            two_bit: TwoBit::MostBlocks,
            raw_match_streams: true,
            level: 1,
            ..Default::default()
        },
    ];
    for opts in options {
        let bs = opts.block_size;
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        for n in [1u32, 2, 3, 8, 17] {
            let (r, out) = in_pieces(&dec, &packed, PiecePlan::Count(n));
            let s = r.unwrap_or_else(|e| panic!("bs {bs}, {n} pieces: {e}"));
            assert_eq!(s.pieces, n, "bs {bs}: pieces");
            assert_eq!(s.bytes, data.len() as u64, "bs {bs}, {n} pieces");
            assert!(
                out == data,
                "bs {bs}, {n} pieces: output differs from the original"
            );
        }
        let mut out = Vec::new();
        let n = dec.decompress_to(&packed, &mut out).unwrap();
        assert!(
            n == data.len() as u64 && out == data,
            "bs {bs}: free-memory plan"
        );
    }
    for (original, archive) in [
        ("moby_dick_64k.txt", "moby_dick_64k.txt.acx"),
        ("moby_dick_64k.txt", "moby_dick_64k.txt.l9-mm4-ctx.acx"),
        ("dna.fa", "dna.fa.ctx.acx"),
        ("ecoli_48k.fa", "ecoli_48k.fa.acx"),
        ("records.csv", "records.csv.l8-mm5-b4k.acx"),
    ] {
        let (want, packed) = (golden(original), golden(archive));
        let (r, out) = in_pieces(&dec, packed, PiecePlan::Count(3));
        assert_eq!(
            r.unwrap_or_else(|e| panic!("{archive}: {e}")).pieces,
            1,
            "{archive}"
        );
        assert!(out == want, "{archive}: output differs from the original");
    }
    let empty = compress_settings(&[], &Settings::default(), &|_| {}).unwrap();
    let (r, out) = in_pieces(&dec, &empty, PiecePlan::Count(2));
    let s = r.unwrap();
    assert_eq!((s.pieces, s.bytes, out.len()), (0, 0, 0));
}

/// A damaged block in the k-th of 8 pieces fails naming that block (the block the CPU
/// decoder names too), after exactly the pieces before it were written, each intact.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn a_damaged_block_fails_naming_it_after_the_pieces_before() {
    let dec = GpuDecoder::open().unwrap_or_else(|e| panic!("this GPU test needs a GPU: {e}"));
    let data = tiled_sample(17 << 20 | 99);
    let opts = Settings {
        level: 1,
        ..Default::default()
    };
    let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    let gb = a.header().group_blocks as usize;
    let n_groups = a.block_count().div_ceil(gb);
    assert!(n_groups >= 17, "{n_groups} groups");
    let bs = a.header().block_size as usize;
    // piece i of 8 holds groups i * n_groups / 8 .. (i + 1) * n_groups / 8 (PiecePlan::Count)
    let first_group = |i: usize| i * n_groups / 8;
    // a block inside piece k of 8: the middle block of a group of that piece
    for (k, group) in [(0usize, 0usize), (3, first_group(3) + 1), (7, n_groups - 2)] {
        assert!(
            (first_group(k)..first_group(k + 1)).contains(&group),
            "group {group} lies in piece {k}"
        );
        let block = group * gb + gb / 2;
        let bad = damage_block(&packed, block);
        let cpu_block = match aceapex::decompress(&bad) {
            Err(Error::Decode(DecodeError::Block { block, .. })) => block as usize,
            other => panic!("piece {k}: the CPU decoder gives {other:?}"),
        };
        assert_eq!(cpu_block, block, "piece {k}: the CPU decoder's block");
        let (r, out) = in_pieces(&dec, &bad, PiecePlan::Count(8));
        match r {
            Err(Error::Decode(DecodeError::Block {
                block: b, start, ..
            })) => {
                assert_eq!(b as usize, block, "piece {k}: block");
                assert_eq!(start, (block * bs) as u64, "piece {k}: start");
            }
            other => panic!("piece {k}: expected a damaged block, got {other:?}"),
        }
        // the pieces before k, whole and intact; nothing of piece k
        let piece_start = first_group(k) * gb * bs;
        assert_eq!(
            out.len(),
            piece_start,
            "piece {k}: bytes written before the error"
        );
        assert!(
            out == data[..piece_start],
            "piece {k}: the pieces before differ"
        );
    }
}

/// An archive whose content checksum is wrong (the meta checksum recomputed, so that it
/// parses) writes every piece, each block intact, and fails at the end; a cross-block
/// archive is refused before anything is written.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn a_wrong_content_checksum_fails_at_the_end_and_cross_block_is_refused() {
    let dec = GpuDecoder::open().unwrap_or_else(|e| panic!("this GPU test needs a GPU: {e}"));
    let data = tiled_sample(9 << 20 | 7);
    let opts = Settings {
        level: 1,
        ..Default::default()
    };
    let mut packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    // FORMAT.md §2: the content checksum at header bytes 64..72
    let c = common::get_u64(&packed, 64);
    common::put_u64(&mut packed, 64, c ^ 1);
    common::reseal_packed(&mut packed);
    for n in [1u32, 8] {
        let (r, out) = in_pieces(&dec, &packed, PiecePlan::Count(n));
        assert!(
            matches!(r, Err(Error::Decode(DecodeError::ContentChecksum))),
            "{n} pieces: {r:?}"
        );
        assert!(
            out == data,
            "{n} pieces: every piece is written before the end"
        );
    }
    let cross = Settings {
        window: Some(65536),
        block_size: 4096,
        ..Default::default()
    };
    let packed = compress_settings(&data[..1 << 20], &cross, &|_| {}).unwrap();
    let (r, out) = in_pieces(&dec, &packed, PiecePlan::Count(2));
    assert!(
        matches!(r, Err(Error::Gpu(GpuError::Unsupported(_)))),
        "cross-block: {r:?}"
    );
    assert!(out.is_empty());
}

/// The `aceapex` binary: `ACEAPEX_BIN` where set, else where cargo built it, else the first
/// `aceapex` file in a directory above the test binary (`target/release/aceapex` above
/// `target/release/.../gpu-*`), for a test tree carried to the GPU machine.
fn aceapex_bin() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("ACEAPEX_BIN") {
        return p.into();
    }
    let built = std::path::PathBuf::from(common::cli::BIN);
    if built.is_file() {
        return built;
    }
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .skip(1)
        .map(|d| d.join("aceapex"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no aceapex binary at {} nor above {} (set ACEAPEX_BIN)",
                common::cli::BIN,
                exe.display()
            )
        })
}

/// Runs the `aceapex` binary ([`aceapex_bin`]) in `dir` with the given arguments.
fn run_in(dir: &std::path::Path) -> impl Fn(&[&str]) -> std::process::Output + '_ {
    let bin = aceapex_bin();
    move |args| {
        std::process::Command::new(&bin)
            .args(args)
            .current_dir(dir)
            .output()
            .expect("the binary runs")
    }
}

/// `decompress --device gpu` of an archive whose output is larger than one piece (600 MiB;
/// decoded whole where the GPU's free memory holds it, else in pieces): the restored file,
/// `-c` on standard output and `-t` agree with the original; an archive with a damaged block
/// in its last piece fails and leaves no output file.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn cli_decompress_on_the_gpu_streams_large_outputs_in_pieces() {
    let n = 600usize << 20;
    assert!(n as u64 > aceapex::gpu::pieces::MAX_PIECE_OUTPUT);
    let data = tiled_sample(n);
    let opts = Settings {
        level: 1,
        ..Default::default()
    };
    let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.acx"), &packed).unwrap();
    let run = run_in(dir.path());
    let o = run(&["decompress", "--device", "gpu", "big.acx", "-o", "big"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert!(
        std::fs::read(dir.path().join("big")).unwrap() == data,
        "restored file differs"
    );
    let o = run(&["decompress", "--device", "gpu", "-c", "big.acx"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout == data, "standard output differs");
    let o = run(&["decompress", "--device", "gpu", "-t", "big.acx"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // a damaged block near the end: the command fails and no output file remains
    let a = Archive::parse(&packed).unwrap();
    let block = a.block_count() - 3;
    let bad = damage_block(&packed, block);
    std::fs::write(dir.path().join("bad.acx"), &bad).unwrap();
    let o = run(&["decompress", "--device", "gpu", "bad.acx", "-o", "bad"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "a damaged block must fail");
    assert!(err.contains(&format!("block {block}")), "{err}");
    assert!(
        !dir.path().join("bad").exists(),
        "no output file after a failure"
    );
}

/// `extract --device gpu` (the archive uploaded, the ranges read in batches on the GPU, every
/// block verified on the device) writes the bytes `--device cpu` writes and the original
/// holds, for ranges in any order, overlapping, at the edges and over many blocks; a range
/// over a damaged block fails naming it and leaves no output file.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn cli_extract_on_the_gpu_writes_the_cpus_bytes() {
    let _ = gpu();
    let n = 6usize << 20;
    let data = tiled_sample(n);
    let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.acx"), &packed).unwrap();
    let run = run_in(dir.path());
    let ranges: [(usize, usize); 6] = [
        (5_000_000, 70_000),
        (0, 1),
        (n - 1, 1),
        (16_380, 10),
        (1_000_000, 3_000_000),
        (5_000_100, 100),
    ];
    let mut args = vec!["extract".to_string(), "a.acx".into(), "-c".into()];
    for &(o, l) in &ranges {
        args.push("--range".into());
        args.push(format!("{o}:{l}"));
    }
    let want: Vec<u8> = ranges
        .iter()
        .flat_map(|&(o, l)| data[o..o + l].iter().copied())
        .collect();
    for device in ["gpu", "cpu"] {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--device", device]);
        let o = run(&a);
        assert!(
            o.status.success(),
            "{device}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout == want, "{device}: the ranges' bytes differ");
    }
    let a = Archive::parse(&packed).unwrap();
    let block = a.block_count() / 2;
    std::fs::write(dir.path().join("bad.acx"), damage_block(&packed, block)).unwrap();
    let range = format!(
        "{}:100000",
        block as u64 * u64::from(a.header().block_size) - 50_000
    );
    let o = run(&[
        "extract", "bad.acx", "--device", "gpu", "--range", &range, "-o", "x",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "a damaged block must fail");
    assert!(err.contains(&format!("block {block}")), "{err}");
    assert!(
        !dir.path().join("x").exists(),
        "no output file after a failure"
    );
}
