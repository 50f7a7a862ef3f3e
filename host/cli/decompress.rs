//! `aceapex decompress` (and `--test`): a whole archive, on the GPU or the CPU, verified.

use crate::args::parse_threads;
use crate::io::{
    check_derived_from_file, check_input, check_not_same, dir_message, each_input, like_input,
    one_output_name, read_input_checked, OutFile,
};
use crate::output::{mbps, note, progress_bar};
use crate::{set_threads, usage};
use aceapex::decode;
use aceapex::format::Archive;
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `aceapex decompress` (help text on [`crate::Cmd::Decompress`]).
#[derive(clap::Args)]
pub struct DecompressArgs {
    /// Archives, or '-' for standard input; several archives are each restored to their
    /// default name (without .acx), and an error in one does not stop the others.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file [default: INPUT without .acx; standard output for '-' input]; '-' for
    /// standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write to standard output (same as -o -).
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
    /// The GPU when there is one, else the CPU (saying why).
    Auto,
    /// The CPU, on all cores unless -T says otherwise.
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
    one_output_name("decompress", &inputs, output.is_some() || stdout)?;
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
    let out = OutFile::open_like(&out_path, force, like_input(input))?;
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
    let (bytes, _) = read_input_checked(input, true)?;
    let a = Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
    let t = Instant::now();
    let (data, used) =
        decode_with(&a, device).with_context(|| format!("decoding {}", input.display()))?;
    Ok((data, used, t.elapsed().as_secs_f64()))
}

/// Whether the note that there is no GPU (and the CPU decodes) has been printed.
static NO_GPU_NOTE: std::sync::Once = std::sync::Once::new();

/// Decodes on the requested device; returns the data and the device's description.
fn decode_with(a: &Archive<'_>, device: Device) -> Result<(Vec<u8>, String)> {
    if device != Device::Cpu {
        if let Some(done) = decode_on_gpu(a, device)? {
            return Ok(done);
        }
    }
    let mut out = decode::zeroed_output(a.header().original_size)?;
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

/// The GPU half of [`decode_with`]: the data and the device's description, or `None` where
/// the CPU decodes instead (under `--device auto`: no GPU, or an archive the GPU decoder
/// cannot take).
#[cfg(feature = "gpu")]
fn decode_on_gpu(a: &Archive<'_>, device: Device) -> Result<Option<(Vec<u8>, String)>> {
    use aceapex::gpu;
    match gpu::Gpu::open() {
        Ok(g) => {
            // independent blocks: the dense full pipe; a cross-block window: the wavefront
            let how = if a.cross_block() {
                "wavefront"
            } else {
                "dense"
            };
            match gpu::decoder::decompress(&g, a) {
                Ok(data) => return Ok(Some((data, format!("GPU ({}, {how} decoder)", g.name())))),
                Err(e @ gpu::GpuError::Unsupported(_)) if device == Device::Auto => {
                    note(format_args!("aceapex: {e}; decoding on the CPU"))
                }
                Err(e) => return Err(e).context("GPU decode"),
            }
        }
        Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
        // once per run, not once per archive of `decompress A B C`
        Err(e) => NO_GPU_NOTE.call_once(|| note(format_args!("aceapex: {e}; decoding on the CPU"))),
    }
    Ok(None)
}

/// [`decode_with`] in a build without the `gpu` feature: the CPU decodes.
#[cfg(not(feature = "gpu"))]
fn decode_on_gpu(_: &Archive<'_>, device: Device) -> Result<Option<(Vec<u8>, String)>> {
    if device == Device::Gpu {
        bail!("--device gpu: this aceapex was built without the `gpu` feature");
    }
    NO_GPU_NOTE.call_once(|| note("aceapex: built without the `gpu` feature; decoding on the CPU"));
    Ok(None)
}
