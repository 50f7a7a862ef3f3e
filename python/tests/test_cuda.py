"""device="cuda": the archive resident on a GPU, ranges as device buffers through DLPack.
Needs a CUDA GPU and PyTorch (CuPy checked too where installed); skipped otherwise."""

import gc
import random

import pytest

import aceapex
from conftest import GOLDEN, random_genome, write_fasta

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)


@pytest.fixture(scope="module")
def data():
    rng = random.Random(11)
    return (GOLDEN / "moby_dick_64k.txt").read_bytes() * 20 + bytes(rng.getrandbits(8) for _ in range(300_000))


@pytest.fixture(scope="module", params=[{}, {"block_size": 4096, "window": 65536}, {"target": "gpu"}],
                ids=["dense", "cross_block", "target_gpu"])
def archive(request, data, tmp_path_factory):
    path = tmp_path_factory.mktemp("cuda") / "data.acx"
    path.write_bytes(aceapex.compress(data, **request.param))
    return aceapex.open(str(path), device="cuda")


def random_ranges(rng, size, n):
    out = []
    for _ in range(n):
        off = rng.randrange(size + 1)
        out.append((off, rng.randint(0, min(size - off, 5000))))
    return out + [(0, 0), (0, size), (size - 1, 1)]


def test_ranges_as_torch_tensors(archive, data):
    assert archive.device == "cuda"
    ranges = random_ranges(random.Random(1), len(data), 2000)
    buffers = archive.read_ranges(ranges)
    assert len(buffers) == len(ranges)
    for (off, n), b in zip(ranges, buffers):
        assert isinstance(b, aceapex.DeviceBuffer)
        assert len(b) == n and b.device == "cuda:0"
        t = torch.from_dlpack(b)
        assert t.device.type == "cuda" and t.dtype == torch.uint8 and t.shape == (n,)
        if n:
            # the tensor is the buffer's memory, not a copy
            assert t.data_ptr() == b.ptr
        assert bytes(t.cpu().numpy().tobytes()) == data[off : off + n]


def test_joined_batch_is_one_tensor(archive, data):
    ranges = random_ranges(random.Random(4), len(data), 3000)
    b = archive.read_ranges(ranges, join=True)
    assert isinstance(b, aceapex.DeviceBuffer)
    t = torch.from_dlpack(b)
    assert t.data_ptr() == b.ptr
    assert bytes(t.cpu().numpy().tobytes()) == b"".join(data[o : o + n] for o, n in ranges)


def test_one_read_and_to_bytes(archive, data):
    b = archive.read(12_345, 67_890)
    assert b.to_bytes() == data[12_345 : 12_345 + 67_890]
    assert torch.from_dlpack(b).sum().item() == sum(data[12_345 : 12_345 + 67_890])


def test_tensor_outlives_buffer_and_archive(data, tmp_path):
    path = tmp_path / "a.acx"
    path.write_bytes(aceapex.compress(data))
    a = aceapex.open(str(path), device="cuda")
    bufs = a.read_ranges([(100, 1000), (5000, 10)])
    t = torch.from_dlpack(bufs[0])
    del bufs, a
    gc.collect()
    torch.cuda.synchronize()
    assert bytes(t.cpu().numpy().tobytes()) == data[100:1100]
    # a capsule no consumer takes frees its tensor
    b = aceapex.open(str(path), device="cuda").read(0, 10)
    for _ in range(100):
        b.__dlpack__()
    gc.collect()


def test_cupy(archive, data):
    cupy = pytest.importorskip("cupy")
    b = archive.read(1000, 4096)
    c = cupy.from_dlpack(b)
    assert c.dtype == cupy.uint8 and c.size == 4096
    assert bytes(cupy.asnumpy(c).tobytes()) == data[1000:5096]


def test_errors(archive, data):
    with pytest.raises(IndexError):
        archive.read(len(data), 1)
    with pytest.raises(IndexError):
        archive.read_ranges([(0, 1), (len(data) - 1, 2)])
    b = archive.read(0, 4)
    with pytest.raises(BufferError):
        b.__dlpack__(copy=True)
    assert b.__dlpack_device__() == (2, 0)


def test_fasta_on_cuda_archive(tmp_path):
    pyfaidx = pytest.importorskip("pyfaidx")
    path = tmp_path / "g.fa"
    write_fasta(path, random_genome(random.Random(2), 5, 100, 20_000), 60)
    # the GPU target (two-bit literal slices, raw match streams): the dense kernel alone
    aceapex.compress_file(str(path), str(tmp_path / "g.acx"), target="gpu")
    a = aceapex.open(str(tmp_path / "g.acx"), device="cuda")
    f = pyfaidx.Fasta(str(path))
    for name in f.keys():
        assert a[name][10:500] == str(f[name][10:500])
    raw = path.read_bytes()
    assert a.read(0, len(raw)).to_bytes() == raw


def test_compressed_archive_is_what_stays_resident(archive, data, request):
    # independent blocks: the compressed archive on the GPU, ranges decoded there on request;
    # a window across blocks: the decoded data (the GPU cannot read those blocks one by one)
    if "cross_block" in request.node.callspec.id:
        assert archive.resident == "decoded"
        assert archive.resident_bytes >= len(data)
    else:
        assert archive.resident == "compressed"
        assert 0 < archive.resident_bytes < len(data)
    assert aceapex.open(archive.path).resident is None


def test_large_batch_of_windows_across_blocks(archive, data):
    # 8 KiB and 16 KiB windows at random offsets: most span two 16 KiB blocks, many blocks
    # serve several windows of the batch
    rng = random.Random(8)
    for length in (8192, 16384):
        ranges = [(rng.randrange(len(data) - length), length) for _ in range(20_000)]
        t = torch.from_dlpack(archive.read_ranges(ranges, join=True))
        got = t.cpu().numpy().tobytes()
        assert len(got) == 20_000 * length
        for i in range(0, 20_000, 97):
            off = ranges[i][0]
            assert got[i * length : (i + 1) * length] == data[off : off + length], i


def test_reads_from_threads(archive, data):
    import threading

    errors = []

    def reader(seed):
        rng = random.Random(seed)
        for _ in range(20):
            ranges = random_ranges(rng, len(data), 50)
            got = archive.read_ranges(ranges, join=True).to_bytes()
            if got != b"".join(data[o : o + n] for o, n in ranges):
                errors.append(seed)

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_close_frees_and_refuses(data, tmp_path):
    path = tmp_path / "c.acx"
    path.write_bytes(aceapex.compress(data))
    a = aceapex.open(str(path), device="cuda")
    b = a.read(10, 100)
    a.close()
    assert a.closed
    with pytest.raises(ValueError):
        a.read(0, 1)
    with pytest.raises(ValueError):
        a.read_ranges([(0, 1)])
    # a buffer read before the close keeps its own memory
    assert b.to_bytes() == data[10:110]


def test_damaged_block_is_an_archive_error(data, tmp_path):
    raw = bytearray(aceapex.compress(data))
    # a byte in the data section, past the header and tables at the front
    raw[len(raw) * 2 // 3] ^= 0x5A
    path = tmp_path / "bad.acx"
    path.write_bytes(bytes(raw))
    with pytest.raises(aceapex.ArchiveError):
        a = aceapex.open(str(path), device="cuda")
        a.read_ranges([(0, len(data))], join=True)
