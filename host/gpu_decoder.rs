//! [`GpuDecoder`]: whole-archive decode on an NVIDIA GPU (feature `gpu`).

use crate::error::Error;
use crate::format::Archive;
use crate::gpu;

/// An NVIDIA GPU opened for decoding: one CUDA context and stream, the decoder kernels
/// loaded once. Decodes whole archives; every output is verified on the host against every
/// block checksum and the content checksum (FORMAT.md §6) before it is returned.
///
/// The CUDA driver is loaded at run time: on a machine without one, [`GpuDecoder::open`]
/// returns an error (callers then use [`crate::decompress`]).
pub struct GpuDecoder {
    gpu: gpu::Gpu,
}

impl GpuDecoder {
    /// Opens the first CUDA device.
    ///
    /// Errors: [`Error::Gpu`] when there is no driver, no usable device, or this build has
    /// no kernels (built with `ACEAPEX_SKIP_PTX=1`).
    pub fn open() -> Result<GpuDecoder, Error> {
        Ok(GpuDecoder {
            gpu: gpu::Gpu::open()?,
        })
    }

    /// The device's name as the driver reports it (e.g. "NVIDIA H100 80GB HBM3").
    pub fn name(&self) -> &str {
        self.gpu.name()
    }

    /// Decodes the archive `archive` (all of its bytes) on the GPU: archives of independent
    /// blocks through the dense decoder, archives whose window crosses blocks through the
    /// wavefront decoder. Same result as [`crate::decompress`].
    ///
    /// Errors: [`Error::Format`] when `archive` is not a valid archive (FORMAT.md §2-§5);
    /// [`Error::Gpu`] when a block is damaged (a kernel's status or a checksum), when this
    /// decoder cannot take the archive (`GpuError::Unsupported`: the CPU can), or when a CUDA
    /// call fails.
    pub fn decompress(&self, archive: &[u8]) -> Result<Vec<u8>, Error> {
        let a = Archive::parse(archive)?;
        Ok(gpu::decoder::decompress(&self.gpu, &a)?)
    }

    /// The runtime underneath, for the crate's own tools.
    #[doc(hidden)]
    pub fn gpu(&self) -> &gpu::Gpu {
        &self.gpu
    }
}

impl std::fmt::Debug for GpuDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDecoder")
            .field("name", &self.name())
            .finish()
    }
}
