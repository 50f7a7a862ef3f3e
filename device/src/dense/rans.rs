//! The rANS stage of the dense pipe and the wavefront decoder: its entry points
//! (`rans_decode_slices` and its variants), their body (`rans_stage`) and the per-slice
//! decode of a warp (`decode_slices`, raw slice copies).

#[allow(unused_imports)]
use super::*;

/// Defines an entry point of the rANS stage, `rans_stage::<CTX_OK, PACK_OK, LATE, COPY16,
/// TWO_BIT_OK>`, with the one parameter list of all six (`crate::with_rans_params!`, which
/// calls it; the host's [`crate::params::RansParams`]).
macro_rules! rans_entry {
    ($(#[$doc:meta])* $name:ident, $ctx:literal, $pack:literal, $late:literal, $copy16:literal, $two:literal ;
     $($(#[$fdoc:meta])* $f:ident : $t:ty),* $(,)?) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($f: $t),*) {
            // SAFETY: forwarded (the host's contract of every rANS entry point).
            unsafe { rans_stage::<$ctx, $pack, $late, $copy16, $two>($($f),*) }
        }
    };
}

crate::with_rans_params!(
    rans_entry;
    /// The rANS stage of the dense pipe and the wavefront decoder: in rounds, CTA `c` of the
    /// grid takes the chunks `chunk_order[c], chunk_order[c + grid], ...` (`n_chunks` entries:
    /// every chunk once, in an order the host chooses, longest chain first in serpentine
    /// rounds, `gpu::schedule::rans_chunk_order`, and entries past the last block, which it
    /// skips). An entry is a chunk's first block `r0`; the chunk is the blocks from `r0` on,
    /// one per warp (with `halves` 2, below: a pair of warps per block), that lie in `r0`'s
    /// table group: warp `w` decodes block `r0 + w / halves` if it is in that group (and
    /// `w / halves` is below the chunk's `wpc / halves` blocks), the block's slices
    /// into `decoded` at `dec_offsets[STREAM_COUNT * block + stream]` (the host cuts every
    /// group into chunks, `gpu::schedule::rans_chunks`). At the start of a round the CTA copies
    /// the decode tables of the chunk's table group into dynamic shared memory, one per
    /// stream (`rans::KERNEL_SMEM_BYTES`), by asynchronous copies issued all before the first
    /// wait ([`stage16`]), and its warps read them there: in L1 the tables of a few groups
    /// per SM miss often enough that most steps wait on L2.
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
    /// only with that kernel after this one, `gpu::schedule::leaves_self_contained`).
    /// (Two blocks per warp make fewer, longer chains: measured slower, see
    /// docs/PERFORMANCE.md.)
    ///
    /// Three entry points share this body, one per kind of table the archive has, so that each
    /// holds only the step variants it needs (registers are allocated per kernel, and one
    /// kernel with every variant spills at the 64 that two 16-warp CTAs per SM allow): `rans_decode_slices` for single
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
crate::with_rans_params!(
    rans_entry;
    /// [`rans_decode_slices`] with context pairs (FORMAT.md §5.4).
    rans_decode_slices_ctx,
    true,
    false,
    false,
    false,
    true
);
crate::with_rans_params!(
    rans_entry;
    /// [`rans_decode_slices`] with packed literal tables (FORMAT.md §5.6) and context pairs.
    rans_decode_slices_pack,
    true,
    true,
    false,
    false,
    true
);
crate::with_rans_params!(
    rans_entry;
    /// [`rans_decode_slices_pack`] for CTAs of at most `rans::KERNEL_NARROW_WARPS` warps: the
    /// same body under launch bounds (`build.rs`) that leave it the registers its packed step
    /// needs, where the 16-warp bounds of the other entry points make it spill. Its packed
    /// step issues the renormalisation word's load before the symbol's stores (`LATE`,
    /// [`decode_packed`]): on these grids, at most two CTAs per SM, the step's latency is the
    /// stage's time, while the 16-warp kernel, whose time is its throughput, would spill
    /// more so.
    rans_decode_slices_pack_narrow,
    true,
    true,
    true,
    false,
    false
);
crate::with_rans_params!(
    rans_entry;
    /// [`rans_decode_slices_pack_narrow`] for archives with two-bit literal slices (FORMAT.md
    /// §5.7; the host's choice, `gpu::launch::rans_decode_slices`, for every such archive
    /// whose grid the narrow bounds hold): the same bounds, but it copies raw slices in
    /// 16-byte words ([`copy_raw_slice`]) and expands two-bit slices with the whole warp
    /// ([`expand_two_bit`]). The narrow entry point has no two-bit code at all (a two-bit
    /// slice fails it closed, `SliceMode`): in it, that code, even in the one-lane form of
    /// the other entry points, raises its registers and slows its rANS chain (measured: see
    /// docs/PERFORMANCE.md). The others expand two-bit slices with one lane for the exceptions
    /// ([`expand_two_bit_lean`]; their 64 registers spilled with the warp's form).
    rans_decode_slices_two_bit,
    true,
    true,
    true,
    true,
    true
);
crate::with_rans_params!(
    rans_entry;
    /// [`rans_decode_slices_pack_narrow`] for grids of at most one CTA per SM, CTAs of up to
    /// `rans::KERNEL_SOLO_WARPS` warps (`gpu::schedule::rans_solo_blocks`): its launch bounds
    /// (`build.rs`) leave it up to 80 registers a thread, its packed step the word load
    /// first (`LATE`): faster than the usual grid of 16-warp CTAs, two on some SMs, where
    /// such a grid would leave the stage waiting for the doubled SMs (see
    /// docs/PERFORMANCE.md).
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
pub(super) unsafe fn rans_stage<
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
        // with `TWO_BIT_OK` and `COPY16`: the others' code and registers stay without it).
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
pub(super) unsafe fn pair_slots(smem: *mut u32, staged_tables: u32, stage_expand: u32) -> *mut u64 {
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
pub(super) unsafe fn join_halves(slot: *mut u64, st: u64, half: u32, lane: u32, pair: u32) -> u64 {
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
pub(super) fn staged_slot(k: usize) -> Option<usize> {
    match k {
        STREAM_LITERALS => Some(STREAM_COUNT),
        STREAM_COMMANDS => Some(STREAM_COUNT + 1),
        _ => None,
    }
}

const _: () = assert!(STREAM_COUNT + 2 == crate::rans::KERNEL_STAGED_TABLES);

/// True for the table-index tag of a context pair (`ctx_bit + 1`, 1-8; FORMAT.md §5.4).
#[inline(always)]
pub(super) fn is_context(tag: u32) -> bool {
    tag != 0 && tag <= 8
}

/// What the rANS stage staged in shared memory for the block's group (a CTA's chunk lies in
/// one group: `gpu::schedule::rans_chunks`).
#[derive(Clone, Copy)]
pub(super) struct Staged {
    /// The first table of each stream, slot `k` for stream `k`.
    pub(super) tables: *const u32,
    /// The context pairs' second tables of the literal and command streams too
    /// ([`staged_slot`]).
    pub(super) pairs: bool,
    /// A packed literal table's expansion slots 0..256 (FORMAT.md §5.6), or null (global).
    pub(super) expand: *const u32,
}

/// Byte `i` of a packed per-slice array (a block's five slices in a `u64`: lane counts or
/// status codes, both < 256), one register pair instead of an array held in five.
#[inline(always)]
pub(super) fn byte_get(v: u64, i: usize) -> u32 {
    ((v >> (8 * i)) & 0xFF) as u32
}

/// `v` with byte `i` set to `x` (see [`byte_get`]).
#[inline(always)]
pub(super) fn byte_set(v: u64, i: usize, x: u32) -> u64 {
    (v & !(0xFF << (8 * i))) | (((x & 0xFF) as u64) << (8 * i))
}

/// The warp lanes `base .. base + lanes` as a mask (`lanes <= 32 - base`; 0 lanes: empty).
#[inline(always)]
pub(super) fn lane_mask(lanes: u32, base: u32) -> u32 {
    let ones = if lanes >= 32 {
        u32::MAX
    } else {
        (1u32 << lanes) - 1
    };
    ones << base
}

const _: () = assert!(STREAM_COUNT <= 8);

/// The archive buffers the rANS stage reads and writes (kernel arguments).
pub(super) struct Sources {
    pub(super) data: *const u8,
    pub(super) data_len: u64,
    pub(super) entries: *const BlockEntry,
    pub(super) offsets: *const u64,
    pub(super) dec_offsets: *const u64,
    pub(super) tables: *const DecodeTable,
    pub(super) n_tables: u32,
    pub(super) table_index: *const u32,
    pub(super) group_blocks: u32,
    pub(super) decoded: *mut u8,
    pub(super) dec_len: u64,
}

/// Where one slice lies and what it needs, checked before any lane reads it.
#[derive(Clone, Copy)]
pub(super) struct SliceInfo {
    /// Offset in the data section.
    pub(super) off: u64,
    /// Where its decoded bytes go: offset in the decoded scratch (offsets, not pointers, so
    /// the kernel's loads and stores keep the global address space of its arguments).
    pub(super) dst_off: u64,
    /// Index of its group's table for its stream (rANS slices; `u32::MAX`: none).
    pub(super) table: u32,
    /// The table-index tag (`crate::kernels::stream_table_index`): `ctx_bit + 1` when the
    /// group's tables for the stream are a context pair (`table`, `table + 1`),
    /// [`TABLE_PACKED`] for a packed literal table (its expansion table at `table + 1`), else 0.
    pub(super) ctx: u32,
    /// Decoded length.
    pub(super) n: u32,
    /// Stored length.
    pub(super) stored: u32,
    /// rANS lanes (0 = raw, two-bit, invalid or absent).
    pub(super) lanes: u32,
    /// A two-bit literal slice (FORMAT.md §5.7), whose checks are in [`expand_two_bit`].
    pub(super) two_bit: bool,
    /// Status of the checks that need no lane state.
    pub(super) pre: Status,
}

impl SliceInfo {
    pub(super) const EMPTY: SliceInfo = SliceInfo {
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
pub(super) fn slice_info(src: &Sources, b: u64, k: usize) -> SliceInfo {
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
    } else if lanes == LANES_TWO_BIT_RUNS as u32 && k == STREAM_LITERALS {
        // FORMAT.md §5.8: the dense kernel expands such a slice of a self-contained block
        // (own.rs), which this stage leaves; any other goes to the lane kernel
        pre = Status::Fallback;
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
pub(super) fn slice_head(lanes: u32) -> u64 {
    4 * lanes as u64 + if lanes > WARP_LANES as u32 { 4 } else { 0 }
}

/// Decodes the slices of block `b` with the whole warp (`CTX_OK`, `PACK_OK`: the table kinds of
/// the kernel, [`rans_decode_slices`]; `LATE` as [`decode_packed`]'s for packed rounds): raw
/// slices copied, rANS
/// slices packed into rounds of at most 32 lanes (largest first, first fit). `staged` is the
/// block's group's decode tables in shared memory, one per stream.
/// Returns each slice's status code, packed ([`byte_get`]).
#[inline(always)]
pub(super) fn decode_slices<
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
/// 128 memory latencies rather than 512, which would make such a block the longest chain of
/// the rANS stage. Every entry point but `rans_decode_slices_two_bit` takes this form:
/// [`copy_raw_slice`] makes the ones with 64 registers a thread spill, and would change the
/// codegen of the narrow packed one, which the smaller archives with wide slices run.
#[inline(always)]
pub(super) fn copy_raw_slice_bytes(src: &Sources, info: &SliceInfo, lane: u32) {
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
/// raw slice costs 8 memory latencies, where byte loads, four in flight per lane
/// ([`copy_raw_slice_bytes`]), take 128, as long as a small genome's rANS chains. The slot's
/// last word may take up to 15 bytes past the
/// slice (the next slice's, or the data section's zero padding), which fall in the slot's
/// padding (every slot is padded to a multiple of 16 bytes).
#[inline(always)]
pub(super) fn copy_raw_slice(src: &Sources, info: &SliceInfo, lane: u32) {
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
