//! The hand-off between the dense pipe's two kernels, the rANS stage (`rans_decode_slices`)
//! and the dense kernel (`decode_blocks_dense`), which on sm_90 and later run at the same
//! time: the host launches the dense kernel with programmatic stream serialization
//! (`gpu::launch::decode_blocks_dense`), so its CTAs start once every CTA of the rANS grid has
//! started (`griddepcontrol.launch_dependents` at the top of the rANS kernel), and each dense
//! CTA waits for its own block's streams instead of for the whole stage. The lane kernel
//! after them is launched the same way and waits for the whole dense grid
//! (`griddepcontrol.wait`), so neither launch's latency follows the kernel before it.
//!
//! The protocol, on the archive's dense queue buffer of [`queue_words`] words:
//! - the host gives each decode an epoch, never 0 and never the previous decode's;
//! - the rANS kernel's CTA 0 zeroes [`QUEUE_TICKET`] and [`QUEUE_FALLBACK`], then publishes the
//!   epoch in [`QUEUE_EPOCH`] (a fence, then a release store); the dense kernel's CTAs wait
//!   for it before their first ticket;
//! - the warp that decodes block `b` stores its slices and status word, fences (every lane),
//!   synchronises the warp and publishes the epoch in word `QUEUE_READY + b`; the dense
//!   kernel's thread 0 waits for that word (acquire loads) before the CTA's barrier, after
//!   which the CTA reads the block's status word and streams. (A block whose match streams
//!   are raw slices and whose word does not hold the epoch yet when its CTA takes it, one
//!   acquire load, is loaded from the archive's data section and parsed first; the wait,
//!   the barrier and the reads of its status word and literals follow the parse:
//!   `dense/`, `early_match_streams`.) The dense CTAs take the blocks
//!   in the order the host gives: the one it expects the stage to finish them in
//!   (`gpu::schedule::dense_block_order`), or that order with the blocks of most command
//!   bytes first (`gpu::schedule::dense_longest_first`, for rANS grids larger than the SMs).
//!
//! Every block's ready word is written by every overlapping decode, so a word never holds the
//! current epoch before its block is done. A wait gives up after [`WAIT_LIMIT_NS`]; the CTA
//! then waits for the whole rANS grid to complete (`griddepcontrol.wait`, after which all of
//! its writes are visible), decodes the block as usual and waits for no word again. So no
//! dense CTA waits for ever and none decodes a block before its streams are written,
//! whatever the scheduler does, and a missing or late word only costs time. (While every
//! rANS CTA is resident, which the launch guarantees, the words come: no rANS warp waits
//! for anything.)
//!
//! Epoch 0 means no hand-off: the kernels launched one after the other (`GpuTuning::overlap`,
//! `GpuArchive::set_overlap`, or a device without programmatic launches), the rANS stage
//! publishes nothing and the dense kernel waits for nothing (its `griddepcontrol.wait` returns
//! at once) and takes the blocks in index order. The dense kernel also runs with epoch 0
//! where the host launches it alone, without a rANS stage (`gpu::schedule::dense_alone`: every
//! block self-contained, a CTA for each, no lane kernel after it): its `griddepcontrol.wait`
//! then waits for the kernel before it on the stream, and no queue word is waited for (its
//! ticket word, not zeroed then, is still incremented, but with a CTA for every block no CTA
//! uses a ticket: `dense/`, `next_block`).
//!
//! Self-contained blocks (`own.rs`) are no part of the protocol: with `leave_self_contained`
//! the rANS stage writes nothing for them, ready word included, and `decode_blocks_dense_sc`
//! waits for none of them.
//!
//! The overlap pays more than waiting for the whole rANS grid (see docs/PERFORMANCE.md), but
//! not by much: the blocks' rANS chains are nearly equal on DNA, so most blocks are published
//! at about the same time and the overlap hides mostly the launch and the first blocks'
//! dense work.

/// Word of the dense queue: the ticket counter the dense CTAs take their next blocks from.
pub const QUEUE_TICKET: usize = 0;
/// Word of the dense queue: blocks the dense kernel left to the lane kernel.
pub const QUEUE_FALLBACK: usize = 1;
/// Word of the dense queue: the epoch of the decode whose rANS stage zeroed words 0 and 1.
pub const QUEUE_EPOCH: usize = 2;
/// First word of the dense queue's per-block ready words (block `b` at `QUEUE_READY + b`).
pub const QUEUE_READY: usize = 3;

/// Words of the dense queue of an archive of `n_blocks` blocks.
pub const fn queue_words(n_blocks: usize) -> usize {
    QUEUE_READY + n_blocks
}

/// How long a dense CTA's thread 0 waits for a hand-off word before the CTA waits for the
/// whole rANS grid instead, in nanoseconds of `%globaltimer`: one second, thousands of times
/// the longest rANS stage, so only a paused or preempted GPU (or a word never written)
/// reaches it.
pub const WAIT_LIMIT_NS: u64 = 1_000_000_000;

#[cfg(target_arch = "nvptx64")]
pub(crate) use gpu::*;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::WAIT_LIMIT_NS;

    /// Lets the grid that the host launched after this one with programmatic stream
    /// serialization start once every CTA of this grid has executed it
    /// (`griddepcontrol.launch_dependents`, sm_90; without such a launch it does nothing).
    /// It orders no memory: the hand-off's words do ([`publish`], [`wait_for`]).
    #[inline(always)]
    pub(crate) fn launch_dependents() {
        // SAFETY: a scheduling hint; touches no memory.
        unsafe {
            core::arch::asm!(
                "griddepcontrol.launch_dependents;",
                options(nostack, preserves_flags)
            )
        };
    }

    /// Waits until every grid this one depends on by a programmatic launch has completed and
    /// its memory operations are visible (`griddepcontrol.wait`; without such a launch it
    /// returns at once).
    #[inline(always)]
    pub(crate) fn wait_prerequisite_grids() {
        // SAFETY: a wait on the launch's prerequisite grids; orders memory as documented.
        unsafe { core::arch::asm!("griddepcontrol.wait;", options(nostack, preserves_flags)) };
    }

    /// A GPU-scope fence (`fence.acq_rel.gpu`): this thread's earlier writes are ordered
    /// before its later ones for every thread of the GPU.
    #[inline(always)]
    pub(crate) fn fence_gpu() {
        // SAFETY: a fence; touches no memory of its own.
        unsafe { core::arch::asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags)) };
    }

    /// Publishes `epoch` in the hand-off word `p` with a GPU-scope release store. (`p` is a
    /// generic address used with `.global`: global memory is mapped at the same addresses in
    /// the generic window, as `dense/`'s `global_word_l2_256` notes.)
    ///
    /// # Safety
    /// `p` is a 4-aligned word of global memory that only publishers write while the grids
    /// run.
    #[inline(always)]
    pub(crate) unsafe fn publish(p: *mut u32, epoch: u32) {
        // SAFETY: the caller's contract; the asm stores the one word.
        unsafe {
            core::arch::asm!(
                "st.release.gpu.global.u32 [{p}], {v};",
                p = in(reg64) p,
                v = in(reg32) epoch,
                options(nostack, preserves_flags)
            )
        };
    }

    /// Whether the hand-off word `p` holds `epoch` now (one GPU-scope acquire load: when true,
    /// the publisher's earlier writes are visible to this thread, as after [`wait_for`]).
    ///
    /// # Safety
    /// `p` is a 4-aligned, readable word of global memory.
    #[inline(always)]
    pub(crate) unsafe fn is_published(p: *const u32, epoch: u32) -> bool {
        let v: u32;
        // SAFETY: the caller's contract; the asm loads the one word.
        unsafe {
            core::arch::asm!(
                "ld.acquire.gpu.global.u32 {v}, [{p}];",
                v = out(reg32) v,
                p = in(reg64) p,
                options(nostack, preserves_flags)
            )
        };
        v == epoch
    }

    /// Waits until the hand-off word `p` holds `epoch` (GPU-scope acquire loads, a short sleep
    /// between them): true when it does, false after [`WAIT_LIMIT_NS`].
    ///
    /// # Safety
    /// `p` is a 4-aligned, readable word of global memory.
    #[inline(always)]
    pub(crate) unsafe fn wait_for(p: *const u32, epoch: u32) -> bool {
        let mut start = 0u64;
        loop {
            // SAFETY: the caller's contract.
            if unsafe { is_published(p, epoch) } {
                return true;
            }
            let now = globaltimer();
            if start == 0 {
                start = now;
            } else if now.wrapping_sub(start) > WAIT_LIMIT_NS {
                return false;
            }
            // SAFETY: a sleep of at most ~0.1 us; touches no memory.
            unsafe { core::arch::asm!("nanosleep.u32 100;", options(nostack, preserves_flags)) };
        }
    }

    /// The GPU's global nanosecond timer (`%globaltimer`).
    #[inline(always)]
    pub(crate) fn globaltimer() -> u64 {
        let t: u64;
        // SAFETY: reads a special register.
        unsafe {
            core::arch::asm!(
                "mov.u64 {t}, %globaltimer;",
                t = out(reg64) t,
                options(nostack, nomem, preserves_flags)
            )
        };
        t
    }
}
