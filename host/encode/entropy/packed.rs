//! Packed literals (FORMAT.md §5.6): the alphabet of a group's literals and their packing
//! several to a byte.

use crate::device::format::*;
use crate::format::tables::{count, Histogram};

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
    let hists: Vec<Histogram> = slices
        .map(|s| {
            let mut h = [0u64; 256];
            count(&mut h, s);
            h
        })
        .collect();
    literal_alphabet_counted(&hists, max_letters)
}

/// [`literal_alphabet`] from each block's literal histogram (the encoder counts them for its
/// tables anyway, so the alphabet costs no pass over the literals).
pub fn literal_alphabet_counted(
    hists: &[Histogram],
    max_letters: usize,
) -> Option<(Vec<u8>, Vec<bool>)> {
    let most_raw = hists.len() / RAW_LITERAL_BLOCKS_DIV;
    // per block its letters, `None` when it has more than 16 (raw whatever the alphabet);
    // gives up once too many blocks are raw
    let mut sets: Vec<Option<[bool; 256]>> = Vec::with_capacity(hists.len());
    let mut blocks_with = [0usize; 256];
    let mut wide = 0usize;
    for h in hists {
        let seen: [bool; 256] = std::array::from_fn(|x| h[x] > 0);
        let distinct = seen.iter().filter(|&&y| y).count();
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
    out.reserve(literals.len().div_ceil(w));
    // the common widths (16, 6 and 4 letters) with the width known to the compiler
    match w {
        2 => pack_fixed::<2>(literals, &code, a, out),
        3 => pack_fixed::<3>(literals, &code, a, out),
        4 => pack_fixed::<4>(literals, &code, a, out),
        _ => out.extend(literals.chunks(w).map(|c| pack_symbol(c, &code, a))),
    }
}

/// Symbol of the literals `c` (at most a width's worth; those past its end count as code 0).
#[inline(always)]
fn pack_symbol(c: &[u8], code: &[u8; 256], a: u32) -> u8 {
    c.iter()
        .rev()
        .fold(0u32, |s, &x| s * a + code[x as usize] as u32) as u8
}

/// [`pack_literals`]' loop for width `W`.
fn pack_fixed<const W: usize>(literals: &[u8], code: &[u8; 256], a: u32, out: &mut Vec<u8>) {
    let (full, rest) = literals.as_chunks::<W>();
    out.extend(full.iter().map(|c| pack_symbol(c, code, a)));
    if !rest.is_empty() {
        out.push(pack_symbol(rest, code, a));
    }
}
