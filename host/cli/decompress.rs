//! `aceapex decompress` (and `--test`): a whole archive, on the GPU or the CPU, verified.

use crate::args::parse_threads;
use crate::io::{
    check_derived_from_file, check_input, check_not_same, dir_message, each_input, like_input,
    one_output_name, or_stdin, read_input_checked, OutFile,
};
use crate::output::{mbps, note, progress_bar};
use crate::{set_threads, usage};
use aceapex::decode::{self, stream};
use aceapex::format::Archive;
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::fs::File;
use std::io::IsTerminal;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `aceapex decompress` (help text on [`crate::Cmd::Decompress`]).
#[derive(clap::Args)]
pub struct DecompressArgs {
    /// Archives, or '-' for standard input (the default where standard input is not a
    /// terminal); several archives are each restored to their default name (without .acx),
    /// and an error in one does not stop the others.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file [default: INPUT without .acx; standard output for '-' input]; '-' for
    /// standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write to standard output (same as -o -); several archives' originals one after the
    /// other.
    #[arg(short = 'c', long, conflicts_with = "output")]
    pub stdout: bool,
    /// Where to decode. Starting CUDA takes a fraction of a second, so small archives decode
    /// faster on the CPU.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
    /// Worker threads for the CPU decoder, 1 to 1024; 0 = all cores [default: all cores].
    #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// Test: decode and verify every block and the whole file, write nothing (status 0
    /// only if every archive is intact).
    #[arg(short, long, conflicts_with_all = ["output", "stdout", "force"])]
    pub test: bool,
}

/// Where `decompress` decodes.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Device {
    /// The GPU where there is one and it is expected to finish first (its start-up takes
    /// about a quarter of a second, so small archives and many CPU threads favour the CPU),
    /// else the CPU.
    Auto,
    /// The CPU.
    Cpu,
    /// The GPU; an error where there is none.
    Gpu,
}

/// Runs `aceapex decompress`.
pub fn run(args: DecompressArgs) -> Result<()> {
    let DecompressArgs {
        inputs,
        output,
        stdout,
        device,
        threads,
        force,
        test,
    } = args;
    let inputs = or_stdin("decompress", inputs)?;
    // (several archives to standard output: their originals one after the other)
    let to_stdout = stdout || output.as_deref() == Some(Path::new("-"));
    one_output_name("decompress", &inputs, output.is_some() && !to_stdout, true)?;
    set_threads(threads)?;
    each_input(&inputs, |input| {
        if test {
            test_one(input, device)
        } else {
            decompress_one(input, output.clone(), stdout, device, force)
        }
    })?;
    Ok(())
}

/// `decompress` of one archive (see [`crate::Cmd::Decompress`]).
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
    let mut out = OutFile::open_like(&out_path, force, like_input(input))?;
    // on an error the output is dropped here, which removes its temporary
    let (n, used, secs) = decode_to(input, device, &mut out)?;
    out.commit()?;
    if out_path.as_os_str() != "-" {
        note(format_args!(
            "{} -> {}: {n} bytes on the {used}, verified, {:.2} s, {} MB/s",
            input.display(),
            out_path.display(),
            secs,
            mbps(n, secs)
        ));
    }
    Ok(())
}

/// `decompress --test` of one archive: decoded and verified like `decompress`, nothing
/// written.
fn test_one(input: &Path, device: Device) -> Result<()> {
    check_input(input, true)?;
    let (n, used, secs) = decode_to(input, device, &mut std::io::sink())?;
    note(format_args!(
        "{}: OK, {n} bytes on the {used}, verified, {:.2} s, {} MB/s",
        input.display(),
        secs,
        mbps(n, secs)
    ));
    Ok(())
}

/// Decodes (verified) the archive `input` ('-' = standard input) into `out`: the number of
/// bytes, the device used and the decode time in seconds. On the CPU the archive is streamed
/// ([`aceapex::decompress_to`]: memory bounded by the batch and the window, output written
/// as blocks verify); on the GPU it is read whole, and an output larger than one piece or
/// than the GPU's free memory is decoded in pieces and streamed ([`decode_on_gpu_in_pieces`]).
fn decode_to(
    input: &Path,
    device: Device,
    out: &mut (impl std::io::Write + Send),
) -> Result<(u64, String, f64)> {
    let t = Instant::now();
    let file = if input.as_os_str() == "-" {
        None
    } else {
        Some(File::open(input).with_context(|| format!("opening {}", input.display()))?)
    };
    // the original size the header declares: the progress bar's total and auto's estimate
    let declared = file.as_ref().and_then(declared_size);
    // `auto`: the GPU only where it is expected to finish first (its start-up is paid once per
    // process); standard input streams on the CPU
    let device = match (device, &file, declared) {
        (Device::Auto, Some(f), Some(n)) if gpu_expected_faster(n, f) => Device::Auto,
        (Device::Auto, ..) => Device::Cpu,
        (d, ..) => d,
    };
    if let Some(gpu) = open_gpu(device)? {
        let (bytes, _) = read_input_checked(input, true)?;
        let a = Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
        // large outputs stream to `out` in pieces, verified piece by piece
        if let Some((n, used)) = decode_on_gpu_in_pieces(&gpu, &a, &bytes, device, out)
            .with_context(|| format!("decoding {}", input.display()))?
        {
            return Ok((n, used, t.elapsed().as_secs_f64()));
        }
        let (data, used) = decode_on_gpu(&gpu, &a, device)
            .with_context(|| format!("decoding {}", input.display()))?;
        out.write_all(&data)
            .and_then(|()| out.flush())
            .context("writing the output")?;
        return Ok((data.len() as u64, used, t.elapsed().as_secs_f64()));
    }
    let n = match file {
        Some(f) => stream_to(f, declared.unwrap_or(0), out),
        None => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                bail!("refusing to read an archive from a terminal: pipe it in or name the file");
            }
            stream_to(stdin, 0, out)
        }
    };
    let n = n.with_context(|| format!("decoding {}", input.display()))?;
    Ok((n, cpu_name(), t.elapsed().as_secs_f64()))
}

/// The original size an archive file declares (header bytes 8..16, FORMAT.md §2); `None`
/// where its first bytes are not an archive header (the decoder then says what is wrong).
fn declared_size(f: &File) -> Option<u64> {
    let mut head = [0u8; 16];
    f.read_exact_at(&mut head, 0).ok()?;
    (head[..4] == aceapex::device::format::MAGIC)
        .then(|| u64::from_le_bytes(head[8..16].try_into().expect("8 bytes")))
}

/// What `--device auto` expects of a one-shot GPU decode: starting CUDA and loading the
/// kernels (seconds), then reading and uploading the archive and downloading and verifying
/// the output (bytes per second each); and of the CPU decoder, bytes per second per thread.
/// Rounded from docs/PERFORMANCE.md (an H100 machine: a 40 MB genome restores in 0.27 s on
/// the GPU, 0.01 s on its 16 CPU threads).
const GPU_START_S: f64 = 0.26;
const GPU_ARCHIVE_BPS: f64 = 8e9;
const GPU_OUTPUT_BPS: f64 = 10e9;
const CPU_THREAD_BPS: f64 = 0.8e9;

/// Whether a GPU decode of the archive `file`, of `original` bytes, is expected to finish
/// before a CPU decode on this process's threads ([`GPU_START_S`]).
fn gpu_expected_faster(original: u64, file: &File) -> bool {
    let archive = file.metadata().map_or(0, |m| m.len()) as f64;
    let original = original as f64;
    let cpu = original / (CPU_THREAD_BPS * rayon::current_num_threads() as f64);
    let gpu = GPU_START_S + archive / GPU_ARCHIVE_BPS + original / GPU_OUTPUT_BPS;
    gpu < cpu
}

/// [`aceapex::decompress_to`] with a progress bar of `total` bytes.
fn stream_to(
    archive: impl std::io::Read + Send,
    total: u64,
    out: &mut (impl std::io::Write + Send),
) -> std::result::Result<u64, aceapex::Error> {
    let pb = progress_bar(total, "decompress", false);
    let n = stream::decompress_stream(archive, out, &|n| pb.inc(n), None);
    pb.finish_and_clear();
    n
}

/// The CPU decoder's description: its thread count.
fn cpu_name() -> String {
    match rayon::current_num_threads() {
        1 => "CPU (1 thread)".to_string(),
        n => format!("CPU ({n} threads)"),
    }
}

/// Whether the note that there is no GPU (and the CPU decodes) has been printed.
static NO_GPU_NOTE: std::sync::Once = std::sync::Once::new();

/// The GPU that decodes under `device`: `None` for `--device cpu`, and for `auto` where
/// there is none (noted once per run).
///
/// Errors: `--device gpu` without a usable GPU.
#[cfg(feature = "gpu")]
fn open_gpu(device: Device) -> Result<Option<aceapex::gpu::Gpu>> {
    if device == Device::Cpu {
        return Ok(None);
    }
    match aceapex::gpu::Gpu::open() {
        Ok(g) => Ok(Some(g)),
        Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
        Err(e) => {
            // once per run, not once per archive of `decompress A B C`
            NO_GPU_NOTE.call_once(|| note(format_args!("aceapex: {e}; decoding on the CPU")));
            Ok(None)
        }
    }
}

/// Decodes the archive on the GPU `g`, or, under `--device auto` for an archive the GPU
/// decoder cannot take, on the CPU (in memory): the data and the device's description.
#[cfg(feature = "gpu")]
fn decode_on_gpu(
    g: &aceapex::gpu::Gpu,
    a: &Archive<'_>,
    device: Device,
) -> Result<(Vec<u8>, String)> {
    use aceapex::gpu;
    // independent blocks: the dense full pipe; a cross-block window: the wavefront
    let how = if a.cross_block() {
        "wavefront"
    } else {
        "dense"
    };
    match gpu::decoder::decompress(g, a) {
        Ok(data) => Ok((data, format!("GPU ({}, {how} decoder)", g.name()))),
        Err(e @ gpu::GpuError::Unsupported(_)) if device == Device::Auto => {
            note(format_args!("aceapex: {e}; decoding on the CPU"));
            let mut out = decode::zeroed_output(a.header().original_size)?;
            let pb = progress_bar(out.len() as u64, "decompress", false);
            decode::decompress_into(a, &mut out, &|n| pb.inc(n))?;
            pb.finish_and_clear();
            Ok((out, cpu_name()))
        }
        Err(e) => Err(e).context("GPU decode"),
    }
}

/// Decodes the archive `a` (the file's bytes `bytes`) on the GPU `g` in pieces into `out`
/// where the GPU's free memory does not hold its whole-archive decode: the bytes written and
/// the device's description, or `None` where the whole-archive decode takes it (it holds the
/// output in host memory; the pieces, not yet measured against it on a GPU, take over only
/// where it cannot run). An
/// archive whose window crosses blocks is decoded whole where it fits and otherwise
/// streamed on the CPU (the GPU does not decode it in pieces:
/// [`aceapex::gpu::pieces::CROSS_BLOCK_PIECES`]); so is one the pieces cannot take under
/// `--device auto`.
#[cfg(feature = "gpu")]
fn decode_on_gpu_in_pieces(
    g: &aceapex::gpu::Gpu,
    a: &Archive<'_>,
    bytes: &[u8],
    device: Device,
    out: &mut (impl std::io::Write + Send),
) -> Result<Option<(u64, String)>> {
    use aceapex::gpu::{pieces, GpuError};
    let size = a.header().original_size;
    let (free, _) = g
        .context()
        .mem_get_info()
        .context("reading the GPU's free memory")?;
    // the whole archive as one piece, against what two pieces may take
    let whole = pieces::piece_device_bytes(a, 0..a.block_count(), g.sm_count());
    let fits = whole <= 2 * pieces::piece_budget(free as u64);
    if fits {
        return Ok(None);
    }
    if a.cross_block() {
        return on_cpu(&pieces::CROSS_BLOCK_PIECES, bytes, size, out);
    }
    match pieces::decompress_to(g, a, &mut *out, pieces::PiecePlan::Auto) {
        Ok(s) => Ok(Some((
            s.bytes,
            format!("GPU ({}, dense decoder, {} pieces)", g.name(), s.pieces),
        ))),
        // (refused before any byte is written)
        Err(aceapex::Error::Gpu(e @ GpuError::Unsupported(_))) if device == Device::Auto => {
            on_cpu(&e, bytes, size, out)
        }
        Err(e) => Err(e).context("GPU decode in pieces"),
    }
}

/// The archive `bytes` (of `size` original bytes) streamed on the CPU into `out`, with a
/// note of why the GPU did not take it.
#[cfg(feature = "gpu")]
fn on_cpu(
    why: &dyn std::fmt::Display,
    bytes: &[u8],
    size: u64,
    out: &mut (impl std::io::Write + Send),
) -> Result<Option<(u64, String)>> {
    note(format_args!("aceapex: {why}; decoding on the CPU"));
    Ok(Some((stream_to(bytes, size, out)?, cpu_name())))
}

/// [`decode_on_gpu_in_pieces`] in a build without the `gpu` feature: never called.
#[cfg(not(feature = "gpu"))]
fn decode_on_gpu_in_pieces(
    g: &NoGpu,
    _: &Archive<'_>,
    _: &[u8],
    _: Device,
    _: &mut (impl std::io::Write + Send),
) -> Result<Option<(u64, String)>> {
    match *g {}
}

/// No GPU in a build without the `gpu` feature (an uninhabited type).
#[cfg(not(feature = "gpu"))]
enum NoGpu {}

/// [`open_gpu`] in a build without the `gpu` feature: the CPU decodes.
#[cfg(not(feature = "gpu"))]
fn open_gpu(device: Device) -> Result<Option<NoGpu>> {
    if device == Device::Gpu {
        bail!("--device gpu: this aceapex was built without the `gpu` feature");
    }
    if device == Device::Auto {
        NO_GPU_NOTE
            .call_once(|| note("aceapex: built without the `gpu` feature; decoding on the CPU"));
    }
    Ok(None)
}

/// [`decode_on_gpu`] in a build without the `gpu` feature: never called.
#[cfg(not(feature = "gpu"))]
fn decode_on_gpu(g: &NoGpu, _: &Archive<'_>, _: Device) -> Result<(Vec<u8>, String)> {
    match *g {}
}
