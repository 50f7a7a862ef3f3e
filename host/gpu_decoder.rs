//! [`GpuDecoder`]: whole-archive decode on an NVIDIA GPU (feature `gpu`).

use crate::error::{DecodeError, Error};
use crate::format::Archive;
use crate::gpu;
use crate::gpu::seek::RangeStatus;
use crate::Reader;
use cudarc::driver::{CudaSlice, DevicePtr};
use std::sync::Arc;

/// An NVIDIA GPU opened for decoding: one CUDA context and stream, the decoder kernels
/// loaded once. Decodes whole archives; every output is verified on the host against every
/// block checksum and the content checksum (FORMAT.md §6) before it is returned.
///
/// The CUDA driver is loaded at run time: on a machine without one, [`GpuDecoder::open`]
/// returns an error (callers then use [`crate::decompress`]).
pub struct GpuDecoder {
    gpu: gpu::Gpu,
    /// The page-locked buffers of [`GpuDecoder::decompress_to`], kept between decodes.
    staging: std::sync::Mutex<gpu::pieces::Staging>,
}

impl GpuDecoder {
    /// Opens the first CUDA device.
    ///
    /// Errors: [`Error::Gpu`] when there is no driver, no usable device, or this build has
    /// no kernels (built with `ACEAPEX_SKIP_PTX=1`).
    pub fn open() -> Result<GpuDecoder, Error> {
        Ok(GpuDecoder {
            gpu: gpu::Gpu::open()?,
            staging: Default::default(),
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

    /// Decodes the archive `archive` (all of its bytes) on the GPU in pieces and writes the
    /// original to `out`, in order: for archives whose output does not fit the device's free
    /// memory, or should not be held whole in host memory. Each piece (whole table groups,
    /// sized from the free device memory, at most [`gpu::pieces::MAX_PIECE_OUTPUT`] bytes of
    /// output) is uploaded while the one before decodes, and written once every one of its
    /// blocks passed its status and checksum; the content checksum is checked after the last
    /// piece (`gpu::pieces` tells the memory; the page-locked host buffers, up to twice the
    /// largest piece's output and data section, are kept for the next call). Returns the
    /// number of bytes written.
    ///
    /// Errors: [`Error::Format`] when `archive` is not a valid archive; [`Error::Gpu`] with
    /// `GpuError::Unsupported` for an archive whose window crosses blocks (decode it with
    /// [`crate::decompress_to`], which streams it on the CPU) or a table group larger than
    /// the free device memory allows, or for a CUDA failure; [`Error::Decode`] naming the
    /// first damaged block (nothing of its piece written) or the content checksum (after all
    /// was written); [`Error::Write`] when `out` fails. On any error the bytes already
    /// written are not the original and must be discarded.
    pub fn decompress_to(&self, archive: &[u8], out: impl std::io::Write) -> Result<u64, Error> {
        self.decompress_to_with(archive, out, gpu::pieces::PiecePlan::Auto)
            .map(|s| s.bytes)
    }

    /// [`GpuDecoder::decompress_to`] with the pieces chosen by `plan` (tests force a count),
    /// returning what it did.
    ///
    /// Errors: as [`GpuDecoder::decompress_to`].
    #[doc(hidden)]
    pub fn decompress_to_with(
        &self,
        archive: &[u8],
        out: impl std::io::Write,
        plan: gpu::pieces::PiecePlan,
    ) -> Result<gpu::pieces::PieceStats, Error> {
        let a = Archive::parse(archive)?;
        let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        gpu::pieces::decompress_to_staged(&self.gpu, &a, out, plan, &mut staging)
    }

    /// Uploads `archive` to the GPU and keeps it there for random access: a [`GpuReader`]
    /// reads byte ranges of the original from device memory, decoding only the blocks they
    /// lie in. The device holds the data section, the block table and the expanded decode
    /// tables ([`GpuReader::resident_bytes`]), plus the decoded-stream scratch of the
    /// entropy-coded blocks on first use.
    ///
    /// Errors: [`Error::Format`] when `archive` is not a valid archive; [`Error::Gpu`] when
    /// device memory runs out, the archive's window crosses blocks (the CPU [`Reader`]
    /// reads those), or a CUDA call fails.
    pub fn upload<'a>(&'a self, archive: &'a [u8]) -> Result<GpuReader<'a>, Error> {
        GpuReader::upload(DecoderRef::Borrowed(self), Reader::new(archive)?)
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

/// An archive resident in GPU memory, read by byte ranges ([`GpuDecoder::upload`]).
///
/// A batch of ranges is one submission: the host sorts the blocks the ranges lie in, uploads
/// the request in one copy and launches at most four kernels (entropy decode of the blocks
/// that need it, the match layer into one slot per block, every block's XXH3-64 on the
/// device, the ranges gathered into the caller's buffer); only per-range status words come
/// back. A block the GPU's dense kernel cannot take (rare: blocks with more commands or
/// matches than its shared memory holds) is read on the CPU for the ranges that need it.
///
/// A `GpuReader` is `Send` and `Sync`: reads from several threads queue on the decoder's one
/// stream, each batch whole. [`GpuDecoder::upload_owned`] makes one that borrows nothing
/// (`GpuReader<'static>`), for holders that outlive any borrow.
pub struct GpuReader<'a> {
    dec: DecoderRef<'a>,
    ga: SeekArchive,
    cpu: Reader<'a>,
}

/// Bytes in GPU memory, owned by the caller ([`GpuReader::alloc`]).
pub struct DeviceBuffer {
    buf: CudaSlice<u8>,
}

impl DeviceBuffer {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }

    /// Its device address (a `CUdeviceptr`), for handing the bytes to other CUDA code
    /// (DLPack, a kernel of the caller's) on the decoder's device.
    pub fn device_ptr(&self, reader: &GpuReader<'_>) -> u64 {
        self.buf.device_ptr(reader.dec.gpu.stream()).0
    }
}

impl GpuReader<'_> {
    /// Size of the original data in bytes.
    pub fn len(&self) -> u64 {
        self.cpu.len()
    }

    /// Whether the original data is empty.
    pub fn is_empty(&self) -> bool {
        self.cpu.is_empty()
    }

    /// Bytes of the archive held in device memory.
    pub fn resident_bytes(&self) -> u64 {
        self.ga.0.resident_bytes
    }

    /// A device buffer of `len` bytes (zeroed), for [`GpuReader::read_ranges`].
    ///
    /// Errors: [`Error::Gpu`] when device memory runs out.
    pub fn alloc(&self, len: usize) -> Result<DeviceBuffer, Error> {
        let buf = self
            .dec
            .gpu
            .stream()
            .alloc_zeros::<u8>(len.max(1))
            .map_err(|source| gpu::GpuError::Driver {
                what: "allocating a device buffer",
                source,
            })?;
        Ok(DeviceBuffer { buf })
    }

    /// Reads `ranges` (`(offset, length)` in original bytes, each at least one byte) into
    /// `out`, back to back in request order from its byte 0 (`out` must hold the sum of the
    /// lengths); returns when the bytes are in `out`. Every block read is verified against
    /// its checksum (FORMAT.md §6) on the device.
    ///
    /// Errors: [`Error::Decode`] with [`DecodeError::Region`] for a range that is empty or
    /// reaches past the end, [`DecodeError::Block`] naming the first damaged block of the
    /// first damaged range (`out` is then unspecified); [`Error::Gpu`] for an `out` too
    /// small or a CUDA failure.
    pub fn read_ranges(&self, ranges: &[(u64, u64)], out: &mut DeviceBuffer) -> Result<(), Error> {
        let size = self.len();
        for &(offset, length) in ranges {
            if length == 0 || offset > size || length > size - offset {
                return Err(DecodeError::Region {
                    offset,
                    length,
                    size,
                }
                .into());
            }
        }
        let found = self.ga.read_ranges(&self.dec.gpu, ranges, &mut out.buf)?;
        let bs = self.cpu.block_size() as u64;
        let mut at = 0u64;
        for (&(offset, length), st) in ranges.iter().zip(found) {
            match st {
                RangeStatus::Ok => {}
                RangeStatus::Bad {
                    status: crate::Status::Fallback,
                    ..
                } => {
                    // the dense kernel's shared memory cannot hold this block: the CPU reads
                    // the range (verified there) and it goes to its place in `out`
                    let mut bytes = vec![0u8; length as usize];
                    self.cpu.read_range(offset, &mut bytes)?;
                    self.dec
                        .gpu
                        .stream()
                        .memcpy_htod(
                            &bytes,
                            &mut out.buf.slice_mut(at as usize..(at + length) as usize),
                        )
                        .map_err(|source| gpu::GpuError::Driver {
                            what: "copying a range read on the CPU",
                            source,
                        })?;
                }
                RangeStatus::Bad { block, status } => {
                    let start = block as u64 * bs;
                    return Err(DecodeError::Block {
                        block,
                        start,
                        end: (start + bs).min(size),
                        status,
                    }
                    .into());
                }
            }
            at += length;
        }
        self.dec
            .gpu
            .stream()
            .synchronize()
            .map_err(|source| gpu::GpuError::Driver {
                what: "waiting for the ranges",
                source,
            })?;
        Ok(())
    }

    /// [`GpuReader::read_ranges`] into host memory: the ranges' bytes back to back.
    ///
    /// Errors: as [`GpuReader::read_ranges`].
    pub fn read_ranges_to_vec(&self, ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
        let total: u64 = ranges.iter().map(|r| r.1).sum();
        let mut out = self.alloc(total as usize)?;
        self.read_ranges(ranges, &mut out)?;
        let mut host = vec![0u8; total as usize];
        if total > 0 {
            self.dec
                .gpu
                .stream()
                .memcpy_dtoh(&out.buf.slice(..total as usize), &mut host)
                .map_err(|source| gpu::GpuError::Driver {
                    what: "copying the ranges to the host",
                    source,
                })?;
            self.dec
                .gpu
                .stream()
                .synchronize()
                .map_err(|source| gpu::GpuError::Driver {
                    what: "waiting for the copy",
                    source,
                })?;
        }
        Ok(host)
    }
}

impl std::fmt::Debug for GpuReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuReader")
            .field("len", &self.len())
            .field("resident_bytes", &self.resident_bytes())
            .finish()
    }
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.len())
            .finish()
    }
}

// The owned form of the random-access reader: a separate impl block (and the two types below)
// so that it stands apart from the whole-archive decode above.

impl GpuDecoder {
    /// [`GpuDecoder::upload`] into a reader that borrows nothing: it shares this decoder (one
    /// `Arc` reference) and owns `reader` (a file's memory map from [`Reader::open`], or
    /// [`Reader::new`] of bytes that live as long as the program). For holders that outlive
    /// any borrow, such as a Python object or a server's shared state; the reader can move to
    /// and be shared by other threads. The device holds the compressed archive only
    /// ([`GpuReader::resident_bytes`]); ranges are decoded on request.
    ///
    /// Errors: as [`GpuDecoder::upload`].
    pub fn upload_owned(
        self: &Arc<Self>,
        reader: Reader<'static>,
    ) -> Result<GpuReader<'static>, Error> {
        GpuReader::upload(DecoderRef::Shared(Arc::clone(self)), reader)
    }
}

impl<'a> GpuReader<'a> {
    /// Uploads `cpu`'s archive with `dec` (one definition for both forms of the reader).
    ///
    /// Errors: as [`GpuDecoder::upload`].
    fn upload(dec: DecoderRef<'a>, cpu: Reader<'a>) -> Result<GpuReader<'a>, Error> {
        if cpu.archive().cross_block() {
            return Err(gpu::GpuError::Unsupported(gpu::seek::CROSS_BLOCK.into()).into());
        }
        let ga = gpu::decoder::GpuArchive::upload(&dec.gpu, cpu.archive())?;
        Ok(GpuReader {
            dec,
            ga: SeekArchive(ga),
            cpu,
        })
    }
}

impl DeviceBuffer {
    /// The device allocation underneath (at least one byte, also for an empty buffer), for
    /// callers that hand it on with cudarc, the same version as this crate's: a buffer that
    /// must outlive the reader that filled it (its stream and context go with it).
    pub fn into_cuda_slice(self) -> CudaSlice<u8> {
        self.buf
    }
}

/// The decoder a [`GpuReader`] reads with: borrowed ([`GpuDecoder::upload`]) or shared
/// ([`GpuDecoder::upload_owned`]).
enum DecoderRef<'a> {
    Borrowed(&'a GpuDecoder),
    Shared(Arc<GpuDecoder>),
}

impl std::ops::Deref for DecoderRef<'_> {
    type Target = GpuDecoder;

    fn deref(&self) -> &GpuDecoder {
        match self {
            DecoderRef::Borrowed(d) => d,
            DecoderRef::Shared(d) => d,
        }
    }
}

/// An archive resident on the GPU that is read only through its random-access path
/// (`GpuArchive::read_ranges`, `gpu/seek.rs`): nothing else is reachable through this type.
struct SeekArchive(gpu::decoder::GpuArchive);

impl SeekArchive {
    /// `GpuArchive::read_ranges`: the only call made on the archive.
    fn read_ranges(
        &self,
        gpu: &gpu::Gpu,
        ranges: &[(u64, u64)],
        out: &mut CudaSlice<u8>,
    ) -> Result<Vec<RangeStatus>, gpu::GpuError> {
        self.0.read_ranges(gpu, ranges, out)
    }
}

// SAFETY: a `GpuArchive` is neither Send nor Sync through one field only, the wavefront
// decoder's state (`GpuArchive::wave`), which holds a CUDA graph (raw driver handles that
// cudarc does not mark Send). A `SeekArchive` is read only through `GpuArchive::read_ranges`,
// which never makes that state (it stays `None`: an archive whose window crosses blocks, the
// only kind the wavefront decoder reads, is refused before the upload). The other fields are
// device buffers, page-locked buffers and handles that cudarc marks Send + Sync, plain host
// data, atomics, and mutexes of those; the random-access path's mutable state (request,
// slots, status words) sits behind its mutex from a request's upload to the read of its
// status words, and the CUDA stream it queues work on may be used from any thread.
unsafe impl Send for SeekArchive {}
// SAFETY: as for Send above: `&SeekArchive` reaches only `read_ranges`, whose shared state is
// behind a mutex.
unsafe impl Sync for SeekArchive {}

/// The parts of a [`GpuReader`] other than its archive are Send + Sync on their own (so the
/// reader is exactly as thread-safe as the SAFETY notes above say).
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<GpuDecoder>();
    send_sync::<Reader<'static>>();
    send_sync::<DeviceBuffer>();
    send_sync::<GpuReader<'static>>();
};
