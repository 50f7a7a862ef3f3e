//! Interleaved static rANS, decode side (FORMAT.md §5), shared by the CPU decoder and kernels.
//!
//! A slice coded with `lanes` lanes stores `lanes` little-endian `u32` states, then 16-bit
//! little-endian renormalisation words. Symbol `i` belongs to lane `i % lanes`; decoding walks
//! `i = 0..n` in order and a lane whose state drops below [`RANS_L`] takes the next word. So
//! one warp decodes a slice with lane `j` on thread `j`, taking words in lane order. A wide
//! slice (33 to 64 lanes, FORMAT.md §5.4) has a `u32` word count after its states and two
//! word areas, lanes 0-31's and the others' ([`read_states`], [`word_area`]), so that two
//! warps decode it side by side.

use crate::format::{
    DecodeTable, MAX_LANES, MAX_PACK_WIDTH, PACK_WIDTH_SLOT, PROB_BITS, PROB_SCALE, RANS_L,
    STREAM_COUNT, WARP_LANES,
};
use crate::status::Status;

pub use crate::rans_launch::{
    KERNEL_CTAS_PER_SM, KERNEL_MAX_WARPS, KERNEL_NARROW_WARPS, KERNEL_SOLO_WARPS,
};

/// Bytes per lane the GPU rANS stage loads before storing them when it copies a raw slice
/// byte by byte (`dense/`, `copy_raw_slice_bytes`, every entry point but
/// `rans_decode_slices_two_bit`): one memory latency per `32 * RAW_COPY_UNROLL` bytes of the slice
/// (`gpu::schedule::rans_block_steps` counts its steps so). 8 made the context kernel spill.
pub const RAW_COPY_UNROLL: usize = 4;

/// 16-byte words per lane the two-bit entry point of the GPU rANS stage
/// (`rans_decode_slices_two_bit`) loads before storing them when it copies a raw slice (`dense/`, `copy_raw_slice`): one memory
/// latency per `32 * 16 * RAW_COPY_WORDS` bytes. Four registers each.
pub const RAW_COPY_WORDS: usize = 4;

/// Most tables the GPU rANS stage stages in shared memory per round: the first table of
/// each stream, then the second (context-1) table of the literal and the command streams,
/// the two streams whose group tables take a context bit where one pays (`dense/`,
/// `staged_slot`); a second table of another stream is read from global memory. The host
/// stages the seconds only for archives that have such pairs (the kernel's `staged` argument):
/// 112 KiB of shared memory per CTA leaves L1 a third of the room that 80 KiB leaves, and
/// the stage is bound by L1 traffic (measured slower: see docs/PERFORMANCE.md).
pub const KERNEL_STAGED_TABLES: usize = STREAM_COUNT + 2;

/// Most dynamic shared memory of the GPU rANS stage: [`KERNEL_STAGED_TABLES`] decode tables
/// and an expansion table (113 KiB; two CTAs per SM). Without context pairs it takes
/// [`STREAM_COUNT`] tables (80 KiB), and with pairs of warps their status slots
/// ([`KERNEL_PAIR_BYTES`]).
pub const KERNEL_SMEM_BYTES: usize =
    KERNEL_STAGED_TABLES * core::mem::size_of::<DecodeTable>() + KERNEL_EXPAND_BYTES;

/// Dynamic shared memory of the GPU rANS stage's per-pair status slots, after its tables
/// (`dense/`, `pair_slots`): one `u64` per pair of warps, for archives with wide slices
/// (FORMAT.md §5.4: two warps per block). [`KERNEL_SMEM_BYTES`] leaves them no room beside
/// all its tables (two CTAs per SM use an H200 SM's 228 KiB to the byte with the driver's
/// 1 KiB per CTA), so the host stages the context pairs' second tables only without pairs
/// of warps or without an expansion table (`gpu::decoder`, `GpuArchive::upload`).
/// Sized for the largest CTA of any rANS entry point ([`KERNEL_SOLO_WARPS`]).
pub const KERNEL_PAIR_BYTES: usize = 8 * (KERNEL_SOLO_WARPS as usize / 2);

const _: () = assert!(
    KERNEL_STAGED_TABLES * core::mem::size_of::<DecodeTable>() + KERNEL_PAIR_BYTES
        <= KERNEL_SMEM_BYTES
);
// the pairs' named barriers: ids 1 ..= warps / 2 of the 16 (0 is the CTA's)
const _: () = assert!(KERNEL_MAX_WARPS <= KERNEL_SOLO_WARPS);
const _: () = assert!(KERNEL_SOLO_WARPS / 2 <= 15);

/// Bytes of slack the GPU rANS stage needs after each decoded slice in its scratch (the
/// host pads every slot by at least this): packed literals are stored in 4-byte words, the
/// last of which may reach up to 3 bytes past the slice (`dense/`, FORMAT.md §5.6).
pub const KERNEL_SLOT_SLACK: u64 = 4;

/// Shared memory the GPU rANS stage takes after its staged tables for a packed literal
/// table's expansion slots (256 `u32`, FORMAT.md §5.6) when the archive has packed groups.
pub const KERNEL_EXPAND_BYTES: usize = 256 * 4;

/// The decode tables of one stream of one group (FORMAT.md §5.2, §5.4, §5.6): one table, or
/// (a kind-2 table record) two and a context bit: the symbol a lane decodes uses
/// `tables[c]`, where `c` is bit `ctx_bit` of the symbol the same lane decoded before it
/// (`c = 0` for each lane's first symbol); or (a kind-3 record) one table whose
/// symbols each stand for `w` literals, expanded by `pack`.
#[derive(Clone, Copy)]
pub struct SliceTables<'a> {
    /// One table, or two (context 0 and 1) side by side.
    pub tables: &'a [DecodeTable],
    /// Bit of the lane's previous symbol that picks the table (0-7, FORMAT.md §5.2; every
    /// decoder reads it modulo 8, so a value above 7 from the public fields cannot make two
    /// decoders differ; unused with one table).
    pub ctx_bit: u32,
    /// Packed literals (FORMAT.md §5.6): the expansion table (slots `0..256`: symbol `s`'s
    /// literals, the first in the low byte; slot [`PACK_WIDTH_SLOT`]: the width `w`), or
    /// `None`: one symbol per decoded byte.
    pub pack: Option<&'a DecodeTable>,
}

impl<'a> SliceTables<'a> {
    /// A single table (no context).
    #[inline(always)]
    pub fn single(t: &'a DecodeTable) -> SliceTables<'a> {
        SliceTables {
            tables: core::slice::from_ref(t),
            ctx_bit: 0,
            pack: None,
        }
    }

    /// Literals per symbol: the pack width (2-4, FORMAT.md §5.6), or 1.
    #[inline(always)]
    pub fn width(&self) -> usize {
        self.pack.map_or(1, pack_width_of)
    }

    /// Symbols a slice that decodes to `n` bytes holds: `ceil(n / width)`.
    #[inline(always)]
    pub fn symbols(&self, n: usize) -> usize {
        n.div_ceil(self.width())
    }

    /// True for a context pair.
    #[inline(always)]
    pub fn has_context(&self) -> bool {
        self.tables.len() == 2
    }

    /// The table for a symbol whose lane decoded `prev` before it (0 for the lane's first).
    #[inline(always)]
    pub fn pick(&self, prev: u8) -> &'a DecodeTable {
        if self.has_context() && (prev >> (self.ctx_bit & 7)) & 1 == 1 {
            &self.tables[1]
        } else {
            &self.tables[0]
        }
    }
}

/// The pack width of an expansion table (its slot [`PACK_WIDTH_SLOT`], which the host
/// builds as 2-4; clamped to `1..=MAX_PACK_WIDTH` so that no table can make a decoder
/// write outside its slice).
#[inline(always)]
pub fn pack_width_of(expand: &DecodeTable) -> usize {
    expand.slots[PACK_WIDTH_SLOT].clamp(1, MAX_PACK_WIDTH) as usize
}

/// Expands packed literals in place (FORMAT.md §5.6): `out[..ceil(n / w)]` holds the
/// symbols of a slice that decodes to `n = out.len()` literals; afterwards `out` holds the
/// literals (symbol `j` gives literals `w * j .. w * j + w`, the last symbol's beyond `n`
/// dropped). Back to front, so no symbol is overwritten before it is read (`w * j >= j`).
pub fn expand_in_place(out: &mut [u8], expand: &DecodeTable) {
    let w = pack_width_of(expand);
    let n = out.len();
    for j in (0..n.div_ceil(w)).rev() {
        let lits = expand.slots[out[j] as usize].to_le_bytes();
        let at = w * j;
        let take = w.min(n - at);
        out[at..at + take].copy_from_slice(&lits[..take]);
    }
}

/// The next round of a GPU warp that decodes a block's rANS slices side by side
/// (`dense/`, `decode_slices`): of the slices in `left` (bit `k` = stream `k`), largest lane
/// count first (the lowest stream on a tie), every one that still fits in the warp's 32
/// lanes; with `separate` set, never a slice of `ctxs` (context pairs) and one of `packs`
/// (packed literals) in one round, since no kernel holds a step variant for both. A slice of
/// more than [`WARP_LANES`] lanes (a wide slice) is a round of its own, which the
/// block's two warps share (FORMAT.md §5.4). `lanes_of` holds the lane counts, one byte per stream. Returns the round's slices
/// (empty when `left` is). The host's chain estimate ([`warp_steps`]) and the encoder's lane
/// choice run the same rounds.
#[inline(always)]
pub fn warp_round(left: u32, lanes_of: u64, ctxs: u32, packs: u32, separate: bool) -> u32 {
    let mut round = 0u32;
    let mut free = WARP_LANES as u32;
    loop {
        let mut best = STREAM_COUNT;
        let mut best_lanes = 0u32;
        for i in 0..STREAM_COUNT {
            let l = ((lanes_of >> (8 * i)) & 0xFF) as u32;
            let with = round | (1 << i);
            let mixed = separate && with & ctxs != 0 && with & packs != 0;
            // an empty round takes any slice (a wide one fills it)
            let fits = l <= free || round == 0;
            if (left & !round) & (1 << i) != 0 && fits && l > best_lanes && !mixed {
                best = i;
                best_lanes = l;
            }
        }
        if best == STREAM_COUNT {
            return round;
        }
        round |= 1 << best;
        free = free.saturating_sub(best_lanes);
    }
}

/// Whether the round `round` of [`warp_round`] is one slice of more than [`WARP_LANES`]
/// lanes (a wide slice, FORMAT.md §5.4: a block's two warps each decode half its lanes),
/// given the lane counts `lanes_of`.
#[inline(always)]
pub fn wide_round(round: u32, lanes_of: u64) -> bool {
    let mut wide = false;
    for i in 0..STREAM_COUNT {
        if round & (1 << i) != 0 && ((lanes_of >> (8 * i)) & 0xFF) as u32 > WARP_LANES as u32 {
            wide = true;
        }
    }
    wide
}

/// Steps of a GPU warp's rANS rounds on one block: `lanes[k]` lanes (0: stream `k` has no
/// rANS slice) for `symbols[k]` symbols; rounds as [`warp_round`] forms them (without the
/// context/packed separation, which needs the tables), each as long as its slowest slice,
/// `ceil(symbols / lanes)` (a wide slice's, more than [`WARP_LANES`] lanes, is decoded by
/// two warps side by side, each taking that many steps). A lane count above [`MAX_LANES`] is
/// taken as [`MAX_LANES`].
pub fn warp_steps(symbols: [u32; STREAM_COUNT], lanes: [u32; STREAM_COUNT]) -> u32 {
    warp_part_steps(symbols, lanes, 1)[0]
}

/// Steps of each of `parts` warps if they shared a block's rANS rounds, round `r` to warp
/// `r % parts` (the rounds as [`warp_steps`] forms them; each warp's steps the sum of its
/// rounds'). No kernel runs this layout yet: `examples/rans_chains.rs` prints what it would
/// give. `parts` 0 is taken as 1; a block has at most
/// [`STREAM_COUNT`] rounds, so the warps from the `STREAM_COUNT`-th on would have none.
pub fn warp_part_steps(
    symbols: [u32; STREAM_COUNT],
    lanes: [u32; STREAM_COUNT],
    parts: u32,
) -> [u32; STREAM_COUNT] {
    let parts = parts.max(1);
    let mut lanes_of = 0u64;
    let mut left = 0u32;
    let lanes = lanes.map(|l| l.min(MAX_LANES as u32));
    for (k, &l) in lanes.iter().enumerate() {
        lanes_of |= (l as u64) << (8 * k);
        if l > 0 {
            left |= 1 << k;
        }
    }
    let mut steps = [0u32; STREAM_COUNT];
    let mut r = 0u32;
    while left != 0 {
        let round = warp_round(left, lanes_of, 0, 0, false);
        let mut longest = 0u32;
        for k in 0..STREAM_COUNT {
            if round & (1 << k) != 0 {
                longest = longest.max(symbols[k].div_ceil(lanes[k]));
            }
        }
        // r < STREAM_COUNT: every round takes at least one slice (each has 1..=64 lanes)
        steps[(r % parts) as usize] += longest;
        r += 1;
        left &= !round;
    }
    steps
}

/// One rANS decode step on `x`: returns the symbol and updates `x` (before renormalisation).
#[inline(always)]
pub fn step(table: &DecodeTable, x: &mut u32) -> u8 {
    let e = slot_entry(table, *x);
    apply_entry(e, x)
}

/// The decode-table entry of state `x`'s slot (the first half of [`step`], so that a
/// decoder can issue the load before other work).
#[inline(always)]
pub fn slot_entry(table: &DecodeTable, x: u32) -> u32 {
    table.slots[(x & (PROB_SCALE - 1)) as usize]
}

/// The second half of [`step`]: with `e` = [`slot_entry`]`(table, *x)`, updates `x` (before
/// renormalisation) and returns the symbol.
#[inline(always)]
pub fn apply_entry(e: u32, x: &mut u32) -> u8 {
    let freq = ((e >> 8) & 0xFFF) + 1;
    *x = freq * (*x >> PROB_BITS) + (e >> 20);
    e as u8
}

/// Reads `lanes` initial states from the front of `slice`; returns them and the word areas:
/// the slice's words, or for a wide slice (more than [`WARP_LANES`] lanes, FORMAT.md §5.4)
/// the words of lanes `0..32` and those of lanes `32..lanes` (the second area is empty for
/// other slices).
///
/// Errors: [`Status::RansHeader`] when the slice is too short, a word area has odd length or
/// a wide slice's first area does not fit, or a state is below [`RANS_L`];
/// [`Status::SliceMode`] when `lanes` is not `1..=MAX_LANES`.
#[inline]
#[allow(clippy::type_complexity)]
pub fn read_states(
    slice: &[u8],
    lanes: usize,
) -> Result<([u32; MAX_LANES as usize], [&[u8]; 2]), Status> {
    if lanes == 0 || lanes > MAX_LANES as usize {
        return Err(Status::SliceMode);
    }
    let wide = lanes > WARP_LANES as usize;
    // a wide slice's states are followed by the first area's word count, a u32
    let head = lanes * 4 + if wide { 4 } else { 0 };
    if slice.len() < head || !(slice.len() - head).is_multiple_of(2) {
        return Err(Status::RansHeader);
    }
    let mut states = [0u32; MAX_LANES as usize];
    for (j, s) in states.iter_mut().enumerate().take(lanes) {
        let b = &slice[j * 4..j * 4 + 4];
        *s = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if *s < RANS_L {
            return Err(Status::RansHeader);
        }
    }
    let words = &slice[head..];
    if !wide {
        return Ok((states, [words, &[]]));
    }
    let b = &slice[lanes * 4..lanes * 4 + 4];
    let first = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    if first > words.len() / 2 {
        return Err(Status::RansHeader);
    }
    let (a, b) = words.split_at(2 * first);
    Ok((states, [a, b]))
}

/// The word area of lane `j` of a slice of `lanes` lanes (FORMAT.md §5.4): 0, or for a wide
/// slice 1 from lane [`WARP_LANES`] on.
#[inline(always)]
pub fn word_area(j: usize) -> usize {
    j / WARP_LANES as usize
}

/// Decodes a whole rANS slice into `out` (its length is the decoded length).
///
/// Fails closed: every word must be consumed and every lane must end in state [`RANS_L`],
/// which the encoder starts from, so most corruptions are caught even in a raw-looking stream.
/// With a context pair (`tables`, FORMAT.md §5.4) each lane's symbol picks its table by the
/// lane's previous symbol; with packed literals (§5.6) the slice holds `ceil(n / w)`
/// symbols, expanded into the `n` bytes of `out`.
pub fn decode_slice(
    slice: &[u8],
    lanes: usize,
    tables: SliceTables<'_>,
    out: &mut [u8],
) -> Result<(), Status> {
    let (mut states, words) = read_states(slice, lanes)?;
    // a word pointer per word area (one area but for a wide slice)
    let mut wp = [0usize; 2];
    let mut prev = [0u8; MAX_LANES as usize];
    let m = tables.symbols(out.len());
    let mut chunks = out[..m].chunks_mut(lanes);
    for chunk in &mut chunks {
        for (j, ((x, o), p)) in states
            .iter_mut()
            .zip(chunk.iter_mut())
            .zip(prev.iter_mut())
            .enumerate()
        {
            *o = step(tables.pick(*p), x);
            *p = *o;
            if *x < RANS_L {
                let (a, w) = (word_area(j), &mut wp[word_area(j)]);
                if *w >= words[a].len() / 2 {
                    return Err(Status::RansUnderflow);
                }
                let v = u16::from_le_bytes([words[a][2 * *w], words[a][2 * *w + 1]]) as u32;
                *x = (*x << 16) | v;
                *w += 1;
            }
        }
    }
    if (0..2).any(|a| wp[a] != words[a].len() / 2) || states[..lanes].iter().any(|&x| x != RANS_L) {
        return Err(Status::RansTrailer);
    }
    if let Some(t) = tables.pack {
        expand_in_place(out, t);
    }
    Ok(())
}
