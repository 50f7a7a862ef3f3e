//! Which table record a stream of a group gets (FORMAT.md §5.2): one order-0 table, an
//! order-1 context pair or a packed table, chosen by estimated coded size.

use crate::format::tables::*;

/// Joint counts of (lane's previous symbol, symbol) pairs, `[prev * 256 + symbol]`: the
/// statistics of the context choice ([`choose_record`]). Heap-allocated (256 KiB; the
/// encoder reuses one per thread, [`PairCounts::with_fresh`]); the previous symbols that
/// occur are tracked, so a split reads only their rows and a reuse clears only them.
pub struct PairCounts {
    counts: Box<[u32]>,
    rows: [bool; 256],
}

impl Default for PairCounts {
    fn default() -> Self {
        PairCounts {
            counts: vec![0; 256 * 256].into_boxed_slice(),
            rows: [false; 256],
        }
    }
}

thread_local! {
    /// This thread's pair counts ([`PairCounts::with_fresh`]).
    static PAIRS: std::cell::RefCell<PairCounts> = std::cell::RefCell::new(PairCounts::default());
}

impl PairCounts {
    /// Runs `f` with this thread's pair counts, emptied first: the table is allocated once
    /// per thread and a reuse clears only the rows the last use wrote (a fresh table per
    /// stream and group cost more time than its counting, in zeroing and page faults).
    /// Panics if `f` calls it again.
    pub fn with_fresh<R>(f: impl FnOnce(&mut PairCounts) -> R) -> R {
        PAIRS.with(|cell| {
            let mut p = cell.borrow_mut();
            p.clear();
            f(&mut p)
        })
    }

    /// Zeroes the rows that are in use (every count written lies in a flagged row: `add`
    /// flags row 0 for each lane's first symbol and the row of every previous symbol).
    fn clear(&mut self) {
        for prev in 0..256 {
            if self.rows[prev] {
                self.counts[prev << 8..(prev + 1) << 8].fill(0);
                self.rows[prev] = false;
            }
        }
    }

    /// Adds a slice coded with `lanes` lanes: symbol `i` paired with symbol `i - lanes`, the
    /// previous symbol of its lane (0 for each lane's first, FORMAT.md §5.4).
    pub fn add(&mut self, data: &[u8], lanes: usize) {
        let lanes = lanes.max(1).min(data.len().max(1));
        if data.is_empty() {
            return;
        }
        self.rows[0] = true;
        for &x in &data[..lanes] {
            self.counts[x as usize] += 1;
        }
        for (&prev, &x) in data.iter().zip(&data[lanes..]) {
            self.rows[prev as usize] = true;
            self.counts[(prev as usize) << 8 | x as usize] += 1;
        }
    }

    /// The column sums of the counts: the histogram of all paired symbols, the `total` of
    /// [`PairCounts::split`].
    fn total(&self) -> [u32; 256] {
        self.sum_rows(|_| true)
    }

    /// The sum of the rows of the previous symbols that `pick` selects (rows that occur only).
    /// In `u32`: no sum exceeds the count of all symbols added, which the `u32` counts hold.
    fn sum_rows(&self, pick: impl Fn(usize) -> bool) -> [u32; 256] {
        let mut h = [0u32; 256];
        for prev in (0..256).filter(|&p| self.rows[p] && pick(p)) {
            let row = &self.counts[prev << 8..(prev + 1) << 8];
            for (d, &v) in h.iter_mut().zip(row) {
                *d += v;
            }
        }
        h
    }

    /// The two histograms that context bit `bit` splits the counts into: the rows whose
    /// previous symbol has the bit clear, and those with it set. `total` is
    /// [`PairCounts::total`]: the first histogram is what the second leaves of it, so only
    /// the rows with the bit set are read.
    fn split(&self, bit: u32, total: &[u32; 256]) -> [Histogram; 2] {
        let set = self.sum_rows(|p| (p >> bit) & 1 == 1);
        [
            std::array::from_fn(|s| (total[s] - set[s]) as u64),
            set.map(u64::from),
        ]
    }
}

/// Order-0 entropy of `h` in bytes (no table): the screening estimate of [`choose_record`].
fn entropy_bytes(h: &Histogram) -> f64 {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let nf = n as f64;
    h.iter()
        .filter(|&&c| c > 0)
        .map(|&c| c as f64 * (nf / c as f64).log2())
        .sum::<f64>()
        / 8.0
}

/// Fewest bytes a context pair must save over one table to be chosen ([`choose_record`]):
/// the estimate ignores the lanes' final states and the raw fallback, so small gains are
/// noise.
pub const CONTEXT_MIN_GAIN: f64 = 64.0;

/// Share of a group's coded bytes a context pair must save at levels 1-7
/// ([`context_min_gain`]), where decode speed comes first: a pair costs the CPU its
/// side-by-side decoding and, where pairs are common, GPU rANS time (two more staged tables, a
/// table pick per step); it pays on soft-masked genomes, not for the small gains of text and
/// most DNA at 24-32 lanes.
pub const CONTEXT_MIN_SHARE_FAST_LEVELS: f64 = 0.03;

/// Bytes a context pair must save in a group whose streams code to about `group_bytes`
/// (single tables), at encoder level `level`: [`CONTEXT_MIN_GAIN`], and at levels 1-7 also
/// [`CONTEXT_MIN_SHARE_FAST_LEVELS`] of the group.
pub fn context_min_gain(level: u32, group_bytes: f64) -> f64 {
    if level <= 7 {
        CONTEXT_MIN_GAIN.max(CONTEXT_MIN_SHARE_FAST_LEVELS * group_bytes)
    } else {
        CONTEXT_MIN_GAIN
    }
}

/// Estimated bytes of `h`'s symbols under `t`, a table quantised from it (no table record).
pub fn coded_bytes(t: &FreqTable, h: &Histogram) -> f64 {
    t.cost_bits(h).expect("table quantised from h") / 8.0
}

/// The table record for one stream of one group: `t`, the table quantised from `h`, or a
/// context pair (FORMAT.md §5.4): the bit whose split of `pairs` has the least order-0
/// entropy, taken when its two quantised tables, records included, code the group's symbols
/// more than `min_gain` bytes ([`context_min_gain`]) below `t`. `pairs` holds the same
/// symbols as `h`, paired by lane. Returns the record and its estimated bytes (symbols and
/// record).
pub fn choose_record(
    t: FreqTable,
    h: &Histogram,
    pairs: Option<&PairCounts>,
    min_gain: f64,
) -> (TableRecord, f64) {
    let single = TableRecord::single(t);
    let single_bytes = record_bytes(&single, &[h]);
    let Some(pairs) = pairs else {
        return (single, single_bytes);
    };
    // the bit whose split has the least entropy, then its quantised pair against the bar
    let total = pairs.total();
    let Some((bit, [h0, h1], _)) = (0..8u32)
        .map(|bit| (bit, pairs.split(bit, &total)))
        .filter(|(_, [h0, h1])| h0.iter().any(|&c| c > 0) && h1.iter().any(|&c| c > 0))
        .map(|(bit, h)| {
            let e = entropy_bytes(&h[0]) + entropy_bytes(&h[1]);
            (bit, h, e)
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
    else {
        return (single, single_bytes);
    };
    let pair = TableRecord {
        tables: vec![
            FreqTable::from_histogram(&h0).expect("non-empty"),
            FreqTable::from_histogram(&h1).expect("non-empty"),
        ],
        ctx_bit: bit as u8,
        alphabet: None,
    };
    // a pair must beat the single table by min_gain bytes
    let pair_bytes = record_bytes(&pair, &[&h0, &h1]);
    if pair_bytes < single_bytes - min_gain {
        (pair, pair_bytes)
    } else {
        (single, single_bytes)
    }
}

/// Estimated bytes of a record and the symbols of histograms `hs` under its tables.
pub fn record_bytes(r: &TableRecord, hs: &[&Histogram]) -> f64 {
    r.tables
        .iter()
        .zip(hs)
        .map(|(t, h)| coded_bytes(t, h))
        .sum::<f64>()
        + r.len() as f64
}
