//! The dense full pipe: the rANS kernel (`rans_decode_slices`, one warp per block, two for an
//! archive with wide slices) decodes every block's streams into a scratch buffer, then the
//! dense kernel (`decode_blocks_dense`, one CTA of `THREADS` threads per block at a time)
//! assembles each independent block in shared memory (layout in `dense_layout.rs`). On sm_90
//! the dense kernel runs while the rANS kernel does and decodes each block as soon as its
//! streams are published (`handoff.rs`); a block whose match streams are raw slices and not yet
//! published when a CTA takes it is loaded from the archive's data section and parsed first,
//! while the rANS stage still decodes its literals, and waits for the hand-off only before
//! stage 3 (`early_match_streams`).
//!
//! 1. rANS: the block's rANS slices have their interleaved lanes packed side by side into
//!    the warp's lanes; renormalisation words are handed out in lane order by a ballot and
//!    a population count. The dense kernel loads the decoded streams but the literals (read
//!    from the scratch by stage 3) into shared memory and
//!    turns the varints into values (continuation bits -> ballot -> index of each varint):
//!    the lengths by warp 0; the distances (FORMAT.md §4.2: first bytes and one-byte tails
//!    in two streams) in chunks by the other seven warps, which first count the first bytes
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
//! streams, as `compress --target gpu` writes them where they pay) need nothing
//! from the rANS stage: `decode_blocks_dense_sc` loads such a block's match streams and its
//! literal slice straight from the data section in stage 1 (the slice to the end of the
//! command region, `load_own_slice`), parses it, and expands the literals from that copy
//! after the parse (`expand_own_literals`), never waiting for a hand-off; the rANS stage
//! (`rans_decode_slices_two_bit` with `leave_self_contained`) skips those blocks. Where every
//! block is one and none can fall back, the host launches the dense kernel alone
//! (`gpu::schedule::dense_alone`).

use crate::dense_layout::*;
use crate::format::*;
use crate::handoff::{QUEUE_EPOCH, QUEUE_FALLBACK, QUEUE_READY, QUEUE_TICKET};
use crate::status::Status;
use core::arch::nvptx::*;

mod decode;
mod load;
mod packed;
mod parse;
mod rans;
mod seek;
mod two_bit;
mod write;

#[allow(unused_imports)]
use {decode::*, load::*, packed::*, parse::*, rans::*, seek::*, two_bit::*, write::*};

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

pub(super) const FULL: u32 = 0xFFFF_FFFF;

#[inline(always)]
pub(super) fn ballot(p: bool) -> u32 {
    // SAFETY: called by all 32 lanes of the warp in uniform control flow.
    unsafe { vote_ballot(FULL, p) }
}

#[inline(always)]
pub(super) fn shfl_up(v: u32, d: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0 clamps at lane 0 for shfl.up.
    unsafe { shfl_up_i32(FULL, v as i32, d, 0) as u32 }
}

#[inline(always)]
pub(super) fn shfl(v: u32, lane: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0x1f is the full-warp clamp for shfl.idx.
    unsafe { shfl_idx_i32(FULL, v as i32, lane, 0x1F) as u32 }
}

#[inline(always)]
pub(super) fn shfl_xor(v: u32, m: u32) -> u32 {
    // SAFETY: all lanes participate; c = 0x1f is the full-warp clamp for shfl.bfly.
    unsafe { shfl_bfly_i32(FULL, v as i32, m, 0x1F) as u32 }
}

/// Synchronises the warp; orders the memory accesses of its lanes before the call before
/// those after it (`bar.warp.sync`).
#[inline(always)]
pub(super) fn syncwarp() {
    // SAFETY: called by all 32 lanes of the warp in uniform control flow.
    unsafe { bar_warp_sync(FULL) }
}

#[inline(always)]
pub(super) fn sync() {
    // SAFETY: every thread of the CTA reaches each call (block-uniform control flow).
    unsafe { _syncthreads() }
}

/// Reads byte `i` of a global buffer.
#[inline(always)]
pub(super) unsafe fn gb(p: *const u8, i: usize) -> u8 {
    // SAFETY: the caller checked i against the slice length.
    unsafe { *p.add(i) }
}

/// Reads the little-endian `u32` at bytes `i..i + 4` of a global buffer (any alignment).
#[inline(always)]
pub(super) unsafe fn gb_u32(p: *const u8, i: usize) -> u32 {
    // SAFETY: the caller checked i + 4 against the slice length.
    unsafe { u32::from_le_bytes([gb(p, i), gb(p, i + 1), gb(p, i + 2), gb(p, i + 3)]) }
}

/// Reads the little-endian 16-bit word at `p` (any alignment) of global memory as its two
/// bytes `(low, high)`, two byte loads that ask L2 to fetch 256 bytes on a miss
/// (`ld.global.L2::256B`): the rANS stage reads each slice's words once, front to back.
/// The bytes stay apart until [`merge_word`].
///
/// # Safety
/// `p` and `p + 1` are readable bytes of global memory. (`p` is the generic address; on
/// NVIDIA GPUs the generic window maps global memory at the same addresses, which is what
/// LLVM's own `cvta.to.global` of a kernel parameter relies on too.)
#[inline(always)]
pub(super) unsafe fn global_word_l2_256(p: *const u8) -> (u16, u16) {
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
/// the load was in flight.
#[inline(always)]
pub(super) fn merge_word(x: u32, lo: u16, hi: u16) -> u32 {
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
/// capacity and bandwidth from its word loads.
///
/// # Safety
/// `p` is a writable byte of global memory that no other thread of the kernel accesses.
#[inline(always)]
pub(super) unsafe fn global_store_no_l1(p: *mut u8, v: u8) {
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
pub(super) unsafe fn global_store_no_l1_u32(p: *mut u32, v: u32) {
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
pub(super) struct Smem {
    pub(super) base: *mut u8,
}

impl Smem {
    #[inline(always)]
    pub(super) fn cmd(&self) -> *mut u8 {
        // SAFETY: offsets come from dense_layout and lie inside SMEM_BYTES.
        unsafe { self.base.add(CMD_OFF) }
    }
    /// The literals, loaded after the parse (they take the command region's place).
    #[inline(always)]
    pub(super) fn lit(&self) -> *mut u8 {
        unsafe { self.base.add(LIT_OFF) }
    }
    #[inline(always)]
    pub(super) fn lenv(&self) -> *mut u32 {
        unsafe { self.base.add(LENV_OFF) as *mut u32 }
    }
    #[inline(always)]
    pub(super) fn offv(&self) -> *mut u16 {
        unsafe { self.base.add(OFFV_OFF) as *mut u16 }
    }
    #[inline(always)]
    pub(super) fn ptr(&self) -> *mut u16 {
        unsafe { self.base.add(PTR_OFF) as *mut u16 }
    }
    /// Length bytes during stage 1 (inside the pointer region).
    #[inline(always)]
    pub(super) fn lenb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF) }
    }
    /// Offset bytes during stage 1 (inside the pointer region, after the length bytes).
    #[inline(always)]
    pub(super) fn offb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF + LENB_CAP) }
    }
    /// Offset-tail bytes during stage 1 (inside the pointer region, after the offset bytes).
    #[inline(always)]
    pub(super) fn tailb(&self) -> *mut u8 {
        unsafe { self.base.add(PTR_OFF + LENB_CAP + OFFB_CAP) }
    }
    /// The layout table of a block with `runs` line runs (`lines::table_run`'s words), at
    /// the pointer region's top.
    #[inline(always)]
    pub(super) fn line_table(&self, runs: u32) -> *mut u32 {
        unsafe {
            self.base
                .add(PTR_OFF + 2 * DENSE_MAX_BLOCK as usize - line_table_bytes(runs as usize))
                as *mut u32
        }
    }
    #[inline(always)]
    pub(super) fn ctrl(&self, i: usize) -> *mut u32 {
        unsafe { (self.base.add(CTRL_OFF) as *mut u32).add(i) }
    }
}

// control words
pub(super) const C_STATUS: usize = 0;
/// The length values the parse may take (`varints_to_values`), with [`NLENV_BROKEN`] set
/// where a broken varint follows them.
pub(super) const C_NLENV: usize = 1;
/// In [`C_NLENV`]: the lengths stream holds a varint that breaks a rule of FORMAT.md §4.2
/// after the values counted, so a command that takes it fails `BadVarint` and a block whose
/// commands take fewer fails `Trailing` (its bytes are left over).
pub(super) const NLENV_BROKEN: u32 = 1 << 31;
pub(super) const C_NOFFV: usize = 2;
/// 1 when the block's streams are published by the rANS stage (handoff.rs) or the CTA knows
/// the whole stage complete, 0 when thread 0's wait for them gave up (and, for a block
/// parsed before its hand-off, until `await_block` after the parse).
pub(super) const C_READY: usize = 3;
/// How the CTA's block gets its streams, kept here rather than in a register through the
/// parse: [`EARLY_NO`], [`EARLY_WAIT`] or [`EARLY_OWN`].
pub(super) const C_EARLY: usize = 4;
/// [`C_EARLY`]: every stream from the rANS stage's scratch, after its hand-off.
pub(super) const EARLY_NO: u32 = 0;
/// [`C_EARLY`]: the match streams from the data section, parsed before the hand-off, which
/// the CTA waits for before the literals (`early_match_streams`).
pub(super) const EARLY_WAIT: u32 = 1;
/// [`C_EARLY`]: every stream from the data section, no hand-off (a [`self_contained`] block
/// in [`decode_blocks_dense_sc`]).
pub(super) const EARLY_OWN: u32 = 2;
/// The literals' place in the decoded scratch, in 16-byte words: low word (high word at
/// [`C_LIT_HI`]), written in stage 1 and read in stage 3 (shared memory rather than
/// registers through the parse, and no second global load on the way to the literal load);
/// for a self-contained block (`EARLY_OWN`), its literal slice's place in the command region
/// (`own::OwnSlice::at`).
pub(super) const C_LIT_LO: usize = 5;
/// Lowest `(command index << 8) | status` of a failing command (u32::MAX: none).
pub(super) const C_ERR: usize = 6;
/// A self-contained block's data offset (low word, high word after it), written by thread 0
/// at the take and read in stage 1: two of the parse's per-warp words ([`W_MAP`]), which
/// pass B writes only after stage 1's barrier.
pub(super) const C_OWN_OFF: usize = W_MAP;
/// The high word of the literals' place (see [`C_LIT_LO`]).
pub(super) const C_LIT_HI: usize = 7;
/// The CTA's next block, taken from the queue by thread 0 (`decode_blocks_dense`).
pub(super) const C_NEXT: usize = 8;
/// The line runs of the block's layout (FORMAT.md §4.6; 0: none), whose table
/// ([`Smem::line_table`]) thread 0 wrote in stage 1 (`take_line_layout`).
pub(super) const C_LINES: usize = 9;
/// The line-end bytes of the block's layout (0: none): the block's length less its kept
/// bytes, which the parse decodes.
pub(super) const C_REMOVED: usize = 10;
/// Per-warp parse summaries: length varints, offset varints, output bytes, literals, and
/// the chunk's history map (4 words per warp).
pub(super) const WARPS: usize = THREADS as usize / 32;
pub(super) const W_LEN: usize = 11;
pub(super) const W_OFF: usize = W_LEN + WARPS;
pub(super) const W_OUT: usize = W_OFF + WARPS;
pub(super) const W_LIT: usize = W_OUT + WARPS;
pub(super) const W_MAP: usize = W_LIT + WARPS;
/// Per warp: how many of its long commands it left to the whole CTA, then their
/// `[dst, n, src, dist (0: literal run)]` in `DEFER_SLOTS` slots per warp.
pub(super) const W_NDEFER: usize = W_MAP + 4 * WARPS;
pub(super) const W_DEFER: usize = W_NDEFER + WARPS;
pub(super) const DEFER_SLOTS: usize = 2;
const _: () =
    assert!(W_DEFER + 4 * DEFER_SLOTS * WARPS <= CTRL_WORDS && THREADS % 32 == 0 && WARPS >= 4);

#[inline(always)]
pub(super) fn set_status(s: &Smem, st: Status) {
    // SAFETY: a plain store of a non-zero code; concurrent writers all store non-zero codes
    // and any one of them is a correct report.
    unsafe { *s.ctrl(C_STATUS) = st as u32 };
}

// The literals of a self-contained block (FORMAT.md §5.7). `expand_own_literals` is the one
// function of the dense pipe that stays a call in the PTX; it is defined in this module, not
// a submodule, because its symbol name (which carries the module path) steers ptxas's
// instruction schedule of `decode_blocks_dense_sc`: renaming it changes the kernel's SASS.

/// An exclusive prefix sum over the CTA's threads (in thread order) of each of the `N`
/// values `v`, and each one's total, wrapping: warp sums by shuffles ([`scan_u32`]), each
/// warp's total through control word `slots[i] + warp`, one barrier. Every thread calls it;
/// the slots are not written again before a later barrier.
#[inline(always)]
pub(super) fn cta_scan<const N: usize>(
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
/// 64 registers spilled around the parse). One copy per entry point (`SEEK`: the seek's), so
/// that each has one caller, which LLVM specialises (a shared copy took the shared-memory
/// base as a generic address and made the full decode's kernel spill more).
///
/// # Safety
/// The slice's `stored` bytes lie at `[at, at + stored)` of the command region, `n <=
/// LIT_CAP`, `stored >= 6 + ceil(n / 4)` and `stored - ceil(n / 4) <= OWN_PRE_CAP`
/// (own_slice).
#[inline(never)]
pub(super) unsafe fn expand_own_literals<const SEEK: bool>(
    s: &Smem,
    at: u32,
    stored: u32,
    n: u32,
    b: u32,
    tid: u32,
) -> bool {
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
            // (long: a fifth byte, longer than MAX_VARINT_BYTES)
            let (v, long) = crate::two_bit::varint_ending_with(c);
            fine &= !long;
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

/// Bitmap words of a block's literal positions (one bit each) in [`expand_own_runs`].
const RUN_WORDS: usize = LIT_CAP / 32;
const _: () = assert!(
    RUN_WORDS == 2 * THREADS as usize
        && LENV_CAP * 4 >= RUN_WORDS * 4
        && OFFV_CAP * 2
            >= RUN_WORDS * 4 + crate::two_bit::MAX_RUNS * 8 + crate::two_bit::MAX_INTERVALS * 4
        && crate::two_bit::RUNS_HEAD_CAP == 4 * THREADS as usize
        && crate::two_bit::MAX_INTERVALS <= THREADS as usize
        && crate::two_bit::MAX_RUNS <= THREADS as usize
        && OFFV_OFF.is_multiple_of(4)
        && LENV_OFF.is_multiple_of(4)
);

/// Inclusive prefix XOR of the bits of `x`, bit 0 first: bit `i` of the result is the
/// parity of bits `0..=i`.
#[inline(always)]
fn prefix_xor(mut x: u32) -> u32 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x
}

/// The four bytes of `w` with each upper-case ASCII letter whose byte has its bit set in the
/// low four bits of `sel` turned lower case (FORMAT.md §5.8's intervals).
#[inline(always)]
fn lower_bytes(w: u32, sel: u32) -> u32 {
    // bytes >= 'A' and >= '[' (bit 7 of each byte after the subtraction, for bytes < 0x80)
    let ge_a = (w | 0x8080_8080).wrapping_sub(0x4141_4141);
    let ge_z1 = (w | 0x8080_8080).wrapping_sub(0x5B5B_5B5B);
    let upper = ge_a & !ge_z1 & !w & 0x8080_8080;
    let pick = (sel & 1) * 0xFF
        | (sel >> 1 & 1) * 0xFF00
        | (sel >> 2 & 1) * 0xFF_0000
        | (sel >> 3 & 1) * 0xFF00_0000;
    w | (upper >> 2) & pick
}

/// Expands the literal slice with runs of a [`self_contained`] block (FORMAT.md §5.8,
/// [`crate::two_bit::decode_runs`] the reference), copied to byte `at` of the command region
/// during the load (`stored` bytes, `n` literals), into the literal region with the whole
/// CTA, and returns whether the slice keeps every rule (false: `TwoBitSlice`; the region is
/// then partly written, and the block is not). From shared memory; the length and offset
/// value regions, dead after the parse, hold a bitmap of the run positions, one of the
/// intervals' ends (then the lower-case mask) and the runs' and intervals' fields:
/// 1. the counts (every thread reads them), then the varints: thread `t` takes head bytes
///    `4t .. 4t + 4` after the runs' values (the head is at most `RUNS_HEAD_CAP` bytes); a
///    byte that ends a varint reads the three before it for its value and a prefix sum over
///    the CTA ([`cta_scan`]) gives its index, hence its run or interval field;
/// 2. thread `t` takes run `t` and interval `t`: prefix sums give each run's first position
///    and each interval's start, checked as the reference checks them; an interval toggles
///    the bits of its start and end;
/// 3. each warp marks its runs' positions (a position marked twice is an overlap);
/// 4. thread `t` takes literals `64t .. 64t + 64`: a prefix sum of the marked positions
///    before them gives the index of its first code, one of the toggles' parity gives the
///    lower-case mask, and it reads its codes (two aligned words per 16 literals);
/// 5. after a barrier (the copy lies where the literals go), it writes its literals, 16 a
///    store (byte permutes, then a gap opened at each run position among the 16,
///    `two_bit::open_gaps`), lower case applied;
/// 6. after a barrier, each warp stores its runs' values.
///
/// # Safety
/// The slice's `stored` bytes lie at `[at, at + stored)` of the command region, `1 <= n <=
/// LIT_CAP` (own_slice); the parse is done (the commands and match values are dead).
#[inline(never)]
pub(super) unsafe fn expand_own_runs<const SEEK: bool>(
    s: &Smem,
    at: u32,
    stored: u32,
    n: u32,
    b: u32,
    tid: u32,
) -> bool {
    use crate::two_bit::{MAX_INTERVALS, MAX_RUNS, RUNS_HEAD_CAP};
    use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
    if at as usize + stored as usize > CMD_REGION || n == 0 || n as usize > LIT_CAP {
        return false;
    }
    // SAFETY (the region pointers): inside the length and offset value regions (the asserts
    // above), 4-aligned.
    let ex = s.lenv();
    let tg = s.offv() as *mut u32;
    // runs: [gap, then first; stride - 1, then stride; count - 1; value], u16 each
    let rt = unsafe { tg.add(RUN_WORDS) } as *mut u16;
    // intervals: [gap, then start; len - 1], u16 each
    let it = unsafe { rt.add(4 * MAX_RUNS) };
    for i in 0..2 {
        // SAFETY: 2 tid + 1 < RUN_WORDS words of each bitmap.
        unsafe {
            *ex.add(2 * tid as usize + i) = 0;
            *tg.add(2 * tid as usize + i) = 0;
        }
    }
    if tid == 0 {
        // SAFETY: the failure flag, a control word free after the parse (C_OWN_OFF's);
        // every later writer stores 1, after the first barrier below.
        unsafe { *s.ctrl(C_OWN_OFF) = 0 };
    }
    // SAFETY: the failure flag (above).
    let fail = || unsafe { *s.ctrl(C_OWN_OFF) = 1 };
    // SAFETY: the slice's bytes lie at [at, at + stored) of the command region.
    let sl = unsafe { s.cmd().add(at as usize) } as *const u8;
    let head_end = stored.min(RUNS_HEAD_CAP as u32);
    // SAFETY (every read through it): j < head_end <= stored, inside the slice.
    let rd = |j: u32| -> u32 {
        if j < head_end {
            (unsafe { *sl.add(j as usize) }) as u32
        } else {
            0x80
        }
    };
    let sym = rd(0) | rd(1) << 8 | rd(2) << 16 | rd(3) << 24;
    let mut fine = stored >= 4;
    // 1. the counts, then the varints
    let mut pos = 4u32;
    let mut leb = || {
        let mut v = 0u32;
        for i in 0..crate::two_bit::MAX_VARINT_BYTES {
            let b = rd(pos);
            pos += 1;
            v |= (b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let (r, c) = match (leb(), leb()) {
        (Some(r), Some(c)) if r as usize <= MAX_RUNS && c as usize <= MAX_INTERVALS => (r, c),
        _ => {
            fine = false;
            (0, 0)
        }
    };
    let values = pos;
    let vs = values + r;
    fine &= vs <= head_end;
    let total = 3 * r + 2 * c;
    // a byte before the area reads as a varint's end, so the first varint starts at vs
    let byte = |j: u32| if j < vs { 0 } else { rd(j) };
    const PER: usize = crate::two_bit::RUNS_HEAD_CAP / THREADS as usize;
    let mut ends = [false; PER];
    let mut e = [0u32; PER];
    let mut long = [false; PER];
    for i in 0..PER as u32 {
        let j = vs + PER as u32 * tid + i;
        if j < head_end && rd(j) < 0x80 {
            let bs = [rd(j), byte(j - 1), byte(j - 2), byte(j - 3), byte(j - 4)];
            (e[i as usize], long[i as usize]) = crate::two_bit::varint_ending_with(bs);
            ends[i as usize] = true;
        }
    }
    const _: () = assert!(crate::two_bit::MAX_VARINT_BYTES == 4);
    let count = ends.iter().map(|&x| x as u32).sum::<u32>();
    let ([k_before], [k_total]) = cta_scan(s, [W_LEN], [count], tid);
    fine &= k_total >= total;
    let mut k = k_before;
    let mut end_at = 0u32;
    for i in 0..PER {
        if ends[i] {
            if k < total {
                fine &= !long[i] && e[i] <= 0xFFFF;
                let v = e[i] as u16;
                // SAFETY: k < 3r + 2c with r <= MAX_RUNS, c <= MAX_INTERVALS: inside the
                // tables.
                unsafe {
                    if k < 3 * r {
                        *rt.add((4 * (k / 3) + k % 3) as usize) = v;
                    } else {
                        let q = k - 3 * r;
                        *it.add((2 * (q / 2) + q % 2) as usize) = v;
                    }
                }
                if k + 1 == total {
                    end_at = vs + PER as u32 * tid + i as u32 + 1;
                }
            }
            k += 1;
        }
    }
    // the tables' stores before their reads (and the scan's slots before their reuse)
    sync();
    // 2. run t and interval t
    let rf = |t: u32, f: u32| -> u32 {
        // SAFETY: t < r <= MAX_RUNS, f < 4: inside the run table.
        (unsafe { *rt.add((4 * t + f) as usize) }) as u32
    };
    let (gap, stride, count1) = if tid < r {
        (rf(tid, 0), rf(tid, 1) + 1, rf(tid, 2))
    } else {
        (0, 1, 0)
    };
    let (igap, ilen) = if tid < c {
        // SAFETY: tid < c <= MAX_INTERVALS: inside the interval table.
        unsafe {
            (
                *it.add(2 * tid as usize) as u32,
                *it.add(2 * tid as usize + 1) as u32 + 1,
            )
        }
    } else {
        (0, 0)
    };
    let (before, totals) = cta_scan(
        s,
        [W_LEN, W_OFF, W_OUT, W_LIT],
        [
            gap,
            igap + ilen,
            if tid < r { count1 + 1 } else { 0 },
            end_at,
        ],
        tid,
    );
    let marked = totals[2];
    let codes_at = if total == 0 { vs } else { totals[3] };
    let m = n.wrapping_sub(marked);
    let codes_ok = fine && marked <= n && codes_at <= stored && stored - codes_at == m.div_ceil(4);
    if tid < r {
        let first = before[0] + gap;
        // (stride, count1 and first below 2^16 and n <= LIT_CAP: no product overflows)
        let ok = first < n && stride <= n && count1 * stride <= n - 1 - first;
        fine &= ok;
        // SAFETY: tid < r: this thread's run.
        unsafe {
            *rt.add(4 * tid as usize) = first as u16;
            *rt.add(4 * tid as usize + 1) = stride as u16;
            *rt.add(4 * tid as usize + 2) = if ok { count1 as u16 } else { u16::MAX };
            *rt.add(4 * tid as usize + 3) = rd(values + tid) as u16;
        }
    }
    if tid < c {
        let start = before[1] + igap;
        if start <= n && ilen <= n - start {
            let tog = |p: u32| {
                // SAFETY: p < n <= LIT_CAP: a word of the bitmap; generic atomics work on
                // shared memory.
                unsafe {
                    AtomicU32::from_ptr(tg.add(p as usize / 32)).fetch_xor(1 << (p % 32), Relaxed)
                };
            };
            tog(start);
            if start + ilen < n {
                tog(start + ilen);
            }
        } else {
            fine = false;
        }
    }
    if !fine || !codes_ok {
        fail();
    }
    sync();
    // 3. the runs' positions, a warp a run
    let lane = tid % 32;
    let mut run = tid / 32;
    while run < r {
        let (first, stride, count1) = (rf(run, 0), rf(run, 1), rf(run, 2));
        if count1 != u16::MAX as u32 {
            let mut j = lane;
            while j <= count1 {
                let p = first + j * stride;
                let bit = 1u32 << (p % 32);
                // SAFETY: p < n (the run's check): a word of the bitmap.
                let old =
                    unsafe { AtomicU32::from_ptr(ex.add(p as usize / 32)).fetch_or(bit, Relaxed) };
                if old & bit != 0 {
                    fail();
                }
                j += 32;
            }
        }
        run += WARPS as u32;
    }
    sync();
    // 4. literals 64t .. 64t + 64: their run positions, lower-case mask and codes
    // SAFETY: words 2 tid, 2 tid + 1 < RUN_WORDS of each bitmap.
    let (e0, e1, t0, t1) = unsafe {
        (
            *ex.add(2 * tid as usize),
            *ex.add(2 * tid as usize + 1),
            *tg.add(2 * tid as usize),
            *tg.add(2 * tid as usize + 1),
        )
    };
    let ([rank, par], _) = cta_scan(
        s,
        [W_LEN, W_OFF],
        [
            e0.count_ones() + e1.count_ones(),
            (t0 ^ t1).count_ones() & 1,
        ],
        tid,
    );
    let flip = |p: u32| if p & 1 != 0 { u32::MAX } else { 0 };
    let l0 = prefix_xor(t0) ^ flip(par);
    let l1 = prefix_xor(t1) ^ flip(par ^ t0.count_ones());
    // SAFETY: this thread's words; others read them only after the barriers below.
    unsafe {
        *tg.add(2 * tid as usize) = l0;
        *tg.add(2 * tid as usize + 1) = l1;
    }
    let region = s.cmd() as *const u32;
    let mut cw = [0u32; 4];
    let mut eb = [0u32; 4];
    let mut lb = [0u32; 4];
    let mut below = rank;
    for q in 0..4usize {
        let ew = if q < 2 { e0 } else { e1 };
        let lw = if q < 2 { l0 } else { l1 };
        eb[q] = ew >> (16 * (q % 2)) & 0xFFFF;
        lb[q] = lw >> (16 * (q % 2)) & 0xFFFF;
        let p0 = 64 * tid + 16 * q as u32;
        let k0 = p0.wrapping_sub(below);
        if codes_ok && p0 < n && k0 <= m {
            let a = at + codes_at + k0 / 4;
            let sh = 8 * (a & 3) + 2 * (k0 & 3);
            // SAFETY: a <= at + codes_at + m / 4 <= at + stored <= CMD_REGION (codes_ok,
            // k0 <= m), so words a / 4 and a / 4 + 1 lie in the command region or the first
            // two words after it (the length values), inside shared memory.
            let (lo, hi) =
                unsafe { (*region.add(a as usize / 4), *region.add(a as usize / 4 + 1)) };
            cw[q] = ((hi as u64) << 32 | lo as u64).wrapping_shr(sh) as u32;
        }
        below += eb[q].count_ones();
    }
    const _: () = assert!(LENV_OFF == CMD_OFF + CMD_REGION && CMD_OFF == 0);
    // 5. every read of the copy (which the literals overwrite) before the stores
    sync();
    if tid == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_CODES);
    }
    let lit = s.lit();
    for q in 0..4usize {
        let p0 = 64 * tid + 16 * q as u32;
        if p0 >= n {
            break;
        }
        // the 16 literals of the next 16 codes, moved past the run positions among them
        let mut w = expand_codes(sym, cw[q]);
        if eb[q] != 0 {
            let v = crate::two_bit::open_gaps(join16(w), eb[q]);
            w = core::array::from_fn(|i| (v >> (32 * i)) as u32);
        }
        if lb[q] != 0 {
            for (i, x) in w.iter_mut().enumerate() {
                *x = lower_bytes(*x, lb[q] >> (4 * i) & 0xF);
            }
        }
        // SAFETY: p0 < n <= LIT_CAP, 16-aligned (LIT_CAP a multiple of 16): a word of the
        // literal region.
        unsafe { *(lit.add(p0 as usize) as *mut u128) = join16(w) };
    }
    // 6. the runs' values, after the codes' stores (which left other bytes at their positions)
    sync();
    let mut run = tid / 32;
    while run < r {
        let (first, stride, count1) = (rf(run, 0), rf(run, 1), rf(run, 2));
        let v = rf(run, 3);
        if count1 != u16::MAX as u32 {
            let mut j = lane;
            while j <= count1 {
                let p = first + j * stride;
                // SAFETY: p < n: a word of the mask and a byte of the literal region.
                let lower = unsafe { *tg.add(p as usize / 32) } >> (p % 32) & 1;
                unsafe { *lit.add(p as usize) = lower_bytes(v, lower) as u8 };
                j += 32;
            }
        }
        run += WARPS as u32;
    }
    sync();
    ctrl_get(s, C_OWN_OFF) == 0
}
