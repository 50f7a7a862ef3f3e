//! The encoder driver (FORMAT.md §1, §5.1): [`compress`] splits the input into segments and
//! table groups, runs the match finder and parsers ([`lz`]) on each, codes each group's
//! streams ([`entropy`]) under the target's rules, and assembles the container
//! ([`crate::format::write`]).

pub mod entropy;
mod keep_two_bit;
pub mod lines;
pub mod lz;
use keep_two_bit::{keep_two_bit_if_most_blocks, keep_two_bit_if_smaller};
pub mod runs;
pub mod stream;
mod stream_fasta;

use crate::device::format::*;
use crate::format::write::assemble;
pub use crate::options::{Options, OptionsError, Target};
use bytemuck::Zeroable;
use entropy::{FreqTable, Histogram};
use lz::{BlockParse, ParseParams};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use xxhash_rust::xxh3::xxh3_64;

/// Input bytes whose blocks share one set of frequency tables (FORMAT.md §5.1).
pub const GROUP_BYTES: usize = 1 << 20;
/// Largest segment one thread parses in order (sources never cross a segment start).
const MAX_SEGMENT_BYTES: usize = 1 << 30;
/// Input bytes parsed per batch: bounds the encoder's working memory beyond input and output.
const BATCH_BYTES: usize = 64 << 20;

/// How a two-bit literal slice (FORMAT.md §5.7) is chosen for a block's literals.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TwoBit {
    /// Never.
    #[default]
    Off,
    /// Where it is shorter than the slice the literals would otherwise have.
    Smaller,
    /// Where it is at most `1 / TWO_BIT_MAX_LOSS` longer than that slice.
    WithinLoss,
    /// As [`TwoBit::WithinLoss`] where all but at most `1 / TWO_BIT_MAX_LEFT` of the blocks
    /// with literals take one, else nowhere: the GPU decodes the blocks of two-bit slices and
    /// raw match streams without its rANS stage, which then decodes the few others, while a
    /// few two-bit slices put every block on the slower two-bit rANS entry point
    /// (docs/PERFORMANCE.md).
    MostBlocks,
}

/// The encoder's decisions that [`Options`](crate::Options) lowers to
/// ([`Options::settings`](crate::Options::settings)): the format's codings forced on or off.
/// A test hook, not an interface: every combination writes a valid archive, including those
/// `Options` never asks for because they cost bytes or GPU speed (raw match streams at levels
/// 8-9, whose few-lane literal slices gain nothing from them; wide slices beside entropy-coded
/// match streams, which one of the block's two GPU warps then decodes after its wide one).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Settings {
    /// 1 (fastest) to 9 (strongest).
    pub level: u32,
    /// Block size in bytes, a power of two from 4 KiB to 4 MiB.
    pub block_size: u32,
    /// Largest match distance; `None` = the block size (blocks decode independently).
    pub window: Option<u32>,
    /// Shortest match emitted, >= 4 ([`MIN_MATCH_BASE`]); below 6 it also lowers the
    /// archive's match base to it (FORMAT.md §2).
    pub min_match: u32,
    /// Use repeat-distance codes.
    pub repeat_codes: bool,
    /// Dependency depth cap (0 = none): every match's level is below it.
    pub depth_cap: u32,
    /// How the depth cap is enforced (`aceapex reproduce` compares the two methods).
    pub depth_cap_method: lz::DepthCapMethod,
    /// Allow context tables (FORMAT.md §5.4) where they save what the level asks
    /// ([`entropy::context_min_gain`]).
    pub context_tables: bool,
    /// Allow packed literal tables (FORMAT.md §5.6) where [`encode_group`]'s rule takes them.
    pub packed_literals: bool,
    /// Levels 1-7 only: store the match layer's streams raw (FORMAT.md §4.1, §5.5) and
    /// entropy-code only the literals, and price matches for raw streams.
    pub raw_match_streams: bool,
    /// With `raw_match_streams` only, for inputs of at most [`WIDE_MAX_BLOCKS`] blocks: 64-lane
    /// literal slices where they halve a chain of at least 64 steps (`entropy::wide_lanes`),
    /// then [`repack_longest_groups`].
    pub wide_lanes: bool,
    /// Two-bit literal slices (FORMAT.md §5.7), per block.
    pub two_bit: TwoBit,
    /// Also two-bit literal slices with runs (FORMAT.md §5.8), where `two_bit` would take a
    /// two-bit slice, the one with runs is shorter, and the block is one the GPU's dense
    /// kernel decodes alone (raw match streams, independent blocks of at most 16 KiB); the
    /// archive then carries the type-3 record (§3.4).
    pub two_bit_runs: bool,
    /// Line layouts (FORMAT.md §4.6): each block of independent blocks leaves out of its
    /// match layer the line ends of runs of equal lines ([`lines`]); the archive then
    /// carries the type-4 record (§3.8).
    pub line_layout: bool,
}

impl Default for Settings {
    /// Level 5, 16 KiB independent blocks, minimum match 6, repeat codes, no depth cap,
    /// context and packed tables allowed, every other coding off: the base the tests vary.
    fn default() -> Self {
        Settings {
            level: 5,
            block_size: DEFAULT_BLOCK_SIZE,
            window: None,
            min_match: MATCH_BASE,
            repeat_codes: true,
            depth_cap: 0,
            depth_cap_method: lz::DepthCapMethod::Clamp,
            context_tables: true,
            packed_literals: true,
            raw_match_streams: false,
            wide_lanes: false,
            two_bit: TwoBit::Off,
            two_bit_runs: false,
            line_layout: false,
        }
    }
}

impl Settings {
    /// Checks the settings; the error names the field.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if !(1..=9).contains(&self.level) {
            return Err(OptionsError::Level(self.level));
        }
        if !self.block_size.is_power_of_two()
            || !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size)
        {
            return Err(OptionsError::BlockSize(self.block_size));
        }
        if self.min_match < MIN_MATCH_BASE {
            return Err(OptionsError::MinMatch(self.min_match));
        }
        if self.window == Some(0) {
            return Err(OptionsError::Window(0));
        }
        Ok(())
    }

    fn window(&self) -> u32 {
        self.window.unwrap_or(self.block_size)
    }

    /// The match base the archive gets (FORMAT.md §2): the minimum match, at most
    /// [`MATCH_BASE`].
    pub fn match_base(&self) -> u32 {
        lz::match_base(self.min_match)
    }

    fn cross_block(&self) -> bool {
        self.window() > self.block_size
    }
}

/// The lowest level at which [`default_min_match`] tries a minimum match of 4 under every
/// target, and from which [`Options::settings`] never stores the match streams raw.
pub const SHORT_MATCH_LEVEL: u32 = 8;

/// Bytes of the sample [`default_min_match`] compresses both ways (or one block, if blocks
/// are larger): four pieces of 64 KiB spread over the input.
const SHORT_MATCH_SAMPLE: usize = 256 << 10;
const SHORT_MATCH_PIECES: usize = 4;

/// The sample of [`default_min_match`]: `SHORT_MATCH_PIECES` block-aligned pieces of whole
/// blocks spread evenly over `data` (fewer, of one block each, when blocks are larger than
/// a piece), `SHORT_MATCH_SAMPLE` bytes or one block in all; `None` when that is not smaller
/// than `data` (then the trial is the whole input).
fn short_match_sample(data: &[u8], block_size: u32) -> Option<Vec<u8>> {
    let (piece, starts) = short_match_pieces(data.len(), block_size)?;
    let mut v = Vec::with_capacity(starts.len() * piece);
    for at in starts {
        v.extend_from_slice(&data[at..at + piece]);
    }
    Some(v)
}

/// Where [`short_match_sample`] takes its pieces in an input of `len` bytes: the length of
/// a piece and the start of each; `None` when the sample would be the whole input.
fn short_match_pieces(len: usize, block_size: u32) -> Option<(usize, Vec<usize>)> {
    let bs = block_size.max(1) as usize;
    let pieces = (SHORT_MATCH_SAMPLE / bs).clamp(1, SHORT_MATCH_PIECES);
    let piece = (SHORT_MATCH_SAMPLE / pieces).div_ceil(bs) * bs;
    if len <= pieces * piece {
        return None;
    }
    // block-aligned starts from 0 to the last one that leaves a whole piece
    let last = (len - piece) / bs;
    let starts = (0..pieces)
        .map(|i| last * i / (pieces - 1).max(1) * bs)
        .collect();
    Some((piece, starts))
}

/// `opts` with minimum match 4 and with 6.
fn short_match_options(opts: &Settings) -> [Settings; 2] {
    [MIN_MATCH_BASE, MATCH_BASE].map(|min_match| Settings {
        min_match,
        ..opts.clone()
    })
}

/// The minimum match [`compress`] uses: `opts.min_match` where given; where
/// [`Options::tries_min_match`] (every level under [`Target::Size`], levels 8-9 under
/// [`Target::Gpu`]), 4 or 6, whichever compresses a sample of `data` smaller (6 on a tie;
/// a minimum below 6 also lowers the match base, FORMAT.md §2); else 6, for decode speed (a
/// base of 4 means more, shorter matches). The sample is four pieces of 64 KiB spread over
/// the input (with blocks over 64 KiB: one block per piece, 256 KiB or one block in all), or
/// the whole input when that is smaller, so the choice costs two compressions of the
/// sample; [`compress`] then keeps the smaller archive of the two.
///
/// 4 makes text, FASTQ and GenBank archives smaller and DNA FASTA larger (a 4-byte match
/// never pays at two bits per base, and the shorter codes cost the longer matches); a
/// threshold on order-0 entropy did not separate them (it put whitefly FASTQ, which gains,
/// with dm3, which loses), a trial does (docs/PERFORMANCE.md).
pub fn default_min_match(opts: &Options, data: &[u8]) -> u32 {
    if let Some(m) = opts.min_match {
        return m;
    }
    if !opts.tries_min_match() || data.is_empty() {
        return MATCH_BASE;
    }
    let sample = short_match_sample(data, opts.block_size);
    short_match_wins(&opts.settings(), sample.as_deref().unwrap_or(data))
}

/// How [`Options`] lower to the encoder's [`Settings`].
impl Options {
    /// Whether `min_match` is left to a trial on a sample of the input
    /// ([`default_min_match`]): unset under [`Target::Size`] at every level,
    /// under [`Target::Gpu`] at levels 8-9 ([`SHORT_MATCH_LEVEL`]).
    pub fn tries_min_match(&self) -> bool {
        self.min_match.is_none() && (self.target == Target::Size || self.level >= SHORT_MATCH_LEVEL)
    }

    /// The encoder's decisions for these options (minimum match 6 where
    /// [`Options::tries_min_match`] leaves it to the trial). Levels 8-9 reject raw match
    /// streams, which also rules out wide lanes there (FORMAT.md §5.5).
    #[doc(hidden)]
    pub fn settings(&self) -> Settings {
        let gpu = self.target == Target::Gpu;
        let raw = gpu && self.level < SHORT_MATCH_LEVEL;
        Settings {
            level: self.level,
            block_size: self.block_size,
            window: self.window,
            min_match: self.min_match.unwrap_or(crate::device::format::MATCH_BASE),
            repeat_codes: self.repeat_codes,
            depth_cap: self.depth_cap,
            depth_cap_method: lz::DepthCapMethod::Clamp,
            context_tables: true,
            packed_literals: true,
            raw_match_streams: raw,
            wide_lanes: raw,
            two_bit: match self.target {
                Target::Gpu => TwoBit::MostBlocks,
                _ => TwoBit::Smaller,
            },
            two_bit_runs: gpu,
            // not under `gpu`: the dense kernel's write of a block with a layout (a table
            // lookup per word) makes the decode of a genome slower than the bytes it saves
            // (docs/PERFORMANCE.md)
            line_layout: !gpu,
        }
    }
}

/// Share of the sample's archive by which a minimum match of 4 must beat 6 below level
/// [`SHORT_MATCH_LEVEL`], where the trial is new to the level: on DNA the two come within a
/// fraction of a per cent of each other and the sample can pick 4 where the whole input codes
/// smaller with 6, while text and FASTQ gain clearly more.
pub const SHORT_MATCH_MIN_GAIN: f64 = 0.005;

/// Whether 16 bytes make up at least 99 in 100 bytes of `sample`: nucleotide sequence (FASTA,
/// soft-masked or not, its line feeds and a header line or an N run aside), where a 4-byte
/// match never pays at two bits per base, and a sample of it can pick 4 where the whole input
/// codes smaller with 6.
fn few_letters(sample: &[u8]) -> bool {
    let mut h = [0u64; 256];
    entropy::count(&mut h, sample);
    h.sort_unstable_by(|a, b| b.cmp(a));
    h[..16].iter().sum::<u64>() as f64 >= 0.99 * sample.len() as f64
}

/// The trial of [`default_min_match`] on `sample`: 4 if it compresses `sample` smaller
/// than 6 under `opts`, else 6; below level [`SHORT_MATCH_LEVEL`] 6 on nucleotide sequence
/// (`few_letters`) and 4 only by [`SHORT_MATCH_MIN_GAIN`].
fn short_match_wins(opts: &Settings, sample: &[u8]) -> u32 {
    let [o4, o6] = short_match_options(opts);
    let size = |o: &Settings| compress_settings(sample, o, &|_| {}).map_or(usize::MAX, |a| a.len());
    let fast = opts.level < SHORT_MATCH_LEVEL;
    if fast && few_letters(sample) {
        return MATCH_BASE;
    }
    let gain = if fast { SHORT_MATCH_MIN_GAIN } else { 0.0 };
    if (size(&o4) as f64) < size(&o6) as f64 * (1.0 - gain) {
        MIN_MATCH_BASE
    } else {
        MATCH_BASE
    }
}

/// Compresses `data` into a complete archive under `opts`; `progress` is called with input
/// bytes done. The minimum match is [`default_min_match`]'s; when its sample would be the
/// whole input, compresses it both ways and keeps the smaller archive (`progress` then
/// counts each byte half for each pass).
///
/// Memory: see [`compress_settings`]. Errors: [`OptionsError`] for an option out of range or
/// an input of more than 2^32 blocks.
pub fn compress(
    data: &[u8],
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<u8>, OptionsError> {
    opts.validate()?;
    let settings = opts.settings();
    if !opts.tries_min_match() || data.is_empty() {
        return compress_settings(data, &settings, progress);
    }
    let [o4, o6] = short_match_options(&settings);
    if let Some(sample) = short_match_sample(data, opts.block_size) {
        let o = if short_match_wins(&settings, &sample) == MIN_MATCH_BASE {
            o4
        } else {
            o6
        };
        return compress_settings(data, &o, progress);
    }
    // the whole input is the sample: two passes, each reporting half of its bytes
    let halves = |pass_done: &AtomicU64, n: u64| {
        let before = pass_done.fetch_add(n, Ordering::Relaxed);
        progress((before + n) / 2 - before / 2);
    };
    let (d4, d6) = Default::default();
    let a4 = compress_settings(data, &o4, &|n| halves(&d4, n))?;
    let a6 = compress_settings(data, &o6, &|n| halves(&d6, n))?;
    Ok(if a4.len() < a6.len() { a4 } else { a6 })
}

/// Blocks per table group for a block size.
pub fn group_blocks_for(block_size: u32) -> u32 {
    (GROUP_BYTES as u32 / block_size).max(1)
}

/// With [`TwoBit::WithinLoss`], a block's literals take a two-bit slice where it
/// is at most `1 / TWO_BIT_MAX_LOSS` longer than their other slice: the rANS slice of a block
/// of upper-case DNA is often a little shorter, and a decode waits for its slowest block.
pub const TWO_BIT_MAX_LOSS: usize = 100;

/// With [`TwoBit::MostBlocks`], two-bit slices are kept where at most one in
/// `TWO_BIT_MAX_LEFT` of the blocks with literals lacks one (a FASTA block of more than
/// `MAX_INTERVALS` soft-masked stretches, or whose rANS slice is much shorter): the rANS stage
/// decodes those few while the dense kernel decodes the rest alone (docs/PERFORMANCE.md).
pub const TWO_BIT_MAX_LEFT: usize = 16;

/// Most blocks of an input that `Settings::wide_lanes` gives wide slices: on an H200 the
/// rANS stage holds 132 SMs x 2 CTAs x 16 warps, 4,224 warps, at once, so up to ~2,100 blocks
/// of two warps each are all in flight and the halved chains are the stage's time; with more,
/// the pairs take rounds and the extra warps cost more than the chains save (measurements in
/// docs/PERFORMANCE.md). Larger inputs are written without wide slices.
pub const WIDE_MAX_BLOCKS: usize = 2048;

/// [`compress`] under `opts` as given (no trial of the minimum match): the test hook that
/// reaches every coding of the format. `progress` is called with input bytes done.
///
/// Memory: the input, the archive, about 3x `BATCH_BYTES` of parse buffers, and per worker
/// thread its parse tables and 256 KiB of context statistics (kept for the thread's life);
/// with `wide_lanes` or [`TwoBit::Smaller`] also every coded group until the end (the
/// latter with the other literal slice of each two-bit block), with `wide_lanes` the parses
/// of the groups [`repack_longest_groups`] may code again (at most [`WIDE_MAX_BLOCKS`] blocks
/// in all). Errors: an option out of range, an input of more than 2^32 blocks.
#[doc(hidden)]
pub fn compress_settings(
    data: &[u8],
    opts: &Settings,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<u8>, OptionsError> {
    opts.validate()?;
    let bs = opts.block_size as usize;
    let block_count = data.len().div_ceil(bs);
    if block_count > u32::MAX as usize {
        return Err(OptionsError::TooManyBlocks {
            len: data.len() as u64,
            block_size: opts.block_size,
        });
    }
    let plan = Plan::new(opts, block_count);
    let opts = &plan.opts;
    let (bs, group_blocks) = (plan.bs, plan.group_blocks);
    let per_lane = plan.per_lane;

    let mut entries: Vec<BlockEntry> = Vec::with_capacity(block_count);
    let mut tables_out: Vec<u8> = Vec::new();
    let mut data_out: Vec<u8> = Vec::new();
    // with wide lanes every group, in order, held back for `repack_longest_groups`, and the
    // parses of those it may code again (the packable ones; none otherwise); with
    // `TwoBit::Smaller` and `TwoBit::MostBlocks` every group, for `keep_two_bit_if_smaller`
    // and `keep_two_bit_if_most_blocks`
    let hold = opts.wide_lanes || matches!(opts.two_bit, TwoBit::Smaller | TwoBit::MostBlocks);
    let mut coded: Vec<GroupOut> = Vec::new();
    let mut parsed_groups: Vec<Vec<BlockParse>> = Vec::new();
    let mut batch_start = 0usize;
    while batch_start < data.len() {
        let batch_end = (batch_start + plan.batch_bytes).min(data.len());
        let groups = plan.encode_batch(&data[batch_start..batch_end], batch_start, progress);
        for (g, parses) in groups {
            if hold {
                coded.push(g);
                parsed_groups.push(parses);
            } else {
                g.append_to(&mut tables_out, &mut entries, &mut data_out);
            }
        }
        batch_start = batch_end;
    }
    if opts.wide_lanes {
        repack_longest_groups(&mut coded, |i| {
            let blocks = &parsed_groups[i];
            encode_group(data, bs, i * group_blocks, blocks, per_lane, opts, true)
        });
    }
    drop(parsed_groups);
    match opts.two_bit {
        TwoBit::Smaller => keep_two_bit_if_smaller(&mut coded),
        TwoBit::MostBlocks => keep_two_bit_if_most_blocks(&mut coded),
        _ => {}
    }
    if hold {
        for g in coded {
            g.append_to(&mut tables_out, &mut entries, &mut data_out);
        }
    }
    debug_assert_eq!(entries.len(), block_count);

    let (h, block_table) = file_header(
        opts,
        data.len() as u64,
        &entries,
        tables_out.len() as u64,
        data_out.len() as u64,
        xxh3_64(data),
    );
    let mut area = Vec::new();
    crate::format::extension::write_two_bit_runs_record(&entries, &mut area);
    if plan.used_lines.load(Ordering::Relaxed) {
        crate::format::extension::write_line_layout_record(&mut area);
    }
    Ok(assemble(h, &block_table, &tables_out, &data_out, &area))
}

/// The header (FORMAT.md §2; its meta checksum left 0 for [`assemble`]) and packed block
/// table of an archive of `original_size` bytes under `opts` whose blocks are `entries`
/// (block order), whose table section is `table_bytes` long and data section `data_bytes`,
/// and whose content checksum is `content_checksum`.
fn file_header(
    opts: &Settings,
    original_size: u64,
    entries: &[BlockEntry],
    table_bytes: u64,
    data_bytes: u64,
    content_checksum: u64,
) -> (FileHeader, Vec<u8>) {
    let mut flags = 0;
    if opts.repeat_codes {
        flags |= FLAG_REPEAT_CODES;
    }
    if opts.cross_block() {
        flags |= FLAG_CROSS_BLOCK;
    }
    let group_blocks = group_blocks_for(opts.block_size) as usize;
    let mut entry_bits = crate::format::entry::bits_for(entries);
    entry_bits.match_base = opts.match_base() as u8;
    let h = FileHeader {
        magic: MAGIC,
        version: FORMAT_VERSION,
        flags,
        original_size,
        block_size: opts.block_size,
        block_count: entries.len() as u32,
        group_blocks: group_blocks as u32,
        group_count: entries.len().div_ceil(group_blocks) as u32,
        min_match: opts.min_match,
        window: opts.window(),
        depth_cap: opts.depth_cap,
        level: opts.level,
        table_bytes,
        data_bytes,
        content_checksum,
        entry_bits,
        meta_checksum: 0,
    };
    let mut block_table =
        Vec::with_capacity(entries.len() * crate::format::entry::packed_size(&h.entry_bits));
    crate::format::entry::pack(entries, &h.entry_bits, &mut block_table);
    (h, block_table)
}

/// How [`compress_settings`] and the streaming encoder ([`stream`]) cut an input into
/// batches, segments and groups, and code each batch: one definition, so that both write
/// the same bytes.
struct Plan {
    /// The settings, `wide_lanes` cleared for an input of more than [`WIDE_MAX_BLOCKS`]
    /// blocks.
    opts: Settings,
    bs: usize,
    group_blocks: usize,
    /// Bytes one thread parses in order; sources never cross a segment start.
    seg_bytes: usize,
    /// Input bytes coded at a time, a whole number of groups.
    batch_bytes: usize,
    per_lane: usize,
    params: ParseParams,
    /// Whether a block coded so far has a line layout (the archive then needs the type-4
    /// record, FORMAT.md §3.8).
    used_lines: AtomicBool,
}

impl Plan {
    /// The plan of an input of `block_count` blocks under `opts` (validated).
    fn new(opts: &Settings, block_count: usize) -> Plan {
        // wide slices only where every block's pair of GPU warps is in flight at once
        // line layouts only where blocks are independent (FORMAT.md §3.8)
        let opts = Settings {
            wide_lanes: opts.wide_lanes && block_count <= WIDE_MAX_BLOCKS,
            line_layout: opts.line_layout && !opts.cross_block(),
            ..opts.clone()
        };
        let bs = opts.block_size as usize;
        let group_blocks = group_blocks_for(opts.block_size) as usize;
        let window = opts.window();
        let per_lane = entropy::symbols_per_lane(opts.level, opts.block_size);
        let params = ParseParams {
            level: opts.level,
            min_match: opts.min_match,
            window,
            repeat_codes: opts.repeat_codes,
            depth_cap: opts.depth_cap,
            depth_cap_method: opts.depth_cap_method,
            raw_match_streams: opts.raw_match_streams,
        };
        // A segment is parsed by one thread in order; sources never cross segment starts.
        let seg_bytes = if opts.cross_block() {
            // capped at 1 GiB: the parser indexes a segment with 32-bit positions
            (BATCH_BYTES / 4)
                .max(4 * window as usize)
                .min(MAX_SEGMENT_BYTES)
                .div_ceil(bs)
                * bs
        } else {
            bs
        };
        let batch_bytes =
            BATCH_BYTES.max(seg_bytes).div_ceil(group_blocks * bs) * group_blocks * bs;
        Plan {
            opts,
            bs,
            group_blocks,
            seg_bytes,
            batch_bytes,
            per_lane,
            params,
            used_lines: AtomicBool::new(false),
        }
    }

    /// Parses and codes one batch, `batch` = the input's bytes from `base` (a multiple of
    /// `batch_bytes`; `batch` is `batch_bytes` long but for the input's last batch): its
    /// groups in order, each with the parses [`repack_longest_groups`] may code again (those
    /// of packable groups, else none). Positions are relative to `base` while parsing (no
    /// source lies before a segment start, which is in the batch) and absolute in the
    /// entries.
    fn encode_batch(
        &self,
        batch: &[u8],
        base: usize,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Vec<(GroupOut, Vec<BlockParse>)> {
        let (bs, group_blocks, params, opts) =
            (self.bs, self.group_blocks, &self.params, &self.opts);
        let per_lane = self.per_lane;
        let group_bytes = group_blocks * bs;
        // block positions of the parses made absolute
        let absolute = |mut p: Vec<BlockParse>| {
            for b in &mut p {
                b.lowest_source += base;
            }
            p
        };
        let keep = |out: &GroupOut, parses: Vec<BlockParse>| match out.packable {
            true => parses,
            false => Vec::new(),
        };
        if self.seg_bytes == bs {
            // Independent blocks: each task parses one group and codes it at once, while
            // its streams are still in cache.
            let runs = match opts.line_layout {
                true => lines::layout_runs(batch),
                false => Vec::new(),
            };
            return (0..batch.len())
                .step_by(group_bytes)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|g| {
                    let g_end = (g + group_bytes).min(batch.len());
                    let mut stats = lz::GroupStats::default();
                    let parses: Vec<BlockParse> = absolute(
                        (g..g_end)
                            .step_by(bs)
                            .flat_map(|s| {
                                let seg = s..(s + bs).min(g_end);
                                self.parse_block(batch, seg, &runs, &mut stats)
                            })
                            .collect(),
                    );
                    let out = encode_group(batch, bs, g / bs, &parses, per_lane, opts, false);
                    progress((g_end - g) as u64);
                    let parses = keep(&out, parses);
                    (out, parses)
                })
                .collect();
        }
        let segs: Vec<(usize, usize)> = (0..batch.len())
            .step_by(self.seg_bytes)
            .map(|s| (s, (s + self.seg_bytes).min(batch.len())))
            .collect();
        // half of the progress while parsing (block by block: a segment of a slow level
        // can take minutes), the rest once the batch is coded
        let parsed = AtomicU64::new(0);
        let parses: Vec<BlockParse> = absolute(
            segs.par_iter()
                .flat_map_iter(|&(s, e)| {
                    lz::parse_segment_progress(batch, s..e, bs, params, &|n| {
                        parsed.fetch_add(n / 2, Ordering::Relaxed);
                        progress(n / 2);
                    })
                })
                .collect(),
        );
        // per group: tables, then the slices of its blocks
        let groups = parses
            .par_chunks(group_blocks)
            .enumerate()
            .map(|(gi, blocks)| {
                let out = encode_group(batch, bs, gi * group_blocks, blocks, per_lane, opts, false);
                let parses = match out.packable {
                    true => blocks.to_vec(),
                    false => Vec::new(),
                };
                (out, parses)
            })
            .collect();
        progress(batch.len() as u64 - parsed.into_inner());
        groups
    }
}

/// One encoded table group.
struct GroupOut {
    /// Its table records (FORMAT.md §5.2).
    tables: Vec<u8>,
    /// Each block's entry and stored slices.
    blocks: Vec<(BlockEntry, Vec<u8>)>,
    /// Its blocks' longest GPU warp chain ([`entropy::warp_chain`], packed literals counted
    /// in symbols), in steps.
    chain: usize,
    /// Whether a packed literal table (FORMAT.md §5.6) of a greater width than the group's
    /// (1 when not packed) was possible but not taken; with wide lanes only.
    packable: bool,
    /// With [`TwoBit::Smaller`], per block that took a two-bit literal slice: its index in
    /// the group, and the lane code and bytes of the literal slice it had before
    /// ([`keep_two_bit::keep_two_bit_if_smaller`]).
    two_bit_alt: Vec<(usize, u8, Vec<u8>)>,
}

impl GroupOut {
    /// Bytes the group adds to the archive: its table records and stored slices (its block
    /// table entries are the same whatever its coding).
    fn bytes(&self) -> usize {
        self.tables.len() + self.blocks.iter().map(|(_, b)| b.len()).sum::<usize>()
    }

    /// Appends the group to the archive's table records, block entries and data section.
    fn append_to(self, tables: &mut Vec<u8>, entries: &mut Vec<BlockEntry>, data: &mut Vec<u8>) {
        tables.extend_from_slice(&self.tables);
        for (e, bytes) in self.blocks {
            entries.push(e);
            data.extend_from_slice(&bytes);
        }
    }
}

/// Most share of the archive that [`repack_longest_groups`] may add.
pub const WIDE_REPACK_MAX_SHARE: f64 = 0.01;

/// `Settings::wide_lanes`' pass over the coded groups: on the GPU every block of such an
/// archive is in flight at once (at most [`WIDE_MAX_BLOCKS`]), so its rANS stage lasts as long
/// as the archive's longest chain. When groups that could have packed their literals wider
/// (FORMAT.md §5.6) have the longest chains, they are coded again with the widest packing
/// (`encode_group`'s `force_pack`); the result is kept if the archive's longest chain drops
/// and it costs at most [`WIDE_REPACK_MAX_SHARE`] of the archive (all of them or none: one
/// left long keeps the stage as long). A group's chain here is its stored rANS slices'
/// (`entropy::warp_chain`), without the raw slices' copies. The typical case is a genome
/// group whose literals code smaller unpacked (a context pair on the letter case, or a
/// FASTA header line's letters in the alphabet) but with chains twice the others'; heavily
/// soft-masked inputs, where every group codes much smaller with the context pair, stay as
/// they are by the budget. The budget is counted over the groups' table records and slices (the header and the block
/// table do not change).
fn repack_longest_groups(groups: &mut [GroupOut], redo: impl Fn(usize) -> GroupOut + Sync) {
    let Some(longest) = groups.iter().map(|g| g.chain).max() else {
        return;
    };
    // the longest chain among the groups that repacking cannot shorten
    let floor = (groups.iter())
        .filter(|g| !g.packable)
        .map(|g| g.chain)
        .max()
        .unwrap_or(0);
    let chosen: Vec<usize> = (0..groups.len())
        .filter(|&i| groups[i].packable && groups[i].chain > floor)
        .collect();
    if chosen.is_empty() {
        return;
    }
    let again: Vec<GroupOut> = chosen.par_iter().map(|&i| redo(i)).collect();
    let then = again.iter().map(|g| g.chain).max().unwrap_or(0).max(floor);
    let added = again.iter().map(GroupOut::bytes).sum::<usize>() as f64
        - chosen.iter().map(|&i| groups[i].bytes()).sum::<usize>() as f64;
    let total = groups.iter().map(GroupOut::bytes).sum::<usize>() as f64;
    if then < longest && added <= WIDE_REPACK_MAX_SHARE * total {
        for (i, g) in chosen.into_iter().zip(again) {
            groups[i] = g;
        }
    }
}

/// Share by which a packed literal table's estimated bytes (FORMAT.md §5.6; symbols, record
/// and the raw literals of blocks outside its alphabet) may exceed those of the literal record
/// chosen without it and still be taken at levels 1-7, where decode speed comes first: a
/// packed slice decodes its literals `w` at a time.
pub const PACK_MAX_LOSS_FAST_LEVELS: f64 = 0.03;

/// GPU chain steps that one byte of archive must buy for a packed literal table that codes
/// larger than the record chosen without it at levels 1-7 (beyond
/// [`PACK_MAX_LOSS_FAST_LEVELS`]): the exchange rate of [`entropy::block_lanes`]' two warp
/// rounds, [`entropy::TWO_ROUND_STEPS_PER_LANE`] steps for a lane's ~3 bytes. The case is a
/// genome's first group, whose FASTA header block stores its literals raw (larger than
/// unpacked) while packing more than halves the other blocks' chains.
pub const PACK_STEPS_PER_BYTE: f64 = entropy::TWO_ROUND_STEPS_PER_LANE as f64 / 3.0;

/// Sum over a group's blocks of the GPU warp's rANS chain (`aceapex_device::rans::warp_steps`)
/// with the unpacked literals and lanes `unpacked`, less that with the packed literal symbols
/// `packed` (None: a block whose literals are stored raw, whose copy by the warp, one memory
/// latency per 128 bytes, is not counted) and their lanes `packed_lanes`; a block where
/// packing is longer counts 0.
fn chain_steps_saved(
    blocks: &[BlockParse],
    unpacked: &[[usize; STREAM_COUNT]],
    packed_lanes: &[[usize; STREAM_COUNT]],
    packed: &[Option<Vec<u8>>],
) -> usize {
    let chain = |b: &BlockParse, literals: usize, lanes: &[usize; STREAM_COUNT]| {
        let slices = b.stream_slices();
        let n = std::array::from_fn(|k| {
            Some(if k == STREAM_LITERALS {
                literals
            } else {
                slices[k].len()
            })
        });
        entropy::warp_chain(&n, lanes)
    };
    (blocks.iter().enumerate())
        .map(|(i, b)| {
            let before = chain(b, b.stream_slices()[STREAM_LITERALS].len(), &unpacked[i]);
            let after = chain(b, packed[i].as_ref().map_or(0, Vec::len), &packed_lanes[i]);
            before.saturating_sub(after)
        })
        .sum()
}

/// Fewest literals a group must have for a packed literal table (FORMAT.md §5.6): below it
/// the table and the slices' lane states cost more than packing can save (a 33-byte input
/// packed came out 255 bytes against 248, FORMAT.md §9.1).
pub const PACK_MIN_LITERALS: usize = 4096;

/// Builds a group's tables from its blocks' streams and stores every slice
/// (`opts.raw_match_streams`: tables for the literals only, every other slice raw).
///
/// `data` holds the group's first block at `first_block * bs` (the whole input, or a batch
/// of it with blocks counted from the batch's start: only the block checksums read it);
/// the parses' `lowest_source` is a position in the whole input.
///
/// `per_lane`: symbols per rANS lane ([`entropy::symbols_per_lane`] of the level and block
/// size). `opts.context_tables`: allow context pairs ([`entropy::choose_record`]), where they
/// save what the level asks ([`entropy::context_min_gain`]); `opts.packed_literals`: allow a
/// packed literal table where the group has at least [`PACK_MIN_LITERALS`] literals, at most
/// 16 distinct bytes among them (but for up to an eighth of its blocks, whose literals are
/// then stored raw, `entropy::literal_alphabet`), and it codes them in fewer bytes than the
/// record chosen otherwise (at levels 1-7 in at most [`PACK_MAX_LOSS_FAST_LEVELS`] more, or
/// more where each extra byte buys [`PACK_STEPS_PER_BYTE`] GPU chain steps), or always with
/// `force_pack` ([`repack_longest_groups`]).
fn encode_group(
    data: &[u8],
    bs: usize,
    first_block: usize,
    blocks: &[BlockParse],
    per_lane: usize,
    opts: &Settings,
    force_pack: bool,
) -> GroupOut {
    let mut hists: [Histogram; STREAM_COUNT] = [[0; 256]; STREAM_COUNT];
    // `raw_match_streams`: no table for the match layer's streams (FORMAT.md §4.1), whose
    // slices are then stored raw and take no lanes of the warp (§5.3, §5.5); their bytes
    let mut raw_bytes = 0usize;
    // each block's literal histogram: the group's, the packed alphabet's and the two-bit
    // slice's, so that neither of the latter passes over the literals again
    let mut literal_hists: Vec<Histogram> = Vec::with_capacity(blocks.len());
    for b in blocks {
        for (k, (h, s)) in hists.iter_mut().zip(b.stream_slices()).enumerate() {
            if k == STREAM_LITERALS {
                let mut bh = [0; 256];
                entropy::count(&mut bh, s);
                for (g, c) in h.iter_mut().zip(&bh) {
                    *g += c;
                }
                literal_hists.push(bh);
            } else if opts.raw_match_streams {
                raw_bytes += s.len();
            } else {
                entropy::count(h, s);
            }
        }
    }
    // lanes depend only on which streams have a table and the slices' lengths (in symbols)
    // (`literal_symbols(i)`: the symbols of block i's literal slice, None when stored raw)
    // block i's symbols per rANS slice (None: stored raw or empty)
    let symbols_of = |i: usize, literal_symbols: &dyn Fn(usize) -> Option<usize>| {
        let slices = blocks[i].stream_slices();
        std::array::from_fn(|k| {
            if !hists[k].iter().any(|&c| c > 0) || slices[k].is_empty() {
                None
            } else if k == STREAM_LITERALS {
                literal_symbols(i)
            } else {
                Some(slices[k].len())
            }
        })
    };
    let lanes_of = |literal_symbols: &dyn Fn(usize) -> Option<usize>, width: usize| {
        (0..blocks.len())
            .map(|i| entropy::block_lanes_packed(symbols_of(i, literal_symbols), per_lane, width))
            .collect::<Vec<[usize; STREAM_COUNT]>>()
    };
    let lits = || blocks.iter().map(|b| b.stream_slices()[STREAM_LITERALS]);
    // `opts.wide_lanes` in every group, text included: the GPU decode waits on the longest
    // chains, which wide slices halve for a few bytes of rANS state (docs/PERFORMANCE.md)
    let wide = opts.wide_lanes;
    // `plain` with the wide lanes' last stage (`entropy::wide_lanes`)
    let widened = |plain: &[[usize; STREAM_COUNT]],
                   literal_symbols: &dyn Fn(usize) -> Option<usize>,
                   width: usize| {
        (plain.iter().enumerate())
            .map(|(i, &l)| match wide {
                true => entropy::wide_lanes(&symbols_of(i, literal_symbols), l, per_lane, width),
                false => l,
            })
            .collect::<Vec<[usize; STREAM_COUNT]>>()
    };
    let unpacked = |i: usize| Some(blocks[i].stream_slices()[STREAM_LITERALS].len());
    let plain = lanes_of(&unpacked, 1);
    let mut lanes = widened(&plain, &unpacked, 1);
    // one table per stream quantised once: the group's size estimate and the single choice
    let singles = hists.each_ref().map(FreqTable::from_histogram);
    let group_bytes = singles
        .iter()
        .zip(&hists)
        .filter_map(|(t, h)| t.as_ref().map(|t| entropy::coded_bytes(t, h)))
        .sum::<f64>()
        + raw_bytes as f64;
    let min_gain = entropy::context_min_gain(opts.level, group_bytes);
    // stream k's record with the blocks' lane counts `lanes` (a context pair's tables hold
    // the (lane's previous symbol, symbol) pairs of exactly those lanes: every symbol must be
    // present in the table its context picks)
    let mut singles = singles.map(Some);
    let mut choose = |k: usize, lanes: &[[usize; STREAM_COUNT]]| {
        let t = singles[k].take().flatten()?;
        Some(if opts.context_tables {
            entropy::PairCounts::with_fresh(|p| {
                for (b, l) in blocks.iter().zip(lanes) {
                    p.add(b.stream_slices()[k], l[k]);
                }
                entropy::choose_record(t, &hists[k], Some(p), min_gain)
            })
        } else {
            entropy::choose_record(t, &hists[k], None, min_gain)
        })
    };
    // the literals first: packing changes the blocks' lane counts, which the other streams'
    // context pairs depend on
    let mut literal_record = choose(STREAM_LITERALS, &lanes);
    // packed literals (FORMAT.md §5.6): the group's literals in symbols of `w` literals each,
    // when that codes them smaller (or, at levels 1-7, hardly larger, or larger by bytes that
    // each buy `PACK_STEPS_PER_BYTE` chain steps) than the record above;
    // the few blocks with letters outside the alphabet (a FASTA header) store theirs raw
    let mut packed: Vec<Option<Vec<u8>>> = Vec::new();
    let enough = lits().map(<[u8]>::len).sum::<usize>() >= PACK_MIN_LITERALS;
    let can_pack = opts.packed_literals && enough && literal_record.is_some();
    // the group's alphabet (at most 16 letters), and with wide lanes the one of a wider pack
    // where at most 4 or 6 letters leave few enough blocks raw (`repack_longest_groups`; a
    // smaller cap never succeeds where 16 fails, so it is tried only after that one, and
    // only where it would pack more letters a symbol)
    let alphabet16 = can_pack
        .then(|| entropy::literal_alphabet_counted(&literal_hists, MAX_PACK_ALPHABET))
        .flatten();
    let wider = match (&alphabet16, wide) {
        (Some((a, _)), true) => [4, 6]
            .into_iter()
            .filter(|&c| pack_width(c) > pack_width(a.len()))
            .find_map(|c| entropy::literal_alphabet_counted(&literal_hists, c)),
        _ => None,
    };
    // the width of the widest pack possible (0: none)
    let widest_width =
        (wider.as_ref().or(alphabet16.as_ref())).map_or(0, |(a, _)| pack_width(a.len()));
    // literals per symbol of the group's literal slices (1: not packed)
    let mut literal_width = 1usize;
    if let Some((_, chosen)) = &literal_record {
        let alphabet = match force_pack {
            true => wider.or(alphabet16),
            false => alphabet16,
        };
        if let Some((alphabet, raw)) = alphabet {
            let symbols: Vec<Option<Vec<u8>>> = (lits().zip(&raw))
                .map(|(l, &raw)| {
                    (!raw).then(|| {
                        let mut v = Vec::new();
                        entropy::pack_literals(l, &alphabet, &mut v);
                        v
                    })
                })
                .collect();
            let mut h = [0u64; 256];
            for v in symbols.iter().flatten() {
                entropy::count(&mut h, v);
            }
            let raw_bytes: usize = (lits().zip(&raw))
                .filter(|&(_, &r)| r)
                .map(|(l, _)| l.len())
                .sum();
            let t = FreqTable::from_histogram(&h).expect("literals present");
            let record = entropy::TableRecord {
                alphabet: Some(alphabet),
                ..entropy::TableRecord::single(t)
            };
            let cost = entropy::record_bytes(&record, &[&h]) + raw_bytes as f64;
            let w = pack_width(record.alphabet.as_ref().map_or(0, Vec::len)) as usize;
            let packed_symbols = |i: usize| symbols[i].as_ref().map(Vec::len);
            let packed_plain = lanes_of(&packed_symbols, w);
            let packed_lanes = widened(&packed_plain, &packed_symbols, w);
            // the chains saved as without wide lanes: with them both chains halve, and
            // packing would look worth half as much where it still divides the chain by `w`
            // (E. coli with wide lanes kept unpacked groups, 255 steps against 88 packed)
            let saved = chain_steps_saved(blocks, &plain, &packed_plain, &symbols);
            let take = force_pack
                || cost < *chosen
                || (opts.level <= 7
                    && (cost < chosen * (1.0 + PACK_MAX_LOSS_FAST_LEVELS)
                        || (cost - chosen) * PACK_STEPS_PER_BYTE <= saved as f64));
            if take {
                literal_record = Some((record, cost));
                packed = symbols;
                lanes = packed_lanes;
                literal_width = w;
            }
        }
    }
    let records: Vec<Option<(entropy::TableRecord, f64)>> = std::iter::once(literal_record)
        .chain((1..STREAM_COUNT).map(|k| choose(k, &lanes)))
        .collect();
    let records: Vec<Option<entropy::TableRecord>> =
        records.into_iter().map(|r| r.map(|(r, _)| r)).collect();
    let coders: Vec<Option<entropy::SliceCoder>> = records
        .iter()
        .map(|r| r.as_ref().map(entropy::SliceCoder::new))
        .collect();
    let mut table_bytes = Vec::new();
    for r in &records {
        match r {
            Some(r) => r.serialize(&mut table_bytes),
            None => table_bytes.push(entropy::TABLE_KIND_NONE),
        }
    }
    // slices with runs only where every block can be one the dense kernel decodes alone:
    // raw match streams, independent blocks the dense kernel holds (own.rs)
    let runs_ok = opts.two_bit_runs
        && opts.raw_match_streams
        && !opts.cross_block()
        && bs <= crate::device::dense_layout::DENSE_MAX_BLOCK as usize;
    let out = blocks
        .iter()
        .zip(&lanes)
        .enumerate()
        .map(|(i, (b, lanes))| {
            let start = (first_block + i) * bs;
            let end = (start + bs).min(data.len());
            let mut bytes = Vec::new();
            let mut alt = None;
            let mut e = BlockEntry {
                checksum: xxh3_64(&data[start..end]),
                max_depth: b.max_depth,
                lowest_source_block: (b.lowest_source / bs) as u32,
                ..BlockEntry::zeroed()
            };
            for (k, s) in b.stream_slices().into_iter().enumerate() {
                let before = bytes.len();
                e.lanes[k] = match (k, packed.get(i), coders[k].as_ref()) {
                    // packed literals: rANS over the packed symbols when shorter than the
                    // literals themselves, else the literals raw (FORMAT.md §5.6); a block
                    // with letters outside the alphabet stores them raw
                    (STREAM_LITERALS, Some(None), _) => {
                        bytes.extend_from_slice(s);
                        LANES_RAW
                    }
                    (STREAM_LITERALS, Some(Some(p)), Some(c)) if !s.is_empty() && lanes[k] > 0 => {
                        c.encode(p, lanes[k], &mut bytes);
                        if bytes.len() - before < s.len() {
                            lanes[k] as u8
                        } else {
                            bytes.truncate(before);
                            bytes.extend_from_slice(s);
                            LANES_RAW
                        }
                    }
                    _ => entropy::store_slice(s, coders[k].as_ref(), lanes[k], &mut bytes),
                };
                if k == STREAM_LITERALS && opts.two_bit != TwoBit::Off && !s.is_empty() {
                    // FORMAT.md §5.7: where shorter than the slice just stored, or at most
                    // 1 % longer
                    let mut two = Vec::new();
                    let other = bytes.len() - before;
                    let most = match opts.two_bit {
                        TwoBit::WithinLoss | TwoBit::MostBlocks => other + other / TWO_BIT_MAX_LOSS,
                        _ => other.saturating_sub(1),
                    };
                    let h = &literal_hists[i];
                    let mut len = match entropy::two_bit_len_floor_counted(h) <= most {
                        true => entropy::encode_two_bit_counted(s, h, &mut two),
                        false => usize::MAX,
                    };
                    let mut lanes_two = LANES_TWO_BIT;
                    // FORMAT.md §5.8: a slice with runs where shorter still, in a block the
                    // GPU's dense kernel decodes alone (own.rs)
                    let mut runs = Vec::new();
                    if runs_ok {
                        if let Some(l) = runs::encode_two_bit_runs(s, &mut runs) {
                            let commands = b.stream_slices()[STREAM_COMMANDS].len() as u64;
                            let fits = crate::device::own::runs_slice_fits(
                                s.len() as u64,
                                l as u64,
                                commands,
                            );
                            if l < len && fits {
                                (two, len, lanes_two) = (runs, l, LANES_TWO_BIT_RUNS);
                            }
                        }
                    }
                    if len <= most {
                        if matches!(opts.two_bit, TwoBit::Smaller | TwoBit::MostBlocks) {
                            alt = Some((i, e.lanes[k], bytes[before..].to_vec()));
                        }
                        bytes.truncate(before);
                        bytes.extend_from_slice(&two);
                        e.lanes[k] = lanes_two;
                    }
                }
                e.stored_len[k] = (bytes.len() - before) as u32;
                e.decoded_len[k] = s.len() as u32;
            }
            (e, bytes, alt)
        })
        .collect::<Vec<(BlockEntry, Vec<u8>, Option<(usize, u8, Vec<u8>)>)>>();
    let (out, two_bit_alt): (Vec<(BlockEntry, Vec<u8>)>, Vec<_>) =
        out.into_iter().map(|(e, b, alt)| ((e, b), alt)).unzip();
    let two_bit_alt: Vec<(usize, u8, Vec<u8>)> = two_bit_alt.into_iter().flatten().collect();
    // the stored slices' chains: rANS slices only, packed literals in symbols
    let chain = (out.iter())
        .map(|(e, _)| {
            let rans = |k: usize| e.lanes[k] != LANES_RAW && !is_two_bit(e.lanes[k]);
            let n = std::array::from_fn(|k| {
                let w = if k == STREAM_LITERALS {
                    literal_width
                } else {
                    1
                };
                rans(k).then(|| (e.decoded_len[k] as usize).div_ceil(w))
            });
            let lanes = std::array::from_fn(|k| if rans(k) { e.lanes[k] as usize } else { 0 });
            entropy::warp_chain(&n, &lanes)
        })
        .max()
        .unwrap_or(0);
    GroupOut {
        tables: table_bytes,
        blocks: out,
        chain,
        packable: wide && !force_pack && widest_width as usize > literal_width,
        two_bit_alt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{meta_checksum, table_cache_budget, Archive, HEADER_SIZE};

    #[test]
    fn targets_lower_to_the_format_choices() {
        let size = Options::new().settings();
        assert!(!size.raw_match_streams && !size.wide_lanes);
        assert_eq!(size.two_bit, TwoBit::Smaller);
        assert_eq!(size.level, 6);
        let gpu = Options::new().with_target(Target::Gpu).settings();
        assert!(gpu.raw_match_streams && gpu.wide_lanes);
        assert_eq!(gpu.two_bit, TwoBit::MostBlocks);
        // levels 8-9 keep entropy-coded match streams under the GPU target
        let gpu9 = Options::new()
            .with_target(Target::Gpu)
            .with_level(9)
            .settings();
        assert!(!gpu9.raw_match_streams && !gpu9.wide_lanes);
        assert_eq!(gpu9.two_bit, TwoBit::MostBlocks);
        assert!(gpu9.validate().is_ok());
        assert!(Options::new().tries_min_match());
        assert!(!Options::new().with_target(Target::Gpu).tries_min_match());
        assert!(Options::new()
            .with_target(Target::Gpu)
            .with_level(8)
            .tries_min_match());
        assert!(!Options::new().with_min_match(Some(6)).tries_min_match());
    }
    use crate::gpu::tokens::Rng;

    /// `n` random bases with a 40-byte copy every 997 bytes (matches for the parser).
    fn dna_with_repeats(seed: u64, n: usize) -> Vec<u8> {
        let mut r = Rng::new(seed);
        let mut data: Vec<u8> = (0..n).map(|_| b"ACGT"[r.below(4) as usize]).collect();
        for i in (0..data.len() - 64).step_by(997) {
            data.copy_within(i..i + 40, i + 50);
        }
        data
    }

    /// `data` compressed at level 6 without and with an option (`with(false)`, `with(true)`
    /// give the options' other fields).
    fn level6_pair(data: &[u8], with: impl Fn(bool) -> Settings) -> [Vec<u8>; 2] {
        [false, true].map(|on| {
            let opts = Settings {
                level: 6,
                ..with(on)
            };
            crate::encode::compress_settings(data, &opts, &|_| {}).unwrap()
        })
    }

    /// Bytes of the expanded tables `a` keeps.
    fn cached_bytes(a: &Archive<'_>) -> u64 {
        (a.tables.iter().flatten().flatten())
            .filter_map(|t| t.expanded.get())
            .map(|t| std::mem::size_of_val::<[DecodeTable]>(t) as u64)
            .sum()
    }

    /// The expanded tables an archive keeps stay within its budget ([`table_cache_budget`]);
    /// past it a table is expanded for each use, and the decode is the same.
    #[test]
    fn table_cache_stays_within_its_budget() {
        // six table groups (1 MiB of output each) of DNA-like bytes with some repeats
        let data = dna_with_repeats(0x007A_B1E5, 6 << 20);
        let opts = Settings {
            block_size: 4096,
            ..Default::default()
        };
        let packed = crate::encode::compress_settings(&data, &opts, &|_| {}).unwrap();
        // what a decode uses with no limit: the literal and command tables of the six groups
        let a = Archive::parse(&packed).unwrap();
        assert_eq!(a.tables.len(), 6);
        a.table_cache_left.store(u64::MAX, Ordering::Relaxed);
        assert!(crate::decode::decompress(&a).unwrap() == data);
        let used = cached_bytes(&a);
        assert!(used >= 6 * 2 * 16384, "{used}");
        let default = table_cache_budget(data.len() as u64);
        assert!(default >= used);
        let mut kept_by = Vec::new();
        for budget in [0, used / 6, used / 2, default] {
            let a = Archive::parse(&packed).unwrap();
            a.table_cache_left.store(budget, Ordering::Relaxed);
            let mut kept = Vec::new();
            for _ in 0..2 {
                assert!(crate::decode::decompress(&a).unwrap() == data, "{budget}");
                let k = cached_bytes(&a);
                assert!(k <= budget, "{k} > {budget}");
                assert_eq!(k + a.table_cache_left.load(Ordering::Relaxed), budget);
                kept.push(k);
            }
            kept_by.push(kept[1]);
        }
        assert_eq!(kept_by[0], 0);
        assert!(kept_by[1] > 0 && kept_by[2] > kept_by[1], "{kept_by:?}");
        // the default budget keeps every table a decode uses
        assert_eq!(kept_by[3], used);
    }

    /// `raw_match_streams`: every slice but the literals' stored raw, and the literal slice
    /// of a block of at least 32 * 256 literals on all 32 lanes (FORMAT.md §5.5: one lane per
    /// 256 literals at level 6, at most 32, nothing else in the warp); without it the command
    /// slice takes lanes beside the literals'.
    #[test]
    fn raw_match_streams_leave_the_warp_to_the_literals() {
        let data = dna_with_repeats(0x4A3_5EED, 2 << 20);
        let [coded, raw] = level6_pair(&data, |raw_match_streams| Settings {
            raw_match_streams,
            ..Default::default()
        });
        let (coded, raw) = (
            Archive::parse(&coded).unwrap(),
            Archive::parse(&raw).unwrap(),
        );
        assert!(crate::decode::decompress(&raw).unwrap() == data);
        let literal_lanes = |a: &Archive<'_>| -> Vec<u8> {
            (a.entries.iter())
                .filter(|e| e.decoded_len[STREAM_LITERALS] >= 32 * 256)
                .map(|e| e.lanes[STREAM_LITERALS])
                .collect()
        };
        let lanes = literal_lanes(&raw);
        assert!(
            lanes.len() > 100 && lanes.iter().all(|&l| l == 32),
            "{lanes:?}"
        );
        for e in &raw.entries {
            assert!(e.decoded_len[STREAM_COMMANDS] > 0);
            assert!(e.lanes[STREAM_LITERALS + 1..]
                .iter()
                .all(|&l| l == LANES_RAW));
        }
        assert!(literal_lanes(&coded).iter().all(|&l| l < 32));
        assert!(raw.data.len() > coded.data.len());
    }

    /// `wide_lanes` (with raw match streams): the long literal slices take 64 lanes (wide
    /// slices, FORMAT.md §5.4) in a format-1 archive that decodes to the input; the same
    /// archive relabelled as the pre-release version 7 (meta checksum resealed) is refused
    /// naming that version (§2); without `raw_match_streams` the option is refused.
    #[test]
    fn wide_lanes_write_wide_slices_and_pre_release_versions_are_refused() {
        // soft-masked runs: 8 letters, two per packed symbol, ~250-step chains on 32 lanes
        let mut data = dna_with_repeats(0x0DD_5EED, 2 << 20);
        for (i, b) in data.iter_mut().enumerate() {
            if (i / 3000) % 2 == 1 {
                b.make_ascii_lowercase();
            }
        }
        let opts = |wide_lanes| Settings {
            level: 6,
            raw_match_streams: true,
            wide_lanes,
            ..Default::default()
        };
        let narrow = crate::encode::compress_settings(&data, &opts(false), &|_| {}).unwrap();
        let mut wide = crate::encode::compress_settings(&data, &opts(true), &|_| {}).unwrap();
        assert_eq!(u16::from_le_bytes([narrow[4], narrow[5]]), 1);
        assert_eq!(u16::from_le_bytes([wide[4], wide[5]]), 1);
        assert!(!Archive::parse(&narrow)
            .unwrap()
            .entries()
            .iter()
            .any(BlockEntry::has_wide_slice));
        {
            let a = Archive::parse(&wide).unwrap();
            assert!(crate::decode::decompress(&a).unwrap() == data);
            // packed DNA: ~8,000 symbols a 16 KiB block, 250 steps on 32 lanes, 125 on 64
            let long: Vec<u8> = (a.entries.iter())
                .filter(|e| e.decoded_len[STREAM_LITERALS] >= 15000)
                .map(|e| e.lanes[STREAM_LITERALS])
                .collect();
            assert!(
                long.len() > 100 && long.iter().all(|&l| l == 64),
                "{long:?}"
            );
            assert!(wide.len() > narrow.len());
        }
        wide[4..6].copy_from_slice(&7u16.to_le_bytes());
        let h: FileHeader = bytemuck::pod_read_unaligned(&wide[..HEADER_SIZE]);
        let end = HEADER_SIZE
            + crate::format::entry::packed_size(&h.entry_bits) * h.block_count as usize
            + h.table_bytes as usize;
        let sum = meta_checksum(
            &h,
            &wide[HEADER_SIZE..end - h.table_bytes as usize],
            &wide[end - h.table_bytes as usize..end],
            &[],
        );
        wide[META_CHECKSUM_OFFSET..META_CHECKSUM_OFFSET + 8].copy_from_slice(&sum.to_le_bytes());
        let err = Archive::parse(&wide)
            .err()
            .expect("a pre-release version is refused")
            .to_string();
        assert!(
            err.contains("format version 7 is a pre-release version"),
            "{err}"
        );
    }

    /// Inputs of more than [`WIDE_MAX_BLOCKS`] blocks are written without wide slices (at
    /// 4 KiB blocks, so that the input stays small): one block more than the limit gives an
    /// archive without wide slices, the limit itself one with them.
    #[test]
    fn wide_lanes_stop_past_the_block_limit() {
        let mut data = dna_with_repeats(0xB10C_5EED, (WIDE_MAX_BLOCKS + 1) * 4096);
        for (i, b) in data.iter_mut().enumerate() {
            if (i / 3000) % 2 == 1 {
                b.make_ascii_lowercase();
            }
        }
        let opts = Settings {
            level: 1,
            block_size: 4096,
            raw_match_streams: true,
            wide_lanes: true,
            ..Default::default()
        };
        let wide = |n: usize| {
            let a = crate::encode::compress_settings(&data[..n], &opts, &|_| {}).unwrap();
            let a = Archive::parse(&a).unwrap();
            a.entries().iter().any(BlockEntry::has_wide_slice)
        };
        assert!(wide(WIDE_MAX_BLOCKS * 4096));
        assert!(!wide(WIDE_MAX_BLOCKS * 4096 + 1));
    }

    /// With wide lanes, a single-sequence FASTA file whose header (`>chrX`) brings 5 letters
    /// into its first block: without the repack pass its first group packs two letters a
    /// symbol (10 letters, FORMAT.md §5.6) and the others three (`\nACGT`); with it the first
    /// group packs three as well, the header's block stored raw (`repack_longest_groups`).
    #[test]
    fn wide_lanes_repack_a_fasta_headers_group_three_letters_a_symbol() {
        let dna = dna_with_repeats(0xFA57_A5EE, 8 << 20);
        let mut data = b">chrX\n".to_vec();
        for line in dna.chunks(60) {
            data.extend_from_slice(line);
            data.push(b'\n');
        }
        let [narrow, wide] = level6_pair(&data, |wide_lanes| Settings {
            raw_match_streams: true,
            wide_lanes,
            ..Default::default()
        });
        let (narrow, wide) = (
            Archive::parse(&narrow).unwrap(),
            Archive::parse(&wide).unwrap(),
        );
        let g = narrow.header.group_blocks as usize;
        assert!(narrow.block_count() > 4 * g);
        // the control: the header's letters keep the first group at two a symbol
        assert_eq!(narrow.literal_width(1), 2);
        assert_eq!(narrow.literal_width(g), 3);
        assert_ne!(narrow.entries[0].lanes[STREAM_LITERALS], LANES_RAW);
        // repacked: three a symbol everywhere, block 0's literals raw
        assert!((0..wide.block_count()).all(|b| wide.literal_width(b) == 3));
        assert_eq!(wide.entries[0].lanes[STREAM_LITERALS], LANES_RAW);
        assert_eq!(
            wide.entries[0].stored_len[STREAM_LITERALS],
            wide.entries[0].decoded_len[STREAM_LITERALS]
        );
        assert!(crate::decode::decompress(&wide).unwrap() == data);
    }

    /// A group of one block whose literal slice is a two-bit slice of 10 bytes (then 5 bytes
    /// of a 4-lane command slice), where its rANS slice was `other` bytes on 4 lanes.
    fn two_bit_group(other: usize) -> GroupOut {
        let mut e = BlockEntry::zeroed();
        e.lanes = [LANES_TWO_BIT, 0, 0, 4, 0];
        e.stored_len = [10, 0, 0, 5, 0];
        e.decoded_len = [40, 0, 0, 5, 0];
        GroupOut {
            tables: Vec::new(),
            blocks: vec![(e, [[2u8; 10].as_slice(), &[3; 5]].concat())],
            chain: 0,
            packable: false,
            two_bit_alt: vec![(0, 4, vec![1; other])],
        }
    }

    /// `keep_two_bit_if_smaller`: a two-bit slice one byte shorter than its rANS slice does not
    /// pay for the lane code 127, which widens every entry's lane fields from 3 to 7 bits (20
    /// bits an entry): the rANS slice comes back; one 1,000 bytes shorter stays.
    #[test]
    fn two_bit_slices_stay_only_where_the_archive_shrinks() {
        let mut groups = vec![two_bit_group(11)];
        keep_two_bit_if_smaller(&mut groups);
        let (e, bytes) = &groups[0].blocks[0];
        assert_eq!(e.lanes[STREAM_LITERALS], 4);
        assert_eq!(e.stored_len[STREAM_LITERALS], 11);
        assert_eq!(*bytes, [[1u8; 11].as_slice(), &[3; 5]].concat());
        let mut groups = vec![two_bit_group(1010)];
        keep_two_bit_if_smaller(&mut groups);
        let (e, bytes) = &groups[0].blocks[0];
        assert_eq!(e.lanes[STREAM_LITERALS], LANES_TWO_BIT);
        assert_eq!(bytes.len(), 15);
    }

    /// A coded group for [`repack_longest_groups`]' tests: `bytes` of slices, chain `chain`.
    fn group(bytes: usize, chain: usize, packable: bool) -> GroupOut {
        GroupOut {
            tables: Vec::new(),
            blocks: vec![(BlockEntry::zeroed(), vec![0; bytes])],
            chain,
            packable,
            two_bit_alt: Vec::new(),
        }
    }

    /// The pass codes again only the packable groups above every other group's chain, and
    /// keeps the result only when the archive's longest chain drops for at most
    /// [`WIDE_REPACK_MAX_SHARE`] of the archive, all of them or none.
    #[test]
    fn repack_keeps_a_shorter_longest_chain_within_its_budget() {
        let chains = |g: &[GroupOut]| g.iter().map(|g| (g.chain, g.bytes())).collect::<Vec<_>>();
        // one long packable group of three: coded again, +0.5 % of 30,000 bytes: kept
        let mut g = vec![
            group(10_000, 130, true),
            group(10_000, 88, false),
            group(10_000, 90, false),
        ];
        repack_longest_groups(&mut g, |i| {
            assert_eq!(i, 0);
            group(10_150, 89, false)
        });
        assert_eq!(chains(&g), [(89, 10_150), (88, 10_000), (90, 10_000)]);
        // +2 %: over the budget, unchanged
        let mut g = vec![
            group(10_000, 130, true),
            group(10_000, 88, false),
            group(10_000, 90, false),
        ];
        repack_longest_groups(&mut g, |_| group(10_600, 89, false));
        assert_eq!(chains(&g), [(130, 10_000), (88, 10_000), (90, 10_000)]);
        // two long packable groups, one of which stays long: none kept
        let mut g = vec![
            group(10_000, 130, true),
            group(10_000, 88, false),
            group(10_000, 131, true),
        ];
        repack_longest_groups(&mut g, |i| match i {
            0 => group(10_010, 89, false),
            2 => group(10_010, 131, false),
            _ => unreachable!("group {i} is not above the others"),
        });
        assert_eq!(chains(&g), [(130, 10_000), (88, 10_000), (131, 10_000)]);
        // the longest group cannot be repacked: nothing is coded again
        let mut g = vec![group(10_000, 130, true), group(10_000, 140, false)];
        repack_longest_groups(&mut g, |i| unreachable!("group {i} coded again"));
        assert_eq!(chains(&g), [(130, 10_000), (140, 10_000)]);
    }
}
