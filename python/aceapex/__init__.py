"""Read aceapex archives (.acx) from Python.

``aceapex.open(path)`` returns an :class:`Archive`: FASTA sequences by name with pyfaidx's
coordinates and results (``archive[name][start:end]``, 0-based and half-open;
``archive.get_seq(name, start, end)``, 1-based and closed), byte ranges of any original
(``read``, ``read_ranges``), and, with ``device="cuda"``, batches of ranges as GPU buffers
through DLPack. ``compress``/``decompress`` (bytes) and ``compress_file``/``decompress_file``
make and restore archives. See docs/PYTHON.md.
"""

from ._aceapex import (
    Archive,
    ArchiveError,
    DeviceError,
    Record,
    compress,
    compress_file,
    decompress,
    decompress_file,
    has_gpu_support,
    open,
)

try:  # present in builds with the GPU path
    from ._aceapex import DeviceBuffer
except ImportError:  # pragma: no cover
    pass

__version__ = "0.1.0"

__all__ = [
    "Archive",
    "ArchiveError",
    "DeviceError",
    "Record",
    "compress",
    "compress_file",
    "decompress",
    "decompress_file",
    "has_gpu_support",
    "open",
]
