//! The dense full-pipe kernel: one CTA of 4 warps decodes one independent block at a time,
//! entirely in shared memory (layout in `dense_layout.rs`).
//!
//! 1. rANS: warp `k` decodes stream `k` (literals, lengths, offsets, commands) with one lane
//!    per interleaved rANS lane; renormalisation words are handed out in lane order by a
//!    ballot and a population count. The length and offset warps then turn their varint
//!    bytes into values in parallel (continuation bits -> ballot -> index of each varint).
//! 2. Parse (warp 0), 32 commands per step: each lane classifies its command; prefix sums
//!    over the lanes give every command's output position, literal position and varint
//!    indices; the repeat history is an exclusive scan of per-command slot maps (each slot
//!    of a map is a constant distance or a copy of an input slot; maps compose
//!    associatively). Each lane then writes one 16-bit pointer per output byte of its
//!    command: a literal index (top bit set) or the source position, period-aware for
//!    self-overlapping matches (`src + k % dist`), so no byte waits for another.
//! 3. Resolve: pointer jumping over the block (`p[i] = p[p[i]]` until every pointer names a
//!    literal; chains halve each round), then the CTA gathers literals and writes the block
//!    with 4-byte coalesced stores.
//!
//! Blocks larger than `DENSE_MAX_BLOCK` or whose streams exceed the region caps get status
//! `Fallback`; the host decodes those with the lane-per-block kernel.

use crate::dense_layout::*;
use crate::format::*;
use crate::status::Status;
use core::arch::nvptx::*;

extern "C" {
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up_i32(mask: u32, val: i32, delta: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx_i32(mask: u32, val: i32, lane: u32, c: u32) -> i32;
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

/// Block-level context shared by the stages.
struct Smem {
    base: *mut u8,
}

impl Smem {
    #[inline(always)]
    fn lit(&self) -> *mut u8 {
        // SAFETY: offsets come from dense_layout and lie inside SMEM_BYTES.
        unsafe { self.base.add(LIT_OFF) }
    }
    #[inline(always)]
    fn cmd(&self) -> *mut u8 {
        unsafe { self.base.add(CMD_OFF) }
    }
    #[inline(always)]
    fn lenv(&self) -> *mut u32 {
        unsafe { self.base.add(LENV_OFF) as *mut u32 }
    }
    #[inline(always)]
    fn offv(&self) -> *mut u32 {
        unsafe { self.base.add(OFFV_OFF) as *mut u32 }
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
    #[inline(always)]
    fn ctrl(&self, i: usize) -> *mut u32 {
        unsafe { (self.base.add(CTRL_OFF) as *mut u32).add(i) }
    }
}

// control words
const C_STATUS: usize = 0;
const C_NLENV: usize = 1;
const C_NOFFV: usize = 2;
const C_FLAG: usize = 3;

#[inline(always)]
fn set_status(s: &Smem, st: Status) {
    // SAFETY: a plain store of a non-zero code; concurrent writers all store non-zero codes
    // and any one of them is a correct report.
    unsafe { *s.ctrl(C_STATUS) = st as u32 };
}

/// Dense full-pipe decode of independent blocks, after `rans_decode_slices` (see module
/// docs): `decoded` holds every slice's decoded bytes at `dec_offsets[4 * block + stream]`;
/// `stages` is `STAGES_ALL` to decode, fewer bits for timing. One status word per block;
/// a block already marked bad by the rANS kernel keeps its status.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn decode_blocks_dense(
    decoded: *const u8,
    dec_len: u64,
    dec_offsets: *const u64,
    entries: *const BlockEntry,
    n_blocks: u32,
    block_size: u32,
    window: u32,
    out: *mut u8,
    out_len: u64,
    status: *mut u32,
    stages: u32,
) {
    let s = Smem {
        base: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>() as *mut u8,
    };
    // SAFETY: special registers.
    let (tid, cta, ncta) = unsafe { (_thread_idx_x(), _block_idx_x(), _grid_dim_x()) };
    let warp = tid / 32;
    let lane = tid % 32;
    let mut b = cta;
    while b < n_blocks {
        if tid == 0 {
            // SAFETY: control words lie in shared memory.
            unsafe {
                *s.ctrl(C_STATUS) = 0;
                *s.ctrl(C_NLENV) = 0;
                *s.ctrl(C_NOFFV) = 0;
            }
        }
        sync();
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
            && e.decoded_len[STREAM_OFFSETS] as usize <= OFFB_CAP;
        // SAFETY: one status word per block, written by the rANS kernel before this launch.
        let prior = unsafe { *status.add(b as usize) };
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
            }
            b += ncta;
            sync();
            continue;
        }
        // ---- stage 1: the whole CTA loads the block's decoded streams (written by
        // `rans_decode_slices` at 16-byte aligned offsets, padded to 16 bytes) with 16-byte
        // loads and stores; then the length and offset warps turn varints into values
        for k in 0..STREAM_COUNT {
            // An integer offset, not a pointer per arm: LLVM turns a match over shared-memory
            // pointers into a .global table of shared addresses, which ptxas rejects.
            let region = match k {
                STREAM_LITERALS => LIT_OFF,
                STREAM_LENGTHS => PTR_OFF,
                STREAM_OFFSETS => PTR_OFF + LENB_CAP,
                _ => CMD_OFF,
            };
            let n16 = (e.decoded_len[k] as u64).div_ceil(16);
            // SAFETY: the host passes 4 offsets per block.
            let soff = unsafe { *dec_offsets.add(b as usize * STREAM_COUNT + k) };
            if soff % 16 != 0 || soff > dec_len || n16 * 16 > dec_len - soff {
                if tid == 0 {
                    set_status(&s, Status::SliceMode);
                }
                continue;
            }
            // SAFETY: region is a 16-aligned layout offset whose cap is >= round16(n) (fits
            // check); [soff, soff + 16 * n16) lies inside the decoded scratch, 16-aligned.
            let dst = unsafe { s.base.add(region) } as *mut u128;
            let src = unsafe { decoded.add(soff as usize) } as *const u128;
            let mut q = tid as u64;
            while q < n16 {
                unsafe { *dst.add(q as usize) = *src.add(q as usize) };
                q += THREADS as u64;
            }
        }
        sync();
        let k = warp as usize;
        if k == STREAM_LENGTHS || k == STREAM_OFFSETS {
            let region = if k == STREAM_LENGTHS {
                PTR_OFF
            } else {
                PTR_OFF + LENB_CAP
            };
            // SAFETY: a layout offset inside SMEM_BYTES.
            let bytes = unsafe { s.base.add(region) };
            let (vals, cap, ctl) = if k == STREAM_LENGTHS {
                (s.lenv(), LENV_CAP, C_NLENV)
            } else {
                (s.offv(), OFFV_CAP, C_NOFFV)
            };
            let st = varints_to_values(
                bytes,
                e.decoded_len[k] as usize,
                vals,
                cap,
                lane,
                s.ctrl(ctl),
            );
            if st != Status::Ok && lane == 0 {
                set_status(&s, st);
            }
        }
        sync();
        // SAFETY: shared control word, written before the barrier.
        let mut st = unsafe { *s.ctrl(C_STATUS) };
        if st == 0 && stages & 1 != 0 {
            // ---- stage 2: parse and pointer fill (warp 0)
            if warp == 0 {
                let r = parse_fill(&s, &e, block_len, window, lane);
                if r != Status::Ok && lane == 0 {
                    set_status(&s, r);
                }
            }
            sync();
            st = unsafe { *s.ctrl(C_STATUS) };
            if st == 0 && stages & 2 != 0 {
                // ---- stage 3: resolve pointers and write the block
                let r = resolve(&s, block_len, tid);
                if r != Status::Ok {
                    if tid == 0 {
                        set_status(&s, r);
                    }
                } else {
                    write_out(&s, out, start, block_len, tid);
                }
                sync();
                st = unsafe { *s.ctrl(C_STATUS) };
            }
        }
        if tid == 0 {
            // SAFETY: one status word per block.
            unsafe { *status.add(b as usize) = st };
        }
        b += ncta;
        sync();
    }
}

/// The rANS stage of the dense pipe: warp `w` of the grid decodes slices `w, w + warps, ...`
/// (slice `4 * block + stream`) into `decoded` at `dec_offsets[slice]`. Arguments as for
/// `decode_blocks_lane`; statuses are raised (max) per block, so zero the status words first.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn rans_decode_slices(
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
    let warps = (bdim / 32) as u64 * ncta as u64;
    let mut slice = cta as u64 * (bdim / 32) as u64 + (tid / 32) as u64;
    let n_slices = n_blocks as u64 * STREAM_COUNT as u64;
    while slice < n_slices {
        // Work order: every block's literal slice first (the long ones), then commands,
        // offsets, lengths, so warps that finish early pick up short slices at the tail.
        let b = (slice % n_blocks as u64) as u32;
        let k = match slice / n_blocks as u64 {
            0 => STREAM_LITERALS,
            1 => STREAM_COMMANDS,
            2 => STREAM_OFFSETS,
            _ => STREAM_LENGTHS,
        };
        let slice_index = b as u64 * STREAM_COUNT as u64 + k as u64;
        // SAFETY: b < n_blocks; the host passes n_blocks entries and offsets and 4 decoded
        // offsets per block.
        let e = unsafe { *entries.add(b as usize) };
        let mut off = unsafe { *offsets.add(b as usize) };
        for j in 0..k {
            off += e.stored_len[j] as u64;
        }
        let doff = unsafe { *dec_offsets.add(slice_index as usize) };
        let n = e.decoded_len[k] as u64;
        let st = if doff > dec_len || n > dec_len - doff {
            Status::SliceMode
        } else {
            // SAFETY: [doff, doff + n) lies inside the decoded scratch.
            let dst = unsafe { decoded.add(doff as usize) };
            decode_stream_warp(
                data,
                data_len,
                off,
                &e,
                k,
                b,
                tables,
                n_tables,
                table_index,
                group_blocks,
                dst,
                lane,
            )
        };
        if st != Status::Ok && lane == 0 {
            // SAFETY: one status word per block; the host zeroed them before the launch.
            unsafe {
                core::sync::atomic::AtomicU32::from_ptr(status.add(b as usize))
                    .fetch_max(st as u32, core::sync::atomic::Ordering::Relaxed)
            };
        }
        slice += warps;
    }
}

/// Stage 1 for one stream: raw copy or warp-interleaved rANS into `dst`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn decode_stream_warp(
    data: *const u8,
    data_len: u64,
    off: u64,
    e: &BlockEntry,
    k: usize,
    b: u32,
    tables: *const DecodeTable,
    n_tables: u32,
    table_index: *const u32,
    group_blocks: u32,
    dst: *mut u8,
    lane: u32,
) -> Status {
    let stored = e.stored_len[k] as u64;
    let n = e.decoded_len[k] as usize;
    if off > data_len || stored > data_len - off {
        return Status::SliceMode;
    }
    // SAFETY: [off, off + stored) lies inside the data section.
    let src = unsafe { data.add(off as usize) };
    let lanes = e.lanes[k] as u32;
    if lanes == LANES_RAW as u32 {
        if stored as usize != n {
            return Status::SliceMode;
        }
        let mut i = lane as usize;
        while i < n {
            // SAFETY: i < n == stored; dst region holds the stream's cap >= n (checked by caller).
            unsafe { *dst.add(i) = gb(src, i) };
            i += 32;
        }
        return Status::Ok;
    }
    if lanes > MAX_LANES as u32 {
        return Status::SliceMode;
    }
    let head = 4 * lanes as u64;
    if stored < head || (stored - head) % 2 != 0 {
        return Status::RansHeader;
    }
    // SAFETY: the host passes group_count * 4 indices and n_tables tables.
    let Some(table) = (unsafe {
        crate::kernels::stream_table(tables, n_tables, table_index, group_blocks, b as u64, k)
    }) else {
        return Status::SliceMode;
    };
    let active_lane = lane < lanes;
    let mut x: u32 = RANS_L;
    if active_lane {
        let o = 4 * lane as usize;
        // SAFETY: o + 3 < head <= stored.
        x = unsafe {
            u32::from_le_bytes([gb(src, o), gb(src, o + 1), gb(src, o + 2), gb(src, o + 3)])
        };
    }
    if ballot(active_lane && x < RANS_L) != 0 {
        return Status::RansHeader;
    }
    // SAFETY: head <= stored.
    let words = unsafe { src.add(head as usize) };
    let nwords = ((stored - head) / 2) as u32;
    let mut wp: u32 = 0;
    let below = (1u32 << lane) - 1;
    let steps = n.div_ceil(lanes as usize);
    let mut underflow = false;
    for t in 0..steps {
        let i = t * lanes as usize + lane as usize;
        let active = active_lane && i < n;
        let mut need = false;
        if active {
            let sym = crate::rans::step(table, &mut x);
            // SAFETY: i < n <= the stream's region cap.
            unsafe { *dst.add(i) = sym };
            need = x < RANS_L;
        }
        let m = ballot(need);
        if need {
            let pos = wp + (m & below).count_ones();
            if pos < nwords {
                let o = 2 * pos as usize;
                // SAFETY: pos < nwords, so o + 1 < stored - head.
                let w = unsafe { u16::from_le_bytes([gb(words, o), gb(words, o + 1)]) } as u32;
                x = (x << 16) | w;
            } else {
                underflow = true;
            }
        }
        wp += m.count_ones();
    }
    if ballot(underflow) != 0 {
        return Status::RansUnderflow;
    }
    if wp != nwords || ballot(active_lane && x != RANS_L) != 0 {
        return Status::RansTrailer;
    }
    Status::Ok
}

/// Turns `n` varint bytes at `bytes` into values at `vals` (at most `cap`), storing the
/// count in `*count`. Checks FORMAT.md §4.2: at most 5 bytes, fits u32, no cut-off varint.
#[inline(always)]
fn varints_to_values(
    bytes: *const u8,
    n: usize,
    vals: *mut u32,
    cap: usize,
    lane: u32,
    count: *mut u32,
) -> Status {
    let below = (1u32 << lane) - 1;
    let mut base = 0usize;
    let mut idx = 0usize;
    let mut bad = false;
    while base < n {
        let i = base + lane as usize;
        // SAFETY: i < n bytes of the region.
        let byte = if i < n {
            unsafe { *bytes.add(i) }
        } else {
            0x80
        };
        let is_end = i < n && byte & 0x80 == 0;
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
                bad = true;
            }
        }
        idx += m.count_ones() as usize;
        base += 32;
    }
    // SAFETY: n >= 1 was checked before reading the last byte.
    if n > 0 && unsafe { *bytes.add(n - 1) } & 0x80 != 0 {
        bad = true;
    }
    if ballot(bad) != 0 {
        return Status::BadVarint;
    }
    if lane == 0 {
        // SAFETY: a shared control word.
        unsafe { *count = idx as u32 };
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
        r[s] = if b[s] & REF != 0 {
            a[(b[s] & 3) as usize]
        } else {
            b[s]
        };
    }
    r
}

const IDENTITY: [u32; 4] = [REF, REF | 1, REF | 2, REF | 3];

/// Stage 2 (warp 0): parallel parse, 32 commands per step, and pointer fill.
#[inline(always)]
fn parse_fill(s: &Smem, e: &BlockEntry, block_len: u32, window: u32, lane: u32) -> Status {
    let ncmd = e.decoded_len[STREAM_COMMANDS] as usize;
    let nlit = e.decoded_len[STREAM_LITERALS];
    // SAFETY: control words written in stage 1 before the barrier.
    let nlenv = unsafe { *s.ctrl(C_NLENV) };
    let noffv = unsafe { *s.ctrl(C_NOFFV) };
    // SAFETY: ncmd >= 1 is checked first.
    if ncmd == 0 || unsafe { *s.cmd() } != CMD_RESET {
        return Status::NoLeadingReset;
    }
    let below = (1u32 << lane) - 1;
    let mut hist: [u32; 4] = HISTORY_RESET;
    let mut dst_base: u32 = 0;
    let mut lit_base: u32 = 0;
    let mut lenv_base: u32 = 0;
    let mut offv_base: u32 = 0;
    let mut base = 0usize;
    let ptr = s.ptr();
    while base < ncmd {
        let ci = base + lane as usize;
        let valid = ci < ncmd;
        // SAFETY: ci < ncmd <= CMD_CAP.
        let c = if valid {
            unsafe { *s.cmd().add(ci) }
        } else {
            0
        };
        let is_lit = valid && c < 0x80;
        let is_rep = valid && (0x80..0xC0).contains(&c);
        let is_new = valid && (0xC0..=0xFE).contains(&c);
        let is_reset = valid && c == CMD_RESET;
        let uses_len = (is_rep && c & 0x0F == 0x0F) || (valid && c == CMD_MATCH_LONG);
        let uses_off = is_new;
        let mlen = ballot(uses_len);
        let moff = ballot(uses_off);
        let my_len_i = lenv_base + (mlen & below).count_ones();
        let my_off_i = offv_base + (moff & below).count_ones();
        let mut bad_varint = false;
        let mut extra: u32 = 0;
        if uses_len {
            if my_len_i < nlenv {
                // SAFETY: my_len_i < nlenv <= LENV_CAP.
                extra = unsafe { *s.lenv().add(my_len_i as usize) };
            } else {
                bad_varint = true;
            }
        }
        let mut new_dist: u32 = 0;
        if uses_off {
            if my_off_i < noffv {
                // SAFETY: my_off_i < noffv <= OFFV_CAP.
                new_dist = unsafe { *s.offv().add(my_off_i as usize) };
            } else {
                bad_varint = true;
            }
        }
        // output length (u64 to catch overflow), literal count
        let mut out_n: u64 = 0;
        let mut lit_n: u32 = 0;
        if is_lit {
            lit_n = c as u32 + 1;
            out_n = lit_n as u64;
        } else if is_rep {
            out_n = MATCH_BASE as u64 + (c & 0x0F) as u64 + if uses_len { extra as u64 } else { 0 };
        } else if is_new {
            out_n = if c == CMD_MATCH_LONG {
                MATCH_BASE as u64 + extra as u64
            } else {
                MATCH_BASE as u64 + (c & 0x3F) as u64
            };
        }
        let too_long = out_n > block_len as u64;
        let on = if too_long {
            block_len + 1
        } else {
            out_n as u32
        };
        // inclusive scans of output and literal counts
        let mut inc_out = on;
        let mut inc_lit = lit_n;
        let mut d = 1;
        while d < 32 {
            let o = shfl_up(inc_out, d);
            let l = shfl_up(inc_lit, d);
            if lane >= d {
                inc_out = inc_out.saturating_add(o);
                inc_lit += l;
            }
            d <<= 1;
        }
        let dst = dst_base as u64 + (inc_out - on) as u64;
        let lit_pos = lit_base + inc_lit - lit_n;
        // history maps: inclusive scan, then exclusive by one shuffle
        let mut map = if is_reset {
            [
                HISTORY_RESET[0],
                HISTORY_RESET[1],
                HISTORY_RESET[2],
                HISTORY_RESET[3],
            ]
        } else if is_new {
            [new_dist & !REF, REF, REF | 1, REF | 2]
        } else if is_rep {
            match (c >> 4) & 3 {
                0 => IDENTITY,
                1 => [REF | 1, REF, REF | 2, REF | 3],
                2 => [REF | 2, REF, REF | 1, REF | 3],
                _ => [REF | 3, REF, REF | 1, REF | 2],
            }
        } else {
            IDENTITY
        };
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
        let mut exc = [
            shfl_up(map[0], 1),
            shfl_up(map[1], 1),
            shfl_up(map[2], 1),
            shfl_up(map[3], 1),
        ];
        if lane == 0 {
            exc = IDENTITY;
        }
        let before = compose([hist[0], hist[1], hist[2], hist[3]], exc);
        // `before` has only constants: apply exc to the carried history
        let dist = if is_rep {
            before[((c >> 4) & 3) as usize]
        } else {
            new_dist
        };
        // checks (FORMAT.md §4.4)
        let mut st = Status::Ok;
        if bad_varint {
            st = Status::BadVarint;
        } else if too_long || dst + out_n > block_len as u64 {
            st = Status::OutputOverrun;
        } else if is_lit && lit_pos as u64 + lit_n as u64 > nlit as u64 {
            st = Status::LiteralsExhausted;
        } else if (is_rep || is_new)
            && (dist == 0 || dist > window || dist as u64 > dst || new_dist & REF != 0)
        {
            st = Status::BadDistance;
        }
        if ballot(st != Status::Ok) != 0 {
            // report the first failing command's status
            let first = ballot(st != Status::Ok).trailing_zeros();
            return Status::from_u32(shfl(st as u32, first)).unwrap_or(Status::OutputOverrun);
        }
        // fill pointers: short commands by their own lane, long ones by the whole warp with
        // consecutive 16-bit stores (a lane walking its own long run would hit one bank)
        let is_match = is_rep || is_new;
        let src = if is_match { dst as u32 - dist } else { 0 };
        let long = (is_lit || is_match) && out_n > 16;
        if !long {
            if is_lit {
                for k in 0..lit_n {
                    // SAFETY: dst + lit_n <= block_len <= DENSE_MAX_BLOCK pointers.
                    unsafe { *ptr.add(dst as usize + k as usize) = 0x8000 | (lit_pos + k) as u16 };
                }
            } else if is_match {
                let mut m = 0;
                for k in 0..out_n as u32 {
                    // SAFETY: dst + out_n <= block_len (checked above).
                    unsafe { *ptr.add(dst as usize + k as usize) = (src + m) as u16 };
                    m += 1;
                    if m == dist {
                        m = 0;
                    }
                }
            }
        }
        let mut longs = ballot(long);
        while longs != 0 {
            let j = longs.trailing_zeros();
            longs &= longs - 1;
            let jd = shfl(dst as u32, j);
            let jn = shfl(out_n as u32, j);
            let jlit = shfl(is_lit as u32, j);
            let jsrc = shfl(if is_lit { lit_pos } else { src }, j);
            let jdist = shfl(dist, j);
            let mut k = lane;
            while k < jn {
                let v = if jlit != 0 {
                    0x8000 | (jsrc + k) as u16
                } else {
                    (jsrc + k % jdist) as u16
                };
                // SAFETY: jd + jn <= block_len (checked above by lane j).
                unsafe { *ptr.add((jd + k) as usize) = v };
                k += 32;
            }
        }
        // carry to the next 32 commands
        let last = 31;
        dst_base += shfl(inc_out, last);
        lit_base += shfl(inc_lit, last);
        lenv_base += mlen.count_ones();
        offv_base += moff.count_ones();
        let m_all = [
            shfl(map[0], last),
            shfl(map[1], last),
            shfl(map[2], last),
            shfl(map[3], last),
        ];
        hist = compose(hist, m_all);
        base += 32;
    }
    if dst_base != block_len || lit_base != nlit || lenv_base != nlenv || offv_base != noffv {
        return Status::Trailing;
    }
    Status::Ok
}

/// Stage 3a: pointer jumping until every pointer names a literal (at most 16 rounds: chains
/// are shorter than 2^14 and halve each round).
#[inline(always)]
fn resolve(s: &Smem, block_len: u32, tid: u32) -> Status {
    let ptr = s.ptr();
    // Round r raises flag r % 3 and everyone reads it after the barrier; thread 0 clears flag
    // (r + 1) % 3 before that barrier, when nobody can still read it (its readers, round
    // r - 2, passed round r - 1's barrier) or write it yet (round r + 1 starts after this
    // round's barrier). One flag reused every round would let a fast thread clear it before a
    // slow one read it.
    if tid == 0 {
        // SAFETY: shared control words; the caller's barrier follows the parse.
        unsafe {
            *s.ctrl(C_FLAG) = 0;
            *s.ctrl(C_FLAG + 1) = 0;
            *s.ctrl(C_FLAG + 2) = 0;
        }
    }
    sync();
    for round in 0..16usize {
        let mut open = false;
        let mut i = tid;
        while i < block_len {
            // SAFETY: i < block_len pointers; every non-literal pointer is < its position.
            let v = unsafe { *ptr.add(i as usize) };
            if v & 0x8000 == 0 {
                let w = unsafe { *ptr.add(v as usize) };
                unsafe { *ptr.add(i as usize) = w };
                if w & 0x8000 == 0 {
                    open = true;
                }
            }
            i += THREADS;
        }
        if open {
            unsafe { *s.ctrl(C_FLAG + round % 3) = 1 };
        }
        if tid == 0 {
            unsafe { *s.ctrl(C_FLAG + (round + 1) % 3) = 0 };
        }
        sync();
        // SAFETY: read after the barrier.
        if unsafe { *s.ctrl(C_FLAG + round % 3) } == 0 {
            return Status::Ok;
        }
    }
    Status::Trailing
}

/// Stage 3b: gather literals and write the block with 4-byte stores.
#[inline(always)]
fn write_out(s: &Smem, out: *mut u8, start: u64, block_len: u32, tid: u32) {
    let ptr = s.ptr();
    let lit = s.lit();
    let words = block_len / 4;
    let mut q = tid;
    while q < words {
        let mut w: u32 = 0;
        for j in 0..4 {
            // SAFETY: 4q + j < block_len; literal indices were checked against the literal
            // count during the parse.
            let p = unsafe { *ptr.add((4 * q + j) as usize) };
            w |= (unsafe { *lit.add((p & 0x7FFF) as usize) } as u32) << (8 * j);
        }
        // SAFETY: start is a multiple of the block size (>= 4 KiB), so start + 4q is 4-aligned
        // in the 256-byte aligned output; start + block_len <= out_len.
        unsafe { *(out.add((start + 4 * q as u64) as usize) as *mut u32) = w };
        q += THREADS;
    }
    let mut i = words * 4 + tid;
    while i < block_len {
        let p = unsafe { *ptr.add(i as usize) };
        unsafe { *out.add((start + i as u64) as usize) = *lit.add((p & 0x7FFF) as usize) };
        i += THREADS;
    }
}
