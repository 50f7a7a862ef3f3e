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

/// An archive of FASTA resident in GPU memory: a thread owns the GPU reader and answers the
/// reads queued while it was busy with one batch (`aceapex::GpuReader::read_ranges_to_vec`,
/// every block verified on the device); the index and checksums come from the CPU reader.
pub struct GpuArchiveSource {
    cpu: ArchiveSource,
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<GpuJob>>,
    gpu_name: String,
}

impl GpuArchiveSource {
    /// Opens `path` ([`ArchiveSource::open`]) and uploads it to the GPU.
    ///
    /// Errors: as [`ArchiveSource::open`]; no usable GPU, or an archive the GPU reader
    /// cannot take (a window across blocks).
    pub fn open(path: &Path) -> Result<Self> {
        let cpu = ArchiveSource::open(path)?;
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<String, String>>();
        let (tx, rx) = std::sync::mpsc::channel::<GpuJob>();
        std::thread::Builder::new()
            .name("aceapex-gpu".into())
            .spawn(move || {
                let opened = aceapex::GpuDecoder::open().and_then(|dec| {
                    let name = dec.name().to_string();
                    // the decoder and the archive live as long as the server, on this thread
                    let dec: &'static aceapex::GpuDecoder = Box::leak(Box::new(dec));
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    dec.upload(bytes).map(|r| (r, name))
                });
                let reader = match opened {
                    Ok((r, name)) => {
                        let _ = ready_tx.send(Ok(name));
                        r
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
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
                    let ranges: Vec<(u64, u64)> = batch.iter().map(|j| (j.0, j.1)).collect();
                    match reader.read_ranges_to_vec(&ranges) {
                        Ok(all) => {
                            let mut at = 0usize;
                            for (_, len, reply) in batch {
                                let _ = reply.send(Ok(all[at..at + len as usize].to_vec()));
                                at += len as usize;
                            }
                        }
                        Err(e) => {
                            let e = e.to_string();
                            for (_, _, reply) in batch {
                                let _ = reply.send(Err(e.clone()));
                            }
                        }
                    }
                }
            })
            .context("starting the GPU thread")?;
        let gpu_name = match ready_rx.recv() {
            Ok(Ok(name)) => name,
            Ok(Err(e)) => bail!("--device gpu: {e}"),
            Err(_) => bail!("--device gpu: the GPU thread ended"),
        };
        Ok(GpuArchiveSource {
            cpu,
            jobs: std::sync::Mutex::new(tx),
            gpu_name,
        })
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
        let mut read = |offset: u64, buf: &mut [u8]| -> std::io::Result<usize> {
            if buf.is_empty() {
                return Ok(0);
            }
            let (reply, answer) = std::sync::mpsc::channel();
            let sent = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).send((
                offset,
                buf.len() as u64,
                reply,
            ));
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
                    buf.copy_from_slice(&bytes);
                    Ok(buf.len())
                }
                Err(e) => Err(std::io::Error::other(e)),
            }
        };
        fetch(record, beg, end, false, &mut read)
            .with_context(|| format!("reading {} on the GPU", self.cpu.path.display()))
    }
}
