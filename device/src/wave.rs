//! The wavefront decoder's kernels (nvptx only; layout and pipeline in `wave_layout.rs`).
//!
//! Every kernel reads its buffers from one [`WaveArgs`] in device memory. Buffers are sized
//! by the host from a validated archive (`host/gpu/wave.rs`); every index into them that
//! depends on decoded data is checked here, and a broken rule becomes the block's status.

use crate::format::{BlockEntry, CopyToken, STREAM_COMMANDS, STREAM_COUNT, STREAM_LITERALS};
use crate::kernels::{checked_slice, copy_token_lanes, global_thread, report, tid, token_ok, WARP};
use crate::lz::{walk_block, BlockFrame, BlockSink, BlockStreams};
use crate::status::Status;
use crate::wave_layout::{WaveArgs, WaveSeg};
use core::sync::atomic::{AtomicU32, Ordering};

#[inline(always)]
fn atomic(p: u64, i: usize) -> &'static AtomicU32 {
    // SAFETY (callers): `p` is a device array of `u32` with more than `i` words (WaveArgs docs).
    unsafe { AtomicU32::from_ptr((p as *mut u32).add(i)) }
}

/// Segments already parsed of one block, for the level lookup.
#[derive(Clone, Copy)]
struct SegList {
    segs: *const WaveSeg,
    count: u32,
}

/// The parse sink: one [`WaveSeg`] per command, each match given its level.
struct Sink<'a> {
    a: &'a WaveArgs,
    block: u64,
    start: u64,
    segs: *mut WaveSeg,
    cap: u32,
    n: u32,
    max_level: u32,
}

impl Sink<'_> {
    /// The parsed segments of block `bb` (`bb <= self.block`).
    fn list(&self, bb: u64) -> SegList {
        if bb == self.block {
            return SegList {
                segs: self.segs,
                count: self.n,
            };
        }
        // SAFETY: bb < n_blocks (a source lies at or above the frame floor, inside the
        // output); seg_base and seg_count hold n_blocks entries; an earlier generation wrote
        // block bb's segments and count (or a count of 0 when it failed).
        unsafe {
            let base = *(self.a.seg_base as *const u64).add(bb as usize);
            let count = *(self.a.seg_count as *const u32).add(bb as usize);
            SegList {
                segs: (self.a.segs as *const WaveSeg).add(base as usize),
                count,
            }
        }
    }

    /// Largest level of the segments that wrote `[src, src + r)` (absolute positions below
    /// this block's cursor).
    fn source_level(&self, src: u64, r: u64) -> Result<u32, Status> {
        let bs = self.a.block_size as u64;
        let end = src + r;
        let mut p = src;
        let mut lvl = 0u32;
        while p < end {
            let bb = p / bs;
            let l = self.list(bb);
            if l.count == 0 {
                // the source block failed (its status names the cause)
                return Err(Status::BadDistance);
            }
            let off = (p - bb * bs) as u32;
            // largest i with segs[i].start <= off (segs[0].start == 0)
            let (mut lo, mut hi) = (0u32, l.count);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                // SAFETY: mid < count segments of this block.
                if unsafe { (*l.segs.add(mid as usize)).start } <= off {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let mut i = lo;
            while p < end && i < l.count {
                // SAFETY: i < count.
                let s = unsafe { *l.segs.add(i as usize) };
                let s_end = bb * bs + s.start as u64 + s.len as u64;
                if s_end <= p {
                    // segments tile their block; anything else is a decoder bug, not data
                    return Err(Status::BadDistance);
                }
                lvl = lvl.max(s.level);
                p = s_end;
                i += 1;
            }
            if p < end && p < (bb + 1) * bs {
                // ran out of segments inside the block: the source was never written
                return Err(Status::BadDistance);
            }
        }
        Ok(lvl)
    }

    fn push(&mut self, s: WaveSeg) -> Result<(), Status> {
        if self.n >= self.cap {
            // one segment per command byte at most; cannot happen for a checked block
            return Err(Status::Trailing);
        }
        // SAFETY: n < cap = this block's segment capacity starting at `segs`.
        unsafe { *self.segs.add(self.n as usize) = s };
        self.n += 1;
        Ok(())
    }
}

impl BlockSink for Sink<'_> {
    #[inline(always)]
    fn literals(&mut self, cursor: usize, lit_pos: usize, n: usize) -> Result<(), Status> {
        self.push(WaveSeg {
            start: (cursor as u64 - self.start) as u32,
            len: n as u32,
            arg: lit_pos as u32,
            level: 0,
        })
    }

    #[inline(always)]
    fn copy(&mut self, cursor: usize, src: usize, dist: u32, len: usize) -> Result<(), Status> {
        let read = core::cmp::min(len as u64, dist as u64);
        let level = self.source_level(src as u64, read)? + 1;
        self.max_level = self.max_level.max(level);
        if level <= self.a.n_waves {
            atomic(self.a.level_count, level as usize).fetch_add(1, Ordering::Relaxed);
        }
        self.push(WaveSeg {
            start: (cursor as u64 - self.start) as u32,
            len: len as u32,
            arg: dist,
            level,
        })
    }
}

/// Parses one block into its segments; returns the status and the segments written.
fn parse_block(a: &WaveArgs, b: u64) -> (Status, u32) {
    // SAFETY: b < n_blocks; entries, dec_offsets and seg_base hold n_blocks (x4) entries.
    let (e, base) = unsafe {
        (
            &*(a.entries as *const BlockEntry).add(b as usize),
            *(a.seg_base as *const u64).add(b as usize),
        )
    };
    let bs = a.block_size as u64;
    let start = b * bs;
    if start >= a.out_len || e.lowest_source_block as u64 > b {
        return (Status::BadDistance, 0);
    }
    let end = core::cmp::min(start + bs, a.out_len);
    let mut bufs: [&[u8]; STREAM_COUNT] = [&[]; STREAM_COUNT];
    for (k, buf) in bufs.iter_mut().enumerate() {
        // SAFETY: dec_offsets holds STREAM_COUNT words per block; checked_slice bounds the range.
        let off = unsafe { *(a.dec_offsets as *const u64).add(b as usize * STREAM_COUNT + k) };
        let Some(s) = (unsafe {
            checked_slice(
                a.decoded as *const u8,
                a.decoded_len,
                off,
                e.decoded_len[k] as u64,
            )
        }) else {
            return (Status::SliceMode, 0);
        };
        *buf = s;
    }
    let cap = e.decoded_len[STREAM_COMMANDS];
    if base > a.seg_total || cap as u64 > a.seg_total - base {
        return (Status::SliceMode, 0);
    }
    let streams = BlockStreams::from_slices(bufs);
    let frame = BlockFrame {
        dst_start: start as usize,
        dst_end: end as usize,
        src_floor: (e.lowest_source_block as u64 * bs) as usize,
        window: a.window,
        match_base: a.match_base,
    };
    let mut sink = Sink {
        a,
        block: b,
        start,
        // SAFETY: base + cap <= seg_total (checked above).
        segs: unsafe { (a.segs as *mut WaveSeg).add(base as usize) },
        cap,
        n: 0,
        max_level: 0,
    };
    let r = walk_block(streams, &frame, &mut sink);
    atomic(a.max_level, 0).fetch_max(sink.max_level, Ordering::Relaxed);
    let st = match r {
        Err(s) => s,
        Ok(()) if sink.max_level > a.n_waves => Status::DepthHint,
        Ok(()) => Status::Ok,
    };
    if st != Status::Ok {
        // this block's matches will not be placed: take back what was counted
        for i in 0..sink.n {
            // SAFETY: i < n segments written above.
            let s = unsafe { *sink.segs.add(i as usize) };
            if s.level >= 1 && s.level <= a.n_waves {
                atomic(a.level_count, s.level as usize).fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
    // a DepthHint block's segments are valid: later blocks may read their levels
    let kept = if st == Status::Ok || st == Status::DepthHint {
        sink.n
    } else {
        0
    };
    (st, kept)
}

/// Wavefront step 1: one thread per listed block parses it into segments with levels.
///
/// `list[0..n_list]` are block indices of one generation: every block a listed block reads
/// from is in an earlier generation (launched before) or is the block itself. A block whose
/// status is already set (by the rANS kernel) is skipped with a segment count of 0.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn wave_parse(args: *const WaveArgs, list: *const u32, n_list: u32) {
    // SAFETY: the host passes a valid WaveArgs.
    let a = unsafe { &*args };
    let (mut i, stride) = global_thread();
    while i < n_list as u64 {
        // SAFETY: i < n_list entries of the generation list.
        let b = unsafe { *list.add(i as usize) } as u64;
        i += stride;
        if b >= a.n_blocks as u64 {
            continue;
        }
        let status = a.status as *mut u32;
        let seg_count = a.seg_count as *mut u32;
        // SAFETY: b < n_blocks status words and segment counts.
        unsafe {
            if *status.add(b as usize) != 0 {
                *seg_count.add(b as usize) = 0;
                continue;
            }
            let (st, n) = parse_block(a, b);
            *seg_count.add(b as usize) = n;
            *status.add(b as usize) = st as u32;
        }
    }
}

/// Wavefront step 2 (one thread): per-level counts to token offsets and insertion cursors.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn wave_scan(args: *const WaveArgs) {
    // SAFETY: the host passes a valid WaveArgs; the level arrays hold n_waves + 2 words.
    let a = unsafe { &*args };
    if global_thread().0 != 0 {
        return;
    }
    let mut off = 0u32;
    for l in 0..a.n_waves as usize + 2 {
        // SAFETY: l < n_waves + 2.
        unsafe {
            *(a.level_offset as *mut u32).add(l) = off;
            *(a.level_cursor as *mut u32).add(l) = off;
            off = off.wrapping_add(*(a.level_count as *const u32).add(l));
        }
    }
}

/// Wavefront step 3: one warp per block; each lane takes segments `lane, lane + 32, ...`:
/// a literal run is copied from the decoded literal stream to the output, a match becomes a
/// [`CopyToken`] in its level's bucket. Blocks with a non-zero status are skipped.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn wave_place(args: *const WaveArgs) {
    // SAFETY: the host passes a valid WaveArgs.
    let a = unsafe { &*args };
    let (gt, stride) = global_thread();
    let lane = (tid() % WARP) as u64;
    let mut b = gt / WARP as u64;
    let bs = a.block_size as u64;
    while b < a.n_blocks as u64 {
        // SAFETY: b < n_blocks entries of each per-block array.
        let (st, base, count, lit_off, lit_len) = unsafe {
            let e = &*(a.entries as *const BlockEntry).add(b as usize);
            (
                *(a.status as *const u32).add(b as usize),
                *(a.seg_base as *const u64).add(b as usize),
                *(a.seg_count as *const u32).add(b as usize),
                *(a.dec_offsets as *const u64).add(b as usize * STREAM_COUNT + STREAM_LITERALS),
                e.decoded_len[STREAM_LITERALS] as u64,
            )
        };
        if st == 0 {
            let out = a.out as *mut u8;
            let start = b * bs;
            let mut i = lane;
            while i < count as u64 {
                // SAFETY: base + count <= seg_total (the parse checked its capacity).
                let s = unsafe { *(a.segs as *const WaveSeg).add((base + i) as usize) };
                let dst = start + s.start as u64;
                if s.level == 0 {
                    // the parse checked both ranges: in the block, inside the literal stream
                    if dst + s.len as u64 <= a.out_len
                        && s.arg as u64 + s.len as u64 <= lit_len
                        && lit_off + lit_len <= a.decoded_len
                    {
                        let src = a.decoded as *const u8;
                        for k in 0..s.len as u64 {
                            // SAFETY: both ranges checked just above.
                            unsafe {
                                *out.add((dst + k) as usize) =
                                    *src.add((lit_off + s.arg as u64 + k) as usize)
                            };
                        }
                    }
                } else if s.level <= a.n_waves {
                    let slot =
                        atomic(a.level_cursor, s.level as usize).fetch_add(1, Ordering::Relaxed);
                    if (slot as u64) < a.seg_total {
                        // SAFETY: slot < seg_total tokens.
                        unsafe {
                            *(a.tokens as *mut CopyToken).add(slot as usize) = CopyToken {
                                dst,
                                dist: s.arg,
                                len: s.len,
                            }
                        };
                    }
                }
                i += WARP as u64;
            }
        }
        b += stride / WARP as u64;
    }
}

/// Wavefront step 4, one launch per level: one warp per match of level `level` (tokens
/// `level_offset[level]..level_offset[level + 1]`), period-aware fill. Every source byte was
/// written by a literal run or by a lower level.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn wave_copy(args: *const WaveArgs, level: u32) {
    // SAFETY: the host passes a valid WaveArgs and 1 <= level <= n_waves.
    let a = unsafe { &*args };
    if level == 0 || level > a.n_waves {
        return;
    }
    // SAFETY: level + 1 < n_waves + 2 words.
    let (first, last) = unsafe {
        let o = a.level_offset as *const u32;
        (
            *o.add(level as usize) as u64,
            *o.add(level as usize + 1) as u64,
        )
    };
    let last = core::cmp::min(last, a.seg_total);
    let (gt, stride) = global_thread();
    let lane = (tid() % WARP) as u64;
    let mut w = first + gt / WARP as u64;
    let out = a.out as *mut u8;
    while w < last {
        // SAFETY: w < last <= seg_total tokens, filled by wave_place.
        let t = unsafe { *(a.tokens as *const CopyToken).add(w as usize) };
        if token_ok(&t, a.out_len) {
            // SAFETY: token_ok(t, out_len) and `out` holds out_len bytes.
            unsafe { copy_token_lanes(out, &t, lane) };
        } else if lane == 0 {
            let b = core::cmp::min(t.dst / a.block_size as u64, a.n_blocks as u64 - 1);
            // SAFETY: b < n_blocks status words.
            unsafe { report((a.status as *mut u32).add(b as usize), Status::BadDistance) };
        }
        w += stride / WARP as u64;
    }
}
