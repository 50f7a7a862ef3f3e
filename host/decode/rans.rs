//! Fast interleaved rANS slice decoder, bit-for-bit and status-for-status equivalent to
//! [`aceapex_device::rans::decode_slice`] (the reference; FORMAT.md §5).
//!
//! # Why the fast loop cannot change the outcome
//!
//! One decode step maps a state `x` in `[RANS_L, 2^32)` to `x' = freq * (x >> 12) + bias`, with
//! `1 <= x'` and `x' < 2^32`; a lane below `RANS_L` takes exactly one 16-bit word and is then
//! back in `[RANS_L, 2^32)`. So a row of `lanes` symbols (one per lane) consumes at most
//! `lanes` words. The fast loops only start a row when at least `lanes` words are left
//! (`rows_fit`), so inside it the reference's underflow check can never fire and every word
//! read is in bounds; the row is decoded with branchless renormalisation (read the next word
//! unconditionally, keep it only for lanes below `RANS_L`, advance the word index by the
//! number of lanes that took one). The remaining rows (near the end of the word area, or a
//! final partial row) go through `decode_tail`, which checks the words once per row and
//! reports [`Status::RansUnderflow`] exactly when the reference does. The trailer check
//! ([`Status::RansTrailer`]) and the header checks ([`rans::read_states`], shared with the
//! reference) are the same code, so every status matches.
//!
//! Lane counts: the multiples of 4 from 12 to 32 use AVX2 (gathered table loads, a
//! permutation that hands the next words to the lanes that renormalise) when the CPU has it,
//! 12, 20 and 28 with the last 8-lane vector half used; 1, 2, 4, 8, 16 and 32 have scalar
//! loops specialised by a const generic (for 8 lanes the scalar loop measured faster than one
//! AVX2 vector, whose single dependency chain is long), and so do 12, 20, 24 and 28 for a CPU
//! without AVX2; any other count uses the tail loop throughout. A wide slice (more than 32
//! lanes, two word areas, FORMAT.md §5.4) of 64 lanes, the encoder's count, runs as eight
//! AVX2 vectors, the last four on the second area; other wide counts, or 64 without AVX2,
//! the tail loop. Context pairs: AVX2 from 8 lanes on (multiples of 4, and 64), scalar for
//! 1, 2 and 4.
//! Renormalisation is a `select_unpredictable` (cmov): as a branch it mispredicts about every
//! other symbol.
//!
//! Slices of several blocks decoded together ([`SliceDecoder::fast_rows_together`]) advance
//! row by row in lock step: 8-, 12-, 16-, 20- and 24-lane slices one to three AVX2 vectors
//! each, 4-lane slices two per vector (each half with its own table, words and output), 1-
//! and 2-lane slices scalar.

use crate::device::format::{DecodeTable, MAX_LANES, PROB_BITS, PROB_SCALE, RANS_L, WARP_LANES};
use crate::device::rans::{self, SliceTables};
use crate::device::status::Status;

/// Lane states of a slice, indexed by lane.
type States = [u32; MAX_LANES as usize];

/// Decodes a whole rANS slice into `out` (its length is the decoded length).
///
/// Same contract, same output and same [`Status`] on every input as
/// [`aceapex_device::rans::decode_slice`]; on error `out` is unspecified.
pub fn decode_slice(
    slice: &[u8],
    lanes: usize,
    tables: SliceTables<'_>,
    out: &mut [u8],
) -> Result<(), Status> {
    let mut d = SliceDecoder::new(slice, lanes, tables, out)?;
    while d.fast_rows(usize::MAX) > 0 {}
    d.finish()
}

/// One slice being decoded: header read, part of its rows decoded.
///
/// (Advancing the four slices of a block in turn, a few rows each, to overlap the long
/// dependency chains of one- and two-lane slices measured slower than decoding them one
/// after the other: the per-turn overhead outweighed the overlap.)
pub struct SliceDecoder<'a> {
    states: States,
    lanes: usize,
    /// The (first) word area, and its next word.
    words: &'a [u8],
    wp: usize,
    /// A wide slice's second word area, lanes `32..lanes` (FORMAT.md §5.4; empty for other
    /// slices), and its next word. The fast loops run only slices without one.
    words2: &'a [u8],
    wp2: usize,
    /// The first (or only) table.
    table: &'a DecodeTable,
    /// All tables: a context pair's two, or the one (FORMAT.md §5.4).
    tables: SliceTables<'a>,
    /// Per lane, the last symbol it decoded (0 before its first): the context of its next.
    prev: [u8; MAX_LANES as usize],
    /// The decoded bytes; the symbols go to `out[..len]` (packed literals, FORMAT.md §5.6:
    /// expanded into all of `out` by [`Self::finish`]).
    out: &'a mut [u8],
    /// Symbols of the slice: `out.len()`, or `ceil(out.len() / w)` for packed literals.
    len: usize,
    done: usize,
    kernel: Kernel,
}

/// The row loop a slice uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Scalar1,
    Scalar2,
    Scalar4,
    Scalar8,
    /// AVX2 rows of this many lanes: 12 to 32, a multiple of 4 (eight lanes per vector, the
    /// last vector half used for 12, 20 and 28), or 64 (a wide slice, FORMAT.md §5.4: vectors
    /// 4-7 on its second word area).
    #[cfg(target_arch = "x86_64")]
    Avx2(u8),
    Scalar16,
    Scalar32,
    /// Scalar rows of 12, 20, 24 or 28 lanes (the counts AVX2 takes where the CPU has it).
    ScalarWide(u8),
    /// Context pairs (FORMAT.md §5.4): scalar rows with 1, 2 or 4 lanes, AVX2 vectors of
    /// eight lanes from 8 lanes on.
    Ctx1,
    Ctx2,
    Ctx4,
    /// AVX2 rows of a context pair with this many lanes: 8 to 32, a multiple of 4, or 64.
    #[cfg(target_arch = "x86_64")]
    CtxAvx2(u8),
    /// No fast loop: everything goes through the tail loop.
    Tail,
}

impl Kernel {
    /// The loop for a slice of `lanes` lanes decoded with a context pair.
    fn for_context(lanes: usize) -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if ((8..=32).contains(&lanes) && lanes.is_multiple_of(4) || lanes == 64)
            && std::is_x86_feature_detected!("avx2")
        {
            return Kernel::CtxAvx2(lanes as u8);
        }
        match lanes {
            1 => Kernel::Ctx1,
            2 => Kernel::Ctx2,
            4 => Kernel::Ctx4,
            _ => Kernel::Tail,
        }
    }

    fn for_lanes(lanes: usize) -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if lanes >= 12 && lanes.is_multiple_of(4) && std::is_x86_feature_detected!("avx2") {
            return Kernel::Avx2(lanes as u8);
        }
        match lanes {
            1 => Kernel::Scalar1,
            2 => Kernel::Scalar2,
            4 => Kernel::Scalar4,
            8 => Kernel::Scalar8,
            16 => Kernel::Scalar16,
            32 => Kernel::Scalar32,
            12 | 20 | 24 | 28 => Kernel::ScalarWide(lanes as u8),
            _ => Kernel::Tail,
        }
    }
}

impl<'a> SliceDecoder<'a> {
    /// Reads the slice header ([`rans::read_states`]: the reference's header checks).
    pub fn new(
        slice: &'a [u8],
        lanes: usize,
        tables: SliceTables<'a>,
        out: &'a mut [u8],
    ) -> Result<SliceDecoder<'a>, Status> {
        let (states, [words, words2]) = rans::read_states(slice, lanes)?;
        Ok(SliceDecoder {
            states,
            lanes,
            words,
            wp: 0,
            words2,
            wp2: 0,
            table: &tables.tables[0],
            tables,
            prev: [0; MAX_LANES as usize],
            len: tables.symbols(out.len()),
            out,
            done: 0,
            kernel: if lanes > WARP_LANES as usize && lanes != 64 {
                // a wide slice of another count than the encoder's 64: the tail loop
                Kernel::Tail
            } else if tables.has_context() {
                Kernel::for_context(lanes)
            } else {
                Kernel::for_lanes(lanes)
            },
        })
    }

    /// Decodes up to `max_rows` whole rows that cannot run out of words; returns the rows
    /// decoded (0 once the fast loop can go no further).
    #[inline]
    pub fn fast_rows(&mut self, max_rows: usize) -> usize {
        let (st, w, wp, t) = (&mut self.states, self.words, &mut self.wp, self.table);
        // a wide slice's second word area (empty for other slices)
        let (w2, wp2) = (self.words2, &mut self.wp2);
        let out = &mut self.out[self.done..self.len];
        let n = match self.kernel {
            Kernel::Scalar1 => scalar_rows::<1>(st, w, wp, t, out, max_rows),
            Kernel::Scalar2 => scalar_rows::<2>(st, w, wp, t, out, max_rows),
            Kernel::Scalar4 => scalar_rows::<4>(st, w, wp, t, out, max_rows),
            Kernel::Scalar8 => scalar_rows::<8>(st, w, wp, t, out, max_rows),
            Kernel::Scalar16 => scalar_rows::<16>(st, w, wp, t, out, max_rows),
            Kernel::Scalar32 => scalar_rows::<32>(st, w, wp, t, out, max_rows),
            Kernel::ScalarWide(lanes) => match lanes {
                12 => scalar_rows::<12>(st, w, wp, t, out, max_rows),
                20 => scalar_rows::<20>(st, w, wp, t, out, max_rows),
                24 => scalar_rows::<24>(st, w, wp, t, out, max_rows),
                28 => scalar_rows::<28>(st, w, wp, t, out, max_rows),
                _ => 0, // not chosen by for_lanes: the tail loop
            },
            // SAFETY: chosen only when the CPU has AVX2 (Kernel::for_lanes), with 12 to 32
            // lanes, a multiple of 4 (rows::<V, LAST>: 8 * (V - 1) + LAST lanes).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(lanes) => unsafe {
                match lanes {
                    12 => avx2::rows::<2, 4, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    16 => avx2::rows::<2, 8, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    20 => avx2::rows::<3, 4, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    24 => avx2::rows::<3, 8, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    28 => avx2::rows::<4, 4, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    32 => avx2::rows::<4, 8, false>(st, w, wp, w2, wp2, t, out, max_rows),
                    64 => avx2::rows::<8, 8, true>(st, w, wp, w2, wp2, t, out, max_rows),
                    _ => 0, // not chosen by for_lanes: the tail loop
                }
            },
            Kernel::Ctx1 => ctx_rows::<1>(self.tables, &mut self.prev, st, w, wp, out, max_rows),
            Kernel::Ctx2 => ctx_rows::<2>(self.tables, &mut self.prev, st, w, wp, out, max_rows),
            Kernel::Ctx4 => ctx_rows::<4>(self.tables, &mut self.prev, st, w, wp, out, max_rows),
            // SAFETY (context AVX2 kernels): chosen only when the CPU has AVX2
            // (Kernel::for_context), with 8 to 32 lanes, a multiple of 4; the slice has a
            // context pair.
            #[cfg(target_arch = "x86_64")]
            Kernel::CtxAvx2(lanes) => {
                let (tb, pv) = (self.tables, &mut self.prev);
                unsafe {
                    match lanes {
                        8 => {
                            avx2::ctx_rows::<1, 8, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        12 => {
                            avx2::ctx_rows::<2, 4, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        16 => {
                            avx2::ctx_rows::<2, 8, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        20 => {
                            avx2::ctx_rows::<3, 4, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        24 => {
                            avx2::ctx_rows::<3, 8, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        28 => {
                            avx2::ctx_rows::<4, 4, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        32 => {
                            avx2::ctx_rows::<4, 8, false>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        64 => {
                            avx2::ctx_rows::<8, 8, true>(tb, pv, st, w, wp, w2, wp2, out, max_rows)
                        }
                        _ => 0, // not chosen by for_context: the tail loop
                    }
                }
            }
            Kernel::Tail => 0,
        };
        self.done += n;
        n / self.lanes
    }

    /// Symbols left to decode.
    fn left(&self) -> usize {
        self.len - self.done
    }

    /// Decodes whole rows of several slices at once, interleaving their rows so that their
    /// independent dependency chains overlap (one 8-lane slice is one AVX2 vector: its chain
    /// alone leaves the core idle most of the time). Slices with 8, 12, 16, 20 or 24 lanes are
    /// taken in groups of up to four (8 lanes) or two (12-24 lanes), 4-lane slices in groups of up
    /// to eight, two per AVX2 vector (without AVX2: two, scalar), 1- and 2-lane slices up to
    /// four (scalar); each group advances by the rows all its slices can decode without
    /// checks (`rows_fit`). Afterwards every slice continues on its own
    /// ([`Self::fast_rows`], [`Self::finish`]), so the outcome, bytes and [`Status`], is the
    /// same as decoding each slice alone. Without AVX2 only the scalar groups run.
    pub fn fast_rows_together(decs: &mut [SliceDecoder<'a>]) {
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        for lanes in [1, 2, 4, 8, 12, 16, 20, 24] {
            if lanes >= 8 && !avx2 {
                continue;
            }
            let mut group: Vec<&mut SliceDecoder<'a>> =
                decs.iter_mut().filter(|d| d.lanes == lanes).collect();
            // a run stops when one of its slices has no fast row left; the others go on
            // in the next run, with whatever slices are still going
            loop {
                group.retain(|d| d.has_fast_row());
                // longest first, so that a run's slices end together (a run stops at its
                // shortest slice) and few are left over for the narrower groups at the end
                group.sort_by_key(|d| std::cmp::Reverse(d.left()));
                match (lanes, &mut group[..]) {
                    (1, [a, b, c, d, ..]) => scalar_rows_multi::<4, 1>([a, b, c, d]),
                    (1, [a, b, c]) => scalar_rows_multi::<3, 1>([a, b, c]),
                    (1, [a, b]) => scalar_rows_multi::<2, 1>([a, b]),
                    (2, [a, b, c, d, ..]) => scalar_rows_multi::<4, 2>([a, b, c, d]),
                    (2, [a, b, c]) => scalar_rows_multi::<3, 2>([a, b, c]),
                    (2, [a, b]) => scalar_rows_multi::<2, 2>([a, b]),
                    // SAFETY (4 lanes with AVX2): AVX2 checked; the lane counts match.
                    #[cfg(target_arch = "x86_64")]
                    (4, [a, b, c, d, e, f, g, h, ..]) if avx2 => unsafe {
                        avx2::rows_pairs4::<4, 8>([a, b, c, d, e, f, g, h])
                    },
                    #[cfg(target_arch = "x86_64")]
                    (4, [a, b, c, d, e, f, ..]) if avx2 => unsafe {
                        avx2::rows_pairs4::<3, 6>([a, b, c, d, e, f])
                    },
                    #[cfg(target_arch = "x86_64")]
                    (4, [a, b, c, d, ..]) if avx2 => unsafe {
                        avx2::rows_pairs4::<2, 4>([a, b, c, d])
                    },
                    #[cfg(target_arch = "x86_64")]
                    (4, [a, b, ..]) if avx2 => unsafe { avx2::rows_pairs4::<1, 2>([a, b]) },
                    (4, [a, b, ..]) => scalar_rows_multi::<2, 4>([a, b]),
                    // SAFETY (8 to 24 lanes): AVX2 checked above; the lane counts match.
                    #[cfg(target_arch = "x86_64")]
                    (8, [a, b, c, d, ..]) => unsafe { avx2::rows_multi::<4, 1, 8>([a, b, c, d]) },
                    #[cfg(target_arch = "x86_64")]
                    (8, [a, b, c]) => unsafe { avx2::rows_multi::<3, 1, 8>([a, b, c]) },
                    #[cfg(target_arch = "x86_64")]
                    (8, [a, b]) => unsafe { avx2::rows_multi::<2, 1, 8>([a, b]) },
                    // (Four 16-lane slices, eight vectors, measured slower than two: the
                    // vectors no longer fit the registers.)
                    #[cfg(target_arch = "x86_64")]
                    (16, [a, b, ..]) => unsafe { avx2::rows_multi::<2, 2, 8>([a, b]) },
                    #[cfg(target_arch = "x86_64")]
                    (24, [a, b, ..]) => unsafe { avx2::rows_multi::<2, 3, 8>([a, b]) },
                    // 12 and 20 lanes: a half-used last vector (28 as 32: alone)
                    #[cfg(target_arch = "x86_64")]
                    (12, [a, b, ..]) => unsafe { avx2::rows_multi::<2, 2, 4>([a, b]) },
                    #[cfg(target_arch = "x86_64")]
                    (20, [a, b, ..]) => unsafe { avx2::rows_multi::<2, 3, 4>([a, b]) },
                    _ => break,
                }
            }
        }
    }

    /// True when the fast loops can decode at least one more whole row side by side with
    /// other slices (slices with a context pair go alone, [`Self::fast_rows`]).
    fn has_fast_row(&self) -> bool {
        let span = row_span(self.lanes);
        self.kernel != Kernel::Tail
            && !self.tables.has_context()
            && self.left() >= span
            && rows_fit(self.words.len() / 2, self.wp, span)
    }

    /// Decodes the remaining symbols with the reference loop, runs the trailer check and
    /// expands packed literals (FORMAT.md §5.6).
    pub fn finish(mut self) -> Result<(), Status> {
        let tail = if self.tables.has_context() {
            decode_tail::<true>
        } else {
            decode_tail::<false>
        };
        let mut wp = [self.wp, self.wp2];
        tail(
            &mut self.states,
            self.lanes,
            [self.words, self.words2],
            &mut wp,
            self.tables,
            &mut self.prev,
            &mut self.out[self.done..self.len],
        )?;
        if wp != [self.words.len() / 2, self.words2.len() / 2]
            || self.states[..self.lanes].iter().any(|&x| x != RANS_L)
        {
            return Err(Status::RansTrailer);
        }
        if let Some(t) = self.tables.pack {
            expand_in_place(self.out, t);
        }
        Ok(())
    }
}

/// [`rans::expand_in_place`] with fixed-width stores: the same bytes.
fn expand_in_place(out: &mut [u8], expand: &DecodeTable) {
    match rans::pack_width_of(expand) {
        2 => expand_width::<2>(out, expand),
        3 => expand_width::<3>(out, expand),
        4 => expand_width::<4>(out, expand),
        _ => rans::expand_in_place(out, expand),
    }
}

/// Expands packed symbols of `W` literals in place, back to front: the last (possibly
/// partial) symbol by the reference, then eight symbols a step with AVX2
/// ([`avx2::expand_packed`]) or else four, their literals put together in registers and
/// stored in one or two stores (a store per symbol was the loop's bound), the first few
/// symbols one `W`-byte copy each.
#[inline(always)]
fn expand_width<const W: usize>(out: &mut [u8], expand: &DecodeTable) {
    let full = out.len() / W;
    if full * W < out.len() {
        // the partial symbol: its literals beyond the end dropped
        let lits = expand.slots[out[full] as usize].to_le_bytes();
        let rest = out.len() - full * W;
        out[full * W..].copy_from_slice(&lits[..rest]);
    }
    let mask = u32::MAX >> (32 - 8 * W);
    let mut j = full;
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2; W * full <= out.len().
        j = unsafe { avx2::expand_packed::<W>(out, j, &expand.slots) };
    }
    while j >= 4 {
        j -= 4;
        // symbols j..j + 4 are read before their literals are stored at W * j.., which lies
        // at or above them; every symbol below j lies below W * j, so it is still there
        let s: [u8; 4] = out[j..j + 4].try_into().expect("four symbols");
        let mut v = 0u128;
        for (i, &sym) in s.iter().enumerate() {
            v |= ((expand.slots[sym as usize] & mask) as u128) << (8 * W * i);
        }
        out[W * j..W * j + 4 * W].copy_from_slice(&v.to_le_bytes()[..4 * W]);
    }
    for j in (0..j).rev() {
        let lits = expand.slots[out[j] as usize].to_le_bytes();
        out[W * j..W * j + W].copy_from_slice(&lits[..W]);
    }
}

/// Output bytes and words a row of `lanes` lanes needs left in the fast loops: `lanes`, but
/// a whole number of 8-lane AVX2 vectors from 8 lanes on (12, 20 and 28 lanes: the last
/// vector half used, whose 8-byte store and 8-word load reach 4 past the row). What
/// [`SliceDecoder::has_fast_row`] asks must be what `avx2::rows_multi` needs, or a group
/// would make no progress.
fn row_span(lanes: usize) -> usize {
    if lanes >= 8 {
        lanes.next_multiple_of(8)
    } else {
        lanes
    }
}

/// True when a whole row of `lanes` symbols can be decoded without running out of words:
/// each lane takes at most one word per row (module docs).
#[inline(always)]
fn rows_fit(nwords: usize, wp: usize, lanes: usize) -> bool {
    nwords - wp >= lanes
}

/// One decode step of a state (before renormalisation): returns the symbol and the new state.
#[inline(always)]
fn step(slots: &[u32; PROB_SCALE as usize], x: u32) -> (u8, u32) {
    // the index is masked to PROB_SCALE - 1, so the compiler drops the bounds check
    let e = slots[(x & (PROB_SCALE - 1)) as usize];
    let freq = ((e >> 8) & 0xFFF) + 1;
    (e as u8, freq * (x >> PROB_BITS) + (e >> 20))
}

/// Whole rows with `N` lanes, scalar and branchless.
#[inline(always)]
fn scalar_rows<const N: usize>(
    states: &mut States,
    words: &[u8],
    wp: &mut usize,
    table: &DecodeTable,
    out: &mut [u8],
    max_rows: usize,
) -> usize {
    const { assert!(N >= 1 && N <= MAX_LANES as usize) };
    // read_states guarantees an even word area
    let (word_pairs, _) = words.as_chunks::<2>();
    let mut x = [0u32; N];
    x.copy_from_slice(&states[..N]);
    let mut w = *wp;
    let mut done = 0usize;
    for row in out.as_chunks_mut::<N>().0.iter_mut().take(max_rows) {
        if !rows_fit(word_pairs.len(), w, N) {
            break;
        }
        // the N words from `w` on: the row takes at most N of them
        let row_words: &[[u8; 2]; N] = word_pairs[w..w + N].try_into().expect("N words");
        let mut k = 0usize;
        for j in 0..N {
            let (sym, v) = step(&table.slots, x[j]);
            row[j] = sym;
            let need = v < RANS_L;
            // k <= j < N, so the mask (N a power of two) or the min keeps k and drops the
            // bounds check
            let at = if N.is_power_of_two() {
                k & (N - 1)
            } else {
                k.min(N - 1)
            };
            let word = u16::from_le_bytes(row_words[at]) as u32;
            // a hint, not a branch: the renormalisation pattern is data-dependent noise
            x[j] = std::hint::select_unpredictable(need, (v << 16) | word, v);
            k += need as usize;
        }
        w += k;
        done += N;
    }
    states[..N].copy_from_slice(&x);
    *wp = w;
    done
}

/// The `2 * PROB_SCALE` slots of a context pair, context 0's then context 1's: the slot of
/// state `x` under context `c` is `(x & (PROB_SCALE - 1)) | c << PROB_BITS`.
#[inline(always)]
fn pair_slots<'a>(tables: SliceTables<'a>) -> &'a [u32; 2 * PROB_SCALE as usize] {
    let slots: &[u32] = bytemuck::cast_slice(tables.tables);
    slots.try_into().expect("a context pair")
}

/// Whole rows with `N` lanes under a context pair (FORMAT.md §5.4), scalar and branchless
/// like [`scalar_rows`]; `prev` holds each lane's last symbol and is updated.
#[inline(always)]
fn ctx_rows<const N: usize>(
    tables: SliceTables<'_>,
    prev: &mut [u8; MAX_LANES as usize],
    states: &mut States,
    words: &[u8],
    wp: &mut usize,
    out: &mut [u8],
    max_rows: usize,
) -> usize {
    const { assert!(N.is_power_of_two() && N <= MAX_LANES as usize) };
    let slots = pair_slots(tables);
    // the context bit modulo 8, as every decoder reads it (`SliceTables::ctx_bit`)
    let bit = tables.ctx_bit & 7;
    let (word_pairs, _) = words.as_chunks::<2>();
    let mut x = [0u32; N];
    x.copy_from_slice(&states[..N]);
    let mut p = [0u8; N];
    p.copy_from_slice(&prev[..N]);
    let mut w = *wp;
    let mut done = 0usize;
    for row in out.as_chunks_mut::<N>().0.iter_mut().take(max_rows) {
        if !rows_fit(word_pairs.len(), w, N) {
            break;
        }
        let row_words: &[[u8; 2]; N] = word_pairs[w..w + N].try_into().expect("N words");
        let mut k = 0usize;
        for j in 0..N {
            let c = ((p[j] >> bit) & 1) as u32;
            // masked to 2 * PROB_SCALE - 1: no bounds check
            let e = slots[((x[j] & (PROB_SCALE - 1)) | (c << PROB_BITS)) as usize];
            let v = (((e >> 8) & 0xFFF) + 1) * (x[j] >> PROB_BITS) + (e >> 20);
            row[j] = e as u8;
            p[j] = e as u8;
            let need = v < RANS_L;
            let word = u16::from_le_bytes(row_words[k & (N - 1)]) as u32;
            x[j] = std::hint::select_unpredictable(need, (v << 16) | word, v);
            k += need as usize;
        }
        w += k;
        done += N;
    }
    states[..N].copy_from_slice(&x);
    prev[..N].copy_from_slice(&p);
    *wp = w;
    done
}

/// Whole rows of `S` slices with `L` lanes each, their rows interleaved (scalar and
/// branchless like [`scalar_rows`]), for as long as every slice has a whole row left and
/// the words for it ([`rows_fit`]). One- and two-lane slices are a single long dependency
/// chain each; several of them side by side keep the core busy.
// indices run over several parallel per-slice arrays at once
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn scalar_rows_multi<const S: usize, const L: usize>(mut decs: [&mut SliceDecoder<'_>; S]) {
    const { assert!(L.is_power_of_two() && L <= MAX_LANES as usize) };
    let mut rows = usize::MAX;
    for d in decs.iter() {
        assert!(d.lanes == L, "scalar_rows_multi: lane count");
        rows = rows.min(d.left() / L);
    }
    let mut x = [[0u32; L]; S];
    let mut w = [0usize; S];
    let mut words: [&[[u8; 2]]; S] = [&[]; S];
    let mut slots: [&[u32; PROB_SCALE as usize]; S] = [&decs[0].table.slots; S];
    let mut out = [std::ptr::null_mut::<u8>(); S];
    for (s, d) in decs.iter().enumerate() {
        x[s].copy_from_slice(&d.states[..L]);
        w[s] = d.wp;
        // read_states guarantees an even word area
        words[s] = d.words.as_chunks::<2>().0;
        slots[s] = &d.table.slots;
    }
    for (s, d) in decs.iter_mut().enumerate() {
        // SAFETY: done <= out.len(); the pointer stays inside (or one past) `out`.
        out[s] = unsafe { d.out.as_mut_ptr().add(d.done) };
    }
    let mut r = 0;
    'rows: while r < rows {
        for s in 0..S {
            if !rows_fit(words[s].len(), w[s], L) {
                break 'rows;
            }
        }
        for s in 0..S {
            // the L words from w on: the row takes at most L of them (rows_fit above)
            let row_words: &[[u8; 2]; L] = words[s][w[s]..w[s] + L].try_into().expect("L words");
            let mut k = 0usize;
            for j in 0..L {
                let (sym, v) = step(slots[s], x[s][j]);
                // SAFETY: r < rows <= (out.len() - done) / L, so byte r * L + j after `done`
                // lies inside this slice's `out`; the slices' outputs are distinct buffers.
                unsafe { *out[s].add(r * L + j) = sym };
                let need = v < RANS_L;
                let word = u16::from_le_bytes(row_words[k & (L - 1)]) as u32;
                x[s][j] = std::hint::select_unpredictable(need, (v << 16) | word, v);
                k += need as usize;
            }
            w[s] += k;
        }
        r += 1;
    }
    for (s, d) in decs.into_iter().enumerate() {
        d.states[..L].copy_from_slice(&x[s]);
        d.wp = w[s];
        d.done += r * L;
    }
}

/// The rest of the slice from a row boundary, one row at a time with the words checked per
/// row: decodes `out` and fails with [`Status::RansUnderflow`] exactly when the reference
/// does. `CTX`: the slice has a context pair (`prev` holds and gets each lane's last symbol).
///
/// Which lanes of a row renormalise depends only on the states at the start of the row, not
/// on the words the row reads, so the row needs `k` words (the number of lanes below
/// [`RANS_L`]) whatever those words are. The reference takes them one by one and underflows
/// inside the row exactly when fewer than `k` are left; here the row is decoded branchlessly
/// (a missing word reads as 0) and then fails as a whole in that case. The status is the same;
/// the output of a failed slice is unspecified in both.
fn decode_tail<const CTX: bool>(
    states: &mut States,
    lanes: usize,
    words: [&[u8]; 2],
    wp: &mut [usize; 2],
    tables: SliceTables<'_>,
    prev: &mut [u8; MAX_LANES as usize],
    out: &mut [u8],
) -> Result<(), Status> {
    // read_states guarantees even word areas; lane j takes its words from area
    // `rans::word_area(j)` (the second only in a wide slice, FORMAT.md §5.4)
    let pairs = words.map(|w| w.as_chunks::<2>().0);
    for chunk in out.chunks_mut(lanes) {
        let mut k = [0usize; 2];
        for (j, ((x, o), p)) in states
            .iter_mut()
            .zip(chunk.iter_mut())
            .zip(prev.iter_mut())
            .enumerate()
        {
            // CTX: a context pair, each lane's table picked by its previous symbol
            let t = if CTX {
                tables.pick(*p)
            } else {
                &tables.tables[0]
            };
            let (sym, v) = step(&t.slots, *x);
            *o = sym;
            if CTX {
                *p = sym;
            }
            let need = v < RANS_L;
            let a = rans::word_area(j);
            let word = pairs[a]
                .get(wp[a] + k[a])
                .map_or(0, |p| u16::from_le_bytes(*p) as u32);
            *x = std::hint::select_unpredictable(need, (v << 16) | word, v);
            k[a] += need as usize;
        }
        for a in 0..2 {
            if k[a] > pairs[a].len() - wp[a] {
                return Err(Status::RansUnderflow);
            }
            wp[a] += k[a];
        }
    }
    Ok(())
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::entropy::{
        count, encode_context_slice, encode_slice, EncodeTable, FreqTable,
    };

    use crate::gpu::tokens::Rng;

    /// The fast expansion of packed literals gives the reference's bytes
    /// (`rans::expand_in_place`, symbol by symbol) for each pack width and every length up
    /// to 70, so the four-symbol steps, the first symbols and a partial last symbol all run.
    #[test]
    fn packed_literals_expand_as_the_reference_does() {
        let mut r = Rng::new(11);
        for letters in [&b"ACGT"[..], b"ACGTNn", b"ACGTNRYKMSWBDHVa"] {
            let t = crate::format::tables::expansion_table(letters);
            let w = rans::pack_width_of(&t);
            let symbols = crate::format::tables::packed_symbols(letters.len()) as u64;
            for n in 0..70usize {
                let mut fast: Vec<u8> = (0..n).map(|_| r.below(symbols) as u8).collect();
                fast[n.div_ceil(w)..].fill(0xA5);
                let mut want = fast.clone();
                rans::expand_in_place(&mut want, &t);
                expand_in_place(&mut fast, &t);
                assert_eq!(fast, want, "width {w}, {n} literals");
                assert!(fast.iter().all(|c| letters.contains(c)), "width {w}, {n}");
            }
        }
    }

    /// A context pair for `data` coded with `lanes` lanes and context bit `bit` (FORMAT.md
    /// §5.4): both tables hold symbol 0 too, so neither is empty.
    fn context_pair(data: &[u8], lanes: usize, bit: u32) -> [FreqTable; 2] {
        let mut h = [[0u64; 256]; 2];
        for (i, &x) in data.iter().enumerate() {
            let prev = if i >= lanes { data[i - lanes] } else { 0 };
            h[((prev >> bit) & 1) as usize][x as usize] += 1;
        }
        h[0][0] += 1;
        h[1][0] += 1;
        h.map(|h| FreqTable::from_histogram(&h).unwrap())
    }

    /// Encodes `data` with the pair; returns the slice and the pair's decode tables.
    fn encode_with_pair(
        data: &[u8],
        lanes: usize,
        pair: &[FreqTable; 2],
        bit: u32,
    ) -> (Vec<u8>, Vec<DecodeTable>) {
        let et = pair
            .each_ref()
            .map(|t| EncodeTable::new(t, &t.cumulative()));
        let mut enc = Vec::new();
        encode_context_slice(data, lanes, [&et[0], &et[1]], bit, &mut enc);
        (enc, pair.iter().map(|t| *t.decode_table()).collect())
    }

    /// The GPU step's two halves (`rans::slot_entry`, then `rans::apply_entry`, which the
    /// packed kernel splits so that work runs between the table load and the state update)
    /// against this decoder's step, on every slot of a skewed table and of a one-symbol
    /// table (frequency 4096, the largest the 12-bit field holds), states across the whole
    /// renormalised range; and the one-symbol table against the rANS rule itself (FORMAT.md
    /// §5.4: `x' = freq * (x >> 12) + slot - cum`, here `x` unchanged).
    #[test]
    fn gpu_step_halves_match_the_cpu_step() {
        let mut h = [0u64; 256];
        for (s, c) in h.iter_mut().enumerate().take(40) {
            *c = 1 + (s as u64 * 7919) % 1000;
        }
        h[0] = 50_000;
        let skewed = FreqTable::from_histogram(&h).unwrap().decode_table();
        let mut one = [0u64; 256];
        one[b'A' as usize] = 10;
        let single = FreqTable::from_histogram(&one).unwrap().decode_table();
        let mut rng = Rng::new(7);
        for t in [&skewed, &single] {
            for k in 0..200_000u32 {
                // every slot (k % 4096) under states from 2^16 to 2^32 - 1
                let hi = rng.next_u64() as u32;
                let x = (hi & !(PROB_SCALE - 1)).max(1 << 16) | (k % PROB_SCALE);
                let (want_sym, want_x) = step(&t.slots, x);
                let mut got_x = x;
                let got_sym = rans::apply_entry(rans::slot_entry(t, x), &mut got_x);
                assert_eq!((got_sym, got_x), (want_sym, want_x), "state {x:#x}");
                if std::ptr::eq(t, &single) {
                    assert_eq!((got_sym, got_x), (b'A', x), "state {x:#x}");
                }
            }
        }
    }

    fn both(
        slice: &[u8],
        lanes: usize,
        t: SliceTables<'_>,
        n: usize,
    ) -> (Result<(), Status>, Vec<u8>) {
        let (r, got, _) = both_with(slice, lanes, t, n, None);
        (r, got)
    }

    /// [`both`] with the fast decoder's row loop `force`d (else its own choice); also
    /// returns how many calls of that loop decoded rows.
    fn both_with(
        slice: &[u8],
        lanes: usize,
        t: SliceTables<'_>,
        n: usize,
        force: Option<Kernel>,
    ) -> (Result<(), Status>, Vec<u8>, usize) {
        let mut want = vec![0u8; n];
        let r_ref = rans::decode_slice(slice, lanes, t, &mut want);
        let mut got = vec![0u8; n];
        let mut ran = 0;
        let r_fast = SliceDecoder::new(slice, lanes, t, &mut got).and_then(|mut d| {
            d.kernel = force.unwrap_or(d.kernel);
            while d.fast_rows(usize::MAX) > 0 {
                ran += 1;
            }
            d.finish()
        });
        assert_eq!(r_fast, r_ref, "status differs (lanes {lanes}, n {n})");
        if r_ref.is_ok() {
            assert_eq!(got, want, "bytes differ (lanes {lanes}, n {n})");
        }
        (r_ref, got, ran)
    }

    /// `n` random bytes of an alphabet of 2, 4, 20 or 256 (by `round`), skewed to the small
    /// ones, and their frequency table.
    fn skewed_sample(r: &mut Rng, n: usize, round: usize) -> (Vec<u8>, FreqTable) {
        let alpha = [2u64, 4, 20, 256][round % 4];
        let data: Vec<u8> = (0..n)
            .map(|_| (r.next_u64() % alpha).min(r.next_u64() % alpha) as u8)
            .collect();
        let mut h = [0u64; 256];
        count(&mut h, &data);
        (data, FreqTable::from_histogram(&h).unwrap())
    }

    /// The scalar rows of 12, 20, 24 and 28 lanes, which a CPU without AVX2 runs (this one
    /// takes AVX2 for them, so the kernel is forced), against the reference: valid slices,
    /// then truncated and bit-flipped ones.
    #[test]
    fn scalar_rows_of_wide_lane_counts_match_the_reference() {
        let mut r = Rng::new(0x2545_F491_4F6C_DD1D);
        // scalar rows run per lane count (a slice with few words may have none)
        let mut ran = [0usize; 4];
        for round in 0..24 {
            let n = (r.next_u64() % 9000) as usize + 100;
            let (data, ft) = skewed_sample(&mut r, n, round);
            let one = ft.decode_table();
            let t = SliceTables::single(&one);
            for (li, lanes) in [12usize, 20, 24, 28].into_iter().enumerate() {
                let mut enc = Vec::new();
                encode_slice(&data, lanes, &ft, &ft.cumulative(), &mut enc);
                let mut bad = enc.clone();
                let i = (r.next_u64() as usize) % bad.len();
                bad[i] ^= 1 << (r.next_u64() % 8);
                let cut = &enc[..enc.len() - 2 * (1 + (r.next_u64() % 8) as usize)];
                for (k, slice) in [&enc[..], &bad[..], cut].into_iter().enumerate() {
                    let force = Some(Kernel::ScalarWide(lanes as u8));
                    let (_, got, rows) = both_with(slice, lanes, t, n, force);
                    ran[li] += rows;
                    if k == 0 {
                        assert_eq!(got, data, "round trip (lanes {lanes})");
                    }
                }
            }
        }
        assert!(
            ran.iter().all(|&n| n > 0),
            "scalar rows per lane count: {ran:?}"
        );
    }

    /// A wide slice of 64 lanes (FORMAT.md §5.4) runs the AVX2 rows with its two word areas
    /// where the CPU has AVX2, single tables and context pairs, and decodes the input.
    #[test]
    fn wide_slices_take_the_split_avx2_rows() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            let mut r = Rng::new(0x5EED_0064);
            for round in 0..8 {
                let n = 20_000 + (r.next_u64() % 5000) as usize;
                let (data, ft) = skewed_sample(&mut r, n, round);
                let one = ft.decode_table();
                let (enc, pair) = if round % 2 == 1 {
                    encode_with_pair(&data, 64, &context_pair(&data, 64, 3), 3)
                } else {
                    let mut enc = Vec::new();
                    encode_slice(&data, 64, &ft, &ft.cumulative(), &mut enc);
                    (enc, Vec::new())
                };
                let t = if pair.is_empty() {
                    SliceTables::single(&one)
                } else {
                    SliceTables {
                        tables: &pair,
                        ctx_bit: 3,
                        pack: None,
                    }
                };
                let mut got = vec![0u8; n];
                let mut d = SliceDecoder::new(&enc, 64, t, &mut got).unwrap();
                let want = if pair.is_empty() {
                    Kernel::Avx2(64)
                } else {
                    Kernel::CtxAvx2(64)
                };
                assert!(d.kernel == want, "round {round}");
                let rows = d.fast_rows(usize::MAX);
                assert!(rows * 64 > n / 2, "round {round}: {rows} fast rows");
                d.finish().unwrap();
                assert!(got == data, "round {round}");
            }
        }
    }

    #[test]
    fn fast_slice_matches_reference_on_valid_and_corrupt_slices() {
        let mut r = Rng::new(0x9E37_79B9_7F4A_7C15);
        for round in 0..60 {
            let n = (r.next_u64() % 20000) as usize + 1;
            let (data, ft) = skewed_sample(&mut r, n, round);
            let one = ft.decode_table();
            let bit = (r.next_u64() % 8) as u32;
            // (33 to 64: wide slices, FORMAT.md §5.3)
            for lanes in [
                1usize, 2, 3, 4, 5, 8, 12, 16, 20, 24, 28, 31, 32, 33, 48, 64,
            ] {
                // odd rounds: a context pair (FORMAT.md §5.4)
                let (enc, pair) = if round % 2 == 1 {
                    encode_with_pair(&data, lanes, &context_pair(&data, lanes, bit), bit)
                } else {
                    let mut enc = Vec::new();
                    encode_slice(&data, lanes, &ft, &ft.cumulative(), &mut enc);
                    (enc, Vec::new())
                };
                let t = if pair.is_empty() {
                    SliceTables::single(&one)
                } else {
                    SliceTables {
                        tables: &pair,
                        ctx_bit: bit,
                        pack: None,
                    }
                };
                let (st, got) = both(&enc, lanes, t, n);
                assert_eq!(st, Ok(()));
                assert_eq!(got, data);
                // wrong lane counts and lengths, truncations, flips
                let _ = both(&enc, lanes % 64 + 1, t, n);
                let _ = both(&enc, lanes, t, n + 1 + (r.next_u64() % 40) as usize);
                let _ = both(
                    &enc,
                    lanes,
                    t,
                    n.saturating_sub(1 + (r.next_u64() % 40) as usize),
                );
                let cut = (r.next_u64() as usize) % enc.len();
                let _ = both(&enc[..cut], lanes, t, n);
                let _ = both(&enc[..enc.len() - 2], lanes, t, n);
                for _ in 0..4 {
                    let mut bad = enc.clone();
                    let i = (r.next_u64() as usize) % bad.len();
                    bad[i] ^= 1 << (r.next_u64() % 8);
                    let _ = both(&bad, lanes, t, n);
                }
                // the other table set: a pair read as one table, one table as a pair
                if pair.is_empty() {
                    let p2 = [*one.as_ref(), *one.as_ref()];
                    let _ = both(
                        &enc,
                        lanes,
                        SliceTables {
                            tables: &p2,
                            ctx_bit: bit,
                            pack: None,
                        },
                        n,
                    );
                } else {
                    let _ = both(&enc, lanes, SliceTables::single(&pair[0]), n);
                }
            }
            // pure noise
            let noise: Vec<u8> = (0..(r.next_u64() % 3000) as usize)
                .map(|_| r.next_u64() as u8)
                .collect();
            for lanes in [0usize, 1, 8, 16, 32, 33, 64, 65] {
                let _ = both(
                    &noise,
                    lanes,
                    SliceTables::single(&one),
                    (r.next_u64() % 5000) as usize,
                );
            }
        }
    }

    #[test]
    fn slices_decoded_together_match_the_reference() {
        together_vs_reference(
            0xC2B2_AE3D_27D4_EB4F,
            300,
            9,
            &[1, 2, 4, 8, 12, 16, 20, 16, 8, 28, 32, 3],
        );
    }

    /// Mostly 4-lane slices (two per AVX2 vector, up to four vectors: `avx2::rows_pairs4`)
    /// and 24-lane slices (in pairs), with 16- and 1-lane ones among them: the lane mix of
    /// text and DNA blocks.
    #[test]
    fn paired_four_lane_and_24_lane_slices_match_the_reference() {
        together_vs_reference(
            0x94D0_49BB_1331_11EB,
            400,
            12,
            &[4, 4, 4, 4, 24, 24, 16, 1, 4],
        );
    }

    /// Decodes 1 to `max_slices` random slices (valid and damaged: bit flips, truncation, a
    /// wrong length) with lane counts drawn from `lane_choices` together ([`SliceDecoder::fast_rows_together`],
    /// then each alone) and checks every slice's status and bytes against the reference.
    fn together_vs_reference(seed: u64, rounds: usize, max_slices: u64, lane_choices: &[usize]) {
        let mut r = Rng::new(seed);
        for round in 0..rounds {
            let alpha = [2u64, 4, 20, 256][round % 4];
            let count_slices = 1 + r.below(max_slices) as usize;
            let mut cases = Vec::new();
            for _ in 0..count_slices {
                let n = r.below([300u64, 3000, 20000][round % 3]) as usize;
                let data: Vec<u8> = (0..n)
                    .map(|_| (r.next_u64() % alpha).min(r.next_u64() % alpha) as u8)
                    .collect();
                let mut h = [0u64; 256];
                count(&mut h, &data);
                h[0] += 1; // a table even for an empty slice
                let ft = FreqTable::from_histogram(&h).unwrap();
                let lanes = lane_choices[r.below(lane_choices.len() as u64) as usize];
                // one slice in three with a context pair (FORMAT.md §5.4), decoded alone
                let bit = r.below(8) as u32;
                let (mut enc, tables) = if r.below(3) == 0 {
                    encode_with_pair(&data, lanes, &context_pair(&data, lanes, bit), bit)
                } else {
                    let mut enc = Vec::new();
                    encode_slice(&data, lanes, &ft, &ft.cumulative(), &mut enc);
                    (enc, vec![*ft.decode_table()])
                };
                // damage some: flips, truncation, a wrong length
                let mut len = n;
                match r.below(8) {
                    0 if !enc.is_empty() => {
                        let i = r.below(enc.len() as u64) as usize;
                        enc[i] ^= 1 << r.below(8);
                    }
                    1 if enc.len() > 2 => enc.truncate(enc.len() - 2),
                    2 => len += 1 + r.below(30) as usize,
                    _ => {}
                }
                cases.push((enc, lanes, tables, bit, len));
            }
            fn st_of(t: &[DecodeTable], bit: u32) -> SliceTables<'_> {
                SliceTables {
                    tables: t,
                    ctx_bit: bit,
                    pack: None,
                }
            }
            let mut want = Vec::new();
            for (enc, lanes, t, bit, len) in &cases {
                let mut o = vec![0u8; *len];
                let st = rans::decode_slice(enc, *lanes, st_of(t, *bit), &mut o);
                want.push((st, o));
            }
            let mut outs: Vec<Vec<u8>> = cases.iter().map(|c| vec![0u8; c.4]).collect();
            let mut got_status = vec![None; cases.len()];
            let mut decs = Vec::new();
            let mut owner = Vec::new();
            for (i, ((enc, lanes, t, bit, _), o)) in cases.iter().zip(outs.iter_mut()).enumerate() {
                match SliceDecoder::new(enc, *lanes, st_of(t, *bit), o) {
                    Ok(d) => {
                        decs.push(d);
                        owner.push(i);
                    }
                    Err(st) => got_status[i] = Some(Err(st)),
                }
            }
            SliceDecoder::fast_rows_together(&mut decs);
            for (d, i) in decs.into_iter().zip(owner) {
                let mut d = d;
                while d.fast_rows(usize::MAX) > 0 {}
                got_status[i] = Some(d.finish());
            }
            for (i, (st, o)) in want.iter().enumerate() {
                assert_eq!(got_status[i], Some(*st), "round {round} slice {i}: status");
                if st.is_ok() {
                    assert_eq!(&outs[i], o, "round {round} slice {i}: bytes");
                }
            }
        }
    }
}
