//! The interleaved rANS slice encoder (FORMAT.md §5.3-§5.5) whose output
//! `aceapex_device::rans::decode_slice` reads, and the raw/rANS store of one slice.

use crate::device::format::*;
use crate::format::tables::*;

/// The encoder form of a [`TableRecord`]: its tables as [`EncodeTable`]s.
#[derive(Clone, Debug)]
pub struct SliceCoder {
    tables: Vec<EncodeTable>,
    ctx_bit: u32,
}

impl SliceCoder {
    /// Expands a record's tables.
    pub fn new(r: &TableRecord) -> SliceCoder {
        SliceCoder {
            tables: r
                .tables
                .iter()
                .map(|t| EncodeTable::new(t, &t.cumulative()))
                .collect(),
            ctx_bit: r.ctx_bit as u32,
        }
    }

    /// Encodes `symbols` with `lanes` lanes: [`encode_slice_with`] for one table, else each
    /// symbol under the table its lane's previous symbol picks (FORMAT.md §5.4).
    pub fn encode(&self, symbols: &[u8], lanes: usize, out: &mut Vec<u8>) {
        match &self.tables[..] {
            [t] => encode_slice_with(symbols, lanes, t, out),
            ts => encode_context_slice(symbols, lanes, [&ts[0], &ts[1]], self.ctx_bit, out),
        }
    }
}

/// Encodes with a context pair: symbol `i` (lane `i % lanes`) under `t[c]`, `c` bit
/// `ctx_bit` of symbol `i - lanes` (0 for `i < lanes`). Output as [`encode_slice_with`].
pub fn encode_context_slice(
    symbols: &[u8],
    lanes: usize,
    t: [&EncodeTable; 2],
    ctx_bit: u32,
    out: &mut Vec<u8>,
) {
    // symbol i under the table bit `ctx_bit` of symbol i - lanes picks
    let sym_of = |i: usize| {
        let c = if i >= lanes {
            (symbols[i - lanes] >> ctx_bit) & 1
        } else {
            0
        };
        let s = symbols[i];
        let e = &t[c as usize].sym[s as usize];
        // a pair's tables come from the pairs of exactly these lanes (encode_group), so
        // every symbol is present in the table its context picks; were it not, the slice
        // would decode to other bytes: fail loudly rather than write such an archive
        assert!(e.freq > 0, "context table lacks symbol {s} (encoder bug)");
        e
    };
    if lanes > WARP_LANES as usize {
        return encode_wide(symbols, lanes, sym_of, out);
    }
    encode_into(symbols, lanes, out, |states, words| {
        // put_symbol's contract: one call per symbol, one slot more than symbols
        assert!(words.len() > symbols.len());
        let mut nw = 0;
        // symbol i goes to lane i % lanes, counted down without a division per symbol
        let mut lane = symbols.len().saturating_sub(1) % lanes;
        for i in (0..symbols.len()).rev() {
            let e = sym_of(i);
            // SAFETY: nw <= the symbols coded so far < symbols.len() < words.len() (the
            // assert)
            unsafe { put_symbol(&mut states[lane], e, words, &mut nw) };
            lane = if lane == 0 { lanes - 1 } else { lane - 1 };
        }
        nw
    });
}

/// Encoder form of a [`FreqTable`]: per symbol the renormalisation bound, frequency,
/// cumulative frequency and a reciprocal that replaces the division by the frequency.
/// Build it once per table and reuse it for every slice coded with that table.
#[derive(Clone, Debug)]
pub struct EncodeTable {
    sym: [EncSym; 256],
}

/// One symbol of an [`EncodeTable`].
#[derive(Clone, Copy, Debug, Default)]
struct EncSym {
    /// A state at or above this must emit one 16-bit word before coding the symbol.
    x_max: u64,
    /// `ceil(2^63 / freq)`.
    rcp: u64,
    freq: u32,
    cum: u32,
}

impl EncodeTable {
    /// Expands `table` (with its cumulative frequencies `cum`, see [`FreqTable::cumulative`]).
    pub fn new(table: &FreqTable, cum: &[u32; 256]) -> EncodeTable {
        // x_max(f) = ((RANS_L >> PROB_BITS) << 16) * f: above it a word must go out first.
        const X_MAX_UNIT: u64 = ((RANS_L >> PROB_BITS) as u64) << 16;
        let mut sym = [EncSym::default(); 256];
        for (s, e) in sym.iter_mut().enumerate() {
            let f = table.freq[s];
            if f > 0 {
                *e = EncSym {
                    x_max: X_MAX_UNIT * f as u64,
                    rcp: (1u64 << 63).div_ceil(f as u64),
                    freq: f,
                    cum: cum[s],
                };
            }
        }
        EncodeTable { sym }
    }
}

/// Encodes `symbols` with `lanes` interleaved rANS lanes under `table` (every symbol of
/// `symbols` must have a non-zero frequency). Output: the lane states, then the words.
pub fn encode_slice(
    symbols: &[u8],
    lanes: usize,
    table: &FreqTable,
    cum: &[u32; 256],
    out: &mut Vec<u8>,
) {
    encode_slice_with(symbols, lanes, &EncodeTable::new(table, cum), out);
}

/// [`encode_slice`] with a prebuilt [`EncodeTable`].
pub fn encode_slice_with(symbols: &[u8], lanes: usize, table: &EncodeTable, out: &mut Vec<u8>) {
    if lanes > WARP_LANES as usize {
        return encode_wide(symbols, lanes, |i| &table.sym[symbols[i] as usize], out);
    }
    encode_into(symbols, lanes, out, |states, words| match lanes {
        1 => encode_lanes::<1>(symbols, table, states, words),
        2 => encode_lanes::<2>(symbols, table, states, words),
        4 => encode_lanes::<4>(symbols, table, states, words),
        8 => encode_lanes::<8>(symbols, table, states, words),
        16 => encode_lanes::<16>(symbols, table, states, words),
        32 => encode_lanes::<32>(symbols, table, states, words),
        _ => encode_any_lanes(symbols, lanes, table, states, words),
    });
}

/// Encodes a wide slice (more than [`WARP_LANES`] lanes, FORMAT.md §5.4): symbol `i` in lane
/// `i % lanes` under the table entry `sym_of(i)`, last symbol first, the words of lanes
/// `0..32` and of lanes `32..lanes` in two areas. Output: the final states, the first area's
/// word count (`u32`), then each area's words last first.
fn encode_wide<'t>(
    symbols: &[u8],
    lanes: usize,
    sym_of: impl Fn(usize) -> &'t EncSym,
    out: &mut Vec<u8>,
) {
    assert!((WARP_LANES as usize + 1..=MAX_LANES as usize).contains(&lanes));
    let mut states = [RANS_L; MAX_LANES as usize];
    // put_symbol's contract per area: at most one word per symbol, one slot more
    let mut words = [vec![0u16; symbols.len() + 1], vec![0u16; symbols.len() + 1]];
    let mut nw = [0usize; 2];
    let mut lane = symbols.len().saturating_sub(1) % lanes;
    for i in (0..symbols.len()).rev() {
        let a = aceapex_device::rans::word_area(lane);
        // SAFETY: nw[a] <= the symbols coded so far < symbols.len() < words[a].len()
        unsafe { put_symbol(&mut states[lane], sym_of(i), &mut words[a], &mut nw[a]) };
        lane = if lane == 0 { lanes - 1 } else { lane - 1 };
    }
    out.reserve(lanes * 4 + 4 + (nw[0] + nw[1]) * 2);
    for x in &states[..lanes] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&(nw[0] as u32).to_le_bytes());
    for (w, &n) in words.iter().zip(&nw) {
        out.extend(w[..n].iter().rev().flat_map(|w| w.to_le_bytes()));
    }
}

/// The frame of every slice encoder: `code` codes the symbols into the lane states (all
/// starting at [`RANS_L`]) and the word buffer and returns the words written, in emission
/// order; the slice (the final states, then the words last first) is appended to `out`.
fn encode_into(
    symbols: &[u8],
    lanes: usize,
    out: &mut Vec<u8>,
    code: impl FnOnce(&mut [u32], &mut [u16]) -> usize,
) {
    assert!((1..=MAX_LANES as usize).contains(&lanes));
    let mut states = [RANS_L; MAX_LANES as usize];
    // at most one word per symbol, plus the slot the branch-free renormalisation may write
    // after the last word
    let mut words = vec![0u16; symbols.len() + 1];
    let nw = code(&mut states, &mut words);
    out.reserve(lanes * 4 + nw * 2);
    for x in &states[..lanes] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend(words[..nw].iter().rev().flat_map(|w| w.to_le_bytes()));
}

/// Codes one symbol into state `x`, first moving a word out to `words[*nw]` if needed.
///
/// # Safety
/// `*nw < words.len()`. Every caller codes each symbol of a slice once, into a buffer of
/// more slots than the slice has symbols (it asserts so), and `*nw` grows by at most one per
/// symbol: before the k-th symbol (from 0) it is at most k.
#[inline(always)]
unsafe fn put_symbol(x: &mut u32, e: &EncSym, words: &mut [u16], nw: &mut usize) {
    debug_assert!(e.freq > 0, "symbol absent from the table");
    debug_assert!(*nw < words.len());
    // branch-free renormalisation (the branch would be unpredictable): the word slot is
    // always written but only kept when the state is too large
    let out = (*x as u64 >= e.x_max) as usize;
    // SAFETY: *nw < words.len() (the caller's contract).
    unsafe { *words.get_unchecked_mut(*nw) = *x as u16 };
    *nw += out;
    *x >>= 16 * out as u32;
    // For x < 2^32 and f <= 2^12, (x * ceil(2^63 / f)) >> 63 == x / f exactly: the rounding
    // of the reciprocal adds less than x / 2^63 < 2^-31 to the quotient, while x / f lies at
    // least 1 / f >= 2^-12 below the next integer.
    let q = ((*x as u128 * e.rcp as u128) >> 63) as u32;
    debug_assert_eq!(q, *x / e.freq);
    *x = (q << PROB_BITS) + (*x - q * e.freq) + e.cum;
}

/// Encodes with `L` lanes (symbol `i` in lane `i % L`), last symbol first; the final states
/// go to `states[..L]`. Returns the number of words written to `words`, in emission order.
fn encode_lanes<const L: usize>(
    symbols: &[u8],
    t: &EncodeTable,
    states: &mut [u32],
    words: &mut [u16],
) -> usize {
    // put_symbol's contract: one call per symbol, one slot more than symbols
    assert!(words.len() > symbols.len());
    let mut st = [RANS_L; L];
    let mut nw = 0;
    let full = symbols.len() / L * L;
    for i in (full..symbols.len()).rev() {
        // SAFETY: nw <= the symbols coded so far < symbols.len() < words.len() (the assert);
        // likewise below
        unsafe {
            put_symbol(
                &mut st[i - full],
                &t.sym[symbols[i] as usize],
                words,
                &mut nw,
            )
        };
    }
    for row in symbols[..full].as_chunks::<L>().0.iter().rev() {
        for l in (0..L).rev() {
            unsafe { put_symbol(&mut st[l], &t.sym[row[l] as usize], words, &mut nw) };
        }
    }
    states[..L].copy_from_slice(&st);
    nw
}

/// [`encode_lanes`] for a lane count that is not a power of two.
fn encode_any_lanes(
    symbols: &[u8],
    lanes: usize,
    t: &EncodeTable,
    states: &mut [u32],
    words: &mut [u16],
) -> usize {
    // put_symbol's contract: one call per symbol, one slot more than symbols
    assert!(words.len() > symbols.len());
    let mut nw = 0;
    // symbol i goes to lane i % lanes, counted down without a division per symbol
    let mut lane = symbols.len().saturating_sub(1) % lanes;
    for &s in symbols.iter().rev() {
        // SAFETY: nw <= the symbols coded so far < symbols.len() < words.len() (the assert)
        unsafe { put_symbol(&mut states[lane], &t.sym[s as usize], words, &mut nw) };
        lane = if lane == 0 { lanes - 1 } else { lane - 1 };
    }
    nw
}

/// Chooses how to store one stream slice: rANS with `lanes` lanes (from [`super::block_lanes`]) and
/// the group's table when that is smaller, else raw (always with 0 lanes, which
/// [`super::block_lanes`] gives a slice of at most [`super::ALWAYS_RAW_BYTES`]). Returns the lane count
/// written (`LANES_RAW` for raw).
pub fn store_slice(
    symbols: &[u8],
    table: Option<&SliceCoder>,
    lanes: usize,
    out: &mut Vec<u8>,
) -> u8 {
    if let Some(t) = table {
        if !symbols.is_empty() && lanes > 0 {
            let start = out.len();
            t.encode(symbols, lanes, out);
            if out.len() - start < symbols.len() {
                return lanes as u8;
            }
            out.truncate(start);
        }
    }
    out.extend_from_slice(symbols);
    LANES_RAW
}
