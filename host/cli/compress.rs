//! `aceapex compress`: one input at a time, through [`archive::compress`].

use crate::args::{parse_block_size, parse_level, parse_min_match, parse_threads, parse_window};
use crate::io::{
    check_derived_from_file, check_input, check_not_same, each_input, like_input, one_output_name,
    or_stdin, read_input_checked, OpenInput, OutFile,
};
use crate::output::{chatty, mbps, note, progress_bar};
use crate::{set_threads, usage};
use aceapex::encode::stream::{StreamConfig, IN_MEMORY_BYTES};
use aceapex::format::Archive;
use aceapex::{Options, Target};
use anyhow::{bail, Context, Result};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `aceapex compress` (help text on [`crate::Cmd::Compress`]).
#[derive(clap::Args)]
pub struct CompressArgs {
    /// Input files, or '-' for standard input (the default where standard input is not a
    /// terminal); several files are each compressed to their default name (FILE.acx), and
    /// an error in one does not stop the others. Standard input, pipes and files over 1 GiB
    /// are read a batch at a time, in memory bounded whatever their size (the data section
    /// is spooled beside the output).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file [default: INPUT.acx; standard output for '-' input]; '-' for standard
    /// output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write to standard output (same as -o -).
    #[arg(short = 'c', long, conflicts_with = "output")]
    pub stdout: bool,
    /// Compression level, 1 (fastest) to 9 (smallest): trades encode time for ratio. 1-6
    /// lazy parsing with a growing search; 7-9 also try price-based optimal parses of every
    /// block and keep the smallest, much slower than 6 (slowest on FASTQ and with a large
    /// --window); 8 and 9 also give the entropy coder fewer interleaved lanes, for smaller
    /// archives and a slower GPU decode. A progress bar shows on a terminal.
    #[arg(short, long, default_value_t = Options::default().level, value_parser = parse_level)]
    pub level: u32,
    /// What the archive is for: trades ratio for GPU decode speed. The encoder picks the
    /// format's codings per group and block by their cost under the target; every decoder
    /// reads either kind of archive.
    #[arg(long, value_enum, default_value_t = TargetArg::Size)]
    pub target: TargetArg,
    /// Block size: a power of two from 4K to 4M (binary: 16K = 16384 bytes). Smaller blocks
    /// give finer random access and more GPU parallelism on small files; larger ones
    /// compress better.
    #[arg(long, value_name = "SIZE", default_value = "16K", value_parser = parse_block_size)]
    pub block_size: u32,
    /// Largest match distance, 1 byte to 4G - 1 (4294967295 bytes) [default: the block
    /// size]. Larger than the block size lets matches reach earlier blocks: better ratio on
    /// repetitive data, but a block then decodes only after those blocks (slower GPU decode
    /// and extract) and the match search is slower.
    #[arg(long, value_name = "SIZE", value_parser = parse_window)]
    pub window: Option<u32>,
    /// Shortest match to emit, in bytes (4 up to the block size): shorter matches give
    /// smaller archives on text and FASTQ and a slower decode. [default: with --target
    /// size, and at levels 8-9, 4 or 6, whichever compresses a sample of the input
    /// smaller; otherwise 6, for decode speed]
    #[arg(long, value_name = "BYTES", value_parser = parse_min_match)]
    pub min_match: Option<u32>,
    /// Send repeat distances as explicit offsets (no repeat codes): simpler streams, a
    /// slightly larger archive.
    #[arg(long)]
    pub no_rep: bool,
    /// Cap the dependency depth (chains of matches that copy from matches): every match
    /// gets a level below N, which bounds a GPU decoder's rounds per block at some cost in
    /// ratio. 0 = no cap.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub depth_cap: u32,
    /// Worker threads, 1 to 1024; 0 = all cores [default: all cores]. The archive does not
    /// depend on it.
    #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Overwrite an existing output; allow compressed output to a terminal.
    #[arg(short, long)]
    pub force: bool,
}

/// Runs `aceapex compress`.
pub fn run(args: CompressArgs) -> Result<()> {
    let CompressArgs {
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
    } = args;
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
    let inputs = or_stdin("compress", inputs)?;
    one_output_name("compress", &inputs, output.is_some() || stdout, false)?;
    set_threads(threads)?;
    each_input(&inputs, |input| {
        compress_one(input, output.clone(), stdout, &opts, force)
    })?;
    Ok(())
}

/// `compress` of one input (see [`crate::Cmd::Compress`]).
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
    let out = OutFile::open_like(&out_path, force, like_input(input))?;
    if is_stream(input)? {
        return compress_stream(input, &out_path, out, opts, None);
    }
    let opened = OpenInput::open(input)?;
    if opened.len() > STREAM_FILE_BYTES {
        return compress_stream(input, &out_path, out, opts, Some(opened));
    }
    drop(opened);
    let (data, opened) = read_input_checked(input, false)?;
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
    // the library call: FASTA input also gets its sequence index (FORMAT.md §3.5)
    let packed = aceapex::compress_with_progress(&data, opts, &|n| {
        if !started.swap(true, std::sync::atomic::Ordering::Relaxed) {
            pb.set_message("compress");
        }
        pb.inc(n)
    })?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    if let Some(opened) = &opened {
        // an input written to while it was compressed: its archive would not be the file's
        // contents at any one moment
        opened.check_unchanged()?;
    }
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

/// Whether `input` is standard input or another stream (a pipe, a process substitution, a
/// character device): read a batch at a time, in bounded memory ([`compress_stream`]).
fn is_stream(input: &Path) -> Result<bool> {
    if input.as_os_str() == "-" {
        return Ok(true);
    }
    let meta = std::fs::metadata(input).with_context(|| format!("opening {}", input.display()))?;
    Ok(!meta.is_file())
}

/// Regular files larger than this are compressed a batch at a time ([`compress_stream`]),
/// in bounded memory; smaller ones are read whole.
const STREAM_FILE_BYTES: u64 = 1 << 30;

/// `compress` of a stream, or of the large regular file `file` (opened, its `stat` taken):
/// through [`aceapex::encode::stream::compress_stream`], in memory bounded independently of
/// the input's size, the data section spooled beside the output (or in `TMPDIR` for
/// standard output or a device). A file's minimum match trial reads its sample by position
/// (the bytes of the whole-file path), and a file that changed meanwhile is an error and
/// leaves no output. A terminal shows the bytes read (a stream's total is not known).
fn compress_stream(
    input: &Path,
    out_path: &Path,
    mut out: OutFile,
    opts: &Options,
    file: Option<OpenInput>,
) -> Result<()> {
    let mut min_match = None;
    let (name, reader): (String, Box<dyn Read + Send + '_>) = match &file {
        None if input.as_os_str() == "-" => ("standard input".into(), Box::new(std::io::stdin())),
        None => {
            let f = std::fs::File::open(input)
                .with_context(|| format!("opening {}", input.display()))?;
            (input.display().to_string(), Box::new(f))
        }
        Some(f) => {
            use std::os::unix::fs::FileExt;
            let mut read_at = |at: u64, buf: &mut [u8]| f.file().read_exact_at(buf, at);
            let m = aceapex::encode::stream::sample_min_match(opts, f.len(), &mut read_at)
                .with_context(|| format!("reading {}", input.display()))?;
            min_match = Some(m);
            (input.display().to_string(), Box::new(f.file()))
        }
    };
    // the spool beside a regular output file, on the disk the archive goes to
    let dir = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let spool_dir = (out_path.as_os_str() != "-"
        && std::fs::metadata(out_path).map_or(true, |m| m.is_file()))
    .then_some(dir);
    let pb = if let Some(f) = &file {
        progress_bar(f.len(), "compress", false)
    } else if std::io::stderr().is_terminal() && chatty() {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_style(
            indicatif::ProgressStyle::with_template("{msg} {bytes} read, {bytes_per_sec}")
                .expect("a valid template"),
        );
        pb.set_message(format!("compress {name}:"));
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    let t = Instant::now();
    let cfg = StreamConfig {
        spool_dir,
        min_match,
        ..Default::default()
    };
    let r = aceapex::encode::stream::compress_stream(reader, &mut out, opts, &cfg, &|n| pb.inc(n));
    pb.finish_and_clear();
    let summary = r.with_context(|| format!("compressing {name}"))?;
    let secs = t.elapsed().as_secs_f64();
    if let Some(f) = &file {
        // a file written to meanwhile: its archive would not be its contents at any moment
        if summary.input_bytes != f.len() {
            bail!("{name} changed while it was being read: no output written");
        }
        f.check_unchanged()?;
    }
    out.commit()?;
    if summary.fasta_left_out {
        note(format_args!(
            "{name} looks like FASTA but not plain FASTA (one line end `\\n`, no blank \
             line, wrapped lines of one width): its archive gets no FASTA index record, \
             which a stream over {} MiB gets only in that form",
            IN_MEMORY_BYTES >> 20
        ));
    }
    if out_path.as_os_str() != "-" {
        note(format_args!(
            "{name} -> {}: {} -> {} bytes (ratio {:.3}) in {:.2} s, {} MB/s",
            out_path.display(),
            summary.input_bytes,
            summary.archive_bytes,
            summary.input_bytes as f64 / summary.archive_bytes.max(1) as f64,
            secs,
            mbps(summary.input_bytes, secs)
        ));
    }
    Ok(())
}

/// `compress --target` ([`Target`]).
#[derive(Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum TargetArg {
    /// Ratio first: every stream entropy-coded where that is smaller. On most line-wrapped
    /// or soft-masked DNA FASTA 'gpu' is smaller still (its two-bit slices with runs list
    /// line feeds and lower case apart and need raw match streams), not where the bases
    /// code in under two bits (an A/T-rich genome).
    Size,
    /// Faster GPU decode for a larger archive: raw match streams, two-bit literals and
    /// wide rANS slices where they pay; for data a GPU will decode.
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
