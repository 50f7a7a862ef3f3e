"""Times read_ranges on the CPU and on a GPU-resident archive (device="cuda"), and the
DLPack hand-over to PyTorch, for batches of random ranges.

    python python/bench/read_ranges.py ARCHIVE [--batch 10000] [--length 1000] [--reps 5]

Prints, per device, the median wall time of one batch and the bytes per second it returns.
The cuda figures include the device-side gather and the wait for it; torch.from_dlpack of
every buffer is timed separately. "joined" is read_ranges(..., join=True): one buffer. The archive's open (the GPU decode and the host
verification) is timed once.
"""

import argparse
import random
import statistics
import time

import aceapex


def timed(f, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("archive")
    p.add_argument("--batch", type=int, default=10_000)
    p.add_argument("--length", type=int, default=1000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--devices", default="cpu,cuda")
    args = p.parse_args()
    for device in args.devices.split(","):
        t0 = time.perf_counter()
        a = aceapex.open(args.archive, device=device)
        opened = time.perf_counter() - t0
        rng = random.Random(1)
        ranges = [(rng.randrange(a.size - args.length), args.length) for _ in range(args.batch)]
        a.read_ranges(ranges[:10])  # warm-up
        t, out = timed(lambda: a.read_ranges(ranges), args.reps)
        total = args.batch * args.length
        line = (f"{device}: open {opened * 1e3:.1f} ms; batch of {args.batch} x {args.length} B: "
                f"{t * 1e3:.2f} ms, {total / t / 1e9:.2f} GB/s, {t / args.batch * 1e6:.2f} us/range")
        tj, joined = timed(lambda: a.read_ranges(ranges, join=True), args.reps)
        line += f"; joined: {tj * 1e3:.2f} ms, {total / tj / 1e9:.2f} GB/s"
        if device == "cuda":
            import torch

            td, _ = timed(lambda: [torch.from_dlpack(b) for b in out], args.reps)
            line += f"; torch.from_dlpack of each: {td * 1e3:.2f} ms"
            assert torch.from_dlpack(joined).numel() == total
        print(line, flush=True)


if __name__ == "__main__":
    main()
