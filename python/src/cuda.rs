//! `device="cuda"`: the compressed archive resident on the GPU, the ranges asked for decoded
//! there on request, the results handed to Python as [`DeviceBuffer`]s that PyTorch, CuPy and
//! JAX take through DLPack (`__dlpack__`, `__dlpack_device__`) without a copy through the host.
//!
//! The reads go through the library's [`GpuReader`] (`GpuDecoder::upload_owned`): a batch of
//! ranges is one submission that decodes only the blocks the ranges lie in, verifies each of
//! them against its checksum on the device (FORMAT.md §6) and gathers the ranges into one new
//! device allocation. An archive whose window crosses blocks cannot be read that way (a
//! block's matches reach into earlier blocks): such an archive is decoded whole once (the
//! library's GPU decoders, verified on the host, or the CPU where the GPU decoder does not
//! take it) and the ranges are copied out of the decoded data, which stays resident.

use crate::errors::{to_py, DeviceError};
use aceapex::gpu::decoder::{check_status, verify, Decoder, GpuArchive};
use aceapex::gpu::{Gpu, GpuError};
use aceapex::{GpuDecoder, GpuReader};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

/// An archive resident on the GPU (each form boxed: both are large).
pub enum Resident {
    /// The compressed archive in device memory; ranges decoded on request.
    Compressed {
        /// The decoder (its stream and device), shared with `reader`.
        dec: Arc<GpuDecoder>,
        reader: Box<GpuReader<'static>>,
    },
    /// An archive whose window crosses blocks: its decoded data in device memory.
    Decoded(Box<Decoded>),
}

/// The decoded data of an archive, resident in GPU memory.
pub struct Decoded {
    gpu: Gpu,
    /// The original data (`len` bytes; at least one byte is allocated).
    data: CudaSlice<u8>,
    len: u64,
}

fn gpu_err(e: GpuError) -> PyErr {
    to_py(aceapex::Error::Gpu(e))
}

/// `DeviceError` for a GPU that cannot be used, with the way round it.
fn no_gpu(e: &(dyn std::error::Error + 'static)) -> PyErr {
    DeviceError::new_err(format!(
        "device=\"cuda\": {} (device=\"cpu\" reads the archive on the CPU)",
        crate::errors::message(e)
    ))
}

impl Resident {
    /// Opens the first GPU and makes the archive of `path` (already opened as `reader` on the
    /// CPU) resident there: compressed, or decoded when its window crosses blocks.
    ///
    /// Errors: `DeviceError` when there is no CUDA driver or GPU, the build has no kernels,
    /// device memory runs out, a CUDA call fails or (decoded whole) a block is damaged;
    /// `OSError` or `ArchiveError` when the file cannot be opened again.
    pub fn load(path: &std::path::Path, reader: &aceapex::Reader<'static>) -> PyResult<Resident> {
        if reader.archive().cross_block() {
            return Decoded::load(reader).map(|d| Resident::Decoded(Box::new(d)));
        }
        let dec = Arc::new(GpuDecoder::open().map_err(|e| no_gpu(&e))?);
        // a second map of the file: the GPU reader owns its own (the CPU reader's can be
        // closed on its own)
        let own = aceapex::Reader::open(path).map_err(to_py)?;
        let reader = Box::new(dec.upload_owned(own).map_err(to_py)?);
        Ok(Resident::Compressed { dec, reader })
    }

    /// Bytes of device memory the archive keeps (compressed archive and tables, or the
    /// decoded data).
    pub fn resident_bytes(&self) -> u64 {
        match self {
            Resident::Compressed { reader, .. } => reader.resident_bytes(),
            Resident::Decoded(d) => d.len.max(1),
        }
    }

    /// "compressed" or "decoded".
    pub fn form(&self) -> &'static str {
        match self {
            Resident::Compressed { .. } => "compressed",
            Resident::Decoded(_) => "decoded",
        }
    }

    /// Reads each `(offset, length)` of `ranges` on the GPU into one new device allocation,
    /// back to back, and returns the buffers (views of it), in order, or with `join` one
    /// buffer of them all. Waits for the reads: the buffers are ready for any stream.
    ///
    /// Errors: `IndexError` for a range past the end of the data; `ArchiveError` for a
    /// damaged block; `DeviceError` when allocating, decoding or copying fails.
    pub fn gather(&self, ranges: &[(u64, u64)], join: bool) -> PyResult<Vec<DeviceBuffer>> {
        let size = match self {
            Resident::Compressed { reader, .. } => reader.len(),
            Resident::Decoded(d) => d.len,
        };
        let mut total = 0u64;
        for &(offset, length) in ranges {
            if offset.checked_add(length).is_none_or(|end| end > size) {
                return Err(PyIndexError::new_err(format!(
                    "bytes {offset}..{} lie outside the original data ({size} bytes)",
                    offset as u128 + length as u128,
                )));
            }
            total += length;
        }
        let total = usize::try_from(total)
            .map_err(|_| PyValueError::new_err("ranges too large for this machine"))?;
        let batch = match self {
            Resident::Compressed { dec, reader } => {
                let mut out = reader.alloc(total).map_err(to_py)?;
                // the reader takes ranges of at least one byte; an empty range adds nothing
                // to the output's layout, so leaving it out keeps every other in place
                let asked: Vec<(u64, u64)> = ranges.iter().copied().filter(|r| r.1 > 0).collect();
                if !asked.is_empty() {
                    reader.read_ranges(&asked, &mut out).map_err(to_py)?;
                }
                let gpu = dec.gpu();
                Batch {
                    data: out.into_cuda_slice(),
                    stream: gpu.stream().clone(),
                    ordinal: gpu.context().ordinal() as i32,
                }
            }
            Resident::Decoded(d) => d.gather(ranges, total)?,
        };
        let batch = Arc::new(batch);
        if join {
            return Ok(vec![DeviceBuffer {
                batch,
                offset: 0,
                len: total,
            }]);
        }
        let mut at = 0usize;
        Ok(ranges
            .iter()
            .map(|&(_, length)| {
                let b = DeviceBuffer {
                    batch: batch.clone(),
                    offset: at,
                    len: length as usize,
                };
                at += length as usize;
                b
            })
            .collect())
    }
}

impl Decoded {
    /// Opens the first GPU, decodes `reader`'s archive there and keeps the result.
    ///
    /// Errors: `DeviceError` when there is no CUDA driver or GPU, the build has no kernels,
    /// a CUDA call fails or a block is damaged (its status word or checksum).
    fn load(reader: &aceapex::Reader<'static>) -> PyResult<Decoded> {
        let gpu = Gpu::open().map_err(|e| no_gpu(&e))?;
        let a = reader.archive();
        let len = reader.len();
        let data = match GpuArchive::upload(&gpu, a) {
            Ok(ga) => {
                let (mut out, mut status) = ga.output_buffers(&gpu).map_err(gpu_err)?;
                let d = Decoder::for_archive(a.cross_block());
                let st = ga
                    .decode_all_status(&gpu, d, &mut out, &mut status)
                    .map_err(gpu_err)?;
                check_status(&st[..ga.block_count() as usize]).map_err(gpu_err)?;
                // verified once on the host, as every GPU decode of the library is
                let mut host = gpu.download(&out).map_err(gpu_err)?;
                host.truncate(len as usize);
                verify(a, &host).map_err(gpu_err)?;
                out
            }
            Err(GpuError::Unsupported(_)) => {
                // an archive the GPU decoder does not take: decoded (and verified) on the CPU
                let host = reader.decompress().map_err(to_py)?;
                gpu.upload(&host).map_err(gpu_err)?
            }
            Err(e) => return Err(gpu_err(e)),
        };
        gpu.sync().map_err(gpu_err)?;
        Ok(Decoded { gpu, data, len })
    }

    /// Copies each `(offset, length)` of `ranges` (inside the data; `total` bytes in all) out
    /// of the resident data into one new device allocation, one after the other; waits for
    /// the copies.
    ///
    /// Errors: `DeviceError` when allocating or copying fails.
    fn gather(&self, ranges: &[(u64, u64)], total: usize) -> PyResult<Batch> {
        let stream = self.gpu.stream().clone();
        let fail = |what: &str, e: cudarc::driver::DriverError| {
            DeviceError::new_err(format!("{what}: {e}"))
        };
        let mut out = stream
            .alloc_zeros::<u8>(total.max(1))
            .map_err(|e| fail("allocating the batch", e))?;
        {
            // the two base addresses once, then the copies straight through the driver: the
            // safe per-view copy records two events a call, which costs more than the copy of
            // a short range
            let (src, _src_sync) = self.data.device_ptr(&stream);
            let (dst, _dst_sync) = out.device_ptr_mut(&stream);
            let mut copies = Vec::with_capacity(ranges.len());
            let mut at = 0u64;
            for &(offset, length) in ranges {
                if length > 0 {
                    copies.push((dst + at, src + offset, length as usize));
                }
                at += length;
            }
            // SAFETY: every source range lies inside the resident allocation (checked by the
            // caller), every destination inside `out` (`at + length <= total`); both live
            // until the synchronize below, and the copies are ordered on `stream` after every
            // write to either buffer.
            unsafe { copy_on_device(&copies, &stream) }
                .map_err(|e| fail("copying the ranges on the device", e))?;
        }
        stream
            .synchronize()
            .map_err(|e| fail("waiting for the copies", e))?;
        Ok(Batch {
            data: out,
            stream,
            ordinal: self.gpu.context().ordinal() as i32,
        })
    }
}

/// Queues the device-to-device copies `(dst, src, bytes)` on `stream`, one driver call a copy
/// (used for archives decoded whole only; the compressed form gathers in its own kernel).
///
/// # Safety
/// Every range must lie inside a live allocation of the stream's context, and stay alive and
/// unwritten by others until the stream has run the copies.
unsafe fn copy_on_device(
    copies: &[(u64, u64, usize)],
    stream: &CudaStream,
) -> Result<(), cudarc::driver::DriverError> {
    for &(dst, src, bytes) in copies {
        // SAFETY: the range is valid by this function's contract.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }?;
    }
    Ok(())
}

/// One device allocation holding a batch's ranges; freed when the last buffer (and the last
/// tensor exported from one) is gone.
struct Batch {
    data: CudaSlice<u8>,
    stream: Arc<CudaStream>,
    ordinal: i32,
}

/// A range of bytes in GPU memory (a 1-D `uint8` tensor through DLPack).
#[pyclass(frozen, module = "aceapex", name = "DeviceBuffer")]
pub struct DeviceBuffer {
    batch: Arc<Batch>,
    offset: usize,
    len: usize,
}

impl DeviceBuffer {
    /// The device address of the first byte.
    fn address(&self) -> u64 {
        let (ptr, _sync) = self.batch.data.device_ptr(&self.batch.stream);
        ptr + self.offset as u64
    }
}

// DLPack 0.8's C structs (dlpack.h), the unversioned form every consumer accepts.

/// `DLDevice`.
#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor`.
#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `kDLCUDA`.
const DL_CUDA: i32 = 2;
/// `kDLUInt`.
const DL_UINT: u8 = 1;
const CAPSULE_NAME: &CStr = c"dltensor";

/// What an exported tensor owns: the managed tensor (first, so that its address is the
/// allocation's), its shape and strides, and a reference to the batch.
#[repr(C)]
struct Exported {
    managed: DLManagedTensor,
    shape: [i64; 1],
    strides: [i64; 1],
    _owner: Arc<Batch>,
}

/// The DLPack deleter: frees the [`Exported`] (the batch goes with its last reference).
unsafe extern "C" fn delete_exported(managed: *mut DLManagedTensor) {
    if !managed.is_null() {
        // SAFETY: `managed` is the first field of a `Box<Exported>` leaked by `__dlpack__`
        // (repr(C): same address); the consumer calls the deleter once.
        drop(unsafe { Box::from_raw(managed.cast::<Exported>()) });
    }
}

/// The capsule's destructor: a capsule no consumer took (still named "dltensor") frees its
/// tensor; a consumer renames it "used_dltensor" and calls the deleter itself.
unsafe extern "C" fn capsule_destructor(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: called by Python with the capsule being destroyed, the GIL held.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, CAPSULE_NAME.as_ptr()) == 1 {
            let p = pyo3::ffi::PyCapsule_GetPointer(capsule, CAPSULE_NAME.as_ptr());
            delete_exported(p.cast::<DLManagedTensor>());
        }
    }
}

#[pymethods]
impl DeviceBuffer {
    /// Length in bytes.
    fn __len__(&self) -> usize {
        self.len
    }

    /// Length in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.len
    }

    /// "cuda:N".
    #[getter]
    fn device(&self) -> String {
        format!("cuda:{}", self.batch.ordinal)
    }

    /// The device address of the first byte.
    #[getter]
    fn ptr(&self) -> u64 {
        self.address()
    }

    /// A copy of the bytes on the host (for checks; the point of the buffer is not to need it).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let stream = &self.batch.stream;
        let view = self.batch.data.slice(self.offset..self.offset + self.len);
        let host = py
            .detach(|| {
                let mut host = vec![0u8; self.len];
                if self.len > 0 {
                    stream.memcpy_dtoh(&view, &mut host)?;
                }
                stream.synchronize().map(|()| host)
            })
            .map_err(|e| DeviceError::new_err(format!("downloading a device buffer: {e}")))?;
        Ok(PyBytes::new(py, &host))
    }

    /// `(kDLCUDA, device id)`.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DL_CUDA, self.batch.ordinal)
    }

    /// A DLPack capsule ("dltensor") of a 1-D `uint8` tensor over these bytes, which holds a
    /// reference to them until the consumer calls its deleter. The bytes were ready when the
    /// buffer was made, so `stream` needs no wait. `copy=True` is refused (the point is not
    /// to copy); `dl_device` must be this buffer's device.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<Bound<'_, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version);
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "DeviceBuffer exports its device memory without a copy (copy=True refused)",
            ));
        }
        if let Some(d) = dl_device {
            if d != (DL_CUDA, self.batch.ordinal) {
                return Err(PyBufferError::new_err(format!(
                    "DeviceBuffer lives on cuda:{} and cannot be exported to device {d:?}",
                    self.batch.ordinal
                )));
            }
        }
        let exported = Box::new(Exported {
            managed: DLManagedTensor {
                dl_tensor: DLTensor {
                    data: self.address() as usize as *mut c_void,
                    device: DLDevice {
                        device_type: DL_CUDA,
                        device_id: self.batch.ordinal,
                    },
                    ndim: 1,
                    dtype: DLDataType {
                        code: DL_UINT,
                        bits: 8,
                        lanes: 1,
                    },
                    shape: std::ptr::null_mut(),
                    strides: std::ptr::null_mut(),
                    byte_offset: 0,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_exported),
            },
            shape: [self.len as i64],
            strides: [1],
            _owner: self.batch.clone(),
        });
        let raw = Box::into_raw(exported);
        // SAFETY: `raw` is a live, leaked Box; the shape and strides point into it and live
        // as long as it does; the capsule or the consumer frees it through the deleter.
        unsafe {
            (*raw).managed.dl_tensor.shape = (*raw).shape.as_mut_ptr();
            (*raw).managed.dl_tensor.strides = (*raw).strides.as_mut_ptr();
            (*raw).managed.manager_ctx = raw.cast::<c_void>();
            let capsule = pyo3::ffi::PyCapsule_New(
                raw.cast::<c_void>(),
                CAPSULE_NAME.as_ptr(),
                Some(capsule_destructor),
            );
            if capsule.is_null() {
                delete_exported(raw.cast::<DLManagedTensor>());
                return Err(PyErr::fetch(py));
            }
            Ok(Bound::from_owned_ptr(py, capsule).unbind())
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "aceapex.DeviceBuffer({} bytes on {})",
            self.len,
            self.device()
        )
    }
}
