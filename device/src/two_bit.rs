//! Two-bit literal slices (FORMAT.md §5.7): a block's literals as 2-bit
//! codes of four bytes, plus a list of *exceptions*, the literals that are none of the four
//! (a FASTA file's line feeds, an `N`). No rANS chain: every literal is one code, so a GPU
//! warp expands a slice at memory speed (`dense/`, `expand_two_bit`) where a rANS slice
//! takes one dependent step per symbol and lane.
//!
//! Layout of a slice of `n >= 1` literals, `m = ceil(n / 4)` (all offsets from its start):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | `sym[0..4]`: the bytes codes 0-3 stand for |
//! | varint | `x`: the number of exceptions, `x <= n` |
//! | varint | `u`: the number of exception values, `u <= x` |
//! | `u` | the exception values |
//! | `x` varints | one per exception: `zigzag(gap - previous gap) << 1 | new` |
//! | `m` | the codes: literal `i`'s at bits `2 (i % 4) ..` of byte `i / 4` |
//!
//! Varints are LEB128 of at most [`MAX_VARINT_BYTES`] bytes (§4.2's encoding). Exception `k`
//! lies at `p_k = p_{k-1} + g_k` with `g_k = g_{k-1} + d_k` (`p_{-1} = -1`, `g_{-1} = 0`,
//! `d_k` the varint's zigzag part), and `1 <= g_k`, `p_k < n`; its byte is the next
//! exception value when the varint's bit 0 (`new`) is set, else exception `k - 1`'s (the
//! first exception must be new). The varints end exactly where the codes begin, and exactly
//! `u` of them are new. A literal at an exception is the exception's byte; its code is
//! ignored. Gaps are coded as differences so that a periodic exception (a line feed every
//! 61 or 81 bytes) costs one byte.

use crate::status::Status;

/// Most bytes of a varint in a two-bit slice: values below 2^28.
pub const MAX_VARINT_BYTES: usize = 4;

/// Where the parts of a two-bit slice lie (offsets from the slice's start), from
/// [`head`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// `sym[0..4]` as a little-endian word (byte `c` is what code `c` stands for).
    pub sym: u32,
    /// Number of exceptions `x`.
    pub exceptions: u32,
    /// Number of exception values `u`.
    pub values: u32,
    /// Offset of the first exception value.
    pub values_at: usize,
    /// Offset of the first exception varint (`values_at + u`).
    pub exceptions_at: usize,
    /// Offset of the codes (`slice.len() - ceil(n / 4)`).
    pub codes_at: usize,
}

/// The 16 bytes `v` (byte `i` of the little-endian word is position `i`) with a gap opened
/// at every set bit `p` of `mask` (bits 0-15), lowest first: the bytes from `p` on move up
/// one position and the top byte drops out. Applied to the literals of 16 consecutive codes,
/// it puts code `k` at the `k`-th position whose bit is clear, as a slice with runs places
/// them (FORMAT.md §5.8 rule 2); the bytes left at the set positions are unspecified (the
/// runs' values go there). Work: one step per set bit.
#[inline(always)]
pub fn open_gaps(v: u128, mut mask: u32) -> u128 {
    let (mut lo, mut hi) = (v as u64, (v >> 64) as u64);
    mask &= 0xFFFF;
    while mask != 0 {
        let p = mask.trailing_zeros();
        if p < 8 {
            let keep = (1u64 << (8 * p)) - 1;
            hi = hi << 8 | lo >> 56;
            lo = lo & keep | (lo & !keep) << 8;
        } else {
            let keep = (1u64 << (8 * (p - 8))) - 1;
            hi = hi & keep | (hi & !keep) << 8;
        }
        mask &= mask - 1;
    }
    lo as u128 | (hi as u128) << 64
}

/// Reads a varint of at most [`MAX_VARINT_BYTES`] bytes at `s[*at..end]`, advancing `at`.
#[inline]
pub fn varint(s: &[u8], at: &mut usize, end: usize) -> Result<u32, Status> {
    let mut v = 0u32;
    for i in 0..MAX_VARINT_BYTES {
        if *at >= end {
            return Err(Status::TwoBitSlice);
        }
        let b = s[*at];
        *at += 1;
        v |= ((b & 0x7F) as u32) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Status::TwoBitSlice)
}

/// The value of the varint that ends with byte `b[0]` (bit 7 clear), from it and the bytes
/// before it, `b[i]` the `i`-th before (a byte before the varint's area given as 0, which
/// ends a varint), and whether it is longer than [`MAX_VARINT_BYTES`] (`b[4]` a continuation
/// byte too): how a GPU thread that holds one byte of a run of varints reads the varint it
/// ends without the ones before (`dense/`).
#[inline(always)]
pub fn varint_ending_with(b: [u32; 5]) -> (u32, bool) {
    const _: () = assert!(MAX_VARINT_BYTES == 4);
    if b[1] < 0x80 {
        (b[0], false)
    } else if b[2] < 0x80 {
        (b[1] & 0x7F | b[0] << 7, false)
    } else if b[3] < 0x80 {
        (b[2] & 0x7F | (b[1] & 0x7F) << 7 | b[0] << 14, false)
    } else {
        let v = b[3] & 0x7F | (b[2] & 0x7F) << 7 | (b[1] & 0x7F) << 14 | b[0] << 21;
        (v, b[4] >= 0x80)
    }
}

/// The gap difference `d_k` of an exception varint `e` (its bits above bit 0, zigzag-coded).
#[inline]
pub fn gap_delta(e: u32) -> i32 {
    let z = e >> 1;
    (z >> 1) as i32 ^ -((z & 1) as i32)
}

/// The zigzag code of a gap difference: 0, -1, 1, -2, ... as 0, 1, 2, 3, ...
#[inline]
pub fn zigzag(d: i32) -> u32 {
    ((d << 1) ^ (d >> 31)) as u32
}

/// The four literals a code byte stands for, as a little-endian word (`sym` as in [`Head`]).
#[inline]
pub fn expand_byte(sym: u32, b: u8) -> u32 {
    let mut w = 0u32;
    for t in 0..4 {
        let c = (b >> (2 * t)) & 3;
        w |= ((sym >> (8 * c)) & 0xFF) << (8 * t);
    }
    w
}

/// Checks the head of a two-bit slice `s` of `n` literals: `n >= 1`, room for the symbols,
/// both counts and the codes, `u <= x <= n`, the values before the codes.
pub fn head(s: &[u8], n: usize) -> Result<Head, Status> {
    let m = n.div_ceil(4);
    if n == 0 || s.len() < 4 + m {
        return Err(Status::TwoBitSlice);
    }
    let codes_at = s.len() - m;
    let mut at = 4;
    let x = varint(s, &mut at, codes_at)?;
    let u = varint(s, &mut at, codes_at)?;
    if u > x || x as usize > n || u as usize > codes_at - at {
        return Err(Status::TwoBitSlice);
    }
    Ok(Head {
        sym: u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        exceptions: x,
        values: u,
        values_at: at,
        exceptions_at: at + u as usize,
        codes_at,
    })
}

/// Decodes the two-bit slice `s` into `out` (its `n = out.len()` literals): the reference
/// decoder of FORMAT.md §5.7, used by the CPU decoders and the lane kernel. Fails with
/// `TwoBitSlice` on any broken rule, with `out` then partly written.
pub fn decode(s: &[u8], out: &mut [u8]) -> Result<(), Status> {
    let n = out.len();
    let h = head(s, n)?;
    let mut lut = [0u32; 256];
    for (b, w) in lut.iter_mut().enumerate() {
        *w = expand_byte(h.sym, b as u8);
    }
    let codes = &s[h.codes_at..];
    let (quads, rest) = out.as_chunks_mut::<4>();
    for (c, &b) in quads.iter_mut().zip(codes) {
        *c = lut[b as usize].to_le_bytes();
    }
    if !rest.is_empty() {
        let w = lut[codes[n / 4] as usize].to_le_bytes();
        let k = rest.len();
        rest.copy_from_slice(&w[..k]);
    }
    let (mut g, mut p) = (0i64, -1i64);
    let mut at = h.exceptions_at;
    let mut vi = 0usize;
    let mut v = 0u8;
    for k in 0..h.exceptions {
        let e = varint(s, &mut at, h.codes_at)?;
        g += gap_delta(e) as i64;
        if g < 1 || g > n as i64 {
            return Err(Status::TwoBitSlice);
        }
        p += g;
        if p >= n as i64 {
            return Err(Status::TwoBitSlice);
        }
        if e & 1 != 0 {
            if vi >= h.values as usize {
                return Err(Status::TwoBitSlice);
            }
            v = s[h.values_at + vi];
            vi += 1;
        } else if k == 0 {
            return Err(Status::TwoBitSlice);
        }
        out[p as usize] = v;
    }
    if at != h.codes_at || vi != h.values as usize {
        return Err(Status::TwoBitSlice);
    }
    Ok(())
}

/// Most runs of a slice with runs (FORMAT.md §5.8).
pub const MAX_RUNS: usize = 128;
/// Most lower-case intervals of a slice with runs (FORMAT.md §5.8).
pub const MAX_INTERVALS: usize = 256;
/// Most bytes of a slice with runs before its codes (FORMAT.md §5.8): the GPU parses them
/// four a thread in one pass (`dense/`, `expand_own_runs`).
pub const RUNS_HEAD_CAP: usize = 1024;

/// Decodes a two-bit literal slice with runs `s` into `out` (its `n = out.len()` literals),
/// the reference decoder of FORMAT.md §5.8, used by the CPU decoders and the lane kernel.
/// Layout, offsets from the slice's start:
///
/// | bytes | field |
/// |---|---|
/// | 4 | `sym[0..4]` |
/// | varint | `r`, the runs, at most [`MAX_RUNS`] |
/// | varint | `c`, the lower-case intervals, at most [`MAX_INTERVALS`] |
/// | `r` | the runs' values, one byte each |
/// | `3r` varints | per run: `gap` (its first position minus the previous run's; the first run's: its first position), `stride - 1`, `count - 1` |
/// | `2c` varints | per interval: `gap` (its start minus the previous interval's end; the first: its start), `len - 1` |
/// | `ceil(m / 4)` | the codes of the `m` literals outside every run, in order |
///
/// Run `k` covers the positions `first + j * stride`, `j < count`, each below `n`, with
/// `stride <= n`; no position lies in two runs. The literal at a run position is the run's
/// value; the literals outside every run are `sym[code]` of the codes in order. Then every
/// literal of an interval (`start + len <= n`) that is an upper-case ASCII letter becomes
/// its lower-case form. The varints (LEB128, at most [`MAX_VARINT_BYTES`] bytes) end exactly
/// where the codes begin, at most [`RUNS_HEAD_CAP`] bytes into the slice; bits of the last
/// code byte past code `m - 1` are ignored. Any broken rule is `TwoBitSlice`, with `out` then
/// partly written. Work: `O(n + r + c)`.
pub fn decode_runs(s: &[u8], out: &mut [u8]) -> Result<(), Status> {
    let n = out.len();
    if n == 0 || s.len() < 4 {
        return Err(Status::TwoBitSlice);
    }
    let sym = [s[0], s[1], s[2], s[3]];
    let end = s.len().min(RUNS_HEAD_CAP);
    let mut at = 4;
    let r = varint(s, &mut at, end)? as usize;
    let c = varint(s, &mut at, end)? as usize;
    if r > MAX_RUNS || c > MAX_INTERVALS || r > end - at {
        return Err(Status::TwoBitSlice);
    }
    let values_at = at;
    at += r;
    // 1: mark the run positions (1), the others 0, refusing overlaps
    out.fill(0);
    let runs_at = at;
    let (mut first, mut marked) = (0usize, 0usize);
    for _ in 0..r {
        first += varint(s, &mut at, end)? as usize;
        let stride = varint(s, &mut at, end)? as usize + 1;
        let count = varint(s, &mut at, end)? as usize + 1;
        if first >= n || stride > n || (count - 1) > (n - 1 - first) / stride {
            return Err(Status::TwoBitSlice);
        }
        for j in 0..count {
            let p = first + j * stride;
            if out[p] != 0 {
                return Err(Status::TwoBitSlice);
            }
            out[p] = 1;
        }
        marked += count;
    }
    let intervals_at = at;
    for _ in 0..c {
        varint(s, &mut at, end)?;
        varint(s, &mut at, end)?;
    }
    let m = n - marked;
    if s.len() - at != m.div_ceil(4) {
        return Err(Status::TwoBitSlice);
    }
    // 2: the codes, in order, at the unmarked positions
    let codes = &s[at..];
    let mut k = 0usize;
    for o in out.iter_mut() {
        if *o == 0 {
            *o = sym[((codes[k / 4] >> (2 * (k % 4))) & 3) as usize];
            k += 1;
        } else {
            *o = 0;
        }
    }
    // 3: the runs' values (the head was checked above)
    let (mut at, mut first) = (runs_at, 0usize);
    for v in &s[values_at..values_at + r] {
        first += varint(s, &mut at, end)? as usize;
        let stride = varint(s, &mut at, end)? as usize + 1;
        let count = varint(s, &mut at, end)? as usize + 1;
        for j in 0..count {
            out[first + j * stride] = *v;
        }
    }
    // 4: lower case
    let (mut at, mut start) = (intervals_at, 0usize);
    for _ in 0..c {
        start += varint(s, &mut at, end)? as usize;
        let len = varint(s, &mut at, end)? as usize + 1;
        if start > n || len > n - start {
            return Err(Status::TwoBitSlice);
        }
        for o in &mut out[start..start + len] {
            o.make_ascii_lowercase();
        }
        start += len;
    }
    Ok(())
}
