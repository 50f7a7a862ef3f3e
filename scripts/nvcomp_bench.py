#!/usr/bin/env python3
"""nvCOMP decode throughput on the GPU for a set of files: the incumbent to compare against.

Usage (on a machine with an NVIDIA GPU, CuPy and nvCOMP's Python bindings, e.g.
`pip install nvidia-nvcomp-cu13==6.0.0.12 nvidia-libnvcomp-cu13==6.0.0.12` and CuPy for the
driver's CUDA version):
    python3 scripts/nvcomp_bench.py [--chunk BYTES] [--algos LZ4,Snappy,...] FILE...
Prints one tab-separated row per (file, algorithm): compression ratio, median device-resident
decode time over 20 runs (CUDA events, data already on the GPU), decode GB/s of original bytes,
encode GB/s, and whether the round trip was bit-exact.
"""
import argparse
import os

import cupy as cp
import numpy as np
from nvidia import nvcomp

DEFAULT_ALGOS = "LZ4,Snappy,Deflate,GDeflate,Zstd"


def median_ms(fn, reps=20):
    fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk", type=int, default=None, help="nvCOMP chunk size in bytes")
    ap.add_argument("--algos", default=DEFAULT_ALGOS)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"# nvcomp {getattr(nvcomp, '__version__', '?')} on {dev}; chunk={args.chunk or 'default'}")
    print("file\talgo\tratio\tdecode_ms\tdecode_GBps\tencode_GBps\tbit_exact")
    for path in args.files:
        host = np.fromfile(path, dtype=np.uint8)
        data = cp.asarray(host)
        arr = nvcomp.as_array(data)
        for name in args.algos.split(","):
            try:
                kw = {"algorithm": name}
                if args.chunk:
                    kw["uncomp_chunk_size"] = args.chunk
                codec = nvcomp.Codec(**kw)
                comp = codec.encode(arr)
                out = cp.asarray(codec.decode(comp)).view(cp.uint8)
                exact = out.size == data.size and bool(cp.all(out == data))
                stored = cp.asarray(comp).nbytes
                dec = median_ms(lambda: codec.decode(comp))
                enc = median_ms(lambda: codec.encode(arr), reps=5)
                n = host.size
                print(f"{os.path.basename(path)}\t{name}\t{n / stored:.4f}\t{dec:.3f}\t"
                      f"{n / dec / 1e6:.1f}\t{n / enc / 1e6:.2f}\t{exact}", flush=True)
            except Exception as ex:  # report and go on with the next codec
                print(f"{os.path.basename(path)}\t{name}\tERROR {type(ex).__name__}: {str(ex)[:160]}", flush=True)


if __name__ == "__main__":
    main()
