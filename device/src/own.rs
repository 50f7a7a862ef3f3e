//! The blocks the dense kernel decodes from the archive's data section alone, without the
//! rANS stage (`dense/`, `decode_blocks_dense_sc`):
//! two-bit literals (FORMAT.md §5.7) and raw match streams. Shared by the rANS stage (which
//! leaves them), the dense kernel (which takes them) and the host (which counts them to
//! choose its launches), so that all three agree block for block.

use crate::dense_layout::{CMD_REGION, LIT_CAP, THREADS};
use crate::format::{
    BlockEntry, LANES_RAW, LANES_TWO_BIT, LANES_TWO_BIT_RUNS, STREAM_COMMANDS, STREAM_COUNT,
    STREAM_LITERALS,
};

/// Where block entry `e`'s match streams (lengths, offsets, commands, offset tails, stored
/// after its literal slice and in that order: FORMAT.md §3.2) begin in the data section of
/// `data_len` bytes, when the block's data offset is `off()` (asked only for a block whose
/// match streams are raw: a load on the GPU) and each of them is a raw slice
/// (`lanes == 0`, `stored == decoded`, as `compress --target gpu` writes them) and
/// their one range `[from, from + sum of their lengths)` lies inside the data section (so
/// does the literal slice before it); `None` otherwise. Such a block's match layer needs
/// nothing from the rANS stage: the dense kernel loads and parses it before the block's
/// hand-off (`dense/`, `early_match_streams`).
#[inline(always)]
pub fn raw_match_streams_at(
    e: &BlockEntry,
    off: impl FnOnce() -> u64,
    data_len: u64,
) -> Option<u64> {
    let mut n = 0u64;
    for k in STREAM_LITERALS + 1..STREAM_COUNT {
        if e.lanes[k] != LANES_RAW || e.stored_len[k] != e.decoded_len[k] {
            return None;
        }
        n += e.stored_len[k] as u64;
    }
    let from = off().checked_add(e.stored_len[STREAM_LITERALS] as u64)?;
    (from <= data_len && n <= data_len - from).then_some(from)
}

/// Most bytes of a two-bit literal slice before its codes (symbols, counts, exception values
/// and varints, FORMAT.md §5.7) in a block the dense kernel decodes alone ([`own_slice`]):
/// two per thread, so that each thread of the CTA parses two of them and holds at most two
/// exceptions (`dense/`, `expand_own_literals`). A 16 KiB block of FASTA with 60 bases a
/// line has ~270 line feeds, one varint byte each.
pub const OWN_PRE_CAP: u64 = 2 * THREADS as u64;

/// The shared-memory copy of a self-contained block's literal slice ([`own_slice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnSlice {
    /// The data-section offset the copy starts at: the slice's, rounded down to 16.
    pub from16: u64,
    /// 16-byte words copied (from `from16` to the slice's end, rounded up).
    pub words: u32,
    /// Where the copy goes: in 16-byte words from the command region's start, at the region's
    /// end (after the block's commands).
    pub dst16: u32,
    /// The slice's first byte in the copy: a byte offset from the command region's start.
    pub at: u32,
}

/// Whether a block of `n` literals, `commands` command bytes and raw match streams whose
/// literal slice of `stored` bytes is a slice with runs (FORMAT.md §5.8) is one the dense
/// kernel decodes alone ([`own_slice`]) wherever its data offset falls: the encoder's test
/// before it writes one.
pub fn runs_slice_fits(n: u64, stored: u64, commands: u64) -> bool {
    // (own_slice's copy: from the offset rounded down to 16, at most 15 bytes more)
    let words = (15 + stored).div_ceil(16);
    (1..=LIT_CAP as u64).contains(&n)
        && stored >= 4 + 2
        && words + commands.div_ceil(16) <= (CMD_REGION / 16) as u64
}

/// Whether the dense kernel decodes block entry `e` (data offset `off`, in a data section of
/// `data_len` bytes) from the data section alone, without the rANS stage (`dense/`,
/// `decode_blocks_dense_sc`), and where its literal slice then goes in shared memory: a
/// two-bit literal slice (FORMAT.md §5.7) of `1..=LIT_CAP` literals with room for its counts
/// and at most [`OWN_PRE_CAP`] bytes before its codes, or a slice with runs (§5.8) of
/// `1..=LIT_CAP` literals and room for its symbols and counts; raw match streams inside the
/// data section ([`raw_match_streams_at`]); and the slice's copy fits in the command region
/// after the commands (where the parse leaves it alone; the literals take the region after
/// the parse). One function for the rANS stage, the dense kernel and the host, so that the
/// blocks the stage leaves are exactly those the dense kernel takes, and the host's count of
/// them (its launch choices) is theirs.
#[inline(always)]
pub fn own_slice(e: &BlockEntry, off: u64, data_len: u64) -> Option<OwnSlice> {
    let runs = match e.lanes[STREAM_LITERALS] {
        LANES_TWO_BIT => false,
        LANES_TWO_BIT_RUNS => true,
        _ => return None,
    };
    raw_match_streams_at(e, || off, data_len)?;
    let n = e.decoded_len[STREAM_LITERALS] as u64;
    let stored = e.stored_len[STREAM_LITERALS] as u64;
    let m = n.div_ceil(4);
    // (two varints of at least a byte after the symbols: FORMAT.md §5.7, §5.8)
    let short = match runs {
        false => stored < 4 + 2 + m || stored - m > OWN_PRE_CAP,
        true => stored < 4 + 2,
    };
    if n == 0 || n > LIT_CAP as u64 || short {
        return None;
    }
    let from16 = off & !15;
    let words = (off - from16 + stored).div_ceil(16);
    let region16 = (CMD_REGION / 16) as u64;
    let cmd16 = (e.decoded_len[STREAM_COMMANDS] as u64).div_ceil(16);
    if words + cmd16 > region16 {
        return None;
    }
    let dst16 = region16 - words;
    Some(OwnSlice {
        from16,
        words: words as u32,
        dst16: dst16 as u32,
        at: (dst16 * 16 + (off - from16)) as u32,
    })
}
