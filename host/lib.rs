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
pub mod error;
pub mod gpu;
pub mod lz;

pub use archive::{compress, Archive, EncodeOptions};
pub use decode::{decompress, extract};
pub use error::{DecodeError, FormatError};
