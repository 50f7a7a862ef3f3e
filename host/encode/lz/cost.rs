//! Bit-cost model of the match layer after static order-0 entropy coding.
//!
//! All costs are in 1/16 bit units so that everything stays integer (and deterministic).

use crate::format::varint::varint_len;

/// Fixed-point scale: costs are in units of `1 / SCALE` bits.
pub const SCALE: i32 = 16;

/// Tunable constants of the cost model (in 1/16 bits unless noted).
///
/// Exposed (hidden from docs) so that `examples/lz_estimate.rs` can explore them; the
/// defaults are what [`super::parse_segment`] uses.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostTuning {
    /// Command byte of a new match.
    pub cmd_new: i32,
    /// Command byte of a repeat match.
    pub cmd_rep: i32,
    /// Extra literal-run command caused by cutting a literal run in two.
    pub split: i32,
    /// Added to `bit_length(dist)` for the cost of a distance varint.
    pub off_extra: i32,
    /// Cost per byte of a length varint.
    pub len_byte: i32,
    /// Multiplier (percent) applied to the literal costs measured from the data.
    pub lit_scale: i32,
    /// Below this average literal cost (1/16 bits per byte, before scaling) the data is
    /// treated as "DNA-like" and the `low_*` constants apply instead.
    pub low_entropy_bits: i32,
    /// Shortest new match in DNA-like data.
    pub low_entropy_min_len: u32,
    /// `lit_scale` for DNA-like data.
    pub low_lit_scale: i32,
    /// `off_extra` for DNA-like data.
    pub low_off_extra: i32,
    /// Use the fixed distance -> minimum length table (<128: 6, <16K: 8, <2M: 10, else 12).
    pub dist_table: bool,
}

impl Default for CostTuning {
    fn default() -> Self {
        CostTuning {
            cmd_new: 7 * SCALE,
            cmd_rep: 5 * SCALE,
            split: 3 * SCALE,
            off_extra: 0,
            len_byte: 6 * SCALE,
            lit_scale: 115,
            low_entropy_bits: 3 * SCALE,
            low_entropy_min_len: 0,
            low_lit_scale: 95,
            low_off_extra: 5 * SCALE,
            dist_table: false,
        }
    }
}

impl CostTuning {
    /// The constants for archives whose match streams are stored raw
    /// (`Settings::raw_match_streams`): a new match's command byte 12 bits (default 7),
    /// a repeat's 10 (5), a cut literal run 5 (3), a length byte 10 (6), a distance its bit
    /// length plus 2 (plus 8 on DNA-like data; default 0 and 5). Raw bytes cost 8 bits each,
    /// so the default prices undercharged matches; pricing them higher still gives fewer,
    /// longer matches, which code smaller with raw streams and leave the GPU's parse less to
    /// do. Of the settings tried these coded smallest; higher prices gave still fewer
    /// commands but larger archives.
    pub fn raw_match_streams() -> Self {
        CostTuning {
            cmd_new: 12 * SCALE,
            cmd_rep: 10 * SCALE,
            split: 5 * SCALE,
            len_byte: 10 * SCALE,
            off_extra: 2 * SCALE,
            low_off_extra: 8 * SCALE,
            ..CostTuning::default()
        }
    }
}

/// Per-segment cost model: literal costs from the segment's order-0 statistics plus the
/// tuning constants.
#[derive(Clone)]
pub struct CostModel {
    /// Cost of each literal byte value.
    pub lit: [u32; 256],
    /// Average literal cost per byte of the segment (1/16 bits).
    pub avg_lit: i32,
    /// Shortest new match accepted regardless of distance.
    pub new_min_len: u32,
    /// The match base the codes are relative to ([`super::match_base`]).
    pub match_base: u32,
    /// Shortest new match worth trying per `bit_length(dist)`: a bound from the match cost
    /// and 1.5x the average literal cost (plus the optional fixed distance table).
    min_by_bits: [u32; 33],
    t: CostTuning,
}

/// Number of significant bits of `v` (0 for 0).
#[inline(always)]
fn bit_len(v: u32) -> i32 {
    (32 - v.leading_zeros()) as i32
}

impl CostModel {
    /// Builds the model from a histogram of (a sample of) the segment, for the encoder's
    /// minimum match `min_match` (which also sets the match base).
    pub fn new(hist: &[u64; 256], min_match: u32, t: &CostTuning) -> CostModel {
        let total: u64 = hist.iter().sum();
        let raw_avg = if total > 0 {
            let tot = total as f64;
            hist.iter()
                .filter(|&&c| c > 0)
                .map(|&c| c as f64 * (tot / c as f64).log2())
                .sum::<f64>()
                / tot
                * SCALE as f64
        } else {
            8.0 * SCALE as f64
        };
        let low = raw_avg < t.low_entropy_bits as f64;
        let mut t = t.clone();
        if low {
            t.lit_scale = t.low_lit_scale;
            t.off_extra = t.low_off_extra;
        }
        let t = &t;
        let mut lit = [0u32; 256];
        let mut acc: f64 = 0.0;
        if total > 0 {
            let tot = total as f64;
            // an unseen byte is charged as if it had been seen half a time
            let unseen = ((tot * 2.0).log2() * SCALE as f64).round() as u32;
            for (i, &c) in hist.iter().enumerate() {
                let bits = if c == 0 {
                    unseen
                } else {
                    let b = (tot / c as f64).log2() * SCALE as f64;
                    acc += b * c as f64;
                    b.round() as u32
                };
                // never below 1/16 bit: a match must always pay for itself
                lit[i] = ((bits as u64 * t.lit_scale as u64 / 100) as u32).max(1);
            }
        } else {
            lit = [8 * SCALE as u32; 256];
        }
        let avg_lit = if total > 0 {
            ((acc / total as f64) * t.lit_scale as f64 / 100.0).round() as i32
        } else {
            8 * SCALE
        };
        let mut new_min_len = min_match;
        if low {
            new_min_len = new_min_len.max(t.low_entropy_min_len);
        }
        let mut cm = CostModel {
            lit,
            avg_lit,
            new_min_len,
            match_base: super::match_base(min_match),
            min_by_bits: [new_min_len; 33],
            t: t.clone(),
        };
        let per_byte = (avg_lit.max(1) * 3 / 2).max(1);
        for b in 0..33u32 {
            let d = if b == 0 { 0 } else { 1u32 << (b - 1) };
            let cost = cm.new_match(cm.match_base, d.max(1));
            let mut m = ((cost + per_byte - 1) / per_byte) as u32;
            if t.dist_table {
                m = m.max(if b <= 7 {
                    6
                } else if b <= 14 {
                    8
                } else if b <= 21 {
                    10
                } else {
                    12
                });
            }
            cm.min_by_bits[b as usize] = m.max(new_min_len);
        }
        cm
    }

    /// Estimated cost of a new match of `len` bytes at distance `dist`.
    #[inline(always)]
    pub fn new_match(&self, len: u32, dist: u32) -> i32 {
        let mut c = self.t.cmd_new + self.t.split + (bit_len(dist) * SCALE) + self.t.off_extra;
        let l = len - self.match_base;
        if l >= aceapex_device::format::SHORT_MATCH_CODES {
            c += varint_len(l) * self.t.len_byte;
        }
        c
    }

    /// Estimated cost of a repeat match of `len` bytes.
    #[inline(always)]
    pub fn rep_match(&self, len: u32) -> i32 {
        let mut c = self.t.cmd_rep + self.t.split;
        let escape = self.match_base + aceapex_device::format::REPEAT_LEN_ESCAPE;
        if len >= escape {
            c += varint_len(len - escape) * self.t.len_byte;
        }
        c
    }

    /// Shortest acceptable new match at distance `dist`.
    #[inline(always)]
    pub fn min_len_at(&self, dist: u32) -> u32 {
        self.min_by_bits[bit_len(dist) as usize]
    }
}

/// Prices of the optimal parser (1/16 bits): what a literal, the start of a literal run and
/// a match add to a block's coded size.
pub(super) trait Prices {
    /// A literal byte `b`.
    fn lit(&self, b: u8) -> i32;
    /// The literal-run command that a literal after a match (or at the block start) opens.
    fn run_start(&self) -> i32;
    /// A new match of `len` bytes at distance `dist`: command, length and distance bytes.
    fn new_match(&self, len: u32, dist: u32) -> i32;
    /// A repeat match of history slot `slot`, `len` bytes.
    fn rep_match(&self, slot: usize, len: u32) -> i32;
}

impl Prices for CostModel {
    #[inline(always)]
    fn lit(&self, b: u8) -> i32 {
        self.lit[b as usize] as i32
    }
    #[inline(always)]
    fn run_start(&self) -> i32 {
        self.t.split
    }
    // the model's match prices include the cut of the literal run that follows; the
    // optimal parser charges that cut at the literal instead
    #[inline(always)]
    fn new_match(&self, len: u32, dist: u32) -> i32 {
        CostModel::new_match(self, len, dist) - self.t.split
    }
    #[inline(always)]
    fn rep_match(&self, _slot: usize, len: u32) -> i32 {
        CostModel::rep_match(self, len) - self.t.split
    }
}

/// Distances below this have their price in a table ([`StatPrices::off`]).
const OFF_TABLE: usize = 1 << 14;

/// Prices from symbol statistics of the five streams (FORMAT.md §4: the exact command byte
/// of every literal run, match and repeat, each length and distance varint byte), so the
/// optimal parser sees what the static rANS tables of the block's group will charge
/// (FORMAT.md §5.1). Built from stream counts of an earlier parse (the group's blocks so
/// far and a first parse of this block); a symbol's price is `log2(total / count)` with a
/// Krichevsky-Trofimov correction, capped at the 12-bit table resolution.
pub(super) struct StatPrices {
    lit: [i32; 256],
    cmd: [i32; 256],
    len: [i32; 256],
    tail: [i32; 256],
    /// Distance-varint price of every distance below [`OFF_TABLE`].
    off: Vec<i32>,
    off_head: [i32; 256],
    run_start: i32,
    /// The match base the command codes are relative to.
    match_base: u32,
}

/// Cap of one symbol's price: a frequency of 1 in the 12-bit tables (FORMAT.md §5).
const MAX_SYMBOL_PRICE: i32 = aceapex_device::format::PROB_BITS as i32 * SCALE;

impl StatPrices {
    /// Prices from per-stream symbol counts in `STREAM_*` order, for codes at match base
    /// `match_base`.
    pub fn new(
        counts: &[[u32; 256]; aceapex_device::format::STREAM_COUNT],
        match_base: u32,
    ) -> StatPrices {
        use aceapex_device::format::{
            STREAM_COMMANDS, STREAM_LENGTHS, STREAM_LITERALS, STREAM_OFFSETS, STREAM_OFFSET_TAILS,
        };
        let table = |c: &[u32; 256]| {
            let total: f64 = c.iter().map(|&v| v as f64).sum::<f64>() + 128.0;
            let mut p = [0i32; 256];
            for (x, &v) in p.iter_mut().zip(c) {
                let bits = (total / (v as f64 + 0.5)).log2() * SCALE as f64;
                *x = (bits.round() as i32).clamp(1, MAX_SYMBOL_PRICE);
            }
            p
        };
        let lit = table(&counts[STREAM_LITERALS]);
        let cmd = table(&counts[STREAM_COMMANDS]);
        let len = table(&counts[STREAM_LENGTHS]);
        let off_head = table(&counts[STREAM_OFFSETS]);
        let tail = table(&counts[STREAM_OFFSET_TAILS]);
        // the literal-run command a cut opens: the mean price of the run commands seen
        let runs = &counts[STREAM_COMMANDS][..0x80];
        let n_runs: u64 = runs.iter().map(|&v| v as u64).sum();
        let weighted: u64 = runs
            .iter()
            .zip(&cmd[..0x80])
            .map(|(&v, &p)| v as u64 * p as u64)
            .sum();
        let run_start = weighted.checked_div(n_runs).map_or(6 * SCALE, |p| p as i32);
        let mut sp = StatPrices {
            lit,
            cmd,
            len,
            tail,
            off: Vec::new(),
            off_head,
            run_start,
            match_base,
        };
        sp.off = (0..OFF_TABLE as u32).map(|d| sp.dist_price(d)).collect();
        sp
    }

    /// Price of a match's command byte and length varint ([`super::match_code`]).
    #[inline(always)]
    fn code_price(&self, slot: Option<usize>, len: u32) -> i32 {
        let (c, extra) = super::match_code(slot, len, self.match_base);
        self.cmd[c as usize] + extra.map_or(0, |v| varint_price(&self.len, v))
    }

    /// Price of the distance varint of `d` (FORMAT.md §4.2: first byte, then the tail).
    fn dist_price(&self, d: u32) -> i32 {
        if d < 0x80 {
            self.off_head[d as usize]
        } else {
            self.off_head[(d as u8 | 0x80) as usize] + varint_price(&self.tail, d >> 7)
        }
    }
}

/// Price of the LEB128 varint of `v` (FORMAT.md §4.2) under byte prices `table`.
fn varint_price(table: &[i32; 256], mut v: u32) -> i32 {
    let mut p = 0;
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            return p + table[b as usize];
        }
        p += table[(b | 0x80) as usize];
    }
}

impl Prices for StatPrices {
    #[inline(always)]
    fn lit(&self, b: u8) -> i32 {
        self.lit[b as usize]
    }
    #[inline(always)]
    fn run_start(&self) -> i32 {
        self.run_start
    }
    #[inline(always)]
    fn new_match(&self, len: u32, dist: u32) -> i32 {
        let d = match self.off.get(dist as usize) {
            Some(&p) => p,
            None => self.dist_price(dist),
        };
        self.code_price(None, len) + d
    }
    #[inline(always)]
    fn rep_match(&self, slot: usize, len: u32) -> i32 {
        self.code_price(Some(slot), len)
    }
}
