//! GPU decode of an archive in pieces, its output streamed to the host: for archives whose
//! output (with the archive and the decode's scratch) does not fit the device's free memory,
//! or whose output should not be held whole in host memory.
//!
//! The blocks are split into pieces of whole table groups (FORMAT.md §5.1), each decoded as
//! an archive of its own (`Archive::piece`) by the dense decoder. Two
//! streams overlap the work: piece k+1 is uploaded on a second stream (its data section from
//! one of two page-locked staging buffers) while piece k decodes on the GPU's stream; piece
//! k's output comes back into one of two page-locked output buffers, and while the host
//! checks it (every block's status and XXH3-64, FORMAT.md §6) and writes it, in order, piece
//! k+1 decodes. The content checksum is folded on the host from the same per-KiB sums as the
//! blocks' and checked after the last piece: as with the CPU streaming decoder
//! ([`crate::decompress_to`]), a mismatch is an error after all the output was written.
//!
//! Device memory: two pieces at a time, each its data section, block table, expanded decode
//! tables, decoded-stream scratch and output ([`piece_device_bytes`]); pieces are sized so
//! that two fit the free memory less a margin, and hold at most [`MAX_PIECE_OUTPUT`] bytes of
//! output. Host memory: four page-locked buffers (two of the largest piece's data section,
//! two of its output), the archive's metadata, and the per-KiB sums of 64 MiB of output.
//!
//! Archives whose window crosses blocks (FORMAT.md §3.3) are refused
//! ([`GpuError::Unsupported`], [`CROSS_BLOCK_PIECES`]): a piece's matches may read any
//! earlier output within the window, so a piece would have to carry the decoded bytes of
//! the pieces before it and the wavefront decoder would have to start past them; callers
//! decode those with the CPU streaming decoder instead.

use super::decoder::{lowest_bad_block, GpuArchive};
use super::{kernels, schedule, Ctx, Gpu, GpuError};
use crate::decode::checksum::{Folder, KibSums, KIB};
use crate::device::format::{BlockEntry, DecodeTable, STREAM_COUNT};
use crate::device::status::Status;
use crate::error::{DecodeError, Error};
use crate::format::Archive;
use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};
use std::io::Write;
use std::ops::Range;

/// Output bytes of a piece, at most: enough blocks to fill the GPU many times over, and a
/// bound on the page-locked host memory (two output buffers of this size).
pub const MAX_PIECE_OUTPUT: u64 = 256 << 20;

/// Device memory left free, at least: the larger of this and an eighth of the free memory
/// (the driver, the kernels' local memory and other processes' allocations).
const MARGIN_BYTES: u64 = 512 << 20;

/// Output bytes whose per-KiB sums the host check holds at once.
const WINDOW_BYTES: usize = 64 << 20;

/// Why an archive whose window crosses blocks is not decoded in pieces.
pub const CROSS_BLOCK_PIECES: &str = "an archive whose window crosses blocks is not decoded in \
     pieces on the GPU (a piece's matches may read the pieces before it): decode it on the \
     CPU, which streams it";

/// How a piecewise decode splits the blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PiecePlan {
    /// Pieces as large as the device's free memory allows for two at once, and at most
    /// [`MAX_PIECE_OUTPUT`] bytes of output each.
    #[default]
    Auto,
    /// `n` pieces of as equal a number of table groups as the archive allows (fewer where
    /// it has fewer groups), whatever the free memory: for tests.
    Count(u32),
}

/// What a piecewise decode did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PieceStats {
    /// Original bytes written.
    pub bytes: u64,
    /// Pieces decoded.
    pub pieces: u32,
    /// Output bytes of the largest piece.
    pub max_piece_output: u64,
    /// Device bytes one piece of the largest estimate needs ([`piece_device_bytes`]).
    pub max_piece_device_bytes: u64,
}

/// Device bytes a piece of blocks `blocks` of `a` needs on a GPU of `sms` multiprocessors,
/// estimated from its block table: the data section (padded), the block table and slice
/// offsets, the expanded decode tables of its groups, the decoded-stream scratch of the dense
/// pipe, the output (`piece_bytes_by_block`), and the lane kernel's scratch
/// ([`lane_scratch_bytes`]).
pub fn piece_device_bytes(a: &Archive<'_>, blocks: Range<usize>, sms: u32) -> u64 {
    piece_bytes_by_block(a, blocks.clone()) + lane_scratch_bytes(a, blocks.len(), sms)
}

/// [`piece_device_bytes`] less the lane kernel's scratch: a sum over the piece's blocks and
/// table groups, so that the sum over two runs of whole groups is that of their union.
fn piece_bytes_by_block(a: &Archive<'_>, blocks: Range<usize>) -> u64 {
    let gb = a.header.group_blocks as usize;
    let entries = &a.entries[blocks.clone()];
    let data: u64 = entries
        .iter()
        .flat_map(|e| e.stored_len)
        .map(u64::from)
        .sum();
    let decoded: u64 = entries
        .iter()
        .flat_map(|e| e.decoded_len)
        .map(|l| (l as u64 + crate::device::rans::KERNEL_SLOT_SLACK).div_ceil(16) * 16)
        .sum();
    let groups = &a.tables[blocks.start / gb..blocks.end.div_ceil(gb)];
    let n_tables: u64 = groups
        .iter()
        .flatten()
        .flatten()
        .map(|t| 1 + (t.has_context() || t.is_packed()) as u64)
        .sum();
    let n = entries.len() as u64;
    // entry, slice offset, decoded-stream offsets, status word, block orders, queue words
    let per_block = std::mem::size_of::<BlockEntry>() as u64 + 8 + 8 * STREAM_COUNT as u64 + 32;
    // (16: the data section's padding)
    data.div_ceil(16) * 16
        + 16
        + decoded
        + out_len(a, blocks)
        + n * per_block
        + n_tables * std::mem::size_of::<DecodeTable>() as u64
        + (groups.len() * STREAM_COUNT) as u64 * 4
}

/// Device bytes of the lane kernel's per-warp scratch for a piece of `n_blocks` blocks of
/// `a` on a GPU of `sms` multiprocessors (allocated where a block may fall back to it).
pub fn lane_scratch_bytes(a: &Archive<'_>, n_blocks: usize, sms: u32) -> u64 {
    let bs = a.header.block_size;
    let warps = schedule::lane_grid(n_blocks as u32, bs, true, sms) as u64
        * (schedule::LANE_THREADS / 32) as u64;
    warps * STREAM_COUNT as u64 * (bs as u64 + 1)
}

/// Device bytes one piece may take when `free` bytes are free: two pieces are resident at
/// once (one decoding, the next uploaded), under a margin of the larger of
/// `MARGIN_BYTES` and an eighth of `free`.
pub fn piece_budget(free: u64) -> u64 {
    free.saturating_sub(MARGIN_BYTES.max(free / 8)) / 2
}

/// The pieces of `a` (block ranges of whole table groups, in order, covering every block;
/// none for an empty archive) under `plan`, each taking at most `budget` device bytes on a
/// GPU of `sms` multiprocessors ([`piece_device_bytes`]) under [`PiecePlan::Auto`].
///
/// Errors: [`GpuError::Unsupported`] when one table group alone needs more than `budget`.
pub fn plan_pieces(
    a: &Archive<'_>,
    plan: PiecePlan,
    budget: u64,
    sms: u32,
) -> Result<Vec<Range<usize>>, GpuError> {
    let gb = a.header.group_blocks as usize;
    let n_blocks = a.entries.len();
    let n_groups = n_blocks.div_ceil(gb);
    let blocks = |g: Range<usize>| g.start * gb..(g.end * gb).min(n_blocks);
    match plan {
        PiecePlan::Count(n) => {
            let n = (n.max(1) as usize).min(n_groups);
            Ok((0..n)
                .map(|i| blocks(i * n_groups / n..(i + 1) * n_groups / n))
                .collect())
        }
        PiecePlan::Auto => {
            let mut pieces = Vec::new();
            let mut first = 0usize;
            while first < n_groups {
                // the most groups that fit, grown one group at a time (the by-block part of
                // the estimate adds up over groups, so the search stays linear)
                let (mut end, mut by_block, mut output) = (first, 0u64, 0u64);
                while end < n_groups {
                    let g = blocks(end..end + 1);
                    let b = by_block + piece_bytes_by_block(a, g.clone());
                    let o = output + out_len(a, g.clone());
                    let bytes = b + lane_scratch_bytes(a, g.end - first * gb, sms);
                    if bytes > budget || (end > first && o > MAX_PIECE_OUTPUT) {
                        if end == first {
                            return Err(GpuError::Unsupported(format!(
                                "a table group of this archive needs {} MiB of device \
                                 memory, and {} MiB are free for each of the two pieces in \
                                 flight",
                                bytes.div_ceil(1 << 20),
                                budget >> 20
                            )));
                        }
                        break;
                    }
                    (by_block, output) = (b, o);
                    end += 1;
                }
                pieces.push(blocks(first..end));
                first = end;
            }
            Ok(pieces)
        }
    }
}

/// Original bytes of blocks `blocks` of `a`.
fn out_len(a: &Archive<'_>, blocks: Range<usize>) -> u64 {
    let bs = a.header.block_size as u64;
    let size = a.header.original_size;
    (blocks.end as u64 * bs).min(size) - (blocks.start as u64 * bs).min(size)
}

/// Stored bytes of blocks `blocks` of `a` in its data section.
fn data_range(a: &Archive<'_>, blocks: Range<usize>) -> Range<usize> {
    let at = |b: usize| {
        a.block_offsets
            .get(b)
            .copied()
            .unwrap_or(a.data.len() as u64) as usize
    };
    at(blocks.start)..at(blocks.end)
}

/// Decodes the archive `a` on `gpu` in pieces ([`PiecePlan`]) and writes the original to
/// `out`, in order, each piece once every one of its blocks passed its status and checksum;
/// returns what it did ([`PieceStats`]; `bytes` is the header's `original_size`).
///
/// Errors: [`GpuError::Unsupported`] for an archive whose window crosses blocks
/// ([`CROSS_BLOCK_PIECES`]) or a table group larger than the free device memory allows;
/// [`Error::Decode`] with [`DecodeError::Block`] naming the first damaged block (nothing of
/// its piece is written), or [`DecodeError::ContentChecksum`] after all was written;
/// [`Error::Write`] when `out` fails; [`Error::Gpu`] for a CUDA failure. On any error the
/// bytes already written are not the original and must be discarded.
pub fn decompress_to<W: Write>(
    gpu: &Gpu,
    a: &Archive<'_>,
    out: W,
    plan: PiecePlan,
) -> Result<PieceStats, Error> {
    decompress_to_staged(gpu, a, out, plan, &mut Staging::default())
}

/// [`decompress_to`] with the page-locked staging buffers of `staging`, grown as the pieces
/// need and kept for the next decode (page-locking memory costs about as much as copying
/// it a few times).
///
/// Errors: as [`decompress_to`].
pub fn decompress_to_staged<W: Write>(
    gpu: &Gpu,
    a: &Archive<'_>,
    mut out: W,
    plan: PiecePlan,
    staging: &mut Staging,
) -> Result<PieceStats, Error> {
    if a.cross_block() {
        return Err(GpuError::Unsupported(CROSS_BLOCK_PIECES.into()).into());
    }
    let size = a.header.original_size;
    let (free, _) = gpu
        .ctx
        .mem_get_info()
        .ctx("reading the free device memory")?;
    let sms = gpu.sm_count();
    let pieces = plan_pieces(a, plan, piece_budget(free as u64), sms)?;
    let mut stats = PieceStats {
        bytes: size,
        pieces: pieces.len() as u32,
        ..PieceStats::default()
    };
    let mut host = HostSide::new(a);
    if pieces.is_empty() {
        return host.finish(out).map(|()| stats);
    }
    for p in &pieces {
        stats.max_piece_output = stats.max_piece_output.max(out_len(a, p.clone()));
        stats.max_piece_device_bytes =
            stats
                .max_piece_device_bytes
                .max(piece_device_bytes(a, p.clone(), sms));
    }
    let max_data = pieces.iter().map(|p| data_range(a, p.clone()).len()).max();
    let max_blocks = pieces.iter().map(|p| p.len()).max().unwrap_or(1);
    let upload = upload_gpu(gpu)?;
    let stage_in = Staging::grow(gpu, &mut staging.input, max_data.unwrap_or(1))?;
    let stage_out = Staging::grow(gpu, &mut staging.output, stats.max_piece_output as usize)?;
    let stage_status = Staging::grow(gpu, &mut staging.status, max_blocks)?;

    let mut run = || -> Result<(), Error> {
        let ga = upload_piece(&upload, a, pieces[0].clone(), &mut stage_in[0])?;
        let mut cur = Some(queue_decode(
            gpu,
            &upload,
            ga,
            pieces[0].clone(),
            &mut stage_out[0],
            &mut stage_status[0],
        )?);
        for k in 0..pieces.len() {
            let slot = k % 2;
            let next_slot = (k + 1) % 2;
            // piece k+1 goes up on the upload stream while piece k decodes
            let next_ga = match pieces.get(k + 1) {
                Some(p) => Some(upload_piece(
                    &upload,
                    a,
                    p.clone(),
                    &mut stage_in[next_slot],
                )?),
                None => None,
            };
            let d = cur
                .take()
                .expect("queued before the loop or by the last round");
            d.done.synchronize().ctx("waiting for a piece's decode")?;
            let blocks = d.blocks.clone();
            let len = out_len(a, blocks.clone()) as usize;
            // the status words first: a block a kernel refused is named with its reason
            let status = &stage_status[slot]
                .as_slice()
                .ctx("reading the status words")?[..blocks.len()];
            check_status(a, blocks.start, status)?;
            // piece k+1 decodes while the host checks and writes piece k
            if let Some(ga) = next_ga {
                cur = Some(queue_decode(
                    gpu,
                    &upload,
                    ga,
                    pieces[k + 1].clone(),
                    &mut stage_out[next_slot],
                    &mut stage_status[next_slot],
                )?);
            }
            let bytes = &stage_out[slot].as_slice().ctx("reading a piece's output")?[..len];
            host.piece(blocks.start, bytes)?;
            out.write_all(bytes).map_err(Error::Write)?;
            // (piece k's device buffers are freed here, in stream order, after its decode)
            drop(d);
        }
        Ok(())
    };
    let ran = run();
    // no copy may use the staging buffers past the return (the next decode reuses them, or
    // they are freed): the decodes were waited for as their `Decoding`s dropped (also on an
    // error), the uploads here
    let synced = upload.sync();
    ran?;
    synced?;
    host.finish(out).map(|()| stats)
}

/// The page-locked host buffers of piecewise decodes, two of each kind (one for the piece
/// the host reads or writes, one for the piece in flight): the data sections going up, the
/// outputs and the status words coming back. Empty until a decode grows them
/// ([`decompress_to_staged`]); they hold the largest pieces decoded so far, up to twice
/// [`MAX_PIECE_OUTPUT`] and twice a piece's data section, until dropped.
#[derive(Default)]
pub struct Staging {
    input: Option<[PinnedHostSlice<u8>; 2]>,
    output: Option<[PinnedHostSlice<u8>; 2]>,
    status: Option<[PinnedHostSlice<u32>; 2]>,
}

impl Staging {
    /// The pair of buffers `slot`, reallocated to `n` elements where they hold fewer.
    fn grow<'s, T: cudarc::driver::DeviceRepr>(
        gpu: &Gpu,
        slot: &'s mut Option<[PinnedHostSlice<T>; 2]>,
        n: usize,
    ) -> Result<&'s mut [PinnedHostSlice<T>; 2], GpuError> {
        if slot.as_ref().is_none_or(|s| s[0].len() < n) {
            // (the old pair freed first)
            *slot = None;
            let one = || {
                // SAFETY: every element is written (a memcpy or a device copy) before it is
                // read; flags 0: cached page-locked memory, which the host reads at full speed
                unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) }
                    .ctx("allocating page-locked staging memory")
            };
            *slot = Some([one()?, one()?]);
        }
        Ok(slot.as_mut().expect("allocated above"))
    }
}

impl std::fmt::Debug for Staging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = |s: &Option<[PinnedHostSlice<u8>; 2]>| s.as_ref().map_or(0, |s| s[0].len());
        f.debug_struct("Staging")
            .field("input", &len(&self.input))
            .field("output", &len(&self.output))
            .finish()
    }
}

/// A GPU for uploads: the same context, module and device facts as `gpu`, on a stream of its
/// own, so that a piece's upload overlaps the decode of the one before on `gpu`'s stream.
/// Its work is ordered before the decode stream's by [`queue_decode`], which makes the
/// decode stream wait for all of it.
fn upload_gpu(gpu: &Gpu) -> Result<Gpu, GpuError> {
    Ok(Gpu {
        ctx: gpu.ctx.clone(),
        stream: gpu.ctx.new_stream().ctx("creating the upload stream")?,
        k: kernels::Kernels::load(&gpu.module)?,
        module: gpu.module.clone(),
        name: gpu.name.clone(),
        sm_count: gpu.sm_count,
        dense_ctas_per_sm: gpu.dense_ctas_per_sm,
        overlap: gpu.overlap,
        tuning: gpu.tuning.clone(),
    })
}

/// Uploads blocks `blocks` of `a` as an archive of their own on `upload`'s stream, the data
/// section through the page-locked buffer `stage` (whose last copy, two pieces ago, the
/// caller has waited for); returns once the copies are queued.
fn upload_piece(
    upload: &Gpu,
    a: &Archive<'_>,
    blocks: Range<usize>,
    stage: &mut PinnedHostSlice<u8>,
) -> Result<GpuArchive, GpuError> {
    use rayon::prelude::*;
    let src = &a.data[data_range(a, blocks.clone())];
    let staged = &mut stage.as_mut_slice().ctx("writing the staging buffer")?[..src.len()];
    // (in parallel: one thread copies a few GB/s, less than the link takes)
    staged
        .par_chunks_mut(4 << 20)
        .zip(src.par_chunks(4 << 20))
        .for_each(|(d, s)| d.copy_from_slice(s));
    let piece = a.piece(blocks).with_data(staged);
    GpuArchive::upload(upload, &piece)
}

/// A piece whose decode and download are queued on the decode stream.
struct Decoding {
    /// The piece's resident archive, its output and status words: kept until its decode is
    /// done.
    _ga: GpuArchive,
    _out: CudaSlice<u8>,
    _status: CudaSlice<u32>,
    /// Its blocks in the whole archive.
    blocks: Range<usize>,
    /// Recorded on the decode stream after the piece's output and status words are copied
    /// to the host.
    done: CudaEvent,
}

impl Drop for Decoding {
    /// Waits for the piece's decode and copies (at once where they are done, as after a
    /// successful round; on an error, a piece still in flight), so that its device buffers,
    /// freed in the upload stream's order for the archive's part, and the staging buffers
    /// it copies into are not freed under it.
    fn drop(&mut self) {
        // (an error here is the context's, and the next CUDA call reports it)
        let _ = self.done.synchronize();
    }
}

/// Queues on `gpu`'s stream, after everything queued so far on `upload`'s: the decode of
/// the piece `ga` (blocks `blocks`) into a poisoned output buffer, and the copy of its output
/// and status words into `stage_out` and `stage_status` (which the host no longer reads).
fn queue_decode(
    gpu: &Gpu,
    upload: &Gpu,
    ga: GpuArchive,
    blocks: Range<usize>,
    stage_out: &mut PinnedHostSlice<u8>,
    stage_status: &mut PinnedHostSlice<u32>,
) -> Result<Decoding, GpuError> {
    // the piece's upload, then its decode: the streams share no event of cudarc's (event
    // tracking is off, `Gpu::open_with`), so this wait is the order
    gpu.stream()
        .join(upload.stream())
        .ctx("ordering a piece's decode after its upload")?;
    let (mut out, mut status) = ga.output_buffers(gpu)?;
    ga.decode_all(gpu, &mut out, &mut status)?;
    let len = ga.original_size() as usize;
    // The destinations are the staging buffers' first `len` and `blocks.len()` elements:
    // cudarc copies as many bytes as its destination holds, and a staging buffer sized for
    // the largest piece is longer than a smaller piece's output. (The host reads them only
    // after `done`, which orders them.)
    if len > 0 {
        let dst = &mut stage_out
            .as_mut_slice()
            .ctx("reaching the output staging buffer")?[..len];
        gpu.stream()
            .memcpy_dtoh(&out.slice(..len), dst)
            .ctx("copying a piece's output to the host")?;
    }
    let dst = &mut stage_status
        .as_mut_slice()
        .ctx("reaching the status staging buffer")?[..blocks.len()];
    gpu.stream()
        .memcpy_dtoh(&status.slice(..blocks.len()), dst)
        .ctx("copying a piece's status words to the host")?;
    let done = gpu
        .stream()
        .record_event(None)
        .ctx("recording a piece's end")?;
    Ok(Decoding {
        _ga: ga,
        _out: out,
        _status: status,
        blocks,
        done,
    })
}

/// The first nonzero status word of a piece whose first block is `first`, as the error that
/// names its block (FORMAT.md §4-§5: the kernels' reasons).
fn check_status(a: &Archive<'_>, first: usize, status: &[u32]) -> Result<(), Error> {
    let Some((j, &s)) = status.iter().enumerate().find(|(_, &s)| s != 0) else {
        return Ok(());
    };
    let block = first + j;
    let r = a.block_range(block);
    match Status::from_u32(s) {
        Some(status) => Err(DecodeError::Block {
            block: block as u32,
            start: r.start,
            end: r.end,
            status,
        }
        .into()),
        None => Err(GpuError::Status(format!("block {block}: unknown status {s:#x}")).into()),
    }
}

/// The host's side of a piecewise decode: every block's checksum, and the content checksum
/// folded from the same per-KiB sums, piece after piece.
struct HostSide<'x, 'a> {
    a: &'x Archive<'a>,
    content: Folder,
    /// The sums of one window of output.
    sums: Vec<KibSums>,
    /// The last `min(len, 1 KiB)` bytes of the output so far (XXH3's final stripe).
    tail: Vec<u8>,
    /// Output bytes checked so far.
    done: u64,
}

impl<'x, 'a> HostSide<'x, 'a> {
    fn new(a: &'x Archive<'a>) -> Self {
        let size = a.header.original_size as usize;
        HostSide {
            a,
            content: Folder::new(size),
            sums: Vec::new(),
            tail: Vec::with_capacity(KIB),
            done: 0,
        }
    }

    /// Checks the output `bytes` of the piece whose first block is `first` (the next piece
    /// in order): each block against its checksum, then folds them into the content checksum.
    ///
    /// Errors: [`DecodeError::Block`] with [`Status::Checksum`] naming the lowest damaged
    /// block.
    fn piece(&mut self, first: usize, bytes: &[u8]) -> Result<(), Error> {
        let bs = self.a.header.block_size as usize;
        debug_assert_eq!(first as u64 * bs as u64, self.done);
        // block sizes are whole KiBs (FORMAT.md §2), so every block and piece starts on a KiB
        let window = bs * (WINDOW_BYTES / bs).max(1);
        let n = window.min(bytes.len()).div_ceil(KIB);
        if self.sums.len() < n {
            self.sums.resize(n, [0; 8]);
        }
        let kib0 = (self.done / KIB as u64) as usize;
        for (w, win) in bytes.chunks(window).enumerate() {
            let sums = &mut self.sums[..win.len().div_ceil(KIB)];
            let b0 = first + w * (window / bs);
            let a = self.a;
            if let Some(j) = lowest_bad_block(win, bs, sums, &a.entries[b0..]) {
                let b = b0 + j;
                let r = a.block_range(b);
                return Err(Error::from(DecodeError::Block {
                    block: b as u32,
                    start: r.start,
                    end: r.end,
                    status: Status::Checksum,
                }));
            }
            self.content.absorb(kib0 + w * (window / KIB), sums);
        }
        // the last KiB of the output so far
        let keep = bytes.len().min(KIB);
        let drop = (self.tail.len() + keep).saturating_sub(KIB);
        self.tail.drain(..drop);
        self.tail.extend_from_slice(&bytes[bytes.len() - keep..]);
        self.done += bytes.len() as u64;
        Ok(())
    }

    /// After the last piece: flushes `out` and checks the content checksum (FORMAT.md §6).
    ///
    /// Errors: [`Error::Write`]; [`DecodeError::ContentChecksum`].
    fn finish<W: Write>(self, mut out: W) -> Result<(), Error> {
        out.flush().map_err(Error::Write)?;
        let size = self.a.header.original_size;
        debug_assert_eq!(self.done, size);
        if self.content.finish_tail(size as usize, &self.tail) != self.a.header.content_checksum {
            return Err(DecodeError::ContentChecksum.into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{compress_settings, Settings};

    /// Bytes with repeats and noise, `n` of them.
    fn sample(n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(5) && v.len() > 300 {
                let back = 20 + (x >> 8) as usize % 300;
                let at = v.len() - back;
                v.extend_from_within(at..at + 20);
            } else {
                v.push(b"ACGT\n"[(x >> 20) as usize % 5]);
            }
        }
        v.truncate(n);
        v
    }

    fn archive(n: usize, block_size: u32) -> Vec<u8> {
        let opts = Settings {
            block_size,
            level: 1,
            ..Default::default()
        };
        compress_settings(&sample(n), &opts, &|_| {}).unwrap()
    }

    /// Every plan covers the blocks in order with whole groups; a forced count gives that
    /// many pieces where the archive has the groups; the free-memory plan keeps every piece
    /// under its budget and the output cap, and refuses a budget below one group.
    #[test]
    fn plans_cover_every_block_in_whole_groups() {
        let packed = archive(9 << 20 | 12_345, 16384);
        let a = Archive::parse(&packed).unwrap();
        let gb = a.header.group_blocks as usize;
        assert_eq!(gb, 64, "1 MiB groups of 16 KiB blocks");
        let n_blocks = a.entries.len();
        assert_eq!(n_blocks, (9 << 20 | 12_345usize).div_ceil(16384));
        let covers = |p: &[Range<usize>]| {
            let mut at = 0;
            for r in p {
                assert_eq!(r.start, at, "{p:?}");
                assert!(r.start.is_multiple_of(gb) && r.end > r.start, "{p:?}");
                at = r.end;
            }
            assert_eq!(at, n_blocks, "{p:?}");
        };
        for (n, want) in [(1, 1), (2, 2), (3, 3), (8, 8), (10, 10), (17, 10), (0, 1)] {
            let p = plan_pieces(&a, PiecePlan::Count(n), 0, 132).unwrap();
            assert_eq!(p.len(), want, "count {n}");
            covers(&p);
        }
        let groups: Vec<u64> = (0..n_blocks.div_ceil(gb))
            .map(|g| piece_device_bytes(&a, g * gb..((g + 1) * gb).min(n_blocks), 132))
            .collect();
        let one = *groups.iter().max().unwrap();
        assert!(one > 1 << 20, "a group's output alone is 1 MiB: {one}");
        for budget in [one, 3 * one, 1 << 40] {
            let p = plan_pieces(&a, PiecePlan::Auto, budget, 132).unwrap();
            covers(&p);
            for r in &p {
                assert!(
                    piece_device_bytes(&a, r.clone(), 132) <= budget,
                    "{r:?} over {budget}"
                );
                assert!(out_len(&a, r.clone()) <= MAX_PIECE_OUTPUT);
            }
            if budget == 1 << 40 {
                assert_eq!(p.len(), 1);
            }
        }
        let least = *groups.iter().min().unwrap();
        let e = plan_pieces(&a, PiecePlan::Auto, least - 1, 132)
            .unwrap_err()
            .to_string();
        assert!(e.contains("table group"), "{e}");
        assert!(piece_budget(1 << 30) == (1 << 29) / 2);
        assert_eq!(piece_budget(100 << 20), 0);
    }

    /// The host's check over pieces in order: the original passes at sizes whose last KiB
    /// spans two pieces, or that XXH3 hashes whole (at most 240 bytes); a flipped byte fails
    /// naming its block; a wrong content checksum fails at the end.
    #[test]
    fn the_host_check_passes_the_original_and_names_a_damaged_block() {
        for (n, pieces) in [
            (100, 1),
            (1 << 20 | 100, 2),
            (1 << 20 | 1500, 2),
            (3 << 20, 3),
            (5 << 20 | 4097, 4),
        ] {
            let data = sample(n);
            let packed = archive(n, 16384);
            let a = Archive::parse(&packed).unwrap();
            let plan = plan_pieces(&a, PiecePlan::Count(pieces), 0, 132).unwrap();
            assert_eq!(plan.len(), pieces as usize, "n {n}");
            let run = |data: &[u8], a: &Archive<'_>| -> Result<(), Error> {
                let mut host = HostSide::new(a);
                for p in &plan {
                    let r = a.block_range(p.start).start as usize
                        ..a.block_range(p.end - 1).end as usize;
                    host.piece(p.start, &data[r])?;
                }
                host.finish(std::io::sink())
            };
            run(&data, &a).unwrap_or_else(|e| panic!("n {n}: {e}"));
            for at in [0, n / 2, n - 1] {
                let mut bad = data.clone();
                bad[at] ^= 4;
                match run(&bad, &a) {
                    Err(Error::Decode(DecodeError::Block { block, status, .. })) => {
                        assert_eq!(block as usize, at / 16384, "n {n} at {at}");
                        assert_eq!(status, Status::Checksum);
                    }
                    other => panic!("n {n} at {at}: {other:?}"),
                }
            }
            let mut a = Archive::parse(&packed).unwrap();
            a.header.content_checksum ^= 1;
            assert!(
                matches!(
                    run(&data, &a),
                    Err(Error::Decode(DecodeError::ContentChecksum))
                ),
                "n {n}"
            );
        }
    }

    /// A piece is an archive of its own that the CPU decoder restores to the original's
    /// bytes of those blocks (the same sub-archive the GPU decodes).
    #[test]
    fn a_piece_decodes_to_its_blocks_of_the_original() {
        for bs in [4096u32, 16384] {
            let n = 3 << 20 | 777;
            let data = sample(n);
            let packed = archive(n, bs);
            let a = Archive::parse(&packed).unwrap();
            for p in plan_pieces(&a, PiecePlan::Count(3), 0, 132).unwrap() {
                let r =
                    a.block_range(p.start).start as usize..a.block_range(p.end - 1).end as usize;
                let mut piece = a.piece(p.clone());
                assert_eq!(piece.header.original_size as usize, r.len());
                // (a piece carries no content checksum: the one of its bytes, for the decoder)
                piece.header.content_checksum = xxhash_rust::xxh3::xxh3_64(&data[r.clone()]);
                let mut got = crate::decode::zeroed_output(piece.header.original_size).unwrap();
                crate::decode::decompress_into(&piece, &mut got, &|_| {})
                    .unwrap_or_else(|e| panic!("bs {bs} {p:?}: {e}"));
                assert!(got == data[r], "bs {bs} {p:?}");
            }
        }
    }
}
