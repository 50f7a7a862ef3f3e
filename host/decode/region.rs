//! Region reads: original-byte ranges decoded into a caller's buffer, one thread, decoding
//! only the blocks a range lies in and verifying every one of them (FORMAT.md §6).
//!
//! A block is the unit of verification: its checksum covers all its bytes, so a read that
//! needs a few bytes of a block still decodes the whole block (a partial decode could not be
//! verified). What a read saves is everything else: the decode tables are expanded once per
//! archive ([`Archive::table`]), the stream buffers and the buffers of partly read blocks are
//! per-thread scratch kept between reads, blocks wholly inside the range decode straight into
//! the caller's buffer, and the blocks of a read of several blocks are entropy-decoded
//! together ([`streams::decode_streams_list`]) so that their rANS chains overlap.
//!
//! Archives whose window crosses blocks (FORMAT.md §3.3) decode the blocks a range needs and
//! every block those copy from, in order, into a buffer allocated for the read.

use super::{block_error, block_frame, checksum, lz, streams, verify_block, zeroed_output};
use crate::error::DecodeError;
use crate::format::Archive;
use std::cell::RefCell;
use streams::GROUP_BLOCKS;

/// Per-thread buffers of region reads, kept between reads.
#[derive(Default)]
struct Scratch {
    /// The decoded streams of up to [`GROUP_BLOCKS`] blocks.
    streams: Vec<streams::Scratch>,
    /// Whole decoded blocks that a read needs only part of (one slot per block of a group).
    blocks: Vec<u8>,
    /// A batch's (block, request) pairs.
    pairs: Vec<(usize, usize)>,
}

impl Scratch {
    /// Makes room for the streams of `group` blocks and `slots` blocks of `block_size` bytes.
    fn size_for(&mut self, block_size: usize, group: usize, slots: usize) {
        if self.streams.len() < group {
            self.streams.resize_with(group, Default::default);
        }
        if self.blocks.len() < slots * block_size {
            self.blocks.resize(slots * block_size, 0);
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

/// Blocks a read of [`read_range`] decodes together: as many as the full decode groups
/// ([`streams::group_blocks`]: at most [`GROUP_BLOCKS`] and 128 KiB of output).
fn read_group(a: &Archive<'_>) -> usize {
    streams::group_blocks(a.header.block_size as usize)
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
    let end = range_end(a, offset, buf.len())?;
    if buf.is_empty() {
        return Ok(());
    }
    if a.cross_block() {
        read_range_cross(a, offset, end, buf)?;
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

/// [`read_range`] without cross-block sources: groups of consecutive blocks, each block
/// decoded straight into `buf` when the range covers it, else into a scratch slot and copied.
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
    // partly read blocks are at most the first and the last
    let group = read_group(a);
    s.size_for(bs as usize, group, 2);
    let Scratch {
        streams: stream_bufs,
        blocks: slots,
        ..
    } = s;
    let (mut head_slot, mut tail_slot) = slots.split_at_mut(bs as usize);
    let mut rest = buf;
    let mut pos = offset;
    let mut b = first;
    while b <= last {
        let n = group.min(last - b + 1);
        let blocks: [usize; GROUP_BLOCKS] = std::array::from_fn(|j| b + j);
        let mut outs: [&mut [u8]; GROUP_BLOCKS] = Default::default();
        // (destination in `buf`, offset in the block) of the partly read blocks
        let mut partial: [Option<(&mut [u8], usize)>; GROUP_BLOCKS] = Default::default();
        for j in 0..n {
            let r = a.block_range(b + j);
            let take = (r.end.min(end) - pos) as usize;
            let (dst, tail) = std::mem::take(&mut rest).split_at_mut(take);
            rest = tail;
            if pos == r.start && take as u64 == r.end - r.start {
                outs[j] = dst;
            } else {
                let slot = if b + j == first {
                    std::mem::take(&mut head_slot)
                } else {
                    std::mem::take(&mut tail_slot)
                };
                outs[j] = &mut slot[..(r.end - r.start) as usize];
                partial[j] = Some((dst, (pos - r.start) as usize));
            }
            pos += take as u64;
        }
        decode_blocks(a, &blocks[..n], &mut outs[..n], &mut stream_bufs[..])?;
        for (out, p) in outs.iter().zip(partial.iter_mut()).take(n) {
            if let Some((dst, at)) = p.take() {
                let len = dst.len();
                dst.copy_from_slice(&out[at..at + len]);
            }
        }
        b += n;
    }
    Ok(())
}

/// Fewest blocks whose streams [`decode_blocks`] entropy-decodes together: for one to three
/// blocks, decoding them one after the other measured as fast or faster (the group's
/// bookkeeping outweighs the overlap of their rANS chains, and blocks with two-bit literals
/// have little to overlap).
const GROUP_MIN: usize = 4;

/// Decodes blocks `blocks` (no cross-block sources; at most [`GROUP_BLOCKS`]), block
/// `blocks[j]` into `outs[j]` (exactly the block's length), their streams entropy-decoded
/// together from [`GROUP_MIN`] blocks on, and verifies each against its checksum; stops at
/// the first failing block in the order given.
fn decode_blocks(
    a: &Archive<'_>,
    blocks: &[usize],
    outs: &mut [&mut [u8]],
    stream_bufs: &mut [streams::Scratch],
) -> Result<(), DecodeError> {
    let n = blocks.len();
    debug_assert!(!a.cross_block() && n <= GROUP_BLOCKS && outs.len() == n);
    if n < GROUP_MIN {
        for (out, &b) in outs.iter_mut().zip(blocks) {
            let out = &mut **out;
            let frame = block_frame(a, b, out.len(), a.block_range(b).start);
            streams::decode_archive_block(a, b, out, &frame, &mut stream_bufs[0])
                .map_err(|st| block_error(a, b, st))?;
            verify_block(a, b, checksum::xxh3_64(out))?;
        }
        return Ok(());
    }
    let status = streams::decode_streams_list(a, blocks, &mut stream_bufs[..n]);
    for (j, out) in outs.iter_mut().enumerate() {
        let b = blocks[j];
        let out = &mut **out;
        let frame = block_frame(a, b, out.len(), a.block_range(b).start);
        status[j]
            .and_then(|()| {
                lz::decode_block_fast(&streams::padded_streams(a, b, &stream_bufs[j]), out, &frame)
            })
            .map_err(|st| block_error(a, b, st))?;
        verify_block(a, b, checksum::xxh3_64(out))?;
    }
    Ok(())
}

/// [`read_range`] with cross-block sources: the span from the lowest block the range's
/// blocks copy from (transitively) to its last block, decoded in order into a new buffer.
fn read_range_cross(
    a: &Archive<'_>,
    offset: u64,
    end: u64,
    buf: &mut [u8],
) -> Result<(), DecodeError> {
    let bs = a.header.block_size as u64;
    let first = (offset / bs) as usize;
    let last = ((end - 1) / bs) as usize;
    // a block copies only from blocks at or after its lowest source block and before itself
    // (FORMAT.md §3.3), so walking down from the last block finds the lowest one
    let mut lowest = first;
    let mut b = last;
    loop {
        lowest = lowest.min(a.entries[b].lowest_source_block as usize);
        if b == 0 || b <= lowest {
            break;
        }
        b -= 1;
    }
    let base = lowest as u64 * bs;
    let span_end = ((last as u64 + 1) * bs).min(a.header.original_size);
    let mut span = zeroed_output(span_end - base)?;
    for b in lowest..=last {
        super::decode_block_at(a, b, &mut span, base)?;
    }
    buf.copy_from_slice(&span[(offset - base) as usize..(end - base) as usize]);
    Ok(())
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
        for (offset, buf) in ranges.iter_mut() {
            read_range(a, *offset, buf)?;
        }
        return Ok(());
    }
    with_scratch(|s| read_ranges_blocks(a, ranges, s))?;
    for (offset, buf) in ranges.iter() {
        check_content(a, *offset, buf)?;
    }
    Ok(())
}

/// [`read_ranges`] without cross-block sources: the distinct blocks in order, in groups,
/// each decoded into a scratch slot and copied to every range that needs part of it.
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
    let group = read_group(a);
    s.size_for(bs as usize, group, group);
    let Scratch {
        streams: stream_bufs,
        blocks: slots,
        pairs,
    } = s;
    let mut at = 0;
    while at < pairs.len() {
        // the next distinct blocks, up to a group of them
        let mut blocks = [0usize; GROUP_BLOCKS];
        let mut n = 0;
        let mut stop = at;
        while stop < pairs.len() {
            let b = pairs[stop].0;
            if n == 0 || blocks[n - 1] != b {
                if n == group {
                    break;
                }
                blocks[n] = b;
                n += 1;
            }
            stop += 1;
        }
        let mut outs: [&mut [u8]; GROUP_BLOCKS] = Default::default();
        for ((out, slot), &b) in outs
            .iter_mut()
            .zip(slots.chunks_mut(bs as usize))
            .zip(&blocks[..n])
        {
            let r = a.block_range(b);
            *out = &mut slot[..(r.end - r.start) as usize];
        }
        decode_blocks(a, &blocks[..n], &mut outs[..n], &mut stream_bufs[..])?;
        let mut j = 0;
        for &(b, i) in &pairs[at..stop] {
            while blocks[j] != b {
                j += 1;
            }
            let r = a.block_range(b);
            let (offset, buf) = &mut ranges[i];
            let (lo, hi) = (
                (*offset).max(r.start),
                (*offset + buf.len() as u64).min(r.end),
            );
            buf[(lo - *offset) as usize..(hi - *offset) as usize]
                .copy_from_slice(&outs[j][(lo - r.start) as usize..(hi - r.start) as usize]);
        }
        at = stop;
    }
    Ok(())
}
