//! `aceapex extract`: one byte range of the original, decoding only the blocks it needs.

use crate::args::parse_size;
use crate::io::{check_input, check_not_same, read_input, OutFile};
use aceapex::decode;
use aceapex::format::Archive;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// The arguments of `aceapex extract` (help text on [`crate::Cmd::Extract`]).
#[derive(clap::Args)]
pub struct ExtractArgs {
    /// Archive, or '-' for standard input.
    pub input: PathBuf,
    /// First byte of the range (0-based, in the original data).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub offset: u64,
    /// Bytes to restore [default: to the end of the original data].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub length: Option<u64>,
    /// Output file [default: standard output].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// Runs `aceapex extract`.
pub fn run(args: ExtractArgs) -> Result<()> {
    let ExtractArgs {
        input,
        offset,
        length,
        output,
        force,
    } = args;
    let out_path = output.unwrap_or_else(|| PathBuf::from("-"));
    check_not_same(&input, &out_path)?;
    check_input(&input, true)?;
    let out = OutFile::open(&out_path, force)?;
    let bytes = read_input(&input, true)?;
    let a = Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
    // no --length: the rest of the data (an offset past the end is still an error)
    let size = a.header().original_size;
    if length.is_none() && offset > size {
        bail!("--offset {offset} lies outside the original data ({size} bytes)");
    }
    let length = length.unwrap_or(size - offset);
    let region = decode::extract(&a, offset, length)?;
    out.finish(&region)?;
    Ok(())
}
