//! [`Reader`]: an archive opened once, read by byte ranges (FORMAT.md §6).

use crate::decode;
use crate::error::{DecodeError, Error};
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
    _source: Source,
}

impl<'a> Reader<'a> {
    /// Parses the archive `bytes` (borrowed for the reader's life).
    ///
    /// Errors: [`Error::Format`] for bytes that are not a valid archive (FORMAT.md §2-§5).
    pub fn new(bytes: &'a [u8]) -> Result<Reader<'a>, Error> {
        Ok(Reader {
            archive: Archive::parse(bytes)?,
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
    /// [`Error::Format`] when it is not a valid archive.
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
        Ok(Reader {
            archive: Archive::parse(bytes)?,
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
    /// Errors: [`Error::Decode`] with [`DecodeError::Region`] for a range past the end of the
    /// original data, [`DecodeError::Block`] naming the first damaged block, or
    /// [`DecodeError::Alloc`] when the decode buffer cannot be allocated; `buf` is then
    /// unspecified.
    pub fn read_range(&self, offset: u64, buf: &mut [u8]) -> Result<(), Error> {
        let region = decode::extract(&self.archive, offset, buf.len() as u64)?;
        if region.len() != buf.len() {
            // extract returns exactly the range asked for; a mismatch would be a bug here
            return Err(Error::Decode(DecodeError::Region {
                offset,
                length: buf.len() as u64,
                size: self.len(),
            }));
        }
        buf.copy_from_slice(&region);
        Ok(())
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
            .finish()
    }
}
