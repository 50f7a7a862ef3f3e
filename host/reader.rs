//! [`Reader`]: an archive opened once, read by byte ranges (FORMAT.md §6).

use crate::decode;
#[cfg(doc)]
use crate::error::DecodeError;
use crate::error::Error;
use crate::fasta::FastaIndex;
use crate::fasta_record::read_fasta_index;
use crate::format::Archive;
use std::path::Path;

/// Where a [`Reader`]'s archive bytes live.
enum Source {
    /// Borrowed from the caller (the reader's lifetime bounds it).
    Borrowed,
    /// A read-only memory map of a file.
    Mapped(memmap2::Mmap),
    /// Bytes the reader owns (an empty file, a file that cannot be mapped).
    Owned(Box<[u8]>),
}

/// An archive parsed once and read by original-byte ranges: each read decodes only the
/// blocks it needs (and, when the archive's window crosses blocks, the blocks those read
/// from) and verifies every block it decodes against its checksum (FORMAT.md §3.1, §6).
///
/// Construction checks the header, block table, tables and their checksum
/// ([`Error::Format`] where a rule of FORMAT.md §2-§5 is broken); decoding checks the rest.
///
/// ```
/// let data = b"ACGTACGTTTGACCA".repeat(1000);
/// let archive = aceapex::compress(&data, &aceapex::Options::default())?;
/// let reader = aceapex::Reader::new(&archive)?;
/// assert_eq!(reader.len(), data.len() as u64);
/// let mut region = [0u8; 100];
/// reader.read_range(7_000, &mut region)?;
/// assert_eq!(&region[..], &data[7_000..7_100]);
/// # Ok::<(), aceapex::Error>(())
/// ```
pub struct Reader<'a> {
    /// The parsed archive; borrows from `_source` when that owns the bytes (declared first
    /// so that it is dropped first).
    archive: Archive<'a>,
    /// The FASTA index record, parsed at open (FORMAT.md §3.5, type 1).
    fasta: Option<FastaIndex>,
    _source: Source,
}

impl<'a> Reader<'a> {
    /// Parses the archive `bytes` (borrowed for the reader's life).
    ///
    /// Errors: [`Error::Format`] for bytes that are not a valid archive (FORMAT.md §2-§5),
    /// or whose FASTA index record is invalid (FORMAT.md §3.5).
    pub fn new(bytes: &'a [u8]) -> Result<Reader<'a>, Error> {
        let archive = Archive::parse(bytes)?;
        Ok(Reader {
            fasta: read_fasta_index(&archive)?,
            archive,
            _source: Source::Borrowed,
        })
    }
}

impl Reader<'static> {
    /// Opens the archive file `path`: memory-mapped (read-only) and parsed.
    ///
    /// The file must not be changed while the reader is open: changed bytes are at worst
    /// read as damage (a block fails its checksum), as the map is read-only.
    ///
    /// Errors: [`Error::Io`] when the file cannot be opened, mapped or read;
    /// [`Error::Format`] when it is not a valid archive or its FASTA index record is invalid.
    pub fn open(path: impl AsRef<Path>) -> Result<Reader<'static>, Error> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let source = if meta.is_file() && meta.len() > 0 {
            // SAFETY: the map is read-only; a file changed underneath by another process can
            // at worst give wrong bytes, which the parse or the checksums then report.
            Source::Mapped(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?)
        } else {
            // an empty file (which cannot be mapped) or a stream
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut bytes).map_err(io)?;
            Source::Owned(bytes.into_boxed_slice())
        };
        let bytes: &[u8] = match &source {
            Source::Mapped(m) => m,
            Source::Owned(b) => b,
            Source::Borrowed => unreachable!("an opened file is mapped or read"),
        };
        // SAFETY: `bytes` points into the map or the boxed slice that `source` owns; moving
        // `source` into the reader moves neither (the map's pages and the box's heap memory
        // stay where they are), and both live until the reader is dropped, after `archive`
        // (field order). The `'static` never leaves the reader: every method hands out
        // borrows no longer than `&self` (`Reader::archive` shortens the lifetime).
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) };
        let archive = Archive::parse(bytes)?;
        Ok(Reader {
            fasta: read_fasta_index(&archive)?,
            archive,
            _source: source,
        })
    }
}

impl Reader<'_> {
    /// Size of the original data in bytes.
    pub fn len(&self) -> u64 {
        self.archive.header.original_size
    }

    /// Whether the original data is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block size in bytes: the unit a read decodes (FORMAT.md §2).
    pub fn block_size(&self) -> u32 {
        self.archive.header.block_size
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.archive.block_count()
    }

    /// Fills `buf` with the original bytes `offset..offset + buf.len()`, decoding only the
    /// blocks those bytes lie in (and, for an archive whose window crosses blocks, the blocks
    /// they copy from), every decoded block verified against its checksum (FORMAT.md §6).
    /// A read of the whole original data is also verified against the content checksum.
    /// An empty `buf` reads nothing (any `offset` up to [`Reader::len`]).
    ///
    /// The read runs on the calling thread. As every block is verified, a block the range
    /// touches is decoded whole, however few of its bytes are asked for (a block's checksum
    /// covers all of it). Nothing else is repeated per read: the decode tables are expanded
    /// once per archive, the working buffers are per-thread and kept between reads, and
    /// blocks the range covers whole are decoded straight into `buf`; so the cost of a read
    /// is that of decoding its blocks, one after the other. Without cross-block sources a read
    /// allocates nothing once the thread has read from an archive of this block size; with
    /// them it allocates the span it decodes.
    ///
    /// Errors: [`Error::Decode`] with [`DecodeError::Region`] for a range past the end of the
    /// original data (nothing is decoded), [`DecodeError::Block`] naming the first damaged
    /// block, [`DecodeError::ContentChecksum`] for a whole-data read, or
    /// [`DecodeError::Alloc`] when a cross-block read's buffer cannot be allocated; `buf` is
    /// then unspecified.
    pub fn read_range(&self, offset: u64, buf: &mut [u8]) -> Result<(), Error> {
        Ok(decode::region::read_range(&self.archive, offset, buf)?)
    }

    /// Fills every `(offset, buf)` of `ranges` with the original bytes
    /// `offset..offset + buf.len()`, as [`Reader::read_range`] does for each, in one pass over
    /// the blocks they need, in index order: each block is decoded and verified once per call
    /// however many ranges touch it. On the calling thread; for parallel reads, split a batch
    /// between threads (the reader is [`Sync`]).
    ///
    /// Every range is checked before anything is decoded.
    ///
    /// ```
    /// let data = b"GATTACA".repeat(5_000);
    /// let archive = aceapex::compress(&data, &aceapex::Options::default())?;
    /// let reader = aceapex::Reader::new(&archive)?;
    /// let (mut a, mut b) = ([0u8; 10], [0u8; 3_000]);
    /// reader.read_ranges(&mut [(30_000, &mut a[..]), (5, &mut b[..])])?;
    /// assert_eq!((&a[..], &b[..]), (&data[30_000..30_010], &data[5..3_005]));
    /// # Ok::<(), aceapex::Error>(())
    /// ```
    ///
    /// Errors: as [`Reader::read_range`]; [`DecodeError::Region`] names the first range, in
    /// `ranges` order, past the end of the data, [`DecodeError::Block`] the first damaged
    /// block in block order. The buffers are then unspecified.
    pub fn read_ranges(&self, ranges: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
        Ok(decode::region::read_ranges(&self.archive, ranges)?)
    }

    /// Reads original bytes from `offset` into `buf` as `pread` does: the count read,
    /// `buf.len()` or fewer where the data ends first, 0 at or past the end. This is the byte
    /// source the region functions of [`crate::fasta`] take (`|o, b| reader.read_at(o, b)`).
    ///
    /// Errors: as [`Reader::read_range`], as an [`std::io::Error`] of kind
    /// [`std::io::ErrorKind::InvalidData`] whose source is the [`Error`].
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.len().saturating_sub(offset).min(buf.len() as u64) as usize;
        if n > 0 {
            self.read_range(offset, &mut buf[..n])
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        }
        Ok(n)
    }

    /// The sequence index of the original FASTA data, parsed when the reader was made from
    /// the archive's FASTA index record (FORMAT.md §3.5, type 1); `None` when the archive has
    /// none (its original is not FASTA that samtools indexes, or the index was left out, see
    /// [`crate::compress`]).
    ///
    /// ```
    /// use aceapex::fasta::{faidx, FaidxOptions};
    ///
    /// let fasta = b">chr1 test\nACGTACGT\nACG\n>chr2\nTTTT\n";
    /// let archive = aceapex::compress(fasta, &aceapex::Options::default())?;
    /// let reader = aceapex::Reader::new(&archive)?;
    /// let index = reader.fasta_index().expect("FASTA input carries its index");
    /// assert_eq!(index.to_fai(), b"chr1\t11\t11\t8\t9\nchr2\t4\t30\t4\t5\n");
    /// // `samtools faidx` output, the bytes read from the archive
    /// let (mut out, mut log) = (Vec::new(), Vec::new());
    /// let mut read = |offset, buf: &mut [u8]| reader.read_at(offset, buf);
    /// let status = faidx(index, &["chr1:7-10"], &FaidxOptions::default(), &mut read, &mut out, &mut log)?;
    /// assert_eq!((status, &out[..]), (0, &b">chr1:7-10\nGTAC\n"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fasta_index(&self) -> Option<&FastaIndex> {
        self.fasta.as_ref()
    }

    /// Decodes the whole original data on the CPU, verified: every block checksum and the
    /// content checksum (FORMAT.md §6). Same result as [`crate::decompress`].
    ///
    /// Errors: [`Error::Decode`] naming the first damaged block, or for the content checksum.
    pub fn decompress(&self) -> Result<Vec<u8>, Error> {
        Ok(decode::decompress(&self.archive)?)
    }

    /// The parsed archive (header, block table, tables), for the crate's own tools.
    #[doc(hidden)]
    pub fn archive(&self) -> &Archive<'_> {
        &self.archive
    }
}

impl std::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("len", &self.len())
            .field("block_size", &self.block_size())
            .field("block_count", &self.block_count())
            .field("fasta_records", &self.fasta.as_ref().map(|i| i.len()))
            .finish()
    }
}

/// A [`Reader`] with a cache of decoded blocks, for many small reads in one thread (such as
/// the regions of a FASTA query): each block is decoded and verified once while it stays in
/// the cache, and a read inside cached blocks decodes nothing. Blocks leave the cache in the
/// order they entered it once it holds more than its budget.
///
/// For an archive whose window crosses blocks (FORMAT.md §3.3) it reads through
/// [`Reader::read_range`], without a cache.
///
/// ```
/// let data = b"ACGTTGCA".repeat(10_000);
/// let archive = aceapex::compress(&data, &aceapex::Options::default())?;
/// let reader = aceapex::Reader::new(&archive)?;
/// let mut cached = aceapex::BlockCache::new(&reader, 1 << 20);
/// let mut buf = [0u8; 100];
/// assert_eq!(cached.read_at(16_000, &mut buf)?, 100);
/// assert_eq!(&buf[..], &data[16_000..16_100]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BlockCache<'r, 'a> {
    reader: &'r Reader<'a>,
    budget_blocks: usize,
    blocks: std::collections::HashMap<usize, Box<[u8]>>,
    order: std::collections::VecDeque<usize>,
}

impl<'r, 'a> BlockCache<'r, 'a> {
    /// A cache over `reader` keeping up to `budget` bytes of decoded blocks (at least one
    /// block).
    pub fn new(reader: &'r Reader<'a>, budget: usize) -> Self {
        let bs = reader.block_size().max(1) as usize;
        BlockCache {
            reader,
            budget_blocks: (budget / bs).max(1),
            blocks: std::collections::HashMap::new(),
            order: std::collections::VecDeque::new(),
        }
    }

    /// Reads original bytes from `offset` into `buf` as [`Reader::read_at`] does (`pread`:
    /// the count read, short or 0 at the end of the data).
    ///
    /// Errors: as [`Reader::read_at`].
    pub fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let a = &self.reader.archive;
        if a.cross_block() {
            return self.reader.read_at(offset, buf);
        }
        let n = self
            .reader
            .len()
            .saturating_sub(offset)
            .min(buf.len() as u64) as usize;
        let bs = u64::from(self.reader.block_size());
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let b = (pos / bs) as usize;
            let block = self.block(b)?;
            let at = (pos - b as u64 * bs) as usize;
            let take = (block.len() - at).min(n - done);
            buf[done..done + take].copy_from_slice(&block[at..at + take]);
            done += take;
        }
        Ok(n)
    }

    /// Block `b`, decoded and verified (FORMAT.md §6) on its first use.
    fn block(&mut self, b: usize) -> std::io::Result<&[u8]> {
        if !self.blocks.contains_key(&b) {
            let a = &self.reader.archive;
            let range = a.block_range(b);
            let mut out = vec![0u8; (range.end - range.start) as usize].into_boxed_slice();
            decode::decode_block_at(a, b, &mut out, range.start).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, Error::from(e))
            })?;
            if self.order.len() >= self.budget_blocks {
                if let Some(old) = self.order.pop_front() {
                    self.blocks.remove(&old);
                }
            }
            self.order.push_back(b);
            self.blocks.insert(b, out);
        }
        Ok(&self.blocks[&b])
    }
}

impl std::fmt::Debug for BlockCache<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("budget_blocks", &self.budget_blocks)
            .field("cached", &self.blocks.len())
            .finish()
    }
}
