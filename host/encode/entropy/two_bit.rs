//! Two-bit literal slices (FORMAT.md §5.7): nucleotide literals four to a byte with their
//! exceptions.

use crate::format::varint::write_varint;

use crate::format::tables::*;

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
        write_varint(zigzag((gap - g) as i32) << 1 | new as u32, &mut varints);
        (g, p, last) = (gap, i as i64, Some(b));
        x += 1;
    }
    out.extend_from_slice(&sym);
    write_varint(x, out);
    write_varint(values.len() as u32, out);
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
