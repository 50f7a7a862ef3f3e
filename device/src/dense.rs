//! The dense full pipe: the rANS kernel (`rans_decode_slices`, one warp per block, two for an
//! archive with wide slices) decodes
//! every block's streams into a scratch buffer, then the dense kernel
//! (`decode_blocks_dense`, one CTA of `THREADS` threads per block at a time) assembles each
//! independent block in shared memory (layout in `dense_layout.rs`). On sm_90 the dense kernel
//! runs while the rANS kernel does and decodes each block as soon as its streams are
//! published (`handoff.rs`); a block whose match streams are raw slices and not yet published
//! when a CTA takes it is loaded from the archive's data section and parsed first, while the
//! rANS stage still decodes its literals, and waits for the hand-off only before stage 3
//! (`early_match_streams`; PERFORMANCE.md twenty-ninth session).
//!
//! 1. rANS: the block's rANS slices have their interleaved lanes packed side by side into
//!    the warp's lanes; renormalisation words are handed out in lane order by a ballot and
//!    a population count. The dense kernel loads the decoded streams but the literals (read
//!    from the scratch by stage 3) into shared memory and
//!    turns the varints into values (continuation bits -> ballot -> index of each varint):
//!    the lengths by warp 0; the distances (format v2: first bytes and one-byte tails in
//!    two streams) in chunks by the other seven warps, which first count the first bytes
//!    with a tail in their chunks, then join each first byte with its tail.
//! 2. Parse, by the whole CTA: each warp takes a chunk of the commands, 32 per step. Pass A
//!    counts varints per chunk, pass B gives each chunk's output and literal totals and its
//!    repeat-history map; then every lane classifies its command, prefix sums over the lanes
//!    (plus the chunk bases) give every command's output position, literal position and
//!    varint indices, and the repeat history is an exclusive scan of per-command slot maps
//!    (each slot of a map is a constant distance or a copy of an input slot; maps compose
//!    associatively; a step in which no command repeats slot 1-3 takes its history from
//!    its new matches alone, `push_only_map`). Each lane then writes one 16-bit pointer
//!    per output byte of its command: a literal index (top bit set) or the source
//!    position, period-aware for self-overlapping matches (`src + k % dist`), so no byte
//!    waits for another.
//! 3. Write: the literals are loaded into the command region (the parse is done with the
//!    commands); then every byte follows its own pointer chain to its literal, storing the
//!    literal pointer back in its slot when it took a hop (`write_memo`: the CTA sweeps the
//!    block upwards and pointers point down, so most chains end one hop into an already
//!    resolved byte, at any depth), and the CTA writes the block with 4-byte coalesced
//!    stores.
//!
//! Blocks larger than `DENSE_MAX_BLOCK` or whose streams exceed the region caps get status
//! `Fallback`; the host decodes those with the lane-per-block kernel.
//!
//! Self-contained blocks (`own.rs`: a two-bit literal slice, FORMAT.md §5.7, and raw match
//! streams, as `compress --raw-match-streams --two-bit-literals` writes them) need nothing
//! from the rANS stage: `decode_blocks_dense_sc` loads such a block's match streams and its
//! literal slice straight from the data section in stage 1 (the slice to the end of the
//! command region, `load_own_slice`), parses it, and expands the literals from that copy
//! after the parse (`expand_own_literals`), never waiting for a hand-off; the rANS stage
//! (`rans_decode_slices_two_bit` with `leave_self_contained`) skips those blocks. Where every
//! block is one and none can fall back, the host launches the dense kernel alone
//! (`gpu::launch::dense_alone`). PERFORMANCE.md thirty-first session.

use crate::dense_layout::*;
use crate::format::*;
use crate::handoff::{QUEUE_EPOCH, QUEUE_FALLBACK, QUEUE_READY, QUEUE_TICKET};
use crate::status::Status;
use core::arch::nvptx::*;

extern "C" {
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up_i32(mask: u32, val: i32, delta: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx_i32(mask: u32, val: i32, lane: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly_i32(mask: u32, val: i32, lanemask: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

const FULL: u32 = 0xFFFF_FFFF;

#[inline(always)]
fn ballot(p: bool) -> u32 {
    // SAFETY: called by all 32 lanes of the warp in uniform control flow.
    unsafe { vote_ballot(FULL, p) }
}

#[inline(always)]
fn shfl_up(v: u32, d: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0 clamps at lane 0 for shfl.up.
    unsafe { shfl_up_i32(FULL, v as i32, d, 0) as u32 }
}

#[inline(always)]
fn shfl(v: u32, lane: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0x1f is the full-warp clamp for shfl.idx.
    unsafe { shfl_idx_i32(FULL, v as i32, lane, 0x1F) as u32 }
}

#[inline(always)]
fn shfl_xor(v: u32, m: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0x1f is the full-warp clamp for shfl.bfly.
    unsafe { shfl_bfly_i32(FULL, v as i32, m, 0x1F) as u32 }
}

/// Synchronises the warp; orders the memory accesses of its lanes before the call before
/// those after it (`bar.warp.sync`).
#[inline(always)]
fn syncwarp() {
    // SAFETY: called by all 32 lanes of the warp in uniform control flow.
    unsafe { bar_warp_sync(FULL) }
}

#[inline(always)]
fn sync() {
    // SAFETY: every thread of the CTA reaches each call (block-uniform control flow).
    unsafe { _syncthreads() }
}

/// Reads byte `i` of a global buffer.
#[inline(always)]
unsafe fn gb(p: *const u8, i: usize) -> u8 {
    // SAFETY: the caller checked i against the slice length.
    unsafe { *p.add(i) }
}

/// Reads the little-endian `u32` at bytes `i..i + 4` of a global buffer (any alignment).
#[inline(always)]
unsafe fn gb_u32(p: *const u8, i: usize) -> u32 {
    // SAFETY: the caller checked i + 4 against the slice length.
    unsafe { u32::from_le_bytes([gb(p, i), gb(p, i + 1), gb(p, i + 2), gb(p, i + 3)]) }
}

/// Reads the little-endian 16-bit word at `p` (any alignment) of global memory as its two
/// bytes `(low, high)`, two byte loads that ask L2 to fetch 256 bytes on a miss
/// (`ld.global.L2::256B`): the rANS stage reads each slice's words once, front to back
/// (PERFORMANCE.md eighth session, run 2). The bytes stay apart until [`merge_word`].
///
/// # Safety
/// `p` and `p + 1` are readable bytes of global memory. (`p` is the generic address; on
/// NVIDIA GPUs the generic window maps global memory at the same addresses, which is what
/// LLVM's own `cvta.to.global` of a kernel parameter relies on too.)
#[inline(always)]
unsafe fn global_word_l2_256(p: *const u8) -> (u16, u16) {
    let (lo, hi): (u16, u16);
    // SAFETY: the caller's contract; the asm only loads the two bytes.
    unsafe {
        core::arch::asm!(
            "ld.global.L2::256B.u8 {lo}, [{p}];",
            "ld.global.L2::256B.u8 {hi}, [{p}+1];",
            p = in(reg64) p,
            lo = out(reg16) lo,
            hi = out(reg16) hi,
            options(pure, readonly, nostack, preserves_flags)
        )
    };
    (lo, hi)
}

/// The rANS renormalisation `(x << 16) | word` for the word's bytes `lo` and `hi` (each
/// below 256, from [`global_word_l2_256`]), in one asm block so that the first use of the
/// loaded bytes sits where the caller merges them: as Rust, LLVM joined the two bytes right
/// after their loads, so the warp waited there on the load before the rest of its step
/// (a packed symbol's expansion, two shuffles and its stores) instead of running that while
/// the load was in flight (PERFORMANCE.md seventeenth session).
#[inline(always)]
fn merge_word(x: u32, lo: u16, hi: u16) -> u32 {
    let out: u32;
    // SAFETY: register arithmetic only: t = lo | hi << 16, then bytes (t.0, t.2, x.0, x.1).
    unsafe {
        core::arch::asm!(
            "{{ .reg .b32 t;",
            "mov.b32 t, {{{lo}, {hi}}};",
            "prmt.b32 {out}, t, {x}, 0x5420; }}",
            lo = in(reg16) lo,
            hi = in(reg16) hi,
            x = in(reg32) x,
            out = out(reg32) out,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    out
}

/// Stores byte `v` at `p` of global memory without allocating the line in L1
/// (`st.global.L1::no_allocate`): the rANS stage's per-step symbol stores otherwise take L1
/// capacity and bandwidth from its word loads (PERFORMANCE.md eighth session, run 2).
///
/// # Safety
/// `p` is a writable byte of global memory that no other thread of the kernel accesses.
#[inline(always)]
unsafe fn global_store_no_l1(p: *mut u8, v: u8) {
    // SAFETY: the caller's contract; the asm only stores the byte.
    unsafe {
        core::arch::asm!(
            "st.global.L1::no_allocate.u8 [{p}], {v};",
            p = in(reg64) p,
            v = in(reg16) v as u16,
            options(nostack, preserves_flags)
        )
    };
}

/// Stores the 4-byte word `v` at `p` of global memory without allocating the line in L1
/// (as [`global_store_no_l1`]).
///
/// # Safety
/// `p` is a 4-aligned, writable word of global memory that no other thread of the kernel
/// accesses.
#[inline(always)]
unsafe fn global_store_no_l1_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract; the asm only stores the word.
    unsafe {
        core::arch::asm!(
            "st.global.L1::no_allocate.u32 [{p}], {v};",
            p = in(reg64) p,
            v = in(reg32) v,
            options(nostack, preserves_flags)
        )
    };
}

/// Block-level context shared by the stages.
struct Smem {
    base: *mut u8,
}

impl Smem {
    #[inline(always)]
    fn cmd(&self) -> *mut u8 {
        // SAFETY: offsets come from dense_layout and lie inside SMEM_BYTES.
        unsafe { self.base.add(CMD_OFF) }
    }
    /// The literals, loaded after the parse (they take the command region's place).
    #[inline(always)]
    fn lit(&self) -> *mut u8 {
        unsafe { self.base.add(LIT_OFF) }
    }
    #[inline(always)]
    fn lenv(&self) -> *mut u32 {
        unsafe { self.base.add(LENV_OFF) as *mut u32 }
    }
    #[inline(always)]
    fn offv(&self) -> *mut u16 {
        unsafe { self.base.add(OFFV_OFF) as *mut u16 }
    }
    #[inline(always)]
    fn ptr(&self) -> *mut u16 {
        unsafe { self.base.add(PTR_OFF) as *mut u16 }
    }
    /// Length bytes during stage 1 (inside the pointer region).
    #[inline(always)]
    fn lenb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF) }
    }
    /// Offset bytes during stage 1 (inside the pointer region, after the length bytes).
    #[inline(always)]
    fn offb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF + LENB_CAP) }
    }
    /// Offset-tail bytes during stage 1 (inside the pointer region, after the offset bytes).
    #[inline(always)]
    fn tailb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF + LENB_CAP + OFFB_CAP) }
    }
    #[inline(always)]
    fn ctrl(&self, i: usize) -> *mut u32 {
        unsafe { (self.base.add(CTRL_OFF) as *mut u32).add(i) }
    }
}

// control words
const C_STATUS: usize = 0;
const C_NLENV: usize = 1;
const C_NOFFV: usize = 2;
/// 1 when the block's streams are published by the rANS stage (handoff.rs) or the CTA knows
/// the whole stage complete, 0 when thread 0's wait for them gave up (and, for a block
/// parsed before its hand-off, until `await_block` after the parse).
const C_READY: usize = 3;
/// How the CTA's block gets its streams, kept here rather than in a register through the
/// parse: [`EARLY_NO`], [`EARLY_WAIT`] or [`EARLY_OWN`].
const C_EARLY: usize = 4;
/// [`C_EARLY`]: every stream from the rANS stage's scratch, after its hand-off.
const EARLY_NO: u32 = 0;
/// [`C_EARLY`]: the match streams from the data section, parsed before the hand-off, which
/// the CTA waits for before the literals (`early_match_streams`).
const EARLY_WAIT: u32 = 1;
/// [`C_EARLY`]: every stream from the data section, no hand-off (a [`self_contained`] block
/// in [`decode_blocks_dense_sc`]).
const EARLY_OWN: u32 = 2;
/// The literals' place in the decoded scratch, in 16-byte words: low word (high word at
/// [`C_LIT_HI`]), written in stage 1 and read in stage 3 (shared memory rather than
/// registers through the parse, and no second global load on the way to the literal load);
/// for a self-contained block (`EARLY_OWN`), its literal slice's place in the command region
/// (`own::OwnSlice::at`).
const C_LIT_LO: usize = 5;
/// Lowest `(command index << 8) | status` of a failing command (u32::MAX: none).
const C_ERR: usize = 6;
/// A self-contained block's data offset (low word, high word after it), written by thread 0
/// at the take and read in stage 1: two of the parse's per-warp words ([`W_MAP`]), which
/// pass B writes only after stage 1's barrier.
const C_OWN_OFF: usize = W_MAP;
/// The high word of the literals' place (see [`C_LIT_LO`]).
const C_LIT_HI: usize = 7;
/// The CTA's next block, taken from the queue by thread 0 (`decode_blocks_dense`).
const C_NEXT: usize = 8;
/// Per-warp parse summaries: length varints, offset varints, output bytes, literals, and
/// the chunk's history map (4 words per warp).
const WARPS: usize = THREADS as usize / 32;
const W_LEN: usize = 9;
const W_OFF: usize = W_LEN + WARPS;
const W_OUT: usize = W_OFF + WARPS;
const W_LIT: usize = W_OUT + WARPS;
const W_MAP: usize = W_LIT + WARPS;
/// Per warp: how many of its long commands it left to the whole CTA, then their
/// `[dst, n, src, dist (0: literal run)]` in `DEFER_SLOTS` slots per warp.
const W_NDEFER: usize = W_MAP + 4 * WARPS;
const W_DEFER: usize = W_NDEFER + WARPS;
const DEFER_SLOTS: usize = 2;
const _: () =
    assert!(W_DEFER + 4 * DEFER_SLOTS * WARPS <= CTRL_WORDS && THREADS % 32 == 0 && WARPS >= 4);

#[inline(always)]
fn set_status(s: &Smem, st: Status) {
    // SAFETY: a plain store of a non-zero code; concurrent writers all store non-zero codes
    // and any one of them is a correct report.
    unsafe { *s.ctrl(C_STATUS) = st as u32 };
}

/// Defines an entry point of the dense kernel, `dense_blocks::<SC>` with the one parameter
/// list of both ([`decode_blocks_dense`]).
macro_rules! dense_entry {
    ($(#[$doc:meta])* $name:ident, $sc:literal) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(
            decoded: *const u8,
            dec_len: u64,
            dec_offsets: *const u64,
            data: *const u8,
            data_len: u64,
            offsets: *const u64,
            entries: *const BlockEntry,
            n_blocks: u32,
            block_size: u32,
            window: u32,
            match_base: u32,
            out: *mut u8,
            out_len: u64,
            status: *mut u32,
            stages: u32,
            queue: *mut u32,
            order: *const u32,
            epoch: u32,
        ) {
            // SAFETY: forwarded (the host's contract).
            unsafe {
                dense_blocks::<$sc>(
                    decoded, dec_len, dec_offsets, data, data_len, offsets, entries, n_blocks,
                    block_size, window, match_base, out, out_len, status, stages, queue, order,
                    epoch,
                )
            }
        }
    };
}

dense_entry!(
    /// Dense full-pipe decode of independent blocks, after `rans_decode_slices` (see module
    /// docs): `decoded` holds every slice's decoded bytes at
    /// `dec_offsets[STREAM_COUNT * block + stream]`; `stages` is `STAGES_ALL` to decode, fewer
    /// bits for timing. One status word per block; a block already marked bad by the rANS
    /// kernel keeps its status. `queue` is the archive's dense queue (`handoff::queue_words`),
    /// handed over by the rANS kernel before it, whose `dense_queue` it is, under `epoch`
    /// (`handoff.rs`: this kernel may run while that one still does, and waits for the
    /// queue's epoch and then for each block's ready word; epoch 0: no hand-off, the rANS grid
    /// complete before this one reads anything). CTA `c` decodes block `order[c]`,
    /// then blocks `order[grid + ticket]` (tickets from `queue[QUEUE_TICKET]++`) until they run
    /// out, so a CTA that drew cheap blocks takes more of them; `order` holds every block once,
    /// in the order the host expects the rANS stage to finish them
    /// (`gpu::launch::dense_block_order`) or that order longest first
    /// (`gpu::launch::dense_longest_first`), or is null: blocks in index order (the two kernels
    /// one after the other). `queue[QUEUE_FALLBACK]` counts the blocks left to the
    /// lane kernel (`Status::Fallback`). `match_base` is the archive's (FORMAT.md §2: 4 to 6,
    /// from a validated header). `data` (`data_len` bytes) is the archive's data section and
    /// `offsets` each block's offset in it (`n_blocks` words): a block whose match streams are
    /// raw slices and whose ready word does not hold the epoch yet when its CTA takes it is
    /// loaded from there and parsed before the wait (`early_match_streams`; not with stage bits
    /// `STAGE_SEQ_PARSE` or `STAGE_LATE_PARSE`).
    decode_blocks_dense,
    false
);
dense_entry!(
    /// [`decode_blocks_dense`] for an archive with blocks that it decodes from the data section
    /// alone ([`self_contained`]: two-bit literals, FORMAT.md §5.7, and raw match streams),
    /// which the rANS stage before it leaves untouched when the host asks it to
    /// (`leave_self_contained`, `gpu::launch::leaves_self_contained`): such a block is never
    /// waited for; its match streams are loaded and parsed as an early block's
    /// (`early_match_streams`), then its literals expanded from its two-bit slice straight into
    /// the literal region ([`expand_own_literals`]), and its status is this kernel's alone. A
    /// second entry point so that the first keeps its code (and its registers) as it was.
    /// Not with stage bits `STAGE_SEQ_PARSE` or `STAGE_LATE_PARSE`, which read the decoded
    /// scratch: with them it decodes as [`decode_blocks_dense`], and the host lets the rANS stage
    /// decode every block.
    ///
    /// # Safety
    /// [`decode_blocks_dense`]'s contract.
    decode_blocks_dense_sc,
    true
);

/// The body of the dense kernel's entry points; `SC`: blocks [`self_contained`] are decoded
/// from the data section alone ([`decode_blocks_dense_sc`]).
///
/// # Safety
/// [`decode_blocks_dense`]'s contract.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn dense_blocks<const SC: bool>(
    decoded: *const u8,
    dec_len: u64,
    dec_offsets: *const u64,
    data: *const u8,
    data_len: u64,
    offsets: *const u64,
    entries: *const BlockEntry,
    n_blocks: u32,
    block_size: u32,
    window: u32,
    match_base: u32,
    out: *mut u8,
    out_len: u64,
    status: *mut u32,
    stages: u32,
    queue: *mut u32,
    order: *const u32,
    epoch: u32,
) {
    let s = Smem {
        // u128: the layout's 16-byte loads and stores need a 16-aligned base (`.align 16`)
        base: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u128>() as *mut u8,
    };
    // SAFETY: special registers.
    let (tid, cta, ncta) = unsafe { (_thread_idx_x(), _block_idx_x(), _grid_dim_x()) };
    let warp = tid / 32;
    let lane = tid % 32;
    // the lane kernel after this one may start its CTAs (it waits for this grid to complete)
    crate::handoff::launch_dependents();
    // whether the rANS grid is complete and its writes visible to this CTA (block-uniform):
    // at once with epoch 0 (no hand-off; the kernels one after the other, so the wait returns
    // at once), else once a wait for a hand-off word gave up and the CTA waited for the grid
    // instead (handoff.rs); then no word is waited for any more
    let mut grid_done = epoch == 0;
    if grid_done {
        crate::handoff::wait_prerequisite_grids();
    } else {
        // the queue's ticket and fallback words zeroed by this decode's rANS stage
        if tid == 0 {
            // SAFETY: word QUEUE_EPOCH of the queue; a shared control word, read after the
            // barrier below and written again only in `next_block`, after the block's
            // first barrier.
            unsafe {
                *s.ctrl(C_NEXT) = crate::handoff::wait_for(queue.add(QUEUE_EPOCH), epoch) as u32
            };
        }
        sync();
        if ctrl_get(&s, C_NEXT) == 0 {
            crate::handoff::wait_prerequisite_grids();
            grid_done = true;
        }
    }
    // SAFETY: cta < grid <= n_blocks entries of the order (the host's launch).
    let mut b = if order.is_null() {
        cta
    } else {
        unsafe { *order.add(cta as usize) }
    };
    while b < n_blocks {
        // the next block's ticket, taken now so that the atomic's round trip overlaps this
        // block's work (thread 0 first uses it in `next_block`)
        let ticket = if tid == 0 { take_ticket(queue) } else { 0 };
        // SAFETY: b < n_blocks; the host passes n_blocks entries.
        let e = unsafe { *entries.add(b as usize) };
        let start = b as u64 * block_size as u64;
        let block_len = if start < out_len {
            core::cmp::min(block_size as u64, out_len - start) as u32
        } else {
            0
        };
        let fits = block_size <= DENSE_MAX_BLOCK
            && block_len > 0
            && e.lowest_source_block == b
            && e.decoded_len[STREAM_LITERALS] as usize <= LIT_CAP
            && e.decoded_len[STREAM_COMMANDS] as usize <= CMD_CAP
            && e.decoded_len[STREAM_LENGTHS] as usize <= LENB_CAP
            && e.decoded_len[STREAM_OFFSETS] as usize <= OFFB_CAP
            && e.decoded_len[STREAM_OFFSET_TAILS] as usize <= TAILB_CAP;
        // A block whose match streams are all stored raw and whose hand-off has not come yet
        // is parsed first, from the archive's own bytes, while the rANS stage still decodes
        // its literals; only the literal load and the write wait for the hand-off
        // (`early_match_streams`). A block already handed over goes the usual way (its
        // streams from the scratch in one range of 16-byte loads, no wait after the parse).
        // Thread 0 decides, the others read its choice after the barrier below.
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_TAKE);
            // a block this kernel decodes alone: its data offset kept for stage 1 (one global
            // load less on the way to its copies)
            let own = SC
                && stages & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
                && e.lanes[STREAM_LITERALS] == LANES_TWO_BIT
                && {
                    // SAFETY: b < n_blocks; the host passes n_blocks data offsets.
                    let off = unsafe { *offsets.add(b as usize) };
                    let own = crate::own::own_slice(&e, off, data_len).is_some();
                    if own {
                        // SAFETY: shared control words, read in stage 1 after the barrier
                        // below; the parse writes them only after stage 1's barrier.
                        unsafe {
                            *s.ctrl(C_OWN_OFF) = off as u32;
                            *s.ctrl(C_OWN_OFF + 1) = (off >> 32) as u32;
                        }
                    }
                    own
                };
            // SAFETY: as above.
            let eligible = !own
                && !grid_done
                && fits
                && stages & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
                && unsafe { early_match_streams(&e, offsets, b, data_len) }.is_some();
            // SAFETY: word QUEUE_READY + b < queue_words(n_blocks) of the queue.
            let word = unsafe { queue.add(QUEUE_READY + b as usize) };
            // the block's slices and status word from the rANS stage (handoff.rs), now or
            // (early) after the parse; the barrier below orders every thread's reads of them
            // after this wait
            let (early, ready) = if own {
                // nothing from the rANS stage, ever (it left the block to this kernel)
                (EARLY_OWN, true)
            } else if grid_done {
                (EARLY_NO, true)
            } else if eligible {
                // one look: a block already handed over goes the usual way
                let published = unsafe { crate::handoff::is_published(word, epoch) };
                (if published { EARLY_NO } else { EARLY_WAIT }, published)
            } else {
                (EARLY_NO, unsafe { crate::handoff::wait_for(word, epoch) })
            };
            // SAFETY: control words lie in shared memory.
            unsafe {
                *s.ctrl(C_READY) = ready as u32;
                *s.ctrl(C_EARLY) = early;
                *s.ctrl(C_STATUS) = 0;
                *s.ctrl(C_NLENV) = 0;
                *s.ctrl(C_NOFFV) = 0;
            }
        }
        sync();
        // (an own block is loaded and parsed as an early one, and never waits)
        let early = ctrl_get(&s, C_EARLY) != EARLY_NO;
        if !early {
            if tid == 0 {
                crate::trace::mark(b as u64, crate::trace::DENSE_READY);
            }
            grid_done = ready_or_grid(&s, grid_done);
        }
        // SAFETY: one status word per block, written by the rANS kernel before it published
        // the block (or before its grid completed: handoff.rs); not read before that.
        let prior = if early {
            0
        } else {
            unsafe { *status.add(b as usize) }
        };
        if prior != 0 || !fits {
            if tid == 0 && prior == 0 {
                let st = if block_len == 0
                    || e.lowest_source_block != b && block_size <= DENSE_MAX_BLOCK
                {
                    Status::BadDistance
                } else {
                    Status::Fallback
                };
                // SAFETY: one status word per block.
                unsafe { *status.add(b as usize) = st as u32 };
                count_fallback(queue, st as u32);
            }
            b = next_block(&s, ticket, ncta, order, n_blocks, tid);
            continue;
        }
        // ---- stage 1 (a block parsed before its hand-off: its raw match streams from the
        // data section instead, `load_raw_match_streams`, and the varints as below): the
        // whole CTA loads the block's decoded streams but the literals
        // (written by `rans_decode_slices` at 16-byte aligned offsets, padded to 16 bytes)
        // with 16-byte loads and stores, streams 1-4 as one range of 16-byte words (so a
        // thread's loads of different streams do not wait for each other's stores: one
        // memory latency per block where the streams are short); then the length and offset
        // warps turn varints into values. The literals are loaded after the parse, into the
        // command region.
        // per stream: its first word in the scratch and in shared memory (16-byte words),
        // and the end of its words in the combined range (the literals' 0: not in it)
        let mut src16 = [0u64; STREAM_COUNT];
        let mut dst16 = [0u64; STREAM_COUNT];
        let mut end16 = [0u64; STREAM_COUNT];
        let mut total16 = 0u64;
        for k in 0..STREAM_COUNT {
            // An integer offset, not a pointer per arm: LLVM turns a match over shared-memory
            // pointers into a .global table of shared addresses, which ptxas rejects.
            let region = match k {
                STREAM_LITERALS => usize::MAX,
                STREAM_LENGTHS => PTR_OFF,
                STREAM_OFFSETS => PTR_OFF + LENB_CAP,
                STREAM_OFFSET_TAILS => PTR_OFF + LENB_CAP + OFFB_CAP,
                _ => CMD_OFF,
            };
            let n16 = (e.decoded_len[k] as u64).div_ceil(16);
            // SAFETY: the host passes STREAM_COUNT offsets per block.
            let soff = unsafe { *dec_offsets.add(b as usize * STREAM_COUNT + k) };
            if soff % 16 != 0 || soff > dec_len || n16 * 16 > dec_len - soff {
                if tid == 0 {
                    set_status(&s, Status::SliceMode);
                }
            } else if region == usize::MAX {
                if tid == 0 {
                    // SAFETY: shared control words, read after the parse's barriers.
                    unsafe {
                        *s.ctrl(C_LIT_LO) = (soff / 16) as u32;
                        *s.ctrl(C_LIT_HI) = (soff / 16 >> 32) as u32;
                    }
                }
            } else if !early {
                src16[k] = soff / 16;
                dst16[k] = (region / 16) as u64;
                total16 += n16;
            }
            end16[k] = total16;
        }
        const _: () = assert!(STREAM_LITERALS == 0);
        let mut q = tid as u64;
        while q < total16 {
            // the stream holding combined word q: the last one whose predecessors end at
            // or before it (ends are non-decreasing; a stream that failed its check or is
            // empty adds no words)
            let (mut from, mut to, mut before) = (src16[1], dst16[1], 0u64);
            for j in 2..STREAM_COUNT {
                if q >= end16[j - 1] {
                    (from, to, before) = (src16[j], dst16[j], end16[j - 1]);
                }
            }
            let i = q - before;
            // SAFETY: word i is below its stream's n16 words: inside the decoded scratch
            // (checked above) and inside its 16-aligned layout region, whose cap is >=
            // round16(n) (fits check).
            unsafe {
                *(s.base as *mut u128).add((to + i) as usize) =
                    *(decoded as *const u128).add((from + i) as usize)
            };
            q += THREADS as u64;
        }
        if early {
            // an own block's data offset from the take
            let own_off = (SC && ctrl_get(&s, C_EARLY) == EARLY_OWN).then(|| {
                ctrl_get(&s, C_OWN_OFF) as u64 | (ctrl_get(&s, C_OWN_OFF + 1) as u64) << 32
            });
            // (the range again rather than held in registers from the take)
            let from = match own_off {
                Some(off) => crate::own::raw_match_streams_at(&e, || off, data_len),
                // SAFETY: b < n_blocks; the host passes n_blocks data offsets.
                None => unsafe { early_match_streams(&e, offsets, b, data_len) },
            };
            if let Some(from) = from {
                // SAFETY: raw_match_streams_at checked the four slices' one range of the
                // data section and that each is raw; `fits`, that each fits its region.
                unsafe { load_raw_match_streams(&s, data.add(from as usize), &e, tid) };
            }
            if let Some(off) = own_off {
                // the literal slice too, to the command region's end (own_slice: the same
                // answer as at the take, the same function of the same values)
                if let Some(o) = crate::own::own_slice(&e, off, data_len) {
                    if tid == 0 {
                        // the copy's place for stage 3, in the literals' control word (an own
                        // block's literals are not in the scratch; written after the stream
                        // loop's, by the same thread)
                        // SAFETY: a shared control word, read after the parse's barriers.
                        unsafe { *s.ctrl(C_LIT_LO) = o.at };
                    }
                    // SAFETY: o is this block's; the host's padded upload (contract).
                    unsafe { load_own_slice(&s, data, &o, tid) };
                }
            }
        }
        sync();
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_LOADED);
        }
        // varints to values: the lengths by warp 0; the offsets by the other warps, each
        // taking a chunk of the offset bytes (one per value): it counts the values with a
        // tail byte in its chunk, then, after a barrier, joins each with its tail byte
        let n_heads = e.decoded_len[STREAM_OFFSETS] as usize;
        let n_tails = e.decoded_len[STREAM_OFFSET_TAILS] as usize;
        // warp w >= 1 takes chunk w - 1 of the offset bytes
        let (c0, c1) = if warp != 0 {
            varint_chunk(n_heads, WARPS - 1, warp as usize - 1)
        } else {
            (0, 0)
        };
        if warp != 0 {
            let with_tail = count_bit7(s.offb(), c0, c1, lane, true);
            if lane == 0 {
                // SAFETY: this warp's control word (W_LEN words are free until the parse).
                unsafe { *s.ctrl(W_LEN + warp as usize) = with_tail };
            }
        }
        sync();
        let st = if warp == 0 {
            let n = e.decoded_len[STREAM_LENGTHS] as usize;
            let ends = count_bit7(s.lenb(), 0, n, lane, false);
            if lane == 0 {
                // SAFETY: a shared control word.
                unsafe { *s.ctrl(C_NLENV) = ends };
            }
            varints_to_values(s.lenb(), n, 0, n, 0, s.lenv(), LENV_CAP, lane)
        } else {
            let mut before = 0usize;
            let mut total = 0usize;
            for w in 1..WARPS {
                let c = ctrl_get(&s, W_LEN + w) as usize;
                if w < warp as usize {
                    before += c;
                }
                total += c;
            }
            if warp == 1 && lane == 0 {
                // SAFETY: a shared control word.
                unsafe { *s.ctrl(C_NOFFV) = n_heads as u32 };
            }
            if total != n_tails {
                // some tail is longer than one byte (a distance >= 2^14, out of any window
                // this kernel decodes) or tail bytes are missing or left over: the
                // reference decoder names the error
                Status::Fallback
            } else {
                join_offsets(s.offb(), s.tailb(), n_tails, c0, c1, before, s.offv(), lane)
            }
        };
        if st != Status::Ok && lane == 0 {
            set_status(&s, st);
        }
        sync();
        // SAFETY: shared control word, written before the barrier.
        let mut st = unsafe { *s.ctrl(C_STATUS) };
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_VARINTS);
        }
        if st == 0 && stages & 1 != 0 {
            // ---- stage 2: parse and pointer fill (the whole CTA; with stage bit 2, one lane
            // parsing sequentially, for the parse comparison)
            let r = if stages & STAGE_SEQ_PARSE != 0 {
                if tid == 0 {
                    parse_fill_seq(
                        &s,
                        decoded,
                        dec_len,
                        dec_offsets,
                        b,
                        &e,
                        block_len,
                        window,
                        match_base,
                    )
                } else {
                    Status::Ok
                }
            } else {
                parse_fill(&s, &e, block_len, window, match_base, warp, lane, b)
            };
            sync();
            if r != Status::Ok && tid == 0 {
                set_status(&s, r);
            }
            sync();
            st = unsafe { *s.ctrl(C_STATUS) };
        }
        if ctrl_get(&s, C_EARLY) == EARLY_WAIT {
            // the literals and the status come from the rANS stage: its hand-off now
            grid_done = await_block(&s, queue, b, epoch, grid_done, tid);
            // SAFETY: one status word per block, written by the rANS kernel before it
            // published the block (or before its grid completed), read after the wait.
            if unsafe { *status.add(b as usize) } != 0 {
                // the rANS stage's status stands, as for a block parsed after the hand-off:
                // nothing written, nothing counted (one way out of the loop body, not a
                // second `continue`: that one made the kernel spill)
                st = KEEP_RANS_STATUS;
            }
        }
        // an own block's literal slice is checked even where its parse failed: the CPU
        // decoder checks a block's slices before its commands, so a block broken in both
        // reports `TwoBitSlice` (FORMAT.md §7: the first rule broken); not after a
        // `Fallback`, whose block the lane kernel decodes and reports
        let own = SC && ctrl_get(&s, C_EARLY) == EARLY_OWN;
        let own_check = own && st != Status::Fallback as u32 && stages & 3 == 3;
        if (st == 0 || own_check) && stages & 3 == 3 {
            // ---- stage 3 (after the parse): each byte follows its pointer chain, memoised
            // (any depth; the table entry's depth hint is not used: FORMAT.md §3.1)
            let n16 = (e.decoded_len[STREAM_LITERALS] as u64).div_ceil(16);
            // the literals' place from stage 1, which checked it (else the status is
            // SliceMode and this stage does not run)
            let lit16 = ctrl_get(&s, C_LIT_LO) as u64 | (ctrl_get(&s, C_LIT_HI) as u64) << 32;
            if own {
                // SAFETY: the block is self_contained (checked at the take, and again, the
                // same function of the same values, in stage 1, which copied its slice to
                // the place it left in C_LIT_LO; own_slice's checks: the sizes
                // expand_own_literals asks for); the commands are dead after the parse's
                // barrier.
                let fine = unsafe {
                    expand_own_literals(
                        &s,
                        ctrl_get(&s, C_LIT_LO),
                        e.stored_len[STREAM_LITERALS],
                        e.decoded_len[STREAM_LITERALS],
                        b,
                        tid,
                    )
                };
                if !fine {
                    st = Status::TwoBitSlice as u32;
                }
            } else {
                // SAFETY: [16 * lit16, 16 * (lit16 + n16)) lies inside the decoded scratch.
                let lit = unsafe { (decoded as *const u128).add(lit16 as usize) };
                // SAFETY: the commands are dead after the parse's barrier; the literal
                // region holds LIT_CAP >= round16(n) bytes (fits check), and `lit` n16 words.
                unsafe { copy16(s.lit() as *mut u128, lit, n16, tid, THREADS) };
                sync();
            }
            if tid == 0 {
                crate::trace::mark(b as u64, crate::trace::DENSE_LITS);
            }
            if st == 0 {
                write_memo::<SC>(&s, out, start, block_len, tid);
            }
        }
        if tid == 0 && st != KEEP_RANS_STATUS {
            crate::trace::mark(b as u64, crate::trace::DENSE_END);
            // SAFETY: one status word per block.
            unsafe { *status.add(b as usize) = st };
            count_fallback(queue, st);
        }
        b = next_block(&s, ticket, ncta, order, n_blocks, tid);
    }
}

/// A block's status in `decode_blocks_dense` that is no status: the rANS stage's stands (an
/// early-parsed block whose slices the stage found bad), the dense kernel writes none.
const KEEP_RANS_STATUS: u32 = u32::MAX;

/// Thread 0 waits for block `b`'s hand-off word (`handoff.rs`) unless `grid_done`; after a
/// barrier every thread reads whether it came, and if thread 0 gave up the CTA waits for the
/// whole rANS grid instead, after which every block's streams and status are visible.
/// Returns the new `grid_done`. The barrier orders every thread's later reads of the block's
/// decoded streams and status word after the wait.
#[inline(always)]
fn await_block(s: &Smem, queue: *mut u32, b: u32, epoch: u32, grid_done: bool, tid: u32) -> bool {
    if tid == 0 {
        // SAFETY: word QUEUE_READY + b < queue_words(n_blocks) of the queue.
        let ready = grid_done
            || unsafe { crate::handoff::wait_for(queue.add(QUEUE_READY + b as usize), epoch) };
        // SAFETY: a shared control word, read by every thread after the barrier below.
        unsafe { *s.ctrl(C_READY) = ready as u32 };
    }
    sync();
    if tid == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_READY);
    }
    ready_or_grid(s, grid_done)
}

/// After thread 0's wait for a hand-off word and a barrier: if it gave up (`C_READY` 0), the
/// CTA waits for the whole rANS grid instead, after which every block's streams and status
/// are visible. Returns the new `grid_done`.
#[inline(always)]
fn ready_or_grid(s: &Smem, grid_done: bool) -> bool {
    if ctrl_get(s, C_READY) == 0 {
        crate::handoff::wait_prerequisite_grids();
        return true;
    }
    grid_done
}

/// Where block `b`'s match streams begin in the data section when they are raw slices
/// inside it ([`crate::own::raw_match_streams_at`]; `e` is the block's entry, `offsets` the
/// blocks' data offsets, read only for a block whose streams are raw). Such a block's match
/// layer needs nothing from the rANS stage, so the dense kernel can load and parse it
/// before the block's hand-off (the rANS stage copies the same bytes into the decoded
/// scratch for the lane kernel).
///
/// # Safety
/// `offsets` holds more than `b` words.
#[inline(always)]
unsafe fn early_match_streams(
    e: &BlockEntry,
    offsets: *const u64,
    b: u32,
    data_len: u64,
) -> Option<u64> {
    // SAFETY: the caller's contract.
    crate::own::raw_match_streams_at(e, || unsafe { *offsets.add(b as usize) }, data_len)
}

/// Whether block `b` (entry `e`) is one that [`decode_blocks_dense_sc`] decodes from the data
/// section alone, and where its literal slice then goes in shared memory
/// ([`crate::own::own_slice`], the one rule of the rANS stage, this kernel and the host).
///
/// # Safety
/// `offsets` holds more than `b` words.
#[inline(always)]
unsafe fn self_contained(
    e: &BlockEntry,
    offsets: *const u64,
    b: u32,
    data_len: u64,
) -> Option<crate::own::OwnSlice> {
    if e.lanes[STREAM_LITERALS] != LANES_TWO_BIT {
        return None;
    }
    // SAFETY: the caller's contract.
    crate::own::own_slice(e, unsafe { *offsets.add(b as usize) }, data_len)
}

/// Copies the [`self_contained`] block's literal slice (`o`) from the data section `data` to
/// the end of the command region, in aligned 16-byte words, with the whole CTA (one or two
/// words a thread: one memory latency, beside the match streams' loads).
///
/// # Safety
/// `o` from `own_slice` for this block and `data_len`; `data` 16-aligned and readable up to
/// `data_len` rounded up to a multiple of 16 (the host's padded upload); the block's commands
/// end before `16 * o.dst16` (own_slice).
#[inline(always)]
unsafe fn load_own_slice(s: &Smem, data: *const u8, o: &crate::own::OwnSlice, tid: u32) {
    // SAFETY: the words [dst16, dst16 + words) end at the command region's end (own_slice).
    let dst = unsafe { (s.cmd() as *mut u128).add(o.dst16 as usize) };
    // SAFETY: from16 is 16-aligned; from16 + 16 * words is the slice's end rounded up to 16,
    // at most data_len rounded up (own_slice put the slice inside the data section).
    let src = unsafe { data.add(o.from16 as usize) } as *const u128;
    let mut q = tid;
    while q < o.words {
        // SAFETY: q < words (above).
        unsafe { *dst.add(q as usize) = *src.add(q as usize) };
        q += THREADS;
    }
}

/// An exclusive prefix sum over the CTA's threads (in thread order) of each of the `N`
/// values `v`, and each one's total, wrapping: warp sums by shuffles ([`scan_u32`]), each
/// warp's total through control word `slots[i] + warp`, one barrier. Every thread calls it;
/// the slots are not written again before a later barrier.
#[inline(always)]
fn cta_scan<const N: usize>(
    s: &Smem,
    slots: [usize; N],
    v: [u32; N],
    tid: u32,
) -> ([u32; N], [u32; N]) {
    let lane = tid % 32;
    let warp = (tid / 32) as usize;
    let inc = v.map(|x| scan_u32(x, lane));
    if lane == 31 {
        for i in 0..N {
            // SAFETY: a control word of this warp (slots[i] + warp < CTRL_WORDS: the parse's
            // per-warp words, free after it).
            unsafe { *s.ctrl(slots[i] + warp) = inc[i] };
        }
    }
    sync();
    let mut before = [0u32; N];
    let mut total = [0u32; N];
    for w in 0..WARPS {
        for i in 0..N {
            let t = ctrl_get(s, slots[i] + w);
            if w < warp {
                before[i] = before[i].wrapping_add(t);
            }
            total[i] = total[i].wrapping_add(t);
        }
    }
    (
        core::array::from_fn(|i| before[i].wrapping_add(inc[i]).wrapping_sub(v[i])),
        total,
    )
}

/// Expands the literal slice of a [`self_contained`] block, copied to byte `at` of the
/// command region during the load ([`load_own_slice`]; `stored` bytes, `n` literals; FORMAT.md
/// §5.7, [`crate::two_bit::decode`] the reference), into the literal region with the whole
/// CTA, and returns whether the slice keeps every rule (false: `TwoBitSlice`; the region is
/// then partly written, and the block is not). All from shared memory:
/// 1. the counts (every thread reads the same eight bytes);
/// 2. the exceptions: thread `t` takes varint bytes `2t` and `2t + 1` (the area is at most
///    `own::OWN_PRE_CAP` bytes); a byte that ends a varint reads the three before it for the
///    varint's value; the exceptions' gaps, positions and value indices are prefix sums over
///    the CTA ([`cta_scan`], wrapping `u32`: a value that wrapped lies after the first broken
///    rule, which is caught exactly), each checked as the reference checks it; each thread
///    keeps its (at most two) positions and bytes;
/// 3. the codes: four code bytes per 16 literals, up to four words a thread, read, then
///    (after a barrier: the copy lies in the literal region's end) expanded by byte permutes
///    ([`expand_codes`]) into 16-byte stores;
/// 4. after a barrier, the exceptions' bytes stored at their positions.
///
/// No memory latency on the way: the slice came with the match streams' loads, before the
/// parse. Called by every thread of the CTA after the parse (the commands are dead). Not
/// inlined: ptxas then gives it registers apart from the kernel's (inlined, the kernel's
/// 64 registers spilled around the parse).
///
/// # Safety
/// The slice's `stored` bytes lie at `[at, at + stored)` of the command region, `n <=
/// LIT_CAP`, `stored >= 6 + ceil(n / 4)` and `stored - ceil(n / 4) <= OWN_PRE_CAP`
/// (own_slice).
#[inline(never)]
unsafe fn expand_own_literals(s: &Smem, at: u32, stored: u32, n: u32, b: u32, tid: u32) -> bool {
    const _: () = assert!(crate::own::OWN_PRE_CAP == 2 * THREADS as u64);
    // (own_slice put the copy inside the command region; checked again, cheaply, so that no
    // other value of the control word can make this read outside it)
    if at as usize + stored as usize > CMD_REGION {
        return false;
    }
    // the failure flag (a control word free after the parse: C_OWN_OFF's), zeroed before the
    // first barrier of the prefix sums, set after it, read after the last barrier
    if tid == 0 {
        // SAFETY: a shared control word.
        unsafe { *s.ctrl(C_OWN_OFF) = 0 };
    }
    // SAFETY: the slice's bytes lie at [at, at + stored) of the command region.
    let sl = unsafe { s.cmd().add(at as usize) } as *const u8;
    // SAFETY (every read through it): j < stored, inside the slice.
    let rd = |j: u32| -> u32 { (unsafe { *sl.add(j as usize) }) as u32 };
    let m = n.div_ceil(4);
    // the codes' start (the bytes before it: symbols, counts, values, varints)
    let codes = stored - m;
    let sym = rd(0) | rd(1) << 8 | rd(2) << 16 | rd(3) << 24;
    // 1. the counts (as `two_bit_counts`): a byte past their room reads as a continuation
    let mut w = 0u64;
    for i in 0..8u32 {
        let b = if 4 + i < codes { rd(4 + i) } else { 0x80 };
        w |= (b as u64) << (8 * i);
    }
    let mut pos = 0u32;
    let mut leb = || {
        let mut v = 0u32;
        for i in 0..crate::two_bit::MAX_VARINT_BYTES {
            let b = (w >> (8 * pos)) as u32 & 0xFF;
            pos += 1;
            v |= (b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let (Some(x), Some(u)) = (leb(), leb()) else {
        return false;
    };
    let values = 4 + pos;
    if u > x || x > n || values > codes || u > codes - values {
        return false;
    }
    let exc = values + u;
    // 2. the exceptions. A byte before the area reads as a varint's end, so the first
    // varint starts at the area's start.
    let byte = |j: u32| if j < exc { 0 } else { rd(j) };
    let mut fine = true;
    let mut ends = [false; 2];
    let mut e = [0u32; 2];
    for i in 0..2u32 {
        let j = exc + 2 * tid + i;
        if j < codes && rd(j) < 0x80 {
            // (j >= exc >= 6: the four bytes before it are the slice's)
            let c = [rd(j), byte(j - 1), byte(j - 2), byte(j - 3), byte(j - 4)];
            let v = if c[1] < 0x80 {
                c[0]
            } else if c[2] < 0x80 {
                c[1] & 0x7F | c[0] << 7
            } else if c[3] < 0x80 {
                c[2] & 0x7F | (c[1] & 0x7F) << 7 | c[0] << 14
            } else {
                // a fifth byte: longer than MAX_VARINT_BYTES
                fine &= c[4] < 0x80;
                c[3] & 0x7F | (c[2] & 0x7F) << 7 | (c[1] & 0x7F) << 14 | c[0] << 21
            };
            ends[i as usize] = true;
            e[i as usize] = v;
        }
    }
    const _: () = assert!(crate::two_bit::MAX_VARINT_BYTES == 4);
    let d = e.map(|v| crate::two_bit::gap_delta(v) as u32);
    let new = [ends[0] && e[0] & 1 != 0, ends[1] && e[1] & 1 != 0];
    let count = |f: [bool; 2]| f[0] as u32 + f[1] as u32;
    let dsum = (if ends[0] { d[0] } else { 0 }).wrapping_add(if ends[1] { d[1] } else { 0 });
    // varints and new ones before this thread's (16 bits each: at most 512), and the gap
    // differences' sum
    let ([kv_before, d_before], [kv_total, _]) = cta_scan(
        s,
        [W_LEN, W_OFF],
        [count(ends) | count(new) << 16, dsum],
        tid,
    );
    // gaps (g_-1 = 0), each in 1..=n
    let mut g = d_before;
    let mut gs = [0u32; 2];
    let mut gsum = 0u32;
    for i in 0..2 {
        if ends[i] {
            g = g.wrapping_add(d[i]);
            gs[i] = g;
            fine &= (g as i32) >= 1 && (g as i32) <= n as i32;
            gsum = gsum.wrapping_add(g);
        }
    }
    let ([g_before], _) = cta_scan(s, [W_OUT], [gsum], tid);
    // positions (p_-1 = -1), each in 0..n; value indices: a new exception takes the next
    // value, another the last new one's (the first exception must be new)
    let mut p = g_before.wrapping_sub(1);
    let mut ps = [0u32; 2];
    let mut vals = [0u32; 2];
    let mut vi = kv_before >> 16;
    for i in 0..2 {
        if ends[i] {
            p = p.wrapping_add(gs[i]);
            ps[i] = p;
            fine &= p < n;
            let idx = if new[i] {
                vi += 1;
                vi - 1
            } else {
                vi.wrapping_sub(1)
            };
            if idx < u {
                vals[i] = rd(values + idx);
            } else {
                fine = false;
            }
        }
    }
    // exactly x varints ending where the codes begin, exactly u of them new
    let tail_ok = if x == 0 {
        exc == codes
    } else {
        exc < codes && rd(codes - 1) < 0x80
    };
    if !fine || kv_total & 0xFFFF != x || kv_total >> 16 != u || !tail_ok {
        // SAFETY: the failure flag (above); every writer stores 1.
        unsafe { *s.ctrl(C_OWN_OFF) = 1 };
    }
    // 3. the codes: word i (16 literals) from code bytes 4i..4i + 4
    const ROUNDS: usize = 4;
    const _: () = assert!(ROUNDS * THREADS as usize * 16 >= LIT_CAP);
    let words = m.div_ceil(4);
    let word_at = |r: usize| tid + THREADS * r as u32;
    // (aligned 4-byte loads of the command region, joined at the codes' misalignment; bytes
    // past the slice give literals past n, which nothing reads)
    let region = s.cmd() as *const u32;
    let cw: [u32; ROUNDS] = core::array::from_fn(|r| {
        let i = word_at(r);
        if i >= words {
            return 0;
        }
        let a = at + codes + 4 * i;
        let sh = 8 * (a & 3);
        // SAFETY: a < at + stored <= CMD_REGION (4i < m), so word a / 4 lies in the command
        // region, and word a / 4 + 1 at most one past it: the first word of the region after
        // it (LENV_OFF == CMD_REGION), inside shared memory.
        unsafe {
            let lo = *region.add(a as usize / 4);
            if sh == 0 {
                lo
            } else {
                lo >> sh | *region.add(a as usize / 4 + 1) << (32 - sh)
            }
        }
    });
    const _: () = assert!(LENV_OFF == CMD_OFF + CMD_REGION && CMD_OFF == 0);
    // every read of the copy (which the literals overwrite) before the stores
    sync();
    if tid == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_CODES);
    }
    let lit = s.lit();
    for (r, &c) in cw.iter().enumerate() {
        let i = word_at(r);
        if i < words {
            // SAFETY: 16i + 16 <= 16 * ceil(m / 4) <= LIT_CAP (n <= LIT_CAP, a multiple of
            // 16): inside the literal region, 16-aligned (LIT_OFF, the 16-aligned base).
            unsafe { *(lit.add(16 * i as usize) as *mut u128) = join16(expand_codes(sym, c)) };
        }
    }
    // 4. the codes' stores before the exceptions' (which may hit the same words)
    sync();
    for i in 0..2 {
        if ends[i] && ps[i] < n {
            // SAFETY: ps[i] < n <= LIT_CAP: inside the literal region.
            unsafe { *lit.add(ps[i] as usize) = vals[i] as u8 };
        }
    }
    sync();
    ctrl_get(s, C_OWN_OFF) == 0
}

/// Copies block `e`'s raw match streams from the data section (`src`, the first byte of its
/// length slice: [`early_match_streams`]) into their stage-1 regions of shared memory, with
/// the whole CTA, four bytes per thread in flight (the four slices lie back to back, so the
/// loads are one coalesced range).
///
/// # Safety
/// `src` holds the four slices' `stored_len` bytes (each equal to its `decoded_len`), each
/// within its region's cap (the dense kernel's `fits`).
#[inline(always)]
unsafe fn load_raw_match_streams(s: &Smem, src: *const u8, e: &BlockEntry, tid: u32) {
    const _: () = assert!(
        STREAM_LENGTHS == 1
            && STREAM_OFFSETS == 2
            && STREAM_COMMANDS == 3
            && STREAM_OFFSET_TAILS == 4
    );
    // the slices' ends in the range, and their regions (stage 1's layout)
    let n1 = e.decoded_len[STREAM_LENGTHS] as usize;
    let n2 = n1 + e.decoded_len[STREAM_OFFSETS] as usize;
    let n3 = n2 + e.decoded_len[STREAM_COMMANDS] as usize;
    let n4 = n3 + e.decoded_len[STREAM_OFFSET_TAILS] as usize;
    let dst = |q: usize| -> *mut u8 {
        let (region, before) = if q < n1 {
            (s.lenb(), 0)
        } else if q < n2 {
            (s.offb(), n1)
        } else if q < n3 {
            (s.cmd(), n2)
        } else {
            (s.tailb(), n3)
        };
        // SAFETY: q - before is below its stream's length, within its region's cap.
        unsafe { region.add(q - before) }
    };
    let t = THREADS as usize;
    let mut q = tid as usize;
    while q + 3 * t < n4 {
        // SAFETY (here and below): every index is below n4: inside `src` (the caller's
        // range) and, through `dst`, inside its stream's region.
        let v = unsafe {
            [
                gb(src, q),
                gb(src, q + t),
                gb(src, q + 2 * t),
                gb(src, q + 3 * t),
            ]
        };
        for (j, &x) in v.iter().enumerate() {
            unsafe { *dst(q + j * t) = x };
        }
        q += 4 * t;
    }
    while q < n4 {
        unsafe { *dst(q) = gb(src, q) };
        q += t;
    }
}

/// Counts a block left to the lane kernel (`st` = `Status::Fallback`) in word 1 of the
/// dense kernel's queue, which `decode_blocks_lane` reads first: with none it returns at
/// once (the host launches it after every dense decode).
#[inline(always)]
fn count_fallback(queue: *mut u32, st: u32) {
    if st == Status::Fallback as u32 {
        // SAFETY: the queue holds handoff::queue_words(n_blocks) words
        // (`gpu::launch::decode_blocks_dense`); core
        // atomics work on global memory.
        unsafe {
            core::sync::atomic::AtomicU32::from_ptr(queue.add(QUEUE_FALLBACK))
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed)
        };
    }
}

/// Copies `n16` 16-byte words from `src` to `dst` with the whole CTA of `threads` threads
/// (`tid` < `threads`), each thread issuing up to four loads before it stores them (named
/// values, not an array, so that they stay in registers): the dense kernel's literal load,
/// 16 KiB in one memory latency at 256 threads instead of four (PERFORMANCE.md nineteenth
/// session). The rANS stage's tables take [`stage16`] instead.
///
/// # Safety
/// Both ranges hold `n16` words (`dst` shared, `src` global memory), 16-byte aligned.
#[inline(always)]
unsafe fn copy16(dst: *mut u128, src: *const u128, n16: u64, tid: u32, threads: u32) {
    let t = threads as usize;
    let n = n16 as usize;
    let mut q = tid as usize;
    // SAFETY (every access below): the index is below n16, checked by its loop's or
    // branch's condition (q + 3t < n, q + t < n, q < n), within the caller's ranges.
    while q + 3 * t < n {
        let (a, b, c, d) = unsafe {
            (
                *src.add(q),
                *src.add(q + t),
                *src.add(q + 2 * t),
                *src.add(q + 3 * t),
            )
        };
        unsafe {
            *dst.add(q) = a;
            *dst.add(q + t) = b;
            *dst.add(q + 2 * t) = c;
            *dst.add(q + 3 * t) = d;
        }
        q += 4 * t;
    }
    // at most three words are left: one pair, then one
    if q + t < n {
        let (a, b) = unsafe { (*src.add(q), *src.add(q + t)) };
        unsafe {
            *dst.add(q) = a;
            *dst.add(q + t) = b;
        }
        q += 2 * t;
    }
    if q < n {
        unsafe { *dst.add(q) = *src.add(q) };
    }
}

/// Starts copying `n16` 16-byte words from `src` (global memory) to `dst` (shared memory)
/// with the whole CTA of `threads` threads (`tid` < `threads`), word `tid + i * threads` by
/// thread `tid`, as asynchronous copies (`cp.async.cg.shared.global`, sm_80 and later): they
/// hold no data registers, so a thread issues all of its copies of every table a CTA stages
/// before it waits (as many in flight as the memory system takes), where a load-then-store
/// copy waits one memory latency per round of loads (the rANS stage's table
/// staging held 21 % of its stall samples on E. coli at 4 KiB blocks: PERFORMANCE.md
/// nineteenth session). The words are in `dst` only after [`stage_wait`], and visible to the
/// other threads after a barrier that follows it.
///
/// # Safety
/// Both ranges hold `n16` words (`dst` in the kernel's shared memory, `src` global memory; a
/// generic address of either, which the asm converts or, for global memory, uses as is, as in
/// [`global_word_l2_256`]), 16-byte aligned. A barrier separates every earlier access to
/// `dst` from the copies; every thread that calls this calls [`stage_wait`] before the next
/// barrier, and nothing reads or writes `dst` until that barrier; the destinations of copies
/// in flight together do not overlap (their order is not defined).
#[inline(always)]
unsafe fn stage16(dst: *mut u128, src: *const u128, n16: u64, tid: u32, threads: u32) {
    let mut q = tid as u64;
    while q < n16 {
        // SAFETY: q < n16 (the caller's ranges); the asm copies the one 16-byte word.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 s;",
                "cvta.to.shared.u64 s, {d};",
                "cp.async.cg.shared.global [s], [{g}], 16; }}",
                d = in(reg64) dst.add(q as usize),
                g = in(reg64) src.add(q as usize),
                options(nostack, preserves_flags)
            )
        };
        q += threads as u64;
    }
}

/// Waits until this thread's [`stage16`] copies are in shared memory (`cp.async.wait_all`).
#[inline(always)]
fn stage_wait() {
    // SAFETY: waits on this thread's own asynchronous copies; touches no other state.
    unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack, preserves_flags)) };
}

/// A ticket from the block queue (thread 0 of a CTA, once per block it decodes).
#[inline(always)]
fn take_ticket(queue: *mut u32) -> u32 {
    // SAFETY: `queue` is the launch's dense queue (its ticket word, zeroed by the rANS stage
    // before it published the epoch this CTA waited for); core atomics work on global memory.
    unsafe {
        core::sync::atomic::AtomicU32::from_ptr(queue.add(QUEUE_TICKET))
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed)
    }
}

/// The CTA's next block, entry `ncta + ticket` of the dense order (thread 0's
/// [`take_ticket`]; `order` holds `n_blocks` entries): thread 0 puts it in a control word and
/// after a barrier every thread reads it (`u32::MAX` past the order's end, where the caller's
/// loop ends).
#[inline(always)]
fn next_block(s: &Smem, ticket: u32, ncta: u32, order: *const u32, n_blocks: u32, tid: u32) -> u32 {
    if tid == 0 {
        let i = ncta.checked_add(ticket).unwrap_or(u32::MAX);
        // SAFETY: i < n_blocks entries of the order.
        let b = if i >= n_blocks {
            u32::MAX
        } else if order.is_null() {
            i
        } else {
            unsafe { *order.add(i as usize) }
        };
        // SAFETY: a shared control word; read by all threads after the barrier below and
        // not written again before the next block's barriers.
        unsafe { *s.ctrl(C_NEXT) = b };
    }
    sync();
    ctrl_get(s, C_NEXT)
}

/// Defines an entry point of the rANS stage, `rans_stage::<CTX_OK, PACK_OK, LATE, COPY16,
/// TWO_BIT_OK>` with the one
/// parameter list of all six ([`rans_decode_slices`]).
macro_rules! rans_entry {
    ($(#[$doc:meta])* $name:ident, $ctx:literal, $pack:literal, $late:literal, $copy16:literal, $two:literal) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(
            data: *const u8,
            data_len: u64,
            entries: *const BlockEntry,
            offsets: *const u64,
            n_blocks: u32,
            tables: *const DecodeTable,
            n_tables: u32,
            table_index: *const u32,
            group_blocks: u32,
            decoded: *mut u8,
            dec_len: u64,
            dec_offsets: *const u64,
            status: *mut u32,
            chunk_order: *const u32,
            n_chunks: u32,
            staged_tables: u32,
            stage_expand: u32,
            dense_queue: *mut u32,
            epoch: u32,
            halves: u32,
            leave_self_contained: u32,
        ) {
            // SAFETY: forwarded (the host's contract of every rANS entry point).
            unsafe {
            rans_stage::<$ctx, $pack, $late, $copy16, $two>(
                data, data_len, entries, offsets, n_blocks, tables, n_tables, table_index,
                group_blocks, decoded, dec_len, dec_offsets, status, chunk_order, n_chunks,
                staged_tables, stage_expand, dense_queue, epoch, halves, leave_self_contained,
            )
            }
        }
    };
}

rans_entry!(
    /// The rANS stage of the dense pipe and the wavefront decoder: in rounds, CTA `c` of the
    /// grid takes the chunks `chunk_order[c], chunk_order[c + grid], ...` (`n_chunks` entries:
    /// every chunk once, in an order the host chooses, longest chain first in serpentine
    /// rounds, `gpu::launch::rans_chunk_order`, and entries past the last block, which it
    /// skips). An entry is a chunk's first block `r0`; the chunk is the blocks from `r0` on,
    /// one per warp (with `halves` 2, below: a pair of warps per block), that lie in `r0`'s
    /// table group: warp `w` decodes block `r0 + w / halves` if it is in that group (and
    /// `w / halves` is below the chunk's `wpc / halves` blocks), the block's slices
    /// into `decoded` at `dec_offsets[STREAM_COUNT * block + stream]` (the host cuts every
    /// group into chunks, `gpu::launch::rans_chunks`). At the start of a round the CTA copies
    /// the decode tables of the chunk's table group into dynamic shared memory, one per
    /// stream (`rans::KERNEL_SMEM_BYTES`), by asynchronous copies issued all before the first
    /// wait ([`stage16`]), and its warps read them there. (In L1 the tables of a few groups
    /// per SM missed often enough that most steps waited on L2: rANS stage -15 % on gcide,
    /// PERFORMANCE.md seventh session; chunks that crossed a group read the other group's
    /// from global memory until the twenty-seventh session.)
    ///
    /// The interleaved lanes of the block's rANS slices are packed side by side into the warp's
    /// 32 lanes in rounds: each round takes, largest first, the slices that still fit (e.g. a
    /// 24-lane literal slice, a 1-lane command slice and a 1-lane offset slice in one round;
    /// `rans::warp_round`; the encoder picks lane counts that fit one round, or at levels 1-7
    /// two where that shortens the block's chain, `entropy::block_lanes`), so the state
    /// chains of a round's slices advance in the same steps. Raw slices are copied by the
    /// whole warp. With `halves` 2 (the host's choice for an archive with a wide slice, more
    /// than 32 lanes, FORMAT.md §5.4) every block has a pair of consecutive warps and a chunk
    /// is at most `wpc / 2` blocks: the first warp decodes all of the block but the second
    /// half of its wide slices' lanes, which the second decodes from their second word area
    /// at the same time; the pair then meets at a named barrier, and the first reports the block
    /// ([`join_halves`]). Without `halves` 2 a wide slice fails (`SliceMode`). A block's status is its first failing slice's, in stream order (as the CPU
    /// decoder reports it), written for every block, 0 too (the host zeroes nothing first).
    /// `dense_queue`, the archive's dense queue (`handoff::queue_words(n_blocks)` words) or
    /// null: its ticket and fallback words zeroed for the dense kernel that follows on the
    /// stream (`decode_blocks_dense`; no memset between the two launches) and, with a non-zero
    /// `epoch`, the hand-off to that kernel published (`handoff.rs`): the epoch once the
    /// words are zeroed, and each block's ready word once its slices and status are written.
    /// `leave_self_contained` non-zero (read by `rans_decode_slices_two_bit` alone; the host
    /// passes it to no other): the blocks [`self_contained`] names are left to that dense
    /// kernel (`decode_blocks_dense_sc`), which decodes them from the data section: this
    /// stage writes nothing for them, status and ready word included (the host passes it
    /// only with that kernel after this one, `gpu::launch::leaves_self_contained`).
    /// (Packing two blocks per warp was measured and dropped: fewer, longer chains, slower on
    /// every corpus; PERFORMANCE.md, 2026-11-30 third session.)
    ///
    /// Three entry points share this body, one per kind of table the archive has, so that each
    /// holds only the step variants it needs (their registers are allocated per kernel: the
    /// kernel with every variant took 78 registers, and at 64, the most two 16-warp CTAs per SM
    /// allow, it spilled; PERFORMANCE.md thirteenth session): `rans_decode_slices` for single
    /// tables, `rans_decode_slices_ctx` for context pairs (FORMAT.md §5.4),
    /// `rans_decode_slices_pack` for packed literal tables (§5.6) and context pairs, whose
    /// rounds never put a packed slice and a context slice together (`decode_slices`); a
    /// fourth, `rans_decode_slices_pack_narrow`, is that one under the launch bounds of 8-warp
    /// CTAs, which leave its step the registers it needs, and with its packed step's word load
    /// issued before the symbol's stores (`LATE`, [`decode_packed`]). A slice whose table kind its kernel
    /// lacks decodes wrong and fails its trailer check: the host picks the kernel from the
    /// archive's tables and the CTA size (`gpu::launch::rans_decode_slices`).
    rans_decode_slices,
    false,
    false,
    false,
    false,
    true
);
rans_entry!(
    /// [`rans_decode_slices`] with context pairs (FORMAT.md §5.4).
    rans_decode_slices_ctx,
    true,
    false,
    false,
    false,
    true
);
rans_entry!(
    /// [`rans_decode_slices`] with packed literal tables (FORMAT.md §5.6) and context pairs.
    rans_decode_slices_pack,
    true,
    true,
    false,
    false,
    true
);
rans_entry!(
    /// [`rans_decode_slices_pack`] for CTAs of at most `rans::KERNEL_NARROW_WARPS` warps: the
    /// same body under launch bounds (`build.rs`) that leave it the registers its packed step
    /// needs, where the 16-warp bounds of the other entry points make it spill. Its packed
    /// step issues the renormalisation word's load before the symbol's stores (`LATE`,
    /// [`decode_packed`]): on these grids, at most two CTAs per SM, the step's latency is the
    /// stage's time (E. coli rANS 0.078-0.080 -> 0.069-0.070 ms), while the 16-warp kernel, whose
    /// time is its throughput, spills more so (hs37 -1 %; PERFORMANCE.md seventeenth session).
    rans_decode_slices_pack_narrow,
    true,
    true,
    true,
    false,
    false
);
rans_entry!(
    /// [`rans_decode_slices_pack_narrow`] for archives with two-bit literal slices (FORMAT.md
    /// §5.7; the host's choice, `gpu::launch::rans_decode_slices`, for every such archive
    /// whose grid the narrow bounds hold): the same bounds, but it copies raw slices in
    /// 16-byte words ([`copy_raw_slice`]) and expands two-bit slices with the whole warp
    /// ([`expand_two_bit`]). The narrow entry point has no two-bit code at all (a two-bit
    /// slice fails it closed, `SliceMode`): in it, that code took its registers from 96 to
    /// 122 and slowed its rANS chain (E. coli with wide slices 112-114 -> 96-98 GB/s), and
    /// even the one-lane form of the other entry points cost it 3-4 % (PERFORMANCE.md
    /// thirtieth session). The others expand two-bit slices with one lane for the exceptions
    /// ([`expand_two_bit_lean`]; their 64 registers spilled with the warp's form).
    rans_decode_slices_two_bit,
    true,
    true,
    true,
    true,
    true
);
rans_entry!(
    /// [`rans_decode_slices_pack_narrow`] for grids of at most one CTA per SM, CTAs of up to
    /// `rans::KERNEL_SOLO_WARPS` warps (`gpu::launch::rans_solo_blocks`): its launch bounds
    /// (`build.rs`) leave it up to 80 registers a thread, its packed step the word load
    /// first (`LATE`). On the H200 (PERFORMANCE.md twenty-seventh session), against the
    /// usual grid of 16-warp CTAs, two on some SMs: ce2 (121 CTAs of 20 warps) +9 %, dm3
    /// (124 of 22) +6 %; the same body without `LATE` gained half of that.
    rans_decode_slices_pack_solo,
    true,
    true,
    true,
    false,
    true
);

/// The body of the rANS stage's entry points: `CTX_OK` decodes context pairs, `PACK_OK`
/// packed literal tables ([`rans_decode_slices`]), `LATE`: packed steps store their symbols
/// after the renormalisation word's load ([`decode_packed`]).
///
/// # Safety
/// The host's contract of [`rans_decode_slices`] (`gpu::launch::rans_decode_slices`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn rans_stage<
    const CTX_OK: bool,
    const PACK_OK: bool,
    const LATE: bool,
    const COPY16: bool,
    const TWO_BIT_OK: bool,
>(
    data: *const u8,
    data_len: u64,
    entries: *const BlockEntry,
    offsets: *const u64,
    n_blocks: u32,
    tables: *const DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    decoded: *mut u8,
    dec_len: u64,
    dec_offsets: *const u64,
    status: *mut u32,
    chunk_order: *const u32,
    n_chunks: u32,
    staged_tables: u32,
    stage_expand: u32,
    dense_queue: *mut u32,
    epoch: u32,
    halves: u32,
    leave_self_contained: u32,
) {
    // SAFETY: special registers.
    let (tid, bdim, cta, ncta) = unsafe {
        (
            _thread_idx_x(),
            _block_dim_x(),
            _block_idx_x(),
            _grid_dim_x(),
        )
    };
    let lane = tid % 32;
    let wpc = (bdim / 32) as u64;
    // warps per block: 2 for an archive with wide slices (FORMAT.md §5.4), a pair of
    // consecutive warps per block, warp 2p + h decoding the wide slices' half h
    let halves: u64 = if halves == 2 { 2 } else { 1 };
    let bpc = wpc / halves;
    if cta == 0 && tid == 0 && !dense_queue.is_null() {
        // the dense kernel's block queue and fallback count, zeroed for the dense kernel that
        // follows on the stream (instead of a memset between the two launches)
        // SAFETY: a non-null dense_queue holds queue_words(n_blocks) words; the dense kernel,
        // which may run beside this grid, touches these two only after it saw the epoch
        // published below (or after this grid completed: handoff.rs).
        unsafe {
            *dense_queue.add(QUEUE_TICKET) = 0;
            *dense_queue.add(QUEUE_FALLBACK) = 0;
        }
        if epoch != 0 {
            // the words zeroed before the epoch that tells the dense kernel so (handoff.rs)
            crate::handoff::fence_gpu();
            // SAFETY: word QUEUE_EPOCH of the dense queue (queue_words(n_blocks) words),
            // which only this thread writes while the grids run.
            unsafe { crate::handoff::publish(dense_queue.add(QUEUE_EPOCH), epoch) };
        }
    }
    // the dense kernel, launched after this one with programmatic stream serialization, may
    // start once every CTA of this grid has passed here (all of them resident or done, so its
    // waits for their blocks end: handoff.rs)
    crate::handoff::launch_dependents();
    let src = Sources {
        data,
        data_len,
        entries,
        offsets,
        dec_offsets,
        tables,
        n_tables,
        table_index,
        group_blocks,
        decoded,
        dec_len,
    };
    // u128: the staging copies store 16-byte words (a 16-aligned base, `.align 16`)
    let smem = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u128>() as *mut u32;
    // the expansion table of a packed literal table (FORMAT.md §5.6) after the staged tables,
    // when the host launched with room for it
    let expand_smem = if stage_expand != 0 {
        // SAFETY: the host launches with staged_tables tables plus one expansion table's
        // slots 0..256 (`crate::rans::KERNEL_EXPAND_BYTES`) when stage_expand is set.
        unsafe { smem.add(staged_tables as usize * PROB_SCALE as usize) }
    } else {
        core::ptr::null_mut()
    };
    // rounds of one chunk of up to `bpc` consecutive blocks of a table group per CTA, one
    // block per warp (or pair); the chunks in the host's order (longest chains first)
    let mut slot = cta;
    while slot < n_chunks {
        // SAFETY: slot < n_chunks entries of the order.
        let r0 = unsafe { *chunk_order.add(slot as usize) } as u64;
        slot += ncta;
        if r0 >= n_blocks as u64 {
            continue;
        }
        let g0 = r0 / group_blocks as u64;
        // timeline marks of a trace build (device/src/trace.rs; nothing otherwise): the
        // first warp of each block's warps, for the blocks of this chunk
        let traced = |b: u64, w: u64| {
            lane == 0
                && w % halves == 0
                && w / halves < bpc
                && b < n_blocks as u64
                && b / group_blocks as u64 == g0
        };
        if cfg!(feature = "trace") {
            let w = (tid / 32) as u64;
            if traced(r0 + w / halves, w) {
                crate::trace::mark(r0 + w / halves, crate::trace::RANS_START);
            }
        }
        sync();
        for k in 0..STREAM_COUNT {
            // SAFETY: r0 < n_blocks: its group has STREAM_COUNT table indices.
            if let Some((ti, tag)) = unsafe {
                crate::kernels::stream_table_index(table_index, n_tables, group_blocks, r0, k)
            } {
                // (every copy below is asynchronous: all of them in flight at once, waited
                // for after the loop; shared memory is not read before the barrier after it)
                if tag == TABLE_PACKED && !expand_smem.is_null() {
                    // SAFETY: ti + 1 < n_tables (stream_table_index); its first 256 slots
                    // (1 KiB) go to the expansion area of the launch's shared memory.
                    unsafe {
                        stage16(
                            expand_smem as *mut u128,
                            tables.add(ti as usize + 1) as *const u128,
                            64,
                            tid,
                            bdim,
                        )
                    };
                }
                // the first table in slot k
                // SAFETY: ti < n_tables (stream_table_index); slot k < STREAM_COUNT tables
                // of dynamic shared memory the host launches with.
                unsafe {
                    stage16(
                        smem.add(k * PROB_SCALE as usize) as *mut u128,
                        tables.add(ti as usize) as *const u128,
                        (PROB_SCALE / 4) as u64,
                        tid,
                        bdim,
                    )
                };
                // a context pair's second in its staged slot when the host launched with
                // room for it
                if is_context(tag) && staged_tables as usize > STREAM_COUNT {
                    if let Some(slot) = staged_slot(k) {
                        // SAFETY: ti + 1 < n_tables (a pair's second: stream_table_index);
                        // slot < KERNEL_STAGED_TABLES tables of dynamic shared memory the
                        // host launches with when staged_tables is above STREAM_COUNT.
                        unsafe {
                            stage16(
                                smem.add(slot * PROB_SCALE as usize) as *mut u128,
                                tables.add(ti as usize + 1) as *const u128,
                                (PROB_SCALE / 4) as u64,
                                tid,
                                bdim,
                            )
                        };
                    }
                }
            }
        }
        stage_wait();
        sync();
        let w = (tid / 32) as u64;
        let b = r0 + w / halves;
        let half = (w % halves) as u32;
        if cfg!(feature = "trace") && traced(b, w) {
            crate::trace::mark(b, crate::trace::RANS_STAGED);
        }
        // the chunk's blocks: those of r0's group (a block of the next group belongs to
        // another chunk). Both warps of a pair have the same block: both pass or both skip.
        // With `leave_self_contained`, a block the dense kernel after this one decodes from
        // the data section alone is skipped: no slice, no status, no hand-off
        // ([`self_contained`]; only in `rans_decode_slices_two_bit`, the one entry point
        // with `TWO_BIT_OK` and `COPY16`: the others keep their code as it was).
        if w / halves < bpc
            && b < n_blocks as u64
            && b / group_blocks as u64 == g0
            // SAFETY: b < n_blocks entries and data offsets.
            && !(TWO_BIT_OK
                && COPY16
                && leave_self_contained != 0
                && unsafe { self_contained(&*entries.add(b as usize), offsets, b as u32, data_len) }
                    .is_some())
        {
            let st = decode_slices::<CTX_OK, PACK_OK, LATE, COPY16, TWO_BIT_OK>(
                &src,
                b,
                lane,
                Staged {
                    tables: smem,
                    pairs: staged_tables as usize > STREAM_COUNT,
                    expand: expand_smem,
                },
                half,
                halves as u32,
            );
            let st = if halves == 2 {
                // SAFETY: the host launches with room for a status per warp pair after the
                // staged tables (and the expansion table when staged): `pair_slots`.
                let slot =
                    unsafe { pair_slots(smem, staged_tables, stage_expand).add((w / 2) as usize) };
                // SAFETY: the pair's slot, written by its second warp's lane 0 before the
                // pair's barrier and read by the first warp after it.
                unsafe { join_halves(slot, st, half, lane, (w / 2) as u32) }
            } else {
                st
            };
            if half == 1 {
                // the first warp of the pair reports and publishes the block
                continue;
            }
            // the block's first failing slice in stream order
            let mut first_bad = 0u32;
            for k in (0..STREAM_COUNT).rev() {
                let v = byte_get(st, k);
                if v != 0 {
                    first_bad = v;
                }
            }
            if lane == 0 {
                // every block's status, 0 too: the host does not zero them first (the chunk
                // order holds every chunk once, so every block has exactly one warp, or one
                // pair whose first warp writes it)
                // SAFETY: one status word per block; only this warp writes it in this kernel.
                unsafe { *status.add(b as usize) = first_bad };
            }
            if !dense_queue.is_null() && epoch != 0 {
                // the block's slices and status, then its ready word (handoff.rs): each
                // lane's stores fenced, the warp synchronised, lane 0 publishes
                crate::handoff::fence_gpu();
                syncwarp();
                if lane == 0 {
                    // SAFETY: word QUEUE_READY + b < queue_words(n_blocks) of the dense
                    // queue; block b's ready word is written only by this warp.
                    unsafe {
                        crate::handoff::publish(dense_queue.add(QUEUE_READY + b as usize), epoch)
                    };
                }
            }
            if lane == 0 {
                crate::trace::mark(b, crate::trace::RANS_DONE);
            }
        }
    }
}

/// The rANS stage's per-pair status slots in its dynamic shared memory `smem` (one `u64` per
/// pair of warps of a block with wide slices, `rans::KERNEL_PAIR_BYTES`): after the
/// `staged_tables` tables and, with `stage_expand`, the expansion table's 256 slots.
///
/// # Safety
/// The host launches with that much shared memory (`gpu::launch::rans_decode_slices`).
#[inline(always)]
unsafe fn pair_slots(smem: *mut u32, staged_tables: u32, stage_expand: u32) -> *mut u64 {
    let words =
        staged_tables as usize * PROB_SCALE as usize + if stage_expand != 0 { 256 } else { 0 };
    // SAFETY: the caller's contract; `words` is even (PROB_SCALE and 256 are), so the slot
    // area is 8-aligned from the 16-aligned base.
    unsafe { smem.add(words) as *mut u64 }
}

/// Joins the statuses of a block's two warps (FORMAT.md §5.4, wide slices): the second
/// (`half` 1) stores its slice codes `st` in `slot` and fences its output, both meet at
/// named barrier `1 + pair` (64 threads), the first returns, per slice, the lower non-zero
/// code of the two (the order the checks run in the reference decoder: header, underflow,
/// trailer), the second its own `st`. Every thread of both warps must call it.
///
/// # Safety
/// `slot` is the pair's own slot in shared memory; `pair < 15`.
#[inline(always)]
unsafe fn join_halves(slot: *mut u64, st: u64, half: u32, lane: u32, pair: u32) -> u64 {
    if half == 1 {
        if lane == 0 {
            // SAFETY: the pair's slot (the caller's contract).
            unsafe { *slot = st };
        }
        // this warp's slices before the first warp's publication of the block (handoff.rs:
        // it fences again, then publishes)
        crate::handoff::fence_gpu();
    }
    // SAFETY: both warps of the pair (64 threads) reach this barrier, its id 1..=15 theirs
    // alone (barrier 0 is the CTA's `sync`).
    unsafe {
        core::arch::asm!(
            "barrier.sync {id}, 64;",
            id = in(reg32) 1 + pair,
            options(nostack, preserves_flags)
        )
    };
    if half == 1 {
        return st;
    }
    // SAFETY: written by the second warp before the barrier.
    let other = unsafe { *slot };
    let mut out = st;
    for k in 0..STREAM_COUNT {
        let (a, b) = (byte_get(st, k), byte_get(other, k));
        let c = if a == 0 || (b != 0 && b < a) { b } else { a };
        out = byte_set(out, k, c);
    }
    out
}

/// Shared-memory slot of the second (context-1) table of stream `k`'s context pair, if the
/// rANS stage stages it (`crate::rans::KERNEL_STAGED_TABLES`): the literal and command streams,
/// where the encoder's context tables pay; any other stream's second table is read from
/// global memory.
#[inline(always)]
fn staged_slot(k: usize) -> Option<usize> {
    match k {
        STREAM_LITERALS => Some(STREAM_COUNT),
        STREAM_COMMANDS => Some(STREAM_COUNT + 1),
        _ => None,
    }
}

const _: () = assert!(STREAM_COUNT + 2 == crate::rans::KERNEL_STAGED_TABLES);

/// True for the table-index tag of a context pair (`ctx_bit + 1`, 1-8; FORMAT.md §5.4).
#[inline(always)]
fn is_context(tag: u32) -> bool {
    tag != 0 && tag <= 8
}

/// What the rANS stage staged in shared memory for the block's group (a CTA's chunk lies in
/// one group: `gpu::launch::rans_chunks`).
#[derive(Clone, Copy)]
struct Staged {
    /// The first table of each stream, slot `k` for stream `k`.
    tables: *const u32,
    /// The context pairs' second tables of the literal and command streams too
    /// ([`staged_slot`]).
    pairs: bool,
    /// A packed literal table's expansion slots 0..256 (FORMAT.md §5.6), or null (global).
    expand: *const u32,
}

/// Byte `i` of a packed per-slice array (a block's five slices in a `u64`: lane counts or
/// status codes, both < 256), one register pair instead of an array held in five.
#[inline(always)]
fn byte_get(v: u64, i: usize) -> u32 {
    ((v >> (8 * i)) & 0xFF) as u32
}

/// `v` with byte `i` set to `x` (see [`byte_get`]).
#[inline(always)]
fn byte_set(v: u64, i: usize, x: u32) -> u64 {
    (v & !(0xFF << (8 * i))) | (((x & 0xFF) as u64) << (8 * i))
}

/// The warp lanes `base .. base + lanes` as a mask (`lanes <= 32 - base`; 0 lanes: empty).
#[inline(always)]
fn lane_mask(lanes: u32, base: u32) -> u32 {
    let ones = if lanes >= 32 {
        u32::MAX
    } else {
        (1u32 << lanes) - 1
    };
    ones << base
}

const _: () = assert!(STREAM_COUNT <= 8);

/// The archive buffers the rANS stage reads and writes (kernel arguments).
struct Sources {
    data: *const u8,
    data_len: u64,
    entries: *const BlockEntry,
    offsets: *const u64,
    dec_offsets: *const u64,
    tables: *const DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    decoded: *mut u8,
    dec_len: u64,
}

/// Where one slice lies and what it needs, checked before any lane reads it.
#[derive(Clone, Copy)]
struct SliceInfo {
    /// Offset in the data section.
    off: u64,
    /// Where its decoded bytes go: offset in the decoded scratch (offsets, not pointers, so
    /// the kernel's loads and stores keep the global address space of its arguments).
    dst_off: u64,
    /// Index of its group's table for its stream (rANS slices; `u32::MAX`: none).
    table: u32,
    /// The table-index tag (`crate::kernels::stream_table_index`): `ctx_bit + 1` when the
    /// group's tables for the stream are a context pair (`table`, `table + 1`),
    /// [`TABLE_PACKED`] for a packed literal table (its expansion table at `table + 1`), else 0.
    ctx: u32,
    /// Decoded length.
    n: u32,
    /// Stored length.
    stored: u32,
    /// rANS lanes (0 = raw, two-bit, invalid or absent).
    lanes: u32,
    /// A two-bit literal slice (FORMAT.md §5.7), whose checks are in [`expand_two_bit`].
    two_bit: bool,
    /// Status of the checks that need no lane state.
    pre: Status,
}

impl SliceInfo {
    const EMPTY: SliceInfo = SliceInfo {
        off: 0,
        dst_off: 0,
        table: u32::MAX,
        ctx: 0,
        n: 0,
        stored: 0,
        lanes: 0,
        two_bit: false,
        pre: Status::Ok,
    };
}

/// Slice `k` of block `b` (FORMAT.md §3.1, §5.3: a block's slices are stored in stream order
/// from its data offset; raw slices need `stored == decoded`, rANS slices room for their
/// states, an even word area and a table). Recomputed where needed rather than kept for all
/// of a warp's slices, which would hold dozens of registers through the decode loop.
#[inline(always)]
fn slice_info(src: &Sources, b: u64, k: usize) -> SliceInfo {
    // SAFETY: b < n_blocks (callers); the host passes n_blocks entries and offsets and
    // STREAM_COUNT decoded offsets per block.
    let (e, mut pos, doff) = unsafe {
        (
            &*src.entries.add(b as usize),
            *src.offsets.add(b as usize),
            *src.dec_offsets.add(b as usize * STREAM_COUNT + k),
        )
    };
    for &len in &e.stored_len[..k] {
        pos = pos.saturating_add(len as u64);
    }
    let stored = e.stored_len[k] as u64;
    let n = e.decoded_len[k] as u64;
    let lanes = e.lanes[k] as u32;
    // SAFETY: the host passes group_count * STREAM_COUNT indices.
    let (table, ctx) = unsafe {
        crate::kernels::stream_table_index(src.table_index, src.n_tables, src.group_blocks, b, k)
    }
    .unwrap_or((u32::MAX, 0));
    let mut pre = Status::Ok;
    if doff > src.dec_len
        || n > src.dec_len - doff
        || pos > src.data_len
        || stored > src.data_len - pos
    {
        pre = Status::SliceMode;
    } else if lanes == LANES_RAW as u32 {
        if stored != n {
            pre = Status::SliceMode;
        }
    } else if lanes == LANES_TWO_BIT as u32 && k == STREAM_LITERALS {
        // FORMAT.md §5.7: the rest is checked where it is expanded
    } else if lanes > MAX_LANES as u32 {
        pre = Status::SliceMode;
    } else if stored < slice_head(lanes) || (stored - slice_head(lanes)) % 2 != 0 {
        pre = Status::RansHeader;
    } else if table == u32::MAX {
        pre = Status::SliceMode;
    }
    let ok = pre == Status::Ok;
    SliceInfo {
        off: pos,
        dst_off: if ok { doff } else { 0 },
        table,
        ctx,
        n: n as u32,
        stored: stored as u32,
        two_bit: lanes == LANES_TWO_BIT as u32 && k == STREAM_LITERALS,
        lanes: if ok && lanes != LANES_RAW as u32 && lanes != LANES_TWO_BIT as u32 {
            lanes
        } else {
            0
        },
        pre,
    }
}

/// Bytes before a rANS slice's words (FORMAT.md §5.4): `lanes` states, and for a wide slice
/// (more than [`WARP_LANES`] lanes) the first word area's word count.
#[inline(always)]
fn slice_head(lanes: u32) -> u64 {
    4 * lanes as u64 + if lanes > WARP_LANES as u32 { 4 } else { 0 }
}

/// Decodes the slices of block `b` with the whole warp (`CTX_OK`, `PACK_OK`: the table kinds of
/// the kernel, [`rans_decode_slices`]; `LATE` as [`decode_packed`]'s for packed rounds): raw
/// slices copied, rANS
/// slices packed into rounds of at most 32 lanes (largest first, first fit). `staged` is the
/// block's group's decode tables in shared memory, one per stream.
/// Returns each slice's status code, packed ([`byte_get`]).
#[inline(always)]
fn decode_slices<
    const CTX_OK: bool,
    const PACK_OK: bool,
    const LATE: bool,
    const COPY16: bool,
    const TWO_BIT_OK: bool,
>(
    src: &Sources,
    b: u64,
    lane: u32,
    staged: Staged,
    half: u32,
    halves: u32,
) -> u64 {
    let mut st = 0u64;
    let mut lanes = 0u64;
    let mut left = 0u32;
    // slices whose tables are a context pair, slices of packed literals
    let mut ctxs = 0u32;
    let mut packs = 0u32;
    // with `COPY16`, the raw slices, copied in 16-byte words after the rANS rounds (where
    // fewer values are live); else byte by byte as they come
    let mut raw = 0u32;
    // two-bit literal slices (FORMAT.md §5.7), expanded after the rANS rounds
    let mut two_bit = 0u32;
    for i in 0..STREAM_COUNT {
        let s = slice_info(src, b, i);
        let wide = s.lanes > WARP_LANES as u32;
        // the second warp of a pair decodes the second halves of wide slices alone
        if half == 1 && !wide {
            continue;
        }
        // a wide slice needs a pair of warps (the host launches them for an archive with
        // one): without, it fails closed
        let pre = if wide && halves != 2 || s.two_bit && !TWO_BIT_OK {
            // (the host launches pairs of warps for an archive with wide slices, and an
            // entry point with `TWO_BIT_OK` for one with two-bit slices)
            Status::SliceMode
        } else {
            s.pre
        };
        st = byte_set(st, i, pre as u32);
        lanes = byte_set(lanes, i, s.lanes);
        ctxs |= (is_context(s.ctx) as u32) << i;
        packs |= ((s.ctx == TABLE_PACKED) as u32) << i;
        if pre == Status::Ok {
            if s.two_bit && TWO_BIT_OK {
                two_bit |= 1 << i;
            } else if s.lanes == 0 {
                if COPY16 {
                    raw |= 1 << i;
                } else {
                    copy_raw_slice_bytes(src, &s, lane);
                }
            } else {
                left |= 1 << i;
            }
        }
    }
    while left != 0 {
        // never a packed slice and a context slice in one round (the kernel holds no step
        // variant for both); a wide slice alone, this warp's half of its lanes
        let round = crate::rans::warp_round(left, lanes, ctxs, packs, PACK_OK);
        let h = if crate::rans::wide_round(round, lanes) {
            half
        } else {
            0
        };
        // the context step only where a slice of the round needs it (its table pick and
        // the lane's previous symbol cost every step)
        // (a kernel without a table kind decodes such a slice as a single table, which
        // fails its trailer check: the host picks the kernel by the archive's tables)
        st = if CTX_OK && round & ctxs != 0 {
            decode_packed::<true, false, false>(src, b, lanes, round, lane, st, staged, h)
        } else if PACK_OK && round & packs != 0 {
            decode_packed::<false, true, LATE>(src, b, lanes, round, lane, st, staged, h)
        } else {
            decode_packed::<false, false, false>(src, b, lanes, round, lane, st, staged, h)
        };
        left &= !round;
    }
    for i in 0..STREAM_COUNT {
        if COPY16 && raw & (1 << i) != 0 {
            copy_raw_slice(src, &slice_info(src, b, i), lane);
        }
        if TWO_BIT_OK && two_bit & (1 << i) != 0 {
            let info = slice_info(src, b, i);
            let code = if COPY16 {
                expand_two_bit(src, &info, lane)
            } else {
                expand_two_bit_lean(src, &info, lane)
            };
            st = byte_set(st, i, code as u32);
        }
    }
    st
}

/// Copies a raw slice (`stored == decoded`, checked in `info.pre`) with the whole warp,
/// `rans::RAW_COPY_UNROLL` bytes per lane in flight: a lane's byte loads do not wait for
/// each other's stores, so a 16 KiB raw slice (the literals of a FASTA header's block) costs
/// 128 memory latencies rather than 512, which had made such a block the longest chain of the
/// rANS stage (TAIR10: 446 steps; PERFORMANCE.md fourteenth session). Every entry point
/// but `rans_decode_slices_two_bit` takes this form: [`copy_raw_slice`] made the ones with 64
/// registers a thread spill, and the narrow packed one, which the smaller archives with wide
/// slices run, keeps its codegen as it was (PERFORMANCE.md thirtieth session).
#[inline(always)]
fn copy_raw_slice_bytes(src: &Sources, info: &SliceInfo, lane: u32) {
    use crate::rans::RAW_COPY_UNROLL;
    let n = info.n as usize;
    let mut i = lane as usize;
    while i + 32 * (RAW_COPY_UNROLL - 1) < n {
        // SAFETY: every i + 32j < n == stored: inside the data section and the decoded slot
        // (info.pre).
        let v: [u8; RAW_COPY_UNROLL] =
            core::array::from_fn(|j| unsafe { gb(src.data, info.off as usize + i + 32 * j) });
        for (j, &b) in v.iter().enumerate() {
            // SAFETY: as above.
            unsafe { *src.decoded.add(info.dst_off as usize + i + 32 * j) = b };
        }
        i += 32 * RAW_COPY_UNROLL;
    }
    while i < n {
        // SAFETY: i < n == stored: inside the data section and the decoded slot (info.pre).
        unsafe {
            *src.decoded.add(info.dst_off as usize + i) = gb(src.data, info.off as usize + i)
        };
        i += 32;
    }
}

/// Copies a raw slice (`stored == decoded`, checked in `info.pre`) with the whole warp in
/// 16-byte words ([`for_src16`]; the decoded slot is 16-aligned, `gpu::decoder`): a 16 KiB
/// raw slice costs 8 memory latencies. (Byte loads, four in flight per lane
/// ([`copy_raw_slice_bytes`]), took 128, ~25 us on the H200: as long as E. coli's rANS chains;
/// PERFORMANCE.md thirtieth session.) The slot's last word may take up to 15 bytes past the
/// slice (the next slice's, or the data section's zero padding), which fall in the slot's
/// padding (every slot is padded to a multiple of 16 bytes).
#[inline(always)]
fn copy_raw_slice(src: &Sources, info: &SliceInfo, lane: u32) {
    // SAFETY: the slot holds the slice's n bytes rounded up to 16 (`gpu::decoder`; info.pre
    // checked dst_off + n <= dec_len), 16-aligned.
    let dst = unsafe { src.decoded.add(info.dst_off as usize) } as *mut u128;
    // SAFETY: info.pre checked off + n <= data_len.
    unsafe {
        for_src16(src, info.off, info.n as u64, lane, |j, v| {
            // SAFETY: j < ceil(n / 16): inside the slot (above).
            *dst.add(j as usize) = join16(v)
        })
    };
}

/// The four little-endian words `v` as one 16-byte word.
#[inline(always)]
fn join16(v: [u32; 4]) -> u128 {
    v[0] as u128 | (v[1] as u128) << 32 | (v[2] as u128) << 64 | (v[3] as u128) << 96
}

/// Calls `f(j, word)` for every 16-byte word `j < ceil(len / 16)` of the data-section bytes
/// `off .. off + len` (the last word's bytes past `len` are the next bytes of the data
/// section, or zeros where they lie in an aligned word past the region's last), with the
/// whole warp: each lane loads aligned 16-byte words
/// ([`load_src16`]), takes the next one from the lane to its right by shuffles and joins the
/// 16 bytes that start `off % 16` bytes into the pair ([`funnel16`]);
/// `rans::RAW_COPY_WORDS` words per lane in flight. Word `j` goes to lane `j % 32`.
///
/// # Safety
/// `off + len <= src.data_len`; every lane of the warp calls it (shuffles).
#[inline(always)]
unsafe fn for_src16(
    src: &Sources,
    off: u64,
    len: u64,
    lane: u32,
    mut f: impl FnMut(u64, [u32; 4]),
) {
    use crate::rans::RAW_COPY_WORDS;
    if len == 0 {
        return;
    }
    let s = (off & 15) as u32;
    let abase = off - s as u64;
    // the last aligned source word that holds a byte of the region
    let last = (s as u64 + len - 1) / 16;
    let n16 = len.div_ceil(16);
    let load = |c: u64| -> [u32; 4] {
        if c > last {
            return [0; 4];
        }
        // SAFETY: abase + 16c <= off + len - 1 < data_len (c <= last; the caller's
        // contract); the host pads the data section to a multiple of 16 bytes (the rANS
        // stage's contract, `gpu::launch::rans_decode_slices`).
        unsafe { load_src16(src.data, src.data_len, abase + 16 * c) }
    };
    let right = (lane + 1) & 31;
    let mut jb = 0u64;
    while jb < n16 {
        let a: [[u32; 4]; RAW_COPY_WORDS] =
            core::array::from_fn(|t| load(jb + lane as u64 + 32 * t as u64));
        // the word after the round's last, for lane 31's last pair (from lane 0)
        let x = if s != 0 && lane == 0 {
            load(jb + 32 * RAW_COPY_WORDS as u64)
        } else {
            [0; 4]
        };
        // word t of the round; `next` is what this lane gives for word t + 1's pairs: lane l
        // gets word j + 1 from lane l + 1, lane 31 from lane 0, which gives its next word
        // (called with constant t below, so that `a` stays in registers)
        let mut word = |t: usize, here: [u32; 4], next: [u32; 4]| {
            let j = jb + lane as u64 + 32 * t as u64;
            let v = if s == 0 {
                here
            } else {
                let give = if lane != 0 { here } else { next };
                funnel16(here, give.map(|w| shfl(w, right)), s)
            };
            if j < n16 {
                f(j, v);
            }
        };
        word(0, a[0], a[1]);
        word(1, a[1], a[2]);
        word(2, a[2], a[3]);
        word(3, a[3], x);
        jb += 32 * RAW_COPY_WORDS as u64;
    }
}

const _: () = assert!(
    crate::rans::RAW_COPY_WORDS == 4,
    "for_src16 takes four words a round"
);

/// The 16 bytes at `at .. at + 16` of the data section `data` (`data_len` bytes, padded with
/// zeros to a multiple of 16: `gpu::decoder`'s upload) as four little-endian words, `at`
/// 16-aligned; zeros for a word past the padded end (which no caller asks for).
///
/// # Safety
/// `data` is 16-aligned and readable up to `data_len` rounded up to a multiple of 16.
#[inline(always)]
unsafe fn load_src16(data: *const u8, data_len: u64, at: u64) -> [u32; 4] {
    if at >= data_len.div_ceil(16) * 16 {
        return [0; 4];
    }
    // SAFETY: at is 16-aligned and below the padded length, so all 16 bytes are readable
    // (the caller's contract).
    let w = unsafe { *(data.add(at as usize) as *const u128) };
    [
        w as u32,
        (w >> 32) as u32,
        (w >> 64) as u32,
        (w >> 96) as u32,
    ]
}

/// Bytes `s .. s + 16` of the 32 bytes `a` then `b` (little-endian words), `1 <= s < 16`
/// (warp-uniform in [`copy_raw_slice`], so the branch on `s / 4` does not diverge).
#[inline(always)]
fn funnel16(a: [u32; 4], b: [u32; 4], s: u32) -> [u32; 4] {
    let w = [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]];
    let pick = |k: usize| [w[k], w[k + 1], w[k + 2], w[k + 3], w[k + 4]];
    let v = match s / 4 {
        0 => pick(0),
        1 => pick(1),
        2 => pick(2),
        _ => pick(3),
    };
    let sh = 8 * (s % 4);
    core::array::from_fn(|i| ((((v[i + 1] as u64) << 32) | v[i] as u64) >> sh) as u32)
}

/// `prmt.b32` with a zero second operand: byte `t` of the result is byte `sel`'s nibble `t`
/// (0-3) of `a`.
#[inline(always)]
fn prmt(a: u32, sel: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only byte permute.
    unsafe {
        core::arch::asm!(
            "prmt.b32 {r}, {a}, 0, {s};",
            r = out(reg32) r,
            a = in(reg32) a,
            s = in(reg32) sel,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    r
}

/// The 16 literals of four code bytes `c` (little-endian) of a two-bit slice whose four
/// symbols are the bytes of `sym` (FORMAT.md §5.7): byte `t` of `c` gives literals
/// `4t .. 4t + 4`, its 2-bit codes spread into the nibbles of a [`prmt`] selector.
#[inline(always)]
fn expand_codes(sym: u32, c: u32) -> [u32; 4] {
    core::array::from_fn(|t| {
        let b = (c >> (8 * t)) & 0xFF;
        let sel = (b & 3) | (b & 0xC) << 2 | (b & 0x30) << 4 | (b & 0xC0) << 6;
        prmt(sym, sel)
    })
}

/// Reads a varint of at most `two_bit::MAX_VARINT_BYTES` bytes at data-section offset `*at`
/// (below `end`), advancing `at`; `None` when it runs to `end` or is longer.
///
/// # Safety
/// `end <= data_len`.
#[inline(always)]
unsafe fn varint4(data: *const u8, at: &mut u64, end: u64) -> Option<u32> {
    let mut v = 0u32;
    for i in 0..crate::two_bit::MAX_VARINT_BYTES {
        if *at >= end {
            return None;
        }
        // SAFETY: *at < end <= data_len.
        let b = unsafe { gb(data, *at as usize) };
        *at += 1;
        v |= ((b & 0x7F) as u32) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// An inclusive sum over the warp's lanes of `v`, wrapping (five rounds of shuffles).
#[inline(always)]
fn scan_u32(v: u32, lane: u32) -> u32 {
    let mut v = v;
    let mut d = 1;
    while d < 32 {
        let o = shfl_up(v, d);
        if lane >= d {
            v = v.wrapping_add(o);
        }
        d *= 2;
    }
    v
}

/// This lane's 16 bytes of the data-section bytes `off + 16 lane ..` (the window of 512
/// bytes a warp holds; bytes at or past `off + len` are the section's next bytes or zeros),
/// by aligned 16-byte loads ([`load_src16`]) and the next lane's word (lane 31 loads its
/// own), joined at `off % 16` ([`funnel16`]).
///
/// # Safety
/// `len >= 1`, `off + len <= data_len`, `data` as [`load_src16`] asks; every lane of the warp
/// calls it (shuffles).
#[inline(always)]
unsafe fn window16(data: *const u8, data_len: u64, off: u64, len: u64, lane: u32) -> [u32; 4] {
    let s = (off & 15) as u32;
    let abase = off - s as u64;
    // the last aligned word that holds a byte of the region
    let last = (s as u64 + len - 1) / 16;
    let load = |c: u64| -> [u32; 4] {
        if c > last {
            return [0; 4];
        }
        // SAFETY: abase + 16c <= off + len - 1 < data_len (c <= last; the caller's
        // contract); the host pads the data section to a multiple of 16 bytes.
        unsafe { load_src16(data, data_len, abase + 16 * c) }
    };
    let a = load(lane as u64);
    if s == 0 {
        return a;
    }
    let own = if lane == 31 { load(32) } else { [0; 4] };
    let next = a.map(|v| shfl(v, (lane + 1) & 31));
    funnel16(a, if lane == 31 { own } else { next }, s)
}

/// An inclusive sum over the warp's lanes of the 64-bit `v` (five rounds of two shuffles).
#[inline(always)]
fn scan_i64(v: i64, lane: u32) -> i64 {
    let mut v = v;
    let mut d = 1;
    while d < 32 {
        let lo = shfl_up(v as u32, d);
        let hi = shfl_up((v as u64 >> 32) as u32, d);
        if lane >= d {
            v += ((hi as u64) << 32 | lo as u64) as i64;
        }
        d *= 2;
    }
    v
}

/// [`expand_two_bit`] in few registers, for the rANS entry points held to 64 (which spilled
/// with it): the codes by byte loads, `rans::RAW_COPY_UNROLL` per lane in flight, each one
/// 4-byte store; the exceptions by lane 0 alone, one after the other, as the reference
/// decoder reads them ([`crate::two_bit::decode`]). A warp barrier orders the codes' stores
/// before the exceptions'.
#[inline(always)]
fn expand_two_bit_lean(src: &Sources, info: &SliceInfo, lane: u32) -> Status {
    use crate::rans::RAW_COPY_UNROLL;
    let bad = Status::TwoBitSlice;
    let n = info.n as u64;
    let stored = info.stored as u64;
    let off = info.off;
    let m = n.div_ceil(4);
    // info.pre checked off + stored <= data_len and dst_off + n <= dec_len
    if n == 0 || stored < 4 + 2 + m {
        return bad;
    }
    let data = src.data;
    let codes_at = off + stored - m;
    // SAFETY: off + 4 <= off + stored <= data_len.
    let sym = unsafe { gb_u32(data, off as usize) };
    // SAFETY: the slot holds n bytes rounded up to 16 (`gpu::decoder`), 16-aligned.
    let dst = unsafe { src.decoded.add(info.dst_off as usize) };
    let mut j = lane as u64;
    while j < m {
        // SAFETY: codes_at + j + 32i < codes_at + m = off + stored <= data_len (checked
        // per load).
        let c: [u32; RAW_COPY_UNROLL] = core::array::from_fn(|i| {
            let at = j + 32 * i as u64;
            if at < m {
                (unsafe { gb(data, (codes_at + at) as usize) }) as u32
            } else {
                0
            }
        });
        for (i, &c) in c.iter().enumerate() {
            let at = j + 32 * i as u64;
            if at < m {
                let sel = (c & 3) | (c & 0xC) << 2 | (c & 0x30) << 4 | (c & 0xC0) << 6;
                // SAFETY: 4 * at < n + 3: a 4-aligned word inside the slot (n rounded up
                // to 16).
                unsafe { *(dst.add(4 * at as usize) as *mut u32) = prmt(sym, sel) };
            }
        }
        j += 32 * RAW_COPY_UNROLL as u64;
    }
    // the codes' stores before the exceptions'
    syncwarp();
    let mut fine = true;
    if lane == 0 {
        fine = (|| {
            let mut at = off + 4;
            // SAFETY (every read): below codes_at <= data_len.
            let x = unsafe { varint4(data, &mut at, codes_at) }?;
            let u = unsafe { varint4(data, &mut at, codes_at) }?;
            if u > x || x as u64 > n || u as u64 > codes_at - at {
                return None;
            }
            let values_at = at;
            at += u as u64;
            let (mut g, mut p, mut vi, mut v) = (0i64, -1i64, 0u64, 0u8);
            for k in 0..x {
                let e = unsafe { varint4(data, &mut at, codes_at) }?;
                g += crate::two_bit::gap_delta(e) as i64;
                if g < 1 || g > n as i64 {
                    return None;
                }
                p += g;
                if p >= n as i64 {
                    return None;
                }
                if e & 1 != 0 {
                    if vi >= u as u64 {
                        return None;
                    }
                    v = unsafe { gb(data, (values_at + vi) as usize) };
                    vi += 1;
                } else if k == 0 {
                    return None;
                }
                // SAFETY: 0 <= p < n: inside the slot.
                unsafe { *dst.add(p as usize) = v };
            }
            (at == codes_at && vi == u as u64).then_some(())
        })()
        .is_some();
    }
    if shfl(fine as u32, 0) != 0 {
        Status::Ok
    } else {
        bad
    }
}

/// Expands the two-bit literal slice `info` (FORMAT.md §5.7; [`crate::two_bit::decode`] is
/// the reference) into its decoded slot with the whole warp and returns its status
/// (`TwoBitSlice` for any broken rule; the slot is then partly written, and the block fails).
/// The codes first, as 16-byte words of the data section ([`for_src16`]) that each give 64
/// literals ([`expand_codes`], four 16-byte stores); then the exceptions, after a warp
/// barrier that orders the codes' stores before theirs: the varint area in windows of 512
/// bytes held one 16-byte word per lane ([`window16`]), parsed in rounds of 32 bytes, one
/// byte per lane taken by shuffles, a ballot of the bytes that end a varint, the varints'
/// values by a prefix sum of their bytes' bits ([`scan_u32`]), their gaps and positions by
/// two more ([`scan_i64`]) and their values by a ballot of the new ones; each exception's
/// byte is stored at its position. A 16 KiB block of FASTA (about 200 line feeds) waits on 2
/// memory latencies for its codes and 1 (and one for its one value) for its exceptions.
/// (The first form, byte loads in each round and each varint's earlier bytes read again,
/// measured the same: one such block alone still takes ~20 us in the rANS stage, which is not
/// understood yet; PERFORMANCE.md thirtieth session.)
#[inline(always)]
fn expand_two_bit(src: &Sources, info: &SliceInfo, lane: u32) -> Status {
    let bad = Status::TwoBitSlice;
    let n = info.n as u64;
    let stored = info.stored as u64;
    let off = info.off;
    let m = n.div_ceil(4);
    // info.pre checked off + stored <= data_len and dst_off + n <= dec_len
    if n == 0 || stored < 4 + 2 + m {
        return bad;
    }
    let data = src.data;
    let codes_at = off + stored - m;
    // SAFETY: off + 4 <= off + stored <= data_len.
    let sym = unsafe { gb_u32(data, off as usize) };
    // SAFETY: off + 4 <= codes_at <= data_len.
    let Some(h) = (unsafe { two_bit_counts(data, off, codes_at, n) }) else {
        return bad;
    };
    // SAFETY: the slot holds n bytes rounded up to 16 (`gpu::decoder`), 16-aligned.
    let dst = unsafe { src.decoded.add(info.dst_off as usize) };
    // SAFETY: codes_at + m = off + stored <= data_len.
    unsafe {
        for_src16(src, codes_at, m, lane, |j, c| {
            for (q, &w) in c.iter().enumerate() {
                let at = 64 * j + 16 * q as u64;
                if at < n {
                    // SAFETY: a 16-byte word that starts below n lies in the slot (above).
                    *(dst.add(at as usize) as *mut u128) = join16(expand_codes(sym, w));
                }
            }
        })
    };
    // the codes' stores before the exceptions' (which may hit the same words)
    syncwarp();
    // SAFETY: h from two_bit_counts (codes_at <= data_len); dst holds n bytes.
    if unsafe { two_bit_exceptions(data, src.data_len, &h, n, dst, lane) } {
        Status::Ok
    } else {
        bad
    }
}

/// The counts of a two-bit slice (FORMAT.md §5.7) that starts at data-section offset `off`
/// and whose codes start at `codes_at`, for `n` literals: `x` and `u` and where the values,
/// the exception varints and the codes lie, or `None` where a count's varint is longer than
/// `two_bit::MAX_VARINT_BYTES` or runs into the codes, or `u <= x <= n` or the values'
/// room fails (as [`crate::two_bit::head`]). The eight bytes after the symbols are loaded at
/// once (both varints lie in them), so the counts cost one memory latency.
///
/// # Safety
/// `off + 4 <= codes_at <= data_len`.
#[inline(always)]
unsafe fn two_bit_counts(data: *const u8, off: u64, codes_at: u64, n: u64) -> Option<TwoBitAreas> {
    const _: () = assert!(2 * crate::two_bit::MAX_VARINT_BYTES <= 8);
    let mut w = 0u64;
    for i in 0..8u64 {
        let at = off + 4 + i;
        // a byte past the counts' room reads as a continuation byte: a varint that runs
        // into the codes then fails as too long or, at the latest, after its fourth byte
        // SAFETY: at < codes_at <= data_len.
        let b = if at < codes_at {
            unsafe { gb(data, at as usize) }
        } else {
            0x80
        };
        w |= (b as u64) << (8 * i);
    }
    let mut at = 0u32;
    let mut leb = || {
        let mut v = 0u32;
        for i in 0..crate::two_bit::MAX_VARINT_BYTES {
            let b = (w >> (8 * at)) as u32 & 0xFF;
            at += 1;
            v |= (b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let x = leb()?;
    let u = leb()?;
    let values_at = off + 4 + at as u64;
    // (values_at <= codes_at: the varints' bytes lay before the codes)
    if u > x || x as u64 > n || values_at > codes_at || u as u64 > codes_at - values_at {
        return None;
    }
    Some(TwoBitAreas {
        x,
        u,
        values_at,
        exc_at: values_at + u as u64,
        codes_at,
    })
}

/// Where a two-bit slice's parts lie in the data section ([`two_bit_counts`]).
struct TwoBitAreas {
    /// Exceptions.
    x: u32,
    /// Exception values.
    u: u32,
    /// Offset of the first exception value.
    values_at: u64,
    /// Offset of the first exception varint.
    exc_at: u64,
    /// Offset of the codes (the end of the varints).
    codes_at: u64,
}

/// Stores the exceptions of a two-bit slice (FORMAT.md §5.7; areas `h` in the data section
/// `data` of `data_len` bytes) into its `n` literals at `dst` (global or shared memory, the
/// codes already expanded there and ordered before these stores) with the whole warp;
/// false (warp-uniform) for any broken rule, with none of the failing round's exceptions
/// stored. The varint area in windows of 512 bytes held one 16-byte word per lane
/// ([`window16`]), parsed in rounds of 32 bytes, one byte per lane taken by shuffles, a
/// ballot of the bytes that end a varint, the varints' values by a prefix sum of their
/// bytes' bits ([`scan_u32`]), their gaps and positions by two more ([`scan_i64`]) and
/// their values by a ballot of the new ones; each exception's byte is stored at its
/// position.
///
/// # Safety
/// `h` from [`two_bit_counts`] with `h.codes_at <= data_len`, `data` as [`load_src16`] asks;
/// `dst` holds `n` bytes; every lane of the warp calls it.
#[inline(always)]
unsafe fn two_bit_exceptions(
    data: *const u8,
    data_len: u64,
    h: &TwoBitAreas,
    n: u64,
    dst: *mut u8,
    lane: u32,
) -> bool {
    let (x, u, values_at, exc_at, codes_at) = (h.x, h.u, h.values_at, h.exc_at, h.codes_at);
    let below = (1u32 << lane) - 1;
    // carried from round to round: exceptions seen, the last gap and position, values taken,
    // the last value, the offset of the last varint's end
    let (mut k0, mut g0, mut p0, mut v0, mut val0) = (0u32, 0i64, -1i64, 0u32, 0u32);
    let mut end0 = exc_at.wrapping_sub(1);
    // the value bits of the varint bytes after the last end, carried into the next round
    let mut partial = 0u32;
    // the varint area in windows of 512 bytes, one 16-byte word per lane ([`window16`]: one
    // memory latency a window), each round's 32 bytes taken from the words by shuffles
    let mut wbase = exc_at;
    let mut w = [0u32; 4];
    let mut base = exc_at;
    while base < codes_at {
        if base == exc_at || base - wbase >= 512 {
            wbase = base;
            // SAFETY: base < codes_at <= data_len; every lane calls it.
            w = unsafe { window16(data, data_len, base, codes_at - base, lane) };
        }
        let i = (base - wbase) as u32 + lane;
        let ws = w.map(|v| shfl(v, i >> 4));
        let word = match (i >> 2) & 3 {
            0 => ws[0],
            1 => ws[1],
            2 => ws[2],
            _ => ws[3],
        };
        let pos = base + lane as u64;
        let inside = pos < codes_at;
        let byte = if inside {
            (word >> (8 * (i & 3))) & 0xFF
        } else {
            0x80
        };
        let ends = ballot(inside && byte & 0x80 == 0);
        let mine = ends & (1 << lane) != 0;
        // the varint holding this byte starts after the previous end (this round's or
        // before); its value is the sum of its bytes' 7 bits at their places (a prefix sum
        // over the round, less the sum up to the previous end, or plus the carried part)
        let prev_lane = if ends & below != 0 {
            31 - (ends & below).leading_zeros()
        } else {
            32
        };
        let prev = if prev_lane < 32 {
            base + prev_lane as u64
        } else {
            end0
        };
        let idx = pos.wrapping_sub(prev).wrapping_sub(1);
        let part = if inside && (idx as usize) < crate::two_bit::MAX_VARINT_BYTES {
            (byte & 0x7F) << (7 * idx as u32)
        } else {
            0
        };
        let sums = scan_u32(part, lane);
        let before = shfl(sums, prev_lane & 31);
        let e = if prev_lane < 32 {
            sums.wrapping_sub(before)
        } else {
            sums.wrapping_add(partial)
        };
        let total = shfl(sums, 31);
        partial = if ends != 0 {
            total.wrapping_sub(shfl(sums, 31 - ends.leading_zeros()))
        } else {
            partial.wrapping_add(total)
        };
        let k = k0 + (ends & below).count_ones();
        let counted = mine && k < x;
        // (idx is the end byte's place: a fifth byte or later is a varint too long)
        let mut ok = !counted || (idx as usize) < crate::two_bit::MAX_VARINT_BYTES;
        let d = if counted && ok {
            crate::two_bit::gap_delta(e) as i64
        } else {
            0
        };
        let g = g0 + scan_i64(d, lane);
        ok &= !counted || (g >= 1 && g <= n as i64);
        // (a lane after one whose gap failed may see any sum, negative too: p >= 0 is
        // checked here, and no lane stores unless every exception of the round passed)
        let p = p0 + scan_i64(if counted { g } else { 0 }, lane);
        ok &= !counted || (p >= 0 && p < n as i64);
        let new = counted && e & 1 != 0;
        let news = ballot(new);
        let vi = v0 + (news & below).count_ones();
        ok &= !new || vi < u;
        ok &= !counted || new || k > 0;
        // this lane's value: its own (new) or the last new one's before it, or carried
        // SAFETY: vi < u: values_at + vi < exc_at <= codes_at.
        let mut val = if new && ok {
            (unsafe { gb(data, (values_at + vi as u64) as usize) }) as u32
        } else {
            0
        };
        let from = news & (below | 1 << lane);
        let src_lane = if from != 0 {
            31 - from.leading_zeros()
        } else {
            0
        };
        let got = shfl(val, src_lane);
        if !new {
            val = if from != 0 { got } else { val0 };
        }
        if ballot(counted && !ok) != 0 {
            return false;
        }
        if counted {
            // SAFETY: 0 <= p < n (every counted lane passed its checks): inside the slot.
            unsafe { *dst.add(p as usize) = val as u8 };
        }
        // carry the round's last exception (the highest counted lane)
        let cmask = ballot(counted);
        if cmask != 0 {
            let last = 31 - cmask.leading_zeros();
            g0 = shfl((g as u64) as u32, last) as i64
                | ((shfl((g as u64 >> 32) as u32, last) as i64) << 32);
            p0 = shfl((p as u64) as u32, last) as i64
                | ((shfl((p as u64 >> 32) as u32, last) as i64) << 32);
            val0 = shfl(val, last);
        }
        v0 += news.count_ones();
        k0 += ends.count_ones();
        if ends != 0 {
            end0 = base + 31 - ends.leading_zeros() as u64;
        }
        base += 32;
    }
    // exactly x varints, ending where the codes begin; exactly u of them new
    let tail_ok = if x == 0 {
        exc_at == codes_at
    } else {
        end0 == codes_at - 1
    };
    k0 == x && v0 == u && tail_ok
}

/// Decodes the rANS slices of block `b` selected by `sel` (bit `k` = stream `k`, whose
/// packed lane counts are `lanes_of`; at most 32 lanes together, each > 0, no earlier error,
/// with their lanes side by side in the warp, each slice's table from `staged` (see
/// [`decode_slices`]) or global memory. Returns `st` with each selected slice's status code.
///
/// Renormalisation words are handed out in lane order by a ballot and a population count
/// (FORMAT.md §5.4) and read straight from the archive (asking L2 for 256-byte fetches; the
/// symbols are stored without allocating L1 lines: with many warps per SM the step is bound
/// by L1 traffic, PERFORMANCE.md eighth session), by predicated loads rather than a
/// branch (some lane renormalises in ~93 % of steps, so the branch was always divergent;
/// -10..-15 % stage time, PERFORMANCE.md sixth session). (Two alternatives were measured and
/// dropped: a register window of words handed out by shuffles, and a copy of the round's
/// words in shared memory; PERFORMANCE.md, 2026-11-30 third session; a prefetch of the
/// line ahead of each slice's next word: flat, seventh session; and for grids of one CTA per
/// SM a prefetch of the slice's whole word area into L1, the most L1 by the carveout, and a
/// shared-memory copy of each round's words in kernels of their own: 0 to -5 %, sixteenth
/// session.)
///
/// `CTX`: some selected slice has a context pair (FORMAT.md §5.4; each lane then picks its
/// table by its previous symbol); `PACK`: some selected slice holds packed literals (§5.6;
/// each of its symbols is expanded into its `w` literals through the expansion table).
/// `LATE`: a step issues its renormalisation word's load first and emits its symbol (an
/// unpacked symbol's byte store; a packed one's expansion load, and its byte stores where the
/// slice's words are not coalesced) while the load is in flight, then joins the word into
/// the state ([`merge_word`]); a packed step's two shuffles and word store wait for the
/// next step, where they run while that step's table entry loads (rANS stage -2.5..-3.5 % on
/// the packed DNA archives; PERFORMANCE.md twenty-first session, which also measured what
/// each part of the step costs, and the expansion moved out of the step: slower); otherwise
/// the stores come first, as the 16-warp kernels keep them (their registers: with `LATE` the
/// packed one spilled more and hs37 decoded 1 % slower; PERFORMANCE.md seventeenth session).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn decode_packed<const CTX: bool, const PACK: bool, const LATE: bool>(
    src: &Sources,
    b: u64,
    lanes_of: u64,
    sel: u32,
    lane: u32,
    mut st: u64,
    staged: Staged,
    half: u32,
) -> u64 {
    let Staged {
        tables: staged,
        pairs: staged_pairs,
        expand: staged_expand,
    } = staged;
    // my slice among the packed ones
    let mut base = 0u32;
    let mut my = STREAM_COUNT;
    let mut my_base = 0u32;
    for i in 0..STREAM_COUNT {
        if sel & (1 << i) != 0 {
            // this warp's lanes of the slice: a wide slice's half (FORMAT.md §5.4)
            let l = byte_get(lanes_of, i)
                .saturating_sub(WARP_LANES as u32 * half)
                .min(WARP_LANES as u32);
            if my == STREAM_COUNT && lane >= base && lane < base + l {
                my = i;
                my_base = base;
            }
            base += l;
        }
    }
    let mine = my < STREAM_COUNT;
    let s = if mine {
        slice_info(src, b, my)
    } else {
        SliceInfo::EMPTY
    };
    let lanes = s.lanes;
    // the lanes this warp decodes, and the first one's index in the slice: all of a slice
    // but a wide one's (more than 32 lanes: its half `half`, FORMAT.md §5.4)
    let wide = lanes > WARP_LANES as u32;
    let first_lane = WARP_LANES as u32 * half;
    let own = lanes.saturating_sub(first_lane).min(WARP_LANES as u32);
    let n = s.n;
    let data = src.data;
    // SAFETY: dst_off + n <= dec_len (pre checks; 0 for an absent slice, never written).
    let dst = unsafe { src.decoded.add(s.dst_off as usize) };
    // SAFETY: a present slice's table index is < n_tables (slice_info), and so is a context
    // pair's second; else unused.
    let global = |t: u32| unsafe {
        src.tables
            .add(if t < src.n_tables { t } else { 0 } as usize)
    };
    let table = if mine {
        // SAFETY: the block's group's table for stream `my`, staged at slot `my`.
        unsafe { staged.add(my * PROB_SCALE as usize) as *const DecodeTable }
    } else {
        global(s.table)
    };
    // a context pair's second table (FORMAT.md §5.4), staged or global; `table` otherwise
    let table1 = match (s.ctx, if mine { staged_slot(my) } else { None }) {
        (c, _) if !is_context(c) => table,
        // SAFETY: the second table of the group's pair for stream `my`, staged at `slot`.
        (_, Some(slot)) if staged_pairs => unsafe {
            staged.add(slot * PROB_SCALE as usize) as *const DecodeTable
        },
        _ => global(s.table.wrapping_add(1)),
    };
    let ctx_bit = s.ctx.saturating_sub(1);
    // packed literals: the expansion table (staged or global) and the width, 1 otherwise
    let packed = PACK && s.ctx == TABLE_PACKED;
    let expand: *const u32 = if !packed {
        core::ptr::null()
    } else if !staged_expand.is_null() {
        staged_expand
    } else {
        global(s.table.wrapping_add(1)) as *const u32
    };
    let width = if packed {
        // SAFETY: the expansion table at table + 1 < n_tables.
        crate::rans::pack_width_of(unsafe { &*global(s.table.wrapping_add(1)) }) as u32
    } else {
        1
    };
    // symbols of the slice: ceil(decoded length / width)
    let m = if packed { n.div_ceil(width) } else { n };
    let mut prev = 0u32;
    let l = lane.wrapping_sub(my_base);
    // Packed literals in words: a step's `lanes` symbols are `width * lanes` consecutive
    // bytes, which the slice's lanes store as aligned 4-byte words when that is a whole
    // number of words (lanes % 4 == 0): lane l writes word l of the step, assembled from the
    // literals of the step's symbols `4l / width` (from byte `o` of them on) and
    // `(4l + 3) / width`, fetched from their lanes by two shuffles. (One byte store per
    // literal, 3 per step at width 3, wrote 3 times the L1 sectors per byte of the
    // unpacked stage's single coalesced byte store; PERFORMANCE.md thirteenth session.)
    let coalesce = packed && lanes % 4 == 0 && own % 4 == 0;
    let word_lane = coalesce && l < width * own / 4;
    let (src0, src1, o) = if word_lane {
        let b = 4 * l;
        // b / width for width 2-4 without a division (b < 128; b * 171 >> 9 is b / 3 there)
        let div = |b: u32| match width {
            2 => b >> 1,
            4 => b >> 2,
            _ => (b * 171) >> 9,
        };
        let s0 = div(b);
        (my_base + s0, my_base + div(b + 3), b - s0 * width)
    } else {
        (lane, lane, 0)
    };
    let mask = if mine { lane_mask(own, my_base) } else { 0 };
    let below = (1u32 << lane) - 1;
    let mut x: u32 = RANS_L;
    let mut nwords = 0u32;
    let mut steps = 0u32;
    let active_slice = mine && lanes > 0 && s.table < src.n_tables;
    // the slice's word area, or the data section's start for a lane without a valid slice
    // (absent, failed its checks or without a table: a failed slice's `s.off` is unchecked,
    // so no pointer is formed from it; such a lane never takes a word)
    // a wide slice's first word area: its word count (FORMAT.md §5.4), else all words
    let mut first_words = 0u32;
    let mut area_bad = false;
    let mut words = data;
    if active_slice {
        // SAFETY: off + stored <= data_len and slice_head(lanes) <= stored (slice_info's
        // checks): the states (and a wide slice's word count) lie inside the data section.
        let head = unsafe { data.add(s.off as usize) };
        let total = (s.stored - slice_head(lanes) as u32) / 2;
        nwords = total;
        if wide {
            // SAFETY: as above (the 4 bytes after the states)
            first_words = unsafe { gb_u32(head, 4 * lanes as usize) };
            area_bad = first_words > total;
            nwords = if area_bad {
                0
            } else if half == 0 {
                first_words
            } else {
                total - first_words
            };
        }
        let area = slice_head(lanes)
            + if half == 1 && !area_bad {
                2 * first_words as u64
            } else {
                0
            };
        // SAFETY: this lane's word area lies inside the slice (area + 2 * nwords <= stored),
        // inside the data section (off + stored <= data_len).
        words = unsafe { data.add((s.off + area) as usize) };
        // SAFETY: lane first_lane + l < lanes: its 4 state bytes are among the 4 * lanes.
        x = unsafe { gb_u32(head, 4 * (first_lane + l) as usize) };
        steps = m.div_ceil(lanes);
    }
    let header_bad = ballot(active_slice && (x < RANS_L || area_bad));
    // the longest chain of the packed slices
    let mut max_steps = steps;
    let mut d = 16;
    while d >= 1 {
        max_steps = max_steps.max(shfl_xor(max_steps, d));
        d /= 2;
    }
    let mut wp: u32 = 0;
    let mut underflow = false;
    // u32 positions: a slice holds at most a block (< 2^32 bytes), and 32-bit arithmetic
    // keeps the step short
    let mut i = first_lane + l;
    // a symbol's stores: a packed symbol's literals (its expansion; byte stores unless the
    // slice's words are coalesced), else the symbol itself. Returns the expansion (0 unless
    // packed) for `store_words`.
    let emit = |sym: u8, i: u32| -> u32 {
        if !packed {
            // SAFETY: i < n inside the decoded slot, written by this lane alone.
            unsafe { global_store_no_l1(dst.add(i as usize), sym) };
            return 0;
        }
        // SAFETY: sym < 256 slots of the expansion table (staged or global).
        let lits = unsafe { *expand.add(sym as usize) };
        if !coalesce {
            let at = i * width;
            // a fixed trip count: four predicated stores, no loop
            for t in 0..MAX_PACK_WIDTH {
                if t < width && at + t < n {
                    // SAFETY: at + t < n inside the decoded slot, this lane's alone (symbol
                    // i's literals).
                    unsafe {
                        global_store_no_l1(dst.add((at + t) as usize), (lits >> (8 * t)) as u8)
                    };
                }
            }
        }
        lits
    };
    // a step's coalesced words of packed literals: every lane of the warp shuffles
    // (uniform); word lanes store their word
    let store_words = |lits: u32, i: u32| {
        let v0 = shfl(lits, src0);
        let v1 = shfl(lits, src1);
        // the step's first byte: its first symbol (i - l) times the width
        let at = i.wrapping_sub(l) * width + 4 * l;
        if word_lane && at < n {
            let word = if width == 4 {
                v0
            } else {
                (v0 >> (8 * o)) | (v1 << (8 * (width - o)))
            };
            // SAFETY: `at` is 4-aligned (the slot is 16-aligned, a step is width * lanes
            // bytes, a multiple of 4) and below n; the word's bytes past n (at most 3, zeros
            // or the next symbol's) fall in the slot's padding (`gpu::decoder` pads every
            // slot by `rans::KERNEL_SLOT_SLACK` bytes). Word l of the step is this lane's
            // alone.
            unsafe { global_store_no_l1_u32(dst.add(at as usize) as *mut u32, word) };
        }
    };
    // LATE packed steps: a step's expansion (loaded in the step) is shuffled and stored in
    // the next step, after that step's table load is issued, so that no step waits on its
    // own expansion load (`pend_*`: the lane's expansion and symbol index whose words are
    // still to store; warp-uniform `pending`, as `store_words` is a warp's shuffle)
    let mut pend_lits = 0u32;
    let mut pend_i = 0u32;
    let mut pending = false;
    for _ in 0..max_steps {
        let active = active_slice && i < m;
        let mut need = false;
        let mut sym = 0u8;
        let mut lits = 0u32;
        let mut e = 0u32;
        if active {
            let t = if CTX && (prev >> ctx_bit) & 1 != 0 {
                table1
            } else {
                table
            };
            // SAFETY: the table index was checked (active_slice), a pair's second too.
            e = crate::rans::slot_entry(unsafe { &*t }, x);
        }
        if PACK && LATE && pending {
            // the previous step's words, while the table entry's load is in flight
            store_words(pend_lits, pend_i);
        }
        if active {
            sym = crate::rans::apply_entry(e, &mut x);
            if CTX {
                prev = sym as u32;
            }
            if !LATE {
                lits = emit(sym, i);
            }
            need = x < RANS_L;
        }
        if PACK && !LATE {
            store_words(lits, i);
        }
        let m = ballot(need) & mask;
        // branch-free: every lane computes its word index, the loads are predicated
        let p = wp + (m & below).count_ones();
        let take = need && p < nwords;
        underflow |= need && !take;
        let q = if take { 2 * p as usize } else { 0 };
        // SAFETY: q = 2p with p < nwords (word p lies inside the slice's word area), or 0,
        // and a lane that takes no word reads nothing (the loads are under `take`).
        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {
            (0, 0)
        };
        if LATE {
            // the symbol emitted while the word's load is in flight (a packed one's coalesced
            // words queued for the next step), the word joined into the state after it
            // ([`merge_word`])
            if active {
                lits = emit(sym, i);
            }
            if PACK {
                (pend_lits, pend_i, pending) = (lits, i, true);
            }
            if take {
                x = merge_word(x, word_lo, word_hi);
            }
        } else if take {
            x = (x << 16) | (word_hi as u32) << 8 | word_lo as u32;
        }
        wp += m.count_ones();
        i = i.wrapping_add(lanes);
    }
    if PACK && LATE && pending {
        store_words(pend_lits, pend_i);
    }
    let under = ballot(underflow);
    let trailer = ballot(active_slice && (x != RANS_L || wp != nwords));
    let mut kb = 0u32;
    for j in 0..STREAM_COUNT {
        if sel & (1 << j) == 0 {
            continue;
        }
        let kl = byte_get(lanes_of, j);
        let km = lane_mask(kl, kb);
        kb += kl;
        let code = if header_bad & km != 0 {
            Status::RansHeader
        } else if under & km != 0 {
            Status::RansUnderflow
        } else if trailer & km != 0 {
            Status::RansTrailer
        } else {
            Status::Ok
        };
        st = byte_set(st, j, code as u32);
    }
    st
}

/// The byte range `[c0, c1)` of `n` varint bytes that chunk `part` of `parts` takes: equal
/// multiples of 32 bytes (one warp step each), the last chunk shorter or empty.
#[inline(always)]
fn varint_chunk(n: usize, parts: usize, part: usize) -> (usize, usize) {
    let per = n.div_ceil(32 * parts) * 32;
    let c0 = core::cmp::min(part * per, n);
    (c0, core::cmp::min(c0 + per, n))
}

/// How many of the bytes `[c0, c1)` have bit 7 equal to `set`, by the warp: with `set`
/// false the varints ending there (continuation bit clear), with `set` true the offset
/// bytes whose distance has a tail.
#[inline(always)]
fn count_bit7(bytes: *const u8, c0: usize, c1: usize, lane: u32, set: bool) -> u32 {
    let mut n = 0u32;
    let mut base = c0;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= the bytes of the region.
        let hit = i < c1 && (unsafe { *bytes.add(i) } & 0x80 != 0) == set;
        n += ballot(hit).count_ones();
        base += 32;
    }
    n
}

/// Distance values `[c0, c1)` from their first bytes at `heads` and one-byte tails at
/// `tails` (FORMAT.md §4.2): value `i` is `heads[i] & 0x7F`, plus, when `heads[i]` has bit
/// 7 set, `tails[t] << 7`, where `t` is `first` plus the heads with a tail in `[c0, i)`.
/// A tail byte with bit 7 set (a longer tail) or a tail index at or past `n_tails` gives
/// `Fallback`: the lane kernel's reference decoder then names the error.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn join_offsets(
    heads: *const u8,
    tails: *const u8,
    n_tails: usize,
    c0: usize,
    c1: usize,
    first: usize,
    vals: *mut u16,
    lane: u32,
) -> Status {
    let below = (1u32 << lane) - 1;
    let mut base = c0;
    let mut t = first;
    let mut bad = false;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= the block's offset bytes.
        let h = if i < c1 { unsafe { *heads.add(i) } } else { 0 };
        let cont = h & 0x80 != 0;
        let m = ballot(cont);
        let mut v = (h & 0x7F) as u32;
        if cont {
            let my = t + (m & below).count_ones() as usize;
            if my < n_tails {
                // SAFETY: my < n_tails tail bytes of the region.
                let tb = unsafe { *tails.add(my) };
                bad |= tb & 0x80 != 0;
                v |= (tb as u32) << 7;
            } else {
                bad = true;
            }
        }
        if i < c1 {
            // SAFETY: i < n_heads <= OFFV_CAP values (the block's `fits` check). v < 2^15
            // (a first byte's 7 bits and one tail byte); a tail byte with bit 7 set makes the
            // block Fallback below, so every value the parse uses is below 2^14.
            unsafe { *vals.add(i) = v as u16 };
        }
        t += m.count_ones() as usize;
        base += 32;
    }
    if ballot(bad) != 0 {
        return Status::Fallback;
    }
    Status::Ok
}

/// Turns the varints ending in bytes `[c0, c1)` of the `n` varint bytes at `bytes` into
/// values: the one ending at byte `i` is value number `first` + (varints ending in
/// `[c0, i)`), stored at `vals` (at most `cap`; more give `Fallback`). A varint may start in
/// an earlier chunk (the look-back reads the bytes before `c0`). Checks FORMAT.md §4.2: at
/// most 5 bytes, fits u32, no cut-off varint at the end of the stream.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn varints_to_values(
    bytes: *const u8,
    n: usize,
    c0: usize,
    c1: usize,
    first: usize,
    vals: *mut u32,
    cap: usize,
    lane: u32,
) -> Status {
    let below = (1u32 << lane) - 1;
    let mut base = c0;
    let mut idx = first;
    let mut bad = false;
    let mut over = false;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= n bytes of the region.
        let byte = if i < c1 {
            unsafe { *bytes.add(i) }
        } else {
            0x80
        };
        let is_end = i < c1 && byte & 0x80 == 0;
        let m = ballot(is_end);
        if is_end {
            // look back over at most 4 continuation bytes
            let mut v: u32 = 0;
            let mut len = 1usize;
            while len <= 5 && i >= len && unsafe { *bytes.add(i - len) } & 0x80 != 0 {
                len += 1;
            }
            if len > 5 {
                bad = true;
            } else {
                for j in 0..len {
                    // SAFETY: i + 1 - len + j <= i < n.
                    let bj = unsafe { *bytes.add(i + 1 - len + j) };
                    if j == 4 && bj > 0x0F {
                        bad = true;
                    }
                    v |= ((bj & 0x7F) as u32) << (7 * j as u32);
                }
            }
            let my = idx + (m & below).count_ones() as usize;
            if my < cap {
                // SAFETY: my < cap values in the region.
                unsafe { *vals.add(my) = v };
            } else {
                over = true;
            }
        }
        idx += m.count_ones() as usize;
        base += 32;
    }
    // the stream's last byte must end a varint (checked by the chunk holding it)
    // SAFETY: n >= 1 and n - 1 < c1 <= n.
    if n > 0 && c1 == n && c0 < n && unsafe { *bytes.add(n - 1) } & 0x80 != 0 {
        bad = true;
    }
    if ballot(over) != 0 {
        // more values than the region holds (a valid block may have them): the lane
        // kernel decodes the block
        return Status::Fallback;
    }
    if ballot(bad) != 0 {
        return Status::BadVarint;
    }
    Status::Ok
}

/// A history slot map entry: a constant distance (< 2^31) or `REF | input slot`.
const REF: u32 = 0x8000_0000;

#[inline(always)]
fn compose(a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
    // apply `a` first, then `b`
    let mut r = [0u32; 4];
    for s in 0..4 {
        r[s] = if b[s] & REF != 0 { pick(a, b[s]) } else { b[s] };
    }
    r
}

/// `a[i & 3]` by selects (a dynamic index would put `a` in local memory).
#[inline(always)]
fn pick(a: [u32; 4], i: u32) -> u32 {
    let lo = if i & 1 != 0 { a[1] } else { a[0] };
    let hi = if i & 1 != 0 { a[3] } else { a[2] };
    if i & 2 != 0 {
        hi
    } else {
        lo
    }
}

const IDENTITY: [u32; 4] = [REF, REF | 1, REF | 2, REF | 3];

/// Classes of one command byte (FORMAT.md §4.1).
#[derive(Clone, Copy)]
struct Class {
    is_lit: bool,
    is_rep: bool,
    is_new: bool,
    is_reset: bool,
    /// Takes a varint from the length stream (escaped repeat or 0xFE).
    uses_len: bool,
    /// Takes a varint from the offset stream (a new match).
    uses_off: bool,
}

#[inline(always)]
fn classify(valid: bool, c: u8) -> Class {
    let is_rep = valid && (0x80..0xC0).contains(&c);
    let is_new = valid && (0xC0..=0xFE).contains(&c);
    Class {
        is_lit: valid && c < 0x80,
        is_rep,
        is_new,
        is_reset: valid && c == CMD_RESET,
        uses_len: (is_rep && c & 0x0F == 0x0F) || (valid && c == CMD_MATCH_LONG),
        uses_off: is_new,
    }
}

/// A lane's command byte of a step, classified, with the warp's ballots of the commands
/// that take a length varint and an offset varint: `(class, byte, mlen, moff)`.
#[inline(always)]
fn step_command(valid: bool, c: u8) -> (Class, u8, u32, u32) {
    let k = classify(valid, c);
    (k, c, ballot(k.uses_len), ballot(k.uses_off))
}

/// Value `i` of a varint region of `n` values (`Some(0)` when the command uses none), or
/// `None` past its end.
#[inline(always)]
fn value(used: bool, i: u32, n: u32, read: impl Fn(usize) -> u32) -> Option<u32> {
    if !used {
        Some(0)
    } else if i < n {
        Some(read(i as usize))
    } else {
        None
    }
}

/// A lane's command of a step, varints looked up: `(out_n, lit_n, new_dist, bad_varint)`.
/// `out_n` is a `u64` so that an absurd length cannot wrap.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn command_values(
    s: &Smem,
    k: Class,
    c: u8,
    match_base: u32,
    len_base: u32,
    off_base: u32,
    mlen: u32,
    moff: u32,
    below: u32,
    nlenv: u32,
    noffv: u32,
) -> (u64, u32, u32, bool) {
    // this lane's varint indices: the step's bases plus the lanes below that take one
    let len_i = len_base + (mlen & below).count_ones();
    let off_i = off_base + (moff & below).count_ones();
    // SAFETY (both): i < n <= the region's cap (LENV_CAP / OFFV_CAP).
    let extra = value(k.uses_len, len_i, nlenv, |i| unsafe { *s.lenv().add(i) });
    let dist = value(k.uses_off, off_i, noffv, |i| unsafe { *s.offv().add(i) }
        as u32);
    let bad_varint = extra.is_none() || dist.is_none();
    let (extra, new_dist) = (extra.unwrap_or(0), dist.unwrap_or(0));
    let mut out_n: u64 = 0;
    let mut lit_n: u32 = 0;
    if k.is_lit {
        lit_n = c as u32 + 1;
        out_n = lit_n as u64;
    } else if k.is_rep {
        out_n = match_base as u64 + (c & 0x0F) as u64 + if k.uses_len { extra as u64 } else { 0 };
    } else if k.is_new {
        out_n = if c == CMD_MATCH_LONG {
            match_base as u64 + extra as u64
        } else {
            match_base as u64 + (c & 0x3F) as u64
        };
    }
    (out_n, lit_n, new_dist, bad_varint)
}

/// The command's action on the repeat history as a slot map (FORMAT.md §4.3).
#[inline(always)]
fn command_map(k: Class, c: u8, new_dist: u32) -> [u32; 4] {
    if k.is_reset {
        HISTORY_RESET
    } else if k.is_new {
        [new_dist & !REF, REF, REF | 1, REF | 2]
    } else if k.is_rep {
        // slot i to the front, the slots before it one down: slot j >= 1 takes slot j - 1
        // where j <= i, else slot j (i = 0: the identity). Arithmetic, not a `match`: LLVM
        // turns that into three lookup tables in global memory, loaded every step.
        let i = ((c >> 4) & 3) as u32;
        [
            REF | i,
            REF | (1 - (i >= 1) as u32),
            REF | (2 - (i >= 2) as u32),
            REF | (3 - (i >= 3) as u32),
        ]
    } else {
        IDENTITY
    }
}

/// Inclusive scan of slot maps over the warp (lane order).
#[inline(always)]
fn scan_maps(mut map: [u32; 4], lane: u32) -> [u32; 4] {
    let mut d = 1;
    while d < 32 {
        let p = [
            shfl_up(map[0], d),
            shfl_up(map[1], d),
            shfl_up(map[2], d),
            shfl_up(map[3], d),
        ];
        if lane >= d {
            map = compose(p, map);
        }
        d <<= 1;
    }
    map
}

/// Warp lanes whose command repeats history slot 1, 2 or 3: a step with none takes
/// [`push_only_map`] instead of the map scan.
#[inline(always)]
fn slot_moves(k: Class, c: u8) -> u32 {
    ballot(k.is_rep && (c >> 4) & 3 != 0)
}

/// The history map of a 32-command step in which no command repeats slot 1-3 (`news`,
/// `resets`: ballots of its new matches and resets; `new_dist`: this lane's new distance),
/// without the map scan: a new match pushes its distance, a slot-0 repeat keeps the history,
/// a reset sets [`HISTORY_RESET`] (FORMAT.md §4.3). So the history after the step holds the
/// distances of the last (up to four) new matches after the last reset, newest first, then
/// the history before the step (references) or, after a reset, `HISTORY_RESET`. On text most
/// steps are of this kind (gcide 70 %, brown 90 %; PERFORMANCE.md sixth session). Called by
/// the whole warp (`news` and `resets` are warp-uniform).
#[inline(always)]
fn push_only_map(news: u32, resets: u32, new_dist: u32) -> [u32; 4] {
    let (mut v, base) = if resets != 0 {
        let r = 31 - resets.leading_zeros();
        let after = if r == 31 { 0 } else { u32::MAX << (r + 1) };
        (news & after, HISTORY_RESET)
    } else {
        (news, IDENTITY)
    };
    let mut out = [0u32; 4];
    let mut n = 0u32;
    for slot in out.iter_mut() {
        if v != 0 {
            let b = 31 - v.leading_zeros();
            *slot = shfl(new_dist, b) & !REF;
            v &= !(1 << b);
            n += 1;
        }
    }
    for (t, slot) in out.iter_mut().enumerate() {
        let t = t as u32;
        if t >= n {
            *slot = pick(base, t - n);
        }
    }
    out
}

/// Slot 0 of the history before this lane's command in a [`push_only_map`] step: the
/// distance of the nearest new match below this lane, unless a reset came after it, else
/// `hist0` (slot 0 before the step). Called by the whole warp.
#[inline(always)]
fn push_only_slot0(news: u32, resets: u32, new_dist: u32, below: u32, hist0: u32) -> u32 {
    let pb = news & below;
    let rb = resets & below;
    let hp = 31u32.wrapping_sub(pb.leading_zeros());
    let hr = 31u32.wrapping_sub(rb.leading_zeros());
    let d = shfl(new_dist, if pb != 0 { hp } else { 0 }) & !REF;
    if pb != 0 && (rb == 0 || hp > hr) {
        d
    } else if rb != 0 {
        HISTORY_RESET[0]
    } else {
        hist0
    }
}

/// Lane 31's map (after an inclusive scan: the composition of the whole step).
#[inline(always)]
fn last_lane_map(m: [u32; 4]) -> [u32; 4] {
    [
        shfl(m[0], 31),
        shfl(m[1], 31),
        shfl(m[2], 31),
        shfl(m[3], 31),
    ]
}

/// Inclusive scans of two counts over the warp (the first saturating).
#[inline(always)]
fn scan_counts(mut a: u32, mut b: u32, lane: u32) -> (u32, u32) {
    let mut d = 1;
    while d < 32 {
        let x = shfl_up(a, d);
        let y = shfl_up(b, d);
        if lane >= d {
            a = a.saturating_add(x);
            b += y;
        }
        d <<= 1;
    }
    (a, b)
}

#[inline(always)]
fn ctrl_get(s: &Smem, i: usize) -> u32 {
    // SAFETY: i < CTRL_WORDS (layout constants below).
    unsafe { *s.ctrl(i) }
}

/// Self-overlapping matches longer than this many bytes are filled by their whole warp
/// rather than by their own lane (24 with one pointer per store; 32 once the lane stored two
/// at a time, 48 once runs without a period went without its bookkeeping: PERFORMANCE.md
/// eighth session, runs 4 and 9).
const LANE_FILL_MAX: u64 = 48;

/// Literal runs and matches that do not overlap themselves (runs of consecutive pointers) up
/// to this many bytes are filled by their own lane, eight pointers per 16-byte store: a warp
/// filling a 128-literal run spent ~120 instructions on handing the command out (two
/// shuffles, the loop's bookkeeping) for four stores of 32 pointers, and such runs are most
/// of a DNA block (PERFORMANCE.md fourteenth session). Every literal run (at most 128,
/// FORMAT.md §4.1) is a lane's.
const LANE_RUN_MAX: u64 = 128;

/// Four consecutive 16-bit pointers `v, v + 1, v + 2, v + 3` as one little-endian `u64`:
/// `v * RUN4_MUL + RUN4_ADD` (no carries while `v + 3 < 2^16`).
const RUN4_MUL: u64 = 0x0001_0001_0001_0001;
/// See [`RUN4_MUL`].
const RUN4_ADD: u64 = 0x0003_0002_0001_0000;

/// Commands longer than this many bytes are filled by the whole CTA after the fill pass
/// instead of by their warp (a 16 KiB run of `N`s would otherwise keep one warp busy while
/// the others wait at the barrier).
const CTA_FILL_MIN: u32 = 512;

/// Writes the pointers of one command's `n` bytes at `dst`: literal indices `src + q` (top
/// bit set), or for a match the period-aware sources `src + q % dist`. Position `q` is
/// written by the thread `first + k * stride` (`first < stride`), so a warp (`stride` 32) or
/// the CTA (`THREADS`) writes consecutive 16-bit pointers. The remainder advances by
/// `stride % dist` per store, one division per command instead of one per byte.
///
/// # Safety
/// `dst .. dst + n` lies in the pointer region (the parse checked `dst + n <= block_len`).
#[inline(always)]
unsafe fn fill_run(
    dst: *mut u16,
    n: u32,
    src: u32,
    is_match: bool,
    dist: u32,
    first: u32,
    stride: u32,
) {
    let mut q = first;
    if is_match {
        // first < stride: with dist > stride both remainders are known without a division
        let (step, mut m) = if dist > stride {
            (stride, first)
        } else {
            (stride % dist, first % dist)
        };
        while q < n {
            // SAFETY: q < n (caller's range).
            unsafe { *dst.add(q as usize) = (src + m) as u16 };
            m += step;
            if m >= dist {
                m -= dist;
            }
            q += stride;
        }
    } else {
        while q < n {
            // SAFETY: q < n (caller's range).
            unsafe { *dst.add(q as usize) = 0x8000 | (src + q) as u16 };
            q += stride;
        }
    }
}

/// Writes the pointers of one short command by its own lane (`n <= LANE_RUN_MAX` bytes at
/// `dst` for a run of consecutive pointers, `n <= LANE_FILL_MAX` for a self-overlapping
/// match): literal indices `lit + q` (top bit set), or for a match the period-aware
/// sources `src + q % dist`. A literal run or a match that does not overlap itself
/// (`dist >= n`) is a run of consecutive pointers: at most one 2-, 4- and 8-byte store up
/// to a multiple of 8 pointers, then eight per 16-byte store, then at most one 8-, 4- and
/// 2-byte store (`dense_layout` keeps the pointer region 16-aligned; PERFORMANCE.md
/// fourteenth and twenty-second sessions: the loop's body is a store and two adds, where a
/// body that chose between 8- and 16-byte stores took ~28 instructions per 8 pointers); a
/// self-overlapping match goes through [`fill_run`] with a stride of one.
///
/// # Safety
/// `dst .. dst + n` lies in the pointer region (the parse checked `dst + n <= block_len`);
/// `dist >= 1` for a match.
#[inline(always)]
unsafe fn fill_lane(ptr: *mut u16, dst: u32, n: u32, src: u32, is_lit: bool, lit: u32, dist: u32) {
    if is_lit || dist >= n {
        // literal indices are below 2^14 (LIT_CAP), sources below the block's 2^14 bytes, so
        // `base + q + 3` stays below 2^16 and the four lanes of a store never carry
        let base = if is_lit { 0x8000 | lit } else { src };
        let end = dst + n;
        // the pointer of position p is base + (p - dst); `k` pointers from `at` as one
        // little-endian word: (base + at - dst) * (0x1 repeated) + (0, 1, 2, ...)
        let first = |at: u32| base + (at - dst);
        let mut at = dst;
        // head: one 2-, 4- and 8-byte store at most, up to a multiple of 8 pointers
        if at % 2 == 1 && at < end {
            // SAFETY: dst <= at < dst + n (caller's range).
            unsafe { *ptr.add(at as usize) = first(at) as u16 };
            at += 1;
        }
        if at % 4 == 2 && at + 2 <= end {
            // SAFETY: at is even and at + 1 < dst + n.
            unsafe { *(ptr.add(at as usize) as *mut u32) = first(at) * 0x1_0001 + 0x1_0000 };
            at += 2;
        }
        if at % 8 == 4 && at + 4 <= end {
            // SAFETY: at is a multiple of 4 and at + 3 < dst + n.
            unsafe { *(ptr.add(at as usize) as *mut u64) = first(at) as u64 * RUN4_MUL + RUN4_ADD };
            at += 4;
        }
        // body: eight pointers per 16-byte store (`at` a multiple of 8 whenever this runs: the
        // head either aligned it or left fewer than 8 pointers)
        let mut v = first(at) as u64 * RUN4_MUL + RUN4_ADD;
        while at + 8 <= end {
            // SAFETY: at is a multiple of 8 and at + 7 < dst + n; the region is 16-aligned.
            unsafe {
                *(ptr.add(at as usize) as *mut u128) =
                    v as u128 | ((v + 4 * RUN4_MUL) as u128) << 64
            };
            v += 8 * RUN4_MUL;
            at += 8;
        }
        // tail: one 8-, 4- and 2-byte store at most (`at` aligned for each: a multiple of 8
        // after the body, or, where the run ended before the head reached 8, a multiple of 4
        // with at most 3 pointers left, or even with at most 1 left)
        if at + 4 <= end {
            // SAFETY: at is a multiple of 4 (see above) and at + 3 < dst + n.
            unsafe { *(ptr.add(at as usize) as *mut u64) = first(at) as u64 * RUN4_MUL + RUN4_ADD };
            at += 4;
        }
        if at + 2 <= end {
            // SAFETY: at is even and at + 1 < dst + n.
            unsafe { *(ptr.add(at as usize) as *mut u32) = first(at) * 0x1_0001 + 0x1_0000 };
            at += 2;
        }
        if at < end {
            // SAFETY: at < dst + n.
            unsafe { *ptr.add(at as usize) = first(at) as u16 };
        }
    } else {
        // a self-overlapping match: the warp fill's loop on one lane, one pointer per store
        // SAFETY: dst + n <= block_len (caller); a match (dist >= 1).
        unsafe { fill_run(ptr.add(dst as usize), n, src, true, dist, 0, 1) };
    }
}

/// Stage 2 (the whole CTA): parallel parse and pointer fill. The command stream is cut into
/// one chunk of 32-command steps per warp. Pass A counts each chunk's varints; pass B
/// computes each chunk's output and literal totals and its history map (the composition of
/// its commands' maps); after a barrier every warp derives its starting positions, varint
/// indices and history from the chunks before it and runs the fill pass: per step, prefix
/// sums over the lanes give every command's output and literal position, an exclusive scan
/// of slot maps its history, and each lane writes one 16-bit pointer per output byte (long
/// commands by the whole warp). The first failing command (lowest index over all warps)
/// names the status, as the sequential decoder would. `b` is the block's index, for the
/// timeline marks of a trace build (`crate::trace`) alone.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn parse_fill(
    s: &Smem,
    e: &BlockEntry,
    block_len: u32,
    window: u32,
    match_base: u32,
    warp: u32,
    lane: u32,
    b: u32,
) -> Status {
    let ncmd = e.decoded_len[STREAM_COMMANDS] as usize;
    let nlit = e.decoded_len[STREAM_LITERALS];
    let nlenv = ctrl_get(s, C_NLENV);
    let noffv = ctrl_get(s, C_NOFFV);
    // SAFETY: ncmd >= 1 is checked first.
    if ncmd == 0 || unsafe { *s.cmd() } != CMD_RESET {
        return Status::NoLeadingReset;
    }
    let warps = THREADS / 32;
    let below = (1u32 << lane) - 1;
    let nsteps = ncmd.div_ceil(32);
    let spw = nsteps.div_ceil(warps as usize);
    let s0 = core::cmp::min(warp as usize * spw, nsteps);
    let s1 = core::cmp::min(s0 + spw, nsteps);
    let cmd_at = |ci: usize| -> u8 {
        if ci < ncmd {
            // SAFETY: ci < ncmd <= CMD_CAP.
            unsafe { *s.cmd().add(ci) }
        } else {
            0
        }
    };

    // ---- pass A: varints per chunk
    let (mut nlen, mut noff) = (0u32, 0u32);
    for step in s0..s1 {
        let ci = step * 32 + lane as usize;
        let (_, _, mlen, moff) = step_command(ci < ncmd, cmd_at(ci));
        nlen += mlen.count_ones();
        noff += moff.count_ones();
    }
    if lane == 0 {
        // SAFETY: per-warp control words (warp < WARPS).
        unsafe {
            *s.ctrl(W_LEN + warp as usize) = nlen;
            *s.ctrl(W_OFF + warp as usize) = noff;
        }
        if warp == 0 {
            // SAFETY: a control word.
            unsafe { *s.ctrl(C_ERR) = u32::MAX };
        }
    }
    sync();
    if warp == 0 && lane == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_PASS_A);
    }
    let (mut lenv_base, mut offv_base) = (0u32, 0u32);
    for w in 0..warp as usize {
        lenv_base += ctrl_get(s, W_LEN + w);
        offv_base += ctrl_get(s, W_OFF + w);
    }

    // ---- pass B: output/literal totals and the history map of the chunk
    let (mut lb, mut ob) = (lenv_base, offv_base);
    let (mut out_t, mut lit_t) = (0u32, 0u32);
    let mut hmap = IDENTITY;
    for step in s0..s1 {
        let ci = step * 32 + lane as usize;
        let (k, c, mlen, moff) = step_command(ci < ncmd, cmd_at(ci));
        let (out_n, lit_n, new_dist, _) =
            command_values(s, k, c, match_base, lb, ob, mlen, moff, below, nlenv, noffv);
        let on = core::cmp::min(out_n, block_len as u64 + 1) as u32;
        let (io, il) = scan_counts(on, lit_n, lane);
        out_t = out_t.saturating_add(shfl(io, 31));
        lit_t += shfl(il, 31);
        let step_map = if slot_moves(k, c) == 0 {
            push_only_map(ballot(k.is_new), ballot(k.is_reset), new_dist)
        } else {
            last_lane_map(scan_maps(command_map(k, c, new_dist), lane))
        };
        hmap = compose(hmap, step_map);
        lb += mlen.count_ones();
        ob += moff.count_ones();
    }
    if lane == 0 {
        // SAFETY: per-warp control words.
        unsafe {
            *s.ctrl(W_OUT + warp as usize) = out_t;
            *s.ctrl(W_LIT + warp as usize) = lit_t;
            for j in 0..4 {
                *s.ctrl(W_MAP + 4 * warp as usize + j) = hmap[j];
            }
        }
    }
    sync();
    if warp == 0 && lane == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_PASS_B);
    }
    let mut dst_base = 0u32;
    let mut lit_base = 0u32;
    let mut hist: [u32; 4] = HISTORY_RESET;
    for w in 0..warp as usize {
        dst_base = dst_base.saturating_add(ctrl_get(s, W_OUT + w));
        lit_base += ctrl_get(s, W_LIT + w);
        let m = [
            ctrl_get(s, W_MAP + 4 * w),
            ctrl_get(s, W_MAP + 4 * w + 1),
            ctrl_get(s, W_MAP + 4 * w + 2),
            ctrl_get(s, W_MAP + 4 * w + 3),
        ];
        hist = compose(hist, m);
    }

    // ---- fill pass
    let ptr = s.ptr();
    let mut deferred = 0usize;
    let (mut lb, mut ob) = (lenv_base, offv_base);
    for step in s0..s1 {
        let ci = step * 32 + lane as usize;
        let (k, c, mlen, moff) = step_command(ci < ncmd, cmd_at(ci));
        let (out_n, lit_n, new_dist, bad_varint) =
            command_values(s, k, c, match_base, lb, ob, mlen, moff, below, nlenv, noffv);
        let too_long = out_n > block_len as u64;
        let on = if too_long {
            block_len + 1
        } else {
            out_n as u32
        };
        let (inc_out, inc_lit) = scan_counts(on, lit_n, lane);
        let dst = dst_base as u64 + (inc_out - on) as u64;
        let lit_pos = lit_base + inc_lit - lit_n;
        // history before this command: exclusive scan of the maps applied to the carry,
        // or, in a step without slot 1-3 repeats, slot 0 from the nearest new match
        let (rep_dist, step_map) = if slot_moves(k, c) == 0 {
            let (news, resets) = (ballot(k.is_new), ballot(k.is_reset));
            (
                push_only_slot0(news, resets, new_dist, below, hist[0]),
                push_only_map(news, resets, new_dist),
            )
        } else {
            let map = scan_maps(command_map(k, c, new_dist), lane);
            let mut exc = [
                shfl_up(map[0], 1),
                shfl_up(map[1], 1),
                shfl_up(map[2], 1),
                shfl_up(map[3], 1),
            ];
            if lane == 0 {
                exc = IDENTITY;
            }
            let before = compose(hist, exc);
            (pick(before, (c >> 4) as u32), last_lane_map(map))
        };
        let dist = if k.is_rep { rep_dist } else { new_dist };
        // checks (FORMAT.md §4.4)
        let mut st = Status::Ok;
        if bad_varint {
            st = Status::BadVarint;
        } else if too_long || dst + out_n > block_len as u64 {
            st = Status::OutputOverrun;
        } else if k.is_lit && lit_pos as u64 + lit_n as u64 > nlit as u64 {
            st = Status::LiteralsExhausted;
        } else if (k.is_rep || k.is_new)
            && (dist == 0 || dist > window || dist as u64 > dst || new_dist & REF != 0)
        {
            st = Status::BadDistance;
        }
        let bad = ballot(st != Status::Ok);
        if bad != 0 {
            // the chunk's first failing command; the lowest over all warps wins
            let first = bad.trailing_zeros();
            if lane == first {
                let key = ((ci as u32) << 8) | st as u32;
                // SAFETY: a shared control word; generic atomics work on shared memory.
                unsafe {
                    core::sync::atomic::AtomicU32::from_ptr(s.ctrl(C_ERR))
                        .fetch_min(key, core::sync::atomic::Ordering::Relaxed)
                };
            }
            break;
        }
        // fill pointers: short commands by their own lane, long ones by the whole warp with
        // consecutive 16-bit stores (one lane's walk through a long run would keep its warp
        // waiting; runs of up to LANE_RUN_MAX take wide stores by their own lane above)
        let is_match = k.is_rep || k.is_new;
        let src = if is_match { dst as u32 - dist } else { 0 };
        let run = k.is_lit || is_match && dist as u64 >= out_n;
        let long = (k.is_lit || is_match) && out_n > if run { LANE_RUN_MAX } else { LANE_FILL_MAX };
        if !long && (k.is_lit || is_match) {
            // SAFETY: dst + out_n <= block_len (checked above); for a literal run
            // out_n == lit_n.
            unsafe { fill_lane(ptr, dst as u32, out_n as u32, src, k.is_lit, lit_pos, dist) };
        }
        let mut longs = ballot(long);
        while longs != 0 {
            let j = longs.trailing_zeros();
            longs &= longs - 1;
            // two shuffles: dst and length (< 2^15 each, a long command's lanes passed the
            // checks) with the literal flag in bit 31, then source and distance (< 2^16)
            let a = shfl(
                dst as u32 | (out_n as u32) << 16 | (k.is_lit as u32) << 31,
                j,
            );
            let b = shfl(if k.is_lit { lit_pos } else { src } | dist << 16, j);
            let (jd, jn, jlit) = (a & 0xFFFF, (a >> 16) & 0x7FFF, a >> 31);
            let (jsrc, jdist) = (b & 0xFFFF, b >> 16);
            if jn > CTA_FILL_MIN && deferred < DEFER_SLOTS {
                // very long: the whole CTA fills it after the barrier
                if lane == 0 {
                    let e = W_DEFER + 4 * (DEFER_SLOTS * warp as usize + deferred);
                    // SAFETY: this warp's deferral slots in the control words.
                    unsafe {
                        *s.ctrl(e) = jd;
                        *s.ctrl(e + 1) = jn;
                        *s.ctrl(e + 2) = jsrc;
                        *s.ctrl(e + 3) = if jlit != 0 { 0 } else { jdist };
                    }
                }
                deferred += 1;
                continue;
            }
            // SAFETY: jd + jn <= block_len (checked above by lane j).
            unsafe { fill_run(ptr.add(jd as usize), jn, jsrc, jlit == 0, jdist, lane, 32) };
        }
        // carry to the next 32 commands
        dst_base += shfl(inc_out, 31);
        lit_base += shfl(inc_lit, 31);
        lb += mlen.count_ones();
        ob += moff.count_ones();
        hist = compose(hist, step_map);
    }
    if lane == 0 {
        // SAFETY: this warp's deferral count.
        unsafe { *s.ctrl(W_NDEFER + warp as usize) = deferred as u32 };
    }
    sync();
    if warp == 0 && lane == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_FILLED);
    }
    let err = ctrl_get(s, C_ERR);
    if err != u32::MAX {
        return Status::from_u32(err & 0xFF).unwrap_or(Status::OutputOverrun);
    }
    // ---- the deferred long commands, each by the whole CTA
    let tid = warp * 32 + lane;
    let mut any = false;
    for w in 0..warps as usize {
        for d in 0..ctrl_get(s, W_NDEFER + w) as usize {
            let e = W_DEFER + 4 * (DEFER_SLOTS * w + d);
            let (jd, jn, jsrc, jdist) = (
                ctrl_get(s, e),
                ctrl_get(s, e + 1),
                ctrl_get(s, e + 2),
                ctrl_get(s, e + 3),
            );
            // SAFETY: validated by its lane during the fill pass: jd + jn <= block_len.
            unsafe {
                fill_run(
                    ptr.add(jd as usize),
                    jn,
                    jsrc,
                    jdist != 0,
                    jdist,
                    tid,
                    THREADS,
                )
            };
            any = true;
        }
    }
    if any {
        sync();
    }
    if tid == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_DEFERRED);
    }
    let (mut out_all, mut lit_all, mut len_all, mut off_all) = (0u32, 0u32, 0u32, 0u32);
    for w in 0..warps as usize {
        out_all = out_all.saturating_add(ctrl_get(s, W_OUT + w));
        lit_all += ctrl_get(s, W_LIT + w);
        len_all += ctrl_get(s, W_LEN + w);
        off_all += ctrl_get(s, W_OFF + w);
    }
    if out_all != block_len || lit_all != nlit || len_all != nlenv || off_all != noffv {
        return Status::Trailing;
    }
    Status::Ok
}

/// The sink of the sequential parse: the same 16-bit pointers as `parse_fill` writes.
struct PtrSink {
    ptr: *mut u16,
}

impl crate::lz::BlockSink for PtrSink {
    #[inline(always)]
    fn literals(&mut self, cursor: usize, lit_pos: usize, n: usize) -> Result<(), Status> {
        for j in 0..n {
            // SAFETY: walk_block checked cursor + n <= block_len <= DENSE_MAX_BLOCK pointers.
            unsafe { *self.ptr.add(cursor + j) = 0x8000 | (lit_pos + j) as u16 };
        }
        Ok(())
    }
    #[inline(always)]
    fn copy(&mut self, cursor: usize, src: usize, dist: u32, len: usize) -> Result<(), Status> {
        let mut m = 0usize;
        for j in 0..len {
            // SAFETY: walk_block checked cursor + len <= block_len pointers.
            unsafe { *self.ptr.add(cursor + j) = (src + m) as u16 };
            m += 1;
            if m == dist as usize {
                m = 0;
            }
        }
        Ok(())
    }
}

/// Stage 2, sequential variant (stage bit `STAGE_SEQ_PARSE`, for the parse comparison of
/// issue 4): one lane walks the block's commands with the shared rules
/// (`lz::walk_block`) over the decoded streams in global memory and writes the same
/// pointers as the parallel parse.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn parse_fill_seq(
    s: &Smem,
    decoded: *const u8,
    dec_len: u64,
    dec_offsets: *const u64,
    b: u32,
    e: &BlockEntry,
    block_len: u32,
    window: u32,
    match_base: u32,
) -> Status {
    let mut bufs: [&[u8]; STREAM_COUNT] = [&[]; STREAM_COUNT];
    for (k, buf) in bufs.iter_mut().enumerate() {
        // SAFETY: STREAM_COUNT offsets per block; checked_slice bounds the range by dec_len.
        let off = unsafe { *dec_offsets.add(b as usize * STREAM_COUNT + k) };
        let Some(sl) = (unsafe {
            crate::kernels::checked_slice(decoded, dec_len, off, e.decoded_len[k] as u64)
        }) else {
            return Status::SliceMode;
        };
        *buf = sl;
    }
    let streams = crate::lz::BlockStreams::from_slices(bufs);
    let frame = crate::lz::BlockFrame {
        dst_start: 0,
        dst_end: block_len as usize,
        src_floor: 0,
        window,
        match_base,
    };
    match crate::lz::walk_block(streams, &frame, &mut PtrSink { ptr: s.ptr() }) {
        Ok(()) => Status::Ok,
        Err(st) => st,
    }
}

/// Stage 3 in one pass, for any depth: every byte follows its pointer chain to the end and,
/// when it took a hop, stores the literal pointer it found back in its own slot, so a later
/// byte whose chain passes through it stops there. The CTA sweeps the block in increasing
/// position and every match pointer names a lower position, so most chains end at a byte
/// resolved a sweep step earlier. Concurrent readers of a slot see either its match pointer
/// or the literal pointer stored back: both lie on its chain, so the result is the same
/// either way. Every hop goes to a lower position (parse checks), so a chain ends within
/// `block_len` hops even in a hostile block.
///
/// A thread takes four bytes at a time: their pointers in one 8-byte load, their first hops
/// as four independent loads (so the four bytes wait on one shared-memory latency, not one
/// after another: PERFORMANCE.md twenty-second session), deeper chains in a loop, the four
/// resolved pointers stored back in one 8-byte store when any of them hopped.
///
/// The stores race with other threads' loads by design, with plain accesses, and the generated
/// code loads each slot once into the register that is both tested and used. The racing
/// accesses differ in size: a thread stores its four slots back in one aligned 8-byte store
/// while others load single 16-bit slots. The PTX memory model does not define such
/// mixed-size races; the kernel relies on the hardware's: an aligned 8-byte shared-memory
/// store is one transaction, so a racing 16-bit load of one of its slots reads either the
/// old pointer or the new one, both on that slot's chain. (Before the twenty-second session
/// every access was 16-bit; a vector access, which the model takes element by element,
/// comes out of LLVM as the same 64-bit access.) `compute-sanitizer --tool racecheck`
/// reports these loads and stores as write-after-read hazards (seventh session; again in the
/// twenty-second, run 12, with the decode bit-exact); making every access of the chain
/// volatile made the write stage 3x slower (seventh session, run 9). Only the first hop's loads are volatile, so that LLVM keeps
/// them unconditional.
///
/// `LIT_RUNS` ([`decode_blocks_dense_sc`]'s): a word whose four pointers are consecutive
/// literal pointers (a literal run, most of a block of DNA) takes its four literals in one or
/// two aligned 4-byte loads of the literal region instead of four pointer hops and four
/// byte loads.
fn write_memo<const LIT_RUNS: bool>(s: &Smem, out: *mut u8, start: u64, block_len: u32, tid: u32) {
    let ptr = s.ptr();
    let lit = s.lit();
    let byte = |i: u32| -> u32 {
        // SAFETY: i < block_len pointers; a match pointer names a lower position.
        let mut v = unsafe { *ptr.add(i as usize) };
        let mut hops = 0u32;
        while v & 0x8000 == 0 {
            // SAFETY: as above.
            v = unsafe { *ptr.add(v as usize) };
            hops += 1;
        }
        if hops > 0 {
            // SAFETY: slot i of the pointer region; a literal pointer (see above).
            unsafe { *ptr.add(i as usize) = v };
        }
        // SAFETY: the parse wrote literal pointers only below the block's literal count
        // (<= LIT_CAP, loaded into the literal region).
        (unsafe { *lit.add((v & 0x7FFF) as usize) }) as u32
    };
    let words = block_len / 4;
    let mut q = tid;
    while q < words {
        // the word's four pointers in one load; their first hops as four independent loads
        // (a literal pointer's "hop" reads a pointer slot below DENSE_MAX_BLOCK, in the
        // region, and is discarded), so the four bytes wait on one shared-memory latency
        // each step instead of one after another
        // SAFETY: 4q + 3 < block_len pointers; the region is 16-aligned (PTR_OFF), so slot 4q
        // is 8-aligned.
        let p4 = unsafe { *(ptr.add(4 * q as usize) as *const u64) };
        let p0 = p4 & 0xFFFF;
        if LIT_RUNS && p0 & 0x8000 != 0 && p4 == p0 * 0x0001_0001_0001_0001 + 0x0003_0002_0001_0000
        {
            // literals i .. i + 4 (i + 3 < the block's literal count <= LIT_CAP: the parse
            // wrote literal pointers only below it, so no field carried into the next)
            let i = (p0 & 0x7FFF) as usize;
            let sh = 8 * (i & 3) as u32;
            let at = lit as *const u32;
            // SAFETY: word i / 4 of the literal region (16-aligned), and, when i is not
            // 4-aligned, the next one, which holds literal i + 3 < LIT_CAP.
            let w = unsafe {
                let lo = *at.add(i / 4);
                if sh == 0 {
                    lo
                } else {
                    lo >> sh | *at.add(i / 4 + 1) << (32 - sh)
                }
            };
            // SAFETY: as the store below.
            unsafe { *(out.add((start + 4 * q as u64) as usize) as *mut u32) = w };
            q += THREADS;
            continue;
        }
        let mut v = [
            p4 as u32 & 0xFFFF,
            (p4 >> 16) as u32 & 0xFFFF,
            (p4 >> 32) as u32 & 0xFFFF,
            (p4 >> 48) as u32,
        ];
        for x in v.iter_mut() {
            // a volatile load, so that LLVM keeps it unconditional (it sinks a plain one into
            // a branch per byte, which serialises the four)
            // SAFETY: (x & 0x7FFF) < DENSE_MAX_BLOCK pointer slots (a match pointer is below
            // block_len, a literal index below LIT_CAP, asserted below).
            const _: () = assert!(LIT_CAP <= DENSE_MAX_BLOCK as usize);
            let t = unsafe { ptr.add((*x & 0x7FFF) as usize).read_volatile() } as u32;
            if *x & 0x8000 == 0 {
                *x = t;
            }
        }
        if (v[0] & v[1] & v[2] & v[3]) & 0x8000 == 0 {
            for x in v.iter_mut() {
                while *x & 0x8000 == 0 {
                    // SAFETY: a match pointer names a lower position (parse checks).
                    *x = unsafe { *ptr.add(*x as usize) } as u32;
                }
            }
        }
        if p4 != (v[0] | v[1] << 16) as u64 | ((v[2] | v[3] << 16) as u64) << 32 {
            // SAFETY: the word's own four slots; each now a literal pointer on its chain.
            unsafe {
                *(ptr.add(4 * q as usize) as *mut u64) =
                    (v[0] | v[1] << 16) as u64 | ((v[2] | v[3] << 16) as u64) << 32
            };
        }
        // a literal pointer is 0x8000 + its index: the region's address less 0x8000 plus the
        // pointer (no mask; the offset folds into the load's immediate)
        let lit_x = lit.wrapping_sub(0x8000);
        let mut w: u32 = 0;
        for (j, x) in v.iter().enumerate() {
            // SAFETY: x is a literal pointer, 0x8000 + an index below the block's literal
            // count (see `byte`), so lit_x + x lies in the literal region.
            w |= (unsafe { *lit_x.wrapping_add(*x as usize) } as u32) << (8 * j);
        }
        // SAFETY: start is a multiple of the block size (>= 4 KiB), so start + 4q is 4-aligned
        // in the 256-byte aligned output; start + block_len <= out_len.
        unsafe { *(out.add((start + 4 * q as u64) as usize) as *mut u32) = w };
        q += THREADS;
    }
    let mut i = words * 4 + tid;
    while i < block_len {
        let b = byte(i) as u8;
        // SAFETY: start + i < start + block_len <= out_len.
        unsafe { *out.add((start + i as u64) as usize) = b };
        i += THREADS;
    }
}
