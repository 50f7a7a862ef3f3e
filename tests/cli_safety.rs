//! File safety of the `aceapex` binary, with zstd's and gzip's behaviour as the bar: outputs
//! take the input's mode and times (the temporary is private meanwhile), the final rename
//! never replaces a name that exists at that moment (a dangling symbolic link included)
//! unless `-f`, long output names work, an input that changes during compression is an
//! error, a file truncated underneath is an error rather than SIGBUS, and `ulimit -f` is a
//! clear error rather than SIGXFSZ; no temporary is left behind by any of them.

mod common;

use common::cli::*;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn mtime(p: &Path) -> (i64, i64) {
    let m = std::fs::metadata(p).unwrap();
    (m.mtime(), m.mtime_nsec())
}

/// Sets `p`'s access and modification times to a fixed moment in 2020 (nanoseconds kept).
fn set_old_times(p: &Path) {
    let t = std::time::UNIX_EPOCH + Duration::new(1_580_000_000, 123_456_789);
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
        .unwrap();
}

/// The mode `File::create` gives in this process (0666 less the umask the binary inherits).
fn created_mode(d: &Path) -> u32 {
    let p = d.join("probe");
    std::fs::File::create(&p).unwrap();
    let m = mode(&p);
    std::fs::remove_file(p).unwrap();
    m
}

/// The name of the temporary output in `d`, once it appears (panics after 30 s).
fn wait_for_temporary(d: &Path) -> String {
    let t0 = Instant::now();
    loop {
        if let Some(n) = listing(d).into_iter().find(|n| n.ends_with("tmp")) {
            return n;
        }
        assert!(t0.elapsed().as_secs() < 30, "no temporary output appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until `child` has `file` open (its /proc fd links), so that a change made next falls
/// inside the command's run; false if the command ended first.
fn wait_until_open(child: &mut std::process::Child, file: &Path) -> bool {
    let want = std::fs::canonicalize(file).unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    loop {
        if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            if rd
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .any(|l| l == want)
            {
                return true;
            }
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(
            t0.elapsed().as_secs() < 30,
            "{} never opened",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn outputs_take_the_mode_and_times_of_their_input() {
    let t = tmp();
    let d = t.path();
    let data = sample(100_000);
    for m in [0o600, 0o640, 0o604] {
        let input = d.join(format!("f{m:o}"));
        std::fs::write(&input, &data).unwrap();
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(m)).unwrap();
        set_old_times(&input);
        let name = input.file_name().unwrap().to_str().unwrap().to_string();
        ok(&run(d, &["compress", &name]));
        let acx = d.join(format!("{name}.acx"));
        assert_eq!(mode(&acx), m, "archive of a {m:o} file");
        assert_eq!(mtime(&acx), mtime(&input), "archive's mtime");
        let out = d.join(format!("{name}.out"));
        ok(&run(
            d,
            &[
                "decompress",
                &format!("{name}.acx"),
                "-o",
                &format!("{name}.out"),
            ],
        ));
        assert_eq!(std::fs::read(&out).unwrap(), data);
        assert_eq!(mode(&out), m, "restored {m:o} file");
        assert_eq!(mtime(&out), (1_580_000_000, 123_456_789), "restored mtime");
    }
    // standard input has no mode: the output gets File::create's
    let o = run_stdin(d, &["compress", "-", "-o", "piped.acx"], &data);
    ok(&o);
    assert_eq!(mode(&d.join("piped.acx")), created_mode(d));
}

/// Standard input held open keeps the command waiting after it created its temporary.
#[test]
fn temporary_is_private_until_complete() {
    let t = tmp();
    let d = t.path();
    let mut child = spawn_piped(d, &["compress", "-", "-o", "out.acx"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&sample(50_000)).unwrap();
    let temp = wait_for_temporary(d);
    assert_eq!(mode(&d.join(&temp)), 0o600, "{temp}");
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    ok(&o);
    assert_eq!(listing(d), ["out.acx"]);
    assert_eq!(mode(&d.join("out.acx")), created_mode(d));
}

/// A file or a dangling symbolic link that appears at the output name while the command runs
/// is kept; the command fails and removes its temporary; with -f it is replaced.
#[test]
fn a_name_that_appears_during_the_run_is_not_replaced() {
    let data = sample(50_000);
    for (what, force) in [
        ("file", false),
        ("dangling link", false),
        ("file", true),
        ("dangling link", true),
    ] {
        let t = tmp();
        let d = t.path();
        let mut args = vec!["compress", "-", "-o", "out.acx"];
        if force {
            args.push("-f");
        }
        let mut child = spawn_piped(d, &args);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&data).unwrap();
        wait_for_temporary(d);
        if what == "file" {
            std::fs::write(d.join("out.acx"), b"mine").unwrap();
        } else {
            std::os::unix::fs::symlink("nowhere", d.join("out.acx")).unwrap();
        }
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        if force {
            ok(&o);
            assert_eq!(listing(d), ["out.acx"]);
            let back = run(d, &["decompress", "-c", "out.acx"]);
            ok(&back);
            assert!(back.stdout == data, "{what}, -f");
            continue;
        }
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {e}");
        assert!(e.contains("out.acx") && e.contains("-f"), "{what}: {e}");
        assert_eq!(listing(d), ["out.acx"], "{what}: temporary left");
        if what == "file" {
            assert_eq!(std::fs::read(d.join("out.acx")).unwrap(), b"mine");
        } else {
            assert_eq!(
                std::fs::read_link(d.join("out.acx")).unwrap(),
                Path::new("nowhere")
            );
        }
    }
}

#[test]
fn a_dangling_symbolic_link_counts_as_existing() {
    let t = tmp();
    let d = t.path();
    let data = sample(30_000);
    std::fs::write(d.join("in"), &data).unwrap();
    ok(&run(d, &["compress", "in"]));
    for args in [
        ["compress", "in", "-o", "link"],
        ["decompress", "in.acx", "-o", "link"],
    ] {
        std::os::unix::fs::symlink("missing", d.join("link")).unwrap();
        let o = run(d, &args);
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("already exists"), "{args:?}: {e}");
        assert!(
            !d.join("missing").exists(),
            "{args:?} wrote through the link"
        );
        assert_eq!(listing(d), ["in", "in.acx", "link"], "{args:?}");
        let mut forced = args.to_vec();
        forced.push("-f");
        ok(&run(d, &forced));
        assert!(!d.join("link").is_symlink(), "{args:?} -f");
        assert!(
            !d.join("missing").exists(),
            "{args:?} -f wrote through the link"
        );
        std::fs::remove_file(d.join("link")).unwrap();
    }
}

/// Names up to NAME_MAX (255 bytes) work as outputs of both commands.
#[test]
fn long_output_names_work() {
    let t = tmp();
    let d = t.path();
    let data = sample(40_000);
    for len in [200usize, 236, 240, 251] {
        let stem = "n".repeat(len);
        let acx = format!("{stem}.acx");
        assert!(acx.len() <= 255);
        std::fs::write(d.join(&stem), &data).unwrap();
        ok(&run(d, &["compress", &stem]));
        std::fs::remove_file(d.join(&stem)).unwrap();
        ok(&run(d, &["decompress", &acx]));
        assert_eq!(std::fs::read(d.join(&stem)).unwrap(), data, "{len}");
        let long = "x".repeat(255);
        ok(&run(d, &["decompress", &acx, "-o", &long]));
        assert_eq!(std::fs::read(d.join(&long)).unwrap(), data, "255");
        for f in [&stem, &acx, &long] {
            std::fs::remove_file(d.join(f)).unwrap();
        }
        assert_eq!(listing(d), Vec::<String>::new(), "{len}: left files");
    }
}

/// Appending to or truncating the input while `compress` runs (slow level 9, so the change
/// falls inside the run) is exit 1 with a message, no output and no temporary.
#[test]
fn an_input_changed_during_compression_is_an_error() {
    let data = sample(3 << 20);
    for change in ["append", "truncate"] {
        let t = tmp();
        let d = t.path();
        let input = d.join("live.log");
        std::fs::write(&input, &data).unwrap();
        let mut child = spawn_piped(d, &["compress", "-l", "9", "live.log"]);
        assert!(
            wait_until_open(&mut child, &input),
            "{change}: ended too soon"
        );
        let f = std::fs::File::options().append(true).open(&input).unwrap();
        if change == "append" {
            (&f).write_all(b"one more line\n").unwrap();
        } else {
            f.set_len(1000).unwrap();
        }
        let o = child.wait_with_output().unwrap();
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{change}: {e}");
        assert!(
            e.contains("changed while it was being read"),
            "{change}: {e}"
        );
        assert_eq!(
            listing(d),
            ["live.log"],
            "{change}: output or temporary left"
        );
    }
}

/// An archive truncated while `decompress` reads it: a clean failure (exit 1, no output, no
/// temporary) or, if the read came first, the exact original; never a signal (SIGBUS).
#[test]
fn an_archive_truncated_during_decode_is_no_crash() {
    let t = tmp();
    let d = t.path();
    let data = sample(24 << 20);
    std::fs::write(d.join("big"), &data).unwrap();
    ok(&run(d, &["compress", "-l", "1", "big"]));
    std::fs::remove_file(d.join("big")).unwrap();
    let packed = std::fs::read(d.join("big.acx")).unwrap();
    for cut in [packed.len() / 2, 200, 0] {
        std::fs::write(d.join("big.acx"), &packed).unwrap();
        let mut child = spawn_piped(d, &["decompress", "big.acx", "--device", "cpu"]);
        wait_until_open(&mut child, &d.join("big.acx"));
        std::fs::File::options()
            .write(true)
            .open(d.join("big.acx"))
            .unwrap()
            .set_len(cut as u64)
            .unwrap();
        let o = child.wait_with_output().unwrap();
        match o.status.code() {
            Some(0) => {
                assert!(std::fs::read(d.join("big")).unwrap() == data, "cut {cut}");
                std::fs::remove_file(d.join("big")).unwrap();
            }
            Some(1) => assert!(!stderr(&o).is_empty()),
            s => panic!("cut {cut}: status {s:?} ({:?}): {}", o.status, stderr(&o)),
        }
        assert_eq!(
            listing(d),
            ["big.acx"],
            "cut {cut}: output or temporary left"
        );
    }
}

/// `ulimit -f` (the file size limit): a clear error and exit 1, not death by SIGXFSZ, and
/// no temporary left, for both commands.
#[test]
fn a_file_size_limit_is_a_clear_error() {
    let t = tmp();
    let d = t.path();
    let data = sample(1 << 20);
    std::fs::write(d.join("in"), &data).unwrap();
    ok(&run(d, &["compress", "in"]));
    for cmd in [
        // 16 blocks of 512 bytes: the archive (~30 KB) and the original both exceed it
        format!("ulimit -f 16; exec '{BIN}' decompress in.acx -o out"),
        format!("ulimit -f 16; exec '{BIN}' compress -l 1 --block-size 4K in -o out"),
    ] {
        let o = Command::new("sh")
            .args(["-c", &cmd])
            .current_dir(d)
            .output()
            .unwrap();
        let e = fails(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {:?} {e}", o.status);
        assert!(e.contains("ulimit -f"), "{cmd}: {e}");
        assert_eq!(listing(d), ["in", "in.acx"], "{cmd}: left files");
    }
}

/// The content checksum is checked after the last block was written: a mismatch still fails
/// the command (exit 1) and removes the output file; with -c the bytes are out, the status
/// says they are wrong.
#[test]
fn a_content_checksum_mismatch_at_the_end_removes_the_output() {
    let t = tmp();
    let d = t.path();
    let data = sample(3 << 20);
    std::fs::write(d.join("in"), &data).unwrap();
    ok(&run(d, &["compress", "in"]));
    let mut a = std::fs::read(d.join("in.acx")).unwrap();
    // header bytes 64..72: the content checksum (FORMAT.md §2), then the meta checksum
    // resealed, so that only the end of the decode can tell
    a[64] ^= 1;
    common::reseal_packed(&mut a);
    std::fs::write(d.join("bad.acx"), &a).unwrap();
    let o = run(
        d,
        &["decompress", "bad.acx", "-o", "out", "--device", "cpu"],
    );
    let e = fails(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("content checksum"), "{e}");
    assert_eq!(listing(d), ["bad.acx", "in", "in.acx"]);
    let o = run(d, &["decompress", "bad.acx", "-c", "--device", "cpu"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(o.stdout.len(), data.len());
}

/// A valid archive whose history outgrows the memory allowed is a clear error (exit 1, the
/// bytes it could not allocate named), not an abort: 1,200 blocks of 4 MiB of `A` (about
/// 5 GB), a window of 4 GiB - 1 and every block's lowest source block 0, written by hand
/// (`tests/corrupt/history/`), decoded under `ulimit -v` 4 GB, where the history must hold
/// the window.
#[test]
fn a_history_larger_than_memory_is_a_clear_error() {
    let t = tmp();
    let d = t.path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corrupt/history/window-4g-every-block-from-block-0.acx");
    std::fs::copy(fixture, d.join("in.acx")).unwrap();
    let cmd =
        format!("ulimit -v 4000000; exec '{BIN}' -q decompress --device cpu -c in.acx > /dev/null");
    let o = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(d)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{:?} {e}", o.status);
    assert!(e.contains("cannot allocate"), "{e}");
}
