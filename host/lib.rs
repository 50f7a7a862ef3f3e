//! aceapex: absolute-offset LZ77 with interleaved rANS, a multi-threaded CPU encoder and
//! decoder, and GPU decoders, after the ACEAPEX papers (Shavidze, 2026).
//!
//! - [`archive`]: the container (FORMAT.md §2-§3): [`archive::compress`], [`archive::Archive`].
//! - [`decode`]: the CPU decoder (whole file, regions).
//! - [`entropy`]: frequency tables and the rANS encoder (FORMAT.md §5).
//! - [`lz`]: match finding and parsing (FORMAT.md §4).
//! - [`gpu`]: the CUDA runtime and GPU decoders (dynamic loading; CPU fallback).
//! - [`device`]: the shared format structs and decode cores (crate `aceapex-device`).
//!
//! `docs/FORMAT.md` is the normative format description.

pub use aceapex_device as device;

pub mod archive;
pub mod cpu;
pub mod decode;
pub mod entropy;
pub mod entry;
pub mod error;
pub mod gpu;
pub mod lz;
pub mod options;

/// The corpus files (paths under `corpora/`, made by `../shared/corpora/fetch.sh`) that the
/// CPU benchmark (`benches/codec.rs`) and the speed examples (`encode_speed`,
/// `decode_speed`) measure by default: two genomes, two texts, a FASTQ and a protein file.
pub const CPU_BENCH_FILES: &[&str] = &[
    "dna/hs37_chrX_first70Mb.fa",
    "dna/TAIR10_chr1.fna",
    "text/gcide.txt",
    "text/moby_dick.txt",
    "fastq/mouse_RNAseq_top100k_1.fq",
    "protein/swissprot201401_GO_BPO.fasta",
];

pub use archive::{compress, Archive};
#[doc(hidden)]
pub use archive::{compress_settings, Settings, TwoBit};
pub use decode::{decompress, extract};
pub use error::{DecodeError, FormatError};
pub use options::{Options, OptionsError, Target};
