//! Wide slices (a rANS slice of 33 to 64 lanes that stores, after
//! its states, the word count `W0` of lanes 0-31 and then two word areas, lanes 0-31's and the
//! other lanes', FORMAT.md §3.1 rule 4, §5.3, §5.4): the reference rANS decoder
//! (`aceapex::device::rans::decode_slice`) against the fast CPU decoder (host/cpu/rans.rs:
//! `decode_slice`, `SliceDecoder` stepwise and in `fast_rows_together` batches) and against
//! this file's own encoder and decoder written from the text (not from the crate), on valid,
//! damaged and hostile slices: every lane count 33..=64, single tables, context pairs and
//! packed literals, random and skewed data; truncations at every word, bit flips, `W0` at 0,
//! `W0 - 1`, `W0 + 1`, the word count, one more, `2^31 + W0` (a `2 * W0` that wraps in 32
//! bits) and `u32::MAX`, states below 65536 in either half, words added to or dropped from
//! either area, both halves damaged at once, lane counts and decoded lengths changed; whole
//! archives: encoder archives with wide slices (raw match streams and wide lanes, levels
//! 1-7) relabelled to the pre-release versions 2-8 (refused naming the version) and 0, 9+
//! (refused), lane counts changed to 1..=64 and 65..=255 in their entries, `W0` and the word
//! areas damaged (each resealed, with the status the text predicts where it predicts one),
//! hand-made archives with wide slices in every stream (context pairs and packed literals too), resealed
//! random mutation, and real DNA (corpora/dna) at levels 1, 5, 6 and 7. Nothing may panic,
//! the decoders agree with each other and with the text on every slice and block (status, and
//! bytes when Ok), and no decoder returns Ok with bytes other than the original.
//!
//! Env (counts scale the work; the defaults run in well under a minute in release):
//! ATTACK_SEED, ATTACK_ITERS (random direct slices), ATTACK_ROUNDS (slice batches decoded
//! together), ATTACK_ENC_ROUNDS (encoder archives), ATTACK_HAND_ROUNDS (hand-made archives),
//! ATTACK_FUZZ_ITERS (resealed mutation), ATTACK_DAMAGE (damaged variants per archive),
//! ATTACK_CORPORA (the corpora folder, default `corpora/`, for the
//! ignored real-data test), ATTACK_KIB (KiB taken from each DNA file).

use crate::common::attack::{
    combos, compare_archive, env, gen_lits, never_wrong_grouped, random_alphabet, table_below,
    width,
};
use crate::common::parts::{assemble, parts, Parts};
use crate::common::{get_u32, Rng};
use aceapex::device::format::*;
use aceapex::device::rans::{self as reference, SliceTables};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{
    encode_context_slice, encode_slice_with, expansion_table, EncodeTable, FreqTable,
};
use aceapex::format::Archive;
use aceapex::{DecodeError, FormatError, Settings};

const H_VERSION: usize = 4;
const H_BASE: usize = 85;
const HEADER_SIZE: usize = 96;

// ---------------------------------------------------------------------------------------
// FORMAT.md §5.2-§5.6, written out from the text (not from the crate)
// ---------------------------------------------------------------------------------------

/// The lower bound of a state (§5.4): 65536.
const L: u32 = 65536;
/// Lanes per word area of a wide slice (§5.3): lane `j` reads area `j / 32`.
const AREA_LANES: usize = 32;
/// Most lanes of a slice (§3.1 rule 4).
const MOST_LANES: usize = 64;

/// One table or a context pair (§5.2, §5.4) as the text defines them: frequencies summing to
/// 4096, `cum[s]` the sum below `s`, slot `x & 4095` in `[cum[s], cum[s] + freq[s])` is `s`.
struct Spec {
    freq: Vec<[u32; 256]>,
    cum: Vec<[u32; 256]>,
    sym: Vec<Vec<u8>>,
    ctx_bit: u32,
}

impl Spec {
    fn new(tables: &[FreqTable], ctx_bit: u32) -> Spec {
        assert!(tables.len() == 1 || tables.len() == 2);
        assert!(ctx_bit < 8);
        let mut s = Spec {
            freq: Vec::new(),
            cum: Vec::new(),
            sym: Vec::new(),
            ctx_bit,
        };
        for t in tables {
            assert_eq!(t.freq.iter().sum::<u32>(), 4096, "a table sums to 4096");
            let mut cum = [0u32; 256];
            let mut sym = Vec::with_capacity(4096);
            let mut c = 0;
            for x in 0..256 {
                cum[x] = c;
                c += t.freq[x];
                sym.extend(std::iter::repeat_n(x as u8, t.freq[x] as usize));
            }
            s.freq.push(t.freq);
            s.cum.push(cum);
            s.sym.push(sym);
        }
        s
    }

    /// The table of a symbol whose lane decoded `prev` before it (0 for a lane's first).
    fn pick(&self, prev: u8) -> usize {
        (self.freq.len() == 2 && (prev >> self.ctx_bit) & 1 == 1) as usize
    }

    /// Whether every symbol is in the table its context picks with `lanes` lanes (a pair
    /// made for other lanes may lack some, and then the slice cannot be coded).
    fn codes(&self, symbols: &[u8], lanes: usize) -> bool {
        (0..symbols.len()).all(|i| {
            let prev = if i >= lanes { symbols[i - lanes] } else { 0 };
            self.freq[self.pick(prev)][symbols[i] as usize] > 0
        })
    }
}

/// §5.5, the reference encoding, as the text gives it: symbols last first, each by lane
/// `i % lanes`; `x >= 2^20 * freq` emits the low 16 bits; a wide slice (more than 32 lanes)
/// keeps one word list per 32 lanes and writes, after the states, the first list's length.
fn spec_encode(symbols: &[u8], lanes: usize, sp: &Spec) -> Vec<u8> {
    assert!((1..=MOST_LANES).contains(&lanes));
    let wide = lanes > AREA_LANES;
    let mut x = vec![L; lanes];
    let mut words: [Vec<u16>; 2] = Default::default();
    for i in (0..symbols.len()).rev() {
        let j = i % lanes;
        let prev = if i >= lanes { symbols[i - lanes] } else { 0 };
        let t = sp.pick(prev);
        let s = symbols[i] as usize;
        let f = sp.freq[t][s];
        assert!(f > 0, "symbol {s} not in its table");
        if x[j] as u64 >= (f as u64) << 20 {
            words[if wide { j / AREA_LANES } else { 0 }].push(x[j] as u16);
            x[j] >>= 16;
        }
        x[j] = (x[j] / f) * 4096 + x[j] % f + sp.cum[t][s];
    }
    let mut out = Vec::new();
    for v in &x {
        out.extend_from_slice(&v.to_le_bytes());
    }
    if wide {
        out.extend_from_slice(&(words[0].len() as u32).to_le_bytes());
    }
    for w in &words {
        for v in w.iter().rev() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// §5.4 as the text gives it, for `m` symbols: the status and the symbols (meaningful when
/// Ok). A lane count outside 1..=64 is `SliceMode` (§7: "lane count out of range").
fn spec_decode(slice: &[u8], lanes: usize, sp: &Spec, m: usize) -> (Result<(), Status>, Vec<u8>) {
    let fail = |s| (Err(s), Vec::new());
    if lanes == 0 || lanes > MOST_LANES {
        return fail(Status::SliceMode);
    }
    let wide = lanes > AREA_LANES;
    let h = 4 * lanes + if wide { 4 } else { 0 };
    if slice.len() < h || !(slice.len() - h).is_multiple_of(2) {
        return fail(Status::RansHeader);
    }
    let total = (slice.len() - h) / 2;
    let w0 = if wide {
        get_u32(slice, 4 * lanes) as u64
    } else {
        total as u64
    };
    if 2 * w0 > (slice.len() - h) as u64 {
        return fail(Status::RansHeader);
    }
    let mut x: Vec<u32> = (0..lanes).map(|j| get_u32(slice, 4 * j)).collect();
    if x.iter().any(|&v| v < L) {
        return fail(Status::RansHeader);
    }
    let word = |k: usize| u16::from_le_bytes([slice[h + 2 * k], slice[h + 2 * k + 1]]) as u32;
    let w0 = w0 as usize;
    // areas as [start, end) word indices
    let areas = [(0usize, w0), (w0, total)];
    let mut next = [0usize, w0];
    let mut out = vec![0u8; m];
    for i in 0..m {
        let j = i % lanes;
        let prev = if i >= lanes { out[i - lanes] } else { 0 };
        let t = sp.pick(prev);
        let slot = x[j] & 4095;
        let s = sp.sym[t][slot as usize];
        out[i] = s;
        x[j] = sp.freq[t][s as usize] * (x[j] >> 12) + slot - sp.cum[t][s as usize];
        if x[j] < L {
            let a = if wide { j / AREA_LANES } else { 0 };
            if next[a] >= areas[a].1 {
                return fail(Status::RansUnderflow);
            }
            x[j] = (x[j] << 16) | word(next[a]);
            next[a] += 1;
        }
    }
    if next[0] != areas[0].1 || next[1] != areas[1].1 || x.iter().any(|&v| v != L) {
        return fail(Status::RansTrailer);
    }
    (Ok(()), out)
}

/// Packs `lits` per §5.6 (symbol `j` is `sum c_t a^t` over literals `w j + t`), padding
/// digits zero.
fn pack_spec(lits: &[u8], alphabet: &[u8]) -> Vec<u8> {
    let a = alphabet.len();
    let w = width(a);
    let code = |x: u8| alphabet.iter().position(|&y| y == x).expect("letter");
    (0..lits.len().div_ceil(w))
        .map(|j| {
            let mut s = 0usize;
            for t in (0..w).rev() {
                s = s * a + lits.get(w * j + t).map_or(0, |&x| code(x));
            }
            s as u8
        })
        .collect()
}

/// §5.6 backwards: the `n` literals of packed `symbols` (each below `a^w`).
fn unpack_spec(symbols: &[u8], alphabet: &[u8], n: usize) -> Vec<u8> {
    let a = alphabet.len();
    let w = width(a);
    let mut out = Vec::with_capacity(n);
    for &s in symbols {
        let mut rest = s as usize;
        assert!(rest < combos(a));
        for _ in 0..w {
            out.push(alphabet[rest % a]);
            rest /= a;
        }
    }
    out.truncate(n);
    out
}

// ---------------------------------------------------------------------------------------
// data and tables
// ---------------------------------------------------------------------------------------

/// Symbols for a slice: random bytes, skewed bytes, or a few letters.
fn gen_symbols(r: &mut Rng, n: usize) -> Vec<u8> {
    match r.below(4) {
        0 => (0..n).map(|_| r.next() as u8).collect(),
        1 => {
            let k = r.range(1, 256) as usize;
            let al = random_alphabet(r, k);
            gen_lits(r, &al, n)
        }
        _ => {
            let k = r.range(1, 12) as usize;
            let al = random_alphabet(r, k);
            gen_lits(r, &al, n)
        }
    }
}

fn hist(data: &[u8]) -> [u64; 256] {
    let mut h = [0u64; 256];
    for &x in data {
        h[x as usize] += 1;
    }
    h
}

/// A context pair for `data` coded with `lanes` lanes on bit `bit` (§5.4): each table from
/// the symbols its context picks, so that every symbol is present where it is needed.
fn pair_for(r: &mut Rng, data: &[u8], lanes: usize, bit: u32) -> [FreqTable; 2] {
    let mut h = [[0u64; 256]; 2];
    for (i, &x) in data.iter().enumerate() {
        let c = if i >= lanes {
            (data[i - lanes] >> bit) & 1
        } else {
            0
        };
        h[c as usize][x as usize] += 1;
    }
    [table_below(r, h[0], 256), table_below(r, h[1], 256)]
}

/// What a slice codes: plain symbols, symbols under a context pair, or packed literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    Pair,
    Packed,
}

/// One valid slice made three ways: the data (`data`: what it decodes to; for packed
/// literals the literals), its symbols, the tables and the slice from the crate's encoder,
/// which must equal [`spec_encode`]'s byte for byte.
struct Made {
    kind: Kind,
    lanes: usize,
    data: Vec<u8>,
    symbols: Vec<u8>,
    tables: Vec<FreqTable>,
    ctx_bit: u32,
    alphabet: Option<Vec<u8>>,
    slice: Vec<u8>,
}

impl Made {
    fn new(r: &mut Rng, kind: Kind, lanes: usize, n: usize) -> Made {
        let (data, symbols, tables, ctx_bit, alphabet) = match kind {
            Kind::Plain => {
                let d = gen_symbols(r, n);
                let t = table_below(r, hist(&d), 256);
                (d.clone(), d, vec![t], 0, None)
            }
            Kind::Pair => {
                let d = gen_symbols(r, n);
                let bit = r.below(8) as u32;
                let p = pair_for(r, &d, lanes, bit);
                (d.clone(), d, p.to_vec(), bit, None)
            }
            Kind::Packed => {
                let a = r.range(1, 16) as usize;
                let al = random_alphabet(r, a);
                let lits = gen_lits(r, &al, n);
                let syms = pack_spec(&lits, &al);
                let t = table_below(r, hist(&syms), combos(a));
                (lits, syms, vec![t], 0, Some(al))
            }
        };
        let et: Vec<EncodeTable> = tables
            .iter()
            .map(|t| EncodeTable::new(t, &t.cumulative()))
            .collect();
        let mut slice = Vec::new();
        if et.len() == 2 {
            encode_context_slice(&symbols, lanes, [&et[0], &et[1]], ctx_bit, &mut slice);
        } else {
            encode_slice_with(&symbols, lanes, &et[0], &mut slice);
        }
        let m = Made {
            kind,
            lanes,
            data,
            symbols,
            tables,
            ctx_bit,
            alphabet,
            slice,
        };
        assert!(
            m.slice == spec_encode(&m.symbols, lanes, &m.spec()),
            "the crate's encoder differs from the text: {kind:?}, lanes {lanes}, n {n}"
        );
        m
    }

    fn spec(&self) -> Spec {
        Spec::new(&self.tables, self.ctx_bit)
    }
}

/// The decode tables of a [`Made`] (and the expansion table of packed literals).
struct Tabs {
    dec: Vec<DecodeTable>,
    exp: Option<DecodeTable>,
    ctx_bit: u32,
}

impl Tabs {
    fn of(m: &Made) -> Tabs {
        Tabs {
            dec: m.tables.iter().map(|t| *t.decode_table()).collect(),
            exp: m.alphabet.as_ref().map(|a| *expansion_table(a)),
            ctx_bit: m.ctx_bit,
        }
    }
    fn get(&self) -> SliceTables<'_> {
        SliceTables {
            tables: &self.dec,
            ctx_bit: self.ctx_bit,
            pack: self.exp.as_ref(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// the wide layout, taken apart by the text
// ---------------------------------------------------------------------------------------

/// A wide slice's parts (§5.3): states, `W0` as stored, and the two word areas.
#[derive(Clone, Debug)]
struct Wide {
    states: Vec<u32>,
    first: u32,
    words: [Vec<u16>; 2],
}

impl Wide {
    /// The parts of a valid wide slice of `lanes` lanes.
    fn parse(s: &[u8], lanes: usize) -> Wide {
        assert!(lanes > AREA_LANES);
        let h = 4 * lanes + 4;
        let states = (0..lanes).map(|j| get_u32(s, 4 * j)).collect();
        let first = get_u32(s, 4 * lanes);
        let all: Vec<u16> = s[h..]
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert!(first as usize <= all.len());
        let (a, b) = all.split_at(first as usize);
        Wide {
            states,
            first,
            words: [a.to_vec(), b.to_vec()],
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for v in &self.states {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.first.to_le_bytes());
        for w in &self.words {
            for v in w {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    fn total(&self) -> usize {
        self.words[0].len() + self.words[1].len()
    }

    /// `W0` set to `first`, areas kept as bytes (so the split moves).
    fn with_first(&self, first: u32) -> Vec<u8> {
        let mut b = self.bytes();
        let at = 4 * self.states.len();
        b[at..at + 4].copy_from_slice(&first.to_le_bytes());
        b
    }
}

const OK: Result<(), Status> = Ok(());
const HEADER: Result<(), Status> = Err(Status::RansHeader);
const UNDERFLOW: Result<(), Status> = Err(Status::RansUnderflow);
const TRAILER: Result<(), Status> = Err(Status::RansTrailer);

/// A damaged variant: name, slice bytes, and the status the text predicts (None: left to
/// [`spec_decode`]; `Some(Err(RansUnderflow | RansTrailer))` both allowed is `any_err`).
struct Variant {
    name: String,
    slice: Vec<u8>,
    expect: Option<Result<(), Status>>,
    /// Must fail, without the text naming which way.
    any_err: bool,
}

fn var(name: impl Into<String>, slice: Vec<u8>, expect: Option<Result<(), Status>>) -> Variant {
    Variant {
        name: name.into(),
        slice,
        expect,
        any_err: false,
    }
}

/// Every damage of a valid wide slice the text names the outcome of, and some it does not.
/// The reasoning of each expectation (FORMAT.md §5.4): lanes 0-31 and lanes 32+ decode
/// independently of each other's words; a lane that reads the right words needs exactly the
/// words it was coded with; so an area short of words underflows, an area with a word left
/// over fails the trailer, and a `W0` past the words is a header error.
fn wide_variants(r: &mut Rng, w: &Wide, lanes: usize) -> Vec<Variant> {
    let (n0, n1) = (w.words[0].len(), w.words[1].len());
    let total = w.total();
    let t = total as u32;
    let mut v = vec![
        var(
            "W0 0",
            w.with_first(0),
            Some(if n0 > 0 { UNDERFLOW } else { OK }),
        ),
        var(
            "W0 total",
            w.with_first(t),
            Some(if n1 > 0 { UNDERFLOW } else { OK }),
        ),
        var("W0 total + 1", w.with_first(t + 1), Some(HEADER)),
        var("W0 u32::MAX", w.with_first(u32::MAX), Some(HEADER)),
        var("W0 2^31", w.with_first(1 << 31), Some(HEADER)),
        // 2 * W0 wraps to 2 * n0 in 32 bits
        var(
            "W0 2^31 + n0",
            w.with_first((1u32 << 31) + n0 as u32),
            Some(HEADER),
        ),
        var(
            "W0 2^32 - total",
            w.with_first(0u32.wrapping_sub(t)),
            Some(if t == 0 { OK } else { HEADER }),
        ),
        var(
            "W0 random",
            w.with_first(r.below(t as u64 + 3) as u32),
            None,
        ),
        var(
            "cut one byte",
            {
                let b = w.bytes();
                b[..b.len() - 1].to_vec()
            },
            Some(HEADER),
        ),
        var(
            "word appended to area 1",
            {
                let mut x = w.clone();
                x.words[1].push(r.next() as u16);
                x.bytes()
            },
            Some(TRAILER),
        ),
        var(
            "word added to area 0, W0 + 1",
            {
                let mut x = w.clone();
                x.words[0].push(r.next() as u16);
                x.first += 1;
                x.bytes()
            },
            Some(TRAILER),
        ),
        var(
            "word inserted at the front of area 1",
            {
                let mut x = w.clone();
                x.words[1].insert(0, r.next() as u16);
                x.bytes()
            },
            None,
        ),
        var(
            "areas swapped",
            {
                let mut x = w.clone();
                x.words.swap(0, 1);
                x.first = n1 as u32;
                x.bytes()
            },
            None,
        ),
    ];
    // W0 one off: one area a word short (underflow there), or lanes 32+ reading a word of
    // lanes 0-31 first and area 0 a word over (never Ok)
    if n0 > 0 {
        v.push(var("W0 - 1", w.with_first(n0 as u32 - 1), Some(UNDERFLOW)));
        v.push(var(
            "last word of area 0 dropped, W0 - 1",
            {
                let mut x = w.clone();
                x.words[0].pop();
                x.first -= 1;
                x.bytes()
            },
            Some(UNDERFLOW),
        ));
        // both halves at once: area 0 short, area 1 a word over (underflow comes first)
        v.push(var(
            "both: area 0 short, area 1 over",
            {
                let mut x = w.clone();
                x.words[0].pop();
                x.first -= 1;
                x.words[1].push(r.next() as u16);
                x.bytes()
            },
            Some(UNDERFLOW),
        ));
    }
    if n1 > 0 {
        v.push(Variant {
            any_err: true,
            ..var("W0 + 1", w.with_first(n0 as u32 + 1), None)
        });
        v.push(var(
            "first word of area 1 dropped",
            {
                let mut x = w.clone();
                x.words[1].remove(0);
                x.bytes()
            },
            None,
        ));
        // both halves at once: area 0 a word over, area 1 short
        v.push(var(
            "both: area 0 over, area 1 short",
            {
                let mut x = w.clone();
                x.words[0].push(r.next() as u16);
                x.first += 1;
                x.words[1].pop();
                x.bytes()
            },
            Some(UNDERFLOW),
        ));
    }
    // words cut off the end: area 1's last ones (underflow), then into area 0 (W0 past the
    // words: header)
    let cuts: Vec<usize> = if total <= 40 {
        (1..=total).collect()
    } else {
        let mut c = vec![1, 2, n1, n1 + 1, total, total - 1];
        for _ in 0..6 {
            c.push(r.range(1, total as u64) as usize);
        }
        c.into_iter()
            .filter(|&k| (1..=total).contains(&k))
            .collect()
    };
    for k in cuts {
        let b = w.bytes();
        v.push(var(
            format!("{k} words cut"),
            b[..b.len() - 2 * k].to_vec(),
            Some(if k <= n1 { UNDERFLOW } else { HEADER }),
        ));
    }
    // into the head: shorter than the states and W0
    let head = 4 * lanes + 4;
    for cut in [0, 1, 4 * lanes - 1, 4 * lanes, 4 * lanes + 1, head - 1] {
        v.push(var(
            format!("{cut} bytes kept"),
            w.bytes()[..cut].to_vec(),
            Some(HEADER),
        ));
    }
    // a state below 65536 in either half, and with the other half damaged too
    for half in 0..2 {
        let j = if half == 0 {
            r.below(AREA_LANES as u64) as usize
        } else {
            AREA_LANES + r.below((lanes - AREA_LANES) as u64) as usize
        };
        let any = r.below(L as u64) as u32;
        let low = r.pick(&[0u32, 1, L - 1, any]);
        let mut x = w.clone();
        x.states[j] = low;
        v.push(var(format!("state {j} = {low}"), x.bytes(), Some(HEADER)));
        // both halves at once: the other half's area short (a header error comes first)
        let other = 1 - half;
        if !x.words[other].is_empty() {
            x.words[other].pop();
            if other == 0 {
                x.first -= 1;
            }
            v.push(var(
                format!("both: state {j} = {low}, area {other} short"),
                x.bytes(),
                Some(HEADER),
            ));
        }
    }
    // both halves' states below 65536
    {
        let mut x = w.clone();
        x.states[0] = 0;
        x.states[lanes - 1] = L - 1;
        v.push(var("both: states 0 and last low", x.bytes(), Some(HEADER)));
    }
    // flips: a state, W0, a word of each area, anywhere
    for _ in 0..6 {
        let b = w.bytes();
        let i = match r.below(5) {
            0 => r.below(4 * lanes as u64) as usize,
            1 => 4 * lanes + r.below(4) as usize,
            2 if n0 > 0 => head + r.below(2 * n0 as u64) as usize,
            3 if n1 > 0 => head + 2 * n0 + r.below(2 * n1 as u64) as usize,
            _ => r.below(b.len() as u64) as usize,
        };
        let mut b = b;
        let bit = r.below(8);
        b[i] ^= 1 << bit;
        v.push(var(format!("flip byte {i} bit {bit}"), b, None));
    }
    v
}

// ---------------------------------------------------------------------------------------
// slices: fast vs reference vs the text
// ---------------------------------------------------------------------------------------

/// The text's outcome of a slice: its [`Spec`] and, for packed literals, the alphabet.
struct Oracle<'a> {
    spec: &'a Spec,
    alphabet: Option<&'a [u8]>,
}

impl Oracle<'_> {
    fn decode(&self, slice: &[u8], lanes: usize, n: usize) -> (Result<(), Status>, Vec<u8>) {
        let m = self.alphabet.map_or(n, |a| n.div_ceil(width(a.len())));
        let (st, syms) = spec_decode(slice, lanes, self.spec, m);
        match (st, self.alphabet) {
            (Ok(()), Some(a)) => (st, unpack_spec(&syms, a, n)),
            _ => (st, syms),
        }
    }
}

/// [`crate::common::attack::check_slice`] (the reference, the fast decoder and a stepwise
/// `SliceDecoder` agree); with an oracle, also as the text's. Returns the reference's outcome
/// and bytes.
fn check_slice(
    r: &mut Rng,
    slice: &[u8],
    lanes: usize,
    t: SliceTables<'_>,
    n: usize,
    oracle: Option<&Oracle<'_>>,
    what: &dyn Fn() -> String,
) -> (Result<(), Status>, Vec<u8>) {
    let (st_ref, want) = crate::common::attack::check_slice(r, slice, lanes, t, n, what);
    if let Some(o) = oracle {
        let (st_spec, bytes) = o.decode(slice, lanes, n);
        assert_eq!(st_ref, st_spec, "status differs from the text: {}", what());
        if st_spec.is_ok() {
            assert!(want == bytes, "bytes differ from the text: {}", what());
        }
    }
    (st_ref, want)
}

/// A valid slice and its damaged variants ([`wide_variants`] for a wide one), plus lane
/// counts and decoded lengths changed: every decoder as the text, and the text's named
/// statuses. Returns (variants checked, of them Ok).
fn attack_made(r: &mut Rng, m: &Made, what: &str) -> (usize, usize) {
    let tabs = Tabs::of(m);
    let spec = m.spec();
    let oracle = Oracle {
        spec: &spec,
        alphabet: m.alphabet.as_deref(),
    };
    let n = m.data.len();
    let lanes = m.lanes;
    let w_ = || format!("{what}: valid {:?}, lanes {lanes}, n {n}", m.kind);
    let (st, got) = check_slice(r, &m.slice, lanes, tabs.get(), n, Some(&oracle), &w_);
    assert_eq!(st, OK, "{}", w_());
    assert!(got == m.data, "valid slice decodes wrong: {}", w_());
    let mut variants = if lanes > AREA_LANES {
        wide_variants(r, &Wide::parse(&m.slice, lanes), lanes)
    } else {
        Vec::new()
    };
    let mut stats = (0, 0);
    // other lane counts and lengths, on the same bytes
    let other_lanes = [
        lanes - 1,
        lanes + 1,
        32,
        33,
        64,
        65,
        0,
        r.range(1, 64) as usize,
        r.range(33, 64) as usize,
    ];
    for l in other_lanes {
        let w_ = || format!("{what}: {:?} lanes {lanes} read as {l}, n {n}", m.kind);
        let (st, _) = check_slice(r, &m.slice, l, tabs.get(), n, Some(&oracle), &w_);
        if l == 0 || l > MOST_LANES {
            assert_eq!(st, Err(Status::SliceMode), "{}", w_());
        }
        stats.0 += 1;
        stats.1 += st.is_ok() as usize;
    }
    let other_n = [
        n + 1,
        n.saturating_sub(1),
        n + lanes,
        0,
        r.below(2 * n as u64 + 9) as usize,
    ];
    for n2 in other_n {
        let w_ = || format!("{what}: {:?} lanes {lanes}, n {n} read as {n2}", m.kind);
        let (st, _) = check_slice(r, &m.slice, lanes, tabs.get(), n2, Some(&oracle), &w_);
        stats.0 += 1;
        stats.1 += st.is_ok() as usize;
    }
    for v in variants.drain(..) {
        let w_ = || {
            format!(
                "{what}: {:?} lanes {lanes}, n {n}, {} ({} bytes)",
                m.kind,
                v.name,
                v.slice.len()
            )
        };
        let (st, _) = check_slice(r, &v.slice, lanes, tabs.get(), n, Some(&oracle), &w_);
        if let Some(e) = v.expect {
            assert_eq!(st, e, "the text names another status: {}", w_());
        }
        if v.any_err {
            assert!(st.is_err(), "{}", w_());
        }
        stats.0 += 1;
        stats.1 += st.is_ok() as usize;
    }
    (stats.0, stats.1)
}

/// The crate's encoder writes what the text describes, byte for byte, for every lane count
/// 1..=64 (single tables, context pairs, packed literals; lengths around multiples of 32 and
/// of the lane count), and every decoder gives the data back.
#[test]
fn encoder_writes_the_text_layout_for_every_lane_count() {
    let mut r = Rng(0xC7_0000 + env("ATTACK_SEED", 0));
    let mut count = 0;
    for lanes in 1..=MOST_LANES {
        for kind in [Kind::Plain, Kind::Pair, Kind::Packed] {
            let y = r.below(6000) as usize;
            for n in [
                0usize,
                1,
                31,
                32,
                33,
                lanes - 1,
                lanes + 1,
                3 * lanes + 5,
                y,
            ] {
                let m = Made::new(&mut r, kind, lanes, n);
                if lanes > AREA_LANES {
                    // §5.3: states, W0, the areas; W0 the words of lanes 0-31
                    let w = Wide::parse(&m.slice, lanes);
                    assert_eq!(w.first as usize, w.words[0].len());
                    assert_eq!(m.slice.len(), 4 * lanes + 4 + 2 * w.total());
                }
                let tabs = Tabs::of(&m);
                let spec = m.spec();
                let o = Oracle {
                    spec: &spec,
                    alphabet: m.alphabet.as_deref(),
                };
                let w_ = || format!("{kind:?}, lanes {lanes}, n {n}");
                let (st, got) = check_slice(&mut r, &m.slice, lanes, tabs.get(), n, Some(&o), &w_);
                assert_eq!(st, OK, "{}", w_());
                assert!(got == m.data, "{}", w_());
                count += 1;
            }
        }
    }
    eprintln!("{count} valid slices, lanes 1..=64, encoder == text");
}

/// Every lane count 33..=64, each table kind, random and skewed data of several lengths:
/// the valid slice, then every damage of [`wide_variants`], other lane counts and lengths.
#[test]
fn every_wide_lane_count_damaged() {
    let mut r = Rng(0xC7_0001 + env("ATTACK_SEED", 0));
    let (mut checked, mut ok) = (0, 0);
    for lanes in AREA_LANES + 1..=MOST_LANES {
        for kind in [Kind::Plain, Kind::Pair, Kind::Packed] {
            let ns = [
                r.below(lanes as u64) as usize,
                lanes * r.range(1, 8) as usize + r.below(3) as usize,
                r.range(300, 3000) as usize,
                r.range(3000, 20000) as usize,
            ];
            for n in ns {
                let m = Made::new(&mut r, kind, lanes, n);
                let (c, k) = attack_made(&mut r, &m, "every lane count");
                checked += c;
                ok += k;
            }
        }
    }
    eprintln!("damaged wide slices: {checked} checked, {ok} decoded Ok");
    assert!(checked > 10_000);
}

/// A hostile table (unrelated to the data) or expansion table on a wide slice, and packed
/// literals under a context pair (out of contract: no archive makes it): the decoders agree,
/// and with the text where it defines the outcome (unpacked slices under any tables).
fn hostile_case(r: &mut Rng, it: usize) {
    let lanes = r.range(33, 64) as usize;
    let n = r.below(8000) as usize;
    let kind = r.pick(&[Kind::Plain, Kind::Pair, Kind::Packed]);
    let m = Made::new(r, kind, lanes, n);
    let mut h = [0u64; 256];
    for _ in 0..r.range(1, 20) {
        h[r.below(256) as usize] += r.range(1, 1000);
    }
    let other = FreqTable::from_histogram(&h).unwrap();
    let mut tables = m.tables.clone();
    let mut exp = m.alphabet.as_ref().map(|a| *expansion_table(a));
    let variant = r.below(4);
    match variant {
        0 => tables[0] = other,
        // a single table becomes a pair (on the slice's bit), a pair's second replaced
        1 if tables.len() == 1 => tables.push(other),
        1 => tables[1] = other,
        2 => {
            let k = r.range(1, 16) as usize;
            exp = Some(*expansion_table(&random_alphabet(r, k)));
        }
        _ => {
            let mut e = *expansion_table(&random_alphabet(r, 3));
            for x in e.slots[..256].iter_mut() {
                *x = r.next() as u32;
            }
            e.slots[PACK_WIDTH_SLOT] = r.pick(&[0u32, 1, 4, 5, u32::MAX]);
            exp = Some(e);
        }
    }
    let dec: Vec<DecodeTable> = tables.iter().map(|t| *t.decode_table()).collect();
    let st = SliceTables {
        tables: &dec,
        ctx_bit: m.ctx_bit,
        pack: exp.as_ref(),
    };
    let spec = Spec::new(&tables, m.ctx_bit);
    let o = Oracle {
        spec: &spec,
        alphabet: None,
    };
    // the text defines unpacked slices under any tables; packed symbols from a hostile table
    // may lie at or beyond a^w, and a hostile expansion table is no alphabet's
    let defined = m.alphabet.is_none() && variant < 2;
    let w_ = || format!("hostile {it}: {kind:?} variant {variant}, lanes {lanes}, n {n}");
    let _ = check_slice(r, &m.slice, lanes, st, n, defined.then_some(&o), &w_);
}

#[test]
fn direct_slices() {
    let mut r = Rng(0xC7_0002 + env("ATTACK_SEED", 0));
    let (mut checked, mut ok) = (0, 0);
    for it in 0..env("ATTACK_ITERS", 400) as usize {
        let lanes = if r.below(5) == 0 {
            r.range(1, 64) as usize
        } else {
            let any = r.range(33, 64) as usize;
            r.pick(&[33usize, 48, 63, 64, 64, any])
        };
        let n = match r.below(4) {
            0 => r.below(80) as usize,
            1 => r.below(1000) as usize,
            _ => r.below(40_000) as usize,
        };
        let kind = r.pick(&[Kind::Plain, Kind::Pair, Kind::Packed]);
        let m = Made::new(&mut r, kind, lanes, n);
        let (c, k) = attack_made(&mut r, &m, &format!("it {it}"));
        checked += c;
        ok += k;
        hostile_case(&mut r, it);
    }
    eprintln!("random slices: {checked} checked, {ok} decoded Ok");
}

/// 1-40 slices, wide and narrow mixed (some damaged), decoded with `fast_rows_together`
/// (some first advanced alone), then each to its end: every slice's status and bytes as the
/// reference's and the text's.
fn together_case(r: &mut Rng, round: usize) {
    struct Case {
        m: Made,
        slice: Vec<u8>,
        lanes: usize,
        n: usize,
    }
    let count = r.range(1, 40) as usize;
    let mut cases = Vec::new();
    for _ in 0..count {
        let lanes = r.pick(&[1usize, 2, 4, 8, 12, 16, 24, 32, 33, 40, 64, 64]);
        let max = r.pick(&[64u64, 600, 6000, 20000]);
        let n = r.below(max) as usize;
        let kind = r.pick(&[Kind::Plain, Kind::Plain, Kind::Pair, Kind::Packed]);
        let m = Made::new(r, kind, lanes, n);
        let mut c = Case {
            slice: m.slice.clone(),
            lanes,
            n,
            m,
        };
        match r.below(10) {
            0 if !c.slice.is_empty() => {
                let i = r.below(c.slice.len() as u64) as usize;
                c.slice[i] ^= 1 << r.below(8);
            }
            1 if c.slice.len() > 2 => {
                let l = c.slice.len();
                c.slice.truncate(l - 2);
            }
            2 if lanes > AREA_LANES => {
                let w = Wide::parse(&c.slice, lanes);
                c.slice = w.with_first(r.below(w.total() as u64 + 2) as u32);
            }
            3 => c.n += r.range(1, 40) as usize,
            4 => c.lanes = r.pick(&[32usize, 33, 64, 63]),
            _ => {}
        }
        cases.push(c);
    }
    let tabs: Vec<Tabs> = cases.iter().map(|c| Tabs::of(&c.m)).collect();
    let specs: Vec<Spec> = cases.iter().map(|c| c.m.spec()).collect();
    let want: Vec<(Result<(), Status>, Vec<u8>)> = cases
        .iter()
        .zip(&specs)
        .map(|(c, s)| {
            let o = Oracle {
                spec: s,
                alphabet: c.m.alphabet.as_deref(),
            };
            o.decode(&c.slice, c.lanes, c.n)
        })
        .collect();
    let slices: Vec<_> = (cases.iter().zip(&tabs))
        .map(|(c, t)| (&c.slice[..], c.lanes, t.get(), c.n))
        .collect();
    let (got, outs): (Vec<_>, Vec<_>) = crate::common::attack::decode_together(r, &slices)
        .into_iter()
        .map(|(st, o)| (Some(st), o))
        .unzip();
    for (i, (st, o)) in want.iter().enumerate() {
        let c = &cases[i];
        let what = format!(
            "round {round} slice {i}/{count}: {:?}, lanes {} read as {}, n {} read as {}",
            c.m.kind,
            c.m.lanes,
            c.lanes,
            c.m.data.len(),
            c.n
        );
        assert_eq!(
            got[i],
            Some(*st),
            "together: status differs from the text ({what})"
        );
        if st.is_ok() {
            assert!(
                outs[i] == *o,
                "together: bytes differ from the text ({what})"
            );
        }
        let mut rb = vec![0u8; c.n];
        let st_ref = reference::decode_slice(&c.slice, c.lanes, tabs[i].get(), &mut rb);
        assert_eq!(st_ref, *st, "reference differs from the text ({what})");
    }
}

#[test]
fn slices_together() {
    let mut r = Rng(0xC7_0003 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ROUNDS", 60) as usize {
        together_case(&mut r, round);
    }
}

// ---------------------------------------------------------------------------------------
// archives
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// hand-made archives: wide slices in every stream
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// resealed mutation
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// real DNA
// ---------------------------------------------------------------------------------------

mod archives;
