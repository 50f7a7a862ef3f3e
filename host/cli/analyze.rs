//! `aceapex analyze`: what an archive's match layer asks of a decoder (dependency levels,
//! chained commands, matches, periods, write footprint), per block and in total.

use crate::io::read_input;
use aceapex::format::Archive;
use aceapex::study::{analyze, Analysis, BlockAnalysis, Summary};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

pub const ANALYZE_HELP: &str = "\
Measures, from the decoded command streams (every rule of FORMAT.md §4 checked; the block
checksums are not: 'decompress' verifies them), per block (--blocks) and in total:

  depth      matches per dependency level (FORMAT.md §3.1: 0 when a match reads only literal
             bytes, else one more than the highest level among the matches that wrote what it
             reads; across blocks with a cross-block window) and the highest level;
  waves      the rounds a decoder that copies one level at a time needs (highest level + 1);
  critical   the sum over levels of the longest match at each level (bytes): copy work that
             no level-by-level decoder overlaps (in total: the longest over all blocks);
  chained    commands whose parse depends on earlier commands beyond their own bytes: repeat
             matches (distance from the history) and commands with a length varint (long
             matches, escaped repeats); their share, and the lengths (in commands) of the
             runs of other commands between them (dependency-free runs, within a block);
  matches    length and distance distributions (count, mean, P50, P90, P99, max);
  periods    self-overlapping matches (distance < length, a periodic fill) and their periods;
  writes     the copy stage's write efficiency: match bytes over the bytes of the 32-byte
             sectors and of the 128-byte lines their writes touch, each match written alone.

JSON (--json): {\"archive\", \"original_size\", \"block_size\", \"block_count\", \"cross_block\",
\"repeat_codes\", \"depth_cap\", \"total\": BLOCK, \"blocks\": [BLOCK...] (with --blocks)}, each
BLOCK with block, bytes, commands, literal_runs, literal_bytes, matches, match_bytes,
repeat_matches, extended_lengths, chained, chained_share, free_runs, max_depth, waves,
depth_histogram, longest_per_level, critical_path, match_lengths, matches_below_32,
distances, overlapping, periods, sectors, lines, sector_efficiency, line_efficiency; the
distributions as {count, mean, p50, p90, p99, max, log2_histogram} (bucket i: values in
[2^i, 2^(i+1))). See docs/STUDY.md.";

/// The arguments of `aceapex analyze` (help text on [`crate::Cmd::Analyze`]).
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Archive, or '-' for standard input.
    pub input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also report every block (one line each, or a "blocks" array in JSON).
    #[arg(long)]
    pub blocks: bool,
}

/// One block's measures (or the total) in the JSON report.
#[derive(serde::Serialize)]
pub struct BlockJson {
    pub block: u32,
    pub bytes: u64,
    pub commands: u64,
    pub literal_runs: u64,
    pub literal_bytes: u64,
    pub matches: u64,
    pub match_bytes: u64,
    pub repeat_matches: u64,
    pub extended_lengths: u64,
    pub chained: u64,
    pub chained_share: f64,
    pub free_runs: Summary,
    pub max_depth: u32,
    pub waves: u32,
    pub depth_histogram: Vec<u64>,
    pub longest_per_level: Vec<u32>,
    pub critical_path: u64,
    pub match_lengths: Summary,
    pub matches_below_32: u64,
    pub distances: Summary,
    pub overlapping: u64,
    pub periods: Summary,
    pub sectors: u64,
    pub lines: u64,
    pub sector_efficiency: f64,
    pub line_efficiency: f64,
}

impl From<&BlockAnalysis> for BlockJson {
    fn from(m: &BlockAnalysis) -> Self {
        BlockJson {
            block: m.block,
            bytes: m.bytes,
            commands: m.commands,
            literal_runs: m.literal_runs,
            literal_bytes: m.literal_bytes,
            matches: m.matches,
            match_bytes: m.match_bytes,
            repeat_matches: m.repeat_matches,
            extended_lengths: m.extended_lengths,
            chained: m.chained,
            chained_share: round6(m.chained_share()),
            free_runs: m.free_runs.summary(),
            max_depth: m.max_depth(),
            waves: m.waves(),
            depth_histogram: m.depth_histogram.clone(),
            longest_per_level: m.longest_per_level.clone(),
            critical_path: m.critical_path(),
            match_lengths: m.lengths.summary(),
            matches_below_32: m.lengths.below(32),
            distances: m.distances.summary(),
            overlapping: m.periods.count(),
            periods: m.periods.summary(),
            sectors: m.sectors,
            lines: m.lines,
            sector_efficiency: round6(m.sector_efficiency()),
            line_efficiency: round6(m.line_efficiency()),
        }
    }
}

/// The whole JSON report.
#[derive(serde::Serialize)]
pub struct AnalyzeJson {
    pub archive: String,
    pub original_size: u64,
    pub block_size: u32,
    pub block_count: u32,
    pub cross_block: bool,
    pub repeat_codes: bool,
    pub depth_cap: u32,
    pub total: BlockJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<BlockJson>>,
}

/// `x` to 6 decimals.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The JSON report of `analysis` of archive `a` named `name`.
pub fn report(name: &str, a: &Archive<'_>, analysis: &Analysis, blocks: bool) -> AnalyzeJson {
    let h = a.header();
    AnalyzeJson {
        archive: name.to_string(),
        original_size: h.original_size,
        block_size: h.block_size,
        block_count: h.block_count,
        cross_block: a.cross_block(),
        repeat_codes: h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0,
        depth_cap: h.depth_cap,
        total: BlockJson::from(&analysis.total),
        blocks: blocks.then(|| analysis.blocks.iter().map(BlockJson::from).collect()),
    }
}

/// Runs `aceapex analyze`.
pub fn run(args: AnalyzeArgs) -> Result<()> {
    let AnalyzeArgs {
        input,
        json,
        blocks,
    } = args;
    let bytes = read_input(&input, true)?;
    let name = input.display().to_string();
    let a = Archive::parse(&bytes).with_context(|| format!("reading {name}"))?;
    let analysis = analyze(&a, blocks).with_context(|| format!("analysing {name}"))?;
    let r = report(&name, &a, &analysis, blocks);
    let text = if json {
        // plain numbers, strings and arrays: serializing cannot fail
        serde_json::to_string(&r).expect("analyze JSON") + "\n"
    } else {
        text_report(&r)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to standard output")?;
    Ok(())
}

fn dist(s: &Summary) -> String {
    format!(
        "n {} mean {:.1} P50 {} P90 {} P99 {} max {}",
        s.count, s.mean, s.p50, s.p90, s.p99, s.max
    )
}

/// The text report: the total as labelled lines, then one line per block.
fn text_report(r: &AnalyzeJson) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let t = &r.total;
    let pct = |x: f64| 100.0 * x;
    // writing to a String cannot fail
    let _ = writeln!(
        s,
        "archive          {} ({} bytes, {} blocks of {}{})",
        r.archive,
        r.original_size,
        r.block_count,
        r.block_size,
        if r.cross_block { ", cross-block" } else { "" }
    );
    let _ = writeln!(
        s,
        "commands         {} ({} literal runs of {} bytes, {} matches of {} bytes)",
        t.commands, t.literal_runs, t.literal_bytes, t.matches, t.match_bytes
    );
    let _ = writeln!(
        s,
        "depth            max {}, waves {}, critical path {} bytes; matches per level {:?}",
        t.max_depth, t.waves, t.critical_path, t.depth_histogram
    );
    let _ = writeln!(
        s,
        "chained          {} ({:.2} %: {} repeats, {} length varints); free runs {}",
        t.chained,
        pct(t.chained_share),
        t.repeat_matches,
        t.extended_lengths,
        dist(&t.free_runs)
    );
    let _ = writeln!(
        s,
        "match lengths    {}; {:.2} % below 32",
        dist(&t.match_lengths),
        pct(t.matches_below_32 as f64 / t.matches.max(1) as f64)
    );
    let _ = writeln!(s, "distances        {}", dist(&t.distances));
    let _ = writeln!(s, "periods          {}", dist(&t.periods));
    let _ = writeln!(
        s,
        "writes           {:.2} % of 32-byte sectors ({}), {:.2} % of 128-byte lines ({})",
        pct(t.sector_efficiency),
        t.sectors,
        pct(t.line_efficiency),
        t.lines
    );
    if let Some(blocks) = &r.blocks {
        let _ = writeln!(
            s,
            "block   depth waves critical chained%  free-P50 len-P50 overlap period-P50 sector%"
        );
        for b in blocks {
            let _ = writeln!(
                s,
                "{:<7} {:>5} {:>5} {:>8} {:>8.2} {:>9} {:>7} {:>7} {:>10} {:>7.2}",
                b.block,
                b.max_depth,
                b.waves,
                b.critical_path,
                pct(b.chained_share),
                b.free_runs.p50,
                b.match_lengths.p50,
                b.overlapping,
                b.periods.p50,
                pct(b.sector_efficiency)
            );
        }
    }
    s
}
