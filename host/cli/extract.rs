//! `aceapex extract`: byte ranges of the original, decoding only the blocks they need, written
//! in the order asked, piece by piece (never a whole large range in memory).

use crate::args::{parse_size, parse_threads};
use crate::decompress::Device;
use crate::io::{check_input, check_not_same, OutFile};
use crate::{set_threads, usage};
use aceapex::SeekableArchive;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The arguments of `aceapex extract` (help text on [`crate::Cmd::Extract`]).
#[derive(clap::Args)]
pub struct ExtractArgs {
    /// Archive, or '-' for standard input.
    pub input: PathBuf,
    /// First byte of the range (0-based, in the original data).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with_all = ["range", "ranges"])]
    pub offset: Option<u64>,
    /// Bytes to restore from --offset [default: to the end of the original data].
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "offset")]
    pub length: Option<u64>,
    /// A range to restore, OFFSET:LENGTH (0-based first byte and byte count, sizes as below);
    /// repeat it for several ranges, written one after the other in the order given.
    #[arg(long, value_name = "OFFSET:LENGTH", value_parser = parse_range)]
    pub range: Vec<(u64, u64)>,
    /// A file of ranges, one per line: OFFSET:LENGTH or OFFSET LENGTH ('-' for standard
    /// input; blank lines and lines starting with '#' are skipped). Written after the --range
    /// ranges, in the file's order.
    #[arg(long, value_name = "FILE")]
    pub ranges: Option<PathBuf>,
    /// Output file [default: standard output]; '-' for standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write to standard output (same as -o -).
    #[arg(short = 'c', long, conflicts_with = "output")]
    pub stdout: bool,
    /// Where the ranges are decoded: cpu (in bounded memory, the archive read in part), gpu
    /// (the archive read whole and uploaded, the ranges read in batches of 256 MiB), or auto
    /// (the GPU where one is present and the ranges touch enough blocks to repay its start-up).
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
    /// Worker threads for large ranges, 1 to 1024; 0 = all cores [default: all cores].
    #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// One requested range and where it was asked for (for error messages).
struct Request {
    offset: u64,
    /// `None`: to the end of the original data (--offset without --length).
    length: Option<u64>,
    origin: String,
}

/// `OFFSET:LENGTH` (sizes as [`parse_size`] reads them).
fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (o, l) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}' is not a range: use OFFSET:LENGTH (e.g. 1000:5000)"))?;
    Ok((parse_size(o)?, parse_size(l)?))
}

/// The ranges of a `--ranges` file: `OFFSET:LENGTH` or `OFFSET LENGTH` per line.
fn read_ranges_file(path: &Path) -> Result<Vec<Request>> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin().lock()).context("reading standard input")?
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let origin = format!("line {} of {}", i + 1, path.display());
        let fields: Vec<&str> = if t.contains(':') {
            t.splitn(2, ':').map(str::trim).collect()
        } else {
            t.split_whitespace().collect()
        };
        let [o, l] = fields[..] else {
            bail!("{origin}: '{t}' is not a range: use OFFSET:LENGTH or OFFSET LENGTH");
        };
        let parse = |v: &str| parse_size(v).map_err(|e| anyhow::anyhow!("{origin}: {e}"));
        out.push(Request {
            offset: parse(o)?,
            length: Some(parse(l)?),
            origin,
        });
    }
    Ok(out)
}

/// Output is written in pieces of this many bytes (many small ranges in one write).
const WRITE_BYTES: usize = 1 << 20;

/// Runs `aceapex extract`.
pub fn run(args: ExtractArgs) -> Result<()> {
    let ExtractArgs {
        input,
        offset,
        length,
        range,
        ranges,
        output,
        stdout,
        device,
        threads,
        force,
    } = args;
    let mut requests: Vec<Request> = Vec::new();
    if let Some(offset) = offset {
        requests.push(Request {
            offset,
            length,
            origin: "--offset".into(),
        });
    }
    requests.extend(range.iter().map(|&(o, l)| Request {
        offset: o,
        length: Some(l),
        origin: format!("--range {o}:{l}"),
    }));
    if let Some(file) = &ranges {
        if file.as_os_str() == "-" && input.as_os_str() == "-" {
            return Err(usage(
                "extract",
                "the archive and --ranges cannot both come from standard input",
            ));
        }
        requests.extend(read_ranges_file(file)?);
    } else if requests.is_empty() {
        return Err(usage(
            "extract",
            "nothing to extract: give --offset (and --length), --range OFFSET:LENGTH or --ranges FILE",
        ));
    }
    let out_path = if stdout {
        PathBuf::from("-")
    } else {
        output.unwrap_or_else(|| PathBuf::from("-"))
    };
    check_not_same(&input, &out_path)?;
    check_input(&input, true)?;
    set_threads(threads)?;
    let mut out = OutFile::open(&out_path, force)?;
    let source = open_archive(&input)?;
    let mut whole = source
        .try_clone()
        .with_context(|| format!("reading {}", input.display()))?;
    let mut archive =
        SeekableArchive::open(source).with_context(|| format!("reading {}", input.display()))?;
    // every range checked before anything is written
    let size = archive.len();
    let mut resolved = Vec::with_capacity(requests.len());
    for r in &requests {
        let length = match r.length {
            Some(l) => l,
            // no --length: the rest of the data (an offset past the end is still an error)
            None if r.offset <= size => size - r.offset,
            None => bail!(
                "--offset {} lies outside the original data ({size} bytes)",
                r.offset
            ),
        };
        match r.offset.checked_add(length) {
            None => bail!(
                "{}: offset {} + length {length} overflows a 64-bit byte count",
                r.origin,
                r.offset
            ),
            Some(end) if end > size => bail!(
                "{}: bytes {}..{end} lie outside the original data ({size} bytes)",
                r.origin,
                r.offset
            ),
            Some(_) => resolved.push((r.offset, length)),
        }
    }
    let mut w = BufWriter::with_capacity(WRITE_BYTES, &mut out);
    let on_gpu = device != Device::Cpu
        && gpu_extract(&mut whole, &resolved, archive.block_size(), device, &mut w)
            .with_context(|| format!("decoding {}", input.display()))?;
    if !on_gpu {
        archive
            .write_ranges(&resolved, &mut w)
            .with_context(|| format!("decoding {}", input.display()))?;
    }
    w.flush()?;
    drop(w);
    out.commit()
}

/// Output bytes of one GPU batch: ranges are cut into pieces of at most this and gathered
/// into batches up to it, so the device's output buffer stays bounded.
#[cfg(feature = "gpu")]
const GPU_BATCH_BYTES: u64 = 256 << 20;

/// Writes the ranges read on the GPU (the archive `file` read whole and uploaded), in
/// batches; false where `device` is auto and the CPU is to read them (too few blocks to
/// repay the GPU's start-up, no GPU, an archive the GPU decoder cannot take).
#[cfg(feature = "gpu")]
fn gpu_extract(
    file: &mut File,
    ranges: &[(u64, u64)],
    block_size: u32,
    device: Device,
    out: &mut impl Write,
) -> Result<bool> {
    use std::io::SeekFrom;
    if !crate::faidx::gpu_repays(ranges, u64::from(block_size), device) {
        return Ok(false);
    }
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    let dec = aceapex::GpuDecoder::open();
    let reader = match dec
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|d| d.upload(&bytes).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
        Err(e) => {
            crate::faidx::note_cpu_instead(e);
            return Ok(false);
        }
    };
    let mut batch: Vec<(u64, u64)> = Vec::new();
    let mut batch_bytes = 0;
    let mut flush = |batch: &mut Vec<(u64, u64)>| -> Result<()> {
        if !batch.is_empty() {
            out.write_all(&reader.read_ranges_to_vec(batch)?)?;
            batch.clear();
        }
        Ok(())
    };
    for &(offset, length) in ranges {
        let (mut at, end) = (offset, offset + length);
        while at < end {
            let n = (end - at).min(GPU_BATCH_BYTES);
            if batch_bytes + n > GPU_BATCH_BYTES {
                flush(&mut batch)?;
                batch_bytes = 0;
            }
            batch.push((at, n));
            batch_bytes += n;
            at += n;
        }
    }
    flush(&mut batch)?;
    Ok(true)
}

#[cfg(not(feature = "gpu"))]
fn gpu_extract(
    _: &mut File,
    _: &[(u64, u64)],
    _: u32,
    device: Device,
    _: &mut impl Write,
) -> Result<bool> {
    if device == Device::Gpu {
        bail!("--device gpu: this aceapex was built without the `gpu` feature");
    }
    Ok(false)
}

/// The archive to read ranges from: the file, or standard input or a file that cannot be
/// sought (a FIFO, as `<(...)` gives) copied to an unlinked temporary file first (ranges are
/// read out of order, and memory must not hold the archive).
fn open_archive(input: &Path) -> Result<File> {
    if input.as_os_str() != "-" {
        let mut f = File::open(input).with_context(|| format!("opening {}", input.display()))?;
        if f.stream_position().is_ok() {
            return Ok(f);
        }
        return spool(&mut f, &input.display().to_string());
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("refusing to read an archive from a terminal: pipe it in or name the file");
    }
    spool(&mut stdin.lock(), "standard input")
}

/// `r` copied to an unlinked temporary file (`name` for the errors).
fn spool(r: &mut impl Read, name: &str) -> Result<File> {
    let mut t =
        tempfile::tempfile().with_context(|| format!("creating a temporary file for {name}"))?;
    std::io::copy(r, &mut t).with_context(|| format!("copying {name}"))?;
    Ok(t)
}
