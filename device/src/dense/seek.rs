//! The random-access decoder's parts beside the dense kernel (`gpu::seek` on the host):
//! [`cta_block_hash`], with which `decode_blocks_seek` checks each block it wrote to its slot
//! against the block table (FORMAT.md §6; [`crate::xxh3`]'s rounds summed by the CTA's warps,
//! chained by one), and `seek_gather`, which copies each range from the slots to the
//! caller's buffer and reports its first bad block.

use super::*;
use crate::format::SeekRange;
use crate::xxh3;

macro_rules! seek_entry {
    ($(#[$doc:meta])* $name:ident, $body:ident ; $($(#[$fdoc:meta])* $f:ident : $t:ty),* $(,)?) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($f: $t),*) {
            // SAFETY: forwarded (the host's contract).
            unsafe { $body($($f),*) }
        }
    };
}

crate::with_seek_gather_params!(
    seek_entry;
    /// Copies each range of a seek from its slots to the caller's buffer and writes its two
    /// status words: the status of its first block whose status is not 0, and that block (0
    /// and 0 when every block verified). With a grid of at most `n_ranges` CTAs, CTA `c`
    /// takes ranges `c`, `c + grid`, ...; with a larger one, each range is cut into
    /// `grid / n_ranges` pieces of a CTA each (CTA `c` takes piece `c % pieces` of range
    /// `c / pieces`; the first piece's CTA writes the status), so that a few long ranges are
    /// copied by many CTAs.
    ///
    /// # Safety
    /// Every range's blocks lie in consecutive slots from its `first_slot` inside `slots`;
    /// `[out_at, out_at + len)` lies inside `out`; `status` holds a word for each block of
    /// every range; `range_status` `2 * n_ranges` words.
    seek_gather,
    gather_ranges
);

/// A 64-bit value from lane `src` of the warp.
#[inline(always)]
fn shfl64(v: u64, src: u32) -> u64 {
    shfl(v as u32, src) as u64 | (shfl((v >> 32) as u32, src) as u64) << 32
}

/// A 64-bit value from lane `lane ^ m`.
#[inline(always)]
fn shfl_xor64(v: u64, m: u32) -> u64 {
    shfl_xor(v as u32, m) as u64 | (shfl_xor((v >> 32) as u32, m) as u64) << 32
}

/// The sums of stripes `q, q + 4, ...` below `stripes` of the round at `base` for
/// accumulator lane `i`, summed over the warp's four `q`: the products (for accumulator `i`)
/// and the data words (for accumulator `i ^ 1`).
///
/// # Safety
/// `base` holds `stripes * 64` bytes, 8-byte aligned.
#[inline(always)]
unsafe fn round_sums(base: *const u8, stripes: usize, i: usize, q: usize) -> (u64, u64) {
    let (mut p, mut v) = (0u64, 0u64);
    let mut s = q;
    while s < stripes {
        // SAFETY: s < stripes: word i of stripe s lies in the round (caller), 8-aligned.
        let d = unsafe { *(base.add(s * xxh3::STRIPE + 8 * i) as *const u64) };
        let (pp, vv) = xxh3::stripe_lane(d, xxh3::secret64(8 * s + 8 * i));
        p = p.wrapping_add(pp);
        v = v.wrapping_add(vv);
        s += 4;
    }
    for m in [8, 16] {
        p = p.wrapping_add(shfl_xor64(p, m));
        v = v.wrapping_add(shfl_xor64(v, m));
    }
    (p, v)
}

/// XXH3-64 of the `len` bytes at `p` (a block this CTA just wrote, `len <= block_size`) by
/// the whole CTA: warp `w` sums rounds `w`, `w + WARPS`, ... (the last, partial one
/// included) into shared memory from `s.base`, where nothing of the block is left after its
/// write; then warp 0 chains them with the scrambles and the last stripe. Every thread gets
/// the hash. Called by every thread of the CTA (it has barriers).
///
/// # Safety
/// `p` holds `len` bytes, 8-byte aligned, written by this CTA before a barrier;
/// `len <= DENSE_MAX_BLOCK`; the shared memory from `s.base` is free (2,184 bytes).
/// Not inlined, so that ptxas gives it registers apart from the kernel's (inlined, the
/// seek's kernel spilled more around it).
#[inline(never)]
pub(super) unsafe fn cta_block_hash(s: &Smem, p: *const u8, len: usize, tid: u32) -> u64 {
    const RESULT: usize = 16 * (DENSE_MAX_BLOCK as usize / xxh3::ROUND + 1);
    let sums = s.base as *mut u64;
    let warp = (tid / 32) as usize;
    let lane = tid % 32;
    if len <= xxh3::MID_SIZE_MAX {
        if tid == 0 {
            // SAFETY: p holds len bytes (caller); the result word lies in the free region.
            unsafe { *sums.add(RESULT) = xxh3::hash_short(core::slice::from_raw_parts(p, len)) };
        }
    } else {
        let i = (lane & 7) as usize;
        let q = (lane >> 3) as usize;
        let (rounds, tail) = xxh3::round_split(len);
        let mut r = warp;
        while r <= rounds {
            let stripes = if r < rounds {
                xxh3::STRIPES_PER_ROUND
            } else {
                tail
            };
            // SAFETY: round r's stripes lie below len (round_split).
            let (pp, vv) = unsafe { round_sums(p.add(r * xxh3::ROUND), stripes, i, q) };
            if q == 0 {
                // SAFETY: r <= rounds <= DENSE_MAX_BLOCK / ROUND: inside the free region.
                unsafe {
                    *sums.add(16 * r + i) = pp;
                    *sums.add(16 * r + 8 + i) = vv;
                }
            }
            r += WARPS;
        }
        sync();
        if warp == 0 {
            let mut acc = xxh3::INIT_ACC[i];
            for r in 0..=rounds {
                // SAFETY: written above, before the barrier.
                let (pp, vv) = unsafe { (*sums.add(16 * r + i), *sums.add(16 * r + 8 + (i ^ 1))) };
                acc = acc.wrapping_add(pp).wrapping_add(vv);
                if r < rounds {
                    acc = xxh3::scramble_lane(acc, i);
                }
            }
            // the last stripe, at len - 64 (not aligned in general)
            // SAFETY: len > 240, so [len - 64, len) lies in the block.
            let d = unsafe {
                core::ptr::read_unaligned(p.add(len - xxh3::STRIPE + 8 * i) as *const u64)
            };
            let (pp, vv) = xxh3::stripe_lane(d, xxh3::secret64(xxh3::LAST_STRIPE_SECRET + 8 * i));
            acc = acc.wrapping_add(pp).wrapping_add(shfl_xor64(vv, 1));
            let mut all = [0u64; 8];
            for (j, a) in all.iter_mut().enumerate() {
                *a = shfl64(acc, j as u32);
            }
            if lane == 0 {
                // SAFETY: the result word lies in the free region, past the sums.
                unsafe { *sums.add(RESULT) = xxh3::merge_accs(&all, len as u64) };
            }
        }
    }
    sync();
    // SAFETY: written before the barrier above.
    unsafe { *sums.add(RESULT) }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gather_ranges(
    slots: *const u8,
    block_size: u32,
    ranges: *const SeekRange,
    n_ranges: u32,
    status: *const u32,
    out: *mut u8,
    out_len: u64,
    range_status: *mut u32,
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
    let shift = block_size.trailing_zeros();
    let mask = block_size as u64 - 1;
    // pieces a range: one, or the CTAs a range when there are more CTAs than ranges (then
    // r + ncta >= n_ranges after the first range: one range a CTA)
    let pieces = if ncta > n_ranges { ncta / n_ranges } else { 1 };
    let piece = cta % pieces;
    let mut r = cta / pieces;
    // (the request is the host's, which no kernel writes: the first range is read before
    // the wait below, so that its latency, across the bus for a small request, overlaps the
    // dense kernel)
    let read = |r: u32| {
        if r < n_ranges {
            // SAFETY: r < n_ranges.
            unsafe { *ranges.add(r as usize) }
        } else {
            SeekRange::default()
        }
    };
    let mut g = read(r);
    // launched as a programmatic dependent of the dense kernel: its slots and status words
    // are read only once that grid has completed (at once without such a launch)
    crate::handoff::wait_prerequisite_grids();
    while r < n_ranges {
        if tid == 0 && piece == 0 {
            crate::trace::mark(g.first_block as u64, crate::trace::GATHER_START);
            let last = ((g.offset + g.len.max(1) - 1) >> shift) as u32;
            let (mut st, mut bad) = (0u32, 0u32);
            let mut b = g.first_block;
            while b <= last {
                // SAFETY: a status word per block of the range (the host's contract).
                let s = unsafe { *status.add(b as usize) };
                if s != 0 {
                    (st, bad) = (s, b);
                    break;
                }
                b += 1;
            }
            // SAFETY: 2 * n_ranges words.
            unsafe {
                *range_status.add(2 * r as usize) = st;
                *range_status.add(2 * r as usize + 1) = bad;
            }
        }
        if g.out_at <= out_len && g.len <= out_len - g.out_at {
            // this piece of the range: 16-byte multiples, the last one short
            let step = g.len.div_ceil(pieces as u64).next_multiple_of(16);
            let from = (piece as u64 * step).min(g.len);
            let to = (from + step).min(g.len);
            // the piece's first byte in the slots: its block's slot, then its place in it
            let base = ((g.first_slot as u64) << shift | (g.offset & mask)) + from;
            // SAFETY: the range's bytes lie in its slots (consecutive from first_slot: the
            // host's contract), whole slots of block_size bytes (a multiple of 4) from a
            // 4-aligned buffer, and [from, to) lies in the range; out_at + len <= out_len
            // (checked above).
            unsafe {
                cta_copy(
                    out.add((g.out_at + from) as usize),
                    slots.add(base as usize),
                    to - from,
                    tid,
                    bdim,
                )
            };
        }
        if tid == 0 && piece == 0 {
            crate::trace::mark(g.first_block as u64, crate::trace::GATHER_END);
        }
        r += ncta;
        g = read(r);
    }
}

/// Copies `len` bytes from `src` to `dst` with every thread of the CTA (`tid` of `bdim`):
/// the bytes before `dst`'s first 4-byte boundary and after its last one one by one, the
/// rest as aligned 4-byte stores, each built from the two aligned source words it spans, four
/// words a thread at a time so that eight loads are in flight (a byte loop waits for each load
/// in turn: a 16 KiB range took as long as decoding its block).
///
/// # Safety
/// `src` holds `len` bytes inside a 4-aligned buffer whose length is a multiple of 4 (the
/// aligned words that cover the range then lie in it); `dst` holds `len` bytes; the two do
/// not overlap.
#[inline(always)]
unsafe fn cta_copy(dst: *mut u8, src: *const u8, len: u64, tid: u32, bdim: u32) {
    const UNROLL: u64 = 4;
    let head = ((4 - (dst as u64 & 3)) & 3).min(len);
    let words = (len - head) / 4;
    let tail_at = head + 4 * words;
    let t = tid as u64;
    if t < head {
        // SAFETY: t < head <= len.
        unsafe { *dst.add(t as usize) = *src.add(t as usize) };
    }
    if t < len - tail_at {
        let k = (tail_at + t) as usize;
        // SAFETY: tail_at + t < len.
        unsafe { *dst.add(k) = *src.add(k) };
    }
    // destination word j is dst + head + 4j (aligned); its source bytes start at s + 4j
    let s = src as u64 + head;
    let shift = 8 * (s & 3) as u32;
    let words_at = (s & !3) as *const u32;
    let out = (dst as u64 + head) as *mut u32;
    let step = bdim as u64;
    let mut j = t;
    while j < words {
        let mut w = [0u32; UNROLL as usize];
        for (u, w) in w.iter_mut().enumerate() {
            let k = j + u as u64 * step;
            if k < words {
                // SAFETY: source word k (and k + 1 when the source is not aligned) covers
                // bytes of the range, rounded out to 4-byte boundaries: inside the buffer
                // (the caller's contract).
                *w = unsafe {
                    let lo = *words_at.add(k as usize);
                    if shift == 0 {
                        lo
                    } else {
                        let hi = *words_at.add(k as usize + 1);
                        ((hi as u64) << 32 | lo as u64).wrapping_shr(shift) as u32
                    }
                };
            }
        }
        for (u, w) in w.iter().enumerate() {
            let k = j + u as u64 * step;
            if k < words {
                // SAFETY: destination word k < words lies in dst's len bytes, 4-aligned.
                unsafe { *out.add(k as usize) = *w };
            }
        }
        j += UNROLL * step;
    }
}
