//! Signal handling: SIGINT, SIGTERM and SIGHUP remove the temporary output being written.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Exit status after SIGINT, SIGTERM or SIGHUP.
pub const EXIT_INTERRUPTED: i32 = 130;

/// The temporary output file being written, if any. The signal handler removes it; an
/// [`OutFile`] sets and clears it while holding the lock, so the handler never sees a stale
/// or a half-created entry.
pub static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

pub fn pending() -> MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// On SIGINT, SIGTERM and SIGHUP: remove the temporary output and exit with
/// [`EXIT_INTERRUPTED`]. SIGKILL cannot be caught: after it a temporary may remain.
///
/// SIGXFSZ (a write past the file size limit of `ulimit -f`) is ignored, so that the write
/// fails with EFBIG, which the command reports (and removes its temporary) instead of dying.
pub fn install_signal_cleanup() {
    // SAFETY: setting a signal's disposition to SIG_IGN runs no code in the handler context.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // If the handler cannot be installed, the signals keep their default action (the process
    // ends; only the cleanup is lost), so the error is ignored.
    let _ = ctrlc::set_handler(|| {
        if let Some(p) = pending().take() {
            let _ = std::fs::remove_file(p);
        }
        eprintln!("aceapex: interrupted");
        std::process::exit(EXIT_INTERRUPTED);
    });
}
