#!/usr/bin/env python3
"""Two aceapex binaries alternated on one machine: one-thread CPU decode (`decompress -t`) and
encode (`compress -T 1`) in MB/s of original bytes, medians of wall times.

    python3 scripts/cli_ab.py OLD_BIN NEW_BIN RUNS FILE:OLD_OPTS:NEW_OPTS...

OLD_OPTS and NEW_OPTS are the compress options of each build, space-separated (the two are
meant to write the same streams, so that the decode comparison is of one archive's worth).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def wall(cmd):
    s = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - s


def main():
    old, new, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tmp = tempfile.mkdtemp()
    for spec in sys.argv[4:]:
        path, oo, no = spec.split(":")
        size = os.path.getsize(path)
        arc = {b: f"{tmp}/{b}.acx" for b in ("old", "new")}
        opts = {"old": oo.split(), "new": no.split()}
        binary = {"old": old, "new": new}
        times = {(b, k): [] for b in binary for k in ("encode", "decode")}
        for _ in range(runs):
            for b in ("old", "new"):
                cmd = [binary[b], "compress", path, "-o", arc[b], "-f", "-q", "-T", "1"]
                times[(b, "encode")].append(wall(cmd + opts[b]))
                cmd = [binary[b], "decompress", arc[b], "-t", "--device", "cpu", "-T", "1", "-q"]
                times[(b, "decode")].append(wall(cmd))
        name = os.path.basename(path)
        sizes = {b: os.path.getsize(arc[b]) for b in binary}
        for k in ("encode", "decode"):
            mbps = {b: size / statistics.median(times[(b, k)]) / 1e6 for b in binary}
            print(f"{name} [{oo} | {no}] {k}: old {mbps['old']:.0f}, new {mbps['new']:.0f} MB/s "
                  f"(archives {sizes['old']} / {sizes['new']} bytes, median of {runs})")


if __name__ == "__main__":
    main()
