"""Type stubs of the aceapex package (the extension module aceapex._aceapex)."""

import os
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, overload

_Path = Union[str, "os.PathLike[str]"]

__version__: str

class ArchiveError(ValueError):
    """An archive that breaks a rule of docs/FORMAT.md: not an archive, an unknown version, a
    damaged header, table or block (a failed checksum)."""

class DeviceError(RuntimeError):
    """The device asked for cannot be used: no CUDA driver or GPU, a build without the GPU
    kernels, or a failed GPU call."""

def open(path: _Path, device: Literal["cpu", "cuda", "cuda:0"] = "cpu") -> Archive:
    """Opens the archive file `path` (memory-mapped). `device="cuda"` uploads the compressed
    archive to the first GPU, where it stays; `read` and `read_ranges` then decode the blocks
    the ranges lie in there (each verified against its checksum on the GPU) and return GPU
    memory. An archive whose window crosses blocks is decoded whole once instead, and that
    stays resident (see `Archive.resident`).

    Raises OSError (FileNotFoundError, ...) when the file cannot be read, ArchiveError when it
    is not a valid archive, DeviceError when device="cuda" cannot be used, ValueError for an
    unknown device."""

def compress(
    data: Union[bytes, bytearray],
    level: int = 6,
    target: Literal["size", "gpu"] = "size",
    block_size: Optional[int] = None,
    window: Optional[int] = None,
) -> bytes:
    """The archive of `data`. `level` 1-9; `target` "size" (ratio first) or "gpu" (GPU decode
    speed first); `block_size` a power of two from 4096 to 4194304 (default 16384);
    `window` the largest match distance (default: the block size). A FASTA input carries its
    sequence index. Raises ValueError for options out of range. Releases the GIL."""

def decompress(data: Union[bytes, bytearray]) -> bytes:
    """The original of the archive `data`, every checksum verified. Raises ArchiveError."""

def compress_file(
    src: _Path,
    dst: _Path,
    level: int = 6,
    target: Literal["size", "gpu"] = "size",
    block_size: Optional[int] = None,
    window: Optional[int] = None,
) -> int:
    """Writes the archive of file `src` to `dst` (through a temporary file renamed into place)
    and returns its size in bytes."""

def decompress_file(src: _Path, dst: _Path) -> int:
    """Writes the original of archive file `src` to `dst` and returns its size in bytes."""

def has_gpu_support() -> bool:
    """Whether this build has the GPU path and its kernels (device="cuda" then needs a CUDA
    driver and GPU); False for a build made with ACEAPEX_SKIP_PTX=1."""

class DeviceBuffer:
    """Bytes in GPU memory: a 1-D uint8 tensor through DLPack (`torch.from_dlpack(buf)`,
    `cupy.from_dlpack(buf)`), without a copy. Ready for any stream when returned."""

    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> str:
        """"cuda:N"."""
    @property
    def ptr(self) -> int:
        """The device address of the first byte."""
    def __len__(self) -> int: ...
    def to_bytes(self) -> bytes:
        """A copy on the host."""
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

class Record:
    """One sequence of a FASTA archive, as pyfaidx's FastaRecord: `len(record)`, `str(record)`
    (the whole sequence), `record[start:end]` (0-based, half-open; negative indices and
    steps as pyfaidx treats them) and `record[i]` (one base)."""

    @property
    def name(self) -> str: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> str: ...

class Archive:
    """An archive opened by `open`. FASTA methods need a FASTA original: the archive's own
    index, or one built from the whole decoded data on first use (ValueError if the original
    is not FASTA that samtools faidx indexes)."""

    def __init__(self, path: _Path, device: str = "cpu") -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def device(self) -> str:
        """"cpu" or "cuda"."""
    @property
    def size(self) -> int:
        """Size of the original data in bytes."""
    @property
    def block_size(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def resident(self) -> Optional[Literal["compressed", "decoded"]]:
        """On device="cuda", what GPU memory holds: "compressed" (the archive; ranges decoded
        on request) or "decoded" (the whole original, for an archive whose window crosses
        blocks). None on the CPU."""
    @property
    def resident_bytes(self) -> Optional[int]:
        """On device="cuda", bytes of GPU memory the archive holds. None on the CPU."""
    def close(self) -> None:
        """Unmaps the file and frees its GPU memory; later reads raise ValueError."""
    def __enter__(self) -> "Archive": ...
    def __exit__(self, *args: Any) -> None: ...
    def read(self, offset: int, length: int) -> Union[bytes, DeviceBuffer]:
        """The original bytes [offset, offset + length): bytes, or a DeviceBuffer on
        device="cuda". IndexError when the range passes the end of the data."""
    def read_ranges(
        self, ranges: Sequence[Tuple[int, int]], *, join: bool = False
    ) -> Union[List[Union[bytes, DeviceBuffer]], bytes, DeviceBuffer]:
        """The original bytes of each (offset, length), in order: bytes decoded in parallel,
        or DeviceBuffers (one device allocation, decoded on the GPU) on device="cuda". With
        join=True, one bytes
        or DeviceBuffer holding the ranges end to end."""
    def decompress(self) -> bytes:
        """The whole original data, every checksum verified."""
    def keys(self) -> List[str]:
        """The sequence names in file order (records samtools faidx indexes)."""
    def lengths(self) -> Dict[str, int]:
        """{name: length in bases}, in file order."""
    def fai(self) -> bytes:
        """The .fai text of the index (as samtools faidx writes it)."""
    def __contains__(self, name: str) -> bool: ...
    def __getitem__(self, name: Union[str, int]) -> Record:
        """The record `name` (KeyError if none), or the i-th record."""
    def __iter__(self) -> Iterator[Record]: ...
    def fetch(self, name: str, start: Optional[int] = None, end: Optional[int] = None) -> str:
        """Sequence of `name` at 0-based, half-open [start, end): archive[name][start:end]."""
    def get_seq(self, name: str, start: int, end: int) -> str:
        """Sequence of `name` at 1-based, closed [start, end]: pyfaidx's Fasta.get_seq."""
