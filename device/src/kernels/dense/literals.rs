//! The literals of a self-contained block: its two-bit slice expanded from the copy in
//! shared memory into the literal region (FORMAT.md §5.7).

#[allow(unused_imports)]
use super::*;

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
/// 64 registers spilled around the parse).
///
/// # Safety
/// The slice's `stored` bytes lie at `[at, at + stored)` of the command region, `n <=
/// LIT_CAP`, `stored >= 6 + ceil(n / 4)` and `stored - ceil(n / 4) <= OWN_PRE_CAP`
/// (own_slice).
#[inline(never)]
pub(super) unsafe fn expand_own_literals(
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
