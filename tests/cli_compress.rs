//! The `aceapex` binary's `compress` end to end, in a temporary directory: default names,
//! overwrite protection, '-' for stdin/stdout, options and their limits, temporary outputs
//! removed on errors and signals, terminals, FIFOs and directories as inputs, exit codes and
//! messages.

mod common;

use common::cli::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

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

/// `--target gpu` stores the match streams raw: `info --json` reports every match-layer
/// stream stored raw (stored bytes equal to decoded ones) while the default codes the
/// commands smaller; both round-trip; `info` names it on its encoder line and in JSON.
#[test]
fn raw_match_streams_store_only_the_literals_coded() {
    let t = tmp();
    let d = t.path();
    // text with repeats, every seventh byte a letter drawn at random: enough literals that
    // their slices pay for rANS
    let mut data = sample(100_000);
    let mut x = 7u32;
    for b in data.iter_mut().step_by(7) {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        *b = b"ACGTNRYKMS"[(x >> 16) as usize % 10];
    }
    std::fs::write(d.join("a.txt"), &data).unwrap();
    ok(&run(
        d,
        &["compress", "a.txt", "-o", "raw.acx", "--target", "gpu"],
    ));
    ok(&run(d, &["compress", "a.txt", "-o", "coded.acx"]));
    let stored = |name: &str| -> Vec<(u64, u64)> {
        let o = run(d, &["info", name, "--json"]);
        ok(&o);
        let j = String::from_utf8(o.stdout).unwrap();
        ["literals", "lengths", "offsets", "commands", "offset_tails"]
            .iter()
            .map(|k| {
                let stream = &j[j.find(&format!("\"{k}\":{{")).expect(k)..];
                (
                    json_number(stream, "decoded"),
                    json_number(stream, "stored"),
                )
            })
            .collect()
    };
    for (name, raw) in [("raw.acx", true), ("coded.acx", false)] {
        let o = run(d, &["info", name]);
        ok(&o);
        let text = String::from_utf8(o.stdout).unwrap();
        let encoder = text.lines().find(|l| l.starts_with("encoder")).unwrap();
        assert_eq!(encoder.contains("match streams raw"), raw, "{encoder}");
        let o = run(d, &["info", name, "--json"]);
        let key = format!("\"raw_match_streams\":{raw}");
        assert!(
            String::from_utf8(o.stdout).unwrap().contains(&key),
            "{name}"
        );
    }
    let (raw, coded) = (stored("raw.acx"), stored("coded.acx"));
    assert!(raw[0].1 < raw[0].0, "literals coded: {raw:?}");
    assert!(raw[1..].iter().all(|&(dec, st)| dec == st), "{raw:?}");
    assert!(raw[3].0 > 0 && coded[3].1 < coded[3].0, "{coded:?}");
    for name in ["raw.acx", "coded.acx"] {
        ok(&run(
            d,
            &["decompress", name, "-o", "out", "-f", "--device", "cpu"],
        ));
        assert_eq!(std::fs::read(d.join("out")).unwrap(), data, "{name}");
    }
}

/// `compress --wide-lanes` (with `--raw-match-streams`): an archive whose long
/// literal slices have 64 lanes, which `info` reports ("wide slices", JSON `wide_blocks`) and
/// both decoders restore; without `--raw-match-streams` the option is refused with a message
/// that names the one it needs.
#[test]
fn gpu_target_takes_wide_lanes_where_chains_are_long() {
    let t = tmp();
    let d = t.path();
    // DNA of both cases at random (8 letters, packed two a symbol; too many lower-case
    // stretches for a two-bit slice with runs, FORMAT.md §5.8): chains long enough to go wide
    let mut x = 0x9E37_79B9u32;
    let data: Vec<u8> = (0..600_000)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = b"ACGT"[(x >> 30) as usize];
            if (x >> 20) & 1 == 1 {
                b.to_ascii_lowercase()
            } else {
                b
            }
        })
        .collect();
    std::fs::write(d.join("g.fa"), &data).unwrap();
    ok(&run(
        d,
        &["compress", "g.fa", "-o", "w.acx", "--target", "gpu"],
    ));
    ok(&run(
        d,
        &["compress", "g.fa", "-o", "r.acx", "--target", "size"],
    ));
    let upper = data.to_ascii_uppercase();
    std::fs::write(d.join("u.fa"), &upper).unwrap();
    let narrow = [
        "compress",
        "u.fa",
        "-o",
        "s.acx",
        "--target",
        "gpu",
        "--block-size",
        "4K",
    ];
    ok(&run(d, &narrow));
    for (name, is_wide) in [("w.acx", true), ("r.acx", false), ("s.acx", false)] {
        let o = run(d, &["info", name]);
        ok(&o);
        let text = String::from_utf8(o.stdout).unwrap();
        let version = text
            .lines()
            .find(|l| l.starts_with("format version"))
            .unwrap();
        assert!(version.ends_with(" 1"), "{version}");
        let blocks = text.lines().find(|l| l.starts_with("blocks")).unwrap();
        assert_eq!(blocks.contains("with wide slices"), is_wide, "{blocks}");
        let o = run(d, &["info", name, "--json"]);
        let wide_blocks = json_number(&String::from_utf8(o.stdout).unwrap(), "wide_blocks");
        // 37 blocks of 16 KiB, the last one short
        assert_eq!(wide_blocks > 30, is_wide, "{name}: {wide_blocks}");
        assert_eq!(wide_blocks == 0, !is_wide, "{name}: {wide_blocks}");
        ok(&run(
            d,
            &["decompress", name, "-o", "out", "-f", "--device", "cpu"],
        ));
        let original = if name == "s.acx" { &upper } else { &data };
        assert!(std::fs::read(d.join("out")).unwrap() == *original, "{name}");
    }
}

/// Default names keep a name's own bytes (not UTF-8 here): two inputs whose names differ in
/// such a byte get two archives (their display forms were the same, so one overwrote the
/// other), and decompress finds the `.acx` suffix.
#[cfg(unix)]
#[test]
fn default_names_of_non_utf8_names() {
    use std::os::unix::ffi::OsStrExt;
    let t = tmp();
    let d = t.path();
    let name = |b: &[u8]| std::ffi::OsStr::from_bytes(b).to_os_string();
    std::fs::write(d.join(name(b"n\xff")), b"one").unwrap();
    std::fs::write(d.join(name(b"n\xfe")), b"two").unwrap();
    let o = Command::new(BIN)
        .current_dir(d)
        .arg("compress")
        .arg(name(b"n\xff"))
        .arg(name(b"n\xfe"))
        .output()
        .unwrap();
    ok(&o);
    for (n, want) in [(&b"n\xff"[..], &b"one"[..]), (b"n\xfe", b"two")] {
        let mut archive = n.to_vec();
        archive.extend_from_slice(b".acx");
        std::fs::remove_file(d.join(name(n))).unwrap();
        let o = Command::new(BIN)
            .current_dir(d)
            .args(["decompress", "--device", "cpu"])
            .arg(name(&archive))
            .output()
            .unwrap();
        ok(&o);
        assert_eq!(std::fs::read(d.join(name(n))).unwrap(), want);
    }
}

/// A repeated option takes its last value, as in gzip and zstd (scripts add flags to a base
/// command line); compressing an archive again says that it gains little.
#[test]
fn repeated_options_take_the_last_and_archives_are_named() {
    let t = tmp();
    let d = t.path();
    let data = sample(40_000);
    std::fs::write(d.join("a.txt"), &data).unwrap();
    let args = [
        "compress", "a.txt", "-l", "3", "-l", "1", "--target", "gpu", "--target", "size", "-f",
    ];
    ok(&run(d, &args));
    let o = run(d, &["info", "a.txt.acx", "--json", "--json"]);
    ok(&o);
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("\"level\":1,"));
    let args = [
        "decompress",
        "a.txt.acx",
        "-o",
        "b",
        "-T",
        "1",
        "-T",
        "2",
        "-f",
        "-f",
    ];
    ok(&run(d, &args));
    assert_eq!(std::fs::read(d.join("b")).unwrap(), data);
    let o = run(d, &["compress", "a.txt.acx", "-o", "twice.acx"]);
    ok(&o);
    assert!(
        stderr(&o).contains("already an aceapex archive"),
        "{}",
        stderr(&o)
    );
    let o = run(d, &["compress", "a.txt", "-o", "once.acx"]);
    ok(&o);
    assert!(!stderr(&o).contains("already"), "{}", stderr(&o));
    // the magic alone is no archive
    std::fs::write(d.join("fake"), b"ACPXhello").unwrap();
    let o = run(d, &["compress", "fake"]);
    ok(&o);
    assert!(!stderr(&o).contains("already"), "{}", stderr(&o));
}

#[test]
fn names_a_missing_output_folder() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("f"), sample(5_000)).unwrap();
    let e = fails(&run(d, &["compress", "f", "-o", "no/such/f.acx"]));
    assert!(e.contains("no/such does not exist"), "{e}");
    assert!(!d.join("no").exists());
    let e = fails(&run(d, &["compress", "f", "-o", "f/x.acx"]));
    assert!(e.contains("f is not a folder"), "{e}");
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
    // no input named: a pipe is standard input, as for zstd and gzip
    let o = run_stdin(d, &["compress"], &data);
    ok(&o);
    assert_eq!(o.stdout, archive, "an implicit '-' compresses as '-'");
    let o = run_stdin(d, &["decompress", "-q"], &archive);
    ok(&o);
    assert!(o.stdout == data, "an implicit '-' restores as '-'");
    assert!(!d.join("-").exists());
}

/// -T 0 means all cores; compress --help names the largest window.
#[test]
fn threads_zero_is_all_cores_and_help_names_the_limits() {
    let t = tmp();
    let d = t.path();
    let data = sample(50_000);
    std::fs::write(d.join("z"), &data).unwrap();
    ok(&run(d, &["compress", "z", "-T", "0"]));
    ok(&run(d, &["compress", "z", "-T", "1024", "-o", "z2.acx"]));
    let o = run(
        d,
        &[
            "decompress",
            "z.acx",
            "-o",
            "y",
            "--device",
            "cpu",
            "-T",
            "0",
        ],
    );
    ok(&o);
    assert_eq!(std::fs::read(d.join("y")).unwrap(), data);
    assert!(!stderr(&o).contains("(0 threads)"), "{}", stderr(&o));
    let o = run(d, &["compress", "--help"]);
    ok(&o);
    let h = String::from_utf8(o.stdout).unwrap();
    assert!(h.contains("4G - 1 (4294967295 bytes)"), "{h}");
    assert!(
        h.contains("0 = all cores") && h.contains("1 to 1024"),
        "{h}"
    );
}

/// Exit status 2 for every mistake on the command line (clap's own and the checks after
/// parsing alike), with clap's message; 1 for errors found while running.
#[test]
fn bad_arguments_fail() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("a"), b"abc").unwrap();
    for (args, msg) in [
        (
            vec!["compress", "a", "--block-size", "5000"],
            "not a power of two",
        ),
        (vec!["compress", "a", "--block-size", "2K"], "from 4K to 4M"),
        (vec!["compress", "a", "--block-size", "8M"], "from 4K to 4M"),
        (vec!["compress", "a", "-l", "0"], "use 1 (fastest) to 9"),
        (vec!["compress", "a", "-l", "10"], "use 1 (fastest) to 9"),
        (
            vec!["compress", "a", "--min-match", "3"],
            "3 is below 4, the shortest match",
        ),
        (
            vec!["compress", "a", "--min-match", "six"],
            "not a match length",
        ),
        (
            vec!["compress", "a", "--min-match", "4294967296"],
            "is too large",
        ),
        (vec!["compress", "a", "--window", "0"], "at least 1 byte"),
        (vec!["compress", "a", "--window", "lots"], "not a size"),
        (vec!["compress", "a", "--window", "4G"], "largest window"),
        (
            vec!["compress", "a", "-T", "1025"],
            "above the limit of 1024",
        ),
        (
            vec!["compress", "a", "-T", "99999999999999999999999"],
            "0 for all cores",
        ),
        (
            vec!["decompress", "a.acx", "-T", "x"],
            "not a number of threads",
        ),
        (
            vec!["decompress", "a.acx", "-T=-1"],
            "not a number of threads",
        ),
        (
            vec!["compress", "a", "-o", "x", "-c"],
            "cannot be used with",
        ),
        (vec!["decompress", "a"], "does not end in .acx"),
        (
            vec!["extract", "a", "--offset", "1.5K", "--length", "1"],
            "not a size",
        ),
        // --offset is required (--length is not: to the end)
        (vec!["extract", "a", "--length", "5"], "--offset"),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (vec![], "Usage"),
        // another command's option: named as such, not clap's tip to pass it after `--`
        (
            vec!["decompress", "a.acx", "--target", "gpu"],
            "--target is an option of 'aceapex compress', not of 'aceapex decompress'",
        ),
        (
            vec!["compress", "a", "--offset", "3"],
            "--offset is an option of 'aceapex extract', not of 'aceapex compress'",
        ),
        (
            vec!["info", "a.acx", "--bogus"],
            "unexpected argument '--bogus'",
        ),
        (
            vec!["decompress", "a.acx", "-l", "9"],
            "-l is an option of 'aceapex compress', not of 'aceapex decompress'",
        ),
        (
            vec!["info", "a.acx", "-f"],
            "'aceapex compress', 'aceapex decompress' and 'aceapex extract', not of",
        ),
        // before the subcommand: clap's own message
        (
            vec!["--level", "9", "compress", "a"],
            "unexpected argument '--level'",
        ),
        // the format flags the encoder chooses by itself
        (
            vec!["compress", "a", "--raw-match-streams"],
            "unexpected argument '--raw-match-streams'",
        ),
        (
            vec!["compress", "a", "--no-pack"],
            "unexpected argument '--no-pack'",
        ),
        (
            vec!["compress", "a", "--target", "cpu"],
            "invalid value 'cpu'",
        ),
    ] {
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: usage error: {e}");
        assert!(e.contains(msg), "{args:?}: {e}");
        assert!(
            !d.join("a.acx").exists(),
            "{args:?} must not write an archive"
        );
    }
    // errors found while running: status 1
    std::fs::write(d.join("junk.acx"), b"not an archive").unwrap();
    for (args, msg) in [
        (vec!["compress", "nonexistent"], "nonexistent"),
        (
            vec!["decompress", "junk.acx", "-o", "out"],
            "not an aceapex archive",
        ),
        (vec!["compress", "a", "-o", "junk.acx"], "already exists"),
    ] {
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: runtime error: {e}");
        assert!(e.contains(msg), "{args:?}: {e}");
    }
    assert!(!d.join("nonexistent.acx").exists());
    // documented
    let o = run(d, &["--help"]);
    ok(&o);
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(
        h.contains("Exit status") && h.contains("2 usage error") && h.contains("130 interrupted"),
        "{h}"
    );
}

/// Every failing run removes its temporary output (the output file is created as a hidden
/// temporary before the work starts).
#[test]
fn temporary_output_removed_on_errors() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("junk.acx"), vec![7u8; 500]).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let data = sample(60_000);
    std::fs::write(d.join("g"), &data).unwrap();
    ok(&run(d, &["compress", "g"]));
    let mut flipped = std::fs::read(d.join("g.acx")).unwrap();
    let n = flipped.len();
    flipped[n - 100] ^= 0x55;
    std::fs::write(d.join("flip.acx"), &flipped).unwrap();
    let before = listing(d);
    // damaged archive (file and stdin), bad range, directory input
    for args in [
        vec!["decompress", "flip.acx", "-o", "out", "--device", "cpu"],
        vec!["decompress", "junk.acx", "-o", "out"],
        vec!["decompress", "-", "-o", "out"],
        vec![
            "extract", "g.acx", "--offset", "59999", "--length", "5", "-o", "out",
        ],
        vec!["compress", "sub", "-o", "out"],
    ] {
        let o = if args[1] == "-" {
            run_stdin(d, &args, b"ACPX and then garbage")
        } else {
            run(d, &args)
        };
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert_eq!(listing(d), before, "{args:?} left files behind: {e}");
    }
}

/// SIGINT and SIGTERM remove the temporary output and exit with 130. Reading standard
/// input that stays open holds the run after the temporary is created.
#[test]
fn signals_remove_the_temporary_output() {
    for (sig, args) in [
        (libc::SIGINT, ["compress", "-", "-o", "out.acx"]),
        (libc::SIGTERM, ["decompress", "-", "-o", "out.bin"]),
    ] {
        let t = tmp();
        let d = t.path();
        let mut child = spawn_piped(d, &args);
        let mut stdin = child.stdin.take().unwrap();
        // (the archive magic first: `decompress` reads on past it, waiting for the rest)
        stdin.write_all(b"ACPX, some bytes, not the end").unwrap();
        let t0 = std::time::Instant::now();
        let temp = loop {
            if let Some(n) = listing(d).into_iter().find(|n| n.ends_with(".aceapex-tmp")) {
                break n;
            }
            assert!(t0.elapsed().as_secs() < 30, "no temporary output appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(temp.starts_with(&format!(".{}.", args[3])), "{temp}");
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let o = child.wait_with_output().unwrap();
        drop(stdin);
        assert_eq!(o.status.code(), Some(130), "{sig}: {}", stderr(&o));
        assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
        assert_eq!(listing(d), Vec::<String>::new(), "signal {sig}");
    }
}

/// --offset, --length, --block-size and --window take the same sizes: K/KiB/M/MiB/G/GiB
/// binary, KB/MB/GB decimal, documented in --help.
#[test]
fn sizes_accept_suffixes() {
    let t = tmp();
    let d = t.path();
    let data = sample(300_000);
    std::fs::write(d.join("s"), &data).unwrap();
    ok(&run(
        d,
        &["compress", "s", "--block-size", "8KiB", "--window", "64k"],
    ));
    let o = run(d, &["info", "--json", "s.acx"]);
    let j = String::from_utf8_lossy(&o.stdout);
    assert!(
        j.contains("\"block_size\":8192") && j.contains("\"window\":65536"),
        "{j}"
    );
    for (off, len, range) in [
        ("4K", "1KiB", 4096..5120),
        ("4KB", "1000", 4000..5000),
        ("100kb", "2 KiB", 100_000..102_048),
        ("0", "256kib", 0..262_144),
        ("1b", "1B", 1..2),
    ] {
        let o = run(d, &["extract", "s.acx", "--offset", off, "--length", len]);
        ok(&o);
        assert!(o.stdout == data[range.clone()], "{off} {len} -> {range:?}");
    }
    // 16KB is decimal: 16000 bytes, not a power of two; the message says so
    let o = run(d, &["compress", "s", "-f", "--block-size", "16KB"]);
    let e = fails(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        e.contains("16000 bytes") && e.contains("16K = 16KiB = 16384"),
        "{e}"
    );
    let o = run(
        d,
        &[
            "extract",
            "s.acx",
            "--offset",
            "99999999999999999999",
            "--length",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(fails(&o).contains("too large"));
    for cmd in ["compress", "extract"] {
        let o = run(d, &[cmd, "--help"]);
        ok(&o);
        let h = String::from_utf8_lossy(&o.stdout);
        assert!(
            h.contains("K, KiB = 1024") && h.contains("KB = 1000") && h.contains("<SIZE>"),
            "{cmd}: {h}"
        );
    }
}

/// A directory as input or output is named as such (not "No such device").
#[test]
fn directory_input_is_named() {
    let t = tmp();
    let d = t.path();
    std::fs::create_dir(d.join("dir.acx")).unwrap();
    std::fs::write(d.join("f"), sample(5000)).unwrap();
    for args in [
        vec!["compress", "dir.acx", "-o", "x"],
        vec!["decompress", "dir.acx", "-o", "x"],
        vec!["info", "dir.acx"],
        vec!["extract", "dir.acx", "--offset", "0", "--length", "1"],
    ] {
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(e.contains("dir.acx is a directory"), "{args:?}: {e}");
        assert!(!e.contains("No such device"), "{e}");
        // the advice fits the command: tar for what compress reads, none for an archive
        if args[0] == "compress" {
            assert!(e.contains("pack a directory with tar"), "{args:?}: {e}");
        } else {
            assert!(
                e.contains("not an archive") && !e.contains("pack a directory"),
                "{args:?}: {e}"
            );
        }
    }
    for force in [false, true] {
        let mut args = vec!["compress", "f", "-o", "dir.acx"];
        if force {
            args.push("-f");
        }
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1));
        assert!(e.contains("dir.acx is a directory"), "{e}");
    }
    assert_eq!(listing(d), ["dir.acx", "f"]);
}

/// Compressed output to a terminal is refused unless forced (like gzip and zstd); so is an
/// archive read from a terminal. -c writes to standard output.
#[test]
fn refuses_binary_to_a_terminal() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("f"), b"hello hello hello").unwrap();
    let run_tty = |args: &[&str], stdin_tty: bool| {
        let (_master, slave) = pty();
        let mut c = Command::new(BIN);
        c.args(args).current_dir(d).stderr(Stdio::piped());
        if stdin_tty {
            c.stdin(slave).stdout(Stdio::piped());
        } else {
            c.stdin(Stdio::null()).stdout(slave);
        }
        c.output().unwrap()
    };
    for args in [
        &["compress", "f", "-c"][..],
        &["compress", "f", "-o", "-"],
        &["compress", "-"],
    ] {
        let o = run_tty(args, false);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("refusing to write compressed data to a terminal") && e.contains("-f"),
            "{args:?}: {e}"
        );
    }
    ok(&run_tty(&["compress", "f", "-c", "-f"], false));
    assert_eq!(listing(d), ["f"]);
    // -c to a pipe is -o -
    let o = run(d, &["compress", "f", "-c"]);
    ok(&o);
    assert_eq!(&o.stdout[..4], b"ACPX");
    assert_eq!(o.stdout, run(d, &["compress", "f", "-o", "-"]).stdout);
    std::fs::write(d.join("f.acx"), &o.stdout).unwrap();
    let o = run(d, &["decompress", "f.acx", "-c"]);
    ok(&o);
    assert_eq!(o.stdout, b"hello hello hello");
    // an archive is not typed at a terminal
    let o = run_tty(&["decompress", "-", "-o", "out"], true);
    let e = fails(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(e.contains("terminal"), "{e}");
    assert!(!d.join("out").exists());
}

/// A pipe given by name (/dev/stdin, a FIFO, `<(...)`) is read as a stream, not as an empty
/// file (its size is 0).
#[test]
fn named_pipe_input_is_read() {
    let t = tmp();
    let d = t.path();
    let data = sample(40_000);
    ok(&run_stdin(
        d,
        &["compress", "/dev/stdin", "-o", "p.acx"],
        &data,
    ));
    let o = run(d, &["decompress", "p.acx", "-c"]);
    ok(&o);
    assert!(o.stdout == data);
}

/// --depth-cap reaches the encoder and the header, and a cap that binds is kept.
#[test]
fn depth_cap_is_applied() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("r"), b"abcdefgh".repeat(5000)).unwrap();
    let depths = |cap: &str| {
        ok(&run(
            d,
            &["compress", "r", "-f", "--depth-cap", cap, "--window", "64K"],
        ));
        let o = run(d, &["info", "--json", "r.acx"]);
        let j = String::from_utf8_lossy(&o.stdout).into_owned();
        let field = |name: &str| u32::try_from(json_number(&j, name)).unwrap();
        (field("depth_cap"), field("max_block_depth"))
    };
    let (cap, free) = depths("0");
    assert_eq!(cap, 0);
    assert!(
        free >= 2,
        "the sample must reach depth 2 without a cap: {free}"
    );
    let (cap, capped) = depths("2");
    assert_eq!(cap, 2);
    assert!(capped < 2, "max block depth {capped} with --depth-cap 2");
}

/// A depth cap that cannot bind (no match chain is 2^32 - 1 deep) leaves the archive as
/// without a cap, apart from the header field that records it, at the lazy-parser levels
/// 1-6: the backward match extension runs with a cap too and gives bytes back only
/// where the cap binds. (Levels 7-9 replace the optimal parser by the lazy one under a cap.)
#[test]
fn depth_cap_that_cannot_bind_keeps_the_archive() {
    let t = tmp();
    let d = t.path();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/moby_dick_64k.txt");
    std::fs::copy(golden, d.join("m")).unwrap();
    // levels 1-6 (the lazy parser); 7-9 use the optimal parser, which a cap replaces by
    // the lazy one (docs: README `--depth-cap`)
    for level in ["1", "5", "6"] {
        ok(&run(
            d,
            &["compress", "m", "-l", level, "-o", "a.acx", "-f"],
        ));
        ok(&run(
            d,
            &[
                "compress",
                "m",
                "-l",
                level,
                "-o",
                "b.acx",
                "-f",
                "--depth-cap",
                "4294967295",
            ],
        ));
        let a = std::fs::read(d.join("a.acx")).unwrap();
        let b = std::fs::read(d.join("b.acx")).unwrap();
        // 96-byte header: depth_cap and the metadata checksum differ by design
        assert!(
            a[96..] == b[96..],
            "level {level}: {} vs {} bytes",
            a.len(),
            b.len()
        );
    }
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
    // defaults and units are spelled out
    let o = run(t.path(), &["compress", "--help"]);
    ok(&o);
    let h = String::from_utf8_lossy(&o.stdout);
    for s in [
        "[default: 6]",
        "[default: size]",
        "[default: 16K]",
        "default: INPUT.acx",
        "default: the block size",
        "default: all cores",
        "the input is kept",
        "-c, --stdout",
    ] {
        assert!(h.contains(s), "compress --help lacks {s:?}: {h}");
    }
    let o = run(t.path(), &["decompress", "--help"]);
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(
        h.contains("INPUT without .acx") && h.contains("[default: auto]"),
        "{h}"
    );
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

/// A reader that closes standard output early (`| head`) ends the run quietly with the
/// status of a process ended by SIGPIPE (141), as gzip and zstd end.
#[test]
fn closed_stdout_ends_quietly() {
    let t = tmp();
    let d = t.path();
    // large enough not to fit a pipe's buffer
    let data: Vec<u8> = (0..4_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    std::fs::write(d.join("big"), &data).unwrap();
    ok(&run(d, &["compress", "big", "-o", "big.acx"]));
    let mut child = spawn_piped(d, &["decompress", "--device", "cpu", "-c", "big.acx"]);
    let mut first = [0u8; 5];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert_eq!(&first, &data[..5]);
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An input that is not a regular file (here a FIFO, as `/dev/null` is a device) gets no
/// output name derived from it (`compress /dev/null` would create `/dev/null.acx`): the
/// error asks for -o, nothing is created and the FIFO is never opened (no writer: opening it
/// would block). With -o its data are read as a stream.
#[test]
fn no_output_name_from_a_fifo() {
    let t = tmp();
    let d = t.path();
    for name in ["pipe", "pipe.acx"] {
        let st = Command::new("mkfifo")
            .arg(d.join(name))
            .status()
            .expect("mkfifo runs");
        assert!(st.success());
    }
    for args in [vec!["compress", "pipe"], vec!["decompress", "pipe.acx"]] {
        // with a deadline: were the FIFO opened, the run would block, not fail
        let mut child = spawn_piped(d, &args);
        ends_by_itself(&mut child, "opened the FIFO and waited for a writer");
        let o = child.wait_with_output().unwrap();
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            e.contains("is not a regular file: name the output with -o"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(listing(d), ["pipe", "pipe.acx"]);
    // with -o the FIFO is read: a writer thread feeds it
    let data = sample(20_000);
    let fifo = d.join("pipe");
    let feed = data.clone();
    let writer = std::thread::spawn(move || std::fs::write(fifo, feed).unwrap());
    ok(&run(d, &["compress", "pipe", "-o", "p.acx"]));
    writer.join().unwrap();
    ok(&run(d, &["decompress", "p.acx", "-o", "p.out"]));
    assert_eq!(std::fs::read(d.join("p.out")).unwrap(), data);
}

/// A minimum match longer than a block can never match: a usage error that says so, not an
/// archive without matches.
#[test]
fn min_match_longer_than_a_block_is_refused() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("f"), sample(5_000)).unwrap();
    let o = run(d, &["compress", "f", "--min-match", "16385"]);
    let e = fails(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("longer than a block (16384 bytes)"), "{e}");
    assert_eq!(listing(d), ["f"]);
    // a block's length itself is allowed
    ok(&run(
        d,
        &["compress", "f", "--min-match", "4096", "--block-size", "4K"],
    ));
}

/// A count of one reads "1 byte", not "1 bytes" (`info`); an empty input's summary names it
/// instead of a ratio of 0.
#[test]
fn singular_counts_and_empty_input_summary() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("one"), b"x").unwrap();
    std::fs::write(d.join("empty"), b"").unwrap();
    ok(&run(d, &["compress", "one"]));
    let o = run(d, &["info", "one.acx"]);
    ok(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("original size    1 byte\n"), "{text}");
    let o = run(d, &["compress", "empty"]);
    ok(&o);
    let e = stderr(&o);
    assert!(e.contains("empty -> empty.acx: empty input -> "), "{e}");
    assert!(!e.contains("ratio"), "{e}");
}

#[test]
fn quiet_prints_only_errors() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("q"), sample(30_000)).unwrap();
    let o = run(d, &["compress", "-q", "q"]);
    ok(&o);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // also after the subcommand's arguments, and with the no-GPU fallback note
    let o = run(d, &["decompress", "q.acx", "-o", "q.out", "--quiet"]);
    ok(&o);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("q.out")).unwrap(), sample(30_000));
    // errors still print
    let o = run(d, &["decompress", "-q", "missing.acx"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing.acx"), "{}", stderr(&o));
    // without -q the summary line is there
    let o = run(d, &["compress", "q", "-f"]);
    ok(&o);
    assert!(stderr(&o).contains("ratio"), "{}", stderr(&o));
}

#[test]
fn several_inputs_each_go_to_their_default_names() {
    let t = tmp();
    let d = t.path();
    let (a, b) = (sample(10_000), sample(30_000));
    std::fs::write(d.join("a"), &a).unwrap();
    std::fs::write(d.join("b"), &b).unwrap();
    ok(&run(d, &["compress", "a", "b"]));
    std::fs::remove_file(d.join("a")).unwrap();
    std::fs::remove_file(d.join("b")).unwrap();
    ok(&run(d, &["decompress", "a.acx", "b.acx"]));
    assert_eq!(std::fs::read(d.join("a")).unwrap(), a);
    assert_eq!(std::fs::read(d.join("b")).unwrap(), b);
    // one failure does not stop the others, and the command fails
    std::fs::remove_file(d.join("b.acx")).unwrap();
    let o = run(d, &["compress", "missing", "b"]);
    let e = fails(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("missing") && e.contains("1 of 2 inputs failed"),
        "{e}"
    );
    assert!(
        d.join("b.acx").exists(),
        "the second input was still compressed"
    );
    // -o, -c and '-' need one input: a usage error
    for args in [
        &["compress", "a", "b", "-o", "x"][..],
        &["compress", "a", "b", "-c"][..],
        &["decompress", "a.acx", "-", "-f"][..],
        &["decompress", "a.acx", "a.acx", "-o", "x"][..],
    ] {
        let o = run(d, args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("single input"), "{args:?}: {e}");
    }
    // but several archives go to standard output one after the other, as gzip -dc does
    ok(&run(d, &["compress", "b", "-f"]));
    let mut both = a.clone();
    both.extend_from_slice(&b);
    for args in [
        &["decompress", "a.acx", "b.acx", "-c"][..],
        &["decompress", "a.acx", "b.acx", "-o", "-"][..],
    ] {
        let o = run(d, args);
        ok(&o);
        assert!(
            o.stdout == both,
            "{args:?}: the originals one after the other"
        );
    }
}

/// `--min-match` left out: levels 8-9 try 4 against 6 on a sample and keep the smaller
/// (FORMAT.md §2: 4 writes match base 4); lower levels keep 6.
#[test]
fn minimum_match_default_follows_level_and_data() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("t"), sample(200_000)).unwrap();
    let json = |args: &[&str]| {
        ok(&run(d, args));
        let o = run(d, &["info", "--json", "t.acx"]);
        ok(&o);
        String::from_utf8(o.stdout).unwrap()
    };
    // words of 4-8 bytes: 4- and 5-byte matches pay
    let s = json(&["compress", "t", "-f", "-l", "8"]);
    assert!(s.contains("\"format_version\":1"), "{s}");
    assert!(s.contains("\"min_match\":4,\"match_base\":4"), "{s}");
    let s = json(&["compress", "t", "-f", "-l", "8"]);
    assert!(s.contains("\"min_match\":4,\"match_base\":4"), "{s}");
    let s = json(&["compress", "t", "-f", "-l", "8", "--target", "size"]);
    assert!(s.contains("\"min_match\":4,\"match_base\":4"), "{s}");
    // below level 8, 16 bytes or fewer (this sample's words) count as nucleotide sequence
    let s = json(&["compress", "t", "-f"]);
    assert!(s.contains("\"format_version\":1"), "{s}");
    assert!(s.contains("\"min_match\":6,\"match_base\":6"), "{s}");
    // an explicit value wins, and above 6 the base stays 6
    let s = json(&["compress", "t", "-f", "-l", "8", "--min-match", "5"]);
    assert!(s.contains("\"min_match\":5,\"match_base\":5"), "{s}");
    let s = json(&["compress", "t", "-f", "-l", "8", "--min-match", "7"]);
    assert!(s.contains("\"format_version\":1"), "{s}");
    assert!(s.contains("\"min_match\":7,\"match_base\":6"), "{s}");
    // and the archives restore
    ok(&run(d, &["decompress", "t.acx", "-o", "back", "-f"]));
    assert_eq!(std::fs::read(d.join("back")).unwrap(), sample(200_000));
}
