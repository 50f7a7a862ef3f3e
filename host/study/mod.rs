//! The measurement study (`aceapex analyze`, `diff-blocks`, `reproduce`): what the match layer
//! of an archive asks of a decoder, measured from its decoded command streams.
//!
//! `analyze` walks every block's commands with the decoder's own rule checks
//! (`aceapex_device::lz::walk_block`) and measures dependency levels, chained commands, match
//! lengths, distances and periods, and the copy stage's write footprint; `diff` compares the
//! blocks of two archives of the same original; `timing` measures the spread of repeated
//! timings and the latency of region reads on the CPU. docs/STUDY.md says what each measure
//! means and how it relates to the ACEAPEX papers' claims.

pub mod analyze;
pub mod diff;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod timing;

pub use analyze::{analyze, Analysis, BlockAnalysis, Summary, ValueCounts};
pub use diff::{diff, BlockDiff, DiffError};
