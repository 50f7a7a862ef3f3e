//! The Python module `aceapex._aceapex` (re-exported by the package `aceapex`): archives
//! opened for pyfaidx-style FASTA access and byte ranges, and compression of bytes and files.
//! The Python-facing documentation is in `aceapex/__init__.pyi` and docs/PYTHON.md.

mod archive;
#[cfg(feature = "gpu")]
mod cuda;
mod errors;
mod faidx;

use errors::{io_error, message, to_py};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use std::path::PathBuf;

/// The encoder options of `compress` and `compress_file`.
fn options(
    level: u32,
    target: &str,
    block_size: Option<u32>,
    window: Option<u32>,
) -> PyResult<aceapex::Options> {
    let target = match target {
        "size" => aceapex::Target::Size,
        "gpu" => aceapex::Target::Gpu,
        _ => {
            return Err(PyValueError::new_err(format!(
                "target {target:?} is not \"size\" or \"gpu\""
            )))
        }
    };
    let mut o = aceapex::Options::new()
        .with_level(level)
        .with_target(target)
        .with_window(window);
    if let Some(bs) = block_size {
        o = o.with_block_size(bs);
    }
    o.validate()
        .map_err(|e| PyValueError::new_err(format!("invalid options: {e}")))?;
    Ok(o)
}

/// `open(path, device="cpu")`: the archive file `path`, opened for reads.
#[pyfunction]
#[pyo3(signature = (path, device = "cpu"))]
fn open(py: Python<'_>, path: PathBuf, device: &str) -> PyResult<Py<archive::Archive>> {
    Py::new(py, archive::Archive::new(py, path, device)?)
}

/// `compress(data, level=6, target="size", block_size=None, window=None) -> bytes`.
#[pyfunction]
#[pyo3(signature = (data, level = 6, target = "size", block_size = None, window = None))]
fn compress<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    level: u32,
    target: &str,
    block_size: Option<u32>,
    window: Option<u32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let o = options(level, target, block_size, window)?;
    let out = py.detach(|| aceapex::compress(&data, &o)).map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

/// `decompress(data) -> bytes`: every checksum verified.
#[pyfunction]
fn decompress<'py>(py: Python<'py>, data: PyBackedBytes) -> PyResult<Bound<'py, PyBytes>> {
    let out = py.detach(|| aceapex::decompress(&data)).map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

/// Reads `path` whole.
fn read_file(path: &std::path::Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let text = format!("cannot read {}: {}", path.display(), message(&e));
        io_error(&e, text, Some(path))
    })
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed into place when
/// complete (no partial output is left behind on an error).
fn write_file(path: &std::path::Path, bytes: &[u8]) -> PyResult<()> {
    let fail = |e: std::io::Error| {
        let text = format!("cannot write {}: {}", path.display(), message(&e));
        io_error(&e, text, Some(path))
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.aceapex-{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

/// `compress_file(src, dst, level=6, target="size", block_size=None, window=None) -> int`:
/// the archive of file `src` written to `dst`; returns its size in bytes.
#[pyfunction]
#[pyo3(signature = (src, dst, level = 6, target = "size", block_size = None, window = None))]
fn compress_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    level: u32,
    target: &str,
    block_size: Option<u32>,
    window: Option<u32>,
) -> PyResult<u64> {
    let o = options(level, target, block_size, window)?;
    py.detach(|| {
        let data = read_file(&src)?;
        let out = aceapex::compress(&data, &o).map_err(to_py)?;
        write_file(&dst, &out)?;
        Ok(out.len() as u64)
    })
}

/// `decompress_file(src, dst) -> int`: the original of archive `src` written to `dst`;
/// returns its size in bytes.
#[pyfunction]
fn decompress_file(py: Python<'_>, src: PathBuf, dst: PathBuf) -> PyResult<u64> {
    py.detach(|| {
        let reader = aceapex::Reader::open(&src).map_err(to_py)?;
        let out = reader.decompress().map_err(to_py)?;
        write_file(&dst, &out)?;
        Ok(out.len() as u64)
    })
}

/// Whether this build has the GPU path with its kernels (`device="cuda"` then needs a CUDA
/// driver and GPU at run time); false for a build without the `gpu` feature or built with
/// `ACEAPEX_SKIP_PTX=1`, which embeds no kernels.
#[pyfunction]
fn has_gpu_support() -> bool {
    #[cfg(feature = "gpu")]
    {
        !aceapex::gpu::PTX.is_empty()
    }
    #[cfg(not(feature = "gpu"))]
    {
        false
    }
}

#[pymodule]
fn _aceapex(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(compress_file, m)?)?;
    m.add_function(wrap_pyfunction!(decompress_file, m)?)?;
    m.add_function(wrap_pyfunction!(has_gpu_support, m)?)?;
    m.add_class::<archive::Archive>()?;
    m.add_class::<archive::Record>()?;
    m.add("ArchiveError", m.py().get_type::<errors::ArchiveError>())?;
    m.add("DeviceError", m.py().get_type::<errors::DeviceError>())?;
    #[cfg(feature = "gpu")]
    m.add_class::<cuda::DeviceBuffer>()?;
    Ok(())
}
