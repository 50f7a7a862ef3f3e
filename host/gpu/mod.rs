//! GPU runtime on `cudarc` with dynamic loading: one context, one stream, the embedded PTX
//! module loaded once. With no driver, no device or a build without kernels, [`Gpu::open`]
//! returns a [`GpuError`] and callers fall back to the CPU; nothing here panics.

pub mod decoder;
pub mod kernels;
pub mod launch;
pub mod pieces;
mod resident;
pub mod schedule;
pub mod seek;
pub mod tokens;
pub mod tuning;
pub mod wave;

pub use tuning::GpuTuning;

use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, DriverError};
use std::sync::Arc;

/// The PTX of the device crate, built by `build.rs` for sm_90 (empty with `ACEAPEX_SKIP_PTX`).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/aceapex.ptx"));

/// Why the GPU cannot be used, or what a GPU call hit.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The CUDA driver library (libcuda.so) could not be loaded.
    #[error("no GPU: the CUDA driver library (libcuda.so) was not found")]
    NoDriver,
    /// The driver loaded but reports no usable device.
    #[error("no GPU: the CUDA driver reports no usable device ({0})")]
    NoDevice(String),
    /// This binary was built with `ACEAPEX_SKIP_PTX=1`.
    #[error("no GPU kernels: this binary was built with ACEAPEX_SKIP_PTX=1")]
    NoKernels,
    /// A CUDA driver call failed.
    #[error("CUDA error during {what}: {source}")]
    Driver {
        /// The operation that failed.
        what: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// The archive is valid but this GPU decoder cannot take it (e.g. a dependency depth
    /// beyond the wavefront decoder's level limit); the CPU decoder can.
    #[error("the GPU decoder cannot take this archive: {0}")]
    Unsupported(String),
    /// A kernel reported malformed input through its status word.
    #[error("GPU decode rejected the input: {0}")]
    Status(String),
    /// A trace build's timeline marks do not have the shape this binary expects (its PTX
    /// came from another build: [`GpuTuning::ptx`]).
    #[error("trace marks: {0}")]
    Trace(String),
}

/// Adds the operation name to a driver error.
pub(crate) trait Ctx<T> {
    fn ctx(self, what: &'static str) -> Result<T, GpuError>;
}
impl<T> Ctx<T> for Result<T, DriverError> {
    fn ctx(self, what: &'static str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { what, source })
    }
}

/// An open GPU: context, stream and loaded kernels.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub(crate) k: kernels::Kernels,
    /// The loaded module (its globals: [`Gpu::trace_marks`]).
    module: Arc<CudaModule>,
    name: String,
    sm_count: u32,
    /// CTAs of the dense kernel one SM holds at once (the driver's occupancy answer for its
    /// registers and shared memory; `dense_layout::MIN_CTAS_PER_SM` on an H100/H200).
    dense_ctas_per_sm: u32,
    /// Whether the dense pipe's dense kernel starts while its rANS stage still runs
    /// (programmatic dependent launch: compute capability 9.0 or later, and
    /// [`GpuTuning::overlap`]; `device/src/handoff.rs`).
    overlap: bool,
    /// The tuning given to [`Gpu::open_with`], which archives uploaded to this GPU take by
    /// default ([`decoder::GpuArchive::upload`]).
    tuning: GpuTuning,
}

impl Gpu {
    /// Opens device 0 and loads the embedded module, with the default [`GpuTuning`].
    ///
    /// Errors: [`GpuError::NoDriver`], [`GpuError::NoDevice`], [`GpuError::NoKernels`], or a
    /// driver error while loading the module.
    pub fn open() -> Result<Gpu, GpuError> {
        Gpu::open_with(&GpuTuning::default())
    }

    /// Opens device 0 with `tuning`: its PTX ([`GpuTuning::ptx`]) or the embedded module, its
    /// overlap setting, and its per-archive fields as the default of every archive uploaded
    /// to this GPU.
    ///
    /// Errors: as [`Gpu::open`] (a build without kernels is [`GpuError::NoKernels`] only when
    /// `tuning` brings no PTX).
    pub fn open_with(tuning: &GpuTuning) -> Result<Gpu, GpuError> {
        // SAFETY: is_culib_present only tries to dlopen the driver library; no CUDA call is made.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        // after the driver check: a machine without a GPU reports that, whatever the build
        if PTX.is_empty() && tuning.ptx.is_none() {
            return Err(GpuError::NoKernels);
        }
        let ctx = CudaContext::new(0).map_err(|e| GpuError::NoDevice(e.to_string()))?;
        // SAFETY: every buffer and launch of this crate uses the one stream created below, so
        // stream order alone orders all work (but for the piecewise decode's upload stream,
        // which orders its copies before the decodes with a stream wait, `pieces.rs`); the
        // per-buffer events cudarc would otherwise record (and wait on inside CUDA graph
        // capture, where that is not allowed) are not needed. Called before any buffer is
        // allocated.
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let sm_count = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .ctx("reading the multiprocessor count")? as u32;
        let cc_major = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            )
            .ctx("reading the compute capability")?;
        let overlap = cc_major >= 9 && tuning.overlap;
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(
                tuning.ptx.as_deref().unwrap_or(PTX),
            ))
            .ctx("loading the PTX module")?;
        let k = kernels::Kernels::load(&module)?;
        launch::raise_shared_memory_limits(&k)?;
        let dense_ctas_per_sm = launch::dense_ctas_per_sm(&k)?;
        // a created stream, not the legacy default stream: graphs can only be captured there
        let stream = ctx.new_stream().ctx("creating a stream")?;
        Ok(Gpu {
            ctx,
            stream,
            k,
            module,
            name,
            sm_count,
            dense_ctas_per_sm,
            overlap,
            tuning: tuning.clone(),
        })
    }

    /// The tuning this GPU was opened with ([`Gpu::open_with`]).
    pub fn tuning(&self) -> &GpuTuning {
        &self.tuning
    }

    /// The facts of this GPU the scheduler uses ([`schedule::DeviceFacts`]).
    pub fn facts(&self) -> schedule::DeviceFacts {
        schedule::DeviceFacts {
            sm_count: self.sm_count,
            dense_ctas_per_sm: self.dense_ctas_per_sm,
        }
    }

    /// Whether the dense pipe's two kernels may overlap (see the field `overlap`).
    pub fn overlap(&self) -> bool {
        self.overlap
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// CTAs of the dense kernel one SM holds at once (at least 1).
    pub fn dense_ctas_per_sm(&self) -> u32 {
        self.dense_ctas_per_sm
    }

    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Copies host bytes to a new device buffer.
    pub fn upload(&self, bytes: &[u8]) -> Result<CudaSlice<u8>, GpuError> {
        if bytes.is_empty() {
            return self.stream.alloc_zeros::<u8>(1).ctx("allocating");
        }
        self.stream.clone_htod(bytes).ctx("uploading")
    }

    /// A copy of `bytes` in device memory, followed by zeros up to the next multiple of 16
    /// bytes (at least 16 bytes in all), for kernels that read it in aligned 16-byte words.
    pub fn upload_padded16(&self, bytes: &[u8]) -> Result<CudaSlice<u8>, GpuError> {
        let mut d = self
            .stream
            .alloc_zeros::<u8>(bytes.len().div_ceil(16).max(1) * 16)
            .ctx("allocating")?;
        if !bytes.is_empty() {
            self.stream.memcpy_htod(bytes, &mut d).ctx("uploading")?;
        }
        Ok(d)
    }

    /// A device buffer of `n` bytes, every byte set to `poison` (so unwritten output shows).
    ///
    /// Filled on the device (`cuMemsetD8Async` on the stream): no host buffer and no copy
    /// of the output's size, which would take a large part of an end-to-end decode.
    pub fn alloc_filled(&self, n: usize, poison: u8) -> Result<CudaSlice<u8>, GpuError> {
        let n = n.max(1);
        // SAFETY: u8 has no invalid values, and the memset below writes every byte before
        // anything on this stream can read them.
        let mut buf = unsafe { self.stream.alloc::<u8>(n) }.ctx("allocating the output")?;
        self.fill(&mut buf, poison)?;
        Ok(buf)
    }

    /// Fills every byte of `buf` with `byte`, queued on the stream.
    pub fn fill(&self, buf: &mut CudaSlice<u8>, byte: u8) -> Result<(), GpuError> {
        use cudarc::driver::DevicePtrMut;
        let n = buf.len();
        let (ptr, _record) = buf.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` is this stream's live allocation of `n` bytes; the memset is ordered
        // on the same stream as every later use.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, n, self.stream.cu_stream()) }
            .ctx("filling a buffer with a poison byte")
    }

    /// Copies a device buffer back to the host.
    ///
    /// The host buffer's pages are touched in parallel first (rayon): a fresh buffer's page
    /// faults, taken one by one inside the driver's copy, otherwise cost more than the copy.
    pub fn download(&self, buf: &CudaSlice<u8>) -> Result<Vec<u8>, GpuError> {
        use rayon::prelude::*;
        let n = buf.len();
        let mut host: Vec<u8> = Vec::new();
        host.try_reserve_exact(n).map_err(|_| {
            GpuError::Status(format!(
                "cannot allocate {n} bytes of host memory for the output"
            ))
        })?;
        host.spare_capacity_mut()[..n]
            .par_chunks_mut(1 << 20)
            .for_each(|c| {
                c.fill(std::mem::MaybeUninit::new(0));
            });
        // SAFETY: the loop above initialised all n bytes of the reserved capacity.
        unsafe { host.set_len(n) };
        self.stream.memcpy_dtoh(buf, &mut host).ctx("downloading")?;
        self.sync()?;
        Ok(host)
    }

    /// The timeline marks of a trace build's kernels (`device/src/trace.rs`): after the
    /// stream's work completes, `TRACE_BLOCKS * TRACE_SLOTS` stamps of the GPU's nanosecond
    /// timer, block-major, 0 where nothing was marked since [`Gpu::clear_trace`]. `None` when
    /// the loaded kernels have no marks (every build without the device feature `trace`).
    pub fn trace_marks(&self) -> Result<Option<Vec<u64>>, GpuError> {
        use crate::device::trace::{TRACE_BLOCKS, TRACE_SLOTS, TRACE_SYMBOL};
        let Ok(view) = self.module.get_global(TRACE_SYMBOL, &self.stream) else {
            return Ok(None);
        };
        let mut bytes = vec![0u8; view.len()];
        self.stream
            .memcpy_dtoh(&view, &mut bytes)
            .ctx("downloading trace marks")?;
        self.sync()?;
        let marks: Vec<u64> = bytemuck::pod_collect_to_vec::<u8, u64>(&bytes);
        if marks.len() != TRACE_BLOCKS * TRACE_SLOTS {
            return Err(GpuError::Trace(format!(
                "{TRACE_SYMBOL} holds {} marks, this build expects {}",
                marks.len(),
                TRACE_BLOCKS * TRACE_SLOTS
            )));
        }
        Ok(Some(marks))
    }

    /// Zeroes a trace build's timeline marks (queued on the stream); nothing without them.
    pub fn clear_trace(&self) -> Result<(), GpuError> {
        if let Ok(mut view) = self
            .module
            .get_global(crate::device::trace::TRACE_SYMBOL, &self.stream)
        {
            self.stream
                .memset_zeros(&mut view)
                .ctx("zeroing trace marks")?;
        }
        Ok(())
    }

    /// Waits for all queued work.
    pub fn sync(&self) -> Result<(), GpuError> {
        self.stream.synchronize().ctx("synchronizing")
    }

    /// Runs `f` `iters` times between two timing events and returns the seconds per run.
    pub fn time<F>(&self, iters: u32, mut f: F) -> Result<f64, GpuError>
    where
        F: FnMut() -> Result<(), GpuError>,
    {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).ctx("recording an event")?;
        for _ in 0..iters {
            f()?;
        }
        let end = self.stream.record_event(flags).ctx("recording an event")?;
        end.synchronize().ctx("waiting for an event")?;
        let ms = start.elapsed_ms(&end).ctx("reading event time")?;
        Ok(ms as f64 / 1e3 / iters.max(1) as f64)
    }
}
