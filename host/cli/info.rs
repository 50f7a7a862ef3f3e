//! `aceapex info`: an archive's header, tables and streams, as text or JSON.

use crate::io::read_input;
use crate::output::count;
use aceapex::device::format::STREAM_COUNT;
use aceapex::format::Archive;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

pub const INFO_HELP: &str = "\
The report: the archive's format version (1, FORMAT.md §2), original and archive bytes, the
block table (bytes per block) and the frequency tables, and per stream its decoded and stored
bytes, in how many table groups it has a context pair (two tables, each symbol's picked by a
bit of the symbol its rANS lane decoded before) and, for the literals, in how many groups they
are packed (2-4 literals of an alphabet of at most 16 bytes per rANS symbol). The encoder line
says \"match streams raw\" for an archive whose match streams have no table in any group, as
'compress --target gpu' writes them; any archive stores a slice raw where coding would not
make it smaller. The five streams of every block (FORMAT.md §4): literals (the bytes no match
covers), commands (one byte per literal run, match or repeat match), lengths (the length
extensions of long matches and long repeats), offsets (the first byte of each new match's
distance) and offset tails (the distances' further bytes).

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
the match streams: 'compress --target gpu'), line_layouts (blocks may leave the line ends of
runs of equal lines out of their match layer, FORMAT.md §4.6: 'compress' of FASTA),
wide_blocks (blocks with a wide slice, more than 32 rANS lanes: 'compress --target gpu'),
two_bit_blocks (blocks whose literals are a two-bit slice, FORMAT.md §5.7: 'compress --target
gpu'), depth_cap, streams (literals, lengths, offsets, commands, offset_tails: decoded and stored bytes,
context_groups and packed_groups (packed literal tables, FORMAT.md §5.6) each),
content_checksum, fasta_sequences (the sequences of the FASTA index record, FORMAT.md §3.5, that
'faidx' reads; null without one), max_block_depth, mean_block_depth, and block_depth_histogram, the 8 counts in
the order of block_depth_buckets (\"0\", \"1\", \"2-3\", \"4-7\", \"8-15\", \"16-31\", \"32-63\",
\"64+\").

'info' reads the header, block table and entropy tables (checking their meta checksum) but does
not decode the data: use 'decompress' (or 'extract') to verify the blocks' checksums.";

/// Labels of the block-depth histogram buckets of `info`.
const DEPTH_BUCKETS: [&str; 8] = ["0", "1", "2-3", "4-7", "8-15", "16-31", "32-63", "64+"];

/// The arguments of `aceapex info` (help text on [`crate::Cmd::Info`]).
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Archive, or '-' for standard input.
    pub input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `aceapex info`.
pub fn run(args: InfoArgs) -> Result<()> {
    let InfoArgs { input, json } = args;
    let bytes = read_input(&input, true)?;
    let a = Archive::parse(&bytes).with_context(|| format!("reading {}", input.display()))?;
    let text = info_text(&a, bytes.len() as u64, json);
    // a reader that stops early (`aceapex info X | head -3`) ends the run like one of
    // `decompress -o -` (status 141, no message; `main`), not with a panic
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to standard output")?;
    Ok(())
}

/// `info --json`: one object, its keys in this order (documented in [`INFO_HELP`]).
#[derive(serde::Serialize)]
struct InfoJson {
    format_version: u16,
    original_size: u64,
    archive_size: u64,
    /// Original size over archive size, to 6 decimals.
    ratio: f64,
    block_size: u32,
    block_count: u32,
    /// Bytes of one block-table entry.
    entry_bytes: usize,
    block_table_bytes: u64,
    /// Bytes of the frequency tables.
    table_bytes: u64,
    group_blocks: u32,
    window: u32,
    cross_block: bool,
    level: u32,
    min_match: u32,
    match_base: u32,
    repeat_codes: bool,
    raw_match_streams: bool,
    line_layouts: bool,
    wide_blocks: usize,
    two_bit_blocks: usize,
    depth_cap: u32,
    max_block_depth: u32,
    /// To 3 decimals.
    mean_block_depth: f64,
    block_depth_histogram: [u64; DEPTH_BUCKETS.len()],
    block_depth_buckets: [&'static str; DEPTH_BUCKETS.len()],
    streams: Streams,
    /// XXH3-64 of the original data, 16 hex digits.
    content_checksum: String,
    /// Sequences in the archive's FASTA index record (FORMAT.md §3.5), null without one.
    fasta_sequences: Option<usize>,
}

/// One stream's totals over the archive.
#[derive(serde::Serialize)]
struct StreamJson {
    decoded: u64,
    stored: u64,
    context_groups: usize,
    packed_groups: usize,
}

/// The streams in format order, as one JSON object keyed by stream name.
struct Streams([(String, StreamJson); STREAM_COUNT]);

impl serde::Serialize for Streams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(name, stream)| (name, stream)))
    }
}

/// `x` rounded to `decimals` places (JSON numbers as the report's text shows them).
fn round_to(x: f64, decimals: i32) -> f64 {
    let m = 10f64.powi(decimals);
    (x * m).round() / m
}

/// The `info` report (text or one JSON line), to be written to standard output at once.
fn info_text(a: &Archive<'_>, archive_len: u64, json: bool) -> String {
    // the FASTA index record (FORMAT.md §3.5), checked as `faidx` reads it
    let fasta_sequences = aceapex::read_fasta_index(a).ok().flatten().map(|i| i.len());
    use std::fmt::Write as _;
    let mut s = String::new();
    // a line of the report (writing to a String cannot fail)
    macro_rules! out {
        ($($t:tt)*) => {
            let _ = writeln!(s, $($t)*);
        };
    }
    let h = a.header();
    let block_table_bytes = h.block_count as u64 * a.entry_size() as u64;
    let mut stored = [0u64; STREAM_COUNT];
    let mut decoded = [0u64; STREAM_COUNT];
    let mut depth_max = 0u32;
    let mut depth_sum = 0u64;
    let mut depth_hist = [0u64; DEPTH_BUCKETS.len()];
    for e in a.entries() {
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
    let groups_where = |is: fn(&aceapex::format::StreamTable) -> bool| -> [usize; STREAM_COUNT] {
        std::array::from_fn(|k| {
            a.tables()
                .iter()
                .filter(|g| g[k].as_deref().is_some_and(is))
                .count()
        })
    };
    // context pairs (FORMAT.md §5.4), packed literal tables (§5.6)
    let context_groups = groups_where(aceapex::format::StreamTable::has_context);
    let packed_groups = groups_where(aceapex::format::StreamTable::is_packed);
    // `compress --target gpu`: no group has a table for a match-layer stream, though
    // they hold bytes (the default encoder gives every group a table for a stream it uses)
    let tabled_groups = groups_where(|_| true);
    let raw_match_streams =
        tabled_groups[1..].iter().all(|&n| n == 0) && decoded[1..].iter().any(|&n| n > 0);
    // `compress --target gpu`: blocks with a slice of more than 32 lanes (FORMAT.md §5.4)
    let wide_blocks = a.entries().iter().filter(|e| e.has_wide_slice()).count();
    let two_bit_blocks = (a.entries().iter())
        .filter(|e| {
            use aceapex::device::format::{is_two_bit, STREAM_LITERALS};
            is_two_bit(e.lanes[STREAM_LITERALS])
        })
        .count();
    let ratio = h.original_size as f64 / archive_len.max(1) as f64;
    let mean_depth = depth_sum as f64 / a.entries().len().max(1) as f64;
    let names = aceapex::device::format::STREAM_NAMES;
    if json {
        let streams = Streams(std::array::from_fn(|k| {
            // JSON keys without spaces ("offset_tails"), so `jq .streams.offset_tails` works
            let name = names[k].replace(' ', "_");
            let stream = StreamJson {
                decoded: decoded[k],
                stored: stored[k],
                context_groups: context_groups[k],
                packed_groups: packed_groups[k],
            };
            (name, stream)
        }));
        let report = InfoJson {
            format_version: h.version,
            original_size: h.original_size,
            archive_size: archive_len,
            ratio: round_to(ratio, 6),
            block_size: h.block_size,
            block_count: h.block_count,
            entry_bytes: a.entry_size(),
            block_table_bytes,
            table_bytes: h.table_bytes,
            group_blocks: h.group_blocks,
            window: h.window,
            cross_block: a.cross_block(),
            level: h.level,
            min_match: h.min_match,
            match_base: h.match_base(),
            repeat_codes: h.flags & aceapex::device::format::FLAG_REPEAT_CODES != 0,
            raw_match_streams,
            line_layouts: a.has_line_layouts(),
            wide_blocks,
            two_bit_blocks,
            depth_cap: h.depth_cap,
            max_block_depth: depth_max,
            mean_block_depth: round_to(mean_depth, 3),
            block_depth_histogram: depth_hist,
            block_depth_buckets: DEPTH_BUCKETS,
            streams,
            content_checksum: format!("{:016x}", h.content_checksum),
            fasta_sequences,
        };
        // serializing plain numbers, strings and arrays cannot fail
        let line = serde_json::to_string(&report).expect("info JSON");
        out!("{line}");
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
        "encoder          level {}, min match {} (match base {}), repeat codes {}, depth cap {}{}{}",
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
        },
        if a.has_line_layouts() {
            ", line layouts (line ends left out of the match layer)"
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
    if let Some(n) = fasta_sequences {
        out!(
            "FASTA index      {} ('faidx' reads regions directly)",
            count(n as u64, "sequence")
        );
    } else {
        out!("FASTA index      none");
    }
    s
}
