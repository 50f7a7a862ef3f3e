//! Region reads: original-byte ranges decoded into a caller's buffer, one thread, decoding
//! only the blocks a range lies in and verifying every one of them (FORMAT.md §6).
//!
//! A block is the unit of verification: its checksum covers all its bytes, so a read that
//! needs a few bytes of a block still decodes the whole block (a partial decode could not be
//! verified). What a read saves is everything else: the decode tables are expanded once per
//! archive ([`Archive::table`]), the stream buffers and the buffers of partly read blocks are
//! per-thread scratch kept between reads, blocks wholly inside the range decode straight into
//! the caller's buffer. A random read's block belongs to a group whose decode tables are
//! likely out of the cache: they are prefetched all at once before its slices are decoded
//! (`streams::decode_archive_block`), where a one-lane slice would otherwise wait for a miss
//! per symbol. Blocks are decoded one after the other: entropy-decoding several
//! blocks' streams together, as the whole-file decoder does, measured no faster for the one
//! to three blocks of a typical read (its bookkeeping outweighs the overlap of the rANS
//! chains, and blocks with two-bit literals have little to overlap), and it allocates.
//!
//! Archives whose window crosses blocks (FORMAT.md §3.3) decode the blocks a range needs and
//! every block those copy from, in order, into a buffer allocated for the read.

use super::{block_error, block_frame, checksum, streams, verify_block, zeroed_output};
use crate::error::DecodeError;
use crate::format::Archive;
use std::cell::RefCell;

/// Per-thread buffers of region reads, kept between reads.
#[derive(Default)]
struct Scratch {
    /// The decoded streams of the block being decoded.
    streams: streams::Scratch,
    /// A whole decoded block that a read needs only part of (a range's first or last block).
    blocks: Vec<u8>,
    /// A batch's (block, request) pairs.
    pairs: Vec<(usize, usize)>,
}

impl Scratch {
    /// Makes room for a block of `block_size` bytes.
    fn size_for(&mut self, block_size: usize) {
        if self.blocks.len() < block_size {
            self.blocks.resize(block_size, 0);
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch (a fresh one should the thread's be in use).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// The end of range `offset..offset + len`, or [`DecodeError::Region`] when it does not lie
/// inside the original data.
fn range_end(a: &Archive<'_>, offset: u64, len: usize) -> Result<u64, DecodeError> {
    let size = a.header.original_size;
    let length = len as u64;
    offset
        .checked_add(length)
        .filter(|&e| e <= size)
        .ok_or(DecodeError::Region {
            offset,
            length,
            size,
        })
}

/// Fills `buf` with original bytes `offset..offset + buf.len()` on the calling thread,
/// decoding and verifying (FORMAT.md §6) every block the range lies in (and, when the window
/// crosses blocks, every block those copy from). A range that is the whole original data is
/// also checked against the content checksum.
///
/// Errors: [`DecodeError::Region`] for a range past the end of the data (before anything is
/// decoded); [`DecodeError::Block`] for the first damaged block in block order;
/// [`DecodeError::Alloc`] when the buffer of a cross-block read cannot be had;
/// [`DecodeError::ContentChecksum`]. `buf` is then unspecified.
pub fn read_range(a: &Archive<'_>, offset: u64, buf: &mut [u8]) -> Result<(), DecodeError> {
    range_end(a, offset, buf.len())?;
    if buf.is_empty() {
        return Ok(());
    }
    if a.cross_block() {
        read_ranges_cross(a, &mut [(offset, buf)])?;
    } else {
        with_scratch(|s| read_range_blocks(a, offset, buf, s))?;
    }
    check_content(a, offset, buf)
}

/// A read of the whole original data is checked against the content checksum (its blocks
/// could be valid blocks of another archive's data in the wrong places only as a whole).
fn check_content(a: &Archive<'_>, offset: u64, buf: &[u8]) -> Result<(), DecodeError> {
    if offset == 0
        && buf.len() as u64 == a.header.original_size
        && checksum::xxh3_64(buf) != a.header.content_checksum
    {
        return Err(DecodeError::ContentChecksum);
    }
    Ok(())
}

/// [`read_range`] without cross-block sources: each block decoded straight into `buf` when
/// the range covers it, else into a scratch slot and the part asked for copied.
fn read_range_blocks(
    a: &Archive<'_>,
    offset: u64,
    buf: &mut [u8],
    s: &mut Scratch,
) -> Result<(), DecodeError> {
    let bs = a.header.block_size as u64;
    let end = offset + buf.len() as u64;
    let first = (offset / bs) as usize;
    let last = ((end - 1) / bs) as usize;
    s.size_for(bs as usize);
    let slot = &mut s.blocks[..bs as usize];
    let mut rest = buf;
    let mut pos = offset;
    for b in first..=last {
        let r = a.block_range(b);
        let len = (r.end - r.start) as usize;
        let take = (r.end.min(end) - pos) as usize;
        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(take);
        rest = tail;
        if take == len {
            decode_block(a, b, dst, &mut s.streams)?;
        } else {
            // partly read: the range's first or last block
            decode_block(a, b, &mut slot[..len], &mut s.streams)?;
            let at = (pos - r.start) as usize;
            dst.copy_from_slice(&slot[at..at + take]);
        }
        pos += take as u64;
    }
    Ok(())
}

/// Decodes block `b` (no cross-block sources) into `out`, exactly the block's length, and
/// verifies it against its checksum.
fn decode_block(
    a: &Archive<'_>,
    b: usize,
    out: &mut [u8],
    stream_bufs: &mut streams::Scratch,
) -> Result<(), DecodeError> {
    debug_assert!(!a.cross_block());
    let frame = block_frame(a, b, out.len(), a.block_range(b).start);
    streams::decode_archive_block(a, b, out, &frame, stream_bufs, true)
        .map_err(|st| block_error(a, b, st))?;
    verify_block(a, b, checksum::xxh3_64(out))
}

/// The lowest block that blocks `first..=last` of a cross-block archive read from,
/// transitively: a block copies only from blocks at or after its lowest source block and
/// before itself (FORMAT.md §3.3), so walking down from the last block finds it.
pub(super) fn lowest_source(a: &Archive<'_>, first: usize, last: usize) -> usize {
    let mut lowest = first;
    let mut b = last;
    loop {
        lowest = lowest.min(a.entries[b].lowest_source_block as usize);
        if b == 0 || b <= lowest {
            break;
        }
        b -= 1;
    }
    lowest
}

/// A range's span in a cross-block archive, `(lowest, last)`: from the lowest block its
/// blocks copy from (transitively, [`lowest_source`]) to its last block; `length` at least 1.
pub(super) fn span_of(a: &Archive<'_>, offset: u64, length: u64) -> (usize, usize) {
    let bs = a.header.block_size as u64;
    let first = (offset / bs) as usize;
    let last = ((offset + length - 1) / bs) as usize;
    (lowest_source(a, first, last), last)
}

/// Fills every `(offset, buf)` of `ranges` as [`read_range`] does, decoding each block that
/// any of them needs once (blocks shared by several ranges are decoded once per call), in
/// block order, on the calling thread. All ranges are checked before anything is decoded.
///
/// Errors: as [`read_range`]: [`DecodeError::Region`] for the first range (in `ranges`
/// order) past the end of the data; [`DecodeError::Block`] for the first damaged block in
/// block order. The buffers are then unspecified.
pub fn read_ranges(a: &Archive<'_>, ranges: &mut [(u64, &mut [u8])]) -> Result<(), DecodeError> {
    for (offset, buf) in ranges.iter() {
        range_end(a, *offset, buf.len())?;
    }
    if a.cross_block() {
        read_ranges_cross(a, ranges)?;
    } else {
        with_scratch(|s| read_ranges_blocks(a, ranges, s))?;
    }
    for (offset, buf) in ranges.iter() {
        check_content(a, *offset, buf)?;
    }
    Ok(())
}

/// Most bytes decoded into one buffer for ranges of a cross-block archive whose spans
/// ([`span_of`]) meet, here and in `SeekableArchive::write_ranges` (a single range's span
/// may be longer: it is decoded alone).
pub(super) const CROSS_JOIN_BYTES: u64 = 64 << 20;

/// [`read_ranges`] (and [`read_range`]) with cross-block sources: each range's span
/// ([`span_of`]), the spans sorted and those that meet joined up to [`CROSS_JOIN_BYTES`],
/// each joined span decoded once in block order into a new buffer and every range in it
/// copied out; a block of a joined span copies only from blocks in it, since it lies in one
/// of the joined spans, which hold their blocks' sources.
fn read_ranges_cross(a: &Archive<'_>, ranges: &mut [(u64, &mut [u8])]) -> Result<(), DecodeError> {
    let bs = a.header.block_size as u64;
    let mut spans: Vec<(usize, usize, usize)> = ranges
        .iter()
        .enumerate()
        .filter(|(_, (_, buf))| !buf.is_empty())
        .map(|(i, (offset, buf))| {
            let (lowest, last) = span_of(a, *offset, buf.len() as u64);
            (lowest, last, i)
        })
        .collect();
    spans.sort_unstable();
    let mut at = 0;
    while at < spans.len() {
        // join the spans that start at or before the joined span's end, within the bound
        let (lo, mut hi) = (spans[at].0, spans[at].1);
        let mut next = at + 1;
        while next < spans.len()
            && spans[next].0 <= hi + 1
            && (spans[next].1.max(hi) + 1 - lo) as u64 * bs <= CROSS_JOIN_BYTES
        {
            hi = hi.max(spans[next].1);
            next += 1;
        }
        let base = lo as u64 * bs;
        let span_end = ((hi as u64 + 1) * bs).min(a.header.original_size);
        let mut span = zeroed_output(span_end - base)?;
        for b in lo..=hi {
            super::decode_block_at(a, b, &mut span, base)?;
        }
        for &(_, _, i) in &spans[at..next] {
            let (offset, buf) = &mut ranges[i];
            let from = (*offset - base) as usize;
            let n = buf.len();
            buf.copy_from_slice(&span[from..from + n]);
        }
        at = next;
    }
    Ok(())
}

/// [`read_ranges`] without cross-block sources: the distinct blocks in order, each decoded
/// once into a scratch slot and copied to every range that needs part of it.
fn read_ranges_blocks(
    a: &Archive<'_>,
    ranges: &mut [(u64, &mut [u8])],
    s: &mut Scratch,
) -> Result<(), DecodeError> {
    let bs = a.header.block_size as u64;
    s.pairs.clear();
    for (i, (offset, buf)) in ranges.iter().enumerate() {
        if !buf.is_empty() {
            let end = *offset + buf.len() as u64;
            let (first, last) = ((*offset / bs) as usize, ((end - 1) / bs) as usize);
            s.pairs.extend((first..=last).map(|b| (b, i)));
        }
    }
    s.pairs.sort_unstable();
    s.size_for(bs as usize);
    let Scratch {
        streams: stream_bufs,
        blocks: slots,
        pairs,
    } = s;
    let mut decoded = None;
    for &(b, i) in pairs.iter() {
        let r = a.block_range(b);
        let block = &mut slots[..(r.end - r.start) as usize];
        if decoded != Some(b) {
            decode_block(a, b, block, stream_bufs)?;
            decoded = Some(b);
        }
        let (offset, buf) = &mut ranges[i];
        let (lo, hi) = (
            (*offset).max(r.start),
            (*offset + buf.len() as u64).min(r.end),
        );
        buf[(lo - *offset) as usize..(hi - *offset) as usize]
            .copy_from_slice(&block[(lo - r.start) as usize..(hi - r.start) as usize]);
    }
    Ok(())
}
