//! The CPU decoder: whole archives (multi-threaded over blocks, in dependency order when a
//! window crosses blocks) and byte regions (decoding only the blocks needed).
//!
//! Every block is entropy-decoded, match-decoded and checked against its position-bound
//! checksum from the block table (FORMAT.md §6); a whole-file decode also checks the content
//! checksum. Any broken rule is a [`DecodeError`] naming the block.
//!
//! Checksums go through [`checksum`]: a whole-file decode without cross-block sources hashes
//! each output byte once, right after its block is decoded (the per-KiB sums serve the block
//! checksum and, folded in order, the content checksum).

pub mod checksum;
pub mod lines;
pub mod lz;
pub mod rans;
pub mod region;
pub mod stream;
pub mod streams;

use crate::device::format::*;
use crate::device::lz::{BlockFrame, BlockStreams};
use crate::device::status::Status;
use crate::error::DecodeError;
use crate::format::Archive;
use checksum::{KibSums, KIB};
use rayon::prelude::*;
use std::cell::RefCell;

thread_local! {
    static SCRATCH: RefCell<[Vec<u8>; STREAM_COUNT]> = RefCell::new(Default::default());
    static FAST_SCRATCH: RefCell<streams::Scratch> = RefCell::new(streams::Scratch::default());
    static GROUP_SCRATCH: RefCell<Vec<streams::Scratch>> = const { RefCell::new(Vec::new()) };
}

/// Entropy-decodes the four streams of block `b` into `bufs` with the reference rANS decoder.
pub fn decode_streams(
    a: &Archive<'_>,
    b: usize,
    bufs: &mut [Vec<u8>; STREAM_COUNT],
) -> Result<(), Status> {
    let e = &a.entries[b];
    let slices = a.slices(b);
    for k in 0..STREAM_COUNT {
        let buf = &mut bufs[k];
        buf.clear();
        match e.lanes[k] {
            LANES_RAW => buf.extend_from_slice(slices[k]),
            // FORMAT.md §5.7 (Archive::parse allows it for the literals only)
            LANES_TWO_BIT => {
                buf.resize(e.decoded_len[k] as usize, 0);
                crate::device::two_bit::decode(slices[k], buf)?;
            }
            // FORMAT.md §5.8 (Archive::parse allows it for the literals only)
            LANES_TWO_BIT_RUNS => {
                buf.resize(e.decoded_len[k] as usize, 0);
                crate::device::two_bit::decode_runs(slices[k], buf)?;
            }
            lanes => {
                buf.resize(e.decoded_len[k] as usize, 0);
                // Archive::parse guarantees a table for every rANS slice
                let t = a.table(b, k).ok_or(Status::SliceMode)?;
                crate::device::rans::decode_slice(slices[k], lanes as usize, t.get(), buf)?;
            }
        }
    }
    Ok(())
}

/// Where block `b` goes in an output buffer whose index 0 is original byte `base`.
fn block_frame(a: &Archive<'_>, b: usize, out_len: usize, base: u64) -> BlockFrame {
    let r = a.block_range(b);
    let lowest = a.entries[b].lowest_source_block as u64 * a.header.block_size as u64;
    debug_assert!(base <= lowest && r.end - base <= out_len as u64);
    BlockFrame {
        dst_start: (r.start - base) as usize,
        dst_end: (r.end - base) as usize,
        src_floor: (lowest - base) as usize,
        window: a.header.window,
        match_base: a.header.match_base(),
    }
}

fn block_error(a: &Archive<'_>, b: usize, status: Status) -> DecodeError {
    let r = a.block_range(b);
    DecodeError::Block {
        block: b as u32,
        start: r.start,
        end: r.end,
        status,
    }
}

/// Checks `hash`, the XXH3-64 of the decoded bytes of block `b`, against the block table
/// (whose checksums `Archive::parse` unpacked for their own index, so a block's bytes pass
/// only at the position it was written for, FORMAT.md §6).
fn verify_block(a: &Archive<'_>, b: usize, hash: u64) -> Result<(), DecodeError> {
    if hash != a.entries[b].checksum {
        return Err(block_error(a, b, Status::Checksum));
    }
    Ok(())
}

/// Decodes block `b` into `out`, where `out[0]` is original byte `base`; `out` must cover
/// the block and, below it, everything from its lowest source block on (already decoded).
///
/// Uses the fast decoder of [`streams`]; [`decode_block_reference`] gives the same
/// result and the same status with the device crate's reference decoders.
pub fn decode_block_at(
    a: &Archive<'_>,
    b: usize,
    out: &mut [u8],
    base: u64,
) -> Result<(), DecodeError> {
    let frame = block_frame(a, b, out.len(), base);
    FAST_SCRATCH
        .with(|s| streams::decode_archive_block(a, b, out, &frame, &mut s.borrow_mut(), false))
        .map_err(|st| block_error(a, b, st))?;
    verify_block(
        a,
        b,
        checksum::xxh3_64(&out[frame.dst_start..frame.dst_end]),
    )
}

/// Decodes the consecutive blocks that `out` holds, from block `first` on (at most
/// [`streams::group_blocks`]; `out[0]` is the first byte of block `first`), for archives without
/// cross-block sources. Same outcome as [`decode_block_at`] on each block in index order
/// (the first failing block's error), but the blocks' streams are entropy-decoded together
/// ([`streams::decode_streams_group`]).
///
/// Leaves in `sums[k]` the [`checksum::kib_sums`] of every whole KiB `k` of `out` (the block
/// checksums are computed from them, so the bytes are hashed once while still in cache);
/// `sums` must have `out.len().div_ceil(KIB)` entries.
fn decode_group_at(
    a: &Archive<'_>,
    first: usize,
    out: &mut [u8],
    sums: &mut [KibSums],
) -> Result<(), DecodeError> {
    debug_assert!(!a.cross_block());
    debug_assert_eq!(sums.len(), out.len().div_ceil(KIB));
    let bs = a.header.block_size as usize;
    let n = out.len().div_ceil(bs);
    let base = first as u64 * bs as u64;
    GROUP_SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < n {
            s.resize_with(n, Default::default);
        }
        let status = streams::decode_streams_group(a, first, &mut s[..n]);
        for (j, st) in status.into_iter().enumerate().take(n) {
            let b = first + j;
            let frame = block_frame(a, b, out.len(), base);
            st.and_then(|()| {
                lines::decode_block_fast(a, b, &streams::padded_streams(a, b, &s[j]), out, &frame)
            })
            .map_err(|st| block_error(a, b, st))?;
            // block sizes are multiples of KIB (FORMAT.md §2), so blocks start on a KiB
            let bytes = &out[frame.dst_start..frame.dst_end];
            let kibs = &mut sums[frame.dst_start / KIB..][..bytes.len() / KIB];
            checksum::kib_sums(bytes, kibs);
            verify_block(a, b, checksum::hash_with_sums(bytes, kibs))?;
        }
        Ok(())
    })
}

/// [`decode_block_at`] through the reference path: [`decode_streams`] with
/// `aceapex_device::rans::decode_slice`, then `aceapex_device::lz::decode_block` (the code the
/// GPU kernels share). Slower; kept for differential tests and as the definition of "correct".
pub fn decode_block_reference(
    a: &Archive<'_>,
    b: usize,
    out: &mut [u8],
    base: u64,
) -> Result<(), DecodeError> {
    let frame = block_frame(a, b, out.len(), base);
    SCRATCH
        .with(|s| {
            let mut bufs = s.borrow_mut();
            decode_streams(a, b, &mut bufs)?;
            let streams = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
            lines::decode_block_reference(a, b, streams, out, &frame)
        })
        .map_err(|st| block_error(a, b, st))?;
    let bytes = &out[frame.dst_start..frame.dst_end];
    verify_block(a, b, xxhash_rust::xxh3::xxh3_64(bytes))
}

/// Splits blocks into runs that decode independently: a run starts at every block whose
/// lowest source block is itself, and a block's sources never reach before its run.
fn independent_runs(a: &Archive<'_>) -> Result<Vec<std::ops::Range<usize>>, DecodeError> {
    let mut runs = Vec::new();
    let mut start = 0;
    for (i, e) in a.entries.iter().enumerate() {
        let lowest = e.lowest_source_block as usize;
        if lowest == i && i > start {
            runs.push(start..i);
            start = i;
        } else if lowest < start {
            // sources reach into the previous run: merge back to that run's start
            while let Some(prev) = runs.last() {
                if prev.start <= lowest {
                    start = prev.start;
                    runs.pop();
                    break;
                }
                start = prev.start;
                runs.pop();
            }
        }
    }
    if !a.entries.is_empty() {
        runs.push(start..a.entries.len());
    }
    Ok(runs)
}

/// Output bytes per window of [`decompress_into`] (rounded to whole groups of blocks).
const WINDOW_BYTES: usize = 64 << 20;

/// Decodes the whole archive into `out` (exactly `original_size` bytes), verifying every
/// block checksum and the content checksum. Uses the current rayon pool.
pub fn decompress_into(
    a: &Archive<'_>,
    out: &mut [u8],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DecodeError> {
    decompress_windows(a, out, progress, WINDOW_BYTES)
}

/// [`decompress_into`] with windows of `window_bytes` (tests use small ones).
fn decompress_windows(
    a: &Archive<'_>,
    out: &mut [u8],
    progress: &(dyn Fn(u64) + Sync),
    window_bytes: usize,
) -> Result<(), DecodeError> {
    assert_eq!(
        out.len() as u64,
        a.header.original_size,
        "output buffer must hold the original size"
    );
    let bs = a.header.block_size as usize;
    let content = if !a.cross_block() {
        let group = streams::group_blocks(bs);
        let group_bytes = bs * group;
        // windows of whole groups: their blocks decode in parallel, then the window's KiB sums
        // are folded into the content hash in order (so the sums never need more than a
        // window's worth of memory, 1/16 of it)
        let window = group_bytes * (window_bytes / group_bytes).max(1);
        let mut sums = vec![[0u64; 8]; window.min(out.len()).div_ceil(KIB)];
        let mut content = checksum::Folder::new(out.len());
        for (w, win) in out.chunks_mut(window).enumerate() {
            let sums = &mut sums[..win.len().div_ceil(KIB)];
            let first = w * (window / bs);
            // the lowest failing group's error (a group names its lowest failing block), as
            // a decode in block order would report, whichever thread fails first
            let failed = win
                .par_chunks_mut(group_bytes)
                .zip(sums.par_chunks_mut(group_bytes / KIB))
                .enumerate()
                .find_map_first(|(g, (chunk, s))| {
                    let r = decode_group_at(a, first + g * group, chunk, s);
                    progress(chunk.len() as u64);
                    r.err()
                });
            if let Some(e) = failed {
                return Err(e);
            }
            content.absorb(w * (window / KIB), sums);
        }
        content.finish(out)
    } else {
        let runs = independent_runs(a)?;
        // carve `out` into the runs' disjoint byte ranges
        let mut pieces = Vec::with_capacity(runs.len());
        let mut rest = &mut *out;
        let mut consumed = 0usize;
        for r in &runs {
            let end = (r.end * bs).min(a.header.original_size as usize);
            let (piece, tail) = rest.split_at_mut(end - consumed);
            pieces.push((r.clone(), piece, consumed as u64));
            consumed = end;
            rest = tail;
        }
        let failed = pieces.into_par_iter().find_map_first(|(r, piece, base)| {
            for b in r {
                if let Err(e) = decode_block_at(a, b, piece, base) {
                    return Some(e);
                }
                let range = a.block_range(b);
                progress(range.end - range.start);
            }
            None
        });
        if let Some(e) = failed {
            return Err(e);
        }
        checksum::xxh3_64(out)
    };
    if content != a.header.content_checksum {
        return Err(DecodeError::ContentChecksum);
    }
    Ok(())
}

/// A zeroed output buffer of `bytes`, or [`DecodeError::Alloc`] when it cannot be had (an
/// archive may legitimately declare far more output than its own size: fail with an error,
/// never abort the process).
///
/// The memory comes zeroed from the allocator (`alloc_zeroed`: for large buffers, pages the
/// kernel maps in only when written), so a hostile archive that declares gigabytes and fails
/// in its first block costs address space, not memory or time.
pub fn zeroed_output(bytes: u64) -> Result<Vec<u8>, DecodeError> {
    let n = usize::try_from(bytes).map_err(|_| DecodeError::Alloc { bytes })?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).map_err(|_| DecodeError::Alloc { bytes })?;
    // SAFETY: `layout` has a nonzero size (n > 0).
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(DecodeError::Alloc { bytes });
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n` bytes of align 1,
    // which is what a `Vec<u8>` of capacity `n` deallocates; all `n` bytes are initialised
    // (zeroed), so length `n` is valid.
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// Decodes the whole archive into a new vector. See [`decompress_into`].
pub fn decompress(a: &Archive<'_>) -> Result<Vec<u8>, DecodeError> {
    let mut out = zeroed_output(a.header.original_size)?;
    decompress_into(a, &mut out, &|_| {})?;
    Ok(out)
}

/// Decodes original bytes `offset..offset+length` into a new vector on the calling thread,
/// decoding only the blocks needed (and, with a cross-block window, the blocks they read
/// from): [`region::read_range`]. Every decoded block is verified, and a range that is the
/// whole original data also against the content checksum (FORMAT.md §6).
pub fn extract(a: &Archive<'_>, offset: u64, length: u64) -> Result<Vec<u8>, DecodeError> {
    let size = a.header.original_size;
    let region_error = DecodeError::Region {
        offset,
        length,
        size,
    };
    if offset.checked_add(length).is_none_or(|e| e > size) {
        return Err(region_error);
    }
    let mut buf = zeroed_output(length)?;
    region::read_range(a, offset, &mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Settings;
    use crate::gpu::tokens::Rng;

    /// Small windows (down to one group) and sizes around the KiB and XXH3 edges: the folded
    /// content hash is right, and a wrong content checksum is still caught.
    #[test]
    fn windows_fold_the_content_hash() {
        let mut r = Rng::new(0x0DDB_1A5E_5BAD_5EED);
        for n in [
            0, 1, 240, 241, 1023, 1024, 1025, 4096, 4097, 20_000, 70_001, 262_144,
        ] {
            let data: Vec<u8> = (0..n).map(|_| b"ACGT"[r.below(4) as usize]).collect();
            let opts = Settings {
                block_size: 4096,
                ..Default::default()
            };
            let packed = crate::encode::compress_settings(&data, &opts, &|_| {}).unwrap();
            let mut a = Archive::parse(&packed).unwrap();
            for window in [1, 16 << 10, 48 << 10, WINDOW_BYTES] {
                let mut out = vec![0u8; n];
                decompress_windows(&a, &mut out, &|_| {}, window).unwrap();
                assert!(out == data, "size {n}, window {window}");
            }
            // a wrong content checksum (the parsed header's, past the meta checksum)
            a.header.content_checksum ^= 1 << r.below(64);
            let mut out = vec![0u8; n];
            let e = decompress_windows(&a, &mut out, &|_| {}, 16 << 10);
            assert!(
                matches!(e, Err(DecodeError::ContentChecksum)),
                "size {n}: {e:?}"
            );
        }
    }

    /// `extract` of the whole original data checks the content checksum (its blocks could be
    /// valid blocks in the wrong places); a shorter range cannot, and decodes.
    #[test]
    fn extract_of_everything_checks_the_content() {
        let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let opts = Settings {
            block_size: 4096,
            ..Default::default()
        };
        let packed = crate::encode::compress_settings(&data, &opts, &|_| {}).unwrap();
        let mut a = Archive::parse(&packed).unwrap();
        let n = data.len() as u64;
        assert!(extract(&a, 0, n).unwrap() == data);
        a.header.content_checksum ^= 1 << 17;
        assert!(matches!(
            extract(&a, 0, n),
            Err(DecodeError::ContentChecksum)
        ));
        assert!(extract(&a, 0, n - 1).unwrap() == data[..n as usize - 1]);
        assert!(extract(&a, 1, n - 1).unwrap() == data[1..]);
    }
}
