//! Where the served sequences' bases come from: the [`SequenceSource`] trait, with an
//! archive read on the CPU through [`aceapex::Reader`] and a plain FASTA file read through its
//! index. A GPU-resident archive plugs in as one more implementation.

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
    /// An archive resident in GPU memory (not available yet).
    Gpu,
}

/// Opens `path` as a source on `device`: an aceapex archive (with a FASTA index record) or a
/// plain FASTA file (indexed and digested at start, for comparison and for files not yet
/// compressed).
///
/// Errors: the file cannot be read, is neither an archive of FASTA nor FASTA, or `device` is
/// [`Device::Gpu`] (not available yet).
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
    if device == Device::Gpu {
        bail!(
            "--device gpu: serving from an archive resident in GPU memory is not available yet; \
             use --device cpu"
        );
    }
    if n == 4 && head == aceapex::device::format::MAGIC {
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
