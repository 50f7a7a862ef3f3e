//! Data shared by the host and the wavefront decoder's kernels (`wave.rs`): the parsed
//! segment of a block and the one argument block every wavefront kernel reads.
//!
//! The wavefront decoder (the paper's "one launch per dependency level in a CUDA
//! graph") runs: the rANS kernel; `wave_parse`, one thread per block, which walks the
//! block's commands with the shared rules ([`crate::lz::walk_block`]) into [`WaveSeg`]s and
//! gives every match its dependency level; `wave_scan` (per-level counts to offsets);
//! `wave_place`, which writes literal runs and buckets matches by level into
//! [`crate::format::CopyToken`]s; then one `wave_copy` launch per level, one warp per match.

use bytemuck::{Pod, Zeroable};

/// One command of a parsed block: a literal run or a match. 16 bytes.
///
/// Segments of a block are stored in output order and tile `[0, block_len)` exactly, so the
/// segment that wrote a byte is found by binary search on `start`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WaveSeg {
    /// Offset of the segment's first byte inside its block.
    pub start: u32,
    /// Bytes written (>= 1).
    pub len: u32,
    /// Literal run: offset of its first byte in the block's decoded literal stream.
    /// Match: the distance.
    pub arg: u32,
    /// 0 for a literal run; for a match, 1 + the largest level of the segments that wrote the
    /// bytes it reads (its first `min(len, dist)` source bytes): the wave that copies it.
    /// This is FORMAT.md §3.1's `max_depth` level plus one.
    pub level: u32,
}

/// Arguments of every wavefront kernel, uploaded once per decode (addresses are device
/// pointers as `u64`). 152 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WaveArgs {
    /// Decoded streams of every block (written by the rANS kernel), `decoded_len` bytes.
    pub decoded: u64,
    /// Bytes in `decoded`.
    pub decoded_len: u64,
    /// `4 * n_blocks` `u64`: where slice `4 * block + stream` starts in `decoded`.
    pub dec_offsets: u64,
    /// `n_blocks` [`crate::format::BlockEntry`]s.
    pub entries: u64,
    /// `n_blocks` `u64`: index of each block's first segment in `segs` (prefix sums of the
    /// blocks' command-stream lengths, an upper bound of their segment counts).
    pub seg_base: u64,
    /// `seg_total` [`WaveSeg`]s.
    pub segs: u64,
    /// Capacity of `segs` and of `tokens`.
    pub seg_total: u64,
    /// `n_blocks` `u32`: segments parsed per block (0 for a block that failed).
    pub seg_count: u64,
    /// `n_waves + 2` `u32`: matches per level (index = level), zeroed before the parse.
    pub level_count: u64,
    /// `n_waves + 2` `u32`: first token of each level in `tokens` (exclusive scan of counts).
    pub level_offset: u64,
    /// `n_waves + 2` `u32`: insertion cursors of `wave_place`.
    pub level_cursor: u64,
    /// `seg_total` [`crate::format::CopyToken`]s: matches grouped by level.
    pub tokens: u64,
    /// The output, `out_len` bytes.
    pub out: u64,
    /// Bytes of output (the archive's original size).
    pub out_len: u64,
    /// `n_blocks` status words.
    pub status: u64,
    /// One `u32`: the largest level seen by the parse (so the host can size the waves when
    /// the block table's `max_depth` hint was too small).
    pub max_level: u64,
    /// Blocks in the archive.
    pub n_blocks: u32,
    /// Block size in bytes.
    pub block_size: u32,
    /// Header `window` (largest distance).
    pub window: u32,
    /// Levels the graph has copy launches for (1..=n_waves); a match above it marks its block
    /// `Status::DepthHint`.
    pub n_waves: u32,
    /// The archive's match base (FORMAT.md §2).
    pub match_base: u32,
    /// Zero (keeps the size a multiple of 8).
    pub pad: u32,
}

const _: () = assert!(core::mem::size_of::<WaveSeg>() == 16);
const _: () = assert!(core::mem::size_of::<WaveArgs>() == 152);
