#!/usr/bin/env python3
"""Markdown tables from scripts/gpu-ab.sh's cpu.tsv and gpu.tsv: one row per corpus, for each
pair of recipes named on the command line (A-recipe:B-recipe), the ratio, the GPU full-decode
GB/s of every pass, the encode MB/s and the one-thread CPU decode MB/s of each build.

    python3 scripts/ab-table.py OUT_DIR A-gpu:B-gpu A-l6:B-default
"""
import csv
import sys
from collections import defaultdict


def main():
    out, pairs = sys.argv[1], [p.split(":") for p in sys.argv[2:]]
    cpu = {}
    with open(f"{out}/cpu.tsv") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            cpu[(r["recipe"], r["corpus"])] = r
    gpu = defaultdict(list)
    with open(f"{out}/gpu.tsv") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            gpu[(r["recipe"], r["corpus"])].append(r["GBps"])
    decode_col = [k for k in next(iter(cpu.values())) if k.startswith("cpu_decode")][0]
    for a, b in pairs:
        print(f"\n{a} against {b}:\n")
        print("| corpus | ratio | GPU GB/s | encode MB/s | CPU decode MB/s |")
        print("|---|---|---|---|---|")
        corpora = sorted({c for (r, c) in cpu if r == a})
        for c in corpora:
            ra, rb = cpu[(a, c)], cpu.get((b, c))
            if rb is None:
                continue
            ga = "/".join(gpu.get((a, c), ["-"]))
            gb = "/".join(gpu.get((b, c), ["-"]))
            print(
                f"| {c} | {ra['ratio']} / {rb['ratio']} | {ga} / {gb} | "
                f"{ra['encode_MBps']} / {rb['encode_MBps']} | {ra[decode_col]} / {rb[decode_col]} |"
            )


if __name__ == "__main__":
    main()
