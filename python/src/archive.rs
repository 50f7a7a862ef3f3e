//! `aceapex.Archive` (from `aceapex.open`) and `aceapex.Record`: an archive opened once, read
//! by byte ranges and, for a FASTA original, by sequence name and pyfaidx coordinates.

use crate::errors::{from_read, to_py, ArchiveError};
use crate::faidx;
use aceapex::fasta::{FaiRecord, FastaIndex};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice, PyString};
use std::sync::{OnceLock, RwLock};

/// Where `open` keeps the decoded data: read from the archive on the CPU, or resident on a GPU.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda,
}

impl Device {
    fn parse(s: &str) -> PyResult<Device> {
        match s {
            "cpu" => Ok(Device::Cpu),
            "cuda" | "cuda:0" => Ok(Device::Cuda),
            _ => Err(PyValueError::new_err(format!(
                "device {s:?} is not \"cpu\" or \"cuda\" (\"cuda:0\": the first GPU)"
            ))),
        }
    }
}

/// An archive opened by `aceapex.open`. See the Python docstrings in `aceapex/__init__.pyi`.
#[pyclass(frozen, module = "aceapex", name = "Archive")]
pub struct Archive {
    /// `None` once closed. Reads hold the read lock (without the GIL) while they decode.
    reader: RwLock<Option<aceapex::Reader<'static>>>,
    path: String,
    device: Device,
    /// The FASTA index: the archive's own record, or one built on first use from the whole
    /// decoded data; `Err` with the reason when the original is not FASTA.
    index: OnceLock<Result<FastaIndex, String>>,
    /// The archive resident on the GPU (`device="cuda"`); `None` on the CPU and once closed.
    /// Reads hold the read lock (without the GIL).
    #[cfg(feature = "gpu")]
    pub(crate) cuda: RwLock<Option<crate::cuda::Resident>>,
}

impl Archive {
    /// Runs `f` on the open reader without the GIL.
    fn with_reader<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&aceapex::Reader<'static>) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let guard = self.reader.read().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(r) => f(r),
                None => Err(PyValueError::new_err("I/O operation on a closed archive")),
            }
        })
    }

    /// Runs `f` on the GPU-resident archive without the GIL; `None` on `device="cpu"`.
    #[cfg(feature = "gpu")]
    fn with_cuda<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&crate::cuda::Resident) -> PyResult<T> + Send,
    ) -> Option<PyResult<T>> {
        if self.device != Device::Cuda {
            return None;
        }
        Some(py.detach(|| {
            let guard = self.cuda.read().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(r) => f(r),
                None => Err(PyValueError::new_err("I/O operation on a closed archive")),
            }
        }))
    }

    /// The FASTA index, built from the decoded data on first use when the archive carries
    /// none (a protein file of many short records, whose index the encoder leaves out).
    fn index(&self, py: Python<'_>) -> PyResult<&FastaIndex> {
        if self.index.get().is_none() {
            let built = self.with_reader(py, |r| {
                let data = r.decompress().map_err(to_py)?;
                Ok(FastaIndex::build(&data).map_err(|e| e.to_string()))
            })?;
            let _ = self.index.set(built);
        }
        match self.index.get().expect("set above") {
            Ok(index) => Ok(index),
            Err(why) => Err(PyValueError::new_err(format!(
                "{}: the original data is not FASTA that samtools faidx indexes ({why})",
                self.path
            ))),
        }
    }

    /// The record named `name`: `KeyError` (pyfaidx's message) when there is none.
    fn record(&self, py: Python<'_>, name: &str) -> PyResult<(usize, &FaiRecord)> {
        let index = self.index(py)?;
        match index.id(name.as_bytes()) {
            Some(id) => Ok((id, &index.records()[id])),
            None => Err(PyKeyError::new_err(format!("{name} not in {}.", self.path))),
        }
    }

    /// pyfaidx's `get_seq(name, start, end)` (1-based, closed) of record `r`, as `str`.
    pub(crate) fn get_seq_of<'py>(
        &self,
        py: Python<'py>,
        r: &FaiRecord,
        start: i64,
        end: i64,
    ) -> PyResult<Bound<'py, PyString>> {
        let span = faidx::span(r, start, end).map_err(PyIndexError::new_err)?;
        let bytes = match span {
            None => Vec::new(),
            Some((offset, length)) => {
                let length = usize::try_from(length)
                    .map_err(|_| PyValueError::new_err("region too large for this machine"))?;
                self.with_reader(py, |reader| {
                    // a read past the end of the data is short, as pyfaidx's file.read is
                    let mut buf = vec![0u8; length];
                    let n = reader.read_at(offset, &mut buf).map_err(from_read)?;
                    buf.truncate(n);
                    Ok(faidx::strip_line_ends(buf))
                })?
            }
        };
        match std::str::from_utf8(&bytes) {
            Ok(s) => Ok(PyString::new(py, s)),
            Err(e) => Err(PyErr::from_value(
                PyUnicodeDecodeError::new_utf8(py, &bytes, e)?.into_any(),
            )),
        }
    }

    /// `record[index]` as pyfaidx's `FastaRecord.__getitem__` computes it.
    pub(crate) fn getitem_of<'py>(
        &self,
        py: Python<'py>,
        r: &FaiRecord,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let len = i64::try_from(r.length).map_err(|_| PyValueError::new_err("record too long"))?;
        if let Ok(slice) = index.cast::<PySlice>() {
            let step: Option<i64> = slice.getattr("step")?.extract()?;
            let (start, end) = if step.is_some_and(|s| s < 0) {
                let ix = slice.indices(len as isize)?;
                faidx::reversed_slice(ix.start as i64, ix.stop as i64)
            } else {
                let start: Option<i64> = slice.getattr("start")?.extract()?;
                let stop: Option<i64> = slice.getattr("stop")?.extract()?;
                faidx::slice_args(len, start, stop)
            };
            let seq = self.get_seq_of(py, r, start, end)?;
            return match step {
                None => Ok(seq.into_any()),
                Some(step) => {
                    let every = PySlice::full(py)
                        .get_type()
                        .call1((py.None(), py.None(), step))?;
                    seq.get_item(every)
                }
            };
        }
        if let Ok(mut n) = index.extract::<i64>() {
            if n < 0 {
                n += len;
            }
            return Ok(self.get_seq_of(py, r, n + 1, n + 1)?.into_any());
        }
        Err(PyTypeError::new_err(format!(
            "record indices are integers or slices, not {}",
            index.get_type().name()?
        )))
    }
}

#[pymethods]
impl Archive {
    /// Opens the archive file `path` (memory-mapped) for reads on `device`.
    #[new]
    #[pyo3(signature = (path, device = "cpu"))]
    pub(crate) fn new(py: Python<'_>, path: std::path::PathBuf, device: &str) -> PyResult<Archive> {
        let device = Device::parse(device)?;
        let shown = path.to_string_lossy().into_owned();
        let reader = py.detach(|| aceapex::Reader::open(&path)).map_err(to_py)?;
        let index = OnceLock::new();
        if let Some(own) = reader.fasta_index() {
            let _ = index.set(Ok(own.clone()));
        }
        #[cfg(feature = "gpu")]
        let cuda = match device {
            Device::Cuda => Some(py.detach(|| crate::cuda::Resident::load(&path, &reader))?),
            Device::Cpu => None,
        };
        #[cfg(not(feature = "gpu"))]
        if device == Device::Cuda {
            return Err(crate::errors::DeviceError::new_err(
                "device=\"cuda\": this build of aceapex has no GPU support (built without the \
                 `gpu` feature)",
            ));
        }
        Ok(Archive {
            reader: RwLock::new(Some(reader)),
            path: shown,
            device,
            index,
            #[cfg(feature = "gpu")]
            cuda: RwLock::new(cuda),
        })
    }

    /// The path given to `open`.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// "cpu" or "cuda".
    #[getter]
    fn device(&self) -> &'static str {
        match self.device {
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }

    /// Size of the original data in bytes.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_reader(py, |r| Ok(r.len()))
    }

    /// Block size in bytes (the unit a read decodes).
    #[getter]
    fn block_size(&self, py: Python<'_>) -> PyResult<u32> {
        self.with_reader(py, |r| Ok(r.block_size()))
    }

    /// Whether the archive was closed.
    #[getter]
    fn closed(&self) -> bool {
        self.reader
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// Bytes of GPU memory the archive holds on `device="cuda"` (the compressed archive and
    /// its decode tables; the decoded data for an archive whose window crosses blocks);
    /// `None` on the CPU.
    #[getter]
    fn resident_bytes(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        #[cfg(feature = "gpu")]
        if let Some(n) = self.with_cuda(py, |r| Ok(r.resident_bytes())) {
            return n.map(Some);
        }
        let _ = py;
        Ok(None)
    }

    /// What `device="cuda"` keeps in GPU memory: "compressed" (the archive, ranges decoded on
    /// request) or "decoded" (the whole original, for an archive whose window crosses
    /// blocks); `None` on the CPU.
    #[getter]
    fn resident(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        #[cfg(feature = "gpu")]
        if let Some(f) = self.with_cuda(py, |r| Ok(r.form())) {
            return f.map(Some);
        }
        let _ = py;
        Ok(None)
    }

    /// Unmaps the file and frees the GPU memory it held; later reads raise ValueError.
    /// Idempotent.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            *self.reader.write().unwrap_or_else(|e| e.into_inner()) = None;
            #[cfg(feature = "gpu")]
            {
                *self.cuda.write().unwrap_or_else(|e| e.into_inner()) = None;
            }
        });
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    /// The original bytes `offset .. offset + length`: `bytes`, or on `device="cuda"` a
    /// `DeviceBuffer` in GPU memory.
    fn read<'py>(&self, py: Python<'py>, offset: u64, length: u64) -> PyResult<Bound<'py, PyAny>> {
        #[cfg(feature = "gpu")]
        if let Some(one) = self.with_cuda(py, |r| r.gather(&[(offset, length)], true)) {
            return Ok(Bound::new(py, one?.remove(0))?.into_any());
        }
        let length = usize::try_from(length)
            .map_err(|_| PyValueError::new_err("length too large for this machine"))?;
        let bytes = self.with_reader(py, |r| {
            let mut buf = Vec::new();
            buf.try_reserve_exact(length)
                .map_err(|_| PyValueError::new_err(format!("cannot allocate {length} bytes")))?;
            buf.resize(length, 0);
            r.read_range(offset, &mut buf).map_err(to_py)?;
            Ok(buf)
        })?;
        Ok(PyBytes::new(py, &bytes).into_any())
    }

    /// The original bytes of each `(offset, length)` of `ranges`: a list of `bytes` decoded in
    /// parallel, or on `device="cuda"` a list of `DeviceBuffer`s (views of one new device
    /// allocation, the blocks the ranges lie in decoded and verified on the GPU). With `join=True`, one `bytes`
    /// or `DeviceBuffer` holding the ranges end to end (one tensor for a whole batch).
    #[pyo3(signature = (ranges, *, join = false))]
    fn read_ranges<'py>(
        &self,
        py: Python<'py>,
        ranges: Vec<(u64, u64)>,
        join: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        use rayon::prelude::*;
        #[cfg(feature = "gpu")]
        if let Some(buffers) = self.with_cuda(py, |r| r.gather(&ranges, join)) {
            let mut buffers = buffers?;
            if join {
                return Ok(Bound::new(py, buffers.remove(0))?.into_any());
            }
            let objs = buffers
                .into_iter()
                .map(|b| Bound::new(py, b))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(PyList::new(py, objs)?.into_any());
        }
        let total = ranges
            .iter()
            .try_fold(0u64, |t, r| t.checked_add(r.1))
            .and_then(|t| usize::try_from(t).ok())
            .ok_or_else(|| PyValueError::new_err("ranges too large for this machine"))?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(total)
            .map_err(|_| PyValueError::new_err(format!("cannot allocate {total} bytes")))?;
        buf.resize(total, 0);
        let buf = self.with_reader(py, |r| {
            // each range decoded into its own part of one buffer
            let mut parts = Vec::with_capacity(ranges.len());
            let mut rest = &mut buf[..];
            for &(offset, length) in &ranges {
                let (part, tail) = rest.split_at_mut(length as usize);
                parts.push((offset, part));
                rest = tail;
            }
            parts
                .into_par_iter()
                .try_for_each(|(offset, part)| r.read_range(offset, part).map_err(to_py))?;
            Ok(buf)
        })?;
        if join {
            return Ok(PyBytes::new(py, &buf).into_any());
        }
        let mut at = 0usize;
        let list = PyList::new(
            py,
            ranges.iter().map(|&(_, length)| {
                let part = PyBytes::new(py, &buf[at..at + length as usize]);
                at += length as usize;
                part
            }),
        )?;
        Ok(list.into_any())
    }

    /// The whole original data, every checksum verified.
    fn decompress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with_reader(py, |r| r.decompress().map_err(to_py))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The sequence names, in file order.
    fn keys(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self
            .index(py)?
            .records()
            .iter()
            .map(|r| r.name_lossy().into_owned())
            .collect())
    }

    /// `{name: length}` in file order.
    fn lengths<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for r in self.index(py)?.records() {
            d.set_item(r.name_lossy(), r.length)?;
        }
        Ok(d)
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        Ok(self.index(py)?.id(name.as_bytes()).is_some())
    }

    /// The record named `name` (or the `name`-th, as pyfaidx allows an int).
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Record> {
        let py = slf.py();
        let this = slf.get();
        let id = if let Ok(i) = key.extract::<i64>() {
            let n = this.index(py)?.len() as i64;
            if !(0..n).contains(&i) {
                return Err(PyIndexError::new_err(format!(
                    "Index {i} out of range for {}.",
                    this.path
                )));
            }
            i as usize
        } else if let Ok(name) = key.extract::<String>() {
            this.record(py, &name)?.0
        } else {
            return Err(PyTypeError::new_err(format!(
                "Record name must be a string, not {}.",
                key.get_type().name()?
            )));
        };
        Ok(Record {
            archive: slf.clone().unbind(),
            id,
        })
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let n = slf.get().index(py)?.len();
        let records = (0..n).map(|id| Record {
            archive: slf.clone().unbind(),
            id,
        });
        let list = PyList::new(
            py,
            records
                .map(|r| Py::new(py, r))
                .collect::<PyResult<Vec<_>>>()?,
        )?;
        Ok(list.try_iter()?.into_any().unbind())
    }

    /// Sequence of `name` at 0-based, half-open `[start, end)`: `archive[name][start:end]`.
    #[pyo3(signature = (name, start = None, end = None))]
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        start: Option<i64>,
        end: Option<i64>,
    ) -> PyResult<Bound<'py, PyString>> {
        let (_, r) = self.record(py, name)?;
        let len = i64::try_from(r.length).map_err(|_| PyValueError::new_err("record too long"))?;
        let (start, end) = faidx::slice_args(len, start, end);
        self.get_seq_of(py, r, start, end)
    }

    /// Sequence of `name` at 1-based, closed `[start, end]`: pyfaidx's `get_seq`.
    fn get_seq<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        start: i64,
        end: i64,
    ) -> PyResult<Bound<'py, PyString>> {
        let (_, r) = self.record(py, name)?;
        self.get_seq_of(py, r, start, end)
    }

    /// The `.fai` text of the FASTA index.
    fn fai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.index(py)?.to_fai()))
    }

    fn __repr__(&self) -> String {
        format!(
            "aceapex.open({:?}, device={:?})",
            self.path,
            match self.device {
                Device::Cpu => "cpu",
                Device::Cuda => "cuda",
            }
        )
    }
}

/// One sequence of a FASTA archive: `len(record)`, `record[a:b]`, `str(record)`.
#[pyclass(frozen, module = "aceapex", name = "Record")]
pub struct Record {
    archive: Py<Archive>,
    id: usize,
}

impl Record {
    fn fai<'a>(&self, archive: &'a Archive, py: Python<'_>) -> PyResult<&'a FaiRecord> {
        Ok(&archive.index(py)?.records()[self.id])
    }
}

#[pymethods]
impl Record {
    /// The sequence name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        let a = self.archive.get();
        Ok(self.fai(a, py)?.name_lossy().into_owned())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let a = self.archive.get();
        usize::try_from(self.fai(a, py)?.length).map_err(|_| ArchiveError::new_err("too long"))
    }

    /// pyfaidx's `FastaRecord[index]`: 0-based, half-open slices; an int is one base.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.archive.get();
        let r = self.fai(a, py)?;
        a.getitem_of(py, r, index)
    }

    /// The sequence line by line, as pyfaidx's `FastaRecord.__iter__` (the file's line
    /// length; the last line may be shorter).
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = self.archive.get();
        let r = self.fai(a, py)?;
        let len = i64::try_from(r.length).map_err(|_| ArchiveError::new_err("too long"))?;
        let text: String = a.get_seq_of(py, r, 1, len)?.extract()?;
        let width = (r.line_bases as usize).max(1);
        // the bases are ASCII (the index counts graphic bytes), so bytes and chars agree
        let lines: Vec<std::borrow::Cow<'_, str>> = if text.is_empty() {
            vec!["".into()]
        } else {
            text.as_bytes()
                .chunks(width)
                .map(String::from_utf8_lossy)
                .collect()
        };
        let list = PyList::new(py, lines)?;
        Ok(list.try_iter()?.into_any().unbind())
    }

    /// The whole sequence.
    fn __str__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let a = self.archive.get();
        let r = self.fai(a, py)?;
        let len = i64::try_from(r.length).map_err(|_| ArchiveError::new_err("too long"))?;
        a.get_seq_of(py, r, 1, len)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let a = self.archive.get();
        Ok(format!(
            "Record({:?}, length={})",
            self.fai(a, py)?.name_lossy(),
            self.fai(a, py)?.length
        ))
    }
}
