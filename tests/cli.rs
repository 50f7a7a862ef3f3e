//! The `aceapex` binary end to end, in a temporary directory: default names, overwrite
//! protection, '-' for stdin/stdout, extract, info, device selection, exit codes and messages.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_aceapex");

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn run_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&data).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "expected success, got {:?}; stderr: {}",
        o.status,
        stderr(o)
    );
}

#[track_caller]
fn fails(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "expected failure, got success; stderr: {}",
        stderr(o)
    );
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(o);
    assert!(
        !e.trim().is_empty(),
        "a failure must explain itself on stderr"
    );
    e
}

/// Text with repeats: compressible, several 16 KiB blocks.
fn sample(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n);
    let mut x = 12345u32;
    while out.len() < n {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let words = [
            "alpha ",
            "beta ",
            "gamma ",
            "delta ",
            "epsilon\n",
            "zeta ",
            "eta, ",
            "theta. ",
        ];
        out.extend_from_slice(words[(x >> 16) as usize % words.len()].as_bytes());
    }
    out.truncate(n);
    out
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[test]
fn compress_decompress_with_default_names() {
    let t = tmp();
    let d = t.path();
    let data = sample(100_000);
    std::fs::write(d.join("in.txt"), &data).unwrap();
    let o = run(d, &["compress", "in.txt"]);
    ok(&o);
    assert!(
        stderr(&o).contains("ratio"),
        "compress reports its ratio: {}",
        stderr(&o)
    );
    let archive = std::fs::read(d.join("in.txt.acx")).expect("in.txt.acx written");
    assert_eq!(&archive[..4], b"ACPX");
    assert!(archive.len() < data.len() / 2);
    std::fs::remove_file(d.join("in.txt")).unwrap();
    let o = run(d, &["decompress", "in.txt.acx"]);
    ok(&o);
    assert_eq!(std::fs::read(d.join("in.txt")).unwrap(), data);
    // no temporary files left behind
    let names: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["in.txt", "in.txt.acx"]);
}

#[test]
fn explicit_output_names_and_options() {
    let t = tmp();
    let d = t.path();
    let data = sample(70_000);
    std::fs::write(d.join("a.bin"), &data).unwrap();
    ok(&run(
        d,
        &[
            "compress",
            "a.bin",
            "-o",
            "x.arc",
            "-l",
            "9",
            "--block-size",
            "4K",
            "--window",
            "64K",
            "--min-match",
            "8",
            "--no-rep",
            "--depth-cap",
            "4",
            "-T",
            "1",
        ],
    ));
    ok(&run(
        d,
        &[
            "decompress",
            "x.arc",
            "-o",
            "b.bin",
            "--device",
            "cpu",
            "-T",
            "2",
        ],
    ));
    assert_eq!(std::fs::read(d.join("b.bin")).unwrap(), data);
    // a name without .acx needs -o
    let e = fails(&run(d, &["decompress", "x.arc"]));
    assert!(e.contains(".acx"), "{e}");
}

#[test]
fn refuses_to_overwrite_without_force() {
    let t = tmp();
    let d = t.path();
    let data = sample(30_000);
    std::fs::write(d.join("f"), &data).unwrap();
    std::fs::write(d.join("f.acx"), b"precious").unwrap();
    let e = fails(&run(d, &["compress", "f"]));
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(std::fs::read(d.join("f.acx")).unwrap(), b"precious");
    ok(&run(d, &["compress", "-f", "f"]));
    let archive = std::fs::read(d.join("f.acx")).unwrap();
    assert_eq!(&archive[..4], b"ACPX");

    // decompress onto the existing original
    std::fs::write(d.join("f"), b"other").unwrap();
    let e = fails(&run(d, &["decompress", "f.acx"]));
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(std::fs::read(d.join("f")).unwrap(), b"other");
    ok(&run(d, &["decompress", "--force", "f.acx"]));
    assert_eq!(std::fs::read(d.join("f")).unwrap(), data);

    // extract onto an existing file
    let e = fails(&run(
        d,
        &[
            "extract", "f.acx", "--offset", "0", "--length", "5", "-o", "f",
        ],
    ));
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(std::fs::read(d.join("f")).unwrap(), data);
    ok(&run(
        d,
        &[
            "extract", "f.acx", "--offset", "1", "--length", "5", "-o", "f", "-f",
        ],
    ));
    assert_eq!(std::fs::read(d.join("f")).unwrap(), &data[1..6]);
}

#[test]
fn stdin_and_stdout() {
    let t = tmp();
    let d = t.path();
    let data = sample(50_000);
    let o = run_stdin(d, &["compress", "-"], &data);
    ok(&o);
    let archive = o.stdout.clone();
    assert_eq!(&archive[..4], b"ACPX");
    let o = run_stdin(d, &["decompress", "-"], &archive);
    ok(&o);
    assert!(o.stdout == data, "stdin -> stdout round trip differs");
    // file -> stdout and stdin -> file
    std::fs::write(d.join("in"), &data).unwrap();
    let o = run(d, &["compress", "in", "-o", "-"]);
    ok(&o);
    assert_eq!(o.stdout, archive, "stdin and file compress alike");
    ok(&run_stdin(d, &["decompress", "-", "-o", "out"], &archive));
    assert_eq!(std::fs::read(d.join("out")).unwrap(), data);
    // nothing but the named files was created
    assert!(!d.join("-").exists());
    // empty stdin
    let o = run_stdin(d, &["compress", "-"], b"");
    ok(&o);
    let o = run_stdin(d, &["decompress", "-"], &o.stdout);
    ok(&o);
    assert!(o.stdout.is_empty());
}

#[test]
fn extract_equals_the_slice() {
    let t = tmp();
    let d = t.path();
    let data = sample(200_000);
    std::fs::write(d.join("x"), &data).unwrap();
    ok(&run(d, &["compress", "x", "--block-size", "4K"]));
    ok(&run(
        d,
        &[
            "compress",
            "x",
            "-o",
            "xw.acx",
            "--block-size",
            "4K",
            "--window",
            "32K",
        ],
    ));
    for arc in ["x.acx", "xw.acx"] {
        for (off, len) in [
            (0usize, 1usize),
            (4095, 2),
            (12345, 54321),
            (199_999, 1),
            (0, 200_000),
            (100, 0),
        ] {
            let o = run(
                d,
                &[
                    "extract",
                    arc,
                    "--offset",
                    &off.to_string(),
                    "--length",
                    &len.to_string(),
                ],
            );
            ok(&o);
            assert!(
                o.stdout == data[off..off + len],
                "{arc} extract {off}+{len}"
            );
        }
        let e = fails(&run(
            d,
            &["extract", arc, "--offset", "199999", "--length", "2"],
        ));
        assert!(e.contains("outside"), "{e}");
    }
}

#[test]
fn info_json_and_text() {
    let t = tmp();
    let d = t.path();
    let data = sample(40_000);
    std::fs::write(d.join("i"), &data).unwrap();
    ok(&run(d, &["compress", "i", "--window", "64K", "-l", "3"]));
    let o = run(d, &["info", "--json", "i.acx"]);
    ok(&o);
    let s = String::from_utf8(o.stdout).unwrap();
    let s = s.trim();
    assert!(s.starts_with('{') && s.ends_with('}'), "{s}");
    assert!(s.contains("\"ratio\":"), "{s}");
    assert!(s.contains("\"original_size\":40000"), "{s}");
    assert!(s.contains("\"cross_block\":true"), "{s}");
    assert!(s.contains("\"level\":3"), "{s}");
    assert!(s.contains("\"window\":65536"), "{s}");
    assert_eq!(
        s.matches('{').count(),
        s.matches('}').count(),
        "balanced braces: {s}"
    );
    let o = run(d, &["info", "i.acx"]);
    ok(&o);
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains("40000"), "{s}");
    assert!(s.contains("ratio"), "{s}");
}

#[test]
fn bad_archives_fail_with_a_message() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("junk.acx"), b"this is not an archive at all, not even close........................................................").unwrap();
    std::fs::write(d.join("short.acx"), b"ACPX").unwrap();
    let data = sample(60_000);
    std::fs::write(d.join("g"), &data).unwrap();
    ok(&run(d, &["compress", "g"]));
    let good = std::fs::read(d.join("g.acx")).unwrap();
    std::fs::write(d.join("trunc.acx"), &good[..good.len() - 10]).unwrap();
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n - 100] ^= 0x55;
    std::fs::write(d.join("flip.acx"), &flipped).unwrap();
    for name in ["junk.acx", "short.acx", "trunc.acx", "missing.acx"] {
        for args in [
            vec!["decompress", name, "-o", "out"],
            vec!["info", name],
            vec!["extract", name, "--offset", "0", "--length", "1"],
        ] {
            let e = fails(&run(d, &args));
            assert!(e.contains("error"), "{args:?}: {e}");
            assert!(!d.join("out").exists(), "no output on failure");
        }
    }
    let e = fails(&run(
        d,
        &["decompress", "flip.acx", "-o", "out", "--device", "cpu"],
    ));
    assert!(e.contains("block") || e.contains("checksum"), "{e}");
    assert!(!d.join("out").exists(), "a failed decode leaves no output");
    // junk names its problem
    let e = fails(&run(d, &["info", "junk.acx"]));
    assert!(e.contains("not an aceapex archive"), "{e}");
}

#[test]
fn bad_arguments_fail() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("a"), b"abc").unwrap();
    for args in [
        vec!["compress", "a", "--block-size", "5000"],
        vec!["compress", "a", "--block-size", "2K"],
        vec!["compress", "a", "--block-size", "8M"],
        vec!["compress", "a", "-l", "0"],
        vec!["compress", "a", "-l", "10"],
        vec!["compress", "a", "--min-match", "5"],
        vec!["compress", "a", "--window", "0"],
        vec!["compress", "a", "--window", "lots"],
        vec!["compress", "a", "-T", "0"],
        vec!["compress", "nonexistent"],
        vec!["frobnicate"],
        vec![],
    ] {
        fails(&run(d, &args));
        assert!(
            !d.join("a.acx").exists(),
            "{args:?} must not write an archive"
        );
        assert!(!d.join("nonexistent.acx").exists());
    }
}

fn gpu_present() -> bool {
    aceapex::gpu::Gpu::open().is_ok()
}

#[test]
fn device_selection() {
    let t = tmp();
    let d = t.path();
    let data = sample(80_000);
    std::fs::write(d.join("v"), &data).unwrap();
    ok(&run(d, &["compress", "v"]));

    let o = run(
        d,
        &["decompress", "v.acx", "-o", "cpu.out", "--device", "cpu"],
    );
    ok(&o);
    assert!(stderr(&o).contains("CPU"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("cpu.out")).unwrap(), data);

    let o = run(
        d,
        &["decompress", "v.acx", "-o", "gpu.out", "--device", "gpu"],
    );
    if gpu_present() {
        ok(&o);
        assert_eq!(std::fs::read(d.join("gpu.out")).unwrap(), data);
    } else {
        let e = fails(&o);
        assert!(e.contains("no GPU"), "{e}");
        assert!(!d.join("gpu.out").exists());
    }

    let o = run(
        d,
        &["decompress", "v.acx", "-o", "auto.out", "--device", "auto"],
    );
    ok(&o);
    assert_eq!(std::fs::read(d.join("auto.out")).unwrap(), data);
    if !gpu_present() {
        let e = stderr(&o);
        assert!(
            e.contains("no GPU") && e.contains("CPU"),
            "auto must say it falls back: {e}"
        );
    }
    // the default is auto
    let o = run(d, &["decompress", "v.acx", "-o", "default.out"]);
    ok(&o);
    assert_eq!(std::fs::read(d.join("default.out")).unwrap(), data);
}

#[test]
fn empty_file_round_trips() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("e"), b"").unwrap();
    ok(&run(d, &["compress", "e"]));
    assert_eq!(std::fs::read(d.join("e.acx")).unwrap().len(), 96);
    std::fs::remove_file(d.join("e")).unwrap();
    ok(&run(d, &["decompress", "e.acx", "--device", "cpu"]));
    assert_eq!(std::fs::read(d.join("e")).unwrap(), b"");
    let o = run(d, &["extract", "e.acx", "--offset", "0", "--length", "0"]);
    ok(&o);
    assert!(o.stdout.is_empty());
}

#[test]
fn help_and_version_succeed() {
    let t = tmp();
    let o = run(t.path(), &["--help"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("compress"));
    ok(&run(t.path(), &["--version"]));
}

/// An output that is the input itself is refused (the rename would replace the input), and
/// the input is left as it was.
#[test]
fn refuses_output_equal_to_input() {
    let d = tmp();
    let data = sample(50_000);
    std::fs::write(d.path().join("same.txt"), &data).unwrap();
    let msg = fails(&run(
        d.path(),
        &["compress", "same.txt", "-o", "same.txt", "-f"],
    ));
    assert!(msg.contains("same file"), "{msg}");
    assert_eq!(std::fs::read(d.path().join("same.txt")).unwrap(), data);
}

/// A non-regular output such as /dev/null is written in place, never replaced by a regular
/// file (the tool runs as root in CI, where a rename over /dev/null would succeed).
#[test]
fn device_output_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let d = tmp();
    std::fs::write(d.path().join("x.txt"), sample(20_000)).unwrap();
    ok(&run(
        d.path(),
        &["compress", "x.txt", "-o", "/dev/null", "-f"],
    ));
    let t = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(
        t.is_char_device(),
        "/dev/null is no longer a character device"
    );
}
