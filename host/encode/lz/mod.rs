//! Encoder match layer: match finding and parsing into the five streams (FORMAT.md §4).
//!
//! [`parse_segment`] turns a range of the input into [`BlockParse`]s, one per block: the
//! literal, length, offset, command and offset-tail streams that `aceapex_device::lz::decode_block`
//! decodes, plus the block's dependency depth and lowest source position.
//!
//! The finder is a hash chain over the segment (ring-buffered to the window), with repeat
//! distances tried first, lazy evaluation and a bit-cost model: a match is taken only when
//! its estimated coded size is below that of the literals it replaces (literal costs come
//! from the segment's order-0 statistics, so DNA and text get different thresholds).

mod cost;
mod finder;
mod fixed_point_cap;
mod parser;

#[cfg(test)]
mod tests;

use aceapex_device::format::{DEFAULT_BLOCK_SIZE, STREAM_COUNT};
use aceapex_device::lz::BlockStreams;

#[doc(hidden)]
pub use cost::CostTuning;
#[doc(hidden)]
pub use fixed_point_cap::{cap_to_fixed_point, DepthCapMethod};

/// Default level.
pub const DEFAULT_LEVEL: u32 = 5;
/// Lowest level (fastest).
pub const MIN_LEVEL: u32 = 1;
/// Highest level (strongest).
pub const MAX_LEVEL: u32 = 9;

/// Parameters of the match parser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseParams {
    /// 1..=9, speed/ratio trade-off (clamped into that range); default [`DEFAULT_LEVEL`].
    pub level: u32,
    /// Shortest match ever emitted, >= 4 (smaller values are treated as 4); below 6 it is
    /// also the match base of the codes ([`match_base`]).
    pub min_match: u32,
    /// Largest distance allowed.
    pub window: u32,
    /// `false` ("--no-rep"): repeat candidates are sent as explicit new matches.
    pub repeat_codes: bool,
    /// 0 = none; else every match's dependency level is `< depth_cap`.
    pub depth_cap: u32,
    /// How `depth_cap` is enforced: the parser's clamp (the command line's) or the ACEAPEX
    /// paper's fixed point of forced literals (for `aceapex reproduce`).
    pub depth_cap_method: DepthCapMethod,
    /// The match streams will be stored raw (`Settings::raw_match_streams`): the lazy
    /// parser prices matches with [`CostTuning::raw_match_streams`] (fewer, longer matches).
    pub raw_match_streams: bool,
}

impl Default for ParseParams {
    fn default() -> Self {
        ParseParams {
            level: DEFAULT_LEVEL,
            min_match: 6,
            window: DEFAULT_BLOCK_SIZE,
            repeat_codes: true,
            depth_cap: 0,
            depth_cap_method: DepthCapMethod::Clamp,
            raw_match_streams: false,
        }
    }
}

impl ParseParams {
    /// Default parameters at `level`.
    pub fn with_level(level: u32) -> Self {
        ParseParams {
            level,
            ..Default::default()
        }
    }
}

/// The match layer of one block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockParse {
    /// Literal bytes.
    pub literals: Vec<u8>,
    /// Length varints.
    pub lengths: Vec<u8>,
    /// First bytes of the distance varints.
    pub offsets: Vec<u8>,
    /// Command bytes (starting with one reset).
    pub commands: Vec<u8>,
    /// Remaining bytes of the distance varints (FORMAT.md §4.2).
    pub offset_tails: Vec<u8>,
    /// Largest dependency level among the block's matches (0 if none).
    pub max_depth: u32,
    /// Lowest absolute position any match of the block reads (block start if no match).
    pub lowest_source: usize,
    /// Number of matches.
    pub matches: u32,
}

impl BlockParse {
    /// The streams in the decoder's form.
    pub fn streams(&self) -> BlockStreams<'_> {
        BlockStreams {
            literals: &self.literals,
            lengths: &self.lengths,
            offsets: &self.offsets,
            commands: &self.commands,
            offset_tails: &self.offset_tails,
        }
    }

    /// The streams in `STREAM_*` order.
    pub fn stream_slices(&self) -> [&[u8]; STREAM_COUNT] {
        [
            &self.literals,
            &self.lengths,
            &self.offsets,
            &self.commands,
            &self.offset_tails,
        ]
    }
}

/// Splits a stream of LEB128 distance varints (the offset stream of format version 1 and of
/// the reference ACEAPEX grammar) into the offset and offset-tail streams of FORMAT.md §4.2:
/// each varint's first byte to the first, the bytes after it to the second. Byte by byte, so
/// a malformed stream splits too (a byte after one with bit 7 set goes to the tails).
/// Inverse of [`join_offsets`] on well-formed input.
pub fn split_offsets(leb: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (mut heads, mut tails) = (Vec::new(), Vec::new());
    let mut in_tail = false;
    for &b in leb {
        if in_tail {
            tails.push(b);
        } else {
            heads.push(b);
        }
        in_tail = b & 0x80 != 0;
    }
    (heads, tails)
}

/// Joins the offset and offset-tail streams (FORMAT.md §4.2) back into one LEB128 stream:
/// each first byte, then, when its bit 7 is set, its tail up to the first byte with bit 7
/// clear. `None` when they do not pair up (a tail missing or cut off, or tail bytes left).
pub fn join_offsets(heads: &[u8], tails: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(heads.len() + tails.len());
    let mut tp = 0;
    for &h in heads {
        out.push(h);
        if h & 0x80 != 0 {
            loop {
                let &t = tails.get(tp)?;
                tp += 1;
                out.push(t);
                if t & 0x80 == 0 {
                    break;
                }
            }
        }
    }
    (tp == tails.len()).then_some(out)
}

/// The match base of an archive whose encoder's minimum match is `min_match` (FORMAT.md §2):
/// `min_match` clamped to 4..=6.
pub fn match_base(min_match: u32) -> u32 {
    use aceapex_device::format::{MATCH_BASE, MIN_MATCH_BASE};
    min_match.clamp(MIN_MATCH_BASE, MATCH_BASE)
}

/// The command byte of a match and the length-stream varint it needs, if any (FORMAT.md
/// §4.1): a repeat of history slot `slot` (`Some`), else a new match, of `len >= base`
/// bytes at match base `base`. One definition for the parser's emission and the stream
/// prices of the optimal parser.
fn match_code(slot: Option<usize>, len: u32, base: u32) -> (u8, Option<u32>) {
    use aceapex_device::format::{
        CMD_MATCH_LONG, CMD_MATCH_SHORT, CMD_REPEAT, REPEAT_LEN_ESCAPE, SHORT_MATCH_CODES,
    };
    debug_assert!(len >= base);
    let l = len - base;
    match slot {
        Some(s) => {
            let c = CMD_REPEAT | (s as u8) << 4;
            if l < REPEAT_LEN_ESCAPE {
                (c | l as u8, None)
            } else {
                (c | REPEAT_LEN_ESCAPE as u8, Some(l - REPEAT_LEN_ESCAPE))
            }
        }
        None if l < SHORT_MATCH_CODES => (CMD_MATCH_SHORT + l as u8, None),
        None => (CMD_MATCH_LONG, Some(l)),
    }
}

/// Parses `data[seg]` as consecutive blocks of `block_size` bytes (the last may be shorter),
/// in order.
///
/// Match sources never lie before `seg.start` and never farther than `params.window`; if
/// `params.window <= block_size`, sources never lie before the match's own block start
/// (blocks then decode independently). Deterministic. An empty segment gives no block.
///
/// # Panics
/// If `seg` is not inside `data`, `block_size == 0`, or the segment is 4 GiB or larger.
pub fn parse_segment(
    data: &[u8],
    seg: std::ops::Range<usize>,
    block_size: usize,
    params: &ParseParams,
) -> Vec<BlockParse> {
    parse_segment_progress(data, seg, block_size, params, &|_| {})
}

/// [`parse_segment`] that calls `progress` with each block's length once it is parsed.
pub fn parse_segment_progress(
    data: &[u8],
    seg: std::ops::Range<usize>,
    block_size: usize,
    params: &ParseParams,
    progress: &dyn Fn(u64),
) -> Vec<BlockParse> {
    parse_with(
        data,
        seg,
        block_size,
        params,
        progress,
        &mut GroupStats::default(),
    )
}

/// Stream statistics of the blocks parsed so far in one table group. Levels >= 7 price
/// their candidate parses of a block with them, because the group's blocks share their
/// rANS tables (FORMAT.md §5.1); other levels ignore them.
#[derive(Default)]
pub struct GroupStats(parser::Chooser);

/// [`parse_segment`] for a segment inside a table group whose earlier blocks were parsed
/// with the same `stats` (in block order: the result depends on that order, not on threads).
pub fn parse_segment_in_group(
    data: &[u8],
    seg: std::ops::Range<usize>,
    block_size: usize,
    params: &ParseParams,
    stats: &mut GroupStats,
) -> Vec<BlockParse> {
    parse_with(data, seg, block_size, params, &|_| {}, stats)
}

/// The parser with the cost model of `params` (the default, or that of raw match streams),
/// `progress` and `stats`.
fn parse_with(
    data: &[u8],
    seg: std::ops::Range<usize>,
    block_size: usize,
    params: &ParseParams,
    progress: &dyn Fn(u64),
    stats: &mut GroupStats,
) -> Vec<BlockParse> {
    let tuning = if params.raw_match_streams {
        CostTuning::raw_match_streams()
    } else {
        CostTuning::default()
    };
    if params.depth_cap > 0 && params.depth_cap_method == DepthCapMethod::FixedPoint {
        // the paper's method: an uncapped parse, then forced literals to the fixed point
        let uncapped = ParseParams {
            depth_cap: 0,
            ..params.clone()
        };
        let blocks = parser::parse(
            data,
            seg.clone(),
            block_size,
            &uncapped,
            &tuning,
            progress,
            &mut stats.0,
        );
        return cap_to_fixed_point(data, seg, block_size, params, blocks).0;
    }
    parser::parse(
        data,
        seg,
        block_size,
        params,
        &tuning,
        progress,
        &mut stats.0,
    )
}

/// [`parse_segment`] with explicit cost-model constants (for tuning experiments).
#[doc(hidden)]
pub fn parse_segment_tuned(
    data: &[u8],
    seg: std::ops::Range<usize>,
    block_size: usize,
    params: &ParseParams,
    tuning: &CostTuning,
) -> Vec<BlockParse> {
    parser::parse(
        data,
        seg,
        block_size,
        params,
        tuning,
        &|_| {},
        &mut GroupStats::default().0,
    )
}
