//! Frequency tables and table records (FORMAT.md §5.2): order-0 histograms, quantisation to
//! [`PROB_SCALE`], the compact serialisation of the table section, and the expansion table of a
//! packed literal alphabet (FORMAT.md §5.6).

use crate::device::format::{
    pack_slot, pack_width, DecodeTable, MAX_PACK_ALPHABET, PACK_WIDTH_SLOT, PROB_BITS, PROB_SCALE,
    STREAM_LITERALS,
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
            super::varint::write_varint(f - 1, out);
        }
    }

    /// Bytes of the table body ([`Self::serialize_body`]).
    pub fn body_len(&self) -> usize {
        32 + self
            .freq
            .iter()
            .filter(|&&f| f > 0)
            .map(|&f| super::varint::varint_len(f - 1) as usize)
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
                let v = super::varint::read_varint(buf, pos)
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
