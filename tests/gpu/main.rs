//! GPU tests. Each test that needs a GPU is `#[ignore]`d, so that a run without a GPU
//! reports it as ignored, not passed; `cargo test --test gpu -- --ignored` runs them, and
//! there each fails if no GPU is usable (no driver, no device, a build without kernels).
//!
//! Every GPU output buffer is poisoned before the kernels run, so unwritten bytes show.

use aceapex::device::dense_layout::{STAGES_ALL, STAGE_SEQ_PARSE};
use aceapex::device::format::LANES_TWO_BIT;
use aceapex::encode::{compress_settings, Settings, TwoBit};
use aceapex::format::Archive;
use aceapex::gpu::launch::{self, CopyVariant};
use aceapex::gpu::schedule;
use aceapex::gpu::tokens::{generate, Shape};
use aceapex::gpu::{decoder, Gpu, GpuTuning};
use std::io::Write;

#[path = "../common/mod.rs"]
mod common;
mod decoders;
mod fail_closed;
mod hostile;
mod kernels;
mod lines;
mod pieces;
mod runs;
mod seek;

#[allow(unused_imports)]
use {decoders::*, fail_closed::*, kernels::*, seek::*};

/// The GPU with the default tuning; panics (fails the test) when none is usable: these tests
/// run only when asked for (`--ignored`), and then a missing GPU is a failure, not a skip.
pub(crate) fn gpu() -> Gpu {
    gpu_with(&GpuTuning::default())
}

/// [`gpu`] with `tuning`.
pub(crate) fn gpu_with(tuning: &GpuTuning) -> Gpu {
    Gpu::open_with(tuning).unwrap_or_else(|e| panic!("this GPU test needs a usable GPU: {e}"))
}
