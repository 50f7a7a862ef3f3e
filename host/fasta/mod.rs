//! FASTA and FASTQ random access with samtools' rules, independent of the archive format.
//!
//! - [`checksums`]: refget's MD5 and truncated SHA-512 of each sequence, and their byte form.
//! - [`index`]: the sequence index (`.fai` fields) of a file's bytes, built as `samtools faidx`
//!   builds it, its `.fai` text and a compact byte form for storage.
//! - [`serial`]: the index's compact byte form ([`FastaIndex::to_bytes`],
//!   [`FastaIndex::from_bytes`]), its layout.
//! - [`region`]: region strings (`name:beg-end`) parsed as samtools parses them, and
//!   coordinates to byte offsets.
//! - [`output`]: the exact output of `samtools faidx FILE REGION...` (stdout, stderr, exit
//!   status) from any source of the original bytes.
//!
//! ```
//! use aceapex::fasta::{FastaIndex, FaidxOptions, faidx};
//!
//! let file = b">chr1 test\nACGTACGT\nACG\n";
//! let index = FastaIndex::build(file).unwrap();
//! assert_eq!(index.to_fai(), b"chr1\t11\t11\t8\t9\n");
//! let mut read = |offset: u64, buf: &mut [u8]| -> std::io::Result<usize> {
//!     let rest = &file[(offset as usize).min(file.len())..];
//!     let n = buf.len().min(rest.len());
//!     buf[..n].copy_from_slice(&rest[..n]);
//!     Ok(n)
//! };
//! let (mut out, mut log) = (Vec::new(), Vec::new());
//! let status = faidx(&index, &["chr1:7-10"], &FaidxOptions::default(), &mut read, &mut out, &mut log).unwrap();
//! assert_eq!((status, &out[..]), (0, &b">chr1:7-10\nGTAC\n"[..]));
//! ```

pub mod checksums;
pub mod index;
pub mod output;
pub mod region;
pub mod serial;

pub use index::{FaiRecord, FastaIndex, IndexError, IndexWarning, SeqFormat};
pub use output::{faidx, fetch, write_region, FaidxOptions, FetchError, MarkStrand, RegionStatus};
pub use region::{base_offset, byte_range, parse_region, Region, RegionError, HTS_POS_MAX};
pub use serial::IndexBytesError;
