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

/// An input file being read, kept open with its `stat` from before the read, so that a change
/// during the command (a growing log, a file rewritten or truncated) is found.
pub struct OpenInput {
    file: File,
    path: PathBuf,
    before: std::fs::Metadata,
}

impl OpenInput {
    /// Opens the regular file `path` and takes its `stat`, for a read by the caller (the
    /// streaming `compress`) that ends with [`OpenInput::check_unchanged`].
    pub fn open(path: &Path) -> Result<OpenInput> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let before = file
            .metadata()
            .with_context(|| format!("reading {}", path.display()))?;
        Ok(OpenInput {
            file,
            path: path.to_owned(),
            before,
        })
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Its size when it was opened, in bytes.
    pub fn len(&self) -> u64 {
        self.before.len()
    }

    /// Fails if the file changed since it was opened: its size, modification or change
    /// time, or (through its name) the file the name points to.
    pub fn check_unchanged(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        let now = self
            .file
            .metadata()
            .with_context(|| format!("reading {}", self.path.display()))?;
        let named = std::fs::metadata(&self.path).ok();
        let b = &self.before;
        let same = now.len() == b.len()
            && now.mtime() == b.mtime()
            && now.mtime_nsec() == b.mtime_nsec()
            && now.ctime() == b.ctime()
            && now.ctime_nsec() == b.ctime_nsec()
            && named.is_some_and(|n| n.ino() == b.ino() && n.dev() == b.dev());
        if !same {
            bail!(
                "{} changed while it was being read: no output written (compress a copy, \
                 or retry when nothing writes to it)",
                self.path.display()
            );
        }
        Ok(())
    }
}

/// Reads an input ('-' = standard input) whole into memory with `read`, never through a
/// memory map (a file truncated meanwhile would end the process with SIGBUS); for a regular
/// file also the [`OpenInput`] that checks it did not change ([`OpenInput::check_unchanged`]
/// is called here once, after the read). `archive`: as [`read_input`].
pub fn read_input_checked(path: &Path, archive: bool) -> Result<(Vec<u8>, Option<OpenInput>)> {
    if path.as_os_str() == "-" {
        return Ok((read_input(path, archive)?.into_vec(), None));
    }
    check_input(path, archive)?;
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let before = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !before.is_file() {
        let b =
            read_stream(file, archive).with_context(|| format!("reading {}", path.display()))?;
        return Ok((b, None));
    }
    let mut b = Vec::new();
    b.try_reserve_exact(before.len() as usize)
        .with_context(|| format!("reading {}: {} bytes", path.display(), before.len()))?;
    file.read_to_end(&mut b)
        .with_context(|| format!("reading {}", path.display()))?;
    if b.len() as u64 != before.len() {
        bail!(
            "{} changed while it was being read: no output written",
            path.display()
        );
    }
    let input = OpenInput {
        file,
        path: path.to_owned(),
        before,
    };
    input.check_unchanged()?;
    Ok((b, Some(input)))
}

impl Input {
    /// The bytes, owned (a buffer is moved, a map copied).
    fn into_vec(self) -> Vec<u8> {
        match self {
            Input::Buf(b) => b,
            Input::Map(m) => m.to_vec(),
        }
    }
}

/// The mode and times an output made from `input` takes: those of a regular input file,
/// `None` for standard input and other streams.
pub fn like_input(input: &Path) -> Option<Like> {
    if input.as_os_str() == "-" {
        return None;
    }
    std::fs::metadata(input)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| Like::of(&m))
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

/// What an output file takes from its input file, as gzip and zstd do: the permission bits
/// (so a private 0600 input gives a private output) and the access and modification times.
#[derive(Clone, Copy, Debug)]
pub struct Like {
    /// Permission bits (`st_mode & 0o777`; set-id and sticky bits are not carried over).
    pub mode: u32,
    pub accessed: std::time::SystemTime,
    pub modified: std::time::SystemTime,
}

impl Like {
    /// The permission bits and times of `meta` (an input's `stat`).
    pub fn of(meta: &std::fs::Metadata) -> Like {
        let now = std::time::SystemTime::now();
        Like {
            mode: meta.permissions().mode() & 0o777,
            accessed: meta.accessed().unwrap_or(now),
            modified: meta.modified().unwrap_or(now),
        }
    }
}

/// The permission bits a new file gets from `File::create`: 0666 less the umask.
fn default_mode() -> u32 {
    // SAFETY: umask only swaps the process's file-creation mask; it is set back at once,
    // and no other thread creates files while the command sets up its output.
    let mask = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    };
    0o666 & !(mask as u32)
}

/// Longest file name (bytes) of the Linux file systems (NAME_MAX).
const NAME_MAX: usize = 255;

/// Creates the temporary beside `name` in `dir`, mode 0600 (private until it is complete
/// and [`OutFile::commit`] sets its mode): `.NAME.XXXXXX.aceapex-tmp` where that fits in
/// [`NAME_MAX`] bytes, else the short `.aceapex.XXXXXX.tmp` (so that outputs of 236-255 byte
/// names work).
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    if prefix.len() + 6 + ".aceapex-tmp".len() <= NAME_MAX {
        b.prefix(&prefix).suffix(".aceapex-tmp");
    } else {
        b.prefix(".aceapex.").suffix(".tmp");
    }
    b.permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)
}

/// Where the result goes, opened before the work starts (so an existing output or an
/// unwritable directory fails at once), written by [`OutFile::write_all`] and completed by
/// [`OutFile::commit`] (or all at once by [`OutFile::finish`]).
pub struct OutFile {
    kind: OutKind,
    /// Mode and times for a regular output file ([`Like`]); `None`: 0666 less the umask,
    /// times of the writing.
    like: Option<Like>,
    /// `-f`: the final rename may replace an existing file.
    force: bool,
}

enum OutKind {
    Stdout,
    /// A device, FIFO or other non-regular file (e.g. /dev/null): written in place, never
    /// replaced by a rename.
    InPlace(File, PathBuf),
    /// A regular file: written to a hidden temporary (mode 0600) beside it, renamed into
    /// place when complete. The temporary is removed on every error path (drop), on a
    /// panic, and by the signal handler (through [`crate::signal::PENDING`]).
    Temp(Option<tempfile::NamedTempFile>, PathBuf),
}

impl OutFile {
    /// [`OutFile::open_like`] with no input file to take the mode and times from.
    pub fn open(path: &Path, force: bool) -> Result<OutFile> {
        OutFile::open_like(path, force, None)
    }

    /// Opens the output `path` ('-' = standard output); `force`: an existing file may be
    /// replaced; `like`: the mode and times the finished file gets (from the input file).
    ///
    /// Errors: `path` exists (a dangling symbolic link counts) and `force` is off, is a
    /// directory or a terminal (without `force`), or its folder is missing or unwritable.
    pub fn open_like(path: &Path, force: bool, like: Option<Like>) -> Result<OutFile> {
        let kind = OutFile::open_kind(path, force)?;
        Ok(OutFile { kind, like, force })
    }

    fn open_kind(path: &Path, force: bool) -> Result<OutKind> {
        if path.as_os_str() == "-" {
            return Ok(OutKind::Stdout);
        }
        if let Ok(lmeta) = std::fs::symlink_metadata(path) {
            match std::fs::metadata(path) {
                Ok(meta) if meta.is_dir() => bail!(
                    "{} is a directory: the output must be a file",
                    path.display()
                ),
                // a device or FIFO (`-o /dev/null`) is written in place and never
                // replaced, so it needs no -f; an existing regular file does
                Ok(meta) if !meta.is_file() => {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(path)
                        .with_context(|| format!("opening {}", path.display()))?;
                    if f.is_terminal() && !force {
                        bail!("{} is a terminal (use -f to write to it)", path.display());
                    }
                    return Ok(OutKind::InPlace(f, path.to_owned()));
                }
                Ok(_) if !force => {
                    bail!("{} already exists (use -f to overwrite)", path.display())
                }
                // a dangling symbolic link is a name in use too (the rename would replace
                // it), as zstd and gzip refuse it
                Err(_) if lmeta.file_type().is_symlink() && !force => bail!(
                    "{} already exists (a symbolic link to a missing file; use -f to \
                     overwrite)",
                    path.display()
                ),
                _ => {}
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
        let tmp = create_temp(dir, name)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        *pending = Some(tmp.path().to_owned());
        Ok(OutKind::Temp(Some(tmp), path.to_owned()))
    }

    /// The output's name for messages ("standard output" for '-').
    fn name(&self) -> String {
        match &self.kind {
            OutKind::Stdout => "standard output".to_string(),
            OutKind::InPlace(_, p) | OutKind::Temp(_, p) => p.display().to_string(),
        }
    }

    /// Appends `bytes` to the output.
    ///
    /// Errors: the write fails (a full disk, the file size limit of `ulimit -f`, a closed
    /// standard output: its `BrokenPipe` is kept in the chain for the quiet exit 141).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let r = match &mut self.kind {
            OutKind::Stdout => std::io::stdout().lock().write_all(bytes),
            OutKind::InPlace(f, _) => f.write_all(bytes),
            // (through the File: tempfile's writer would name the temporary in its errors)
            OutKind::Temp(t, _) => t
                .as_mut()
                .expect("not committed")
                .as_file_mut()
                .write_all(bytes),
        };
        r.map_err(|e| self.write_error(e))
    }

    fn write_error(&self, e: std::io::Error) -> anyhow::Error {
        let name = self.name();
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            // SIGXFSZ is ignored (signal.rs), so the limit is an error here
            return anyhow::Error::new(e).context(format!(
                "writing {name}: the file size limit (ulimit -f) was reached"
            ));
        }
        anyhow::Error::new(e).context(format!("writing {name}"))
    }

    /// Writes `bytes` and commits the output ([`OutFile::write_all`], [`OutFile::commit`]).
    pub fn finish(mut self, bytes: &[u8]) -> Result<()> {
        self.write_all(bytes)?;
        self.commit()
    }

    /// Completes the output: flushes standard output, or gives the temporary its mode and
    /// times, syncs it and renames it to its name, which it never replaces unless `-f`
    /// (`renameat2(RENAME_NOREPLACE)`, or a hard link and unlink where the file system
    /// refuses that flag), even if the name appeared while the command ran.
    ///
    /// Errors: the flush or rename fails, or the name exists at that moment (the temporary
    /// is then removed).
    pub fn commit(mut self) -> Result<()> {
        let like = self.like;
        let force = self.force;
        match &mut self.kind {
            OutKind::Stdout => {
                let r = std::io::stdout().lock().flush();
                r.map_err(|e| self.write_error(e))
            }
            OutKind::InPlace(f, _) => {
                let r = f.flush();
                r.map_err(|e| self.write_error(e))
            }
            OutKind::Temp(tmp, path) => {
                let path = path.clone();
                let f = tmp.as_ref().expect("committed once").as_file();
                let mode = like.map_or_else(default_mode, |l| l.mode);
                f.set_permissions(std::fs::Permissions::from_mode(mode))
                    .with_context(|| format!("setting the mode of {}", path.display()))?;
                if let Some(l) = like {
                    let times = std::fs::FileTimes::new()
                        .set_accessed(l.accessed)
                        .set_modified(l.modified);
                    f.set_times(times)
                        .with_context(|| format!("setting the times of {}", path.display()))?;
                }
                f.sync_all().ok();
                let mut pending = pending();
                let t = tmp.take().expect("committed once");
                *pending = None;
                let r = if force {
                    t.persist(&path)
                } else {
                    t.persist_noclobber(&path)
                };
                // on failure the error holds the temporary, which its drop removes
                r.map(|_| ())
                    .map_err(|e| {
                        drop(e.file);
                        e.error
                    })
                    .map_err(|e| {
                        if e.kind() == std::io::ErrorKind::AlreadyExists {
                            anyhow::anyhow!(
                                "{} appeared while aceapex was writing it: not replaced \
                                 (use -f to overwrite)",
                                path.display()
                            )
                        } else {
                            anyhow::Error::new(e).context(format!("renaming to {}", path.display()))
                        }
                    })
            }
        }
    }
}

/// Writes as [`OutFile::write_all`] does, for code that takes a writer (the streaming
/// decoder); the file size limit's error says so.
impl Write for OutFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let r = match &mut self.kind {
            OutKind::Stdout => std::io::stdout().lock().write(bytes),
            OutKind::InPlace(f, _) => f.write(bytes),
            OutKind::Temp(t, _) => t
                .as_mut()
                .expect("not committed")
                .as_file_mut()
                .write(bytes),
        };
        r.map_err(|e| {
            if e.kind() == std::io::ErrorKind::FileTooLarge {
                std::io::Error::new(
                    e.kind(),
                    "the file size limit (ulimit -f) was reached: File too large",
                )
            } else {
                e
            }
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.kind {
            OutKind::Stdout => std::io::stdout().lock().flush(),
            _ => Ok(()),
        }
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let OutKind::Temp(tmp @ Some(_), _) = &mut self.kind {
            // unfinished: forget and remove the temporary under the lock
            let mut pending = pending();
            *pending = None;
            drop(tmp.take());
        }
    }
}

/// The inputs as given, or standard input ('-') where none is and standard input is not a
/// terminal (as zstd and gzip read a pipe); none from a terminal is a usage error.
pub fn or_stdin(cmd: &'static str, inputs: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    if !inputs.is_empty() {
        return Ok(inputs);
    }
    if std::io::stdin().is_terminal() {
        return Err(usage(
            cmd,
            "no INPUT given, and standard input is a terminal: name a file, or pipe the data in",
        ));
    }
    Ok(vec![PathBuf::from("-")])
}

/// Several inputs each go to their default output name: `-o`, `-c` and '-' need exactly one;
/// where `joins` (decompress, as `gzip -dc` and `zstd -dc`), standard output takes several
/// inputs' outputs one after the other, so `named` is then a named output file only.
pub fn one_output_name(
    cmd: &'static str,
    inputs: &[PathBuf],
    named: bool,
    joins: bool,
) -> Result<()> {
    if inputs.len() > 1 && (named || inputs.iter().any(|i| i.as_os_str() == "-")) {
        let msg = match joins {
            true => {
                "-o FILE and '-' take a single input; several inputs are written to their \
                     default names, or one after the other to standard output with -c"
            }
            false => {
                "-o, -c and '-' take a single input; several inputs are written to their \
                      default names"
            }
        };
        return Err(usage(cmd, msg.to_string()));
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
