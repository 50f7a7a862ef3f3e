//! The `aceapex` binary's `decompress`, `extract` and `info` end to end, in a temporary
//! directory: default names, extract ranges, info as text and JSON, device selection,
//! `--test`, damaged and hostile archives (a clear message and exit status 1, never a panic).

mod common;

use common::cli::*;
use common::huge_original_archive;
use std::io::Write;

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
        assert!(
            e.contains("bytes 199999..200001 lie outside the original data (200000 bytes)"),
            "{e}"
        );
        // no --length: to the end; an offset at the end gives nothing, past it an error
        for off in [0usize, 5000, 199_999, 200_000] {
            let o = run(d, &["extract", arc, "--offset", &off.to_string()]);
            ok(&o);
            assert!(o.stdout == data[off..], "{arc} extract {off}..");
        }
        let e = fails(&run(d, &["extract", arc, "--offset", "200001"]));
        assert!(
            e.contains("--offset 200001 lies outside the original data"),
            "{e}"
        );
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
    assert!(s.contains("\"block_depth_histogram\":["), "{s}");
    // the sections add up (FORMAT.md §1): header, block_count packed entries, tables, slices
    let num = |key: &str| json_number(s, key);
    let stored: u64 = s
        .match_indices("\"stored\":")
        .map(|(i, _)| {
            let v = &s[i + 9..];
            v[..v.find([',', '}']).unwrap()].parse::<u64>().unwrap()
        })
        .sum();
    let entry = num("entry_bytes");
    assert!((8..64).contains(&entry), "packed entries: {s}");
    assert_eq!(num("block_table_bytes"), num("block_count") * entry, "{s}");
    // stream keys are JSON-friendly (no spaces)
    assert!(s.contains("\"offset_tails\":{"), "{s}");
    assert_eq!(
        96 + num("block_count") * entry + num("table_bytes") + stored,
        std::fs::metadata(d.join("i.acx")).unwrap().len(),
        "{s}"
    );
    assert!(
        s.contains(
            "\"block_depth_buckets\":[\"0\",\"1\",\"2-3\",\"4-7\",\"8-15\",\"16-31\",\"32-63\",\
             \"64+\"]"
        ),
        "{s}"
    );
    let o = run(d, &["info", "i.acx"]);
    ok(&o);
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains("40000"), "{s}");
    assert!(s.contains("ratio"), "{s}");
    assert!(s.contains("dependency level"), "{s}");
    assert!(s.contains("blocks by depth  0:"), "{s}");
    assert!(s.contains("block table      "), "{s}");
    assert!(s.contains(" 64+:"), "{s}");
    // the help explains the depth and its buckets
    let o = run(d, &["info", "--help"]);
    ok(&o);
    let h = String::from_utf8(o.stdout).unwrap();
    assert!(
        h.contains("level n + 1") && h.contains("32-63, 64 and more"),
        "{h}"
    );
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
    // a cut archive says truncated, one with bytes after its end says so
    let e = fails(&run(d, &["decompress", "trunc.acx", "-o", "out"]));
    let want = format!(
        "archive truncated (or its header damaged): its header declares {} bytes, the file has {}",
        good.len(),
        good.len() - 10
    );
    assert!(e.contains(&want), "{e}");
    let mut longer = good.clone();
    longer.extend_from_slice(b"extra");
    std::fs::write(d.join("long.acx"), &longer).unwrap();
    let e = fails(&run(d, &["info", "long.acx"]));
    // (the bytes after the data section are the extension area, under the meta checksum)
    assert!(e.contains("or bytes were appended to the archive"), "{e}");
}

/// A block whose data no longer decodes is named as damage, with its block and byte range.
#[test]
fn a_damaged_block_is_reported_as_damage() {
    let t = tmp();
    let d = t.path();
    let data = sample(60_000);
    std::fs::write(d.join("g"), &data).unwrap();
    ok(&run(d, &["compress", "g", "--block-size", "16K"]));
    let good = std::fs::read(d.join("g.acx")).unwrap();
    // every byte of the last 2,000 (block data, before the trailing content checksum)
    // flipped in turn until one makes a block fail (some flips land in bytes a decoder
    // never reads); at least one must
    let mut seen = false;
    for k in 20..2_000 {
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - k] ^= 0x5A;
        std::fs::write(d.join("bad.acx"), &bad).unwrap();
        let o = run(
            d,
            &[
                "decompress",
                "bad.acx",
                "-o",
                "out",
                "--device",
                "cpu",
                "-f",
            ],
        );
        if o.status.success() {
            continue;
        }
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        if e.contains("damaged archive: block ") {
            assert!(e.contains("(bytes "), "{e}");
            seen = true;
            break;
        }
    }
    assert!(seen, "no flip produced a block error");
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
    // a small archive: auto expects the CPU to finish before the GPU has started, GPU or not
    let e = stderr(&o);
    assert!(
        e.contains("bytes on the CPU"),
        "auto must pick the CPU: {e}"
    );
    assert!(!e.contains("no GPU"), "auto must not probe the GPU: {e}");
    // the default is auto
    let o = run(d, &["decompress", "v.acx", "-o", "default.out"]);
    ok(&o);
    assert_eq!(std::fs::read(d.join("default.out")).unwrap(), data);
    // several archives: each on the CPU, without a note about the GPU
    std::fs::copy(d.join("v.acx"), d.join("w.acx")).unwrap();
    let o = run(d, &["decompress", "-t", "v.acx", "w.acx"]);
    ok(&o);
    let e = stderr(&o);
    assert_eq!(e.matches("bytes on the CPU").count(), 2, "{e}");
    assert!(!e.contains("no GPU"), "{e}");
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
    // and needs no -f: it is not replaced
    ok(&run(d.path(), &["compress", "x.txt", "-o", "/dev/null"]));
    ok(&run(d.path(), &["compress", "x.txt"]));
    ok(&run(
        d.path(),
        &["decompress", "x.txt.acx", "-o", "/dev/null"],
    ));
    let t = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(
        t.is_char_device(),
        "/dev/null is no longer a character device"
    );
}

/// An existing directory as the output (`-o DIR`) is named as such, and `extract --help`
/// explains only the sizes it takes.
#[test]
fn output_directory_and_extract_help() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("f"), sample(3_000)).unwrap();
    std::fs::create_dir(d.join("outdir")).unwrap();
    let e = fails(&run(d, &["compress", "f", "-o", "outdir"]));
    assert!(
        e.contains("outdir is a directory: the output must be a file"),
        "{e}"
    );
    let o = run(d, &["extract", "--help"]);
    ok(&o);
    let h = String::from_utf8(o.stdout).unwrap();
    assert!(h.contains("Sizes (--offset, --length, --range"), "{h}");
    assert!(
        !h.contains("--block-size") && !h.contains("--window"),
        "{h}"
    );
}

/// An archive read from a stream fails on its first four bytes when they are not the magic,
/// without waiting for the stream's end (`info /dev/zero` read until memory ran out).
#[test]
fn a_stream_that_is_no_archive_fails_at_its_magic() {
    let t = tmp();
    for cmd in [vec!["info", "-"], vec!["decompress", "-", "-c"]] {
        let mut child = spawn_piped(t.path(), &cmd);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"JUNK and more junk").unwrap();
        stdin.flush().unwrap();
        // the writer stays open: the process must end on its own
        let status = ends_by_itself(&mut child, "waited for the end of the stream");
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(status.code(), Some(1), "{cmd:?}");
        let e = stderr(&out);
        assert!(e.contains("not an aceapex archive"), "{cmd:?}: {e}");
    }
}

/// A directory given to `decompress` is named as a directory (exit 1), not as a name
/// without `.acx` (a usage error).
#[test]
fn decompress_names_a_directory() {
    let t = tmp();
    let d = t.path();
    std::fs::create_dir(d.join("adir")).unwrap();
    let out = run(d, &["decompress", "adir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("adir is a directory"));
}

#[test]
fn info_into_a_closed_pipe_is_not_a_crash() {
    // `aceapex info X | head -1`: the reader goes away (must not panic)
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("i"), sample(20_000)).unwrap();
    ok(&run(d, &["compress", "i"]));
    for args in [&["info", "i.acx"][..], &["info", "--json", "i.acx"][..]] {
        let mut child = spawn_piped(d, args);
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        // 141 as for `decompress -o - | head` (or 0 if it wrote before the pipe closed)
        assert!(
            o.status.success() || o.status.code() == Some(141),
            "{args:?}: {:?} {}",
            o.status,
            stderr(&o)
        );
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn the_acx_suffix_is_stripped_in_any_case() {
    let t = tmp();
    let d = t.path();
    std::fs::write(d.join("u"), sample(5_000)).unwrap();
    ok(&run(d, &["compress", "u", "-o", "U.ACX"]));
    std::fs::remove_file(d.join("u")).unwrap();
    ok(&run(d, &["decompress", "U.ACX"]));
    assert_eq!(std::fs::read(d.join("U")).unwrap(), sample(5_000));
    // a bare suffix names no output
    std::fs::copy(d.join("U.ACX"), d.join(".Acx")).unwrap();
    let e = fails(&run(d, &["decompress", ".Acx"]));
    assert!(e.contains(".Acx: the name without .acx is empty"), "{e}");
}

#[test]
fn test_flag_verifies_and_writes_nothing() {
    let t = tmp();
    let d = t.path();
    let data = sample(40_000);
    std::fs::write(d.join("t"), &data).unwrap();
    ok(&run(d, &["compress", "t"]));
    std::fs::remove_file(d.join("t")).unwrap();
    let before = listing(d);
    let o = run(d, &["decompress", "-t", "t.acx", "--device", "cpu"]);
    ok(&o);
    assert!(o.stdout.is_empty(), "nothing on standard output");
    assert!(
        stderr(&o).contains("t.acx: OK, 40000 bytes"),
        "{}",
        stderr(&o)
    );
    assert_eq!(listing(d), before, "no file written");
    // quiet: nothing at all
    let o = run(
        d,
        &["-q", "decompress", "--test", "t.acx", "--device", "cpu"],
    );
    ok(&o);
    assert!(o.stderr.is_empty() && o.stdout.is_empty());
    // standard input
    let packed = std::fs::read(d.join("t.acx")).unwrap();
    ok(&run_stdin(
        d,
        &["decompress", "-t", "-", "--device", "cpu"],
        &packed,
    ));
    // a damaged archive fails, and with several inputs the intact one still passes
    let mut bad = packed.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x10;
    std::fs::write(d.join("bad.acx"), &bad).unwrap();
    let o = run(d, &["decompress", "-t", "bad.acx", "--device", "cpu"]);
    fails(&o);
    assert_eq!(o.status.code(), Some(1));
    let o = run(
        d,
        &["decompress", "-t", "bad.acx", "t.acx", "--device", "cpu"],
    );
    let e = fails(&o);
    assert!(
        e.contains("bad.acx") && e.contains("1 of 2 inputs failed") && e.contains("t.acx: OK"),
        "{e}"
    );
    assert!(!d.join("t").exists() && !d.join("bad").exists());
    // nothing to write to: -o, -c and -f are usage errors
    for extra in ["-o", "-c", "-f"] {
        let mut args = vec!["decompress", "-t", "t.acx"];
        args.push(extra);
        if extra == "-o" {
            args.push("x");
        }
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    }
}

// ---------------------------------------------------------------------------------------
// hostile archives
// ---------------------------------------------------------------------------------------

/// A failure with exit status 1 and a message, never a panic.
fn assert_clean_failure(o: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{what}: succeeded");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: status {:?}, stderr {err}",
        o.status
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(!err.trim().is_empty(), "{what}: no message");
}

#[test]
fn empty_and_zeroed_files_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("empty.acx", vec![]), ("zeros.acx", vec![0u8; 96])] {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let p = p.to_str().unwrap();
        let out = dir.path().join(format!("{name}.out"));
        let o = run(dir.path(), &["decompress", p, "-o", out.to_str().unwrap()]);
        assert_clean_failure(&o, name);
        assert!(!out.exists());
        assert_clean_failure(&run(dir.path(), &["info", p]), name);
        assert_clean_failure(
            &run(
                dir.path(),
                &["extract", p, "--offset", "0", "--length", "1"],
            ),
            name,
        );
    }
}

#[test]
fn huge_original_size_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.acx");
    let b = huge_original_archive();
    assert!(b.len() < 1_100_000);
    std::fs::write(&p, &b).unwrap();
    let out = dir.path().join("huge.out");
    let o = run(
        dir.path(),
        &[
            "decompress",
            p.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--device",
            "cpu",
        ],
    );
    assert_clean_failure(&o, "huge original_size");
}
