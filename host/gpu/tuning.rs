//! [`GpuTuning`]: the GPU decoder's adjustable choices, passed explicitly (the library reads
//! no environment variable). [`GpuTuning::default`] is the decoder's normal behaviour; the
//! other values exist for tests and benchmarks that compare two paths on the same archive.

/// Choices of the GPU decoder that a caller may set instead of the rules of
/// [`super::schedule`]. Given to [`super::Gpu::open_with`] (device-wide fields) and
/// [`super::decoder::GpuArchive::upload_with`] (per-archive fields); [`super::Gpu::open`]
/// and [`super::decoder::GpuArchive::upload`] use the default.
///
/// Every value decodes the same bytes; only the speed differs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuTuning {
    /// Whether the dense pipe's two kernels may overlap (programmatic dependent launch,
    /// `device/src/handoff.rs`), where the GPU allows it (compute capability 9.0 or later).
    /// Default `true`; `false` runs them one after the other, for comparisons.
    pub overlap: bool,
    /// PTX to load instead of the embedded kernels, with the same entry points and
    /// shared-memory layout (e.g. a build with the device feature `trace`, or other
    /// occupancy directives), so that one host binary can time several kernel builds.
    /// Default `None`: the PTX `build.rs` embedded.
    pub ptx: Option<String>,
    /// Whether the rANS stage stages the context pairs' second tables of the literal and
    /// command streams in shared memory (FORMAT.md §5.4). Default `None`: the rule of
    /// [`super::schedule::stage_pair_tables`]; `Some(_)` forces either path (tests).
    pub stage_pair_tables: Option<bool>,
    /// Whether the rANS stage stages packed literal tables' expansion slots in shared
    /// memory (FORMAT.md §5.6). Default `None`: when the archive takes the packed kernel;
    /// `Some(_)` forces either path (tests).
    pub stage_expansion_tables: Option<bool>,
    /// Whether [`super::decoder::decompress_with`] prints the wall time of each phase
    /// (upload, output allocation, decode with status, download, host verification) to
    /// standard error, waiting for the GPU after each. Default `false`.
    pub print_phases: bool,
}

impl Default for GpuTuning {
    fn default() -> GpuTuning {
        GpuTuning {
            overlap: true,
            ptx: None,
            stage_pair_tables: None,
            stage_expansion_tables: None,
            print_phases: false,
        }
    }
}

impl GpuTuning {
    /// This tuning with `overlap` set (see the field).
    pub fn with_overlap(mut self, on: bool) -> GpuTuning {
        self.overlap = on;
        self
    }

    /// This tuning with `ptx` set (see the field).
    pub fn with_ptx(mut self, ptx: Option<String>) -> GpuTuning {
        self.ptx = ptx;
        self
    }

    /// This tuning with `stage_pair_tables` set (see the field).
    pub fn with_stage_pair_tables(mut self, stage: Option<bool>) -> GpuTuning {
        self.stage_pair_tables = stage;
        self
    }

    /// This tuning with `stage_expansion_tables` set (see the field).
    pub fn with_stage_expansion_tables(mut self, stage: Option<bool>) -> GpuTuning {
        self.stage_expansion_tables = stage;
        self
    }

    /// This tuning with `print_phases` set (see the field).
    pub fn with_print_phases(mut self, on: bool) -> GpuTuning {
        self.print_phases = on;
        self
    }
}
