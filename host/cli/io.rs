//! Inputs (files, memory maps, standard input) and outputs (written to a temporary, renamed
//! into place when complete).

use crate::signal::pending;
use crate::usage;
use aceapex::format::Archive;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Input bytes: a memory map for regular files, a buffer for stdin and other streams.
pub enum Input {
    Map(memmap2::Mmap),
    Buf(Vec<u8>),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Map(m) => m,
            Input::Buf(b) => b,
        }
    }
}

/// Fails early, before any output is created, for an input that is missing or a directory.
/// `archive`: the input is an archive (the error names what was expected).
pub fn check_input(path: &Path, archive: bool) -> Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let meta = std::fs::metadata(path).with_context(|| format!("opening {}", path.display()))?;
    if meta.is_dir() {
        bail!("{}", dir_message(path, archive));
    }
    Ok(())
}

/// The error for a directory where a file is expected: an archive (`archive`), or the one
/// file `compress` reads.
pub fn dir_message(path: &Path, archive: bool) -> String {
    if archive {
        format!("{} is a directory, not an archive", path.display())
    } else {
        format!(
            "{} is a directory: aceapex compresses one file (pack a directory with tar first)",
            path.display()
        )
    }
}

/// Refuses to derive an output name from an input that is not a regular file (a device, a
/// FIFO: `compress /dev/null` would create `/dev/null.acx`), as gzip does; with `-o` or
/// `-c` any readable input is taken.
pub fn check_derived_from_file(input: &Path) -> Result<()> {
    match std::fs::metadata(input) {
        Ok(m) if !m.is_file() && !m.is_dir() => bail!(
            "{} is not a regular file: name the output with -o (or -c for standard output)",
            input.display()
        ),
        _ => Ok(()),
    }
}

/// Reads an input ('-' = standard input). `archive`: the input is an archive, so a terminal
/// on standard input is refused instead of waiting for binary data typed by hand.
pub fn read_input(path: &Path, archive: bool) -> Result<Input> {
    if path.as_os_str() == "-" {
        let stdin = std::io::stdin();
        if archive && stdin.is_terminal() {
            bail!("refusing to read an archive from a terminal: pipe it in or name the file");
        }
        let b = read_stream(stdin.lock(), archive).context("reading standard input")?;
        return Ok(Input::Buf(b));
    }
    check_input(path, archive)?;
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let meta = f
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        // a pipe, a process substitution, a character device: read it as a stream
        let b = read_stream(f, archive).with_context(|| format!("reading {}", path.display()))?;
        return Ok(Input::Buf(b));
    }
    if meta.len() == 0 {
        return Ok(Input::Buf(Vec::new()));
    }
    // SAFETY: the map is read-only; a file changed underneath by another process can at worst
    // give wrong bytes, which the checksums then report.
    let m =
        unsafe { memmap2::Mmap::map(&f) }.with_context(|| format!("mapping {}", path.display()))?;
    Ok(Input::Map(m))
}

/// Reads a stream to its end; an archive's first four bytes first, so that a stream of
/// something else (`info /dev/zero`, a pipe of another format) fails on its magic at once
/// instead of after being read whole (FORMAT.md §3).
pub fn read_stream(mut r: impl Read, archive: bool) -> Result<Vec<u8>> {
    let mut b = Vec::new();
    if archive {
        (&mut r).take(4).read_to_end(&mut b)?;
        if b.len() == 4 {
            if let Err(e @ aceapex::FormatError::BadMagic { .. }) = Archive::parse(&b) {
                return Err(e.into());
            }
        }
    }
    r.read_to_end(&mut b)?;
    Ok(b)
}

/// Refuses an output that is the input file itself (the rename would destroy the input).
pub fn check_not_same(input: &Path, output: &Path) -> Result<()> {
    if input.as_os_str() == "-" || output.as_os_str() == "-" {
        return Ok(());
    }
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        if a == b {
            bail!("input and output are the same file: {}", a.display());
        }
    }
    Ok(())
}

/// Where the result goes, opened before the work starts (so an existing output or an
/// unwritable directory fails at once) and written by [`OutFile::finish`].
pub enum OutFile {
    Stdout,
    /// A device, FIFO or other non-regular file (e.g. /dev/null): written in place, never
    /// replaced by a rename.
    InPlace(File, PathBuf),
    /// A regular file: written to a hidden temporary beside it, renamed into place when
    /// complete. The temporary is removed on every error path (drop), on a panic, and by the
    /// signal handler (through [`crate::signal::PENDING`]).
    Temp(Option<tempfile::NamedTempFile>, PathBuf),
}

impl OutFile {
    pub fn open(path: &Path, force: bool) -> Result<OutFile> {
        if path.as_os_str() == "-" {
            return Ok(OutFile::Stdout);
        }
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.is_dir() {
                bail!(
                    "{} is a directory: the output must be a file",
                    path.display()
                );
            }
            // a device or FIFO (`-o /dev/null`) is written in place and never replaced,
            // so it needs no -f; an existing regular file does
            if !meta.is_file() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("opening {}", path.display()))?;
                if f.is_terminal() && !force {
                    bail!("{} is a terminal (use -f to write to it)", path.display());
                }
                return Ok(OutFile::InPlace(f, path.to_owned()));
            }
            if !force {
                bail!("{} already exists (use -f to overwrite)", path.display());
            }
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .with_context(|| format!("{} names no file", path.display()))?;
        if !dir.is_dir() {
            let why = if dir.exists() {
                "is not a folder"
            } else {
                "does not exist"
            };
            bail!("cannot create {}: {} {why}", path.display(), dir.display());
        }
        let mut pending = pending();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".aceapex-tmp")
            // as File::create: 0666 less the umask (tempfile's default is 0600)
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        *pending = Some(tmp.path().to_owned());
        Ok(OutFile::Temp(Some(tmp), path.to_owned()))
    }

    /// Writes `bytes` as the next part of the output (for outputs written piece by piece;
    /// [`OutFile::finish`] then completes it).
    pub fn write_part(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            OutFile::Stdout => std::io::stdout()
                .lock()
                .write_all(bytes)
                .context("writing standard output"),
            OutFile::InPlace(f, path) => f
                .write_all(bytes)
                .with_context(|| format!("writing {}", path.display())),
            OutFile::Temp(tmp, _) => {
                let t = tmp.as_mut().expect("finished once");
                t.write_all(bytes)
                    .with_context(|| format!("writing {}", t.path().display()))
            }
        }
    }

    pub fn finish(mut self, bytes: &[u8]) -> Result<()> {
        self.write_part(bytes)?;
        match &mut self {
            OutFile::Stdout => std::io::stdout()
                .lock()
                .flush()
                .context("writing standard output"),
            OutFile::InPlace(..) => Ok(()),
            OutFile::Temp(tmp, path) => {
                let t = tmp.as_mut().expect("finished once");
                t.as_file().sync_all().ok();
                let mut pending = pending();
                let t = tmp.take().expect("finished once");
                *pending = None;
                // on failure the error holds the temporary, which its drop removes
                t.persist(&*path)
                    .map(|_| ())
                    .map_err(|e| {
                        drop(e.file);
                        e.error
                    })
                    .with_context(|| format!("renaming to {}", path.display()))
            }
        }
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let OutFile::Temp(tmp @ Some(_), _) = self {
            // unfinished: forget and remove the temporary under the lock
            let mut pending = pending();
            *pending = None;
            drop(tmp.take());
        }
    }
}

/// Several inputs each go to their default output name: `-o`, `-c` and '-' need exactly one.
pub fn one_output_name(cmd: &'static str, inputs: &[PathBuf], named: bool) -> Result<()> {
    if inputs.len() > 1 && (named || inputs.iter().any(|i| i.as_os_str() == "-")) {
        return Err(usage(
            cmd,
            "-o, -c and '-' take a single input; several inputs are written to their default \
             names"
                .to_string(),
        ));
    }
    Ok(())
}

/// Runs `f` on every input. One input: its error is the command's. Several: each error is
/// printed and the others still run (as gzip and zstd do); the command then fails.
pub fn each_input(inputs: &[PathBuf], mut f: impl FnMut(&Path) -> Result<()>) -> Result<()> {
    if let [one] = inputs {
        return f(one);
    }
    let mut failed = 0;
    for input in inputs {
        // (a signal ends the process in its handler, temporaries removed)
        if let Err(e) = f(input) {
            eprintln!("aceapex: error: {e:#}");
            failed += 1;
        }
    }
    if failed > 0 {
        bail!("{failed} of {} inputs failed (errors above)", inputs.len());
    }
    Ok(())
}
