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
    two_bit_len_floor_counted(&h)
}

/// [`two_bit_len_floor`] from the literals' histogram `h` (their count is its sum): lets the
/// encoder reuse the histogram it counts for its tables.
pub fn two_bit_len_floor_counted(h: &Histogram) -> usize {
    let mut top = [0u64; 4];
    let mut n = 0u64;
    for &c in h {
        n += c;
        if c > top[3] {
            top[3] = c;
            top.sort_unstable_by(|a, b| b.cmp(a));
        }
    }
    let exceptions = (n - top.iter().sum::<u64>()) as usize;
    6 + exceptions + (n as usize).div_ceil(4)
}

/// Appends `literals` (at least one) as a two-bit literal slice (FORMAT.md §5.7,
/// [`crate::device::two_bit`]) to `out`: codes for the four most frequent bytes (ties to the
/// lower byte), every other literal an exception. Returns the slice's length. The caller keeps
/// it where it is shorter than the slice it would otherwise store.
pub fn encode_two_bit(literals: &[u8], out: &mut Vec<u8>) -> usize {
    let mut h = [0u64; 256];
    count(&mut h, literals);
    encode_two_bit_counted(literals, &h, out)
}

/// [`encode_two_bit`] given the histogram `h` of `literals` (exactly theirs: it picks the
/// four codes).
pub fn encode_two_bit_counted(literals: &[u8], h: &Histogram, out: &mut Vec<u8>) -> usize {
    use crate::device::two_bit::zigzag;
    debug_assert_eq!(h.iter().sum::<u64>(), literals.len() as u64);
    let start = out.len();
    let mut order: Vec<u8> = (0..=255u8).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(h[b as usize]), b));
    let sym = [order[0], order[1], order[2], order[3]];
    // a literal's 2-bit code, or EXCEPTION (its code in the slice is then 0)
    const EXCEPTION: u8 = 0x80;
    let mut code = [EXCEPTION; 256];
    for (c, &b) in sym.iter().enumerate() {
        code[b as usize] = c as u8;
    }
    let x_total = literals.len() as u64 - sym.iter().map(|&b| h[b as usize]).sum::<u64>();
    let mut values = Vec::new();
    let mut varints = Vec::with_capacity(x_total as usize);
    let mut codes = Vec::with_capacity(literals.len().div_ceil(4));
    let (mut g, mut p, mut last) = (0i64, -1i64, None);
    let mut exception = |i: usize, b: u8| {
        let gap = i as i64 - p;
        let new = last != Some(b);
        if new {
            values.push(b);
        }
        // gaps are at most a block (< 2^23), so the difference fits the 4-byte varint
        write_varint(zigzag((gap - g) as i32) << 1 | new as u32, &mut varints);
        (g, p, last) = (gap, i as i64, Some(b));
    };
    // one pass: four literals a byte of codes, the exceptions in order as they come
    let (quads, rest) = literals.as_chunks::<4>();
    for (j, q) in quads.iter().enumerate() {
        let c = q.map(|b| code[b as usize]);
        if (c[0] | c[1] | c[2] | c[3]) & EXCEPTION == 0 {
            codes.push(c[0] | c[1] << 2 | c[2] << 4 | c[3] << 6);
            continue;
        }
        let mut byte = 0u8;
        for (t, (&c, &b)) in c.iter().zip(q).enumerate() {
            if c & EXCEPTION != 0 {
                exception(4 * j + t, b);
            } else {
                byte |= c << (2 * t);
            }
        }
        codes.push(byte);
    }
    if !rest.is_empty() {
        let mut byte = 0u8;
        for (t, &b) in rest.iter().enumerate() {
            let c = code[b as usize];
            if c & EXCEPTION != 0 {
                exception(4 * quads.len() + t, b);
            } else {
                byte |= c << (2 * t);
            }
        }
        codes.push(byte);
    }
    out.extend_from_slice(&sym);
    write_varint(x_total as u32, out);
    write_varint(values.len() as u32, out);
    out.extend_from_slice(&values);
    out.extend_from_slice(&varints);
    out.extend_from_slice(&codes);
    out.len() - start
}
