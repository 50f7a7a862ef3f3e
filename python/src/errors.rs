//! The library's errors as Python exceptions, each carrying the library's message (and the
//! messages of its sources).

use pyo3::exceptions::{PyIndexError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    aceapex,
    ArchiveError,
    PyValueError,
    "An archive that breaks a rule of docs/FORMAT.md: not an archive, an unknown version, a \
     damaged header, table or block (a failed checksum). A subclass of ValueError."
);

pyo3::create_exception!(
    aceapex,
    DeviceError,
    PyRuntimeError,
    "The device asked for cannot be used: no CUDA driver or GPU, a build without the GPU \
     kernels, or a failed GPU call. A subclass of RuntimeError."
);

/// `e`'s message followed by those of its sources, joined by ": " (as `anyhow` prints a
/// chain), without repeating a source whose text the message already holds.
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// The Python exception for a library error: `OSError` (with `errno` and `filename`, so
/// `FileNotFoundError` and its siblings come out as Python makes them) for a file that cannot
/// be read, `ValueError` for options out of range, `IndexError` for a region past the end of
/// the data, [`DeviceError`] for the GPU, [`ArchiveError`] for everything wrong with an
/// archive's bytes.
pub fn to_py(e: aceapex::Error) -> PyErr {
    let text = message(&e);
    match &e {
        aceapex::Error::Io { path, source } => io_error(source, text, Some(path)),
        aceapex::Error::Options(_) => PyValueError::new_err(text),
        aceapex::Error::Decode(aceapex::DecodeError::Region { .. }) => PyIndexError::new_err(text),
        #[cfg(feature = "gpu")]
        aceapex::Error::Gpu(_) => DeviceError::new_err(text),
        _ => ArchiveError::new_err(text),
    }
}

/// `OSError(errno, text, filename)`: Python picks the subclass from the errno.
pub fn io_error(source: &std::io::Error, text: String, path: Option<&std::path::Path>) -> PyErr {
    let file = path.map(|p| p.to_string_lossy().into_owned());
    match source.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, text, file)),
        None => PyOSError::new_err(text),
    }
}

/// A read through [`aceapex::Reader::read_at`] failed: its source is the library's error.
pub fn from_read(e: std::io::Error) -> PyErr {
    if e.get_ref().is_some_and(|s| s.is::<aceapex::Error>()) {
        let inner = e
            .into_inner()
            .expect("checked above")
            .downcast::<aceapex::Error>()
            .expect("checked above");
        return to_py(*inner);
    }
    let text = message(&e);
    io_error(&e, text, None)
}
