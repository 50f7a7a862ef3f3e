//! The `aceapex` binary for the CLI tests (tests/cli_compress.rs, tests/cli_decompress.rs):
//! runs in a temporary directory, output checks, sample data.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_aceapex");

pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

/// The binary started in `dir` with all three standard streams piped.
pub fn spawn_piped(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

pub fn run_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = spawn_piped(dir, args);
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&data).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
pub fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "expected success, got {:?}; stderr: {}",
        o.status,
        stderr(o)
    );
}

#[track_caller]
pub fn fails(o: &Output) -> String {
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
pub fn sample(n: usize) -> Vec<u8> {
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

/// The number after the first `"key":` of the JSON text `s` (`info --json`).
pub fn json_number(s: &str, key: &str) -> u64 {
    let at = (s.find(&format!("\"{key}\":"))).unwrap_or_else(|| panic!("{key}: {s}"));
    let v = &s[at + key.len() + 3..];
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    v[..end]
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e}: {s}"))
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Names in `d`, sorted.
pub fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// A pseudo-terminal (master, slave): the slave stands in for a user's terminal.
pub fn pty() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // SAFETY: plain libc calls on a descriptor this function owns.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt");
        let master = std::fs::File::from_raw_fd(m);
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(path)
            .unwrap();
        (master, slave)
    }
}

/// Waits up to 20 s for `child` to exit on its own; kills it and fails with `why` after that
/// (a run that blocks must fail the test, not hang it).
#[track_caller]
pub fn ends_by_itself(child: &mut std::process::Child, why: &str) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the run {why}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
