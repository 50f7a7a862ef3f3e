//! aceapex: absolute-offset LZ77 with interleaved rANS, a multi-threaded CPU encoder and
//! decoder, and GPU decoders, after the ACEAPEX papers (Shavidze, 2026).
//!
//! An archive (`.acx`, specified in `docs/FORMAT.md`) cuts its input into blocks of a fixed
//! size that decode independently (or, with a window larger than a block, after the blocks
//! they copy from); every block carries an XXH3-64 checksum, so a whole archive or any byte
//! range of the original can be restored and verified.
//!
//! # Contents
//!
//! - [`compress`] (and [`compress_with_progress`]): bytes to an archive, under [`Options`].
//! - [`compress_to`]: the same from any reader to any writer, in memory bounded
//!   independently of the input's size.
//! - [`decompress`]: an archive back to its bytes on the CPU, every checksum verified.
//! - [`decompress_to`]: the same from any reader to any writer, streamed in memory bounded
//!   independently of the original's size.
//! - [`Reader`]: an archive opened once (borrowed bytes or a memory-mapped file), read by byte
//!   ranges, decoding only the blocks a range needs.
//! - [`GpuDecoder`] (feature `gpu`): whole-archive decode on an NVIDIA GPU, verified on the
//!   host.
//! - [`BlockCache`]: a [`Reader`] with a cache of decoded blocks, for many small reads.
//! - [`fasta`]: FASTA sequence indexes (the `.fai` fields) and region queries with the rules
//!   and output of `samtools faidx`; [`compress`] stores the index of a FASTA input in the
//!   archive ([`Reader::fasta_index`], [`with_fasta_index`]).
//! - [`Error`]: the one error type, with the typed sources [`FormatError`] (the container)
//!   and [`DecodeError`] (a block, with its index and the [`Status`] it broke).
//!
//! # Example
//!
//! ```
//! use aceapex::{Options, Reader};
//!
//! let data = b"GATTACA, GATTACA, CATTAGA. ".repeat(2_000);
//! // the command line's defaults (level, block size, window)
//! let archive = aceapex::compress(&data, &Options::default())?;
//! assert!(archive.len() < data.len() / 10);
//!
//! // the whole data back, every block and the content checksum verified
//! assert_eq!(aceapex::decompress(&archive)?, data);
//!
//! // one region, decoding only the blocks it lies in
//! let reader = Reader::new(&archive)?;
//! let mut region = vec![0u8; 1_000];
//! reader.read_range(30_000, &mut region)?;
//! assert_eq!(region, data[30_000..31_000]);
//!
//! // damage is an error, never wrong bytes
//! let mut damaged = archive.clone();
//! let last = damaged.len() - 1;
//! damaged[last] ^= 1;
//! assert!(aceapex::decompress(&damaged).is_err());
//! # Ok::<(), aceapex::Error>(())
//! ```
//!
//! # Features
//!
//! - `gpu` (default): [`GpuDecoder`], on the CUDA driver through `cudarc` (loaded at run
//!   time: a machine without a GPU gets an error, not a link failure).
//! - `cli` (default): the `aceapex` command-line tool (clap, indicatif, ctrlc). Library users
//!   turn it off: `aceapex = { version = "0.1", default-features = false }`, adding
//!   `features = ["gpu"]` for the GPU decoder.
//!
//! # Threads
//!
//! [`compress`], [`decompress`] and [`decompress_to`] run on the current rayon thread pool
//! (all cores unless the caller sizes the global pool or runs them inside
//! `ThreadPool::install`).
//!
//! # Internals
//!
//! The modules hidden from this documentation (`format`, `encode`, `decode`, `gpu`, `study`, `device`) serve the command-line tool, the benchmarks and the tests;
//! they are not part of the API and change without notice.

mod error;
mod fasta_record;
mod reader;

/// FASTA sequence indexes and region queries with samtools faidx rules.
pub mod fasta;

/// One archive read through several shards (CPU readers or GPU readers, one per device).
pub mod shard;

/// The format's shared structs and decode cores (crate `aceapex-device`): internals, not part
/// of the API.
#[doc(hidden)]
pub use aceapex_device as device;

// Internals: public for the command-line tool, the benchmarks, the examples and the tests,
// hidden from the documentation, not part of the API (their docs may link to their private
// items, documented with `--document-private-items`).
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod decode;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod encode;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod format;
#[cfg(feature = "gpu")]
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod gpu;
mod options;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod study;

pub use decode::stream::{decompress_to, SeekableArchive};
pub use encode::stream::StreamSummary;
pub use error::{DecodeError, Error, FormatError};
pub use fasta_record::{
    auto_fasta_index, sequence_checksums, with_fasta_index, with_sequence_checksums,
    AUTO_INDEX_MIN_BYTES, AUTO_INDEX_SHARE,
};
// for `info` and `serve`: the records as `Reader::fasta_index` reads them
#[doc(hidden)]
pub use fasta_record::{read_fasta_index, read_sequence_checksums};
#[cfg(feature = "gpu")]
pub use gpu::GpuError;
pub use reader::{BlockCache, Reader};

pub use options::{Options, OptionsError, Target};

// Kept for the crate's own tools and tests; not part of the API.
#[doc(hidden)]
pub use encode::{compress_settings, Settings, TwoBit};
#[doc(hidden)]
pub use format::Archive;

/// What a block broke (FORMAT.md §4-§6): the rule named by [`DecodeError::Block`].
pub use aceapex_device::status::Status;

/// The corpus files (paths under `corpora/`, made by `../shared/corpora/fetch.sh`) that the
/// CPU benchmark (`benches/codec.rs`) and the speed examples (`encode_speed`,
/// `decode_speed`) measure by default: two genomes, two texts, a FASTQ and a protein file.
#[doc(hidden)]
pub const CPU_BENCH_FILES: &[&str] = &[
    "dna/hs37_chrX_first70Mb.fa",
    "dna/TAIR10_chr1.fna",
    "text/gcide.txt",
    "text/moby_dick.txt",
    "fastq/mouse_RNAseq_top100k_1.fq",
    "protein/swissprot201401_GO_BPO.fasta",
];

/// Compresses `input` (any bytes, up to 2^32 blocks) into a complete archive (FORMAT.md §1).
///
/// When `input` is FASTA that `samtools faidx` would index, the archive carries its sequence
/// index (the `.fai` fields) as an extension record (FORMAT.md §3.5, type 1), which
/// [`Reader::fasta_index`] returns and region queries use, and beside it the refget MD5 and
/// truncated SHA-512 of each sequence (FORMAT.md §3.6, type 2; [`sequence_checksums`]),
/// computed in parallel with the encoder; readers that do not know the records still restore
/// the data. The check costs one pass over a FASTA input (other inputs:
/// their first bytes). An index larger than the input's size / [`AUTO_INDEX_SHARE`] (and
/// than [`AUTO_INDEX_MIN_BYTES`]), as of a protein file of many short records, is left out
/// to keep the ratio: [`with_fasta_index`] attaches it anyway. See [`auto_fasta_index`].
///
/// Runs on the current rayon thread pool. Memory: the input, the archive and, per worker
/// thread, its match-finder tables.
///
/// Errors: [`Error::Options`] for options out of range ([`OptionsError`] names the option), or
/// an input of more than 2^32 blocks.
pub fn compress(input: &[u8], options: &Options) -> Result<Vec<u8>, Error> {
    compress_with_progress(input, options, &|_| {})
}

/// [`compress`], calling `progress` with the number of input bytes done as blocks finish
/// (from worker threads, in no particular order; the calls add up to `input.len()`).
///
/// Errors: as [`compress`].
pub fn compress_with_progress(
    input: &[u8],
    options: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<u8>, Error> {
    // the indexing pass and the sequence checksums run beside the encoder's blocks
    let (packed, fasta) = rayon::join(
        || encode::compress(input, options, progress),
        || fasta_record::auto_fasta_records(input),
    );
    let packed = packed?;
    match fasta {
        Some((index, digests)) => {
            fasta_record::with_fasta_records(&packed, &index, digests.as_deref())
        }
        None => Ok(packed),
    }
}

/// Compresses everything `input` yields (standard input, a pipe, a file of any size) into an
/// archive written to `output`, in memory bounded independently of the input's size, and
/// returns the input and archive sizes in bytes ([`StreamSummary`]).
///
/// The archive is byte for byte [`compress`] of the same bytes, with two exceptions for an
/// input longer than 64 MiB (which is coded a batch at a time): where the options leave the
/// minimum match to a trial ([`Options::tries_min_match`]: [`Target::Size`] without
/// `min_match`, the default), the trial samples the first 64 MiB rather than four pieces
/// spread over the whole input, whose length a stream does not tell in advance (set
/// [`Options::with_min_match`] for bytes that never depend on how the input was read); and a
/// FASTA input gets its FASTA index and sequence checksums records (FORMAT.md §3.5, §3.6),
/// built as the input passes, only in plain form (`\n` line ends, no blank line, graphic
/// sequence bytes, each record wrapped at one width): other FASTA gets none
/// ([`StreamSummary::fasta_left_out`]).
///
/// The container puts the header (original size, content checksum), block table and
/// tables before the data (FORMAT.md §1), so nothing reaches `output` until `input` ends:
/// the data section is spooled to an anonymous temporary file in the system's temporary
/// folder (`TMPDIR`), removed however the call ends; the spool holds at most about the
/// archive's size (two-bit literal slices, FORMAT.md §5.7, are spooled and the blocks'
/// other slices coded again from them where the end drops them).
///
/// Memory: inputs up to 64 MiB are held whole (larger ones under [`Target::Gpu`] at levels
/// 1-7 up to 2,048 blocks, whose wide slices depend on the block count); beyond that, two
/// batches of 64 MiB of input (or 4 windows, with a window larger than the block), about 3x
/// a batch of parse buffers, and the block entries (64 bytes a block) and table section,
/// which precede the data section and are written last: the last two are the only part
/// that grows with the input (about 5 MB per GB at 16 KiB blocks).
///
/// Runs on the current rayon thread pool, and reads `input` on one more thread.
///
/// Errors: [`Error::Options`] for options out of range or more than 2^32 blocks,
/// [`Error::Io`] (path `the input`) when reading `input` fails, [`Error::Write`] when writing
/// `output` or the spool fails (a full disk).
pub fn compress_to<R: std::io::Read + Send, W: std::io::Write>(
    input: R,
    mut output: W,
    options: &Options,
) -> Result<StreamSummary, Error> {
    encode::stream::compress_stream(input, &mut output, options, &Default::default(), &|_| {})
}

/// Decodes the archive `archive` (all of its bytes) back to the original data on the CPU,
/// verifying every block checksum and the content checksum (FORMAT.md §6).
///
/// Runs on the current rayon thread pool; the output is allocated once
/// ([`Reader::len`] bytes).
///
/// Errors: [`Error::Format`] when `archive` is not a valid archive (FORMAT.md §2-§5: a wrong
/// magic, an unknown version, a damaged header, block table or tables);
/// [`Error::Decode`] with [`DecodeError::Block`] naming the first damaged block and the
/// rule it broke, [`DecodeError::ContentChecksum`], or [`DecodeError::Alloc`] when the
/// output cannot be allocated.
pub fn decompress(archive: &[u8]) -> Result<Vec<u8>, Error> {
    let a = format::Archive::parse(archive)?;
    Ok(decode::decompress(&a)?)
}

#[cfg(feature = "gpu")]
mod gpu_decoder;
#[cfg(feature = "gpu")]
pub use gpu_decoder::{DeviceBuffer, GpuDecoder, GpuReader};
