//! The library's errors: [`Error`], what every function of the top-level API returns, and
//! its typed sources [`FormatError`] (the container) and [`DecodeError`] (a block).

use crate::device::status::Status;
use std::path::PathBuf;

/// Every error of the top-level API ([`crate::compress`], [`crate::decompress`],
/// [`crate::Reader`]).
///
/// Match on the variant for the kind of failure; the typed source carries the details (the
/// broken rule of FORMAT.md, the damaged block and its byte range). New variants may be added
/// in later versions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The options are invalid, or the input has more blocks than the format allows
    /// ([`crate::OptionsError`] names the option and its allowed range).
    #[error("invalid options: {0}")]
    Options(#[from] crate::OptionsError),
    /// The archive's structure breaks a rule of FORMAT.md (found before any block is
    /// decoded): not an archive, an unknown version, a damaged header, block table or tables.
    #[error(transparent)]
    Format(FormatError),
    /// A block failed to decode or its checksum, the content checksum failed, or a region
    /// outside the original data was asked for.
    #[error(transparent)]
    Decode(DecodeError),
    /// A file could not be opened, mapped or read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Reading the archive failed in a streaming decode ([`crate::decompress_to`]).
    #[error("reading the archive")]
    Read(#[source] std::io::Error),
    /// Writing the output failed in a streaming decode ([`crate::decompress_to`]); a closed
    /// pipe is [`std::io::ErrorKind::BrokenPipe`].
    #[error("writing the output")]
    Write(#[source] std::io::Error),
    /// The GPU could not be used or a GPU decode failed.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Error {
        Error::Format(e)
    }
}

/// A decode error that is a format error becomes [`Error::Format`], so one match arm covers
/// every structural problem of an archive.
impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Error {
        match e {
            DecodeError::Format(f) => Error::Format(f),
            e => Error::Decode(e),
        }
    }
}

/// The archive's structure breaks a rule of FORMAT.md (found before any block is decoded).
/// New variants may be added in later versions.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// Fewer bytes than the header.
    #[error("archive truncated: {got} bytes, the header alone needs {need}")]
    TooShort {
        /// Bytes available.
        got: u64,
        /// Bytes needed.
        need: u64,
    },
    /// Wrong magic number.
    #[error(
        "not an aceapex archive (first bytes {}, expected \"ACPX\")",
        show_magic(got)
    )]
    BadMagic {
        /// The four bytes found.
        got: [u8; 4],
    },
    /// A pre-release format version (2 to 8, FORMAT.md §2), written by development builds
    /// before format 1 was frozen.
    #[error(
        "format version {got} is a pre-release version this build does not read (it reads \
         format 1); re-compress the original"
    )]
    PreReleaseVersion {
        /// Version found.
        got: u16,
    },
    /// A format version this reader does not know (neither 1 nor a pre-release version).
    #[error("unknown format version {got} (this build reads format 1 only)")]
    Version {
        /// Version found.
        got: u16,
    },
    /// The extension area (FORMAT.md §3.4) is malformed, or holds a record that must be
    /// understood and is not.
    #[error("invalid extension record at extension-area offset {offset}: {why}")]
    Extension {
        /// Byte offset of the record inside the extension area.
        offset: u64,
        /// What is wrong.
        why: String,
    },
    /// A header field is out of range or inconsistent.
    #[error("invalid header field `{field}`: {why}")]
    Header {
        /// Field name as in FORMAT.md §2.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// A block-table entry is invalid.
    #[error("invalid block table entry {block}: {why}")]
    BlockEntry {
        /// Block index.
        block: u32,
        /// What is wrong.
        why: String,
    },
    /// The entropy-table section is malformed.
    #[error("invalid entropy table: {what}")]
    Table {
        /// What is wrong.
        what: &'static str,
    },
    /// One table record of the entropy-table section is malformed (FORMAT.md §5.2).
    #[error("invalid entropy table of table group {group} (blocks sharing tables), stream {stream}: {what}")]
    GroupTable {
        /// Table group index.
        group: u32,
        /// Stream name: literals, lengths, offsets or commands.
        stream: &'static str,
        /// What is wrong.
        what: &'static str,
    },
    /// The file length does not match the sections the header declares.
    #[error(
        "{}: its header declares {expected} bytes, the file has {got}",
        if got < expected { "archive truncated (or its header damaged)" } else { "archive damaged, or followed by other data" }
    )]
    Size {
        /// Declared size.
        expected: u64,
        /// Actual size.
        got: u64,
    },
    /// The checksum over header, block table, tables and extension area does not match.
    #[error(
        "metadata checksum mismatch (header, block table, tables or extension area are \
         corrupt, or bytes were appended to the archive)"
    )]
    MetaChecksum,
}

/// Decoding failed: the block where it happened and the rule broken. New variants may be
/// added in later versions.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// A block broke a rule of FORMAT.md §4-§5 or failed its checksum.
    #[error("damaged archive: block {block} (bytes {start}..{end}): {}", status.describe())]
    Block {
        /// Block index.
        block: u32,
        /// First original byte of the block.
        start: u64,
        /// One past its last byte.
        end: u64,
        /// Rule broken.
        status: Status,
    },
    /// The whole-content checksum does not match.
    #[error("content checksum mismatch: decoded data does not match the original")]
    ContentChecksum,
    /// A region outside the original data was asked for.
    #[error(
        "bytes {offset}..{} lie outside the original data ({size} bytes)",
        offset.saturating_add(*length)
    )]
    Region {
        /// Requested start.
        offset: u64,
        /// Requested length.
        length: u64,
        /// Original size.
        size: u64,
    },
    /// The output buffer could not be allocated.
    #[error("cannot allocate {bytes} bytes for the decoded output")]
    Alloc {
        /// Bytes requested.
        bytes: u64,
    },
    /// The archive's structure is invalid.
    #[error(transparent)]
    Format(#[from] FormatError),
}

/// The four magic bytes as hex and, where printable, as text: `41 42 43 44 ("ABCD")`.
fn show_magic(got: &[u8; 4]) -> String {
    let hex: Vec<String> = got.iter().map(|b| format!("{b:02x}")).collect();
    if got.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!(
            "{} (\"{}\")",
            hex.join(" "),
            got.iter().map(|&b| b as char).collect::<String>()
        )
    } else {
        hex.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_magic_names_the_bytes_in_hex_and_text() {
        let e = FormatError::BadMagic { got: *b"ABCD" }.to_string();
        assert!(e.contains(r#"41 42 43 44 ("ABCD")"#), "{e}");
        let e = FormatError::BadMagic {
            got: [0, 1, 0xfe, b'A'],
        }
        .to_string();
        assert!(e.contains("00 01 fe 41,"), "{e}");
    }
}
