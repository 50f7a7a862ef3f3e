//! Sharded random access: one archive's original bytes split into shards, each read by its
//! own reader (a CPU [`Reader`], or a [`crate::GpuReader`] on its own device), a batch of
//! ranges split by owner, the shards read at once and the answers gathered in request order.
//!
//! A shard is a contiguous range of original bytes and the blocks that cover it. A
//! [`ShardPlan`] cuts the data by size (block-aligned cuts, about equal original bytes per
//! shard) or, for FASTA with an index (FORMAT.md §3.5), at sequence starts where one lies
//! near the size cut, so that a region query rarely spans two shards. A shard's reader is
//! asked only for bytes inside its shard; a range that crosses a cut is split and its pieces
//! land side by side in the output.

use crate::decode::checksum;
use crate::error::{DecodeError, Error};
use crate::fasta::FastaIndex;
use crate::Reader;
use rayon::prelude::*;
use std::ops::Range;

/// One shard of a [`ShardPlan`]: the original bytes it owns and the blocks holding them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// Original bytes this shard owns (half-open; the shards' ranges tile `0..len`).
    pub bytes: Range<u64>,
    /// Blocks covering `bytes` (half-open block indexes): what a device holding this shard
    /// keeps resident. Shards cut at a sequence start inside a block share that block.
    pub blocks: Range<usize>,
}

/// How an archive's original bytes are split into shards: contiguous byte ranges in order,
/// tiling the whole data, none empty (except the one shard of empty data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardPlan {
    len: u64,
    block_size: u64,
    block_count: usize,
    content_checksum: u64,
    shards: Vec<Shard>,
}

impl ShardPlan {
    /// `n` shards of about equal original bytes, cut at block boundaries: shard `k` owns the
    /// blocks nearest to `k * len / n ..(k + 1) * len / n`. Fewer than `n` when the data has
    /// fewer blocks (each shard has at least one block); one shard for `n` of 0 or 1.
    pub fn by_size(reader: &Reader<'_>, n: usize) -> ShardPlan {
        let (len, bs, blocks) = geometry(reader);
        let n = n.clamp(1, blocks.max(1));
        let mut cuts = Vec::with_capacity(n + 1);
        cuts.push(0u64);
        let mut prev = 0usize;
        for k in 1..n {
            let target = (k as u128 * len as u128 / n as u128) as u64;
            // the nearest block boundary, leaving at least one block to each shard
            let b = ((target + bs / 2) / bs) as usize;
            let b = b.max(prev + 1).min(blocks - (n - k));
            cuts.push(b as u64 * bs);
            prev = b;
        }
        cuts.push(len);
        ShardPlan::from_cuts(reader, &cuts)
    }

    /// Up to `n` shards of about equal original bytes, each cut moved to the nearest sequence
    /// start of the archive's FASTA index ([`Reader::fasta_index`]; the offset of the
    /// sequence's first base) when one lies within a quarter of a shard's even size of the
    /// size cut, so that no sequence shorter than that spans two shards; elsewhere (a
    /// sequence longer than that around the cut) the cut stays at the block boundary
    /// [`ShardPlan::by_size`] would take. Without a FASTA index, [`ShardPlan::by_size`].
    ///
    /// Shards cut at a sequence start share the block the start lies in (one block per cut
    /// is held twice). Fewer than `n` shards where two cuts would meet.
    pub fn by_fasta(reader: &Reader<'_>, n: usize) -> ShardPlan {
        match reader.fasta_index() {
            Some(index) => ShardPlan::by_index(reader, index, n),
            None => ShardPlan::by_size(reader, n),
        }
    }

    /// [`ShardPlan::by_fasta`] with the sequence index `index` of the same original data
    /// (one the archive does not carry, such as a `.fai` read beside it). Record offsets past
    /// the end of the data are ignored.
    pub fn by_index(reader: &Reader<'_>, index: &FastaIndex, n: usize) -> ShardPlan {
        let (len, _, _) = geometry(reader);
        let size_cuts = ShardPlan::by_size(reader, n);
        let n = size_cuts.shards.len();
        let mut starts: Vec<u64> = index
            .records()
            .iter()
            .map(|r| r.offset)
            .filter(|&o| o > 0 && o < len)
            .collect();
        starts.sort_unstable();
        let slack = len / (4 * n as u64);
        let mut cuts = vec![0u64];
        for (k, size_cut) in size_cuts.shards.iter().enumerate().skip(1) {
            let target = (k as u128 * len as u128 / n as u128) as u64;
            let i = starts.partition_point(|&s| s < target);
            let nearest = [i.checked_sub(1), Some(i)]
                .into_iter()
                .flatten()
                .filter_map(|j| starts.get(j).copied())
                .min_by_key(|&s| s.abs_diff(target));
            let cut = match nearest {
                Some(s) if s.abs_diff(target) <= slack => s,
                _ => size_cut.bytes.start,
            };
            if cut > *cuts.last().unwrap_or(&0) && cut < len {
                cuts.push(cut);
            }
        }
        cuts.push(len);
        ShardPlan::from_cuts(reader, &cuts)
    }

    /// The plan of the byte cuts `cuts` (`0`, increasing, then the data's length).
    fn from_cuts(reader: &Reader<'_>, cuts: &[u64]) -> ShardPlan {
        let (len, bs, block_count) = geometry(reader);
        let shards = if len == 0 {
            vec![Shard {
                bytes: 0..0,
                blocks: 0..0,
            }]
        } else {
            cuts.windows(2)
                .map(|w| Shard {
                    bytes: w[0]..w[1],
                    blocks: (w[0] / bs) as usize..w[1].div_ceil(bs) as usize,
                })
                .collect()
        };
        ShardPlan {
            len,
            block_size: bs,
            block_count,
            content_checksum: reader.archive().header.content_checksum,
            shards,
        }
    }

    /// The shards, in byte order.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Size of the original data in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the original data is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of blocks of the archive.
    pub fn block_count(&self) -> usize {
        self.block_count
    }

    /// The shard owning original byte `offset` (the last shard for `offset` at or past the
    /// end).
    pub fn owner(&self, offset: u64) -> usize {
        self.shards
            .partition_point(|s| s.bytes.end <= offset)
            .min(self.shards.len() - 1)
    }
}

impl ShardPlan {
    /// The zeroed output of `ranges`, each checked against the data's length.
    ///
    /// Errors: [`DecodeError::Region`] for the first range past the end,
    /// [`DecodeError::Alloc`] when the output cannot be allocated.
    fn output(&self, ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
        let size = self.len;
        let mut total = 0u64;
        for &(offset, length) in ranges {
            if offset > size || length > size - offset {
                return Err(DecodeError::Region {
                    offset,
                    length,
                    size,
                }
                .into());
            }
            total += length;
        }
        let alloc = || DecodeError::Alloc { bytes: total };
        let total_usize = usize::try_from(total).map_err(|_| alloc())?;
        let mut out = Vec::new();
        out.try_reserve_exact(total_usize).map_err(|_| alloc())?;
        out.resize(total_usize, 0);
        Ok(out)
    }

    /// Splits the checked `ranges` by owner into pieces of `out` (which holds their lengths'
    /// sum, back to back): one list per shard, each in request order.
    fn route<'o>(&self, ranges: &[(u64, u64)], out: &'o mut [u8]) -> Vec<Vec<(u64, &'o mut [u8])>> {
        let mut parts: Vec<Vec<(u64, &'o mut [u8])>> =
            (0..self.shards.len()).map(|_| Vec::new()).collect();
        let mut rest = out;
        for &(offset, length) in ranges {
            let end = offset + length;
            let mut pos = offset;
            while pos < end {
                let k = self.owner(pos);
                let take = (end.min(self.shards[k].bytes.end) - pos) as usize;
                let (piece, tail) = std::mem::take(&mut rest).split_at_mut(take);
                rest = tail;
                parts[k].push((pos, piece));
                pos += take as u64;
            }
        }
        parts
    }

    /// A read of the whole data as one range checked against the content checksum
    /// (FORMAT.md §6).
    fn check_content(&self, ranges: &[(u64, u64)], out: &[u8]) -> Result<(), Error> {
        if let [(0, length)] = ranges {
            if *length == self.len && checksum::xxh3_64(out) != self.content_checksum {
                return Err(DecodeError::ContentChecksum.into());
            }
        }
        Ok(())
    }
}

/// Length, block size (at least 1) and block count of `reader`'s archive.
fn geometry(reader: &Reader<'_>) -> (u64, u64, usize) {
    (
        reader.len(),
        u64::from(reader.block_size()).max(1),
        reader.block_count(),
    )
}

/// What reads one shard's bytes: a CPU [`Reader`] or, with the `gpu` feature, a
/// [`crate::GpuReader`] (one per device). Readers that are [`Sync`] (the CPU's) read a
/// batch's shards at once ([`ShardedReader::read_ranges`]); others one after the other
/// ([`ShardedReader::read_ranges_in_turn`]), or at once on a thread each ([`with_workers`]).
pub trait ShardRead {
    /// Fills every `(offset, buf)` of `pieces` with the original bytes
    /// `offset..offset + buf.len()`, every block read verified (FORMAT.md §6). The pieces lie
    /// inside this reader's shard, are not empty, and are in request order.
    ///
    /// Errors: as [`Reader::read_ranges`] ([`DecodeError::Block`] naming a damaged block).
    fn read_pieces(&self, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error>;
}

impl ShardRead for Reader<'_> {
    fn read_pieces(&self, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
        self.read_ranges(pieces)
    }
}

#[cfg(feature = "gpu")]
impl ShardRead for crate::GpuReader<'_> {
    /// One submission of the pieces to the device, the bytes copied back to the host.
    fn read_pieces(&self, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
        let ranges: Vec<(u64, u64)> = pieces.iter().map(|(o, b)| (*o, b.len() as u64)).collect();
        let bytes = self.read_ranges_to_vec(&ranges)?;
        let mut at = 0usize;
        for (_, buf) in pieces.iter_mut() {
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            at += buf.len();
        }
        Ok(())
    }
}

/// One archive read through several shards ([`ShardPlan`]), each with its own reader `S`
/// ([`ShardRead`]): a batch of ranges is split by owner, every shard's part read at once
/// (one rayon task per shard, on the current thread pool, for readers that are [`Sync`])
/// and the bytes gathered in request order; a range crossing shards is read piecewise and
/// joined.
///
/// ```
/// use aceapex::shard::{ShardPlan, ShardedReader};
/// use aceapex::{Options, Reader};
///
/// let data = b"ACGTTGCAAC".repeat(20_000);
/// let archive = aceapex::compress(&data, &Options::default().with_block_size(16 << 10))?;
/// let plan = ShardPlan::by_size(&Reader::new(&archive)?, 3);
/// // three CPU readers of the same archive, one per shard
/// let sharded = ShardedReader::new(plan, |_, _| Reader::new(&archive))?;
/// let bytes = sharded.read_ranges(&[(70_000, 10), (5, 100_000)])?;
/// assert_eq!(&bytes[..10], &data[70_000..70_010]);
/// assert_eq!(&bytes[10..], &data[5..100_005]);
/// # Ok::<(), aceapex::Error>(())
/// ```
pub struct ShardedReader<S> {
    plan: ShardPlan,
    readers: Vec<S>,
}

impl<S: ShardRead> ShardedReader<S> {
    /// The sharded reader of `plan`, the reader of shard `k` made by `open(k, shard)`
    /// (for GPU shards: an upload to device `k`).
    ///
    /// Errors: the first error `open` returns.
    pub fn new(
        plan: ShardPlan,
        mut open: impl FnMut(usize, &Shard) -> Result<S, Error>,
    ) -> Result<ShardedReader<S>, Error> {
        let readers = plan
            .shards
            .iter()
            .enumerate()
            .map(|(k, s)| open(k, s))
            .collect::<Result<Vec<S>, Error>>()?;
        Ok(ShardedReader { plan, readers })
    }

    /// The plan.
    pub fn plan(&self) -> &ShardPlan {
        &self.plan
    }

    /// The reader of shard `k`, if there is one.
    pub fn shard(&self, k: usize) -> Option<&S> {
        self.readers.get(k)
    }

    /// Size of the original data in bytes.
    pub fn len(&self) -> u64 {
        self.plan.len
    }

    /// Whether the original data is empty.
    pub fn is_empty(&self) -> bool {
        self.plan.len == 0
    }

    /// Checks `ranges`, allocates the output, splits it by owner into pieces and has `read`
    /// fill every shard's pieces (`parts[k]` for reader `k`); the first error, in shard
    /// order, of `read`'s results is the answer's.
    fn read_with<'s, F>(&'s self, ranges: &[(u64, u64)], read: F) -> Result<Vec<u8>, Error>
    where
        F: for<'o> FnOnce(Vec<Vec<(u64, &'o mut [u8])>>, &'s [S]) -> Vec<Result<(), Error>>,
    {
        let mut out = self.plan.output(ranges)?;
        let parts = self.plan.route(ranges, &mut out);
        read(parts, &self.readers)
            .into_iter()
            .collect::<Result<(), Error>>()?;
        self.plan.check_content(ranges, &out)?;
        Ok(out)
    }

    /// [`ShardedReader::read_ranges`] with the shards read one after the other on the calling
    /// thread: for shard readers that cannot be shared between threads (a
    /// [`crate::GpuReader`] is neither `Send` nor `Sync`: it keeps a raw CUDA graph handle).
    /// To read such shards at once, give each its own thread: [`with_workers`].
    ///
    /// Errors: as [`ShardedReader::read_ranges`].
    pub fn read_ranges_in_turn(&self, ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
        self.read_with(ranges, |parts, readers| {
            parts
                .into_iter()
                .zip(readers)
                .map(|(mut pieces, reader)| read_part(reader, &mut pieces))
                .collect()
        })
    }
}

impl<S: ShardRead + Sync> ShardedReader<S> {
    /// The original bytes of `ranges` (`(offset, length)`, empty ranges allowed), back to
    /// back in request order, every shard reading its part at once (one rayon task per
    /// shard). A read of the whole data as one range is also verified against the content
    /// checksum (FORMAT.md §6), as [`Reader::read_range`] does.
    ///
    /// Every range is checked before anything is read. Memory: the output, plus, per GPU
    /// shard, its part of the output staged on the host.
    ///
    /// Errors: [`Error::Decode`] with [`DecodeError::Region`] for the first range in request
    /// order past the end of the data; [`DecodeError::Alloc`] when the output cannot be
    /// allocated; otherwise the error of the first shard, in byte order, whose read failed:
    /// with CPU shards [`DecodeError::Block`] naming the first damaged block, in block
    /// order, that the batch touches (the error [`Reader::read_ranges`] gives for the same
    /// batch); [`DecodeError::ContentChecksum`] for a whole-data read.
    pub fn read_ranges(&self, ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
        self.read_with(ranges, |parts, readers| {
            parts
                .into_par_iter()
                .zip(readers.par_iter())
                .map(|(mut pieces, reader)| read_part(reader, &mut pieces))
                .collect()
        })
    }

    /// The whole original data, every shard decoding its part at once; verified against
    /// every block checksum and the content checksum (FORMAT.md §6).
    ///
    /// Errors: as [`ShardedReader::read_ranges`].
    pub fn decompress(&self) -> Result<Vec<u8>, Error> {
        self.read_ranges(&[(0, self.plan.len)])
    }
}

/// One shard's pieces read by its reader (nothing for none).
fn read_part<S: ShardRead>(reader: &S, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
    if pieces.is_empty() {
        Ok(())
    } else {
        reader.read_pieces(pieces)
    }
}

impl<S> std::fmt::Debug for ShardedReader<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedReader")
            .field("len", &self.plan.len)
            .field("shards", &self.plan.shards)
            .finish()
    }
}

#[cfg(feature = "gpu")]
impl<'a> ShardedReader<crate::GpuReader<'a>> {
    /// GPU shards: `archive` uploaded to `decoders[k]` for shard `k`
    /// ([`crate::GpuDecoder::upload`]), each decoder its own device and stream.
    ///
    /// Each upload holds the whole archive, not only its shard's blocks (the GPU reader has
    /// no block-range upload), and [`crate::GpuDecoder::open`] opens device 0 only: until the
    /// GPU runtime opens device `k`, every decoder here is the same card. The shards of a
    /// batch are read one after the other ([`ShardedReader::read_ranges_in_turn`]); for
    /// shards read at once, one thread per device, see [`with_gpu_workers`].
    ///
    /// Errors: [`Error::Gpu`] when there are fewer decoders than shards, or an upload fails
    /// ([`crate::GpuDecoder::upload`]).
    pub fn upload(
        plan: ShardPlan,
        decoders: &'a [crate::GpuDecoder],
        archive: &'a [u8],
    ) -> Result<Self, Error> {
        let need = plan.shards.len();
        if decoders.len() < need {
            return Err(crate::gpu::GpuError::Unsupported(format!(
                "{need} shards need {need} GPU decoders, {} given",
                decoders.len()
            ))
            .into());
        }
        ShardedReader::new(plan, |k, _| decoders[k].upload(archive))
    }
}

/// A shard reader lent to its worker thread for as long as the work runs
/// ([`with_workers`]): the worker serves the batches' parts with it until the work is done.
pub type Serve<'s> = &'s mut dyn FnMut(&dyn ShardRead) -> Result<(), Error>;

/// One shard's part of a batch, sent to its worker: the pieces (offset, length) and where
/// the bytes (back to back) go.
struct Job {
    pieces: Vec<(u64, u64)>,
    reply: std::sync::mpsc::Sender<Result<Vec<u8>, Error>>,
}

/// One thread per shard, each serving its shard with a reader that lives on that thread
/// (made by [`with_workers`]); [`Workers::read_ranges`] reads a batch through them at once.
pub struct Workers<'p> {
    plan: &'p ShardPlan,
    jobs: Vec<std::sync::mpsc::Sender<Job>>,
}

impl Workers<'_> {
    /// The original bytes of `ranges`, back to back in request order, as
    /// [`ShardedReader::read_ranges`] gives them: each worker gets its shard's pieces at
    /// once, the answers are gathered here.
    ///
    /// Errors: as [`ShardedReader::read_ranges`] (the first shard's error in byte order).
    pub fn read_ranges(&self, ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
        let mut out = self.plan.output(ranges)?;
        let mut parts = self.plan.route(ranges, &mut out);
        let mut replies = Vec::with_capacity(parts.len());
        for (pieces, jobs) in parts.iter().zip(&self.jobs) {
            if pieces.is_empty() {
                replies.push(None);
                continue;
            }
            let (reply, answer) = std::sync::mpsc::channel();
            let job = Job {
                pieces: pieces.iter().map(|(o, b)| (*o, b.len() as u64)).collect(),
                reply,
            };
            jobs.send(job).map_err(|_| worker_gone())?;
            replies.push(Some(answer));
        }
        let mut first = Ok(());
        for (pieces, answer) in parts.iter_mut().zip(replies) {
            let Some(answer) = answer else { continue };
            match answer.recv().map_err(|_| worker_gone()).and_then(|r| r) {
                Ok(bytes) => {
                    let mut at = 0;
                    for (_, buf) in pieces.iter_mut() {
                        buf.copy_from_slice(&bytes[at..at + buf.len()]);
                        at += buf.len();
                    }
                }
                Err(e) => {
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
            }
        }
        first?;
        self.plan.check_content(ranges, &out)?;
        Ok(out)
    }

    /// The whole original data, every worker decoding its shard at once; verified against
    /// every block checksum and the content checksum (FORMAT.md §6).
    ///
    /// Errors: as [`ShardedReader::read_ranges`].
    pub fn decompress(&self) -> Result<Vec<u8>, Error> {
        self.read_ranges(&[(0, self.plan.len)])
    }
}

impl std::fmt::Debug for Workers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("shards", &self.plan.shards)
            .finish()
    }
}

/// A worker that stopped (its thread panicked): reported as a failed shard read.
fn worker_gone() -> Error {
    Error::Read(std::io::Error::other("a shard's worker thread stopped"))
}

/// Runs `work` with [`Workers`]: one thread per shard of `plan`, where `open(k, shard, serve)`
/// makes shard `k`'s reader on that thread and lends it to `serve`, which reads the batches'
/// parts with it until `work` returns. For readers that cannot move between threads, such as
/// a [`crate::GpuReader`] on device `k` (its decoder opened and the archive uploaded inside
/// `open`, so that both live on the worker's stack).
///
/// ```
/// use aceapex::shard::{with_workers, ShardPlan};
/// use aceapex::{Options, Reader};
///
/// let data = b"TTAGGG".repeat(30_000);
/// let archive = aceapex::compress(&data, &Options::default().with_block_size(16 << 10))?;
/// let plan = ShardPlan::by_size(&Reader::new(&archive)?, 4);
/// let bytes = with_workers(
///     &plan,
///     |_, _, serve| serve(&Reader::new(&archive)?),
///     |workers| workers.read_ranges(&[(100_000, 50_000)]),
/// )??;
/// assert_eq!(bytes, &data[100_000..150_000]);
/// # Ok::<(), aceapex::Error>(())
/// ```
///
/// Errors: the first error, in shard order, of an `open` that failed before lending its
/// reader (then `work` is not run); otherwise `work`'s result.
pub fn with_workers<T, O, W>(plan: &ShardPlan, open: O, work: W) -> Result<T, Error>
where
    O: Fn(usize, &Shard, Serve<'_>) -> Result<(), Error> + Sync,
    W: FnOnce(&Workers<'_>) -> T,
{
    use std::sync::mpsc::channel;
    std::thread::scope(|scope| {
        let mut jobs = Vec::with_capacity(plan.shards.len());
        let mut ready = Vec::with_capacity(plan.shards.len());
        for (k, shard) in plan.shards.iter().enumerate() {
            let (job_tx, job_rx) = channel::<Job>();
            let (ready_tx, ready_rx) = channel::<Result<(), Error>>();
            jobs.push(job_tx);
            ready.push(ready_rx);
            let open = &open;
            scope.spawn(move || {
                let ready_signal = ready_tx.clone();
                let mut serve = |reader: &dyn ShardRead| -> Result<(), Error> {
                    // the reader is open: the work may start
                    let _ = ready_signal.send(Ok(()));
                    for Job { pieces, reply } in job_rx.iter() {
                        let total: u64 = pieces.iter().map(|p| p.1).sum();
                        let mut bytes = vec![0u8; total as usize];
                        let mut rest = &mut bytes[..];
                        let mut bufs = Vec::with_capacity(pieces.len());
                        for &(offset, length) in &pieces {
                            let (buf, tail) =
                                std::mem::take(&mut rest).split_at_mut(length as usize);
                            rest = tail;
                            bufs.push((offset, buf));
                        }
                        let answer = reader.read_pieces(&mut bufs).map(|()| bytes);
                        let _ = reply.send(answer);
                    }
                    Ok(())
                };
                if let Err(e) = open(k, shard, &mut serve) {
                    // an open that failed before lending its reader (a later error is the
                    // work's, already answered)
                    let _ = ready_tx.send(Err(e));
                }
            });
        }
        let mut opened = Ok(());
        for r in ready {
            let status = r.recv().unwrap_or_else(|_| Err(worker_gone()));
            if opened.is_ok() {
                opened = status;
            }
        }
        let result = opened.map(|()| {
            work(&Workers {
                plan,
                jobs: jobs.clone(),
            })
        });
        // closing the job channels ends the workers' loops
        drop(jobs);
        result
    })
}

/// [`with_workers`] with GPU shards: each worker opens a [`crate::GpuDecoder`] and uploads
/// `archive` to it ([`crate::GpuDecoder::upload`]), so every shard is read on its own
/// thread, stream and context at once.
///
/// As [`ShardedReader::upload`]: each upload holds the whole archive, and
/// [`crate::GpuDecoder::open`] opens device 0 only, so until the GPU runtime opens device
/// `k` every worker uses the same card.
///
/// Errors: as [`with_workers`]; an open or upload failure is [`Error::Gpu`] (or
/// [`Error::Format`] for bytes that are not an archive).
#[cfg(feature = "gpu")]
pub fn with_gpu_workers<T, W>(plan: &ShardPlan, archive: &[u8], work: W) -> Result<T, Error>
where
    W: FnOnce(&Workers<'_>) -> T,
{
    with_workers(
        plan,
        |_, _, serve| {
            let decoder = crate::GpuDecoder::open()?;
            serve(&decoder.upload(archive)?)
        },
        work,
    )
}
