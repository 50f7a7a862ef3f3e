//! Entropy layer, encoder side and table handling (FORMAT.md §5): frequency tables quantised
//! to [`PROB_SCALE`], their compact serialisation, expansion to [`DecodeTable`], and the
//! interleaved rANS slice encoder whose output `aceapex_device::rans::decode_slice` reads.

use crate::device::format::{
    pack_slot, pack_width, DecodeTable, LANES_RAW, MAX_LANES, MAX_PACK_ALPHABET, PACK_WIDTH_SLOT,
    PROB_BITS, PROB_SCALE, RANS_L, STREAM_COUNT, STREAM_LITERALS, WARP_LANES,
};
use crate::error::FormatError;

/// Order-0 histogram of a byte stream.
pub type Histogram = [u64; 256];

/// Adds the bytes of `data` to `h`.
pub fn count(h: &mut Histogram, data: &[u8]) {
    // four partial histograms hide store-to-load dependencies on runs of one byte
    let mut parts = [[0u32; 256]; 4];
    let (quads, rest) = data.as_chunks::<4>();
    for c in quads {
        parts[0][c[0] as usize] += 1;
        parts[1][c[1] as usize] += 1;
        parts[2][c[2] as usize] += 1;
        parts[3][c[3] as usize] += 1;
    }
    for &b in rest {
        parts[0][b as usize] += 1;
    }
    for s in 0..256 {
        h[s] += parts.iter().map(|p| p[s] as u64).sum::<u64>();
    }
}

/// Quantised frequencies: each present symbol gets `1..=PROB_SCALE`, the sum is `PROB_SCALE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreqTable {
    /// Frequency per symbol (0 = absent).
    pub freq: [u32; 256],
}

impl FreqTable {
    /// Quantises a histogram, minimising the coded size; `None` for an empty histogram.
    pub fn from_histogram(h: &Histogram) -> Option<FreqTable> {
        let total: u64 = h.iter().sum();
        if total == 0 {
            return None;
        }
        let mut freq = [0u32; 256];
        let mut sum = 0i64;
        for s in 0..256 {
            if h[s] > 0 {
                let f = ((h[s] as u128 * PROB_SCALE as u128 + total as u128 / 2) / total as u128)
                    as u32;
                freq[s] = f.max(1);
                sum += freq[s] as i64;
            }
        }
        // Move single units where they cost least (or gain most) until the sum is exact. The
        // direction stays the same throughout, so each symbol's cost changes only when its
        // own frequency does: the costs are kept and only the moved symbol's is recomputed.
        let down = sum > PROB_SCALE as i64;
        let cost = |s: usize, f: u32| {
            let (c, f) = (h[s] as f64, f as f64);
            if h[s] == 0 || (down && f <= 1.0) {
                f64::INFINITY
            } else if down {
                c * (f / (f - 1.0)).log2()
            } else {
                -c * ((f + 1.0) / f).log2()
            }
        };
        let mut costs: [f64; 256] = std::array::from_fn(|s| cost(s, freq[s]));
        while sum != PROB_SCALE as i64 {
            // the first symbol of least cost (a symbol that cannot move costs infinity)
            let mut best = usize::MAX;
            let mut best_cost = f64::INFINITY;
            for (s, &c) in costs.iter().enumerate() {
                if c < best_cost {
                    best_cost = c;
                    best = s;
                }
            }
            if down {
                freq[best] -= 1;
                sum -= 1;
            } else {
                freq[best] += 1;
                sum += 1;
            }
            costs[best] = cost(best, freq[best]);
        }
        Some(FreqTable { freq })
    }

    /// Cumulative frequency of each symbol.
    pub fn cumulative(&self) -> [u32; 256] {
        let mut cum = [0u32; 256];
        let mut c = 0;
        for s in 0..256 {
            cum[s] = c;
            c += self.freq[s];
        }
        cum
    }

    /// Coded size in bits of data with histogram `h` under this table; `None` if a symbol
    /// of `h` is absent from the table.
    pub fn cost_bits(&self, h: &Histogram) -> Option<f64> {
        let mut bits = 0.0;
        for s in 0..256 {
            if h[s] > 0 {
                if self.freq[s] == 0 {
                    return None;
                }
                bits += h[s] as f64 * (PROB_BITS as f64 - (self.freq[s] as f64).log2());
            }
        }
        Some(bits)
    }

    /// Appends a kind-1 table record (FORMAT.md §5.2): the kind byte, then the table body.
    pub fn serialize(&self, out: &mut Vec<u8>) {
        out.push(TABLE_KIND_ONE);
        self.serialize_body(out);
    }

    /// Appends the table body (FORMAT.md §5.2): a 32-byte presence bitmap, then for each
    /// present symbol in increasing order the LEB128 varint of `freq - 1`.
    pub fn serialize_body(&self, out: &mut Vec<u8>) {
        let mut bitmap = [0u8; 32];
        for s in 0..256 {
            if self.freq[s] > 0 {
                bitmap[s / 8] |= 1 << (s % 8);
            }
        }
        out.extend_from_slice(&bitmap);
        for &f in self.freq.iter().filter(|&&f| f > 0) {
            crate::device::lz::write_varint(f - 1, out);
        }
    }

    /// Bytes of the table body ([`Self::serialize_body`]).
    pub fn body_len(&self) -> usize {
        32 + self
            .freq
            .iter()
            .filter(|&&f| f > 0)
            .map(|&f| crate::lz::varint_len(f - 1) as usize)
            .sum::<usize>()
    }

    /// Reads one kind-0 or kind-1 table record (FORMAT.md §5.2) at `*pos`; `Ok(None)` for an
    /// absent table. Kind-2 and kind-3 records are errors here ([`TableRecord::deserialize`]
    /// reads all kinds).
    ///
    /// Errors name the rule broken: truncated record, unknown kind, frequency out of range,
    /// sum not equal to [`PROB_SCALE`].
    pub fn deserialize(buf: &[u8], pos: &mut usize) -> Result<Option<FreqTable>, FormatError> {
        if let Some(&(TABLE_KIND_CONTEXT | TABLE_KIND_PACKED)) = buf.get(*pos) {
            return Err(FormatError::Table {
                what: "a context or packed record where a one-table record is expected",
            });
        }
        match TableRecord::deserialize(buf, pos, STREAM_LITERALS)? {
            None => Ok(None),
            Some(r) => Ok(Some(r.tables[0].clone())),
        }
    }

    /// Reads a table body (FORMAT.md §5.2) at `*pos`.
    fn deserialize_body(buf: &[u8], pos: &mut usize) -> Result<FreqTable, FormatError> {
        let bad = |what: &'static str| FormatError::Table { what };
        let bitmap = buf
            .get(*pos..*pos + 32)
            .ok_or(bad("truncated symbol bitmap"))?;
        let bitmap: [u8; 32] = bitmap.try_into().unwrap();
        *pos += 32;
        let mut freq = [0u32; 256];
        let mut sum = 0u64;
        for s in 0..256 {
            if bitmap[s / 8] >> (s % 8) & 1 == 1 {
                let v = crate::device::lz::read_varint(buf, pos)
                    .map_err(|_| bad("truncated or malformed frequency varint"))?;
                if v >= PROB_SCALE {
                    return Err(bad("frequency larger than 4096"));
                }
                freq[s] = v + 1;
                sum += freq[s] as u64;
            }
        }
        if sum != PROB_SCALE as u64 {
            return Err(bad("frequencies do not sum to 4096"));
        }
        Ok(FreqTable { freq })
    }

    /// Expands the table into the slot form the decoders read.
    pub fn decode_table(&self) -> Box<DecodeTable> {
        let mut t: Box<DecodeTable> = bytemuck::zeroed_box();
        let mut slot = 0usize;
        for (s, &f) in self.freq.iter().enumerate() {
            for bias in 0..f {
                t.slots[slot] = pack_slot(s as u8, f, bias);
                slot += 1;
            }
        }
        debug_assert_eq!(slot, PROB_SCALE as usize);
        t
    }
}

/// Kind byte of an absent table record (FORMAT.md §5.2).
pub const TABLE_KIND_NONE: u8 = 0;
/// Kind byte of a one-table record.
pub const TABLE_KIND_ONE: u8 = 1;
/// Kind byte of a context-pair record: a context bit and two tables.
pub const TABLE_KIND_CONTEXT: u8 = 2;
/// Kind byte of a packed literal record: a literal alphabet and one table
/// over packed symbols (FORMAT.md §5.6).
pub const TABLE_KIND_PACKED: u8 = 3;

/// One group's table record for one stream (FORMAT.md §5.2): one table, (kind 2) two tables
/// and the context bit that picks between them (§5.4), or (kind 3, literals only) one table
/// whose symbols each stand for several literals of a small alphabet (§5.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRecord {
    /// The table (context 0 of a pair) and, for a pair, the context-1 table.
    pub tables: Vec<FreqTable>,
    /// Bit of a lane's previous symbol that picks the table (0-7; 0 for a single table).
    pub ctx_bit: u8,
    /// Kind 3: the literal alphabet, strictly increasing, 1 to [`MAX_PACK_ALPHABET`] bytes.
    pub alphabet: Option<Vec<u8>>,
}

impl TableRecord {
    /// A one-table record.
    pub fn single(t: FreqTable) -> TableRecord {
        TableRecord {
            tables: vec![t],
            ctx_bit: 0,
            alphabet: None,
        }
    }

    /// Appends the record: kind 1 for one table, kind 2 (`ctx_bit`, then both bodies) for a
    /// pair, kind 3 (alphabet size, alphabet, body) for packed literals.
    pub fn serialize(&self, out: &mut Vec<u8>) {
        if let Some(alphabet) = &self.alphabet {
            out.push(TABLE_KIND_PACKED);
            out.push(alphabet.len() as u8);
            out.extend_from_slice(alphabet);
            self.tables[0].serialize_body(out);
            return;
        }
        match &self.tables[..] {
            [t] => t.serialize(out),
            [t0, t1] => {
                out.push(TABLE_KIND_CONTEXT);
                out.push(self.ctx_bit);
                t0.serialize_body(out);
                t1.serialize_body(out);
            }
            _ => unreachable!("a record holds one or two tables"),
        }
    }

    /// Bytes of the serialised record.
    pub fn len(&self) -> usize {
        if let Some(alphabet) = &self.alphabet {
            return 2 + alphabet.len() + self.tables[0].body_len();
        }
        match &self.tables[..] {
            [t] => 1 + t.body_len(),
            ts => 2 + ts.iter().map(FreqTable::body_len).sum::<usize>(),
        }
    }

    /// Always false: a record holds at least one table ([`Self::len`] is its byte count).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Reads one table record of stream `stream` at `*pos` (FORMAT.md §5.2); `Ok(None)` for
    /// kind 0. Kind 3 for the literal stream only.
    ///
    /// Errors name the rule broken: truncated record, unknown kind, context bit above 7,
    /// packed alphabet empty, too large or not increasing, a packed table with a symbol
    /// beyond the alphabet's combinations, frequency out of range, sum not equal to
    /// [`PROB_SCALE`].
    pub fn deserialize(
        buf: &[u8],
        pos: &mut usize,
        stream: usize,
    ) -> Result<Option<TableRecord>, FormatError> {
        let bad = |what: &'static str| FormatError::Table { what };
        let kind = *buf.get(*pos).ok_or(bad("truncated table section"))?;
        *pos += 1;
        match kind {
            TABLE_KIND_NONE => Ok(None),
            TABLE_KIND_ONE => Ok(Some(TableRecord::single(FreqTable::deserialize_body(
                buf, pos,
            )?))),
            TABLE_KIND_PACKED if stream != STREAM_LITERALS => Err(bad(
                "packed table (kind 3) for a stream other than literals",
            )),
            TABLE_KIND_PACKED => {
                let a = *buf.get(*pos).ok_or(bad("truncated packed alphabet"))? as usize;
                *pos += 1;
                if a == 0 || a > MAX_PACK_ALPHABET {
                    return Err(bad("packed alphabet size not in 1..=16"));
                }
                let alphabet = buf
                    .get(*pos..*pos + a)
                    .ok_or(bad("truncated packed alphabet"))?
                    .to_vec();
                *pos += a;
                if alphabet.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(bad("packed alphabet not strictly increasing"));
                }
                let t = FreqTable::deserialize_body(buf, pos)?;
                if t.freq[packed_symbols(a)..].iter().any(|&f| f != 0) {
                    return Err(bad(
                        "packed table has a symbol beyond its alphabet's combinations",
                    ));
                }
                Ok(Some(TableRecord {
                    tables: vec![t],
                    ctx_bit: 0,
                    alphabet: Some(alphabet),
                }))
            }
            TABLE_KIND_CONTEXT => {
                let ctx_bit = *buf.get(*pos).ok_or(bad("truncated context bit"))?;
                *pos += 1;
                if ctx_bit > 7 {
                    return Err(bad("context bit above 7"));
                }
                let t0 = FreqTable::deserialize_body(buf, pos)?;
                let t1 = FreqTable::deserialize_body(buf, pos)?;
                Ok(Some(TableRecord {
                    tables: vec![t0, t1],
                    ctx_bit,
                    alphabet: None,
                }))
            }
            _ => Err(bad("unknown table kind (must be 0, 1, 2 or 3)")),
        }
    }
}

/// Number of packed symbols of an alphabet of `a` letters: `a^w` for its pack width `w`
/// ([`pack_width`], FORMAT.md §5.6).
pub fn packed_symbols(a: usize) -> usize {
    a.max(1).pow(pack_width(a))
}

/// Most blocks of a group, as a fraction `1 / RAW_LITERAL_BLOCKS_DIV`, whose literals
/// [`literal_alphabet`] may leave out of a packed group (stored raw): a FASTA header line
/// brings dozens of letters into the first block, which would otherwise keep its whole group
/// (64 blocks) unpacked, and those blocks then had the longest rANS chains of the archive
/// (hs37: 618 steps against a median of 221).
pub const RAW_LITERAL_BLOCKS_DIV: usize = 8;

/// The literal alphabet of a group of blocks (FORMAT.md §5.6), given each block's literals:
/// the distinct literal bytes of all but a few blocks, in increasing order, and which blocks
/// have a literal outside it (their literal slices are then stored raw). The alphabet is the
/// `max_letters` (at most [`MAX_PACK_ALPHABET`]) letters found in the most blocks of at most
/// 16 letters (ties: the lower byte); `None` when the blocks outside it would be more than
/// `1 / RAW_LITERAL_BLOCKS_DIV` of the group (rounded down), or no block inside it has a
/// literal. A `max_letters` below 16 asks for a wider pack ([`pack_width`]: 4 letters a
/// symbol from 4 letters, 3 from 6), which a FASTA header's letters in the first block
/// otherwise keep at 2 (`archive::repack_longest_groups`).
pub fn literal_alphabet<'a>(
    slices: impl Iterator<Item = &'a [u8]>,
    max_letters: usize,
) -> Option<(Vec<u8>, Vec<bool>)> {
    let slices: Vec<&[u8]> = slices.collect();
    let most_raw = slices.len() / RAW_LITERAL_BLOCKS_DIV;
    // per block its letters, `None` once it has more than 16 (raw whatever the alphabet:
    // the scan stops there, and gives up once too many blocks are raw, so text costs little)
    let mut sets: Vec<Option<[bool; 256]>> = Vec::with_capacity(slices.len());
    let mut blocks_with = [0usize; 256];
    let mut wide = 0usize;
    for s in slices {
        let mut seen = [false; 256];
        let mut distinct = 0usize;
        for &x in s {
            distinct += !seen[x as usize] as usize;
            seen[x as usize] = true;
            if distinct > MAX_PACK_ALPHABET {
                break;
            }
        }
        if distinct > MAX_PACK_ALPHABET {
            wide += 1;
            if wide > most_raw {
                return None;
            }
            sets.push(None);
            continue;
        }
        for (c, &y) in blocks_with.iter_mut().zip(&seen) {
            *c += y as usize;
        }
        sets.push(Some(seen));
    }
    let mut letters: Vec<u8> = (0..=255u8)
        .filter(|&x| blocks_with[x as usize] > 0)
        .collect();
    letters.sort_by_key(|&x| (std::cmp::Reverse(blocks_with[x as usize]), x));
    letters.truncate(max_letters.clamp(1, MAX_PACK_ALPHABET));
    letters.sort_unstable();
    let mut inside = [false; 256];
    for &x in &letters {
        inside[x as usize] = true;
    }
    let raw: Vec<bool> = (sets.iter())
        .map(|seen| seen.is_none_or(|seen| (0..256).any(|x| seen[x] && !inside[x])))
        .collect();
    let n_raw = raw.iter().filter(|&&r| r).count();
    let packed_with_literals = (sets.iter().zip(&raw))
        .any(|(seen, &r)| !r && seen.is_some_and(|seen| seen.iter().any(|&y| y)));
    (n_raw <= most_raw && packed_with_literals).then_some((letters, raw))
}

/// Packs `literals` over `alphabet` (which holds every one of them; FORMAT.md §5.6): symbol
/// `j` is `sum of code(literal w*j + t) * a^t` for `t < w`, `code` a literal's index in the
/// alphabet, codes past the end 0. `out` is cleared first.
pub fn pack_literals(literals: &[u8], alphabet: &[u8], out: &mut Vec<u8>) {
    let a = alphabet.len() as u32;
    let w = pack_width(alphabet.len()) as usize;
    let mut code = [0u8; 256];
    for (i, &x) in alphabet.iter().enumerate() {
        code[x as usize] = i as u8;
    }
    out.clear();
    out.extend(literals.chunks(w).map(|c| {
        c.iter()
            .rev()
            .fold(0u32, |s, &x| s * a + code[x as usize] as u32) as u8
    }));
}

/// The expansion table of a packed literal table (FORMAT.md §5.6) in the decoders' form
/// ([`aceapex_device::rans::SliceTables::pack`]): slot `s < a^w` holds symbol `s`'s `w`
/// literals, the first in the low byte; slot [`PACK_WIDTH_SLOT`] holds `w`.
pub fn expansion_table(alphabet: &[u8]) -> Box<DecodeTable> {
    let a = alphabet.len().max(1);
    let w = pack_width(alphabet.len());
    let mut t = Box::new(DecodeTable {
        slots: [0; PROB_SCALE as usize],
    });
    for (s, slot) in t.slots[..packed_symbols(alphabet.len())]
        .iter_mut()
        .enumerate()
    {
        let mut rest = s;
        let mut lits = 0u32;
        for i in 0..w {
            lits |= (alphabet[rest % a] as u32) << (8 * i);
            rest /= a;
        }
        *slot = lits;
    }
    t.slots[PACK_WIDTH_SLOT] = w;
    t
}

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
/// side-by-side decoding (dm3's rANS stage -8 %) and, where pairs are common, the GPU rANS
/// stage 3-4 % (two more staged tables, a table pick per step); it pays on soft-masked genomes
/// (dm3 at level 5: -7 %), not for the 0.1-0.9 % that text and most DNA gain at 24-32 lanes
/// (PERFORMANCE.md, twelfth session).
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

/// Number of interleaved lanes the encoder would give a slice of `n` symbols on its own: about
/// one lane per `per_lane` symbols ([`symbols_per_lane`] of the level), rounded down to a
/// count in [`LANE_COUNTS`] (at least 1, at most 32), except that 2-3 lanes' worth rounds up
/// to 4 (the CPU decoder decodes 4-lane slices two per AVX2 vector, 2-lane ones with scalar
/// code). Each lane costs about 3 bytes over the entropy (its final state, measured); more
/// lanes mean shorter dependency chains for the decoders. [`block_lanes`] then fits a block's
/// slices into one warp.
pub fn lanes_for(n: usize, per_lane: usize) -> usize {
    let want = match n / per_lane.max(1) {
        2 | 3 => 4,
        w => w,
    };
    LANE_COUNTS
        .iter()
        .rev()
        .copied()
        .find(|&l| l <= want)
        .unwrap_or(1)
}

/// Symbols per lane at the encoder's levels 1-7 (see [`symbols_per_lane`]).
pub const SYMBOLS_PER_LANE: usize = 256;

/// Fewest symbols per lane [`symbols_per_lane`] gives a block smaller than 16 KiB.
pub const MIN_SYMBOLS_PER_LANE: usize = 128;

/// Symbols per lane at encoder level `level` and block size `block_size` (bytes):
/// [`SYMBOLS_PER_LANE`] up to level 7, four times as many at level 8 and sixteen times at
/// level 9, the levels that put ratio before decode speed (a 16 KiB text block saves ~40-70
/// bytes of lane states at level 9; its longest GPU rANS chain grows from ~550 to
/// ~2,000-8,000 steps). Blocks below 16 KiB take proportionally fewer symbols per lane (at
/// least 128), so an 8 KiB block gets about the lanes of a 16 KiB one and chains half as
/// long: a GPU decodes one block per warp, and on a small archive the rANS stage waits on
/// its longest chain (brown at 8 KiB blocks: 56 -> 70 GB/s for 1 % of ratio; 4 KiB blocks
/// pay 1.5-2 %; PERFORMANCE.md, ninth session).
pub fn symbols_per_lane(level: u32, block_size: u32) -> usize {
    let per = match level {
        ..=7 => SYMBOLS_PER_LANE,
        8 => 4 * SYMBOLS_PER_LANE,
        _ => 16 * SYMBOLS_PER_LANE,
    };
    let full = aceapex_device::format::DEFAULT_BLOCK_SIZE as usize;
    if (block_size as usize) < full {
        (per * block_size as usize / full).max(MIN_SYMBOLS_PER_LANE)
    } else {
        per
    }
}

/// Lane counts the encoder uses: the ones the CPU decoder has wide kernels for (1-lane slices
/// several side by side, 4-lane ones two per AVX2 vector, 8-32 lanes in 8-lane vectors, the
/// last one half used for 12 and 20, and slices of 8-24 lanes two or more at a time) and
/// the GPU's packed-literal kernels store as aligned words (a multiple of 4). Any count
/// `1..=32` is valid format (FORMAT.md §5.3); these are an encoder choice. (Without AVX2,
/// the CPU decoder runs all of them as scalar rows.) 12 and 20 came in
/// the twenty-second session (a TAIR10 block's 8-lane literal slice, the longest chain,
/// could not take 16 beside the others: 383 -> 334 steps). 28 is not among them: a DNA
/// block's 28-lane literal slice decodes alone on the CPU, where two 24-lane ones go
/// together: 9-17 % of the CPU decode of E. coli and P. falciparum for 2-7 % of their GPU
/// decode (PERFORMANCE.md twenty-second session).
pub const LANE_COUNTS: [usize; 8] = [1, 4, 8, 12, 16, 20, 24, 32];

/// Lane counts for the rANS slices of one block (`n[k]` symbols of stream `k`, `None` for a
/// slice that is stored raw or empty; the result is 0 there), with about `per_lane` symbols
/// per lane ([`symbols_per_lane`] of the level).
///
/// A GPU warp decodes a block's rANS slices side by side, one symbol per lane per step, so
/// its time is the largest `ceil(n[k] / lanes[k])` (the steps) when the lanes fit in 32
/// (`device/src/dense.rs`, `rans_decode_slices`), while every lane costs about 3 bytes of
/// archive (its final state). So: each slice starts at [`lanes_for`] (a slice of at most
/// [`ALWAYS_RAW_BYTES`], stored raw anyway, at 0); while the total is over 32, the slice with
/// the most lanes (the lowest stream on a tie) steps down to the next count of
/// [`LANE_COUNTS`]; then every slice takes the fewest lanes of [`LANE_COUNTS`] that keep its
/// steps within 1/8 over the block's largest. At levels 1-7 the longest chain then steps up
/// and may take two warp rounds ([`block_lanes_packed`]). Deterministic: depends on `n` and
/// `per_lane` alone.
pub fn block_lanes(n: [Option<usize>; STREAM_COUNT], per_lane: usize) -> [usize; STREAM_COUNT] {
    block_lanes_packed(n, per_lane, 1)
}

/// [`block_lanes`] for a block whose literal slice holds packed symbols of `literal_width` literals
/// each (FORMAT.md §5.6; `n[0]` counts symbols): its starting lane count is the one of its `n[0] *
/// literal_width` literals, so packing shortens the chains rather than trading lanes for them; the
/// steps are counted in symbols. With packed literals the longest chain is often a slice with few
/// lanes (DNA's command slice: ~270 symbols on one lane against ~200 steps of literals), so after
/// the trim to 1/8 over the longest, the slice with the longest chain steps up to the next lane
/// count while the warp has room, and the trim runs again, this time to the longest itself (each
/// lane ~3 bytes). The step-up runs for every block at `per_lane <= SYMBOLS_PER_LANE` (levels 1-7,
/// and 8-9 with blocks of 4 KiB or less: [`symbols_per_lane`]) too, while the longest chain is over
/// 1.5 times `per_lane` steps (a slice that got its lanes takes up to about twice): the first trim
/// can leave a warp half empty (a block of 7,181 literals, 1,243 offsets, 2,228 commands and 991
/// offset tails, with the lane counts of then: 24 + 4 + 8 + 4 lanes are over 32, the literals step
/// down twice, to 8, and the tails' 991 steps on one lane were dm3's longest chain, the whole GPU
/// rANS stage of that archive; PERFORMANCE.md fourteenth session), and a text block's warp 12 lanes
/// short (brown: 4,452 literals on 8 lanes, 557 steps, the first trim's 1/8 over the commands' 497;
/// stepped up and trimmed as now, 320; fifteenth session). Then, at `per_lane <= SYMBOLS_PER_LANE`,
/// if the chain is still long, [`two_round_lanes`], and last [`step_up_by_rounds`].
pub fn block_lanes_packed(
    n: [Option<usize>; STREAM_COUNT],
    per_lane: usize,
    literal_width: usize,
) -> [usize; STREAM_COUNT] {
    // decoded bytes per symbol of each stream
    let w = |k: usize| {
        if k == STREAM_LITERALS {
            literal_width.max(1)
        } else {
            1
        }
    };
    // a slice that [`store_slice`] stores raw whatever its lanes takes none of the warp's
    let n: [Option<usize>; STREAM_COUNT] =
        std::array::from_fn(|k| n[k].filter(|&n| n * w(k) > ALWAYS_RAW_BYTES));
    let mut lanes = std::array::from_fn(|k| n[k].map_or(0, |n| lanes_for(n * w(k), per_lane)));
    while lanes.iter().sum::<usize>() > WARP_LANES as usize {
        let (k, &most) = lanes
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|&(_, &l)| l)
            .expect("five streams");
        match LANE_COUNTS.iter().rev().copied().find(|&l| l < most) {
            Some(l) => lanes[k] = l,
            None => break, // every slice at 1 lane: 5 <= 32, unreachable
        }
    }
    let steps = |n: usize, l: usize| n.div_ceil(l);
    // each slice down to the fewest lanes that keep its steps within 1/`slack` over the
    // longest (0: not over it)
    let trim = |lanes: &mut [usize; STREAM_COUNT], slack: usize| {
        let longest = (0..STREAM_COUNT)
            .filter_map(|k| n[k].map(|n| steps(n, lanes[k])))
            .max()
            .unwrap_or(0);
        let allowed = longest + longest.checked_div(slack).unwrap_or(0);
        for k in 0..STREAM_COUNT {
            if let Some(n) = n[k] {
                lanes[k] = LANE_COUNTS
                    .iter()
                    .copied()
                    .find(|&l| l >= lanes[k] || steps(n, l) <= allowed)
                    .unwrap_or(lanes[k]);
            }
        }
    };
    trim(&mut lanes, 8);
    if literal_width > 1 || per_lane <= SYMBOLS_PER_LANE {
        // the longest chain's slice up a lane count while the warp has room (unpacked: while
        // it is over 1.5 times `per_lane` steps), then trim again, not past the new longest
        // (with the slack of the first trim the slice just stepped up could step back down)
        while let Some((k, s)) = longest_slice(&n, &lanes) {
            if literal_width == 1 && 2 * s <= 3 * per_lane {
                break;
            }
            let total: usize = lanes.iter().sum();
            match LANE_COUNTS.iter().copied().find(|&l| l > lanes[k]) {
                Some(l) if total - lanes[k] + l <= WARP_LANES as usize => lanes[k] = l,
                _ => break,
            }
        }
        trim(&mut lanes, 0);
        if per_lane <= SYMBOLS_PER_LANE {
            if let Some(two) = two_round_lanes(&n, &lanes, per_lane) {
                lanes = two;
            }
            lanes = step_up_by_rounds(&n, lanes);
        }
    }
    lanes
}

/// Last stage of [`block_lanes_packed`] at `per_lane <= SYMBOLS_PER_LANE` (levels 1-7, and 8-9 with
/// blocks of 4 KiB or less): the longest chain's slice steps up lane counts even where the block's
/// lanes then exceed 32, judged by the GPU warp's rounds ([`aceapex_device::rans::warp_steps`]: a
/// slice that no longer fits waits for a second round, which for a short slice costs a few steps).
/// The step-up in [`block_lanes_packed`] stops at 32 lanes in all, so a slice of a few symbols
/// could keep the longest one from its next count: dm3 block 111 at level 6 (with the lane counts
/// of then), 5,284 literals on 16 lanes, 9 lengths on 1, 1,467 offsets, 2,570 commands and 1,220
/// tails on 4 each, 643 steps (the commands'); with the commands on 8 the lengths go to a second
/// round: 367 + 9 = 376 (PERFORMANCE.md seventeenth session). Steps the longest slice up one count
/// at a time (the others as they are) until it has 32 lanes or the chain is within
/// [`STEP_UP_CHAIN`], and keeps each chain shorter than the best so far by at least
/// [`TWO_ROUND_STEPS_PER_LANE`] steps per lane it adds over that best; then each slice goes down to
/// the fewest lanes of [`LANE_COUNTS`] that keep that chain. (`warp_steps` does not keep context
/// and packed slices apart as the packed kernels do, so for a group with both the chain is an
/// estimate, as everywhere in the lane choice.) Deterministic.
fn step_up_by_rounds(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: [usize; STREAM_COUNT],
) -> [usize; STREAM_COUNT] {
    let chain = |l: &[usize; STREAM_COUNT]| warp_chain(n, l);
    let total = |l: &[usize; STREAM_COUNT]| l.iter().sum::<usize>();
    let (mut best, mut best_chain) = (lanes, chain(&lanes));
    let mut cur = lanes;
    while chain(&cur) > STEP_UP_CHAIN {
        let Some((k, _)) = longest_slice(n, &cur) else {
            break;
        };
        match LANE_COUNTS.iter().copied().find(|&l| l > cur[k]) {
            Some(l) => cur[k] = l,
            None => break,
        }
        let c = chain(&cur);
        let added = total(&cur).saturating_sub(total(&best));
        if c + TWO_ROUND_STEPS_PER_LANE * added <= best_chain && c < best_chain {
            (best, best_chain) = (cur, c);
        }
    }
    if best == lanes {
        return lanes;
    }
    for k in 0..STREAM_COUNT {
        if n[k].is_none() {
            continue;
        }
        for &l in LANE_COUNTS.iter().filter(|&&l| l < best[k]) {
            let mut fewer = best;
            fewer[k] = l;
            if chain(&fewer) <= best_chain {
                best = fewer;
                break;
            }
        }
    }
    best
}

/// Steps of the GPU warp's rANS rounds on a block of `n[k]` symbols per stream (`None`: no
/// rANS slice) with `lanes[k]` lanes: [`aceapex_device::rans::warp_steps`], the kernel's
/// rounds, for the encoder's lane choice.
pub fn warp_chain(n: &[Option<usize>; STREAM_COUNT], lanes: &[usize; STREAM_COUNT]) -> usize {
    aceapex_device::rans::warp_steps(
        std::array::from_fn(|k| n[k].unwrap_or(0) as u32),
        std::array::from_fn(|k| lanes[k] as u32),
    ) as usize
}

/// The slice with the longest chain, `ceil(n / lanes)` steps (the lowest stream on a tie),
/// and its steps; `None` without a rANS slice.
fn longest_slice(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: &[usize; STREAM_COUNT],
) -> Option<(usize, usize)> {
    (0..STREAM_COUNT)
        .filter_map(|k| n[k].map(|n| (k, n.div_ceil(lanes[k].max(1)))))
        .max_by_key(|&(k, s)| (s, std::cmp::Reverse(k)))
}

/// Bytes up to which a slice is always stored raw ([`store_slice`]): a rANS slice holds at
/// least one 4-byte lane state, and is taken only when shorter than the raw bytes. Such a
/// slice gets no lanes in [`block_lanes_packed`], so that it leaves the warp's room to the
/// others (brown: a 2-byte length slice kept the commands from 8 lanes, fifteenth session).
pub const ALWAYS_RAW_BYTES: usize = 4;

/// Lanes for two rounds of the GPU warp instead of one, for a block whose one-round chain is
/// still over twice `per_lane` steps because its longest slice cannot step up within the
/// warp (an unpacked DNA block: 16,331 literals on 24 lanes and 140 commands on one lane, 25
/// lanes, 681 steps; 32 + 1 do not fit): that slice gets 32 lanes, a round of its own, and
/// every other slice the fewest lanes of [`LANE_COUNTS`] that keep it within `per_lane / 4`
/// steps, in a second round (511 + 35 = 546 steps for 11 lanes more, ~33 bytes). `None`
/// unless that is shorter by the kernel's rounds ([`aceapex_device::rans::warp_steps`]) by
/// [`TWO_ROUND_STEPS_PER_LANE`] steps per lane it adds, and the other slices fit in one
/// warp. (Until the twenty-second session it also had to be a ninth shorter; the exchange
/// rate alone is what the other step-ups ask, and every case measured then passed both.)
/// Such blocks
/// bound the GPU rANS stage of small DNA archives, whose blocks are all in flight at once
/// (E. coli, dm3: PERFORMANCE.md fifteenth session).
fn two_round_lanes(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: &[usize; STREAM_COUNT],
    per_lane: usize,
) -> Option<[usize; STREAM_COUNT]> {
    let chain = |l: &[usize; STREAM_COUNT]| warp_chain(n, l);
    let now = chain(lanes);
    if now <= 2 * per_lane {
        return None;
    }
    let (k, _) = longest_slice(n, lanes)?;
    if lanes[k] >= WARP_LANES as usize {
        return None;
    }
    let quick = (per_lane / 4).max(1);
    let mut two = [0usize; STREAM_COUNT];
    two[k] = WARP_LANES as usize;
    for j in (0..STREAM_COUNT).filter(|&j| j != k) {
        if let Some(n) = n[j] {
            two[j] = LANE_COUNTS
                .iter()
                .copied()
                .find(|&l| n.div_ceil(l) <= quick)
                .unwrap_or(WARP_LANES as usize);
        }
    }
    let total: usize = two.iter().sum();
    let others = total - two[k];
    let then = chain(&two);
    let added = total.saturating_sub(lanes.iter().sum());
    let pays = then < now && now - then >= TWO_ROUND_STEPS_PER_LANE * added;
    (others <= WARP_LANES as usize && pays).then_some(two)
}

/// Lanes of a wide slice ([`wide_lanes`]; FORMAT.md §5.4): two GPU warps decode it
/// side by side, 32 lanes each, each lane taking its words from its warp's own word area.
pub const WIDE_LANES: usize = 2 * WARP_LANES as usize;

/// Steps of the GPU warp's chain that each lane [`wide_lanes`] adds must save: a quarter of
/// [`TWO_ROUND_STEPS_PER_LANE`], since wide lanes are asked for
/// (`Settings::wide_lanes`) by whoever puts GPU decode speed before a per cent or two
/// of size, and every block is then in flight at once, so the stage waits for the archive's
/// longest chain. A 32-lane slice goes wide from a chain of 64 steps. (At 2, from 128 steps,
/// a few blocks of 124-127 steps stayed narrow beside wide ones of ~88 and set the archive's
/// chain: ce2's block 984, E. coli's last block; PERFORMANCE.md twenty-sixth session.)
pub const WIDE_STEPS_PER_LANE: usize = 1;

/// `Settings::wide_lanes`' last stage of the lane choice, after [`block_lanes_packed`], for
/// a block of `n[k]` symbols per stream (`None`: no rANS slice) with lanes `lanes`: the
/// longest slice takes [`WIDE_LANES`] lanes, a round of its own that the block's two GPU warps
/// share (FORMAT.md §5.4), and the other slices the lanes [`block_lanes_packed`] gives them
/// without it (`literal_width` as there), in rounds after it; taken where the GPU warp's
/// chain ([`warp_chain`]) is shorter by [`WIDE_STEPS_PER_LANE`] steps per lane it adds. A DNA
/// block with raw match streams: 7,984 packed literal symbols on 32 lanes, 250 steps, on 64
/// lanes 125. Deterministic.
pub fn wide_lanes(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: [usize; STREAM_COUNT],
    per_lane: usize,
    literal_width: usize,
) -> [usize; STREAM_COUNT] {
    let now = warp_chain(n, &lanes);
    let Some((k, _)) = longest_slice(n, &lanes) else {
        return lanes;
    };
    // the other slices as the lane choice lays them out without slice k
    let mut others = *n;
    others[k] = None;
    let mut wide = block_lanes_packed(others, per_lane, literal_width);
    wide[k] = WIDE_LANES;
    let then = warp_chain(n, &wide);
    let added = (wide.iter().sum::<usize>()).saturating_sub(lanes.iter().sum());
    if then < now && now - then >= WIDE_STEPS_PER_LANE * added {
        wide
    } else {
        lanes
    }
}

/// Chain (GPU warp steps) above which [`step_up_by_rounds`] looks for more lanes: 3/4 of
/// [`SYMBOLS_PER_LANE`], whatever the block size (a block's rANS chain is the GPU rANS stage
/// of an archive whose blocks are all in flight at once). Until the twenty-second session it
/// was 1.5 times the symbols per lane: 384 at levels 1-7 with 16 KiB blocks and at level 8
/// with 4 KiB ones (whose symbols per lane are 256 too; so that combination now takes more
/// lanes: records.csv +1.6 %), 192 at levels 1-7 with 8 KiB blocks or smaller, the same as
/// now (PERFORMANCE.md twenty-second session).
pub const STEP_UP_CHAIN: usize = 3 * SYMBOLS_PER_LANE / 4;

/// Steps of the GPU warp's chain that each lane [`two_round_lanes`] or [`step_up_by_rounds`] adds
/// must save (a lane costs about 3 bytes of archive; also the exchange rate of
/// `archive::PACK_STEPS_PER_BYTE`): 12 for the unpacked DNA block there, 6.6 for a protein block
/// (15,227 literals on 24 lanes and 61 offsets, 296 commands, 50 tails on one: 636 steps; 32 + 1 +
/// 8 + 1 lanes, 537). At 4 the protein blocks take two rounds, and their 32-lane literal slices
/// also decode faster on the CPU than pairs of 24-lane ones (one slice in four AVX2 state vectors
/// rather than two in six, which spill): swissprot at level 5, one thread, 975 -> 1,072 MB/s
/// (median of 8 alternations), archive +0.6 % (PERFORMANCE.md fifteenth session).
pub const TWO_ROUND_STEPS_PER_LANE: usize = 4;

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

/// Chooses how to store one stream slice: rANS with `lanes` lanes (from [`block_lanes`]) and
/// the group's table when that is smaller, else raw (always with 0 lanes, which
/// [`block_lanes`] gives a slice of at most [`ALWAYS_RAW_BYTES`]). Returns the lane count
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

/// A lower bound on [`encode_two_bit`]'s length for `literals`, from their histogram alone:
/// the four codes, two varints, a byte per exception and the 2-bit codes. Lets the encoder
/// skip the encoding where the bound already loses (text, proteins).
pub fn two_bit_len_floor(literals: &[u8]) -> usize {
    let mut h = [0u64; 256];
    count(&mut h, literals);
    let mut top = [0u64; 4];
    for &c in &h {
        if c > top[3] {
            top[3] = c;
            top.sort_unstable_by(|a, b| b.cmp(a));
        }
    }
    let exceptions = literals.len() - top.iter().sum::<u64>() as usize;
    6 + exceptions + literals.len().div_ceil(4)
}

/// Appends `literals` (at least one) as a two-bit literal slice (FORMAT.md §5.7,
/// [`crate::device::two_bit`]) to `out`: codes for the four most frequent bytes (ties to the
/// lower byte), every other literal an exception. Returns the slice's length. The caller keeps
/// it where it is shorter than the slice it would otherwise store.
pub fn encode_two_bit(literals: &[u8], out: &mut Vec<u8>) -> usize {
    use crate::device::two_bit::zigzag;
    let start = out.len();
    let mut h = [0u64; 256];
    count(&mut h, literals);
    let mut order: Vec<u8> = (0..=255u8).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(h[b as usize]), b));
    let sym = [order[0], order[1], order[2], order[3]];
    let mut code = [u8::MAX; 256];
    for (c, &b) in sym.iter().enumerate() {
        code[b as usize] = c as u8;
    }
    let mut values = Vec::new();
    let mut varints = Vec::new();
    let (mut g, mut p, mut last) = (0i64, -1i64, None);
    let mut x = 0u32;
    for (i, &b) in literals.iter().enumerate() {
        if code[b as usize] != u8::MAX {
            continue;
        }
        let gap = i as i64 - p;
        let new = last != Some(b);
        if new {
            values.push(b);
        }
        // gaps are at most a block (< 2^23), so the difference fits the 4-byte varint
        write_varint(&mut varints, zigzag((gap - g) as i32) << 1 | new as u32);
        (g, p, last) = (gap, i as i64, Some(b));
        x += 1;
    }
    out.extend_from_slice(&sym);
    write_varint(out, x);
    write_varint(out, values.len() as u32);
    out.extend_from_slice(&values);
    out.extend_from_slice(&varints);
    for chunk in literals.chunks(4) {
        let mut byte = 0u8;
        for (t, &b) in chunk.iter().enumerate() {
            // an exception's code is ignored: 0
            let c = code[b as usize];
            byte |= if c == u8::MAX { 0 } else { c } << (2 * t);
        }
        out.push(byte);
    }
    out.len() - start
}

/// Appends `v` as a LEB128 varint.
fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor of a two-bit slice: exact without exceptions (4 codes, two one-byte varints,
    /// 100 bytes of codes), never above the encoding with them.
    #[test]
    fn two_bit_floor_is_a_lower_bound() {
        let dna = b"ACGT".repeat(100);
        assert_eq!(two_bit_len_floor(&dna), 106);
        assert_eq!(encode_two_bit(&dna, &mut Vec::new()), 106);
        let text = b"It is a truth universally acknowledged, that a single man".repeat(20);
        let floor = two_bit_len_floor(&text);
        assert!(floor <= encode_two_bit(&text, &mut Vec::new()));
        assert!(floor > text.len() / 2, "{floor}");
    }
    use crate::device::rans::{decode_slice, SliceTables};

    fn roundtrip(data: &[u8]) {
        let mut h = [0u64; 256];
        count(&mut h, data);
        let t = FreqTable::from_histogram(&h).unwrap();
        assert_eq!(t.freq.iter().sum::<u32>(), PROB_SCALE);
        let cum = t.cumulative();
        let dt = t.decode_table();
        for lanes in [1, 2, 5, 16, 32] {
            let mut enc = Vec::new();
            encode_slice(data, lanes, &t, &cum, &mut enc);
            let mut out = vec![0xAAu8; data.len()];
            decode_slice(&enc, lanes, SliceTables::single(&dt), &mut out).unwrap();
            assert_eq!(out, data, "lanes {lanes}");
        }
    }

    #[test]
    fn rans_roundtrips() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        roundtrip(b"a");
        roundtrip(&[7u8; 1000]);
        let skewed: Vec<u8> = (0..20000)
            .map(|_| (rnd() % 100).min(rnd() % 7) as u8)
            .collect();
        roundtrip(&skewed);
        let uniform: Vec<u8> = (0..5000).map(|_| rnd() as u8).collect();
        roundtrip(&uniform);
        let dna: Vec<u8> = (0..16384).map(|_| b"ACGT"[(rnd() % 4) as usize]).collect();
        roundtrip(&dna);
    }

    #[test]
    fn corrupt_slice_fails_closed() {
        let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 13) as u8).collect();
        let mut h = [0u64; 256];
        count(&mut h, &data);
        let t = FreqTable::from_histogram(&h).unwrap();
        let mut enc = Vec::new();
        encode_slice(&data, 4, &t, &t.cumulative(), &mut enc);
        let dt = t.decode_table();
        let mut detected = 0;
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 0x10;
            let mut out = vec![0u8; data.len()];
            if decode_slice(&bad, 4, SliceTables::single(&dt), &mut out).is_err() || out != data {
                detected += 1;
            }
        }
        // every flip changes the output or is rejected; rejection is what the trailer check buys
        assert_eq!(detected, enc.len());
    }

    #[test]
    fn table_serialization_roundtrips_and_rejects_bad_sums() {
        let mut h = [0u64; 256];
        count(&mut h, b"hello world, hello table");
        let t = FreqTable::from_histogram(&h).unwrap();
        let mut buf = Vec::new();
        t.serialize(&mut buf);
        let mut pos = 0;
        assert_eq!(FreqTable::deserialize(&buf, &mut pos).unwrap(), Some(t));
        assert_eq!(pos, buf.len());
        let last = buf.len() - 1;
        buf[last] ^= 1;
        assert!(FreqTable::deserialize(&buf, &mut 0).is_err());
        assert!(FreqTable::deserialize(&buf[..10], &mut 0).is_err());
    }

    #[test]
    fn lane_counts_per_slice() {
        // one lane per 256 symbols, rounded down to 1, 2, 4, 8, 16, 24 or 32
        assert_eq!(lanes_for(0, SYMBOLS_PER_LANE), 1);
        assert_eq!(lanes_for(511, SYMBOLS_PER_LANE), 1);
        // 2-3 lanes' worth rounds up to 4
        assert_eq!(lanes_for(600, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(1000, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(1500, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(5000, SYMBOLS_PER_LANE), 16);
        assert_eq!(lanes_for(7000, SYMBOLS_PER_LANE), 24);
        assert_eq!(lanes_for(16384, SYMBOLS_PER_LANE), 32);
        assert_eq!(lanes_for(1 << 30, SYMBOLS_PER_LANE), 32);
    }

    #[test]
    fn levels_8_and_9_use_fewer_lanes() {
        assert_eq!(symbols_per_lane(5, 16384), 256);
        assert_eq!(symbols_per_lane(7, 1 << 20), 256);
        assert_eq!(symbols_per_lane(8, 16384), 1024);
        assert_eq!(symbols_per_lane(9, 16384), 4096);
        // smaller blocks: proportionally fewer symbols per lane, at least 128
        assert_eq!(symbols_per_lane(5, 8192), 128);
        assert_eq!(symbols_per_lane(5, 4096), 128);
        assert_eq!(symbols_per_lane(9, 4096), 1024);
        // a text-like block: 8585 literals, 1000 offsets, 1950 commands, 800 tails (at level
        // 5-7 the lengths go to a second round: `block_lanes_fit_one_warp_and_balance_steps`)
        let n = [Some(8585), Some(30), Some(1000), Some(1950), Some(800)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [20, 1, 4, 4, 4]);
        // every slice but the literals gets one lane; the 1950 commands are then the longest
        // chain, and the literals need only 4 lanes to stay within 1/8 of it (2147 steps)
        assert_eq!(block_lanes(n, 1024), [4, 1, 1, 1, 1]);
        // 8585 / 4096 -> 2 lanes' worth, rounded up to 4
        assert_eq!(block_lanes(n, 4096), [4, 1, 1, 1, 1]);
        // a DNA-like block: 15,000 literals -> 14 lanes' worth, 12 at level 8 (1250 steps), 4
        // at level 9
        let dna = [Some(15000), Some(30), Some(230), Some(230), Some(200)];
        assert_eq!(block_lanes(dna, 1024), [12, 1, 1, 1, 1]);
        assert_eq!(block_lanes(dna, 4096), [4, 1, 1, 1, 1]);
    }

    #[test]
    fn literal_alphabet_leaves_out_a_few_wide_blocks() {
        // a FASTA group: a header block of many letters, then 15 blocks of ACGT and newlines
        let header: &[u8] = b">chr1 Homo sapiens, GRCh37 primary assembly\nACGTN";
        let dna: &[u8] = b"ACGTACGTNNNN\nACGT";
        let mut blocks = vec![header];
        blocks.extend(std::iter::repeat_n(dna, 15));
        let (alphabet, raw) = literal_alphabet(blocks.iter().copied(), 16).unwrap();
        assert_eq!(alphabet, b"\nACGNT");
        assert_eq!(raw, [[true].as_slice(), &[false; 15]].concat());
        // two wide blocks of 16 are 1/8: packing; three are more: none
        let mut two = vec![header, header];
        two.extend(std::iter::repeat_n(dna, 14));
        assert!(literal_alphabet(two.iter().copied(), 16).is_some());
        let mut three = vec![header, header, header];
        three.extend(std::iter::repeat_n(dna, 13));
        assert!(literal_alphabet(three.iter().copied(), 16).is_none());
        // 17 letters spread over every block: none
        let text: &[u8] = b"Call me Ishmael. Some years ago - never mind how long";
        assert!(literal_alphabet(std::iter::repeat_n(text, 8), 16).is_none());
        // a block of 16 letters but one outside the 16 most common: raw
        let rare: &[u8] = b"ACGTZ";
        let mut r = vec![rare];
        r.extend(std::iter::repeat_n(b"ACGTBDEFHIJKLMOP".as_slice(), 8));
        let (alphabet, raw) = literal_alphabet(r.iter().copied(), 16).unwrap();
        assert_eq!(alphabet.len(), 16);
        assert!(!alphabet.contains(&b'Z'));
        assert!(raw[0]);
        assert!(raw[1..].iter().all(|&x| !x));
        // a short FASTA header (ce2's ">chrX"): within 16 letters, so the whole group packs
        // two letters a symbol; at most 6 letters, three a symbol with the header block raw
        let short: &[u8] = b">chrX\nACGT";
        let dna: &[u8] = b"ACGTTGCA\nACGT";
        let mut fasta = vec![short];
        fasta.extend(std::iter::repeat_n(dna, 15));
        let (alphabet, raw) = literal_alphabet(fasta.iter().copied(), 16).unwrap();
        assert_eq!(alphabet, b"\n>ACGTXchr");
        assert!(raw.iter().all(|&x| !x));
        let (alphabet, raw) = literal_alphabet(fasta.iter().copied(), 6).unwrap();
        assert_eq!(alphabet, b"\n>ACGT");
        assert_eq!(raw, [[true].as_slice(), &[false; 15]].concat());
        // at most 4: every block has five letters, so none
        assert!(literal_alphabet(fasta.iter().copied(), 4).is_none());
    }

    #[test]
    fn packed_literal_blocks_give_the_longest_chain_more_lanes() {
        // hs37-like block at level 5-7: 14,400 literals, three per symbol (4,800 symbols),
        // 268 commands. Lanes from the literals' count: 32 -> 24 to fit (28 in all); the
        // commands' 268 steps on one lane are then the longest chain, so they step up to 4
        // (31 lanes); the literals' 200 steps are next, and 32 lanes would not fit
        let n = [Some(4800), Some(10), Some(100), Some(268), Some(60)];
        assert_eq!(block_lanes_packed(n, SYMBOLS_PER_LANE, 3), [24, 1, 1, 4, 1]);
        // the same block unpacked: 24 + 1 + 1 + 1 + 1 lanes, the literals' 600 steps the
        // longest, and 32 would not fit; two rounds (`two_round_lanes`): the literals on 32
        // (450 steps), then the others within 64 steps each, 1 + 4 + 8 + 1 lanes (the tails'
        // 60 steps the longest): 510 steps, 90 fewer for 18 lanes more (5 per lane)
        let unpacked = [Some(14400), Some(10), Some(100), Some(268), Some(60)];
        assert_eq!(block_lanes(unpacked, SYMBOLS_PER_LANE), [32, 1, 4, 8, 1]);
        assert_eq!(
            block_lanes_packed(unpacked, SYMBOLS_PER_LANE, 1),
            [32, 1, 4, 8, 1]
        );
    }

    #[test]
    fn fast_levels_give_a_half_empty_warp_to_the_longest_chain() {
        // dm3 block 153 at level 6: 7,181 literals, 5 lengths, 1,243 offsets, 2,228 commands,
        // 991 offset tails. Lanes 24 + 1 + 4 + 8 + 4 are over 32: the literals step down to
        // 20, 16, then 12 (29 in all); the trim leaves the commands on 4 (557 steps,
        // within 1/8 of the literals' 599). Steps up: literals to 16 (449); the commands' 557
        // are then the longest, and 8 lanes do not fit in one warp round: 16 + 1 + 4 + 4 + 4
        let n = [Some(7181), Some(5), Some(1243), Some(2228), Some(991)];
        // `step_up_by_rounds`: the commands on 8 anyway, 33 lanes; the kernel's first round
        // takes the largest four (16 + 8 + 4 + 4: 449, 279, 311, 248 steps), the lengths'
        // 5 steps wait for a second: 454 steps, 103 fewer for 4 lanes
        for (lanes, steps) in [([16, 1, 4, 4, 4], 557), ([16, 1, 4, 8, 4], 449 + 5)] {
            let symbols = [7181, 5, 1243, 2228, 991];
            assert_eq!(aceapex_device::rans::warp_steps(symbols, lanes), steps);
        }
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [16, 1, 4, 8, 4]);
        // dm3 block 111 (`step_up_by_rounds`' case): 20 + 1 + 4 + 8 + 4 lanes step down to
        // 12 + 1 + 4 + 8 + 4 (the literals' 441 steps); with the literals on 16 the first
        // round is 16 + 8 + 4 + 4 (331, 322, 367, 305 steps) and the lengths' 9 the second:
        // 376
        let dm3 = [Some(5284), Some(9), Some(1467), Some(2570), Some(1220)];
        assert_eq!(block_lanes(dm3, SYMBOLS_PER_LANE), [16, 1, 4, 8, 4]);
        // refused: dm3 block 36, context-pair literals on 24 lanes (585 steps) and commands,
        // offsets and tails on one each; the best of two rounds, 32 lanes (439 steps) then
        // 8 + 4 + 4 (63), is 502 steps, 83 fewer for 21 lanes more, under 4 per lane; the
        // literals on 32 with the others in a second round, 942
        let refused = [Some(14023), None, Some(174), Some(503), Some(129)];
        let symbols = [14023, 0, 174, 503, 129];
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [32, 0, 4, 8, 4]),
            439 + 63
        );
        // two warps sharing the rounds: the literals' round on one, the 8 + 4 + 4 on the other
        assert_eq!(
            aceapex_device::rans::warp_part_steps(symbols, [32, 0, 4, 8, 4], 2),
            [439, 63, 0, 0, 0]
        );
        assert_eq!(block_lanes(refused, SYMBOLS_PER_LANE), [24, 0, 1, 1, 1]);
        // at level 8 (1,024 symbols per lane) no step-up: ratio first
        assert_eq!(block_lanes(n, 1024), [4, 1, 1, 4, 1]);
    }

    #[test]
    fn fast_levels_fill_a_text_blocks_warp() {
        // brown block 434 at level 6: 4,452 literals, no lengths, 1,277 offsets, 1,988
        // commands, 1,168 tails. Start 16 + 4 + 4 + 4 (lanes_for), the trim to 1/8 over the
        // commands' 497 steps puts the literals on 8 (557 steps, the longest). Steps up:
        // literals to 12 (371), commands to 8 (249); then (`step_up_by_rounds`) the literals
        // to 16 (279): 32 lanes, the offsets' 320 the longest, 51 steps fewer for 4 lanes;
        // every further step (a second round) saves less than 4 steps per lane
        let n = [Some(4452), None, Some(1277), Some(1988), Some(1168)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [16, 0, 4, 8, 4]);
        // a chain within 1.5 times per_lane takes no lanes in the first step-up (ratio
        // first): 1,500 literals on 4 lanes (lanes_for), 375 steps; over 3/4 of per_lane,
        // `step_up_by_rounds` takes the literals to 8 (300 steps, the offsets'; 75 fewer for
        // 4 lanes) and the offsets to 4 (188, the literals'; 112 fewer for 3 lanes)
        assert_eq!(
            block_lanes(
                [Some(1500), None, Some(300), Some(600), None],
                SYMBOLS_PER_LANE
            ),
            [8, 0, 4, 4, 0]
        );
        // one over it steps up at once: 2,000 literals, 500 steps on 4 lanes, 250 on 8; then
        // the offsets to 4 (250, 50 fewer for 3 lanes) and the literals to 12 (167)
        assert_eq!(
            block_lanes(
                [Some(2000), None, Some(300), Some(600), None],
                SYMBOLS_PER_LANE
            ),
            [12, 0, 4, 4, 0]
        );
    }

    #[test]
    fn fast_levels_give_an_unpacked_dna_block_two_rounds() {
        // E. coli block 10 at level 6 (the FASTA header keeps its group unpacked): 16,331
        // literals and 140 commands. One round: 24 + 1 lanes, ceil(16331 / 24) = 681 steps;
        // two: 32 lanes (511 steps), then the commands on 4 (35): 546, for 11 lanes
        let n = [Some(16331), None, None, Some(140), None];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [32, 0, 0, 4, 0]);
        let symbols = [16331, 0, 0, 140, 0];
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [24, 0, 0, 1, 0]),
            681
        );
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [32, 0, 0, 4, 0]),
            511 + 35
        );
        // at level 8 (1,024 symbols per lane: 16331 / 1024 = 15, 12 lanes): one round, ratio
        // first
        assert_eq!(block_lanes(n, 1024), [12, 0, 0, 1, 0]);
        // rounds of the kernel: largest first while they fit; 16 + 8 + 8 fill the first,
        // the 4-lane slice waits for the second: max(100, 50, 25) + 10
        assert_eq!(
            aceapex_device::rans::warp_steps([1600, 400, 200, 40, 0], [16, 8, 8, 4, 0]),
            110
        );
    }

    #[test]
    fn block_lanes_fit_one_warp_and_balance_steps() {
        // DNA-like block: 15,000 literals, 230 commands and offsets, 200 offset tails:
        // literals 32 -> 24 to fit in one round (625 steps); at level 6 two rounds then take
        // 32 (469) and 1 + 4 + 4 + 4 (58): 527 steps, 98 fewer for 17 lanes more; at level 8
        // (1,024 symbols per lane) one round of 12 + 1 + 1 + 1 + 1, ratio first
        let n = [Some(15000), Some(30), Some(230), Some(230), Some(200)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [32, 1, 4, 4, 4]);
        assert_eq!(block_lanes(n, 1024), [12, 1, 1, 1, 1]);
        // text-like: 8585 literals (32 -> 24 -> 20 -> 16 to fit: 537 steps, the
        // longest), 1000 offsets, 1950 commands and 800 tails at 4 lanes each (250, 488 and
        // 200 steps; one lane would take 1000, 1950 and 800, over 1/8 above 537); then
        // (`step_up_by_rounds`) the literals on 20, the first round 20 + 4 + 4 + 4 (430,
        // 250, 488, 200 steps) and the lengths' 30 the second: 518, 19 fewer for 4 lanes
        assert_eq!(
            block_lanes(
                [Some(8585), Some(30), Some(1000), Some(1950), Some(800)],
                SYMBOLS_PER_LANE
            ),
            [20, 1, 4, 4, 4]
        );
        // raw or empty slices take no lanes
        assert_eq!(
            block_lanes([None, None, Some(600), None, None], SYMBOLS_PER_LANE),
            [0, 0, 4, 0, 0]
        );
        // a lone large slice keeps its lanes
        assert_eq!(
            block_lanes([Some(16384), None, None, None, None], SYMBOLS_PER_LANE),
            [32, 0, 0, 0, 0]
        );
        // balancing: 2000 literals at 4 lanes take 500 steps, so 2100 offsets need only 4
        // lanes (525 steps, within 1/8) instead of 8; at level 6 the step-up then takes both
        // to 8 (263 and 250 steps: 525 and 500 are over 1.5 * 256), and `step_up_by_rounds`
        // both to 12 (175 and 167: 88 fewer for 8 lanes; the offsets alone on 12 would save
        // 13 for 4)
        assert_eq!(
            block_lanes([Some(2000), None, Some(2100), None, None], SYMBOLS_PER_LANE),
            [12, 0, 12, 0, 0]
        );
        // per_lane 1024 (level 8, no step-up): 2000 literals on 1 lane, so the offsets take
        // 1 lane too (2100 steps, within 1/8 of 2000) rather than lanes_for's 4
        assert_eq!(
            block_lanes([Some(2000), None, Some(2100), None, None], 1024),
            [1, 0, 1, 0, 0]
        );
    }

    /// FORMAT.md §5.7 worked by hand: `AACCGGTT\n` has four symbols of two each (in byte
    /// order A, C, G, T) and one exception, the line feed at 8 (gap 9 after -1, so the varint
    /// is zigzag(9 - 0) << 1 | new = 37).
    #[test]
    fn two_bit_slice_matches_the_format_by_hand() {
        let lits = b"AACCGGTT\n";
        let want = [
            b'A', b'C', b'G', b'T', // symbols
            1, 1,     // x, u
            b'\n', // the value
            37,    // the exception's varint
            0x50, 0xFA, 0x00, // codes: 0 0 1 1, 2 2 3 3, (0)
        ];
        let mut out = vec![9u8];
        assert_eq!(encode_two_bit(lits, &mut out), want.len());
        assert_eq!(&out[1..], &want);
        let mut back = [0u8; 9];
        crate::device::two_bit::decode(&want, &mut back).unwrap();
        assert_eq!(&back, lits);
    }

    #[test]
    fn two_bit_slices_round_trip() {
        let mut r = crate::gpu::tokens::Rng::new(11);
        let mut cases: Vec<Vec<u8>> = vec![
            b"A".to_vec(),
            b"N".to_vec(),
            b"\nACGT\n".to_vec(),
            b"ACGTNNNNNNNN".to_vec(),
            (0..1000u32).map(|i| (i % 251) as u8).collect(),
        ];
        // exceptions far apart (gaps past 2^14, a 3-byte varint) and next to each other
        let mut far = vec![b'A'; 300_000];
        far[0] = b'N';
        far[20_000] = b'N';
        far[20_001] = b'R';
        far[299_999] = b'\n';
        cases.push(far);
        for n in 1..40 {
            for alphabet in [&b"ACGT"[..], b"ACGT\n", b"ACGTNacgtn\n", b"AC"] {
                cases.push(
                    (0..n)
                        .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
                        .collect(),
                );
            }
        }
        for lits in cases {
            let mut slice = Vec::new();
            let len = encode_two_bit(&lits, &mut slice);
            assert_eq!(len, slice.len());
            let mut back = vec![0u8; lits.len()];
            crate::device::two_bit::decode(&slice, &mut back).unwrap();
            assert_eq!(back, lits);
        }
    }

    /// Broken rules of FORMAT.md §5.7 fail with `TwoBitSlice`, and no slice panics the
    /// decoder: every prefix, every bit flip of a few slices, and hand-made heads.
    #[test]
    fn two_bit_decoder_fails_closed() {
        use crate::device::status::Status;
        use crate::device::two_bit::decode;
        let bad = Err(Status::TwoBitSlice);
        let lits = b"ACGTTGCA\nACGGT\nNNA";
        let mut slice = Vec::new();
        encode_two_bit(lits, &mut slice);
        let mut out = vec![0u8; lits.len()];
        for cut in 0..slice.len() {
            assert_eq!(decode(&slice[..cut], &mut out), bad, "prefix {cut}");
        }
        // one byte too many: the varints no longer end where the codes begin
        let mut long = slice.clone();
        long.insert(7, 0);
        assert_eq!(decode(&long, &mut out), bad);
        for i in 0..slice.len() {
            for bit in 0..8 {
                let mut s = slice.clone();
                s[i] ^= 1 << bit;
                let mut o = vec![0u8; lits.len()];
                // no panic; either an error or some n bytes
                let _ = decode(&s, &mut o);
            }
        }
        // hand-made heads for 4 literals (one code byte): symbols, x, u, values, varints
        let head = |rest: &[u8]| [&b"ACGT"[..], rest, &[0u8]].concat();
        let mut o = [0u8; 4];
        assert_eq!(decode(&head(&[0, 0]), &mut o), Ok(()));
        assert_eq!(o, *b"AAAA");
        // x > n
        assert_eq!(decode(&head(&[5, 0]), &mut o), bad);
        // u > x
        assert_eq!(decode(&head(&[1, 2, 1, 2, 3]), &mut o), bad);
        // a first exception that is not new
        assert_eq!(decode(&head(&[1, 0, 2 << 1]), &mut o), bad);
        // gap 0: zigzag(0) with new, the first exception at -1 + 0
        assert_eq!(decode(&head(&[1, 1, b'N', 1]), &mut o), bad);
        // position past n: gap 5 (zigzag 10)
        assert_eq!(decode(&head(&[1, 1, b'N', 10 << 1 | 1]), &mut o), bad);
        // gap 4: the last literal
        assert_eq!(decode(&head(&[1, 1, b'N', 8 << 1 | 1]), &mut o), Ok(()));
        assert_eq!(o, *b"AAAN");
        // a value left unused, and a varint of five bytes
        assert_eq!(decode(&head(&[1, 2, b'N', b'R', 8 << 1 | 1]), &mut o), bad);
        assert_eq!(
            decode(&head(&[1, 1, b'N', 0x81, 0x80, 0x80, 0x80, 0]), &mut o),
            bad
        );
        // no literals
        assert_eq!(decode(&head(&[0, 0]), &mut []), bad);
    }
}
