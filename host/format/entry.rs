//! The packed block entries (FORMAT.md §3.1): each entry is the block's position-bound
//! checksum (§6) followed by its other fields in the bit widths the header gives, so a block
//! table costs a few bytes per block rather than the 64 of the in-memory [`BlockEntry`].
//! Entries keep one size, so entry `i` lies at a computed offset.

use crate::device::format::{
    block_position_mix, BlockEntry, EntryBits, MAX_FIELD_BITS, MAX_LANES, STREAM_COUNT,
};

/// Packed fields after the checksum: five `stored_len`, five `decoded_len`, five lane
/// counts, `max_depth`, the source distance.
const FIELDS: usize = 3 * STREAM_COUNT + 2;

/// Width of each packed field, in packing order.
fn widths(b: &EntryBits) -> [u8; FIELDS] {
    let mut w = [0u8; FIELDS];
    w[..STREAM_COUNT].copy_from_slice(&b.stored);
    w[STREAM_COUNT..2 * STREAM_COUNT].copy_from_slice(&b.decoded);
    w[2 * STREAM_COUNT..3 * STREAM_COUNT].fill(b.lanes);
    w[3 * STREAM_COUNT] = b.depth;
    w[3 * STREAM_COUNT + 1] = b.source;
    w
}

/// The packed field values of entry `i` (its source distance is `i - lowest_source_block`).
fn values(e: &BlockEntry, i: u32) -> [u32; FIELDS] {
    let mut v = [0u32; FIELDS];
    v[..STREAM_COUNT].copy_from_slice(&e.stored_len);
    v[STREAM_COUNT..2 * STREAM_COUNT].copy_from_slice(&e.decoded_len);
    for (x, &l) in v[2 * STREAM_COUNT..3 * STREAM_COUNT]
        .iter_mut()
        .zip(&e.lanes)
    {
        *x = l as u32;
    }
    v[3 * STREAM_COUNT] = e.max_depth;
    v[3 * STREAM_COUNT + 1] = i - e.lowest_source_block;
    v
}

/// Bits needed for `v` (0 for 0).
fn bits_of(v: u32) -> u8 {
    (u32::BITS - v.leading_zeros()) as u8
}

/// The smallest widths that hold every field of `entries` (entry `i` is block `i`; its
/// lowest source block must be at most `i`).
pub fn bits_for(entries: &[BlockEntry]) -> EntryBits {
    let mut w = [0u8; FIELDS];
    for (i, e) in entries.iter().enumerate() {
        for (w, v) in w.iter_mut().zip(values(e, i as u32)) {
            *w = (*w).max(bits_of(v));
        }
    }
    let mut b = EntryBits {
        stored: [0; STREAM_COUNT],
        decoded: [0; STREAM_COUNT],
        lanes: 0,
        depth: w[3 * STREAM_COUNT],
        source: w[3 * STREAM_COUNT + 1],
        match_base: 0,
        reserved: [0; 2],
    };
    b.stored.copy_from_slice(&w[..STREAM_COUNT]);
    b.decoded
        .copy_from_slice(&w[STREAM_COUNT..2 * STREAM_COUNT]);
    b.lanes = w[2 * STREAM_COUNT..3 * STREAM_COUNT]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    b
}

/// Checks the header's widths (FORMAT.md §2: each at most [`MAX_FIELD_BITS`], reserved bytes
/// zero). Returns what is wrong.
pub fn check_bits(b: &EntryBits) -> Result<(), String> {
    if b.reserved != [0; 2] {
        return Err("reserved bytes are not zero".into());
    }
    match widths(b).into_iter().max() {
        Some(w) if w > MAX_FIELD_BITS => Err(format!("a width of {w} bits (at most 32)")),
        _ => Ok(()),
    }
}

/// Bytes of one packed entry: 8 for the checksum, then the fields' bits rounded up to bytes.
/// `b` must pass [`check_bits`] (the size is then at most 8 + 68 bytes).
pub fn packed_size(b: &EntryBits) -> usize {
    let bits: usize = widths(b).iter().map(|&w| w as usize).sum();
    8 + bits.div_ceil(8)
}

/// Appends `entries` packed under `b` (which [`bits_for`] computed from them, or wider); entry
/// `i` is block `i`, whose checksum is stored XOR [`block_position_mix`]`(i)` (FORMAT.md §6).
pub fn pack(entries: &[BlockEntry], b: &EntryBits, out: &mut Vec<u8>) {
    let w = widths(b);
    let size = packed_size(b);
    for (i, e) in entries.iter().enumerate() {
        let start = out.len();
        let stored = e.checksum ^ block_position_mix(i as u32);
        out.extend_from_slice(&stored.to_le_bytes());
        let (mut acc, mut n) = (0u64, 0u32);
        for (&w, v) in w.iter().zip(values(e, i as u32)) {
            debug_assert!(bits_of(v) <= w, "field wider than its width");
            acc |= (v as u64) << n;
            n += w as u32;
            while n >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                n -= 8;
            }
        }
        if n > 0 {
            out.push(acc as u8);
        }
        debug_assert_eq!(out.len() - start, size);
    }
}

/// Unpacks entry `i` from its [`packed_size`] bytes; the checksum comes back with the position
/// mix of block `i` removed (FORMAT.md §6), so it equals the XXH3-64 of block `i`'s bytes only
/// where the entry was written for position `i`. Errors (the text of a
/// `FormatError::BlockEntry`): padding bits that are not zero, a lane count above 255 (the
/// limit of 64, or 127 for a two-bit slice, is `Archive::parse`'s check), or a source
/// distance above `i`.
pub fn unpack(bytes: &[u8], i: u32, b: &EntryBits) -> Result<BlockEntry, String> {
    let mut e = BlockEntry {
        checksum: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
            ^ block_position_mix(i),
        stored_len: [0; STREAM_COUNT],
        decoded_len: [0; STREAM_COUNT],
        max_depth: 0,
        lowest_source_block: 0,
        lanes: [0; STREAM_COUNT],
        reserved: [0; 3],
    };
    let mut next = 8usize;
    let (mut acc, mut n) = (0u64, 0u32);
    let mut v = [0u32; FIELDS];
    for (x, w) in v.iter_mut().zip(widths(b)) {
        let w = w as u32;
        while n < w {
            acc |= (bytes[next] as u64) << n;
            next += 1;
            n += 8;
        }
        *x = (acc & ((1u64 << w) - 1)) as u32;
        acc >>= w;
        n -= w;
    }
    if acc != 0 || next != bytes.len() {
        return Err("padding bits after the packed fields are not zero".into());
    }
    e.stored_len.copy_from_slice(&v[..STREAM_COUNT]);
    e.decoded_len
        .copy_from_slice(&v[STREAM_COUNT..2 * STREAM_COUNT]);
    for (k, (l, &x)) in e
        .lanes
        .iter_mut()
        .zip(&v[2 * STREAM_COUNT..3 * STREAM_COUNT])
        .enumerate()
    {
        // a width above 8 may hold a count that does not fit the in-memory byte; the
        // limit of FORMAT.md §3.1 rule 4 is checked with the other entry rules
        if x > u8::MAX as u32 {
            return Err(format!(
                "stream {k} has {x} lanes (at most {MAX_LANES}, or 127 for a two-bit literal slice)"
            ));
        }
        *l = x as u8;
    }
    e.max_depth = v[3 * STREAM_COUNT];
    let dist = v[3 * STREAM_COUNT + 1];
    if dist > i {
        return Err(format!("source distance {dist} reaches before block 0"));
    }
    e.lowest_source_block = i - dist;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seed: u32) -> BlockEntry {
        BlockEntry {
            checksum: 0x0123_4567_89AB_CDEF ^ seed as u64,
            stored_len: [seed, 0, 3 * seed, 77, 1 << 20],
            decoded_len: [16385, 1, 2 * seed, 78, 5],
            max_depth: seed % 40,
            lowest_source_block: 0,
            lanes: [32, 0, 4, 1, (seed % 24) as u8],
            reserved: [0; 3],
        }
    }

    #[test]
    fn pack_then_unpack_is_identity_and_widths_are_tight() {
        let entries: Vec<BlockEntry> = (0..50)
            .map(|i| BlockEntry {
                lowest_source_block: i / 3,
                ..entry(i * 37 + 5)
            })
            .collect();
        let b = bits_for(&entries);
        // hand-computed: stored[4] = 2^20 needs 21 bits, decoded[0] = 16385 needs 15,
        // lanes 32 need 6, the largest source distance 49 - 16 = 33 needs 6
        assert_eq!(b.stored[4], 21);
        assert_eq!(b.decoded[0], 15);
        assert_eq!(b.lanes, 6);
        assert_eq!(b.source, 6);
        let mut out = Vec::new();
        pack(&entries, &b, &mut out);
        let size = packed_size(&b);
        assert_eq!(out.len(), entries.len() * size);
        for (i, e) in entries.iter().enumerate() {
            let got = unpack(&out[i * size..(i + 1) * size], i as u32, &b).unwrap();
            assert_eq!(&got, e);
        }
    }

    /// FORMAT.md §6: the stored checksum is the XXH3-64 XOR the SplitMix64 output of the
    /// block index (0xe220a8397b1dcdaf is SplitMix64's well-known first output for seed 0),
    /// and an entry unpacked at another position keeps the wrong value.
    #[test]
    fn stored_checksums_are_bound_to_the_block_index() {
        assert_eq!(block_position_mix(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(block_position_mix(1), 0x910a_2dec_8902_5cc1);
        assert_eq!(block_position_mix(u32::MAX), 0x73b1_3ba2_aff1_81c0);
        let entries = [
            entry(1),
            BlockEntry {
                lowest_source_block: 1,
                ..entry(2)
            },
        ];
        let b = bits_for(&entries);
        let mut out = Vec::new();
        pack(&entries, &b, &mut out);
        let size = packed_size(&b);
        let stored = u64::from_le_bytes(out[size..size + 8].try_into().unwrap());
        assert_eq!(stored, entries[1].checksum ^ 0x910a_2dec_8902_5cc1);
        // entry 1's bytes read as entry 0 (lowest source 0 <= 0, so it unpacks)
        let moved = unpack(&out[size..2 * size], 0, &b).unwrap();
        assert_eq!(
            moved.checksum,
            entries[1].checksum ^ 0x910a_2dec_8902_5cc1 ^ 0xe220_a839_7b1d_cdaf
        );
    }

    #[test]
    fn unpack_rejects_padding_and_sources_before_block_zero() {
        let e = entry(3);
        let mut b = bits_for(&[e]);
        b.source = 4;
        if widths(&b).iter().map(|&w| w as usize).sum::<usize>() % 8 == 0 {
            b.source = 5;
        }
        let used: usize = widths(&b).iter().map(|&w| w as usize).sum();
        assert_ne!(used % 8, 0, "the entry must end in padding bits");
        let mut out = Vec::new();
        pack(&[e], &b, &mut out);
        assert!(unpack(&out, 0, &b).is_ok());
        // the source field is the last field before the padding: a distance of 1 at block 0
        let bit = 64 + used - b.source as usize;
        out[bit / 8] |= 1 << (bit % 8);
        assert!(unpack(&out, 0, &b).unwrap_err().contains("before block 0"));
        assert_eq!(unpack(&out, 1, &b).unwrap().lowest_source_block, 0);
        out[bit / 8] &= !(1 << (bit % 8));
        let last = out.len() - 1;
        out[last] |= 0x80;
        assert!(unpack(&out, 0, &b).unwrap_err().contains("padding"));
    }

    #[test]
    fn unpack_rejects_lane_counts_above_255_with_their_value() {
        let e = entry(3);
        let mut b = bits_for(&[e]);
        b.lanes = 12;
        let mut out = Vec::new();
        pack(&[e], &b, &mut out);
        // stream 1's lane field: after the ten length fields and stream 0's lanes
        let w = widths(&b);
        let at = 64
            + w[..2 * STREAM_COUNT + 1]
                .iter()
                .map(|&x| x as usize)
                .sum::<usize>();
        for j in 0..12 {
            let (byte, bit) = ((at + j) / 8, (at + j) % 8);
            out[byte] = (out[byte] & !(1 << bit)) | ((((3000u32 >> j) & 1) as u8) << bit);
        }
        let err = unpack(&out, 0, &b).unwrap_err();
        assert!(err.contains("stream 1 has 3000 lanes"), "{err}");
    }

    #[test]
    fn check_bits_limits_widths() {
        let mut b = bits_for(&[entry(1)]);
        assert!(check_bits(&b).is_ok());
        b.depth = 33;
        assert!(check_bits(&b).is_err());
        b.depth = 32;
        b.reserved[1] = 1;
        assert!(check_bits(&b).is_err());
    }
}
