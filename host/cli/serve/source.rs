//! Where the served sequences' bases come from: the [`SequenceSource`] trait, with an
//! archive read on the CPU through [`aceapex::Reader`], an archive resident in GPU memory
//! ([`GpuArchiveSource`]: concurrent requests gathered into one batch), and a plain FASTA
//! file read through its index.

use crate::output::note;
use aceapex::fasta::checksums::{sequence_digests, Digester, SequenceDigests};
use aceapex::fasta::{fetch, FastaIndex, SeqFormat};
use aceapex::Reader;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// A store of FASTA sequences that the server reads bases from, from many threads at once
/// (each read runs on tokio's blocking pool).
pub trait SequenceSource: Send + Sync {
    /// What and where, for messages: "archive hs37.acx (CPU)".
    fn describe(&self) -> String;
    /// The sequences' index (names, lengths, layout in the original file).
    fn index(&self) -> &FastaIndex;
    /// The refget digests of every sequence, in index order.
    fn digests(&self) -> &[SequenceDigests];
    /// Bases `beg..end` (0-based, half-open, inside the sequence) of sequence `id` (its
    /// position in [`SequenceSource::index`]), as stored (case kept).
    ///
    /// Errors: the store fails (a damaged block, an I/O error) or the bases cannot be
    /// located.
    fn read(&self, id: usize, beg: u64, end: u64) -> Result<Vec<u8>>;
}

/// Which device reads the regions (`--device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Device {
    /// The CPU decoder, through `aceapex::Reader`.
    Cpu,
    /// An archive resident in GPU memory (`aceapex::GpuReader`), the requests that arrive
    /// together read in one batch.
    Gpu,
}

/// Opens `path` as a source on `device`: an aceapex archive (with a FASTA index record) or a
/// plain FASTA file (indexed and digested at start, for comparison and for files not yet
/// compressed).
///
/// Errors: the file cannot be read, is neither an archive of FASTA nor FASTA, or `device` is
/// [`Device::Gpu`] and there is no usable GPU, or the file is not an archive.
pub fn open(path: &Path, device: Device) -> Result<Box<dyn SequenceSource>> {
    let mut head = [0u8; 4];
    let n = {
        use std::io::Read;
        let mut f =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut n = 0;
        while n < 4 {
            match f.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
            }
        }
        n
    };
    let archive = n == 4 && head == aceapex::device::format::MAGIC;
    if device == Device::Gpu {
        if !archive {
            bail!("--device gpu: {} is not an archive", path.display());
        }
        return Ok(Box::new(GpuArchiveSource::open(path)?));
    }
    if archive {
        Ok(Box::new(ArchiveSource::open(path)?))
    } else {
        Ok(Box::new(FastaFileSource::open(path)?))
    }
}

/// An archive of FASTA read on the CPU: each read decodes the blocks its bases lie in.
pub struct ArchiveSource {
    path: PathBuf,
    reader: Reader<'static>,
    index: FastaIndex,
    digests: Vec<SequenceDigests>,
}

impl ArchiveSource {
    /// Opens the archive `path`; takes the sequence checksums from its record (FORMAT.md
    /// §3.6), or computes them from the restored data where the archive has none.
    ///
    /// Errors: not a valid archive, no FASTA index record, or an invalid checksums record.
    pub fn open(path: &Path) -> Result<Self> {
        let reader = Reader::open(path).with_context(|| format!("opening {}", path.display()))?;
        let index = reader.fasta_index().cloned().ok_or_else(|| {
            anyhow!(
                "{} has no FASTA index record: its original is not FASTA that samtools indexes \
                 (or the index was left out when it was compressed)",
                path.display()
            )
        })?;
        if index.format() != SeqFormat::Fasta {
            bail!(
                "{} holds FASTQ, not FASTA: refget serves FASTA",
                path.display()
            );
        }
        let digests = match aceapex::sequence_checksums(&reader)
            .with_context(|| format!("reading the sequence checksums of {}", path.display()))?
        {
            Some(d) => d,
            None => {
                note(format!(
                    "aceapex: {} carries no sequence checksums (FORMAT.md §3.6); computing them \
                     from the restored data",
                    path.display()
                ));
                let mut out = Vec::with_capacity(index.len());
                for r in index.records() {
                    let mut d = Digester::new();
                    if r.length > 0 {
                        let range =
                            aceapex::fasta::byte_range(r, 0, r.length).ok_or_else(|| {
                                anyhow!("sequence {} cannot be located", r.name_lossy())
                            })?;
                        let mut pos = range.start;
                        let mut buf = vec![0u8; 1 << 22];
                        while pos < range.end {
                            let n = (range.end - pos).min(buf.len() as u64) as usize;
                            reader
                                .read_range(pos, &mut buf[..n])
                                .with_context(|| format!("reading {}", path.display()))?;
                            d.update(&buf[..n]);
                            pos += n as u64;
                        }
                    }
                    out.push(d.finish());
                }
                out
            }
        };
        Ok(ArchiveSource {
            path: path.to_owned(),
            reader,
            index,
            digests,
        })
    }
}

impl SequenceSource for ArchiveSource {
    fn describe(&self) -> String {
        format!("archive {} (CPU)", self.path.display())
    }

    fn index(&self) -> &FastaIndex {
        &self.index
    }

    fn digests(&self) -> &[SequenceDigests] {
        &self.digests
    }

    fn read(&self, id: usize, beg: u64, end: u64) -> Result<Vec<u8>> {
        let record = &self.index.records()[id];
        let mut read = |offset, buf: &mut [u8]| self.reader.read_at(offset, buf);
        fetch(record, beg, end, false, &mut read)
            .with_context(|| format!("reading {}", self.path.display()))
    }
}

/// A plain FASTA file, memory-mapped, indexed and digested when opened.
pub struct FastaFileSource {
    path: PathBuf,
    map: memmap2::Mmap,
    index: FastaIndex,
    digests: Vec<SequenceDigests>,
}

impl FastaFileSource {
    /// Maps, indexes (as samtools faidx) and digests the FASTA file `path`.
    ///
    /// Errors: the file cannot be mapped, or is not FASTA that samtools indexes.
    pub fn open(path: &Path) -> Result<Self> {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        // SAFETY: the map is read-only; a file changed underneath by another process can at
        // worst give wrong bases (served as read), never memory unsafety in safe code that
        // only reads the bytes.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .with_context(|| format!("mapping {}", path.display()))?;
        let is_fasta = map.iter().find(|&&b| b != b'\n' && b != b'\r') == Some(&b'>');
        if !is_fasta {
            bail!(
                "{} is neither an aceapex archive nor a FASTA file",
                path.display()
            );
        }
        let index = FastaIndex::build(&map)
            .map_err(|e| anyhow!("{}: not FASTA that samtools indexes: {e}", path.display()))?;
        let digests =
            sequence_digests(&index, &map).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        Ok(FastaFileSource {
            path: path.to_owned(),
            map,
            index,
            digests,
        })
    }
}

impl SequenceSource for FastaFileSource {
    fn describe(&self) -> String {
        format!("FASTA {} (its index built at start)", self.path.display())
    }

    fn index(&self) -> &FastaIndex {
        &self.index
    }

    fn digests(&self) -> &[SequenceDigests] {
        &self.digests
    }

    fn read(&self, id: usize, beg: u64, end: u64) -> Result<Vec<u8>> {
        let record = &self.index.records()[id];
        let data: &[u8] = &self.map;
        let mut read = |offset: u64, buf: &mut [u8]| {
            let rest = data.get(offset as usize..).unwrap_or_default();
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            Ok(n)
        };
        fetch(record, beg, end, false, &mut read)
            .with_context(|| format!("reading {}", self.path.display()))
    }
}

/// One read for the GPU thread: original bytes `offset..offset + len`, answered on `reply`.
type GpuJob = (u64, u64, std::sync::mpsc::Sender<Result<Vec<u8>, String>>);

/// Requests gathered into one GPU batch at most.
const GPU_BATCH_MAX: usize = 4096;

/// Reads of many threads answered in batches by one thread: each caller queues its read and
/// waits; the thread takes every read queued while it was busy with the last batch (at most
/// [`GPU_BATCH_MAX`]) and reads them with one call of its batch reader.
struct Batcher {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<GpuJob>>,
    /// Size of the original data: reads are clipped to it, as `Reader::read_at` clips them.
    size: u64,
}

/// Reads `(offset, length)` ranges (each at least one byte, inside the data) and returns
/// their bytes back to back.
type ReadBatch = Box<dyn FnMut(&[(u64, u64)]) -> Result<Vec<u8>, String>>;

impl Batcher {
    /// Starts the batching thread, named `name`; `open` runs on it and returns the batch
    /// reader (which then never leaves the thread), the data's size and a description.
    ///
    /// Errors: the thread cannot start, or `open` fails (its message).
    fn start(
        name: &str,
        open: impl FnOnce() -> Result<(ReadBatch, u64, String), String> + Send + 'static,
    ) -> Result<(Batcher, String)> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(u64, String), String>>();
        let (tx, rx) = std::sync::mpsc::channel::<GpuJob>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut read_batch = match open() {
                    Ok((r, size, what)) => {
                        let _ = ready_tx.send(Ok((size, what)));
                        r
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    while batch.len() < GPU_BATCH_MAX {
                        match rx.try_recv() {
                            Ok(j) => batch.push(j),
                            Err(_) => break,
                        }
                    }
                    answer(&mut read_batch, batch);
                }
            })
            .context("starting the GPU thread")?;
        let (size, what) = match ready_rx.recv() {
            Ok(Ok(ready)) => ready,
            Ok(Err(e)) => bail!("{e}"),
            Err(_) => bail!("the GPU thread ended"),
        };
        let b = Batcher {
            jobs: std::sync::Mutex::new(tx),
            size,
        };
        Ok((b, what))
    }

    /// Fills `buf` with the bytes at `offset` (fewer where the data ends first: the count is
    /// returned, as `Reader::read_at` does), through the batching thread.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let len = (buf.len() as u64).min(self.size.saturating_sub(offset));
        if len == 0 {
            return Ok(0);
        }
        let (reply, answer) = std::sync::mpsc::channel();
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((offset, len, reply));
        let got = sent
            .map_err(|_| "the GPU thread ended".to_string())
            .and_then(|()| {
                answer
                    .recv()
                    .map_err(|_| "the GPU thread ended".to_string())
            })
            .and_then(|r| r);
        match got {
            Ok(bytes) => {
                buf[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

/// Reads the ranges of `batch` with one call of `read_batch` and answers each; when the batch
/// fails (a damaged block), each range is read again alone, so that only the reads that
/// need a bad block fail.
fn answer(read_batch: &mut ReadBatch, batch: Vec<GpuJob>) {
    let ranges: Vec<(u64, u64)> = batch.iter().map(|j| (j.0, j.1)).collect();
    match read_batch(&ranges) {
        Ok(all) => {
            let mut at = 0usize;
            for (_, len, reply) in batch {
                let _ = reply.send(Ok(all[at..at + len as usize].to_vec()));
                at += len as usize;
            }
        }
        Err(_) if batch.len() > 1 => {
            for (offset, len, reply) in batch {
                let _ = reply.send(read_batch(&[(offset, len)]));
            }
        }
        Err(e) => {
            for (_, _, reply) in batch {
                let _ = reply.send(Err(e.clone()));
            }
        }
    }
}

/// An archive of FASTA resident in GPU memory: a thread owns the GPU reader and answers the
/// reads queued while it was busy with one batch (`aceapex::GpuReader::read_ranges_to_vec`,
/// every block verified on the device); the index and checksums come from the CPU reader.
pub struct GpuArchiveSource {
    cpu: ArchiveSource,
    gpu: Batcher,
    gpu_name: String,
}

impl GpuArchiveSource {
    /// Opens `path` ([`ArchiveSource::open`]) and uploads it to the GPU.
    ///
    /// Errors: as [`ArchiveSource::open`]; no usable GPU, or an archive the GPU reader
    /// cannot take (a window across blocks).
    pub fn open(path: &Path) -> Result<Self> {
        let cpu = ArchiveSource::open(path)?;
        let owned = path.to_owned();
        let (gpu, gpu_name) = Batcher::start("aceapex-gpu", move || {
            let fail = |e: aceapex::Error| format!("--device gpu: {}: {e}", owned.display());
            let dec = std::sync::Arc::new(aceapex::GpuDecoder::open().map_err(fail)?);
            // the GPU reader maps the file too (the pages are shared with the CPU reader's)
            let reader = Reader::open(&owned).map_err(fail)?;
            let reader = dec.upload_owned(reader).map_err(fail)?;
            let size = reader.len();
            let read: ReadBatch = Box::new(move |ranges| {
                reader.read_ranges_to_vec(ranges).map_err(|e| e.to_string())
            });
            Ok((read, size, dec.name().to_string()))
        })?;
        Ok(GpuArchiveSource { cpu, gpu, gpu_name })
    }
}

impl SequenceSource for GpuArchiveSource {
    fn describe(&self) -> String {
        format!(
            "archive {} (GPU: {})",
            self.cpu.path.display(),
            self.gpu_name
        )
    }

    fn index(&self) -> &FastaIndex {
        &self.cpu.index
    }

    fn digests(&self) -> &[SequenceDigests] {
        &self.cpu.digests
    }

    fn read(&self, id: usize, beg: u64, end: u64) -> Result<Vec<u8>> {
        let record = &self.cpu.index.records()[id];
        let mut read = |offset: u64, buf: &mut [u8]| self.gpu.read_at(offset, buf);
        fetch(record, beg, end, false, &mut read)
            .with_context(|| format!("reading {} on the GPU", self.cpu.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// The batching thread over a CPU reader of `data`'s archive, counting its batches.
    fn cpu_batcher(data: &[u8]) -> (Batcher, Arc<AtomicUsize>) {
        let archive = aceapex::compress(data, &aceapex::Options::default()).unwrap();
        let batches = Arc::new(AtomicUsize::new(0));
        let count = batches.clone();
        let (b, what) = Batcher::start("test-batcher", move || {
            let reader = Reader::new(Box::leak(archive.into_boxed_slice())).unwrap();
            let size = reader.len();
            let read: ReadBatch = Box::new(move |ranges| {
                count.fetch_add(1, Ordering::SeqCst);
                // a slow device: the reads of the other threads queue meanwhile
                std::thread::sleep(std::time::Duration::from_millis(1));
                let mut out = Vec::new();
                for &(offset, len) in ranges {
                    assert!(len > 0 && offset + len <= size, "a range the GPU refuses");
                    let mut part = vec![0u8; len as usize];
                    reader
                        .read_range(offset, &mut part)
                        .map_err(|e| e.to_string())?;
                    out.extend_from_slice(&part);
                }
                Ok(out)
            });
            Ok((read, size, "CPU".into()))
        })
        .unwrap();
        assert_eq!(what, "CPU");
        (b, batches)
    }

    fn test_data() -> Vec<u8> {
        let mut x = 0x1234_5678_u32;
        (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                b"ACGT"[(x % 4) as usize]
            })
            .collect()
    }

    #[test]
    fn reads_from_many_threads_come_back_right_and_batched() {
        let data = test_data();
        let (b, batches) = cpu_batcher(&data);
        let reads = 64 * 50;
        std::thread::scope(|s| {
            for t in 0..64u64 {
                let (b, data) = (&b, &data);
                s.spawn(move || {
                    for k in 0..50u64 {
                        let offset = (t * 7919 + k * 104_729) % (data.len() as u64 - 6000);
                        let mut buf = vec![0u8; 1 + ((t * 31 + k) % 6000) as usize];
                        assert_eq!(b.read_at(offset, &mut buf).unwrap(), buf.len());
                        let o = offset as usize;
                        assert_eq!(buf, data[o..o + buf.len()]);
                    }
                });
            }
        });
        let n = batches.load(Ordering::SeqCst);
        // 64 threads keep reads queued while a batch runs: far fewer batches than reads
        assert!(n >= 1 && n <= reads / 4, "{n} batches for {reads} reads");
    }

    #[test]
    fn reads_are_clipped_at_the_end_like_read_at() {
        let data = test_data();
        let (b, _) = cpu_batcher(&data);
        let size = data.len() as u64;
        let mut buf = vec![0u8; 100];
        assert_eq!(b.read_at(size - 40, &mut buf).unwrap(), 40);
        assert_eq!(buf[..40], data[data.len() - 40..]);
        assert_eq!(b.read_at(size, &mut buf).unwrap(), 0);
        assert_eq!(b.read_at(size + 5, &mut buf).unwrap(), 0);
        assert_eq!(b.read_at(0, &mut []).unwrap(), 0);
    }

    #[test]
    fn a_failing_batch_fails_only_the_reads_that_fail_alone() {
        let mut read: ReadBatch = Box::new(|ranges: &[(u64, u64)]| {
            if ranges.iter().any(|r| r.0 == 666) {
                return Err("block 0 failed its checksum".into());
            }
            Ok(ranges
                .iter()
                .flat_map(|r| vec![r.0 as u8; r.1 as usize])
                .collect())
        });
        let mut batch = Vec::new();
        let mut answers = Vec::new();
        for offset in [1u64, 666, 3] {
            let (reply, answer) = std::sync::mpsc::channel();
            batch.push((offset, 2, reply));
            answers.push(answer);
        }
        answer(&mut read, batch);
        let got: Vec<_> = answers.iter().map(|a| a.recv().unwrap()).collect();
        assert_eq!(got[0], Ok(vec![1, 1]));
        assert!(got[1].as_ref().unwrap_err().contains("checksum"));
        assert_eq!(got[2], Ok(vec![3, 3]));
    }

    #[test]
    fn a_batch_reader_that_cannot_open_is_an_error() {
        let r = Batcher::start("test-batcher", || Err("no usable GPU".into()));
        let e = r.err().expect("an error").to_string();
        assert!(e.contains("no usable GPU"), "{e}");
    }
}
