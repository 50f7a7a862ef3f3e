"""Times batches of random windows read from an archive into PyTorch tensors: on the GPU
(device="cuda": the compressed archive resident, the windows' blocks decoded there, the
batch handed over through DLPack) against the CPU path (device="cpu": decoded on the CPU
threads into host memory).

    python python/bench/read_ranges.py ARCHIVE [--batches 1,100,10000,100000]
        [--lengths 8192,16384] [--devices cpu,cuda] [--seconds 1.5]

Each call reads one batch of windows at uniformly random offsets (a new batch each call) with
`read_ranges(ranges, join=True)` and makes it one tensor of shape (batch, length):
`torch.from_dlpack` of the device buffer on "cuda" (no copy), `torch.frombuffer` of the bytes
on "cpu" (host memory); "cpu>cuda" is the CPU path followed by the copy of the tensor to the
GPU (`.to("cuda")`, synchronized), the CPU's way to the same result as "cuda". Each cell runs
calls for about --seconds (at least 3, after one warm-up call) and prints windows/s (windows
of all calls over their total time) and the median and 99th-percentile latency of one call.
One window of every call is checked against the CPU reader's bytes.
"""

import argparse
import random
import statistics
import time

import aceapex


def pct(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("archive")
    p.add_argument("--batches", default="1,100,10000,100000")
    p.add_argument("--lengths", default="8192,16384")
    p.add_argument("--devices", default="cpu,cpu>cuda,cuda")
    p.add_argument("--seconds", type=float, default=1.5, help="time per cell (about)")
    args = p.parse_args()
    import torch

    batches = [int(b) for b in args.batches.split(",")]
    lengths = [int(n) for n in args.lengths.split(",")]
    check = aceapex.open(args.archive)
    print(f"archive {args.archive}: {check.size:,} bytes of original, block size {check.block_size}")
    opened = {}
    for device in args.devices.split(","):
        where = "cuda" if device == "cuda" else "cpu"
        if where not in opened:
            t0 = time.perf_counter()
            opened[where] = aceapex.open(args.archive, device=where)
            took = time.perf_counter() - t0
            a = opened[where]
            extra = f", {a.resident_bytes:,} bytes resident ({a.resident})" if where == "cuda" else ""
            print(f"open(device={where!r}): {took * 1e3:.1f} ms{extra}")
    if torch.cuda.is_available():
        print(f"GPU: {torch.cuda.get_device_name(0)}")
    print()
    print("| device | window | batch | windows/s | p50 ms/call | p99 ms/call | calls |")
    print("|---|---|---|---|---|---|---|")
    rng = random.Random(1)
    for length in lengths:
        for batch in batches:
            for device in args.devices.split(","):
                a = opened["cuda" if device == "cuda" else "cpu"]

                def call(ranges):
                    out = a.read_ranges(ranges, join=True)
                    if device == "cuda":
                        t = torch.from_dlpack(out)
                    else:
                        t = torch.frombuffer(out, dtype=torch.uint8) if len(out) else torch.empty(0, dtype=torch.uint8)
                        if device == "cpu>cuda":
                            t = t.to("cuda")
                            torch.cuda.synchronize()
                    return t.view(len(ranges), length)

                def new_ranges():
                    return [(rng.randrange(a.size - length + 1), length) for _ in range(batch)]

                call(new_ranges())  # warm-up (the GPU path grows its buffers once)
                times, calls, spent = [], 0, 0.0
                while calls < 3 or spent < args.seconds:
                    ranges = new_ranges()
                    t0 = time.perf_counter()
                    t = call(ranges)
                    dt = time.perf_counter() - t0
                    times.append(dt)
                    spent += dt
                    calls += 1
                    i = rng.randrange(batch)
                    off = ranges[i][0]
                    got = t[i].cpu().numpy().tobytes()
                    if got != check.read(off, length):
                        raise SystemExit(f"{device}: window {i} at {off} differs from the CPU reader's bytes")
                    del t
                times.sort()
                print(
                    f"| {device} | {length // 1024} KiB | {batch:,} | {batch * calls / spent:,.0f} | "
                    f"{statistics.median(times) * 1e3:.3f} | {pct(times, 99) * 1e3:.3f} | {calls} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
