//! Timeline marks of the dense pipe's kernels, for measurement builds only.
//!
//! Built with the device crate's feature `trace` (`build.rs` passes `ACEAPEX_DEVICE_FEATURES`
//! to the PTX build; in a target directory of its own, so that the default kernels stay as
//! they are: CONTRIBUTING.md, "Building"), the rANS stage and the dense kernel store
//! `%globaltimer` (nanoseconds, GPU-wide) at fixed points of each block's decode into the
//! global array [`TRACE_SYMBOL`], [`TRACE_SLOTS`] words per block for the first
//! [`TRACE_BLOCKS`] blocks; `examples/gpu_timeline.rs`, built the same way (it embeds the
//! trace kernels), reads them back after one decode and prints where the time went. The
//! default build has no array and [`mark`] compiles to nothing: its kernels are unchanged.

/// Blocks whose marks are kept (later blocks are not traced).
pub const TRACE_BLOCKS: usize = 4096;
/// Marks per block: the `RANS_*` and `DENSE_*` slots below.
pub const TRACE_SLOTS: usize = 16;
/// Name of the `u64` array of `TRACE_BLOCKS * TRACE_SLOTS` marks in a trace build's PTX.
pub const TRACE_SYMBOL: &str = "ACEAPEX_TRACE";

/// The rANS stage: the CTA that decodes the block read its chunk (before staging tables).
pub const RANS_START: usize = 0;
/// The rANS stage: the chunk's tables are staged (after the CTA's barrier).
pub const RANS_STAGED: usize = 1;
/// The rANS stage: the block's slices and status are written and published.
pub const RANS_DONE: usize = 2;
/// The dense kernel: a CTA took the block (before waiting for its hand-off word, or for a
/// block parsed before its hand-off, before loading its match streams).
pub const DENSE_TAKE: usize = 3;
/// The dense kernel: the block's hand-off word was seen (after the CTA's barrier). A block
/// parsed before its hand-off (`dense/`, `early_match_streams`) sees it after
/// [`DENSE_FILLED`]: its gaps from this mark to the next slots are negative.
pub const DENSE_READY: usize = 4;
/// The dense kernel: the streams but the literals loaded into shared memory.
pub const DENSE_LOADED: usize = 5;
/// The dense kernel: varints turned into values.
pub const DENSE_VARINTS: usize = 6;
/// The dense kernel: the parse's pass A (varint counts per chunk) done.
pub const DENSE_PASS_A: usize = 7;
/// The dense kernel: the parse's pass B (totals and history maps per chunk) done.
pub const DENSE_PASS_B: usize = 8;
/// The dense kernel: the fill pass done (before the CTA's deferred long commands).
pub const DENSE_FILLED: usize = 9;
/// The dense kernel: parse and pointer fill done (the CTA's deferred long commands too), the
/// literals loaded.
pub const DENSE_LITS: usize = 10;
/// The dense kernel: the block's bytes written (memoised walk done, thread 0's share).
pub const DENSE_END: usize = 11;
/// The dense kernel, a block it decodes from the archive alone (`dense/`,
/// `expand_own_literals`): its exceptions parsed and its codes read (after the CTA's barrier
/// before their expansion; [`DENSE_LITS`] then marks the literals and exceptions stored).
pub const DENSE_CODES: usize = 12;
/// The dense kernel: the parse's deferred long commands filled (after [`DENSE_FILLED`]).
pub const DENSE_DEFERRED: usize = 13;
/// The seek's gather: the CTA of a range's first piece took it (after waiting for the dense
/// kernel's grid); the mark is the range's first block's.
pub const GATHER_START: usize = 14;
/// The seek's gather: the range's status words written and its first piece copied (thread
/// 0's share).
pub const GATHER_END: usize = 15;

/// Names of the slots, in slot order, for reports.
pub const SLOT_NAMES: [&str; TRACE_SLOTS] = [
    "rans_start",
    "rans_staged",
    "rans_done",
    "dense_take",
    "dense_ready",
    "dense_loaded",
    "dense_varints",
    "dense_pass_a",
    "dense_pass_b",
    "dense_filled",
    "dense_lits",
    "dense_end",
    "dense_codes",
    "dense_deferred",
    "gather_start",
    "gather_end",
];

#[cfg(all(target_arch = "nvptx64", feature = "trace"))]
#[no_mangle]
static mut ACEAPEX_TRACE: [u64; TRACE_BLOCKS * TRACE_SLOTS] = [0; TRACE_BLOCKS * TRACE_SLOTS];

/// Stores the GPU's nanosecond timer in mark `slot` of `block` (a trace build; nothing
/// otherwise). Called by one thread per block and slot.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) fn mark(block: u64, slot: usize) {
    #[cfg(feature = "trace")]
    if (block as usize) < TRACE_BLOCKS && slot < TRACE_SLOTS {
        let t = crate::handoff::globaltimer();
        // SAFETY: the index is below TRACE_BLOCKS * TRACE_SLOTS (checked above); marks are
        // plain stores the host reads after the grids complete.
        unsafe {
            core::ptr::write_volatile(
                core::ptr::addr_of_mut!(ACEAPEX_TRACE)
                    .cast::<u64>()
                    .add(block as usize * TRACE_SLOTS + slot),
                t,
            )
        };
    }
    #[cfg(not(feature = "trace"))]
    let _ = (block, slot);
}
