//! Two-bit literal slices (FORMAT.md §5.7) in the rANS stage: 16-byte windows of the data
//! section, code expansion and the exception area.

#[allow(unused_imports)]
use super::*;

/// The four little-endian words `v` as one 16-byte word.
#[inline(always)]
pub(super) fn join16(v: [u32; 4]) -> u128 {
    v[0] as u128 | (v[1] as u128) << 32 | (v[2] as u128) << 64 | (v[3] as u128) << 96
}

/// Calls `f(j, word)` for every 16-byte word `j < ceil(len / 16)` of the data-section bytes
/// `off .. off + len` (the last word's bytes past `len` are the next bytes of the data
/// section, or zeros where they lie in an aligned word past the region's last), with the
/// whole warp: each lane loads aligned 16-byte words
/// ([`load_src16`]), takes the next one from the lane to its right by shuffles and joins the
/// 16 bytes that start `off % 16` bytes into the pair ([`funnel16`]);
/// `rans::RAW_COPY_WORDS` words per lane in flight. Word `j` goes to lane `j % 32`.
///
/// # Safety
/// `off + len <= src.data_len`; every lane of the warp calls it (shuffles).
#[inline(always)]
pub(super) unsafe fn for_src16(
    src: &Sources,
    off: u64,
    len: u64,
    lane: u32,
    mut f: impl FnMut(u64, [u32; 4]),
) {
    use crate::rans::RAW_COPY_WORDS;
    if len == 0 {
        return;
    }
    let s = (off & 15) as u32;
    let abase = off - s as u64;
    // the last aligned source word that holds a byte of the region
    let last = (s as u64 + len - 1) / 16;
    let n16 = len.div_ceil(16);
    let load = |c: u64| -> [u32; 4] {
        if c > last {
            return [0; 4];
        }
        // SAFETY: abase + 16c <= off + len - 1 < data_len (c <= last; the caller's
        // contract); the host pads the data section to a multiple of 16 bytes (the rANS
        // stage's contract, `gpu::launch::rans_decode_slices`).
        unsafe { load_src16(src.data, src.data_len, abase + 16 * c) }
    };
    let right = (lane + 1) & 31;
    let mut jb = 0u64;
    while jb < n16 {
        let a: [[u32; 4]; RAW_COPY_WORDS] =
            core::array::from_fn(|t| load(jb + lane as u64 + 32 * t as u64));
        // the word after the round's last, for lane 31's last pair (from lane 0)
        let x = if s != 0 && lane == 0 {
            load(jb + 32 * RAW_COPY_WORDS as u64)
        } else {
            [0; 4]
        };
        // word t of the round; `next` is what this lane gives for word t + 1's pairs: lane l
        // gets word j + 1 from lane l + 1, lane 31 from lane 0, which gives its next word
        // (called with constant t below, so that `a` stays in registers)
        let mut word = |t: usize, here: [u32; 4], next: [u32; 4]| {
            let j = jb + lane as u64 + 32 * t as u64;
            let v = if s == 0 {
                here
            } else {
                let give = if lane != 0 { here } else { next };
                funnel16(here, give.map(|w| shfl(w, right)), s)
            };
            if j < n16 {
                f(j, v);
            }
        };
        word(0, a[0], a[1]);
        word(1, a[1], a[2]);
        word(2, a[2], a[3]);
        word(3, a[3], x);
        jb += 32 * RAW_COPY_WORDS as u64;
    }
}

const _: () = assert!(
    crate::rans::RAW_COPY_WORDS == 4,
    "for_src16 takes four words a round"
);

/// The 16 bytes at `at .. at + 16` of the data section `data` (`data_len` bytes, padded with
/// zeros to a multiple of 16: `gpu::decoder`'s upload) as four little-endian words, `at`
/// 16-aligned; zeros for a word past the padded end (which no caller asks for).
///
/// # Safety
/// `data` is 16-aligned and readable up to `data_len` rounded up to a multiple of 16.
#[inline(always)]
pub(super) unsafe fn load_src16(data: *const u8, data_len: u64, at: u64) -> [u32; 4] {
    if at >= data_len.div_ceil(16) * 16 {
        return [0; 4];
    }
    // SAFETY: at is 16-aligned and below the padded length, so all 16 bytes are readable
    // (the caller's contract).
    let w = unsafe { *(data.add(at as usize) as *const u128) };
    [
        w as u32,
        (w >> 32) as u32,
        (w >> 64) as u32,
        (w >> 96) as u32,
    ]
}

/// Bytes `s .. s + 16` of the 32 bytes `a` then `b` (little-endian words), `1 <= s < 16`
/// (warp-uniform in [`copy_raw_slice`], so the branch on `s / 4` does not diverge).
#[inline(always)]
pub(super) fn funnel16(a: [u32; 4], b: [u32; 4], s: u32) -> [u32; 4] {
    let w = [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]];
    let pick = |k: usize| [w[k], w[k + 1], w[k + 2], w[k + 3], w[k + 4]];
    let v = match s / 4 {
        0 => pick(0),
        1 => pick(1),
        2 => pick(2),
        _ => pick(3),
    };
    let sh = 8 * (s % 4);
    core::array::from_fn(|i| ((((v[i + 1] as u64) << 32) | v[i] as u64) >> sh) as u32)
}

/// `prmt.b32` with a zero second operand: byte `t` of the result is byte `sel`'s nibble `t`
/// (0-3) of `a`.
#[inline(always)]
pub(super) fn prmt(a: u32, sel: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only byte permute.
    unsafe {
        core::arch::asm!(
            "prmt.b32 {r}, {a}, 0, {s};",
            r = out(reg32) r,
            a = in(reg32) a,
            s = in(reg32) sel,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    r
}

/// The 16 literals of four code bytes `c` (little-endian) of a two-bit slice whose four
/// symbols are the bytes of `sym` (FORMAT.md §5.7): byte `t` of `c` gives literals
/// `4t .. 4t + 4`, its 2-bit codes spread into the nibbles of a [`prmt`] selector.
#[inline(always)]
pub(super) fn expand_codes(sym: u32, c: u32) -> [u32; 4] {
    core::array::from_fn(|t| {
        let b = (c >> (8 * t)) & 0xFF;
        let sel = (b & 3) | (b & 0xC) << 2 | (b & 0x30) << 4 | (b & 0xC0) << 6;
        prmt(sym, sel)
    })
}

/// Reads a varint of at most `two_bit::MAX_VARINT_BYTES` bytes at data-section offset `*at`
/// (below `end`), advancing `at`; `None` when it runs to `end` or is longer.
///
/// # Safety
/// `end <= data_len`.
#[inline(always)]
pub(super) unsafe fn varint4(data: *const u8, at: &mut u64, end: u64) -> Option<u32> {
    let mut v = 0u32;
    for i in 0..crate::two_bit::MAX_VARINT_BYTES {
        if *at >= end {
            return None;
        }
        // SAFETY: *at < end <= data_len.
        let b = unsafe { gb(data, *at as usize) };
        *at += 1;
        v |= ((b & 0x7F) as u32) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// An inclusive sum over the warp's lanes of `v`, wrapping (five rounds of shuffles).
#[inline(always)]
pub(super) fn scan_u32(v: u32, lane: u32) -> u32 {
    let mut v = v;
    let mut d = 1;
    while d < 32 {
        let o = shfl_up(v, d);
        if lane >= d {
            v = v.wrapping_add(o);
        }
        d *= 2;
    }
    v
}

/// This lane's 16 bytes of the data-section bytes `off + 16 lane ..` (the window of 512
/// bytes a warp holds; bytes at or past `off + len` are the section's next bytes or zeros),
/// by aligned 16-byte loads ([`load_src16`]) and the next lane's word (lane 31 loads its
/// own), joined at `off % 16` ([`funnel16`]).
///
/// # Safety
/// `len >= 1`, `off + len <= data_len`, `data` as [`load_src16`] asks; every lane of the warp
/// calls it (shuffles).
#[inline(always)]
pub(super) unsafe fn window16(
    data: *const u8,
    data_len: u64,
    off: u64,
    len: u64,
    lane: u32,
) -> [u32; 4] {
    let s = (off & 15) as u32;
    let abase = off - s as u64;
    // the last aligned word that holds a byte of the region
    let last = (s as u64 + len - 1) / 16;
    let load = |c: u64| -> [u32; 4] {
        if c > last {
            return [0; 4];
        }
        // SAFETY: abase + 16c <= off + len - 1 < data_len (c <= last; the caller's
        // contract); the host pads the data section to a multiple of 16 bytes.
        unsafe { load_src16(data, data_len, abase + 16 * c) }
    };
    let a = load(lane as u64);
    if s == 0 {
        return a;
    }
    let own = if lane == 31 { load(32) } else { [0; 4] };
    let next = a.map(|v| shfl(v, (lane + 1) & 31));
    funnel16(a, if lane == 31 { own } else { next }, s)
}

/// An inclusive sum over the warp's lanes of the 64-bit `v` (five rounds of two shuffles).
#[inline(always)]
pub(super) fn scan_i64(v: i64, lane: u32) -> i64 {
    let mut v = v;
    let mut d = 1;
    while d < 32 {
        let lo = shfl_up(v as u32, d);
        let hi = shfl_up((v as u64 >> 32) as u32, d);
        if lane >= d {
            v += ((hi as u64) << 32 | lo as u64) as i64;
        }
        d *= 2;
    }
    v
}

/// [`expand_two_bit`] in few registers, for the rANS entry points held to 64 (which spilled
/// with it): the codes by byte loads, `rans::RAW_COPY_UNROLL` per lane in flight, each one
/// 4-byte store; the exceptions by lane 0 alone, one after the other, as the reference
/// decoder reads them ([`crate::two_bit::decode`]). A warp barrier orders the codes' stores
/// before the exceptions'.
#[inline(always)]
pub(super) fn expand_two_bit_lean(src: &Sources, info: &SliceInfo, lane: u32) -> Status {
    use crate::rans::RAW_COPY_UNROLL;
    let bad = Status::TwoBitSlice;
    let n = info.n as u64;
    let stored = info.stored as u64;
    let off = info.off;
    let m = n.div_ceil(4);
    // info.pre checked off + stored <= data_len and dst_off + n <= dec_len
    if n == 0 || stored < 4 + 2 + m {
        return bad;
    }
    let data = src.data;
    let codes_at = off + stored - m;
    // SAFETY: off + 4 <= off + stored <= data_len.
    let sym = unsafe { gb_u32(data, off as usize) };
    // SAFETY: the slot holds n bytes rounded up to 16 (`gpu::decoder`), 16-aligned.
    let dst = unsafe { src.decoded.add(info.dst_off as usize) };
    let mut j = lane as u64;
    while j < m {
        // SAFETY: codes_at + j + 32i < codes_at + m = off + stored <= data_len (checked
        // per load).
        let c: [u32; RAW_COPY_UNROLL] = core::array::from_fn(|i| {
            let at = j + 32 * i as u64;
            if at < m {
                (unsafe { gb(data, (codes_at + at) as usize) }) as u32
            } else {
                0
            }
        });
        for (i, &c) in c.iter().enumerate() {
            let at = j + 32 * i as u64;
            if at < m {
                let sel = (c & 3) | (c & 0xC) << 2 | (c & 0x30) << 4 | (c & 0xC0) << 6;
                // SAFETY: 4 * at < n + 3: a 4-aligned word inside the slot (n rounded up
                // to 16).
                unsafe { *(dst.add(4 * at as usize) as *mut u32) = prmt(sym, sel) };
            }
        }
        j += 32 * RAW_COPY_UNROLL as u64;
    }
    // the codes' stores before the exceptions'
    syncwarp();
    let mut fine = true;
    if lane == 0 {
        fine = (|| {
            let mut at = off + 4;
            // SAFETY (every read): below codes_at <= data_len.
            let x = unsafe { varint4(data, &mut at, codes_at) }?;
            let u = unsafe { varint4(data, &mut at, codes_at) }?;
            if u > x || x as u64 > n || u as u64 > codes_at - at {
                return None;
            }
            let values_at = at;
            at += u as u64;
            let (mut g, mut p, mut vi, mut v) = (0i64, -1i64, 0u64, 0u8);
            for k in 0..x {
                let e = unsafe { varint4(data, &mut at, codes_at) }?;
                g += crate::two_bit::gap_delta(e) as i64;
                if g < 1 || g > n as i64 {
                    return None;
                }
                p += g;
                if p >= n as i64 {
                    return None;
                }
                if e & 1 != 0 {
                    if vi >= u as u64 {
                        return None;
                    }
                    v = unsafe { gb(data, (values_at + vi) as usize) };
                    vi += 1;
                } else if k == 0 {
                    return None;
                }
                // SAFETY: 0 <= p < n: inside the slot.
                unsafe { *dst.add(p as usize) = v };
            }
            (at == codes_at && vi == u as u64).then_some(())
        })()
        .is_some();
    }
    if shfl(fine as u32, 0) != 0 {
        Status::Ok
    } else {
        bad
    }
}

/// Expands the two-bit literal slice `info` (FORMAT.md §5.7; [`crate::two_bit::decode`] is
/// the reference) into its decoded slot with the whole warp and returns its status
/// (`TwoBitSlice` for any broken rule; the slot is then partly written, and the block fails).
/// The codes first, as 16-byte words of the data section ([`for_src16`]) that each give 64
/// literals ([`expand_codes`], four 16-byte stores); then the exceptions, after a warp
/// barrier that orders the codes' stores before theirs: the varint area in windows of 512
/// bytes held one 16-byte word per lane ([`window16`]), parsed in rounds of 32 bytes, one
/// byte per lane taken by shuffles, a ballot of the bytes that end a varint, the varints'
/// values by a prefix sum of their bytes' bits ([`scan_u32`]), their gaps and positions by
/// two more ([`scan_i64`]) and their values by a ballot of the new ones; each exception's
/// byte is stored at its position. A 16 KiB block of FASTA (about 200 line feeds) waits on 2
/// memory latencies for its codes and 1 (and one for its one value) for its exceptions.
/// (Byte loads in each round, each varint's earlier bytes read again, measure the same; why
/// one such block alone still takes long in the rANS stage is an open question, see
/// docs/PERFORMANCE.md.)
#[inline(always)]
pub(super) fn expand_two_bit(src: &Sources, info: &SliceInfo, lane: u32) -> Status {
    let bad = Status::TwoBitSlice;
    let n = info.n as u64;
    let stored = info.stored as u64;
    let off = info.off;
    let m = n.div_ceil(4);
    // info.pre checked off + stored <= data_len and dst_off + n <= dec_len
    if n == 0 || stored < 4 + 2 + m {
        return bad;
    }
    let data = src.data;
    let codes_at = off + stored - m;
    // SAFETY: off + 4 <= off + stored <= data_len.
    let sym = unsafe { gb_u32(data, off as usize) };
    // SAFETY: off + 4 <= codes_at <= data_len.
    let Some(h) = (unsafe { two_bit_counts(data, off, codes_at, n) }) else {
        return bad;
    };
    // SAFETY: the slot holds n bytes rounded up to 16 (`gpu::decoder`), 16-aligned.
    let dst = unsafe { src.decoded.add(info.dst_off as usize) };
    // SAFETY: codes_at + m = off + stored <= data_len.
    unsafe {
        for_src16(src, codes_at, m, lane, |j, c| {
            for (q, &w) in c.iter().enumerate() {
                let at = 64 * j + 16 * q as u64;
                if at < n {
                    // SAFETY: a 16-byte word that starts below n lies in the slot (above).
                    *(dst.add(at as usize) as *mut u128) = join16(expand_codes(sym, w));
                }
            }
        })
    };
    // the codes' stores before the exceptions' (which may hit the same words)
    syncwarp();
    // SAFETY: h from two_bit_counts (codes_at <= data_len); dst holds n bytes.
    if unsafe { two_bit_exceptions(data, src.data_len, &h, n, dst, lane) } {
        Status::Ok
    } else {
        bad
    }
}

/// The counts of a two-bit slice (FORMAT.md §5.7) that starts at data-section offset `off`
/// and whose codes start at `codes_at`, for `n` literals: `x` and `u` and where the values,
/// the exception varints and the codes lie, or `None` where a count's varint is longer than
/// `two_bit::MAX_VARINT_BYTES` or runs into the codes, or `u <= x <= n` or the values'
/// room fails (as [`crate::two_bit::head`]). The eight bytes after the symbols are loaded at
/// once (both varints lie in them), so the counts cost one memory latency.
///
/// # Safety
/// `off + 4 <= codes_at <= data_len`.
#[inline(always)]
pub(super) unsafe fn two_bit_counts(
    data: *const u8,
    off: u64,
    codes_at: u64,
    n: u64,
) -> Option<TwoBitAreas> {
    const _: () = assert!(2 * crate::two_bit::MAX_VARINT_BYTES <= 8);
    let mut w = 0u64;
    for i in 0..8u64 {
        let at = off + 4 + i;
        // a byte past the counts' room reads as a continuation byte: a varint that runs
        // into the codes then fails as too long or, at the latest, after its fourth byte
        // SAFETY: at < codes_at <= data_len.
        let b = if at < codes_at {
            unsafe { gb(data, at as usize) }
        } else {
            0x80
        };
        w |= (b as u64) << (8 * i);
    }
    let mut at = 0u32;
    let mut leb = || {
        let mut v = 0u32;
        for i in 0..crate::two_bit::MAX_VARINT_BYTES {
            let b = (w >> (8 * at)) as u32 & 0xFF;
            at += 1;
            v |= (b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let x = leb()?;
    let u = leb()?;
    let values_at = off + 4 + at as u64;
    // (values_at <= codes_at: the varints' bytes lay before the codes)
    if u > x || x as u64 > n || values_at > codes_at || u as u64 > codes_at - values_at {
        return None;
    }
    Some(TwoBitAreas {
        x,
        u,
        values_at,
        exc_at: values_at + u as u64,
        codes_at,
    })
}

/// Where a two-bit slice's parts lie in the data section ([`two_bit_counts`]).
pub(super) struct TwoBitAreas {
    /// Exceptions.
    pub(super) x: u32,
    /// Exception values.
    pub(super) u: u32,
    /// Offset of the first exception value.
    pub(super) values_at: u64,
    /// Offset of the first exception varint.
    pub(super) exc_at: u64,
    /// Offset of the codes (the end of the varints).
    pub(super) codes_at: u64,
}

/// Stores the exceptions of a two-bit slice (FORMAT.md §5.7; areas `h` in the data section
/// `data` of `data_len` bytes) into its `n` literals at `dst` (global or shared memory, the
/// codes already expanded there and ordered before these stores) with the whole warp;
/// false (warp-uniform) for any broken rule, with none of the failing round's exceptions
/// stored. The varint area in windows of 512 bytes held one 16-byte word per lane
/// ([`window16`]), parsed in rounds of 32 bytes, one byte per lane taken by shuffles, a
/// ballot of the bytes that end a varint, the varints' values by a prefix sum of their
/// bytes' bits ([`scan_u32`]), their gaps and positions by two more ([`scan_i64`]) and
/// their values by a ballot of the new ones; each exception's byte is stored at its
/// position.
///
/// # Safety
/// `h` from [`two_bit_counts`] with `h.codes_at <= data_len`, `data` as [`load_src16`] asks;
/// `dst` holds `n` bytes; every lane of the warp calls it.
#[inline(always)]
pub(super) unsafe fn two_bit_exceptions(
    data: *const u8,
    data_len: u64,
    h: &TwoBitAreas,
    n: u64,
    dst: *mut u8,
    lane: u32,
) -> bool {
    let (x, u, values_at, exc_at, codes_at) = (h.x, h.u, h.values_at, h.exc_at, h.codes_at);
    let below = (1u32 << lane) - 1;
    // carried from round to round: exceptions seen, the last gap and position, values taken,
    // the last value, the offset of the last varint's end
    let (mut k0, mut g0, mut p0, mut v0, mut val0) = (0u32, 0i64, -1i64, 0u32, 0u32);
    let mut end0 = exc_at.wrapping_sub(1);
    // the value bits of the varint bytes after the last end, carried into the next round
    let mut partial = 0u32;
    // the varint area in windows of 512 bytes, one 16-byte word per lane ([`window16`]: one
    // memory latency a window), each round's 32 bytes taken from the words by shuffles
    let mut wbase = exc_at;
    let mut w = [0u32; 4];
    let mut base = exc_at;
    while base < codes_at {
        if base == exc_at || base - wbase >= 512 {
            wbase = base;
            // SAFETY: base < codes_at <= data_len; every lane calls it.
            w = unsafe { window16(data, data_len, base, codes_at - base, lane) };
        }
        let i = (base - wbase) as u32 + lane;
        let ws = w.map(|v| shfl(v, i >> 4));
        let word = match (i >> 2) & 3 {
            0 => ws[0],
            1 => ws[1],
            2 => ws[2],
            _ => ws[3],
        };
        let pos = base + lane as u64;
        let inside = pos < codes_at;
        let byte = if inside {
            (word >> (8 * (i & 3))) & 0xFF
        } else {
            0x80
        };
        let ends = ballot(inside && byte & 0x80 == 0);
        let mine = ends & (1 << lane) != 0;
        // the varint holding this byte starts after the previous end (this round's or
        // before); its value is the sum of its bytes' 7 bits at their places (a prefix sum
        // over the round, less the sum up to the previous end, or plus the carried part)
        let prev_lane = if ends & below != 0 {
            31 - (ends & below).leading_zeros()
        } else {
            32
        };
        let prev = if prev_lane < 32 {
            base + prev_lane as u64
        } else {
            end0
        };
        let idx = pos.wrapping_sub(prev).wrapping_sub(1);
        let part = if inside && (idx as usize) < crate::two_bit::MAX_VARINT_BYTES {
            (byte & 0x7F) << (7 * idx as u32)
        } else {
            0
        };
        let sums = scan_u32(part, lane);
        let before = shfl(sums, prev_lane & 31);
        let e = if prev_lane < 32 {
            sums.wrapping_sub(before)
        } else {
            sums.wrapping_add(partial)
        };
        let total = shfl(sums, 31);
        partial = if ends != 0 {
            total.wrapping_sub(shfl(sums, 31 - ends.leading_zeros()))
        } else {
            partial.wrapping_add(total)
        };
        let k = k0 + (ends & below).count_ones();
        let counted = mine && k < x;
        // (idx is the end byte's place: a fifth byte or later is a varint too long)
        let mut ok = !counted || (idx as usize) < crate::two_bit::MAX_VARINT_BYTES;
        let d = if counted && ok {
            crate::two_bit::gap_delta(e) as i64
        } else {
            0
        };
        let g = g0 + scan_i64(d, lane);
        ok &= !counted || (g >= 1 && g <= n as i64);
        // (a lane after one whose gap failed may see any sum, negative too: p >= 0 is
        // checked here, and no lane stores unless every exception of the round passed)
        let p = p0 + scan_i64(if counted { g } else { 0 }, lane);
        ok &= !counted || (p >= 0 && p < n as i64);
        let new = counted && e & 1 != 0;
        let news = ballot(new);
        let vi = v0 + (news & below).count_ones();
        ok &= !new || vi < u;
        ok &= !counted || new || k > 0;
        // this lane's value: its own (new) or the last new one's before it, or carried
        // SAFETY: vi < u: values_at + vi < exc_at <= codes_at.
        let mut val = if new && ok {
            (unsafe { gb(data, (values_at + vi as u64) as usize) }) as u32
        } else {
            0
        };
        let from = news & (below | 1 << lane);
        let src_lane = if from != 0 {
            31 - from.leading_zeros()
        } else {
            0
        };
        let got = shfl(val, src_lane);
        if !new {
            val = if from != 0 { got } else { val0 };
        }
        if ballot(counted && !ok) != 0 {
            return false;
        }
        if counted {
            // SAFETY: 0 <= p < n (every counted lane passed its checks): inside the slot.
            unsafe { *dst.add(p as usize) = val as u8 };
        }
        // carry the round's last exception (the highest counted lane)
        let cmask = ballot(counted);
        if cmask != 0 {
            let last = 31 - cmask.leading_zeros();
            g0 = shfl((g as u64) as u32, last) as i64
                | ((shfl((g as u64 >> 32) as u32, last) as i64) << 32);
            p0 = shfl((p as u64) as u32, last) as i64
                | ((shfl((p as u64 >> 32) as u32, last) as i64) << 32);
            val0 = shfl(val, last);
        }
        v0 += news.count_ones();
        k0 += ends.count_ones();
        if ends != 0 {
            end0 = base + 31 - ends.leading_zeros() as u64;
        }
        base += 32;
    }
    // exactly x varints, ending where the codes begin; exactly u of them new
    let tail_ok = if x == 0 {
        exc_at == codes_at
    } else {
        end0 == codes_at - 1
    };
    k0 == x && v0 == u && tail_ok
}
