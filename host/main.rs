//! The `aceapex` command line: compress, decompress, extract, info.

use aceapex::archive::{self, Archive};
use aceapex::device::format::{MAX_BLOCK_SIZE, MIN_BLOCK_SIZE, MIN_MATCH_BASE, STREAM_COUNT};
use aceapex::{decode, gpu};
use aceapex::{Options, Target};
use anyhow::{bail, Context, Result};
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Absolute-offset LZ77 compression with GPU decode.
///
/// Archives (.acx) are cut into fixed blocks that decode independently (or, with --window,
/// after the blocks they read from); every block carries an XXH3-64 checksum, so a whole
/// file or any byte range can be restored and verified on the CPU or on an NVIDIA GPU.
#[derive(Parser)]
#[command(name = "aceapex", version, about, long_about, after_help = AFTER_HELP, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Print nothing but errors on standard error: no summary line, no progress bar, no note
    /// from decompress that the CPU decodes because there is no GPU (a command's output, such
    /// as info's report, still goes to standard output).
    #[arg(short, long, global = true)]
    quiet: bool,
}

/// `--quiet` (set once in `main` before any work).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether informational messages go to standard error (not under `--quiet`).
fn chatty() -> bool {
    !QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// An informational line on standard error, unless `--quiet`.
fn note(msg: impl std::fmt::Display) {
    if chatty() {
        eprintln!("{msg}");
    }
}

/// The help note on size arguments, naming the options `$flags` takes it for (a literal).
macro_rules! sizes_help {
    ($flags:literal) => {
        concat!(
            "Sizes (",
            $flags,
            "): bytes, or a number with a suffix\n",
            "(case-insensitive): K, KiB = 1024; M, MiB = 1024^2; G, GiB = 1024^3; T, TiB = 1024^4 \
             (binary);\n",
            "KB = 1000; MB = 1000^2; GB = 1000^3; TB = 1000^4 (decimal). So 16K = 16KiB = 16384, \
             16KB = 16000."
        )
    };
}

const AFTER_HELP: &str = concat!(
    sizes_help!("--block-size, --window, --offset, --length"),
    "\n\n",
    "\
Exit status: 0 success; 1 error (a file missing or unreadable, an output that exists, a damaged
archive, no GPU for --device gpu, ...); 2 usage error (unknown option, bad or missing value);
130 interrupted (SIGINT, SIGTERM, SIGHUP); 141 standard output closed early (e.g. `| head`, no
message). An output file appears under its name only when complete: until then it is a
hidden temporary '.NAME.XXXXXX.aceapex-tmp' beside it, removed on errors and signals (not
after SIGKILL or a power cut; such a leftover is safe to delete)."
);

const INFO_HELP: &str = "\
The report: the archive's format version (3 packs the block-table entries, FORMAT.md §3.1; 4 adds a
match base below 6, §2; 5 adds context tables, §5.4; 6 adds packed literal tables, §5.6; 7
adds wide slices, §5.4, 'compress --target gpu'; 8 adds two-bit literal slices, §5.7,
'compress --target gpu'; version-2 archives are read too), original and archive bytes, the block table (bytes per block)
and the frequency tables, and per stream its decoded and stored bytes, in how many table groups
it has a context pair (two tables, each symbol's picked by a bit of the symbol its rANS lane
decoded before) and, for the literals, in how many groups they are packed (2-4 literals of an
alphabet of at most 16 bytes per rANS symbol). The encoder line says \"match streams raw\" for
an archive whose match streams have no table in any group, as 'compress --target gpu'
writes them; any archive stores a slice raw where coding would not make it smaller. The five streams of every
block (FORMAT.md §4): literals (the bytes no match covers), commands (one byte per literal run,
match or repeat match), lengths (the length extensions of long matches and long repeats),
offsets (the first byte of each new match's distance) and offset tails (the distances' further
bytes).

Match depth (FORMAT.md §3.1): a match that copies only literal bytes has dependency level 0; a
match that copies bytes written by a level-n match has level n + 1. A block's depth is the
highest level among its matches (0 for a block without matches); a decoder that runs a block's
matches in dependency order (the GPU decoder) needs depth + 1 rounds for it, and --depth-cap at
compression bounds it. 'info' prints the deepest and the mean block depth, and the number of
blocks per depth range: 0, 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more.

JSON (--json), one object: format_version, original_size, archive_size, ratio, block_size,
block_count, entry_bytes (one block-table entry), block_table_bytes, table_bytes (the frequency
tables), group_blocks, window, cross_block, level, min_match, match_base (the shortest match the
length codes count from, FORMAT.md §2), repeat_codes, raw_match_streams (no table group codes
the match streams: 'compress --target gpu'), wide_blocks (blocks with a wide slice, more
than 32 rANS lanes: 'compress --target gpu'), two_bit_blocks (blocks whose literals are a
two-bit slice, FORMAT.md §5.7: 'compress --target gpu'), depth_cap, streams
(literals, lengths, offsets, commands, offset_tails: decoded and stored bytes,
context_groups and packed_groups (packed literal tables, FORMAT.md §5.6) each),
content_checksum, max_block_depth, mean_block_depth, and block_depth_histogram, the 8 counts in
the order of block_depth_buckets (\"0\", \"1\", \"2-3\", \"4-7\", \"8-15\", \"16-31\", \"32-63\",
\"64+\").

'info' reads the header, block table and entropy tables (checking their meta checksum) but does
not decode the data: use 'decompress' (or 'extract') to verify the blocks' checksums.";

/// Labels of the block-depth histogram buckets of `info`.
const DEPTH_BUCKETS: [&str; 8] = ["0", "1", "2-3", "4-7", "8-15", "16-31", "32-63", "64+"];

#[derive(Subcommand)]
enum Cmd {
    /// Compress a file into an .acx archive (the input is kept).
    #[command(after_help = sizes_help!("--block-size, --window"), args_override_self = true)]
    Compress {
        /// Input files, or '-' for standard input; several files are each compressed to
        /// their default name (FILE.acx), and an error in one does not stop the others.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<PathBuf>,
        /// Output file [default: INPUT.acx; standard output for '-' input]; '-' for standard
        /// output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Write to standard output (same as -o -).
        #[arg(short = 'c', long, conflicts_with = "output")]
        stdout: bool,
        /// Compression level: 1-5 fast lazy parsing, 6 (the default) the strongest lazy
        /// level; 7-9 parse every block several ways (a lazy parse and 1-3 price-based
        /// optimal parses) and keep the smallest: 7 two ways, 8 three, 9 four with a deeper
        /// search, 3x to several hundred times slower than 6 (slowest on FASTQ and with a
        /// large --window); 8 and 9 also give the entropy coder 4x / 16x fewer interleaved
        /// lanes (smaller archives, slower GPU decode). A progress bar shows on a terminal.
        #[arg(short, long, default_value_t = aceapex::options::DEFAULT_LEVEL, value_parser = parse_level)]
        level: u32,
        /// What the archive is for; the encoder picks its codings per group and block by
        /// their cost under it. size: ratio first (every stream entropy-coded; at every level
        /// a minimum match of 4 where a sample compresses smaller with it). gpu: GPU decode
        /// speed first: at levels 1-7 raw match streams, two-bit literal slices where they
        /// cost at most 1 %, wide rANS slices for inputs of up to 2048 blocks where they
        /// halve a chain; at levels 8-9 only the two-bit slices (their few rANS lanes would
        /// make raw match streams cost bytes for no speed).
        #[arg(long, value_enum, default_value_t = TargetArg::Size)]
        target: TargetArg,
        /// Block size: a power of two from 4K to 4M (binary: 16K = 16384 bytes).
        #[arg(long, value_name = "SIZE", default_value = "16K", value_parser = parse_block_size)]
        block_size: u32,
        /// Largest match distance, 1 byte to 4G - 1 (4294967295 bytes) [default: the block
        /// size]. Larger than the block size lets matches reach earlier blocks: better ratio,
        /// but a block then decodes only after those blocks.
        #[arg(long, value_name = "SIZE", value_parser = parse_window)]
        window: Option<u32>,
        /// Shortest match to emit, in bytes (4 up to the block size). Below 6 the length
        /// codes start there too: smaller archives on text and FASTQ, slower decode (more,
        /// shorter matches). [default: with --target size, and at levels 8-9, 4 or 6,
        /// whichever compresses a sample of the input smaller (256 KiB, or one block if
        /// larger; a smaller input is compressed both ways); otherwise 6, for decode speed]
        #[arg(long, value_name = "BYTES", value_parser = parse_min_match)]
        min_match: Option<u32>,
        /// Send repeat distances as explicit offsets (no repeat codes).
        #[arg(long)]
        no_rep: bool,
        /// Cap the dependency depth (chains of matches that copy from matches): every match
        /// gets a level below N, which bounds the decode rounds per block. 0 = no cap.
        #[arg(long, value_name = "N", default_value_t = 0)]
        depth_cap: u32,
        /// Worker threads, 1 to 1024; 0 = all cores [default: all cores].
        #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
        threads: Option<usize>,
        /// Overwrite an existing output; allow compressed output to a terminal.
        #[arg(short, long)]
        force: bool,
    },
    /// Restore the original file from an archive (every block and the whole file verified).
    #[command(args_override_self = true)]
    Decompress {
        /// Archives, or '-' for standard input; several archives are each restored to their
        /// default name (without .acx), and an error in one does not stop the others.
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<PathBuf>,
        /// Output file [default: INPUT without .acx; standard output for '-' input]; '-' for
        /// standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Write to standard output (same as -o -).
        #[arg(short = 'c', long, conflicts_with = "output")]
        stdout: bool,
        /// Where to decode: auto uses the GPU when there is one, else the CPU.
        #[arg(long, value_enum, default_value_t = Device::Auto)]
        device: Device,
        /// Worker threads for the CPU decoder, 1 to 1024; 0 = all cores [default: all cores].
        #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
        threads: Option<usize>,
        /// Overwrite the output if it exists.
        #[arg(short, long)]
        force: bool,
        /// Test: decode and verify every block and the whole file, write nothing (status 0
        /// only if every archive is intact).
        #[arg(short, long, conflicts_with_all = ["output", "stdout", "force"])]
        test: bool,
    },
    /// Restore one byte range of the original, decoding only the blocks it needs.
    #[command(after_help = sizes_help!("--offset, --length"), args_override_self = true)]
    Extract {
        /// Archive, or '-' for standard input.
        input: PathBuf,
        /// First byte of the range (0-based, in the original data).
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        offset: u64,
        /// Bytes to restore [default: to the end of the original data].
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        length: Option<u64>,
        /// Output file [default: standard output].
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Overwrite the output if it exists.
        #[arg(short, long)]
        force: bool,
    },
    /// Show an archive's sizes, ratio, parameters, streams and match dependency depths.
    #[command(after_help = INFO_HELP, args_override_self = true)]
    Info {
        /// Archive, or '-' for standard input.
        input: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `compress --target` ([`Target`]).
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TargetArg {
    /// Ratio first.
    Size,
    /// GPU decode speed first.
    Gpu,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Size => Target::Size,
            TargetArg::Gpu => Target::Gpu,
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Device {
    Auto,
    Cpu,
    Gpu,
}

/// Exit status of a usage error, as clap uses for its own.
const EXIT_USAGE: i32 = 2;
/// Exit status after SIGINT, SIGTERM or SIGHUP.
const EXIT_INTERRUPTED: i32 = 130;

/// A size in bytes: digits with an optional suffix (see `sizes_help!`).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let mul: u64 = match suffix.trim_start().to_ascii_lowercase().as_str() {
        _ if num.is_empty() => 0,
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => 0,
    };
    if mul == 0 {
        return Err(format!(
            "'{s}' is not a size: use bytes, or a number with a suffix K, KiB, KB, M, MiB, MB, G, \
             GiB, GB, T, TiB, TB (e.g. 16K, 1MiB, 500MB)"
        ));
    }
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("'{s}' is too large"))
}

fn parse_block_size(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !v.is_power_of_two() || !(MIN_BLOCK_SIZE as u64..=MAX_BLOCK_SIZE as u64).contains(&v) {
        return Err(format!(
            "{v} bytes is not a power of two from 4K to 4M (binary: 16K = 16KiB = 16384 bytes, \
             but 16KB = 16000)"
        ));
    }
    Ok(v as u32)
}

fn parse_window(s: &str) -> Result<u32, String> {
    match parse_size(s)? {
        0 => Err("the window must be at least 1 byte".into()),
        v => u32::try_from(v).map_err(|_| {
            format!("{v} bytes is above the largest window, 4G - 1 = 4294967295 bytes")
        }),
    }
}

/// Most worker threads `-T` accepts (more only costs memory and start-up time).
const MAX_THREADS: usize = 1024;

/// `--level`: 1 to 9.
fn parse_level(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n @ 1..=9) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a level: use 1 (fastest) to 9 (smallest)"
        )),
    }
}

/// `--min-match`: 4 (the smallest match base, FORMAT.md §2) or more.
fn parse_min_match(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n > u32::MAX as u64 => Err(format!("{n} is too large (at most {})", u32::MAX)),
        Ok(n) if n >= MIN_MATCH_BASE as u64 => Ok(n as u32),
        Ok(n) => Err(format!(
            "{n} is below {MIN_MATCH_BASE}, the shortest match the format codes"
        )),
        Err(_) => Err(format!(
            "'{s}' is not a match length in bytes ({MIN_MATCH_BASE} or more)"
        )),
    }
}

/// `-T N`: 1 to [`MAX_THREADS`] threads, or 0 for all cores (as rayon's default).
fn parse_threads(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let range = format!("use 1 to {MAX_THREADS}, or 0 for all cores");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{s}' is not a number of threads: {range}"));
    }
    match t.parse::<usize>() {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        _ => Err(format!(
            "{t} threads is above the limit of {MAX_THREADS}: {range}"
        )),
    }
}

/// A mistake on the command line found after parsing (e.g. an output name that cannot be
/// derived): reported in clap's format, exit status [`EXIT_USAGE`].
#[derive(Debug)]
struct Usage {
    cmd: &'static str,
    msg: String,
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Usage {}

fn usage(cmd: &'static str, msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage {
        cmd,
        msg: msg.into(),
    })
}

/// The temporary output file being written, if any. The signal handler removes it; an
/// [`OutFile`] sets and clears it while holding the lock, so the handler never sees a stale
/// or a half-created entry.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

fn pending() -> MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// On SIGINT, SIGTERM and SIGHUP: remove the temporary output and exit with
/// [`EXIT_INTERRUPTED`]. SIGKILL cannot be caught: after it a temporary may remain.
fn install_signal_cleanup() {
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

/// Input bytes: a memory map for regular files, a buffer for stdin and other streams.
enum Input {
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
fn check_input(path: &Path, archive: bool) -> Result<()> {
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
fn dir_message(path: &Path, archive: bool) -> String {
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
fn check_derived_from_file(input: &Path) -> Result<()> {
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
fn read_input(path: &Path, archive: bool) -> Result<Input> {
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
    // give wrong bytes, which the checksums then report (documented in README).
    let m =
        unsafe { memmap2::Mmap::map(&f) }.with_context(|| format!("mapping {}", path.display()))?;
    Ok(Input::Map(m))
}

/// Reads a stream to its end; an archive's first four bytes first, so that a stream of
/// something else (`info /dev/zero`, a pipe of another format) fails on its magic at once
/// instead of after being read whole (FORMAT.md §3).
fn read_stream(mut r: impl Read, archive: bool) -> Result<Vec<u8>> {
    let mut b = Vec::new();
    if archive {
        (&mut r).take(4).read_to_end(&mut b)?;
        if b.len() == 4 {
            if let Err(e @ aceapex::error::FormatError::BadMagic { .. }) = Archive::parse(&b) {
                return Err(e.into());
            }
        }
    }
    r.read_to_end(&mut b)?;
    Ok(b)
}

/// Refuses an output that is the input file itself (the rename would destroy the input).
fn check_not_same(input: &Path, output: &Path) -> Result<()> {
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
enum OutFile {
    Stdout,
    /// A device, FIFO or other non-regular file (e.g. /dev/null): written in place, never
    /// replaced by a rename.
    InPlace(File, PathBuf),
    /// A regular file: written to a hidden temporary beside it, renamed into place when
    /// complete. The temporary is removed on every error path (drop), on a panic, and by the
    /// signal handler (through [`PENDING`]).
    Temp(Option<tempfile::NamedTempFile>, PathBuf),
}

impl OutFile {
    fn open(path: &Path, force: bool) -> Result<OutFile> {
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

    fn finish(mut self, bytes: &[u8]) -> Result<()> {
        match &mut self {
            OutFile::Stdout => {
                let mut o = std::io::stdout().lock();
                o.write_all(bytes).context("writing standard output")?;
                o.flush().context("writing standard output")
            }
            OutFile::InPlace(f, path) => f
                .write_all(bytes)
                .with_context(|| format!("writing {}", path.display())),
            OutFile::Temp(tmp, path) => {
                let t = tmp.as_mut().expect("finished once");
                t.write_all(bytes)
                    .with_context(|| format!("writing {}", t.path().display()))?;
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

/// A progress bar on standard error when it is a terminal and the work is large (64 MiB and
/// more) or `slow` (e.g. levels 6-9 or a cross-block window) and at least 1 MiB.
fn progress_bar(total: u64, what: &str, slow: bool) -> ProgressBar {
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

/// Sizes the global thread pool: `None` or `Some(0)` keep rayon's default (all cores).
fn set_threads(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads.filter(|&t| t > 0) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("starting the thread pool")?;
    }
    Ok(())
}

/// `n` and the noun, plural unless `n` is 1 ("1 byte", "2 bytes").
fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Speed in MB/s as text: one decimal, three below 1 MB/s (level 9 on FASTQ runs at a few
/// hundred KB/s, which one decimal would print as 0.0).
fn mbps(bytes: u64, secs: f64) -> String {
    let v = bytes as f64 / secs.max(1e-9) / 1e6;
    if v < 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

/// For an unknown option given after a subcommand that another subcommand takes
/// (`decompress --level 9`, `decompress -l 9`), clap's error with a line that names the
/// subcommand it belongs to, instead of clap's tip to pass it as a value after `--`; `None`
/// for any other error (an option before the subcommand keeps clap's message).
fn misplaced_option(e: &clap::Error) -> Option<clap::Error> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = arg.split('=').next()?;
    let is_it = |a: &clap::Arg| match name.strip_prefix("--") {
        Some(long) => a.get_long() == Some(long),
        None => {
            name.len() == 2
                && name.strip_prefix('-').and_then(|s| s.chars().next()) == a.get_short()
        }
    };
    let mut cmd = Cli::command();
    cmd.build();
    // the subcommand (the first argument that names one; arguments need not be UTF-8), and
    // the option after it
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let at = args
        .iter()
        .position(|a| cmd.get_subcommands().any(|c| a == c.get_name()))?;
    let used = args[at].to_string_lossy().into_owned();
    let after = args[at + 1..].iter().any(|a| {
        let a = a.to_string_lossy();
        a == name || a.starts_with(&format!("{name}="))
    });
    let owners: Vec<String> = (cmd.get_subcommands())
        .filter(|c| c.get_arguments().any(is_it))
        .map(|c| format!("'aceapex {}'", c.get_name()))
        .collect();
    if !after || owners.is_empty() {
        return None;
    }
    let why = if owners == ["'aceapex compress'"] {
        " (an archive records how it was made: the other commands read that from it)"
    } else {
        ""
    };
    let list = match owners.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    let msg = format!("{name} is an option of {list}, not of 'aceapex {used}'{why}");
    Some(
        cmd.find_subcommand_mut(&used)?
            .error(ErrorKind::UnknownArgument, msg),
    )
}

fn main() {
    install_signal_cleanup();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => misplaced_option(&e).unwrap_or(e).exit(),
    };
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    if let Err(e) = run(cli) {
        if let Some(u) = e.downcast_ref::<Usage>() {
            // clap's format and exit status, with the subcommand's usage line
            let mut cmd = Cli::command();
            cmd.build();
            if let Some(sub) = cmd.find_subcommand_mut(u.cmd) {
                sub.error(ErrorKind::ValueValidation, &u.msg).exit();
            }
            eprintln!("aceapex: error: {e:#}");
            std::process::exit(EXIT_USAGE);
        }
        if e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        }) {
            // the reader went away (e.g. `| head`): quiet, with the status of a process
            // ended by SIGPIPE, as gzip and zstd end
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        eprintln!("aceapex: error: {e:#}");
        std::process::exit(1);
    }
}

/// Exit status when standard output's reader closed early (128 + SIGPIPE).
const EXIT_BROKEN_PIPE: i32 = 141;

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Compress {
            inputs,
            output,
            stdout,
            level,
            block_size,
            window,
            min_match,
            no_rep,
            target,
            depth_cap,
            threads,
            force,
        } => {
            let opts = Options::new()
                .with_level(level)
                .with_target(target.into())
                .with_block_size(block_size)
                .with_window(window)
                .with_min_match(min_match)
                .with_repeat_codes(!no_rep)
                .with_depth_cap(depth_cap);
            opts.validate()
                .map_err(|e| usage("compress", e.to_string()))?;
            one_output_name("compress", &inputs, output.is_some() || stdout)?;
            set_threads(threads)?;
            each_input(&inputs, |input| {
                compress_one(input, output.clone(), stdout, &opts, force)
            })?;
        }
        Cmd::Decompress {
            inputs,
            output,
            stdout,
            device,
            threads,
            force,
            test,
        } => {
            one_output_name("decompress", &inputs, output.is_some() || stdout)?;
            set_threads(threads)?;
            each_input(&inputs, |input| {
                if test {
                    test_one(input, device)
                } else {
                    decompress_one(input, output.clone(), stdout, device, force)
                }
            })?;
        }
        Cmd::Extract {
            input,
            offset,
            length,
            output,
            force,
        } => {
            let out_path = output.unwrap_or_else(|| PathBuf::from("-"));
            check_not_same(&input, &out_path)?;
            check_input(&input, true)?;
            let out = OutFile::open(&out_path, force)?;
            let bytes = read_input(&input, true)?;
            let a =
                Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
            // no --length: the rest of the data (an offset past the end is still an error)
            let size = a.header.original_size;
            if length.is_none() && offset > size {
                bail!("--offset {offset} lies outside the original data ({size} bytes)");
            }
            let length = length.unwrap_or(size - offset);
            let region = decode::extract(&a, offset, length)?;
            out.finish(&region)?;
        }
        Cmd::Info { input, json } => {
            let bytes = read_input(&input, true)?;
            let a =
                Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
            let text = info_text(&a, bytes.len() as u64, json);
            // a reader that stops early (`aceapex info X | head -3`) ends the run like one of
            // `decompress -o -` (status 141, no message; `main`), not with a panic
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("writing to standard output")?;
        }
    }
    Ok(())
}

/// `compress` of one input (see [`Cmd::Compress`]).
fn compress_one(
    input: &Path,
    output: Option<PathBuf>,
    stdout: bool,
    opts: &Options,
    force: bool,
) -> Result<()> {
    let out_path = match output {
        Some(o) => o,
        None if stdout || input.as_os_str() == "-" => PathBuf::from("-"),
        None => {
            check_derived_from_file(input)?;
            // the name's own bytes, not its display form (a name need not be UTF-8)
            let mut name = input.as_os_str().to_os_string();
            name.push(".acx");
            PathBuf::from(name)
        }
    };
    check_not_same(input, &out_path)?;
    check_input(input, false)?;
    if out_path.as_os_str() == "-" && std::io::stdout().is_terminal() && !force {
        bail!(
            "refusing to write compressed data to a terminal: redirect standard output, \
             name a file with -o, or use -f to force"
        );
    }
    let out = OutFile::open(&out_path, force)?;
    let data = read_input(input, false)?;
    if data.starts_with(&aceapex::device::format::MAGIC) && Archive::parse(&data).is_ok() {
        // as gzip warns of a .gz input: compressed data does not shrink again
        let name = if input.as_os_str() == "-" {
            "standard input".to_string()
        } else {
            input.display().to_string()
        };
        note(format_args!(
            "{name} is already an aceapex archive: compressing it again gains little \
             (decompress restores it)"
        ));
    }
    let slow = opts.level >= 6 || opts.window.is_some_and(|w| w > opts.block_size);
    let pb = progress_bar(data.len() as u64, "compress", slow);
    let t = Instant::now();
    if opts.tries_min_match() {
        // a sample is first compressed both ways: say what is going on
        pb.set_message("compress (minimum match 4 or 6: trying both on a sample)");
    }
    let started = std::sync::atomic::AtomicBool::new(false);
    let packed = archive::compress(&data, opts, &|n| {
        if !started.swap(true, std::sync::atomic::Ordering::Relaxed) {
            pb.set_message("compress");
        }
        pb.inc(n)
    })?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    out.finish(&packed)?;
    if out_path.as_os_str() != "-" {
        if data.is_empty() {
            // an empty input has no ratio and no speed
            note(format_args!(
                "{} -> {}: empty input -> {} bytes",
                input.display(),
                out_path.display(),
                packed.len()
            ));
        } else {
            note(format_args!(
                "{} -> {}: {} -> {} bytes (ratio {:.3}) in {:.2} s, {} MB/s",
                input.display(),
                out_path.display(),
                data.len(),
                packed.len(),
                data.len() as f64 / packed.len() as f64,
                secs,
                mbps(data.len() as u64, secs)
            ));
        }
    }
    Ok(())
}

/// `decompress` of one archive (see [`Cmd::Decompress`]).
fn decompress_one(
    input: &Path,
    output: Option<PathBuf>,
    stdout: bool,
    device: Device,
    force: bool,
) -> Result<()> {
    // the name less its suffix in any case (`X.ACX` -> `X`), as gzip strips `.GZ` (on the
    // name's bytes: it need not be UTF-8)
    let name = input.as_os_str().as_encoded_bytes();
    let stem = (name.len().checked_sub(4))
        .filter(|&c| name[c..].eq_ignore_ascii_case(b".acx"))
        .map(|c| &name[..c]);
    let out_path = match output {
        Some(o) => o,
        None if stdout || input.as_os_str() == "-" => PathBuf::from("-"),
        None => match stem {
            Some(stem) if !stem.is_empty() => {
                check_derived_from_file(input)?;
                // SAFETY: `stem` is the name's encoded bytes cut right before the ASCII
                // `.acx`, a split that `OsStr::from_encoded_bytes_unchecked` allows.
                PathBuf::from(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(stem) })
            }
            // a directory is a runtime error, not a naming one (same message as -o)
            _ if input.is_dir() => bail!("{}", dir_message(input, true)),
            // no suffix, or `.acx` alone (the name without it is empty)
            stem => {
                let why = if stem.is_some() {
                    ": the name without .acx is empty"
                } else {
                    " does not end in .acx"
                };
                return Err(usage(
                    "decompress",
                    format!(
                        "{}{why}: name the output with -o (or -c for standard output)",
                        input.display()
                    ),
                ));
            }
        },
    };
    check_not_same(input, &out_path)?;
    check_input(input, true)?;
    let out = OutFile::open(&out_path, force)?;
    let (data, used, secs) = read_and_decode(input, device)?;
    out.finish(&data)?;
    if out_path.as_os_str() != "-" {
        note(format_args!(
            "{} -> {}: {} bytes on the {used}, verified, {:.2} s, {} MB/s",
            input.display(),
            out_path.display(),
            data.len(),
            secs,
            mbps(data.len() as u64, secs)
        ));
    }
    Ok(())
}

/// `decompress --test` of one archive: decoded and verified like `decompress`, nothing
/// written.
fn test_one(input: &Path, device: Device) -> Result<()> {
    let (data, used, secs) = read_and_decode(input, device)?;
    note(format_args!(
        "{}: OK, {} bytes on the {used}, verified, {:.2} s, {} MB/s",
        input.display(),
        data.len(),
        secs,
        mbps(data.len() as u64, secs)
    ));
    Ok(())
}

/// Reads, parses and decodes (verified) the archive `input`: the data, the device used
/// ([`decode_with`]) and the decode time in seconds.
fn read_and_decode(input: &Path, device: Device) -> Result<(Vec<u8>, String, f64)> {
    let bytes = read_input(input, true)?;
    let a = Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
    let t = Instant::now();
    let (data, used) =
        decode_with(&a, device).with_context(|| format!("decoding {}", input.display()))?;
    Ok((data, used, t.elapsed().as_secs_f64()))
}

/// Several inputs each go to their default output name: `-o`, `-c` and '-' need exactly one.
fn one_output_name(cmd: &'static str, inputs: &[PathBuf], named: bool) -> Result<()> {
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
fn each_input(inputs: &[PathBuf], mut f: impl FnMut(&Path) -> Result<()>) -> Result<()> {
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

/// Whether the note that there is no GPU (and the CPU decodes) has been printed.
static NO_GPU_NOTE: std::sync::Once = std::sync::Once::new();

/// Decodes on the requested device; returns the data and the device's description.
fn decode_with(a: &Archive<'_>, device: Device) -> Result<(Vec<u8>, String)> {
    if device != Device::Cpu {
        match gpu::Gpu::open() {
            Ok(g) => {
                // independent blocks: the dense full pipe; a cross-block window: the wavefront
                let how = if a.cross_block() {
                    "wavefront"
                } else {
                    "dense"
                };
                match gpu::decoder::decompress(&g, a) {
                    Ok(data) => return Ok((data, format!("GPU ({}, {how} decoder)", g.name()))),
                    Err(e @ gpu::GpuError::Unsupported(_)) if device == Device::Auto => {
                        note(format_args!("aceapex: {e}; decoding on the CPU"))
                    }
                    Err(e) => return Err(e).context("GPU decode"),
                }
            }
            Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
            // once per run, not once per archive of `decompress A B C`
            Err(e) => {
                NO_GPU_NOTE.call_once(|| note(format_args!("aceapex: {e}; decoding on the CPU")))
            }
        }
    }
    let mut out = decode::zeroed_output(a.header.original_size)?;
    let pb = progress_bar(out.len() as u64, "decompress", false);
    decode::decompress_into(a, &mut out, &|n| pb.inc(n))?;
    pb.finish_and_clear();
    Ok((
        out,
        match rayon::current_num_threads() {
            1 => "CPU (1 thread)".to_string(),
            n => format!("CPU ({n} threads)"),
        },
    ))
}

/// The `info` report (text or one JSON line), to be written to standard output at once.
fn info_text(a: &Archive<'_>, archive_len: u64, json: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    // a line of the report (writing to a String cannot fail)
    macro_rules! out {
        ($($t:tt)*) => {
            let _ = writeln!(s, $($t)*);
        };
    }
    let h = &a.header;
    let block_table_bytes = h.block_count as u64 * a.entry_size() as u64;
    let mut stored = [0u64; STREAM_COUNT];
    let mut decoded = [0u64; STREAM_COUNT];
    let mut depth_max = 0u32;
    let mut depth_sum = 0u64;
    let mut depth_hist = [0u64; DEPTH_BUCKETS.len()];
    for e in &a.entries {
        for k in 0..STREAM_COUNT {
            stored[k] += e.stored_len[k] as u64;
            decoded[k] += e.decoded_len[k] as u64;
        }
        depth_max = depth_max.max(e.max_depth);
        depth_sum += e.max_depth as u64;
        let bucket = if e.max_depth == 0 {
            0
        } else {
            (32 - e.max_depth.leading_zeros()).min(7) as usize
        };
        depth_hist[bucket] += 1;
    }
    // per stream: groups whose table record is of a kind (`is`)
    let groups_where = |is: fn(&aceapex::archive::StreamTable) -> bool| -> [usize; STREAM_COUNT] {
        std::array::from_fn(|k| {
            a.tables
                .iter()
                .filter(|g| g[k].as_deref().is_some_and(is))
                .count()
        })
    };
    // context pairs (FORMAT.md §5.4), packed literal tables (§5.6)
    let context_groups = groups_where(aceapex::archive::StreamTable::has_context);
    let packed_groups = groups_where(aceapex::archive::StreamTable::is_packed);
    // `compress --target gpu`: no group has a table for a match-layer stream, though
    // they hold bytes (the default encoder gives every group a table for a stream it uses)
    let tabled_groups = groups_where(|_| true);
    let raw_match_streams =
        tabled_groups[1..].iter().all(|&n| n == 0) && decoded[1..].iter().any(|&n| n > 0);
    // `compress --target gpu`: blocks with a slice of more than 32 lanes (FORMAT.md §5.4)
    let wide_blocks = a.entries.iter().filter(|e| e.has_wide_slice()).count();
    let two_bit_blocks = (a.entries.iter())
        .filter(|e| {
            e.lanes[aceapex::device::format::STREAM_LITERALS]
                == aceapex::device::format::LANES_TWO_BIT
        })
        .count();
    let ratio = h.original_size as f64 / archive_len.max(1) as f64;
    let mean_depth = depth_sum as f64 / a.entries.len().max(1) as f64;
    let names = aceapex::device::format::STREAM_NAMES;
    if json {
        let streams: Vec<String> = (0..STREAM_COUNT)
            .map(|k| {
                // JSON keys without spaces ("offset_tails"), so `jq .streams.offset_tails` works
                format!(
                    "\"{}\":{{\"decoded\":{},\"stored\":{},\"context_groups\":{},\"packed_groups\":{}}}",
                    names[k].replace(' ', "_"),
                    decoded[k],
                    stored[k],
                    context_groups[k],
                    packed_groups[k]
                )
            })
            .collect();
        out!(
            "{{\"format_version\":{},\"original_size\":{},\"archive_size\":{},\"ratio\":{:.6},\"block_size\":{},\"block_count\":{},\"entry_bytes\":{},\"block_table_bytes\":{},\"table_bytes\":{},\"group_blocks\":{},\"window\":{},\"cross_block\":{},\"level\":{},\"min_match\":{},\"match_base\":{},\"repeat_codes\":{},\"raw_match_streams\":{},\"wide_blocks\":{},\"two_bit_blocks\":{},\"depth_cap\":{},\"max_block_depth\":{},\"mean_block_depth\":{:.3},\"block_depth_histogram\":{:?},\"block_depth_buckets\":{:?},\"streams\":{{{}}},\"content_checksum\":\"{:016x}\"}}",
            h.version,
            h.original_size,
            archive_len,
            ratio,
            h.block_size,
            h.block_count,
            a.entry_size(),
            block_table_bytes,
            h.table_bytes,
            h.group_blocks,
            h.window,
            a.cross_block(),
            h.level,
            h.min_match,
            h.match_base(),
            h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0,
            raw_match_streams,
            wide_blocks,
            two_bit_blocks,
            h.depth_cap,
            depth_max,
            mean_depth,
            depth_hist,
            DEPTH_BUCKETS,
            streams.join(","),
            h.content_checksum
        );
        return s;
    }
    out!("format version   {}", h.version);
    out!("original size    {}", count(h.original_size, "byte"));
    out!(
        "archive size     {} bytes (ratio {:.3})",
        archive_len,
        ratio
    );
    out!(
        "blocks           {} x {} bytes, tables shared by {}{}",
        h.block_count,
        h.block_size,
        count(h.group_blocks as u64, "block"),
        if wide_blocks > 0 {
            format!(", {wide_blocks} with wide slices (more than 32 rANS lanes, two GPU warps)")
        } else {
            String::new()
        }
    );
    out!(
        "block table      {} bytes ({} per block), frequency tables {} bytes",
        block_table_bytes,
        a.entry_size(),
        h.table_bytes
    );
    out!(
        "window           {} bytes ({})",
        h.window,
        if a.cross_block() {
            "crosses blocks"
        } else {
            "blocks independent"
        }
    );
    out!(
        "encoder          level {}, min match {} (match base {}), repeat codes {}, depth cap {}{}",
        h.level,
        h.min_match,
        h.match_base(),
        if h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0 {
            "on"
        } else {
            "off"
        },
        if h.depth_cap == 0 {
            "none".to_string()
        } else {
            h.depth_cap.to_string()
        },
        if raw_match_streams {
            ", match streams raw (no tables)"
        } else {
            ""
        }
    );
    // a block's depth: the highest dependency level of its matches (see INFO_HELP)
    out!(
        "match depth      deepest block {depth_max}, mean {mean_depth:.2} (a block's depth: the \
         highest dependency level of its matches, see 'info --help')"
    );
    let hist: Vec<String> = DEPTH_BUCKETS
        .iter()
        .zip(depth_hist)
        .map(|(b, n)| format!("{b}:{n}"))
        .collect();
    out!("blocks by depth  {}", hist.join(" "));
    for k in 0..STREAM_COUNT {
        let mut ctx = match context_groups[k] {
            0 => String::new(),
            n => format!(", context tables in {n} of {} groups", h.group_count),
        };
        if packed_groups[k] > 0 {
            ctx += &format!(
                ", packed in {} of {} groups",
                packed_groups[k], h.group_count
            );
        }
        if k == aceapex::device::format::STREAM_LITERALS && two_bit_blocks > 0 {
            ctx += &format!(", two-bit in {two_bit_blocks} of {} blocks", h.block_count);
        }
        out!(
            "stream {:<12} {:>9} bytes decoded, {:>12} stored ({:.2} bits/byte{})",
            names[k],
            decoded[k],
            stored[k],
            stored[k] as f64 * 8.0 / decoded[k].max(1) as f64,
            ctx
        );
    }
    out!("content XXH3-64  {:016x}", h.content_checksum);
    s
}
