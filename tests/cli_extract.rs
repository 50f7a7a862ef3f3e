//! `aceapex extract` with several ranges (`--range`, `--ranges FILE`), `-o`/`-c`,
//! `--device`: the output compared with slices of the original bytes, in request order, and
//! clear errors (exit status 1 or 2, nothing written) for ranges past the end, overflowing
//! ranges and malformed lines.

mod common;

use common::cli::*;
use std::path::Path;

/// E. coli's first 48 KiB and generated FASTA-like DNA: real sequence, 27 blocks of 4 KiB.
fn original() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut v = std::fs::read(dir.join("ecoli_48k.fa")).unwrap();
    v.extend(std::fs::read(dir.join("dna.fa")).unwrap());
    v
}

/// A temporary directory with `x` (the original), `x.acx` (4 KiB blocks) and `xw.acx` (a
/// window crossing blocks).
fn setup() -> (tempfile::TempDir, Vec<u8>) {
    let t = tmp();
    let d = t.path();
    let data = original();
    std::fs::write(d.join("x"), &data).unwrap();
    ok(&run(d, &["compress", "-q", "x", "--block-size", "4K"]));
    ok(&run(
        d,
        &[
            "compress",
            "-q",
            "x",
            "-o",
            "xw.acx",
            "--block-size",
            "4K",
            "--window",
            "40K",
        ],
    ));
    (t, data)
}

/// The bytes `ranges` select from `data`, one after the other.
fn slices(data: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
    ranges
        .iter()
        .flat_map(|&(o, n)| data[o..o + n].iter().copied())
        .collect()
}

#[test]
fn repeated_ranges_come_out_in_request_order() {
    let (t, data) = setup();
    let d = t.path();
    let n = data.len();
    // out of order, overlapping, across blocks, empty, the last byte, everything
    let ranges = [
        (50_000, 5_000),
        (7, 3),
        (4_090, 12),
        (7, 3),
        (100, 0),
        (n - 1, 1),
        (0, n),
        (8_192, 4_096),
    ];
    let args: Vec<String> = ranges
        .iter()
        .flat_map(|&(o, l)| ["--range".to_string(), format!("{o}:{l}")])
        .collect();
    let want = slices(&data, &ranges);
    for arc in ["x.acx", "xw.acx"] {
        for device in ["cpu", "auto"] {
            let mut a = vec!["extract", arc, "--device", device, "-c"];
            a.extend(args.iter().map(String::as_str));
            let o = run(d, &a);
            ok(&o);
            assert!(o.stdout == want, "{arc} --device {device}");
        }
        // without a GPU, `--device gpu` is an error naming it, as for decompress (the GPU
        // machine's tests compare its output: tests/gpu/pieces.rs)
        let mut a = vec!["extract", arc, "--device", "gpu", "-c"];
        a.extend(args.iter().map(String::as_str));
        let o = run(d, &a);
        if !cfg!(feature = "gpu") || aceapex::GpuDecoder::open().is_err() {
            assert!(
                !o.status.success() && o.stdout.is_empty(),
                "{arc} --device gpu"
            );
            assert!(stderr(&o).contains("--device gpu"), "{}", stderr(&o));
        }
        // to a file with -o
        let mut a = vec!["extract", arc, "-o", "out", "-f"];
        a.extend(args.iter().map(String::as_str));
        ok(&run(d, &a));
        assert!(std::fs::read(d.join("out")).unwrap() == want, "{arc} -o");
    }
}

#[test]
fn a_ranges_file_takes_both_forms_and_sizes() {
    let (t, data) = setup();
    let d = t.path();
    std::fs::write(
        d.join("r.txt"),
        "# offset length\n1K:100\n\n  2000 17  \n3:1K\n1024\t100\n",
    )
    .unwrap();
    // --range ranges first, then the file's
    let o = run(
        d,
        &["extract", "x.acx", "--range", "9:1", "--ranges", "r.txt"],
    );
    ok(&o);
    let want = slices(
        &data,
        &[(9, 1), (1024, 100), (2000, 17), (3, 1024), (1024, 100)],
    );
    assert!(o.stdout == want);
    // the file on standard input
    let text = b"60000 5\n0:4\n";
    let o = run_stdin(d, &["extract", "xw.acx", "--ranges", "-"], text);
    ok(&o);
    assert!(o.stdout == slices(&data, &[(60_000, 5), (0, 4)]));
}

/// A range of several megabytes comes out whole (written piece by piece).
#[test]
fn a_large_range_is_written_whole() {
    let t = tmp();
    let d = t.path();
    let mut data = original();
    // repeated, with a changed byte per copy so that copies differ
    let one = data.clone();
    for i in 0..60 {
        data.extend_from_slice(&one);
        let at = data.len() - 1 - i * 7;
        data[at] = b"ACGT"[i % 4];
    }
    std::fs::write(d.join("big"), &data).unwrap();
    ok(&run(d, &["compress", "-q", "big"]));
    let n = data.len();
    let o = run(
        d,
        &[
            "extract",
            "big.acx",
            "--range",
            &format!("{}:{}", 3, n - 3),
            "--range",
            "5:10",
            "-T",
            "2",
        ],
    );
    ok(&o);
    assert!(o.stdout == slices(&data, &[(3, n - 3), (5, 10)]));
}

#[test]
fn bad_ranges_are_refused_and_nothing_is_written() {
    let (t, data) = setup();
    let d = t.path();
    let n = data.len();
    std::fs::write(d.join("r.txt"), "1:2\n3 4 5\n").unwrap();
    std::fs::write(d.join("s.txt"), "1:2\n\n7:x\n").unwrap();
    std::fs::write(d.join("u.txt"), format!("1:2\n{n}:1\n")).unwrap();
    let end = format!("{}:2", n - 1);
    let over = format!("{}:2", u64::MAX);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--range", &end],
            format!(
                "--range {end}: bytes {}..{} lie outside the original data ({n} bytes)",
                n - 1,
                n + 1
            ),
        ),
        (vec!["--range", &over], "overflows".into()),
        (
            vec!["--ranges", "r.txt"],
            "line 2 of r.txt: '3 4 5' is not a range".into(),
        ),
        (
            vec!["--ranges", "s.txt"],
            "line 3 of s.txt: 'x' is not a size".into(),
        ),
        (
            vec!["--ranges", "u.txt"],
            format!("line 2 of u.txt: bytes {n}..{} lie outside", n + 1),
        ),
        (vec!["--ranges", "missing.txt"], "missing.txt".into()),
    ];
    for (args, msg) in cases {
        let mut a = vec!["extract", "x.acx", "-o", "out", "--range", "0:10"];
        a.extend(args.iter().copied());
        let o = run(d, &a);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = fails(&o);
        assert!(e.contains(&msg), "{args:?}: {e}");
        assert!(!d.join("out").exists(), "{args:?}: no output on error");
    }
    // usage errors (status 2): a range that is not OFFSET:LENGTH, nothing asked
    for (args, msg) in [
        (vec!["--range", "5"], "is not a range"),
        (vec!["--range", "1:2:3"], "not a size"),
        (vec![], "nothing to extract"),
        (
            vec!["--offset", "1", "--range", "1:2"],
            "cannot be used with",
        ),
    ] {
        let mut a = vec!["extract", "x.acx"];
        a.extend(args.iter().copied());
        let o = run(d, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
}

/// A damaged block fails the extract with the block named (exit status 1), and no output
/// file appears.
#[test]
fn a_damaged_block_fails_the_extract() {
    let (t, _) = setup();
    let d = t.path();
    let mut archive = std::fs::read(d.join("x.acx")).unwrap();
    // flip a byte in the data section, far from its start: some block's slices
    let a = aceapex::Archive::parse(&archive).unwrap();
    let at = (a.data_offset() + a.block_offsets()[10] + 3) as usize;
    archive[at] ^= 0x40;
    std::fs::write(d.join("bad.acx"), &archive).unwrap();
    let o = run(
        d,
        &["extract", "bad.acx", "--range", "0:100000", "-o", "out"],
    );
    let e = fails(&o);
    assert!(e.contains("block"), "{e}");
    assert!(!d.join("out").exists());
    // a range that avoids the block reads
    let o = run(d, &["extract", "bad.acx", "--range", "0:4096"]);
    ok(&o);
}

/// An archive that cannot be sought (a FIFO, as `<(curl ...)` gives) is read as standard
/// input is: copied to a temporary file first, not refused with "Illegal seek".
#[cfg(unix)]
#[test]
fn an_archive_from_a_fifo_is_read() {
    let (t, data) = setup();
    let d = t.path();
    let st = std::process::Command::new("mkfifo")
        .arg(d.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(st.success());
    let archive = std::fs::read(d.join("x.acx")).unwrap();
    let fifo = d.join("pipe");
    // (a run that stops reading early closes the FIFO: the error is the run's, below)
    let writer = std::thread::spawn(move || std::fs::write(fifo, archive).is_ok());
    let o = run(
        d,
        &[
            "extract",
            "pipe",
            "--range",
            "40000:30000",
            "--range",
            "3:4",
        ],
    );
    writer.join().unwrap();
    ok(&o);
    assert!(o.stdout == slices(&data, &[(40_000, 30_000), (3, 4)]));
}

/// The archive on standard input (copied to a temporary file) gives the same bytes; it and
/// --ranges cannot both be standard input; an existing output is kept without -f and
/// replaced with it; a reader that goes away ends the run quietly with status 141.
#[test]
fn standard_streams_and_an_existing_output() {
    let (t, data) = setup();
    let d = t.path();
    let n = data.len();
    let archive = std::fs::read(d.join("xw.acx")).unwrap();
    let want = slices(&data, &[(n - 5, 5), (0, n)]);
    let all = format!("0:{n}");
    let last = format!("{}:5", n - 5);
    let o = run_stdin(
        d,
        &["extract", "-", "--range", &last, "--range", &all],
        &archive,
    );
    ok(&o);
    assert!(o.stdout == want);
    let o = run_stdin(d, &["extract", "-", "--ranges", "-"], &archive);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot both come from standard input"));
    std::fs::write(d.join("out"), "keep").unwrap();
    let o = run(d, &["extract", "x.acx", "--range", &all, "-o", "out"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(fails(&o).contains("already exists"));
    assert_eq!(std::fs::read(d.join("out")).unwrap(), b"keep");
    ok(&run(
        d,
        &["extract", "x.acx", "--range", &all, "-o", "out", "-f"],
    ));
    assert!(std::fs::read(d.join("out")).unwrap() == data);
    // far more output than a pipe holds, its reader closed at once
    std::fs::write(d.join("r.txt"), format!("0:{n}\n").repeat(300)).unwrap();
    let mut child = spawn_piped(d, &["extract", "x.acx", "--ranges", "r.txt"]);
    drop(child.stdout.take());
    drop(child.stdin.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(141), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}
