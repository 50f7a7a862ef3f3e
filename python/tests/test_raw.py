"""Byte ranges, compress/decompress of bytes and files, errors and the device argument."""

import os
import random
import threading

import pytest

import aceapex
from conftest import GOLDEN

MOBY = GOLDEN / "moby_dick_64k.txt"


@pytest.fixture(scope="module")
def data():
    # 64 KiB of text and 200 KiB of random bytes: many blocks, some stored raw
    rng = random.Random(3)
    return MOBY.read_bytes() * 3 + bytes(rng.getrandbits(8) for _ in range(200_000))


@pytest.fixture(scope="module")
def archive_path(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("raw") / "data.acx"
    path.write_bytes(aceapex.compress(data, block_size=4096))
    return path


def test_compress_round_trip(data):
    packed = aceapex.compress(data)
    assert len(packed) < len(data)
    assert aceapex.decompress(packed) == data
    assert aceapex.decompress(bytearray(packed)) == data
    for level in (1, 9):
        assert aceapex.decompress(aceapex.compress(data[:50_000], level=level, target="gpu")) == data[:50_000]
    assert aceapex.decompress(aceapex.compress(b"")) == b""


def test_committed_archives_decompress():
    # archives made by the CLI, committed beside their originals
    for name in ("moby_dick_64k.txt", "records.csv", "dna.fa"):
        original = (GOLDEN / name).read_bytes()
        for packed in GOLDEN.glob(name + "*.acx"):
            assert aceapex.decompress(packed.read_bytes()) == original, packed
            with aceapex.open(str(packed)) as a:
                assert a.size == len(original)
                assert a.read(1000, 5000) == original[1000:6000]


def test_files(data, tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    n = aceapex.compress_file(str(src), str(tmp_path / "in.acx"), level=2)
    assert n == os.path.getsize(tmp_path / "in.acx")
    assert aceapex.decompress_file(str(tmp_path / "in.acx"), str(tmp_path / "out.bin")) == len(data)
    assert (tmp_path / "out.bin").read_bytes() == data
    # path-like objects as well as strings
    aceapex.compress_file(src, tmp_path / "p.acx")
    assert aceapex.open(tmp_path / "p.acx").decompress() == data


def test_read_and_read_ranges(data, archive_path):
    a = aceapex.open(str(archive_path))
    assert a.size == len(data)
    assert a.block_size == 4096
    assert a.device == "cpu"
    rng = random.Random(5)
    ranges = []
    for _ in range(500):
        off = rng.randrange(len(data) + 1)
        ranges.append((off, rng.randint(0, min(len(data) - off, 20_000))))
    ranges += [(0, 0), (len(data), 0), (0, len(data)), (4095, 2), (len(data) - 1, 1)]
    for off, n in ranges[:100]:
        assert a.read(off, n) == data[off : off + n]
    assert a.read_ranges(ranges) == [data[o : o + n] for o, n in ranges]
    assert a.read_ranges([]) == []
    assert a.read_ranges(ranges, join=True) == b"".join(data[o : o + n] for o, n in ranges)
    assert a.read_ranges([], join=True) == b""
    assert a.decompress() == data


def test_reads_from_threads(data, archive_path):
    # reads release the GIL and share one open archive
    a = aceapex.open(str(archive_path))
    errors = []

    def work(seed):
        rng = random.Random(seed)
        for _ in range(200):
            off = rng.randrange(len(data))
            n = rng.randint(0, min(len(data) - off, 9000))
            if a.read(off, n) != data[off : off + n]:
                errors.append((off, n))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_errors(data, archive_path, tmp_path):
    a = aceapex.open(str(archive_path))
    with pytest.raises(IndexError, match="past the end|outside|beyond"):
        a.read(len(data) - 10, 11)
    with pytest.raises(IndexError):
        a.read_ranges([(0, 10), (len(data), 1)])
    with pytest.raises(OverflowError):
        a.read(-1, 10)
    with pytest.raises(FileNotFoundError) as e:
        aceapex.open(str(tmp_path / "missing.acx"))
    assert e.value.filename == str(tmp_path / "missing.acx")
    assert "cannot read" in str(e.value)
    with pytest.raises(ValueError, match="level 10 is not in 1..=9"):
        aceapex.compress(b"x", level=10)
    with pytest.raises(ValueError, match="block size 5000"):
        aceapex.compress(b"x", block_size=5000)
    with pytest.raises(ValueError, match="target"):
        aceapex.compress(b"x", target="fast")
    with pytest.raises(aceapex.ArchiveError):
        aceapex.decompress(b"not an archive at all, just some bytes")
    with pytest.raises(ValueError):  # ArchiveError is a ValueError
        aceapex.decompress(b"")
    bad = tmp_path / "bad.acx"
    bad.write_bytes(b"plain text, not an archive" * 10)
    with pytest.raises(aceapex.ArchiveError):
        aceapex.open(str(bad))
    with pytest.raises(ValueError, match="device"):
        aceapex.open(str(archive_path), device="tpu")


def test_damaged_block_is_an_error(data, archive_path, tmp_path):
    packed = bytearray(archive_path.read_bytes())
    packed[len(packed) // 2] ^= 0x40
    damaged = tmp_path / "damaged.acx"
    damaged.write_bytes(bytes(packed))
    with pytest.raises(aceapex.ArchiveError) as e:
        aceapex.decompress(bytes(packed))
    # the library's message: which block, which rule, or the tables' checksum
    assert "block" in str(e.value) or "checksum" in str(e.value)
    try:
        a = aceapex.open(str(damaged))
    except aceapex.ArchiveError:
        return  # the damage hit the tables, found at open
    with pytest.raises(aceapex.ArchiveError):
        a.decompress()


def test_close(archive_path):
    with aceapex.open(str(archive_path)) as a:
        assert not a.closed
        assert len(a.read(0, 10)) == 10
    assert a.closed
    with pytest.raises(ValueError, match="closed"):
        a.read(0, 10)
    a.close()


def test_cuda_without_gpu_is_a_clear_error(archive_path):
    if os.path.exists("/dev/nvidiactl") or os.environ.get("CUDA_VISIBLE_DEVICES"):
        pytest.skip("a GPU may be present: see test_cuda.py")
    with pytest.raises(aceapex.DeviceError) as e:
        aceapex.open(str(archive_path), device="cuda")
    text = str(e.value)
    assert "cuda" in text.lower() or "gpu" in text.lower()
