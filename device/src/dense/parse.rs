//! Stage 2 of the dense kernel: the parallel parse (commands classified, positions and the
//! repeat history by scans, one 16-bit pointer per output byte) and the sequential parse of
//! `STAGE_SEQ_PARSE`.

#[allow(unused_imports)]
use super::*;

/// A history slot map entry: a constant distance (< 2^31) or `REF | input slot`.
pub(super) const REF: u32 = 0x8000_0000;

#[inline(always)]
pub(super) fn compose(a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
    // apply `a` first, then `b`
    let mut r = [0u32; 4];
    for s in 0..4 {
        r[s] = if b[s] & REF != 0 { pick(a, b[s]) } else { b[s] };
    }
    r
}

/// `a[i & 3]` by selects (a dynamic index would put `a` in local memory).
#[inline(always)]
pub(super) fn pick(a: [u32; 4], i: u32) -> u32 {
    let lo = if i & 1 != 0 { a[1] } else { a[0] };
    let hi = if i & 1 != 0 { a[3] } else { a[2] };
    if i & 2 != 0 {
        hi
    } else {
        lo
    }
}

pub(super) const IDENTITY: [u32; 4] = [REF, REF | 1, REF | 2, REF | 3];

/// Classes of one command byte (FORMAT.md §4.1).
#[derive(Clone, Copy)]
pub(super) struct Class {
    pub(super) is_lit: bool,
    pub(super) is_rep: bool,
    pub(super) is_new: bool,
    pub(super) is_reset: bool,
    /// Takes a varint from the length stream (escaped repeat or 0xFE).
    pub(super) uses_len: bool,
    /// Takes a varint from the offset stream (a new match).
    pub(super) uses_off: bool,
}

#[inline(always)]
pub(super) fn classify(valid: bool, c: u8) -> Class {
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
pub(super) fn step_command(valid: bool, c: u8) -> (Class, u8, u32, u32) {
    let k = classify(valid, c);
    (k, c, ballot(k.uses_len), ballot(k.uses_off))
}

/// Value `i` of a varint region of `n` values (`Some(0)` when the command uses none), or
/// `None` past its end.
#[inline(always)]
pub(super) fn value(used: bool, i: u32, n: u32, read: impl Fn(usize) -> u32) -> Option<u32> {
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
pub(super) fn command_values(
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
pub(super) fn command_map(k: Class, c: u8, new_dist: u32) -> [u32; 4] {
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
pub(super) fn scan_maps(mut map: [u32; 4], lane: u32) -> [u32; 4] {
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
pub(super) fn slot_moves(k: Class, c: u8) -> u32 {
    ballot(k.is_rep && (c >> 4) & 3 != 0)
}

/// The history map of a 32-command step in which no command repeats slot 1-3 (`news`,
/// `resets`: ballots of its new matches and resets; `new_dist`: this lane's new distance),
/// without the map scan: a new match pushes its distance, a slot-0 repeat keeps the history,
/// a reset sets [`HISTORY_RESET`] (FORMAT.md §4.3). So the history after the step holds the
/// distances of the last (up to four) new matches after the last reset, newest first, then
/// the history before the step (references) or, after a reset, `HISTORY_RESET`. On text most
/// steps are of this kind. Called by the whole warp (`news` and `resets` are warp-uniform).
#[inline(always)]
pub(super) fn push_only_map(news: u32, resets: u32, new_dist: u32) -> [u32; 4] {
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
pub(super) fn push_only_slot0(
    news: u32,
    resets: u32,
    new_dist: u32,
    below: u32,
    hist0: u32,
) -> u32 {
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
pub(super) fn last_lane_map(m: [u32; 4]) -> [u32; 4] {
    [
        shfl(m[0], 31),
        shfl(m[1], 31),
        shfl(m[2], 31),
        shfl(m[3], 31),
    ]
}

/// Inclusive scans of two counts over the warp (the first saturating).
#[inline(always)]
pub(super) fn scan_counts(mut a: u32, mut b: u32, lane: u32) -> (u32, u32) {
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
pub(super) fn ctrl_get(s: &Smem, i: usize) -> u32 {
    // SAFETY: i < CTRL_WORDS (layout constants below).
    unsafe { *s.ctrl(i) }
}

/// Self-overlapping matches longer than this many bytes are filled by their whole warp
/// rather than by their own lane: up to this length a lane storing two pointers at a time,
/// without a period's bookkeeping for runs, is faster than the warp.
pub(super) const LANE_FILL_MAX: u64 = 48;

/// Literal runs and matches that do not overlap themselves (runs of consecutive pointers) up
/// to this many bytes are filled by their own lane, eight pointers per 16-byte store: a warp
/// filling a 128-literal run spends most of its instructions on handing the command out (two
/// shuffles, the loop's bookkeeping) for four stores of 32 pointers, and such runs are most
/// of a DNA block. Every literal run (at most 128,
/// FORMAT.md §4.1) is a lane's.
pub(super) const LANE_RUN_MAX: u64 = 128;

/// Four consecutive 16-bit pointers `v, v + 1, v + 2, v + 3` as one little-endian `u64`:
/// `v * RUN4_MUL + RUN4_ADD` (no carries while `v + 3 < 2^16`).
pub(super) const RUN4_MUL: u64 = 0x0001_0001_0001_0001;
/// See [`RUN4_MUL`].
pub(super) const RUN4_ADD: u64 = 0x0003_0002_0001_0000;

/// Commands longer than this many bytes are filled by the whole CTA after the fill pass
/// instead of by their warp (a 16 KiB run of `N`s would otherwise keep one warp busy while
/// the others wait at the barrier).
pub(super) const CTA_FILL_MIN: u32 = 512;

/// Writes the pointers of one command's `n` bytes at `dst`: literal indices `src + q` (top
/// bit set), or for a match the period-aware sources `src + q % dist`. Position `q` is
/// written by the thread `first + k * stride` (`first < stride`), so a warp (`stride` 32) or
/// the CTA (`THREADS`) writes consecutive 16-bit pointers. The remainder advances by
/// `stride % dist` per store, one division per command instead of one per byte.
///
/// # Safety
/// `dst .. dst + n` lies in the pointer region (the parse checked `dst + n <= block_len`).
#[inline(always)]
pub(super) unsafe fn fill_run(
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
/// 2-byte store (`dense_layout` keeps the pointer region 16-aligned, so the loop's body is a
/// store and two adds, where a body that chose between 8- and 16-byte stores would take
/// several times the instructions per 8 pointers); a self-overlapping match goes through
/// [`fill_run`] with a stride of one.
///
/// # Safety
/// `dst .. dst + n` lies in the pointer region (the parse checked `dst + n <= block_len`);
/// `dist >= 1` for a match.
#[inline(always)]
pub(super) unsafe fn fill_lane(
    ptr: *mut u16,
    dst: u32,
    n: u32,
    src: u32,
    is_lit: bool,
    lit: u32,
    dist: u32,
) {
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
pub(super) fn parse_fill(
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
    let lenw = ctrl_get(s, C_NLENV);
    let nlenv = lenw & !NLENV_BROKEN;
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
        // checks (FORMAT.md §4.4), in the CPU decoder's order (`lz::decode_block`), so a
        // command that breaks two rules reports the same one: a literal run's supply before
        // its room, a match's distance before its room
        let mut st = Status::Ok;
        if bad_varint {
            st = Status::BadVarint;
        } else if k.is_lit && lit_pos as u64 + lit_n as u64 > nlit as u64 {
            st = Status::LiteralsExhausted;
        } else if (k.is_rep || k.is_new)
            && (dist == 0 || dist > window || dist as u64 > dst || new_dist & REF != 0)
        {
            st = Status::BadDistance;
        } else if too_long || dst + out_n > block_len as u64 {
            st = Status::OutputOverrun;
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
    // a broken length varint no command took: its bytes are left over (FORMAT.md §4.5 step 3)
    if out_all != block_len
        || lit_all != nlit
        || len_all != nlenv
        || lenw & NLENV_BROKEN != 0
        || off_all != noffv
    {
        return Status::Trailing;
    }
    Status::Ok
}

/// The sink of the sequential parse: the same 16-bit pointers as `parse_fill` writes.
pub(super) struct PtrSink {
    pub(super) ptr: *mut u16,
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

/// Stage 2, sequential variant (stage bit `STAGE_SEQ_PARSE`, to measure what the parallel
/// parse gains): one lane walks the block's commands with the shared rules
/// (`lz::walk_block`) over the decoded streams in global memory and writes the same
/// pointers as the parallel parse.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn parse_fill_seq(
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
