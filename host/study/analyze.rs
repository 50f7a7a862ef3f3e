//! Per-block and whole-archive measures of the match layer (`aceapex analyze`).
//!
//! Every block's five streams are entropy-decoded with the reference decoders
//! ([`crate::decode::decode_streams`]) and walked with `aceapex_device::lz::walk_block`, which
//! checks every rule of FORMAT.md §4.4-§4.5; a [`BlockSink`] records each literal run and
//! match. The data bytes are never reconstructed: the measures depend on the commands only
//! (the block checksums are not checked; `decompress` does that).
//!
//! Definitions (docs/STUDY.md gives the reasons):
//! - **level** of a match: FORMAT.md §3.1 (0 when every byte of the first `min(len, dist)`
//!   bytes of its source is a literal, else one more than the highest level among the
//!   matches that wrote them); across blocks when the archive's window crosses blocks.
//! - **waves**: the launches a decoder that copies one dependency level at a time needs:
//!   the highest level + 1 (0 without matches).
//! - **critical path**: over the levels, the sum of the longest match at each level (bytes):
//!   the copy work no level-by-level decoder can overlap.
//! - **chained command**: a repeat match (its distance comes from the history of the
//!   commands before it, FORMAT.md §4.3) or a command whose length is extended by a varint
//!   of the length stream (long match `0xFE`, escaped repeat; its stream position depends on
//!   every earlier such command). A **dependency-free run** is a maximal run of consecutive
//!   other commands (literal runs and short new matches) inside a block; empty runs are not
//!   counted.
//! - **write footprint**: per match, the 32-byte sectors and 128-byte lines of the output
//!   (aligned from original byte 0) that its `len` bytes touch, as a copy stage that writes
//!   each match on its own does.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::device::format::{
    CMD_MATCH_LONG, CMD_REPEAT, CMD_RESET, REPEAT_LEN_ESCAPE, STREAM_COUNT,
};
use crate::device::lz::{walk_block, BlockFrame, BlockSink, BlockStreams};
use crate::device::status::Status;
use crate::error::DecodeError;
use crate::format::Archive;

/// Bytes of a memory sector (the unit of a GPU's L2 and DRAM transactions).
pub const SECTOR_BYTES: u64 = 32;
/// Bytes of a cache line (four sectors).
pub const LINE_BYTES: u64 = 128;

/// A multiset of `u32` values (how often each value occurs), exact and mergeable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueCounts(pub BTreeMap<u32, u64>);

impl ValueCounts {
    /// Adds one occurrence of `v`.
    pub fn add(&mut self, v: u32) {
        *self.0.entry(v).or_insert(0) += 1;
    }

    /// Adds every occurrence of `other`.
    pub fn merge(&mut self, other: &ValueCounts) {
        for (&v, &n) in &other.0 {
            *self.0.entry(v).or_insert(0) += n;
        }
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.0.values().sum()
    }

    /// The nearest-rank percentile `p` (0 < p <= 100): the smallest value such that at least
    /// `p` per cent of the values are at most it; 0 for an empty set.
    pub fn percentile(&self, p: f64) -> u32 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (&v, &c) in &self.0 {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        *self.0.keys().next_back().unwrap_or(&0)
    }

    /// Occurrences of values below `limit`.
    pub fn below(&self, limit: u32) -> u64 {
        self.0.range(..limit).map(|(_, &n)| n).sum()
    }

    /// The summary of [`Summary`].
    pub fn summary(&self) -> Summary {
        let count = self.count();
        let sum: f64 = self.0.iter().map(|(&v, &n)| v as f64 * n as f64).sum();
        // bucket i: values in [2^i, 2^(i+1)), bucket 0 also holding 0
        let mut log2 = Vec::new();
        for (&v, &n) in &self.0 {
            let b = (31 - v.max(1).leading_zeros()) as usize;
            if log2.len() <= b {
                log2.resize(b + 1, 0);
            }
            log2[b] += n;
        }
        Summary {
            count,
            mean: if count == 0 { 0.0 } else { sum / count as f64 },
            p50: self.percentile(50.0),
            p90: self.percentile(90.0),
            p99: self.percentile(99.0),
            max: self.0.keys().next_back().copied().unwrap_or(0),
            log2_histogram: log2,
        }
    }
}

/// Count, mean, nearest-rank percentiles and maximum of a set of values, with a histogram
/// by powers of two (`log2_histogram[i]` counts the values in `[2^i, 2^(i+1))`, index 0 also
/// counting zeros). All 0 for an empty set.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "cli", derive(serde::Serialize))]
pub struct Summary {
    /// Number of values.
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: u32,
    /// 90th percentile.
    pub p90: u32,
    /// 99th percentile.
    pub p99: u32,
    /// Largest value.
    pub max: u32,
    /// Values per power-of-two bucket.
    pub log2_histogram: Vec<u64>,
}

/// The measures of one block, or of a whole archive ([`Analysis::total`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockAnalysis {
    /// Block index (the first block for a total).
    pub block: u32,
    /// Original bytes.
    pub bytes: u64,
    /// Literal-run and match commands (resets not counted).
    pub commands: u64,
    /// Literal-run commands.
    pub literal_runs: u64,
    /// Bytes written by literal runs.
    pub literal_bytes: u64,
    /// Matches.
    pub matches: u64,
    /// Bytes written by matches.
    pub match_bytes: u64,
    /// Matches coded as repeats of a history slot (FORMAT.md §4.3).
    pub repeat_matches: u64,
    /// Commands with a length-stream varint (long matches, escaped repeats).
    pub extended_lengths: u64,
    /// Commands that are either (counted once).
    pub chained: u64,
    /// Lengths (in commands) of the dependency-free runs.
    pub free_runs: ValueCounts,
    /// Matches per dependency level (index = level).
    pub depth_histogram: Vec<u64>,
    /// Longest match at each dependency level (index = level), bytes.
    pub longest_per_level: Vec<u32>,
    /// Match lengths.
    pub lengths: ValueCounts,
    /// Match distances.
    pub distances: ValueCounts,
    /// Periods (distances) of the self-overlapping matches (distance < length).
    pub periods: ValueCounts,
    /// 32-byte output sectors the matches touch, each match counted on its own.
    pub sectors: u64,
    /// 128-byte output lines the matches touch, each match counted on its own.
    pub lines: u64,
}

impl BlockAnalysis {
    /// The highest dependency level of a match (0 without matches).
    pub fn max_depth(&self) -> u32 {
        self.depth_histogram.len().saturating_sub(1) as u32
    }

    /// Dependency levels a level-by-level decoder copies in turn: the highest level + 1, 0
    /// without matches.
    pub fn waves(&self) -> u32 {
        self.depth_histogram.len() as u32
    }

    /// Sum over the levels of the longest match at each, bytes.
    pub fn critical_path(&self) -> u64 {
        self.longest_per_level.iter().map(|&l| l as u64).sum()
    }

    /// Chained commands over all commands (0 without commands).
    pub fn chained_share(&self) -> f64 {
        self.chained as f64 / self.commands.max(1) as f64
    }

    /// Match bytes over the bytes of the sectors the matches touch (0 without matches).
    pub fn sector_efficiency(&self) -> f64 {
        self.match_bytes as f64 / (self.sectors * SECTOR_BYTES).max(1) as f64
    }

    /// Match bytes over the bytes of the lines the matches touch (0 without matches).
    pub fn line_efficiency(&self) -> f64 {
        self.match_bytes as f64 / (self.lines * LINE_BYTES).max(1) as f64
    }

    /// Adds block `o`'s measures to a total: counts add, per-level histograms add, the
    /// longest match per level is the longer of the two (a level-by-level decoder runs a
    /// level of every block in one wave).
    pub fn merge(&mut self, o: &BlockAnalysis) {
        self.bytes += o.bytes;
        self.commands += o.commands;
        self.literal_runs += o.literal_runs;
        self.literal_bytes += o.literal_bytes;
        self.matches += o.matches;
        self.match_bytes += o.match_bytes;
        self.repeat_matches += o.repeat_matches;
        self.extended_lengths += o.extended_lengths;
        self.chained += o.chained;
        self.free_runs.merge(&o.free_runs);
        if self.depth_histogram.len() < o.depth_histogram.len() {
            self.depth_histogram.resize(o.depth_histogram.len(), 0);
            self.longest_per_level.resize(o.depth_histogram.len(), 0);
        }
        for (l, &n) in o.depth_histogram.iter().enumerate() {
            self.depth_histogram[l] += n;
            self.longest_per_level[l] = self.longest_per_level[l].max(o.longest_per_level[l]);
        }
        self.lengths.merge(&o.lengths);
        self.distances.merge(&o.distances);
        self.periods.merge(&o.periods);
        self.sectors += o.sectors;
        self.lines += o.lines;
    }
}

/// An archive's measures: the total and, when asked for, every block's.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// The whole archive ([`BlockAnalysis::merge`] of its blocks).
    pub total: BlockAnalysis,
    /// Per block, in index order (empty unless asked for).
    pub blocks: Vec<BlockAnalysis>,
}

/// Records one block's commands: levels from per-byte dependency values, the command bytes
/// classified alongside (the walk calls the sink once per non-reset command, in order).
struct Recorder<'a> {
    /// Per output byte from `base` on: 0 for a literal, else 1 + the level of the match that
    /// wrote it (saturating).
    vals: &'a mut [u16],
    base: usize,
    commands: &'a [u8],
    cmd_pos: usize,
    /// Non-chained commands since the last chained one.
    run: u32,
    out: BlockAnalysis,
}

impl Recorder<'_> {
    /// The next non-reset command byte (the one the walk just handed over).
    fn next_command(&mut self) -> u8 {
        while self.commands.get(self.cmd_pos) == Some(&CMD_RESET) {
            self.cmd_pos += 1;
        }
        let c = self.commands.get(self.cmd_pos).copied().unwrap_or(0);
        self.cmd_pos += 1;
        c
    }

    fn end_run(&mut self) {
        if self.run > 0 {
            self.out.free_runs.add(self.run);
        }
        self.run = 0;
    }
}

impl BlockSink for Recorder<'_> {
    fn literals(&mut self, cursor: usize, _lit_pos: usize, n: usize) -> Result<(), Status> {
        self.next_command();
        self.run += 1;
        self.out.commands += 1;
        self.out.literal_runs += 1;
        self.out.literal_bytes += n as u64;
        self.vals[cursor - self.base..cursor - self.base + n].fill(0);
        Ok(())
    }

    fn copy(&mut self, cursor: usize, src: usize, dist: u32, len: usize) -> Result<(), Status> {
        let c = self.next_command();
        let repeat = (CMD_REPEAT..CMD_REPEAT + 0x40).contains(&c);
        let extended = c == CMD_MATCH_LONG || (repeat && (c & 0x0F) as u32 == REPEAT_LEN_ESCAPE);
        let o = &mut self.out;
        o.commands += 1;
        o.matches += 1;
        o.match_bytes += len as u64;
        o.repeat_matches += repeat as u64;
        o.extended_lengths += extended as u64;
        if repeat || extended {
            o.chained += 1;
            self.end_run();
        } else {
            self.run += 1;
        }
        let o = &mut self.out;
        o.lengths.add(len as u32);
        o.distances.add(dist);
        if (dist as usize) < len {
            o.periods.add(dist);
        }
        let (s, d) = (src - self.base, cursor - self.base);
        let span = len.min(dist as usize);
        let level = self.vals[s..s + span].iter().copied().max().unwrap_or(0);
        self.vals[d..d + len].fill(level.saturating_add(1));
        let level = level as usize;
        if o.depth_histogram.len() <= level {
            o.depth_histogram.resize(level + 1, 0);
            o.longest_per_level.resize(level + 1, 0);
        }
        o.depth_histogram[level] += 1;
        o.longest_per_level[level] = o.longest_per_level[level].max(len as u32);
        let (first, last) = (cursor as u64, (cursor + len - 1) as u64);
        o.sectors += last / SECTOR_BYTES - first / SECTOR_BYTES + 1;
        o.lines += last / LINE_BYTES - first / LINE_BYTES + 1;
        Ok(())
    }
}

fn block_error(a: &Archive<'_>, b: usize, status: Status) -> DecodeError {
    let r = a.block_range(b);
    DecodeError::Block {
        block: b as u32,
        start: r.start,
        end: r.end,
        status,
    }
}

/// Measures block `b`, whose output bytes from `base` on are `vals` (dependency values of
/// the bytes below the block already filled, for cross-block sources); `bufs` is scratch.
/// The cursor positions of the footprint are original-byte positions.
fn analyze_block(
    a: &Archive<'_>,
    b: usize,
    vals: &mut [u16],
    base: usize,
    bufs: &mut [Vec<u8>; STREAM_COUNT],
) -> Result<BlockAnalysis, DecodeError> {
    crate::decode::decode_streams(a, b, bufs).map_err(|s| block_error(a, b, s))?;
    let mut streams = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
    let r = a.block_range(b);
    let bs = a.header.block_size as u64;
    // a line layout (FORMAT.md §4.6): the match layer walks the block's kept bytes, from its
    // start
    let (lines, commands) = crate::device::lines::split_commands(
        streams.commands,
        (r.end - r.start) as u32,
        a.line_layouts,
    )
    .map_err(|s| block_error(a, b, s))?;
    streams.commands = commands;
    let frame = BlockFrame {
        dst_start: r.start as usize,
        dst_end: (r.end - lines.removed as u64) as usize,
        src_floor: (a.entries[b].lowest_source_block as u64 * bs) as usize,
        window: a.header.window,
        match_base: a.header.match_base(),
    };
    debug_assert!(frame.src_floor >= base && frame.dst_end - base <= vals.len());
    let mut rec = Recorder {
        vals,
        base,
        commands: streams.commands,
        cmd_pos: 0,
        run: 0,
        out: BlockAnalysis {
            block: b as u32,
            bytes: r.end - r.start,
            ..Default::default()
        },
    };
    walk_block(streams, &frame, &mut rec).map_err(|s| block_error(a, b, s))?;
    rec.end_run();
    Ok(rec.out)
}

/// Measures every block of `a` (FORMAT.md §4 rules checked on the way; the first block that
/// breaks one is the error) and their total; `keep_blocks` keeps each block's measures.
///
/// Independent blocks are measured in parallel on the current rayon pool, with memory of two
/// bytes per byte of a block per thread; an archive whose window crosses blocks is measured in
/// order with two bytes per original byte (levels then run across blocks).
///
/// Errors: [`DecodeError::Block`] naming the block and the rule it broke;
/// [`DecodeError::Alloc`] when the dependency values of a cross-block archive cannot be
/// allocated.
pub fn analyze(a: &Archive<'_>, keep_blocks: bool) -> Result<Analysis, DecodeError> {
    let n = a.block_count();
    let blocks: Vec<BlockAnalysis> = if !a.cross_block() {
        let bs = a.header.block_size as usize;
        (0..n)
            .into_par_iter()
            .map_init(
                || (vec![0u16; bs], <[Vec<u8>; STREAM_COUNT]>::default()),
                |(vals, bufs), b| analyze_block(a, b, vals, b * bs, bufs),
            )
            .collect::<Result<_, _>>()?
    } else {
        let size = a.header.original_size;
        let len = usize::try_from(size).map_err(|_| DecodeError::Alloc { bytes: size })?;
        let mut vals = Vec::new();
        vals.try_reserve_exact(len)
            .map_err(|_| DecodeError::Alloc { bytes: 2 * size })?;
        vals.resize(len, 0u16);
        let mut bufs = Default::default();
        (0..n)
            .map(|b| analyze_block(a, b, &mut vals, 0, &mut bufs))
            .collect::<Result<_, _>>()?
    };
    let mut total = BlockAnalysis::default();
    for m in &blocks {
        total.merge(m);
    }
    Ok(Analysis {
        total,
        blocks: if keep_blocks { blocks } else { Vec::new() },
    })
}
