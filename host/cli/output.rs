//! Messages on standard error (`--quiet`), progress bars and number formatting.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// `--quiet` (set once in `main` before any work).
pub static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether informational messages go to standard error (not under `--quiet`).
pub fn chatty() -> bool {
    !QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// An informational line on standard error, unless `--quiet`.
pub fn note(msg: impl std::fmt::Display) {
    if chatty() {
        eprintln!("{msg}");
    }
}

/// A progress bar on standard error when it is a terminal and the work is large (64 MiB and
/// more) or `slow` (e.g. levels 6-9 or a cross-block window) and at least 1 MiB.
pub fn progress_bar(total: u64, what: &str, slow: bool) -> ProgressBar {
    let min = if slow { 1 << 20 } else { 64 << 20 };
    if !std::io::stderr().is_terminal() || total < min || !chatty() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap()
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// `n` and the noun, plural unless `n` is 1 ("1 byte", "2 bytes").
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Speed in MB/s as text: one decimal, three below 1 MB/s (level 9 on FASTQ runs at a few
/// hundred KB/s, which one decimal would print as 0.0).
pub fn mbps(bytes: u64, secs: f64) -> String {
    let v = bytes as f64 / secs.max(1e-9) / 1e6;
    if v < 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}
