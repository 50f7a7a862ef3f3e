//! The `aceapex` command line: compress, decompress, extract, info.

use aceapex::archive::{self, Archive, EncodeOptions};
use aceapex::device::format::STREAM_COUNT;
use aceapex::{decode, gpu};
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Absolute-offset LZ77 compression with GPU decode.
///
/// Archives (.acx) are cut into fixed blocks that decode independently (or, with --window,
/// after the blocks they read from); every block carries an XXH3-64 checksum, so a whole
/// file or any byte range can be restored and verified on the CPU or on an NVIDIA GPU.
#[derive(Parser)]
#[command(name = "aceapex", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compress a file into an .acx archive.
    Compress {
        /// Input file, or '-' for standard input.
        input: PathBuf,
        /// Output file (default: INPUT.acx; '-' for standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Compression level, 1 (fastest) to 9 (smallest).
        #[arg(short, long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=9))]
        level: u32,
        /// Block size: a power of two from 4K to 4M (suffixes K, M).
        #[arg(long, default_value = "16K", value_parser = parse_size)]
        block_size: u64,
        /// Largest match distance (suffixes K, M). Larger than the block size lets matches reach
        /// earlier blocks: better ratio, but a block then decodes only after those blocks.
        #[arg(long, value_parser = parse_size)]
        window: Option<u64>,
        /// Shortest match to emit (>= 6).
        #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(6..))]
        min_match: u32,
        /// Send repeat distances as explicit offsets (no repeat codes).
        #[arg(long)]
        no_rep: bool,
        /// Cap the dependency depth: every match gets a level below N (0 = no cap).
        #[arg(long, default_value_t = 0)]
        depth_cap: u32,
        /// Worker threads (default: all cores).
        #[arg(short = 'T', long)]
        threads: Option<usize>,
        /// Overwrite the output if it exists.
        #[arg(short, long)]
        force: bool,
    },
    /// Restore the original file from an archive (every block and the whole file verified).
    Decompress {
        /// Archive, or '-' for standard input.
        input: PathBuf,
        /// Output file (default: INPUT without .acx; '-' for standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Where to decode: auto uses the GPU when there is one, else the CPU.
        #[arg(long, value_enum, default_value_t = Device::Auto)]
        device: Device,
        /// Worker threads for the CPU decoder (default: all cores).
        #[arg(short = 'T', long)]
        threads: Option<usize>,
        /// Overwrite the output if it exists.
        #[arg(short, long)]
        force: bool,
    },
    /// Restore one byte range, decoding only the blocks it needs.
    Extract {
        /// Archive.
        input: PathBuf,
        /// First byte of the range (0-based, in the original data).
        #[arg(long)]
        offset: u64,
        /// Bytes to restore.
        #[arg(long)]
        length: u64,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Overwrite the output if it exists.
        #[arg(short, long)]
        force: bool,
    },
    /// Show an archive's sizes, ratio, parameters and dependency depths.
    Info {
        /// Archive.
        input: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Device {
    Auto,
    Cpu,
    Gpu,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    // accept 16K, 16k, 16KB, 16KiB, 1M, 1MiB, 1G ...
    let t = t.strip_suffix('B').unwrap_or(t);
    let t = t.strip_suffix('i').unwrap_or(t);
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 16K, 1M)"))?;
    n.checked_mul(mul)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Input bytes: a memory map for files, a buffer for stdin.
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

fn read_input(path: &Path) -> Result<Input> {
    if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .context("reading standard input")?;
        return Ok(Input::Buf(b));
    }
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if len == 0 {
        return Ok(Input::Buf(Vec::new()));
    }
    // SAFETY: the map is read-only; a file changed underneath by another process can at worst
    // give wrong bytes, which the checksums then report (documented in README).
    let m =
        unsafe { memmap2::Mmap::map(&f) }.with_context(|| format!("mapping {}", path.display()))?;
    Ok(Input::Map(m))
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

/// Writes `bytes` to `path` ('-' = stdout) through a temporary file renamed into place, so a
/// failed run never leaves a partial output under the final name.
fn write_output(path: &Path, force: bool, bytes: &[u8]) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut o = std::io::stdout().lock();
        o.write_all(bytes).context("writing standard output")?;
        return o.flush().context("writing standard output");
    }
    if path.exists() && !force {
        bail!("{} already exists (use -f to overwrite)", path.display());
    }
    // A device, FIFO or other non-regular file (e.g. /dev/null) is written in place, never
    // replaced by a rename.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?;
            return f
                .write_all(bytes)
                .with_context(|| format!("writing {}", path.display()));
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    let tmp = dir.join(format!(
        ".{}.aceapex-tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let res = (|| {
        let mut f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all().ok();
        std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

fn progress_bar(total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || total < (64 << 20) {
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

fn set_threads(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads {
        if t == 0 {
            bail!("--threads must be at least 1");
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("starting the thread pool")?;
    }
    Ok(())
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs.max(1e-9) / 1e6
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("aceapex: error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Compress {
            input,
            output,
            level,
            block_size,
            window,
            min_match,
            no_rep,
            depth_cap,
            threads,
            force,
        } => {
            set_threads(threads)?;
            let out_path = match output {
                Some(o) => o,
                None if input.as_os_str() == "-" => PathBuf::from("-"),
                None => PathBuf::from(format!("{}.acx", input.display())),
            };
            check_not_same(&input, &out_path)?;
            if out_path.as_os_str() != "-" && out_path.exists() && !force {
                bail!(
                    "{} already exists (use -f to overwrite)",
                    out_path.display()
                );
            }
            let to_u32 = |v: u64, what: &str| {
                u32::try_from(v).map_err(|_| anyhow::anyhow!("{what} {v} is too large"))
            };
            let opts = EncodeOptions {
                level,
                block_size: to_u32(block_size, "block size")?,
                window: window.map(|w| to_u32(w, "window")).transpose()?,
                min_match,
                repeat_codes: !no_rep,
                depth_cap,
            };
            opts.validate().map_err(anyhow::Error::msg)?;
            let data = read_input(&input)?;
            let pb = progress_bar(data.len() as u64, "compress");
            let t = Instant::now();
            let packed =
                archive::compress(&data, &opts, &|n| pb.inc(n)).map_err(anyhow::Error::msg)?;
            pb.finish_and_clear();
            let secs = t.elapsed().as_secs_f64();
            write_output(&out_path, force, &packed)?;
            if out_path.as_os_str() != "-" {
                eprintln!(
                    "{} -> {}: {} -> {} bytes (ratio {:.3}) in {:.2} s, {:.1} MB/s",
                    input.display(),
                    out_path.display(),
                    data.len(),
                    packed.len(),
                    data.len() as f64 / packed.len().max(1) as f64,
                    secs,
                    mbps(data.len() as u64, secs)
                );
            }
        }
        Cmd::Decompress {
            input,
            output,
            device,
            threads,
            force,
        } => {
            set_threads(threads)?;
            let out_path = match output {
                Some(o) => o,
                None if input.as_os_str() == "-" => PathBuf::from("-"),
                None => match input.to_str().and_then(|s| s.strip_suffix(".acx")) {
                    Some(stem) if !stem.is_empty() => PathBuf::from(stem),
                    _ => bail!(
                        "{} does not end in .acx: name the output with -o",
                        input.display()
                    ),
                },
            };
            check_not_same(&input, &out_path)?;
            if out_path.as_os_str() != "-" && out_path.exists() && !force {
                bail!(
                    "{} already exists (use -f to overwrite)",
                    out_path.display()
                );
            }
            let bytes = read_input(&input)?;
            let a =
                Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
            let t = Instant::now();
            let (data, used) = decode_with(&a, device)?;
            let secs = t.elapsed().as_secs_f64();
            write_output(&out_path, force, &data)?;
            if out_path.as_os_str() != "-" {
                eprintln!(
                    "{} -> {}: {} bytes on the {used}, verified, {:.2} s, {:.1} MB/s",
                    input.display(),
                    out_path.display(),
                    data.len(),
                    secs,
                    mbps(data.len() as u64, secs)
                );
            }
        }
        Cmd::Extract {
            input,
            offset,
            length,
            output,
            force,
        } => {
            if let Some(o) = &output {
                check_not_same(&input, o)?;
            }
            let bytes = read_input(&input)?;
            let a =
                Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
            let region = decode::extract(&a, offset, length)?;
            write_output(
                &output.unwrap_or_else(|| PathBuf::from("-")),
                force,
                &region,
            )?;
        }
        Cmd::Info { input, json } => {
            let bytes = read_input(&input)?;
            let a =
                Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
            print_info(&a, bytes.len() as u64, json);
        }
    }
    Ok(())
}

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
                        eprintln!("aceapex: {e}; decoding on the CPU")
                    }
                    Err(e) => return Err(e).context("GPU decode"),
                }
            }
            Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
            Err(e) => eprintln!("aceapex: {e}; decoding on the CPU"),
        }
    }
    let mut out = decode::zeroed_output(a.header.original_size)?;
    let pb = progress_bar(out.len() as u64, "decompress");
    decode::decompress_into(a, &mut out, &|n| pb.inc(n))?;
    pb.finish_and_clear();
    Ok((
        out,
        format!("CPU ({} threads)", rayon::current_num_threads()),
    ))
}

fn print_info(a: &Archive<'_>, archive_len: u64, json: bool) {
    let h = &a.header;
    let mut stored = [0u64; STREAM_COUNT];
    let mut decoded = [0u64; STREAM_COUNT];
    let mut depth_max = 0u32;
    let mut depth_sum = 0u64;
    let mut depth_hist = [0u64; 8]; // 0,1,2-3,4-7,8-15,16-31,32-63,64+
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
    let ratio = h.original_size as f64 / archive_len.max(1) as f64;
    let mean_depth = depth_sum as f64 / a.entries.len().max(1) as f64;
    let names = ["literals", "lengths", "offsets", "commands"];
    if json {
        let streams: Vec<String> = (0..STREAM_COUNT)
            .map(|k| {
                format!(
                    "\"{}\":{{\"decoded\":{},\"stored\":{}}}",
                    names[k], decoded[k], stored[k]
                )
            })
            .collect();
        println!(
            "{{\"format_version\":{},\"original_size\":{},\"archive_size\":{},\"ratio\":{:.6},\"block_size\":{},\"block_count\":{},\"group_blocks\":{},\"window\":{},\"cross_block\":{},\"level\":{},\"min_match\":{},\"repeat_codes\":{},\"depth_cap\":{},\"max_block_depth\":{},\"mean_block_depth\":{:.3},\"block_depth_histogram\":{:?},\"streams\":{{{}}},\"content_checksum\":\"{:016x}\"}}",
            h.version,
            h.original_size,
            archive_len,
            ratio,
            h.block_size,
            h.block_count,
            h.group_blocks,
            h.window,
            a.cross_block(),
            h.level,
            h.min_match,
            h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0,
            h.depth_cap,
            depth_max,
            mean_depth,
            depth_hist,
            streams.join(","),
            h.content_checksum
        );
        return;
    }
    println!("format version   {}", h.version);
    println!("original size    {} bytes", h.original_size);
    println!(
        "archive size     {} bytes (ratio {:.3})",
        archive_len, ratio
    );
    println!(
        "blocks           {} x {} bytes, tables shared by {} blocks",
        h.block_count, h.block_size, h.group_blocks
    );
    println!(
        "window           {} bytes ({})",
        h.window,
        if a.cross_block() {
            "crosses blocks"
        } else {
            "blocks independent"
        }
    );
    println!(
        "encoder          level {}, min match {}, repeat codes {}, depth cap {}",
        h.level,
        h.min_match,
        if h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0 {
            "on"
        } else {
            "off"
        },
        if h.depth_cap == 0 {
            "none".to_string()
        } else {
            h.depth_cap.to_string()
        }
    );
    println!("block depth      max {depth_max}, mean {mean_depth:.2}");
    println!(
        "  histogram      0:{} 1:{} 2-3:{} 4-7:{} 8-15:{} 16-31:{} 32-63:{} 64+:{}",
        depth_hist[0],
        depth_hist[1],
        depth_hist[2],
        depth_hist[3],
        depth_hist[4],
        depth_hist[5],
        depth_hist[6],
        depth_hist[7]
    );
    for k in 0..STREAM_COUNT {
        println!(
            "stream {:<9} {:>12} bytes decoded, {:>12} stored ({:.2} bits/byte)",
            names[k],
            decoded[k],
            stored[k],
            stored[k] as f64 * 8.0 / decoded[k].max(1) as f64
        );
    }
    println!("content XXH3-64  {:016x}", h.content_checksum);
}
