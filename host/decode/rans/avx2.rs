//! The AVX2 row loops of the fast rANS slice decoder (x86-64, used when the CPU has AVX2).

use super::{rows_fit, SliceTables, States};
use crate::device::format::{DecodeTable, MAX_LANES, PROB_BITS, PROB_SCALE, RANS_L};
use std::arch::x86_64::*;

/// Word-rank rows for 8 lanes split into slices of `width` lanes (8: one slice, 4: two):
/// `t[m][j]` is, for renormalisation mask `m`, the index lane `j` takes among the next
/// words, which come slice by slice (`width` words reserved per slice): the slice's first
/// word index plus the number of set bits of `m` below `j` within lane `j`'s slice.
const fn word_ranks(width: usize) -> [[u32; 8]; 256] {
    let mut t = [[0u32; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut j = 0;
        let mut k = 0u32;
        while j < 8 {
            if j % width == 0 {
                k = j as u32;
            }
            t[m][j] = k;
            if m >> j & 1 == 1 {
                k += 1;
            }
            j += 1;
        }
        m += 1;
    }
    t
}

/// `PERM[m][j]`: for renormalisation mask `m` of 8 lanes, the index among the next 8 words
/// of the word lane `j` takes (the number of set bits of `m` below bit `j`).
static PERM: [[u32; 8]; 256] = word_ranks(8);

/// The eight table entries `slots[idx[j]]`.
///
/// Eight scalar loads with the indices taken out of the vector 64 bits at a time: faster than
/// `vpgatherdd` on the CPUs measured, and the rANS loop is bound by this lookup.
///
/// # Safety
/// Every lane of `idx` must be a valid index into the 4096-entry table at `slots`.
#[inline(always)]
unsafe fn lookup(slots: *const i32, idx: __m256i) -> __m256i {
    // SAFETY: forwarded; both halves index the same table.
    unsafe { lookup2(slots, slots, idx) }
}

/// `_mm256_movemask_ps` bits of the lanes a row's last vector uses: all 8, or the low
/// `last` (a slice of `8 * (V - 1) + last` lanes).
#[inline(always)]
fn last_vector_mask(last: usize) -> usize {
    (1usize << last) - 1
}

/// Whole rows with `8 * (V - 1) + LAST` lanes (`LAST` 4 or 8), eight lanes per AVX2
/// vector. With `LAST` 4 the last vector's upper four lanes are idle: their states
/// change but are never read (the slice's states are its first lanes, [`States`] holds
/// 32), their words are masked out of the renormalisation, and their four symbol bytes,
/// stored past the row's end, are overwritten by the next row (a row runs only while
/// `8 * V` output bytes and words are left).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
#[allow(clippy::too_many_arguments)]
pub unsafe fn rows<const V: usize, const LAST: usize, const SPLIT: bool>(
    states: &mut States,
    words: &[u8],
    wp: &mut usize,
    words2: &[u8],
    wp2: &mut usize,
    table: &DecodeTable,
    out: &mut [u8],
    max_rows: usize,
) -> usize {
    const { assert!(V >= 1 && V <= 8 && (LAST == 4 || LAST == 8)) };
    // a wide slice (FORMAT.md §5.4): 64 lanes, vectors 4-7 on the second word area
    const { assert!(!SPLIT || (V == 8 && LAST == 8)) };
    let n = 8 * (V - 1) + LAST;
    let nwords = [words.len() / 2, words2.len() / 2];
    let mut x = [_mm256_setzero_si256(); V];
    for (v, xv) in x.iter_mut().enumerate() {
        // SAFETY: lanes 8v..8v+8 lie inside the 64-entry state array (V <= 8).
        *xv = unsafe { _mm256_loadu_si256(states.as_ptr().add(8 * v) as *const __m256i) };
    }
    let mask12 = _mm256_set1_epi32((PROB_SCALE - 1) as i32);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_si256();
    // byte 0 of each 32-bit lane to the low 4 bytes of each 128-bit half
    let pick = _mm256_setr_epi8(
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    let slots = table.slots.as_ptr() as *const i32;
    let wbase = [words.as_ptr(), words2.as_ptr()];
    let mut w = [*wp, *wp2];
    let mut done = 0usize;
    let limit = out.len().min(max_rows.saturating_mul(n));
    while limit - done >= 8 * V && row_fits::<V, SPLIT>(nwords, w) {
        for (vi, xv) in x.iter_mut().enumerate() {
            let a = area::<SPLIT>(vi);
            let xs = *xv;
            // SAFETY: every index is masked to PROB_SCALE - 1 < slots.len().
            let e = unsafe { lookup(slots, _mm256_and_si256(xs, mask12)) };
            let freq = _mm256_add_epi32(
                _mm256_and_si256(_mm256_srli_epi32::<8>(e), _mm256_set1_epi32(0xFFF)),
                one,
            );
            let v = _mm256_add_epi32(
                _mm256_mullo_epi32(freq, _mm256_srli_epi32::<12>(xs)),
                _mm256_srli_epi32::<20>(e),
            );
            // lanes below RANS_L = 2^16 have a zero upper half
            const _: () = assert!(RANS_L == 1 << 16);
            let need = _mm256_cmpeq_epi32(_mm256_srli_epi32::<16>(v), zero);
            let used = if vi == V - 1 {
                last_vector_mask(LAST)
            } else {
                0xFF
            };
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(need)) as usize & used;
            // SAFETY: the row started with at least 8 * V words left in its area (32 in
            // each of a wide slice's: row_fits) and the vectors before this one in that
            // area took at most 8 each, so w + 8 <= nwords: the 16-byte load stays inside
            // the area.
            let raw = unsafe { _mm_loadu_si128(wbase[a].add(2 * w[a]) as *const __m128i) };
            // SAFETY: m < 256 indexes PERM; the row is 32 bytes.
            let perm = unsafe { _mm256_loadu_si256(PERM.as_ptr().add(m) as *const __m256i) };
            let wv = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(raw), perm);
            let renorm = _mm256_or_si256(_mm256_slli_epi32::<16>(v), wv);
            // (an idle lane may take a word into its state here; it is never read)
            *xv = _mm256_blendv_epi8(v, renorm, need);
            w[a] += m.count_ones() as usize;
            let syms = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(e, pick), join);
            // SAFETY: the row started with 8 * V bytes left before limit <= out.len()
            // (loop condition) and this vector's 8 bytes start at most 8 * (V - 1) in.
            unsafe {
                _mm_storel_epi64(
                    out.as_mut_ptr().add(done) as *mut __m128i,
                    _mm256_castsi256_si128(syms),
                )
            };
            done += if vi == V - 1 { LAST } else { 8 };
        }
    }
    for (v, xv) in x.iter().enumerate() {
        // SAFETY: as for the loads above.
        unsafe { _mm256_storeu_si256(states.as_mut_ptr().add(8 * v) as *mut __m256i, *xv) };
    }
    (*wp, *wp2) = (w[0], w[1]);
    done
}

/// The word area of vector `v` of a row (lanes `8v..8v+8`): the second one from lane 32
/// on in a wide slice (`SPLIT`, FORMAT.md §5.4), else the only one.
#[inline(always)]
fn area<const SPLIT: bool>(v: usize) -> usize {
    (SPLIT && v >= 4) as usize
}

/// Whether a whole row of `8 * V` lanes fits in the words left (`nwords` less the next
/// word `w`, per area): [`rows_fit`] for the row, or for each half of a wide slice's.
#[inline(always)]
fn row_fits<const V: usize, const SPLIT: bool>(nwords: [usize; 2], w: [usize; 2]) -> bool {
    if SPLIT {
        rows_fit(nwords[0], w[0], 32) && rows_fit(nwords[1], w[1], 32)
    } else {
        rows_fit(nwords[0], w[0], 8 * V)
    }
}

/// Whole rows with `8 * (V - 1) + LAST` lanes under a context pair (FORMAT.md §5.4), as
/// [`rows`] with each lane's slot index taking bit `ctx_bit` of the lane's previous
/// symbol as bit 12 (the pair's two tables lie side by side: [`super::pair_slots`]).
/// `prev` holds each lane's last symbol and is updated.
///
/// # Safety
/// The CPU must support AVX2; `tables` must be a context pair.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
#[allow(clippy::too_many_arguments)]
pub unsafe fn ctx_rows<const V: usize, const LAST: usize, const SPLIT: bool>(
    tables: SliceTables<'_>,
    prev: &mut [u8; MAX_LANES as usize],
    states: &mut States,
    words: &[u8],
    wp: &mut usize,
    words2: &[u8],
    wp2: &mut usize,
    out: &mut [u8],
    max_rows: usize,
) -> usize {
    const { assert!(V >= 1 && V <= 8 && (LAST == 4 || LAST == 8)) };
    const { assert!(!SPLIT || (V == 8 && LAST == 8)) };
    let n = 8 * (V - 1) + LAST;
    let nwords = [words.len() / 2, words2.len() / 2];
    let slots = super::pair_slots(tables).as_ptr() as *const i32;
    let mut x = [_mm256_setzero_si256(); V];
    // per vector: the lanes' previous symbols in the low byte of each 32-bit lane (the
    // table entries of the last row have their symbol there too)
    let mut pe = [_mm256_setzero_si256(); V];
    for v in 0..V {
        // SAFETY: lanes 8v..8v+8 lie inside the 64-entry state and prev arrays (V <= 8).
        unsafe {
            x[v] = _mm256_loadu_si256(states.as_ptr().add(8 * v) as *const __m256i);
            pe[v] =
                _mm256_cvtepu8_epi32(_mm_loadl_epi64(prev.as_ptr().add(8 * v) as *const __m128i));
        }
    }
    // bit ctx_bit of the symbol moved to bit 12: every other bit of an entry lands
    // below 12 (symbol bits under ctx_bit) or at 13 and above (entry bits from 8 on)
    // (the context bit modulo 8, as every decoder reads it: `SliceTables::ctx_bit`)
    let to12 = _mm_cvtsi32_si128((PROB_BITS - (tables.ctx_bit & 7)) as i32);
    let bit12 = _mm256_set1_epi32(PROB_SCALE as i32);
    let mask12 = _mm256_set1_epi32((PROB_SCALE - 1) as i32);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_si256();
    let pick = _mm256_setr_epi8(
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    let wbase = [words.as_ptr(), words2.as_ptr()];
    let mut w = [*wp, *wp2];
    let mut done = 0usize;
    let limit = out.len().min(max_rows.saturating_mul(n));
    while limit - done >= 8 * V && row_fits::<V, SPLIT>(nwords, w) {
        for v in 0..V {
            let a = area::<SPLIT>(v);
            let xs = x[v];
            let ctx = _mm256_and_si256(_mm256_sll_epi32(pe[v], to12), bit12);
            let idx = _mm256_or_si256(_mm256_and_si256(xs, mask12), ctx);
            // SAFETY: every index is below 2 * PROB_SCALE, the pair's slots.
            let e = unsafe { lookup(slots, idx) };
            pe[v] = e;
            let freq = _mm256_add_epi32(
                _mm256_and_si256(_mm256_srli_epi32::<8>(e), _mm256_set1_epi32(0xFFF)),
                one,
            );
            let nv = _mm256_add_epi32(
                _mm256_mullo_epi32(freq, _mm256_srli_epi32::<12>(xs)),
                _mm256_srli_epi32::<20>(e),
            );
            const _: () = assert!(RANS_L == 1 << 16);
            let need = _mm256_cmpeq_epi32(_mm256_srli_epi32::<16>(nv), zero);
            let used = if v == V - 1 {
                last_vector_mask(LAST)
            } else {
                0xFF
            };
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(need)) as usize & used;
            // SAFETY: as in `rows`: w + 8 <= nwords of the area inside the row.
            let raw = unsafe { _mm_loadu_si128(wbase[a].add(2 * w[a]) as *const __m128i) };
            // SAFETY: m < 256 indexes PERM; the row is 32 bytes.
            let perm = unsafe { _mm256_loadu_si256(PERM.as_ptr().add(m) as *const __m256i) };
            let wv = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(raw), perm);
            let renorm = _mm256_or_si256(_mm256_slli_epi32::<16>(nv), wv);
            x[v] = _mm256_blendv_epi8(nv, renorm, need);
            w[a] += m.count_ones() as usize;
            let syms = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(e, pick), join);
            // SAFETY: done + 8 <= limit <= out.len() inside the row (as in `rows`).
            unsafe {
                _mm_storel_epi64(
                    out.as_mut_ptr().add(done) as *mut __m128i,
                    _mm256_castsi256_si128(syms),
                )
            };
            done += if v == V - 1 { LAST } else { 8 };
        }
    }
    for (v, xv) in x.iter().enumerate() {
        // SAFETY: as for the loads above.
        unsafe { _mm256_storeu_si256(states.as_mut_ptr().add(8 * v) as *mut __m256i, *xv) };
    }
    if done > 0 {
        prev[..n].copy_from_slice(&out[done - n..done]);
    }
    (*wp, *wp2) = (w[0], w[1]);
    done
}

/// Whole rows of each of `S` slices with `8 * (VPS - 1) + LAST` lanes each (`LAST` 4 or
/// 8, as in [`rows`]), the slices' rows interleaved (per row: slice 0's vectors, then
/// slice 1's, ...), for as long as every slice has a whole row left and the words for it
/// ([`rows_fit`]). Each slice keeps its
/// own states, word position, table and output; lanes of one slice take words in lane
/// order as in [`rows`].
///
/// # Safety
/// The CPU must support AVX2. Every slice must have `8 * (VPS - 1) + LAST` lanes
/// (asserted); a row runs while every slice has `8 * VPS` words and output bytes left.
// indices run over several parallel per-slice arrays at once
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx2,popcnt")]
pub unsafe fn rows_multi<const S: usize, const VPS: usize, const LAST: usize>(
    decs: [&mut super::SliceDecoder<'_>; S],
) {
    const { assert!(VPS >= 1 && VPS <= 4 && (LAST == 4 || LAST == 8)) };
    let n = 8 * (VPS - 1) + LAST;
    // the last vector's 8-byte store reaches 8 - LAST bytes past its row (see `rows`)
    let slack = super::row_span(n) - n;
    let mut rows = usize::MAX;
    for d in decs.iter() {
        assert!(d.lanes == n, "rows_multi: lane count");
        rows = rows.min(d.left().saturating_sub(slack) / n);
    }
    let mut x = [[_mm256_setzero_si256(); VPS]; S];
    let mut w = [0usize; S];
    let mut nwords = [0usize; S];
    let mut wbase = [std::ptr::null::<u8>(); S];
    let mut slots = [std::ptr::null::<i32>(); S];
    let mut out = [std::ptr::null_mut::<u8>(); S];
    for s in 0..S {
        let d = &mut *decs[s];
        for v in 0..VPS {
            // SAFETY: lanes 8v..8v+8 lie inside the 64-entry state array (8 * VPS <= 32).
            x[s][v] = unsafe { _mm256_loadu_si256(d.states.as_ptr().add(8 * v) as *const __m256i) };
        }
        w[s] = d.wp;
        nwords[s] = d.words.len() / 2;
        wbase[s] = d.words.as_ptr();
        slots[s] = d.table.slots.as_ptr() as *const i32;
        // SAFETY: done <= out.len(); the pointer stays inside (or one past) `out`.
        out[s] = unsafe { d.out.as_mut_ptr().add(d.done) };
    }
    let mask12 = _mm256_set1_epi32((PROB_SCALE - 1) as i32);
    let fmask = _mm256_set1_epi32(0xFFF);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_si256();
    let pick = _mm256_setr_epi8(
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    let mut r = 0;
    'rows: while r < rows {
        for s in 0..S {
            if !rows_fit(nwords[s], w[s], 8 * VPS) {
                break 'rows;
            }
        }
        for s in 0..S {
            for v in 0..VPS {
                let xs = x[s][v];
                // SAFETY: every index is masked to PROB_SCALE - 1 < slots.len().
                let e = unsafe { lookup(slots[s], _mm256_and_si256(xs, mask12)) };
                let freq =
                    _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32::<8>(e), fmask), one);
                let nv = _mm256_add_epi32(
                    _mm256_mullo_epi32(freq, _mm256_srli_epi32::<12>(xs)),
                    _mm256_srli_epi32::<20>(e),
                );
                const _: () = assert!(RANS_L == 1 << 16);
                let need = _mm256_cmpeq_epi32(_mm256_srli_epi32::<16>(nv), zero);
                let used = if v == VPS - 1 {
                    last_vector_mask(LAST)
                } else {
                    0xFF
                };
                let m = _mm256_movemask_ps(_mm256_castsi256_ps(need)) as usize & used;
                // SAFETY: the row started with at least 8 * VPS words left in this slice
                // (rows_fit) and its vectors before this one took at most 8 each, so the
                // 8 words from w lie inside `words`.
                let raw = unsafe { _mm_loadu_si128(wbase[s].add(2 * w[s]) as *const __m128i) };
                // SAFETY: m < 256 indexes PERM; the row is 32 bytes.
                let perm = unsafe { _mm256_loadu_si256(PERM.as_ptr().add(m) as *const __m256i) };
                let wv = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(raw), perm);
                let renorm = _mm256_or_si256(_mm256_slli_epi32::<16>(nv), wv);
                x[s][v] = _mm256_blendv_epi8(nv, renorm, need);
                w[s] += m.count_ones() as usize;
                let syms = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(e, pick), join);
                // SAFETY: r < rows <= (out.len() - done - slack) / n: row r, vector v
                // writes bytes r * n + 8v .. + 8 after `done` (at most r * n + n + slack),
                // inside `out`.
                unsafe {
                    _mm_storel_epi64(
                        out[s].add(r * n + 8 * v) as *mut __m128i,
                        _mm256_castsi256_si128(syms),
                    )
                };
            }
        }
        r += 1;
    }
    for s in 0..S {
        let d = &mut *decs[s];
        for v in 0..VPS {
            // SAFETY: as for the loads above.
            unsafe {
                _mm256_storeu_si256(d.states.as_mut_ptr().add(8 * v) as *mut __m256i, x[s][v])
            };
        }
        d.wp = w[s];
        d.done += r * n;
    }
}

/// `PERM2[m][j]`: for the renormalisation mask `m` of a vector holding two 4-lane slices
/// (lanes 0-3 the first, 4-7 the second), the index of the word lane `j` takes among the
/// first slice's next 4 words (indices 0-3) followed by the second slice's (4-7).
static PERM2: [[u32; 8]; 256] = word_ranks(4);

/// The eight table entries of a vector of two 4-lane slices: lanes 0-3 from `slots_a`,
/// 4-7 from `slots_b` (scalar loads, as [`lookup`]).
///
/// # Safety
/// Every lane of `idx` must be a valid index into the 4096-entry tables.
#[inline(always)]
unsafe fn lookup2(slots_a: *const i32, slots_b: *const i32, idx: __m256i) -> __m256i {
    let lo = _mm256_castsi256_si128(idx);
    let hi = _mm256_extracti128_si256::<1>(idx);
    let q = [
        _mm_cvtsi128_si64(lo) as u64,
        _mm_extract_epi64::<1>(lo) as u64,
        _mm_cvtsi128_si64(hi) as u64,
        _mm_extract_epi64::<1>(hi) as u64,
    ];
    // SAFETY: caller's contract: each 32-bit half of q is an index below 4096.
    let at = |i: usize| unsafe {
        let base = if i < 4 { slots_a } else { slots_b };
        *base.add(if i.is_multiple_of(2) {
            q[i / 2] as u32
        } else {
            (q[i / 2] >> 32) as u32
        } as usize)
    };
    _mm256_setr_epi32(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7))
}

/// Whole rows of `S = 2 * P` slices of 4 lanes each, two slices per AVX2 vector (slice
/// `2v` in lanes 0-3 of vector `v`, slice `2v + 1` in lanes 4-7), each with its own
/// table, words and output, for as long as every slice has a whole row left and the
/// words for it ([`rows_fit`]). Lanes of one slice take words in lane order, as in
/// [`rows`]; the outcome per slice is that of the slice alone.
///
/// # Safety
/// The CPU must support AVX2. Every slice must have 4 lanes (asserted); `S == 2 * P`
/// (checked at compile time).
// indices run over several parallel per-slice arrays at once
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx2,popcnt")]
pub unsafe fn rows_pairs4<const P: usize, const S: usize>(decs: [&mut super::SliceDecoder<'_>; S]) {
    const { assert!(S == 2 * P && P >= 1) };
    let mut rows = usize::MAX;
    for d in decs.iter() {
        assert!(d.lanes == 4, "rows_pairs4: lane count");
        rows = rows.min(d.left() / 4);
    }
    let mut x = [_mm256_setzero_si256(); P];
    let mut w = [0usize; S];
    let mut nwords = [0usize; S];
    let mut wbase = [std::ptr::null::<u8>(); S];
    let mut slots = [std::ptr::null::<i32>(); S];
    let mut out = [std::ptr::null_mut::<u8>(); S];
    for s in 0..S {
        let d = &mut *decs[s];
        w[s] = d.wp;
        nwords[s] = d.words.len() / 2;
        wbase[s] = d.words.as_ptr();
        slots[s] = d.table.slots.as_ptr() as *const i32;
        // SAFETY: done <= out.len(); the pointer stays inside (or one past) `out`.
        out[s] = unsafe { d.out.as_mut_ptr().add(d.done) };
    }
    for v in 0..P {
        let (a, b) = (&decs[2 * v].states, &decs[2 * v + 1].states);
        // SAFETY: lanes 0..4 lie inside each 64-entry state array.
        x[v] = unsafe {
            _mm256_setr_m128i(
                _mm_loadu_si128(a.as_ptr() as *const __m128i),
                _mm_loadu_si128(b.as_ptr() as *const __m128i),
            )
        };
    }
    let mask12 = _mm256_set1_epi32((PROB_SCALE - 1) as i32);
    let fmask = _mm256_set1_epi32(0xFFF);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_si256();
    // byte 0 of each 32-bit lane to the low 4 bytes of each 128-bit half
    let pick = _mm256_setr_epi8(
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let mut r = 0;
    'rows: while r < rows {
        for s in 0..S {
            if !rows_fit(nwords[s], w[s], 4) {
                break 'rows;
            }
        }
        for v in 0..P {
            let (sa, sb) = (2 * v, 2 * v + 1);
            let xs = x[v];
            // SAFETY: every index is masked to PROB_SCALE - 1 < 4096.
            let e = unsafe { lookup2(slots[sa], slots[sb], _mm256_and_si256(xs, mask12)) };
            let freq = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32::<8>(e), fmask), one);
            let nv = _mm256_add_epi32(
                _mm256_mullo_epi32(freq, _mm256_srli_epi32::<12>(xs)),
                _mm256_srli_epi32::<20>(e),
            );
            const _: () = assert!(RANS_L == 1 << 16);
            let need = _mm256_cmpeq_epi32(_mm256_srli_epi32::<16>(nv), zero);
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(need)) as usize;
            // SAFETY: this row started with at least 4 words left in each slice
            // (rows_fit), so the 4 words (8 bytes) from each w lie inside its `words`.
            let raw = unsafe {
                _mm_unpacklo_epi64(
                    _mm_loadl_epi64(wbase[sa].add(2 * w[sa]) as *const __m128i),
                    _mm_loadl_epi64(wbase[sb].add(2 * w[sb]) as *const __m128i),
                )
            };
            // SAFETY: m < 256 indexes PERM2; the row is 32 bytes.
            let perm = unsafe { _mm256_loadu_si256(PERM2.as_ptr().add(m) as *const __m256i) };
            let wv = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(raw), perm);
            let renorm = _mm256_or_si256(_mm256_slli_epi32::<16>(nv), wv);
            x[v] = _mm256_blendv_epi8(nv, renorm, need);
            w[sa] += (m & 0xF).count_ones() as usize;
            w[sb] += (m >> 4).count_ones() as usize;
            let syms = _mm256_shuffle_epi8(e, pick);
            let sym_a = _mm_cvtsi128_si32(_mm256_castsi256_si128(syms)) as u32;
            let sym_b = _mm_cvtsi128_si32(_mm256_extracti128_si256::<1>(syms)) as u32;
            // SAFETY: r < rows <= (out.len() - done) / 4 for both slices: row r writes
            // bytes 4r .. 4r + 4 after `done`, inside each `out`; the outputs are distinct
            // buffers.
            unsafe {
                out[sa].add(4 * r).cast::<u32>().write_unaligned(sym_a);
                out[sb].add(4 * r).cast::<u32>().write_unaligned(sym_b);
            }
        }
        r += 1;
    }
    for v in 0..P {
        let lo = _mm256_castsi256_si128(x[v]);
        let hi = _mm256_extracti128_si256::<1>(x[v]);
        // SAFETY: lanes 0..4 lie inside each 64-entry state array.
        unsafe {
            _mm_storeu_si128(decs[2 * v].states.as_mut_ptr() as *mut __m128i, lo);
            _mm_storeu_si128(decs[2 * v + 1].states.as_mut_ptr() as *mut __m128i, hi);
        }
    }
    for (s, d) in decs.into_iter().enumerate() {
        d.wp = w[s];
        d.done += r * 4;
    }
}

/// Expands packed symbols of `W` literals (2-4) in place, back to front, eight symbols a
/// step from symbol `j` down: their eight entries of the expansion table `slots`, the low
/// `W` bytes of each put together by a byte shuffle and stored in one or two stores of `8 W`
/// bytes in all. Symbols `j - 8 .. j` are read before their literals go to `W (j - 8) ..`,
/// which lies at or above them, and below every literal already stored. Returns the symbol
/// at which it stopped (below 8), whose lower symbols the caller expands.
///
/// # Safety
/// The CPU must support AVX2; `W * j <= out.len()`.
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn expand_packed<const W: usize>(
    out: &mut [u8],
    mut j: usize,
    slots: &[u32; PROB_SCALE as usize],
) -> usize {
    const { assert!(W >= 2 && W <= 4) };
    debug_assert!(W * j <= out.len());
    // per 128-bit half: the low W bytes of each of its four entries, packed from byte 0
    let pick = match W {
        2 => _mm256_setr_epi8(
            0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13, -1,
            -1, -1, -1, -1, -1, -1, -1,
        ),
        _ => _mm256_setr_epi8(
            0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12,
            13, 14, -1, -1, -1, -1,
        ),
    };
    // the halves' packed words side by side: W words of each
    let join = match W {
        2 => _mm256_setr_epi32(0, 1, 4, 5, 0, 0, 0, 0),
        _ => _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 0, 0),
    };
    let base = out.as_mut_ptr();
    while j >= 8 {
        j -= 8;
        // SAFETY: j + 8 <= the caller's j, whose W j bytes lie in `out`; a symbol (a byte)
        // indexes one of the table's PROB_SCALE slots.
        unsafe {
            let at = |i: usize| *slots.get_unchecked(*base.add(j + i) as usize) as i32;
            let v = _mm256_setr_epi32(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
            let dst = base.add(W * j);
            if W == 4 {
                _mm256_storeu_si256(dst as *mut __m256i, v);
            } else {
                let q = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick), join);
                _mm_storeu_si128(dst as *mut __m128i, _mm256_castsi256_si128(q));
                if W == 3 {
                    _mm_storel_epi64(
                        dst.add(16) as *mut __m128i,
                        _mm256_extracti128_si256::<1>(q),
                    );
                }
            }
        }
    }
    j
}
