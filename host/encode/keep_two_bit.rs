//! Which blocks keep their two-bit literal slices (FORMAT.md §5.7, §5.8), by the rule of the
//! settings' [`TwoBit`](super::TwoBit): the passes over an input's coded groups, and the rule
//! the streaming encoder shares.

use super::{GroupOut, TWO_BIT_MAX_LEFT};
use crate::device::format::*;

/// [`TwoBit::Smaller`](super::TwoBit::Smaller)'s pass over the coded groups: the two-bit
/// literal slices (FORMAT.md §5.7) are kept only where, all of them together, they shorten
/// the archive, the block table included, whose lane fields their lane code may widen for
/// every block ([`crate::format::entry::bits_for`]); otherwise every such block gets its
/// other slice back.
pub(super) fn keep_two_bit_if_smaller(groups: &mut [GroupOut]) {
    if groups.iter().all(|g| g.two_bit_alt.is_empty()) {
        return;
    }
    let with: Vec<BlockEntry> = (groups.iter())
        .flat_map(|g| g.blocks.iter().map(|(e, _)| *e))
        .collect();
    let mut without = with.clone();
    let (mut first, mut saved) = (0usize, 0isize);
    for g in groups.iter() {
        for (i, lanes, other) in &g.two_bit_alt {
            let e = &mut without[first + i];
            saved += other.len() as isize - e.stored_len[STREAM_LITERALS] as isize;
            e.lanes[STREAM_LITERALS] = *lanes;
            e.stored_len[STREAM_LITERALS] = other.len() as u32;
        }
        first += g.blocks.len();
    }
    let table = |es: &[BlockEntry]| {
        (crate::format::entry::packed_size(&crate::format::entry::bits_for(es)) * es.len()) as isize
    };
    if saved > table(&with) - table(&without) {
        return;
    }
    revert_two_bit(groups);
}

/// [`TwoBit::MostBlocks`](super::TwoBit::MostBlocks)'s pass over the coded groups: the
/// two-bit literal slices (FORMAT.md §5.7, §5.8) are kept only where at most
/// `1 / TWO_BIT_MAX_LEFT` of the blocks with literals lack one ([`most_blocks_keep_two_bit`]);
/// otherwise every block that has one gets its other slice back.
pub(super) fn keep_two_bit_if_most_blocks(groups: &mut [GroupOut]) {
    let blocks = groups.iter().flat_map(|g| g.blocks.iter().map(|(e, _)| e));
    if most_blocks_keep_two_bit(blocks) {
        return;
    }
    revert_two_bit(groups);
}

/// [`TwoBit::MostBlocks`](super::TwoBit::MostBlocks)'s rule on the block entries of an
/// input: whether at most `1 / TWO_BIT_MAX_LEFT` of those with literals lack a two-bit slice
/// (FORMAT.md §5.7, §5.8). The in-memory and the streaming encoder's one rule.
pub(crate) fn most_blocks_keep_two_bit<'e>(entries: impl Iterator<Item = &'e BlockEntry>) -> bool {
    let (mut with_literals, mut without) = (0usize, 0usize);
    for e in entries.filter(|e| e.decoded_len[STREAM_LITERALS] > 0) {
        with_literals += 1;
        without += !is_two_bit(e.lanes[STREAM_LITERALS]) as usize;
    }
    without * TWO_BIT_MAX_LEFT <= with_literals
}

/// Gives every block that took a two-bit literal slice its other slice back.
fn revert_two_bit(groups: &mut [GroupOut]) {
    for g in groups.iter_mut() {
        for (i, lanes, other) in std::mem::take(&mut g.two_bit_alt) {
            let (e, bytes) = &mut g.blocks[i];
            let two = e.stored_len[STREAM_LITERALS] as usize;
            bytes.splice(..two, other.iter().copied());
            e.lanes[STREAM_LITERALS] = lanes;
            e.stored_len[STREAM_LITERALS] = other.len() as u32;
        }
    }
}
