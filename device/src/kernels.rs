//! GPU kernels (nvptx64 only). The host names them in `host/gpu/kernels.rs`; every launch
//! goes through `host/gpu/launch.rs`.
//!
//! Conventions: each kernel bounds-checks what it reads and writes against lengths it is
//! given, and reports a broken rule by raising a status word (never by reading or writing out
//! of bounds, never by looping on untrusted counts).

use crate::format::{CopyToken, LiteralRun};
use crate::status::Status;
use core::arch::nvptx::*;
use core::sync::atomic::{AtomicU32, Ordering};

extern "C" {
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

pub(crate) const WARP: u32 = 32;
const FULL_MASK: u32 = 0xFFFF_FFFF;

#[inline(always)]
pub(crate) fn tid() -> u32 {
    // SAFETY: reading special registers has no preconditions.
    unsafe { _thread_idx_x() as u32 }
}

#[inline(always)]
pub(crate) fn global_thread() -> (u64, u64) {
    // SAFETY: reading special registers has no preconditions.
    unsafe {
        let bd = _block_dim_x() as u64;
        (
            _block_idx_x() as u64 * bd + _thread_idx_x() as u64,
            _grid_dim_x() as u64 * bd,
        )
    }
}

#[inline(always)]
fn syncwarp() {
    // SAFETY: every lane of the warp reaches this call in the kernels below (uniform control flow).
    unsafe { bar_warp_sync(FULL_MASK) }
}

/// Raises `status[0]` to at least `s` (the host reads the largest code seen).
#[inline(always)]
pub(crate) unsafe fn report(status: *mut u32, s: Status) {
    // SAFETY: the host passes a valid, 4-byte aligned status word.
    unsafe { AtomicU32::from_ptr(status).fetch_max(s as u32, Ordering::Relaxed) };
}

/// Checks a copy token against the output bounds: `1 <= dist <= dst`, `dst + len <= out_len`.
#[inline(always)]
pub(crate) fn token_ok(t: &CopyToken, out_len: u64) -> bool {
    t.dist >= 1 && t.dist as u64 <= t.dst && t.dst <= out_len && t.len as u64 <= out_len - t.dst
}

/// Smoke test of the toolchain: adds one to each of `n` words.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn smoke_add_one(p: *mut u32, n: u32) {
    let (i, _) = global_thread();
    if i < n as u64 {
        // SAFETY: i < n and the host passes a buffer of n words.
        unsafe { *p.add(i as usize) += 1 };
    }
}

/// Lane `lane` (0..32) of a warp writes bytes `lane, lane + 32, ...` of match `t`, reading
/// only its first period: `out[dst + k] = out[src + k % dist]`. The source bytes must be
/// final (an earlier level), so lanes need no ordering among themselves.
///
/// # Safety
/// `token_ok(t, out_len)` holds and `out` points to `out_len` writable bytes.
#[inline(always)]
pub(crate) unsafe fn copy_token_lanes(out: *mut u8, t: &CopyToken, lane: u64) {
    let src = t.dst - t.dist as u64;
    let dist = t.dist as u64;
    let mut k = lane;
    if dist >= t.len as u64 {
        while k < t.len as u64 {
            // SAFETY: token_ok: src + k < dst + len <= out_len.
            unsafe { *out.add((t.dst + k) as usize) = *out.add((src + k) as usize) };
            k += WARP as u64;
        }
    } else {
        while k < t.len as u64 {
            // SAFETY: src + k % dist < dst <= out_len, dst + k < out_len.
            unsafe { *out.add((t.dst + k) as usize) = *out.add((src + k % dist) as usize) };
            k += WARP as u64;
        }
    }
}

/// Match copy, one warp per match, period-aware fill.
///
/// `tokens[0..n]` must be independent (no token reads bytes another token of this launch
/// writes): one dependency level. Lane `l` writes bytes `l, l+32, ...` of the match with
/// `out[dst + k] = out[src + k % dist]`, which reads only the first period, so
/// self-overlapping matches need no ordering between lanes.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn match_copy_warp(
    out: *mut u8,
    out_len: u64,
    tokens: *const CopyToken,
    n: u32,
    status: *mut u32,
) {
    let (gt, stride) = global_thread();
    let lane = (tid() % WARP) as u64;
    let mut w = gt / WARP as u64;
    let warps = stride / WARP as u64;
    while w < n as u64 {
        // SAFETY: w < n, the host passes n tokens.
        let t = unsafe { *tokens.add(w as usize) };
        if token_ok(&t, out_len) {
            // SAFETY: token_ok(t, out_len) and `out` holds out_len bytes.
            unsafe { copy_token_lanes(out, &t, lane) };
        } else if lane == 0 {
            // SAFETY: status is the host's status word.
            unsafe { report(status, Status::BadDistance) };
        }
        w += warps;
    }
}

/// Match copy, one warp per match, without the period-aware fill: the warp copies in rounds
/// of `min(dist, 32)` bytes with a warp barrier after each, the byte-by-byte semantics of a
/// forward copy. The baseline the period-aware fill is measured against.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn match_copy_warp_rounds(
    out: *mut u8,
    out_len: u64,
    tokens: *const CopyToken,
    n: u32,
    status: *mut u32,
) {
    let (gt, stride) = global_thread();
    let lane = (tid() % WARP) as u64;
    let mut w = gt / WARP as u64;
    let warps = stride / WARP as u64;
    while w < n as u64 {
        // SAFETY: w < n, the host passes n tokens.
        let t = unsafe { *tokens.add(w as usize) };
        if token_ok(&t, out_len) {
            let src = t.dst - t.dist as u64;
            let round = core::cmp::min(t.dist as u64, WARP as u64);
            let mut base = 0u64;
            while base < t.len as u64 {
                let k = base + lane;
                if lane < round && k < t.len as u64 {
                    // SAFETY: token_ok bounds; k < len.
                    unsafe { *out.add((t.dst + k) as usize) = *out.add((src + k) as usize) };
                }
                syncwarp();
                base += round;
            }
        } else if lane == 0 {
            // SAFETY: status is the host's status word.
            unsafe { report(status, Status::BadDistance) };
        }
        w += warps;
    }
}

/// Match copy, one thread per match, forward byte copy (byte-by-byte semantics).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn match_copy_thread(
    out: *mut u8,
    out_len: u64,
    tokens: *const CopyToken,
    n: u32,
    status: *mut u32,
) {
    let (mut i, stride) = global_thread();
    while i < n as u64 {
        // SAFETY: i < n.
        let t = unsafe { *tokens.add(i as usize) };
        if token_ok(&t, out_len) {
            let src = t.dst - t.dist as u64;
            for k in 0..t.len as u64 {
                // SAFETY: token_ok bounds.
                unsafe { *out.add((t.dst + k) as usize) = *out.add((src + k) as usize) };
            }
        } else {
            // SAFETY: status is the host's status word.
            unsafe { report(status, Status::BadDistance) };
        }
        i += stride;
    }
}

/// Literal scatter, one warp per run: `out[dst..dst+len] = lits[src..src+len]`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn literal_scatter(
    out: *mut u8,
    out_len: u64,
    lits: *const u8,
    lits_len: u64,
    runs: *const LiteralRun,
    n: u32,
    status: *mut u32,
) {
    let (gt, stride) = global_thread();
    let lane = (tid() % WARP) as u64;
    let mut w = gt / WARP as u64;
    let warps = stride / WARP as u64;
    while w < n as u64 {
        // SAFETY: w < n.
        let r = unsafe { *runs.add(w as usize) };
        let ok = r.dst <= out_len
            && r.len as u64 <= out_len - r.dst
            && (r.src as u64 + r.len as u64) <= lits_len;
        if ok {
            let mut k = lane;
            while k < r.len as u64 {
                // SAFETY: ok bounds both buffers.
                unsafe { *out.add((r.dst + k) as usize) = *lits.add((r.src as u64 + k) as usize) };
                k += WARP as u64;
            }
        } else if lane == 0 {
            // SAFETY: status is the host's status word.
            unsafe { report(status, Status::OutputOverrun) };
        }
        w += warps;
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: trap aborts the kernel; the host sees a launch error, never wrong output.
    unsafe { trap() }
}

use crate::format::{NO_TABLE, TABLE_CTX_SHIFT, TABLE_PACKED};

/// Stream `k`'s decode table(s) for block `b`, from
/// `table_index[(b / group_blocks) * STREAM_COUNT + k]` ([`table_index_entry`]): the first
/// table's index and its tag: `ctx_bit + 1` for a context pair, [`TABLE_PACKED`] for a packed
/// literal table and its expansion table (FORMAT.md §5.6), 0 for a single table; or `None` when
/// the group has no table for the stream ([`NO_TABLE`]) or the entry is not a valid index
/// below `n_tables` (FORMAT.md §5.1).
///
/// # Safety
/// `table_index` holds an entry for `b`'s group (group_count * STREAM_COUNT words).
#[inline(always)]
pub(crate) unsafe fn stream_table_index(
    table_index: *const u32,
    n_tables: u32,
    group_blocks: u32,
    b: u64,
    k: usize,
) -> Option<(u32, u32)> {
    let g = (b / group_blocks as u64) as usize * crate::format::STREAM_COUNT + k;
    // SAFETY: the caller passes group_count * STREAM_COUNT indices and b's group is below group_count.
    let v = unsafe { *table_index.add(g) };
    let ti = v & ((1 << TABLE_CTX_SHIFT) - 1);
    let tag = v >> TABLE_CTX_SHIFT;
    let count = if tag == 0 { 1 } else { 2 };
    (v != NO_TABLE && (tag <= 8 || tag == TABLE_PACKED) && ti < n_tables && count <= n_tables - ti)
        .then_some((ti, tag))
}

/// The decode table(s) of stream `k` of block `b` ([`stream_table_index`] into `tables`).
///
/// # Safety
/// `table_index` holds an entry for `b`'s group (group_count * STREAM_COUNT words) and `tables` holds
/// `n_tables` tables.
#[inline(always)]
pub(crate) unsafe fn stream_table<'a>(
    tables: *const crate::format::DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    b: u64,
    k: usize,
) -> Option<crate::rans::SliceTables<'a>> {
    // SAFETY: forwarded from the caller.
    let (ti, tag) = unsafe { stream_table_index(table_index, n_tables, group_blocks, b, k) }?;
    // SAFETY: ti + (tag != 0) < n_tables (stream_table_index).
    let at = |i: u32| unsafe { &*tables.add(i as usize) };
    Some(match tag {
        0 => crate::rans::SliceTables::single(at(ti)),
        TABLE_PACKED => crate::rans::SliceTables {
            pack: Some(at(ti + 1)),
            ..crate::rans::SliceTables::single(at(ti))
        },
        ctx => crate::rans::SliceTables {
            // SAFETY: ti + 2 <= n_tables (stream_table_index).
            tables: unsafe { core::slice::from_raw_parts(tables.add(ti as usize), 2) },
            ctx_bit: ctx - 1,
            pack: None,
        },
    })
}

/// Builds a slice from a device pointer after checking `off + len <= total`.
#[inline(always)]
pub(crate) unsafe fn checked_slice<'a>(
    base: *const u8,
    total: u64,
    off: u64,
    len: u64,
) -> Option<&'a [u8]> {
    if off > total || len > total - off {
        return None;
    }
    // SAFETY: [off, off+len) lies inside the buffer of `total` bytes at `base`.
    Some(unsafe { core::slice::from_raw_parts(base.add(off as usize), len as usize) })
}

macro_rules! lane_entry {
    ($(#[$fdoc0:meta])* ; $($(#[$fdoc:meta])* $f:ident : $t:ty),* $(,)?) => {
        /// The lane-per-block decoder's entry point (see [`lane_blocks`]; parameters:
        /// `crate::with_lane_params!`, the host's [`crate::params::LaneParams`]).
        ///
        /// # Safety
        /// [`lane_blocks`]'s contract.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn decode_blocks_lane($($f: $t),*) {
            // SAFETY: forwarded (the host's contract).
            unsafe { lane_blocks($($f),*) }
        }
    };
}
crate::with_lane_params!(lane_entry;);

/// Lane-per-block decoder: the first lane of each warp decodes whole blocks with the shared
/// sequential cores (`rans::decode_slice`, `lz::decode_block`), independent blocks only.
///
/// Inputs: the data section (`data`, `data_len`), `n_blocks` block entries and their slice
/// offsets, `tables` (`DecodeTable`s) with `table_index[group * STREAM_COUNT + stream]`
/// naming the table of each group's stream ([`NO_TABLE`] if none), per-warp scratch of
/// `STREAM_COUNT * (block_size + 1)` bytes, and the output of `out_len` bytes. Writes one
/// status word per block. With `only_fallback` set, decodes only blocks whose status word
/// is `Status::Fallback` (left by the dense kernel), and returns at once when `fallbacks`
/// (the dense kernel's count of them) is 0. `window` and `match_base` are the header's
/// (FORMAT.md §2); with `line_layouts`, a block's command stream may begin with a line
/// layout (§4.6).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn lane_blocks(
    data: *const u8,
    data_len: u64,
    entries: *const crate::format::BlockEntry,
    offsets: *const u64,
    n_blocks: u32,
    tables: *const crate::format::DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    block_size: u32,
    window: u32,
    match_base: u32,
    scratch: *mut u8,
    out: *mut u8,
    out_len: u64,
    status: *mut u32,
    only_fallback: u32,
    fallbacks: *const u32,
    line_layouts: u32,
) {
    use crate::format::*;
    // after the dense kernel, launched programmatically: its grid complete and its writes
    // (the count, statuses, output) visible first (returns at once after a plain launch)
    crate::handoff::wait_prerequisite_grids();
    // SAFETY: the host passes one readable word (the dense queue's count).
    if only_fallback != 0 && unsafe { *fallbacks } == 0 {
        return;
    }
    let (gt, stride) = global_thread();
    if gt % WARP as u64 != 0 {
        return;
    }
    let warp = gt / WARP as u64;
    let warps = stride / WARP as u64;
    let stream_cap = block_size as usize + 1;
    // SAFETY: the host allocates `warps * STREAM_COUNT * (block_size + 1)` scratch bytes.
    let my_scratch = unsafe { scratch.add(warp as usize * STREAM_COUNT * stream_cap) };
    let mut b = warp;
    while b < n_blocks as u64 {
        // SAFETY: one status word per block.
        if only_fallback != 0 && unsafe { *status.add(b as usize) } != Status::Fallback as u32 {
            b += warps;
            continue;
        }
        // SAFETY: b < n_blocks entries and offsets.
        let e = unsafe { &*entries.add(b as usize) };
        let off = unsafe { *offsets.add(b as usize) };
        let st = decode_one_lane(
            data,
            data_len,
            e,
            off,
            b,
            tables,
            n_tables,
            table_index,
            group_blocks,
            block_size,
            window,
            match_base,
            my_scratch,
            out,
            out_len,
            line_layouts != 0,
        );
        // SAFETY: one status word per block.
        unsafe { *status.add(b as usize) = st as u32 };
        b += warps;
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn decode_one_lane(
    data: *const u8,
    data_len: u64,
    e: &crate::format::BlockEntry,
    off: u64,
    b: u64,
    tables: *const crate::format::DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    block_size: u32,
    window: u32,
    match_base: u32,
    scratch: *mut u8,
    out: *mut u8,
    out_len: u64,
    line_layouts: bool,
) -> Status {
    use crate::format::*;
    let stream_cap = block_size as usize + 1;
    let start = b * block_size as u64;
    if start >= out_len || e.lowest_source_block as u64 != b {
        return Status::BadDistance;
    }
    let end = core::cmp::min(start + block_size as u64, out_len);
    let mut pos = off;
    let mut bufs: [&[u8]; STREAM_COUNT] = [&[]; STREAM_COUNT];
    for k in 0..STREAM_COUNT {
        let stored = e.stored_len[k] as u64;
        // SAFETY: checked_slice bounds the range by data_len.
        let Some(src) = (unsafe { checked_slice(data, data_len, pos, stored) }) else {
            return Status::SliceMode;
        };
        pos += stored;
        let n = e.decoded_len[k] as usize;
        if n > stream_cap {
            return Status::SliceMode;
        }
        // SAFETY: scratch holds STREAM_COUNT areas of stream_cap bytes for this warp.
        let dst = unsafe { core::slice::from_raw_parts_mut(scratch.add(k * stream_cap), n) };
        if e.lanes[k] == LANES_RAW {
            if src.len() != n {
                return Status::SliceMode;
            }
            dst.copy_from_slice(src);
        } else if e.lanes[k] == LANES_TWO_BIT && k == STREAM_LITERALS {
            // FORMAT.md §5.7
            if let Err(s) = crate::two_bit::decode(src, dst) {
                return s;
            }
        } else if e.lanes[k] == LANES_TWO_BIT_RUNS && k == STREAM_LITERALS {
            // FORMAT.md §5.8
            if let Err(s) = crate::two_bit::decode_runs(src, dst) {
                return s;
            }
        } else {
            // SAFETY: the host passes group_count * STREAM_COUNT indices and n_tables tables.
            let Some(t) =
                (unsafe { stream_table(tables, n_tables, table_index, group_blocks, b, k) })
            else {
                return Status::SliceMode;
            };
            if let Err(s) = crate::rans::decode_slice(src, e.lanes[k] as usize, t, dst) {
                return s;
            }
        }
        bufs[k] = dst;
    }
    let streams = crate::lz::BlockStreams::from_slices(bufs);
    // SAFETY: [start, end) lies inside the output of out_len bytes; only this lane writes it.
    let block_out =
        unsafe { core::slice::from_raw_parts_mut(out.add(start as usize), (end - start) as usize) };
    let frame = crate::lz::BlockFrame {
        dst_start: 0,
        dst_end: (end - start) as usize,
        src_floor: 0,
        window,
        match_base,
    };
    // (a line layout's kept bytes decoded into the block's end, its line ends then put back
    // in place: FORMAT.md §4.6)
    match crate::lines::decode_block(streams, block_out, &frame, line_layouts) {
        Ok(()) => Status::Ok,
        Err(s) => s,
    }
}
