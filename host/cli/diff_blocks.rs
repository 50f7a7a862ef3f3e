//! `aceapex diff-blocks`: the blocks whose streams differ between two archives of one input.

use crate::io::read_input;
use aceapex::device::format::STREAM_NAMES;
use aceapex::format::Archive;
use aceapex::study::{diff, BlockDiff};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

pub const DIFF_HELP: &str = "\
Compares two archives of the same original (same size and content checksum, same block size;
anything else is refused) block by block, in two ways: the stored slices (the bytes in the data
section; blocks of one table group share entropy tables, so one changed block can change its
neighbours' stored bytes) and the decoded streams (the match layer: literals, lengths, offsets,
commands, offset tails), which is the byte-level test the ACEAPEX paper applies to its depth
cap. Text: the counts and the differing blocks as index ranges. JSON (--json): {\"blocks\",
\"stored_differ\", \"decoded_differ\", \"stored_blocks\": [...], \"decoded_blocks\": [...],
\"streams_decoded_differ\": {stream: blocks}}. Exit status 0 whether or not blocks differ.";

/// The arguments of `aceapex diff-blocks` (help text on [`crate::Cmd::DiffBlocks`]).
#[derive(clap::Args)]
pub struct DiffArgs {
    /// First archive.
    pub a: PathBuf,
    /// Second archive (of the same original).
    pub b: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The JSON report.
#[derive(serde::Serialize)]
pub struct DiffJson {
    pub blocks: usize,
    pub stored_differ: usize,
    pub decoded_differ: usize,
    pub stored_blocks: Vec<u32>,
    pub decoded_blocks: Vec<u32>,
    pub streams_decoded_differ: std::collections::BTreeMap<&'static str, usize>,
}

/// The report of `diffs` over `blocks` blocks.
pub fn report(blocks: usize, diffs: &[BlockDiff]) -> DiffJson {
    let stored: Vec<u32> = (diffs.iter().filter(|d| d.stored_differs()))
        .map(|d| d.block)
        .collect();
    let decoded: Vec<u32> = (diffs.iter().filter(|d| d.decoded_differs()))
        .map(|d| d.block)
        .collect();
    DiffJson {
        blocks,
        stored_differ: stored.len(),
        decoded_differ: decoded.len(),
        stored_blocks: stored,
        decoded_blocks: decoded,
        streams_decoded_differ: (0..STREAM_NAMES.len())
            .map(|k| {
                (
                    STREAM_NAMES[k],
                    diffs.iter().filter(|d| d.decoded[k]).count(),
                )
            })
            .collect(),
    }
}

/// Indices as ranges: "0-3, 7, 9-10".
fn ranges(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".to_string()
    } else {
        out.join(", ")
    }
}

/// Runs `aceapex diff-blocks`.
pub fn run(args: DiffArgs) -> Result<()> {
    let ba = read_input(&args.a, true)?;
    let bb = read_input(&args.b, true)?;
    let a = Archive::parse(&ba).with_context(|| format!("reading {}", args.a.display()))?;
    let b = Archive::parse(&bb).with_context(|| format!("reading {}", args.b.display()))?;
    let diffs = diff(&a, &b)
        .with_context(|| format!("comparing {} with {}", args.a.display(), args.b.display()))?;
    let r = report(a.block_count(), &diffs);
    let text = if args.json {
        serde_json::to_string(&r).expect("diff JSON") + "\n"
    } else {
        format!(
            "blocks           {}\nstreams differ   {} blocks: {}\nstored differ    {} blocks: {}\n",
            r.blocks,
            r.decoded_differ,
            ranges(&r.decoded_blocks),
            r.stored_differ,
            ranges(&r.stored_blocks)
        )
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to standard output")?;
    Ok(())
}
