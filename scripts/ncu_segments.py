#!/usr/bin/env python3
"""Splits one kernel of an ncu SASS source export (`run.sh profile` writes prof-sass.csv:
`ncu -i prof.ncu-rep --page source --csv --print-source sass`) into the stretches between
its CTA barriers (BAR.SYNC / BAR.RED), and prints each stretch's share of the kernel's
executed warp instructions and of its warp-state samples, with its top stall reasons. The
kernels' PTX carries no line table, so barriers are how a stretch is tied to a stage of the
source.

Usage: scripts/ncu_segments.py prof-sass.csv KERNEL [MIN_SHARE_PERCENT]
"""
import csv
import sys

STALLS = ["barrier", "branch", "dispatch", "drain", "imc", "lg", "long_sb", "math", "membar",
          "mio", "misc", "no_inst", "not_sel", "selected", "short_sb", "sleep", "tex", "wait"]


def main():
    path, kernel = sys.argv[1], sys.argv[2]
    min_share = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    rows, cur, header = [], None, None
    for r in csv.reader(open(path)):
        if r and r[0] == "Kernel Name":
            cur = r[1]
        elif r and r[0] == "Address":
            header = r
        elif r and cur == kernel:
            rows.append(r)
    if not rows:
        sys.exit(f"no kernel {kernel} in {path}")
    col = {name: i for i, name in enumerate(header)}
    execd, samples = col["Instructions Executed"], col["Warp Stall Sampling (All Samples)"]
    first_stall = col["stall_barrier"]
    total_i = sum(int(r[execd]) for r in rows)
    total_s = sum(int(r[samples]) for r in rows)
    print(f"{kernel}: {total_i} warp instructions executed, {total_s} samples")
    seg, start = [], 0
    for idx, r in enumerate(rows):
        seg.append(r)
        if "BAR.SYNC" in r[1] or "BAR.RED" in r[1] or idx == len(rows) - 1:
            ni = sum(int(x[execd]) for x in seg)
            ns = sum(int(x[samples]) for x in seg)
            if 100 * max(ni / max(total_i, 1), ns / max(total_s, 1)) >= min_share:
                st = [sum(int(x[first_stall + k]) for x in seg) for k in range(len(STALLS))]
                top = sorted(zip(st, STALLS), reverse=True)[:4]
                print(f"  SASS {start:5d}-{idx:5d}: instructions {100 * ni / total_i:5.1f} %, "
                      f"samples {100 * ns / total_s:5.1f} %; "
                      + " ".join(f"{n} {100 * v / max(ns, 1):.0f}%" for v, n in top))
            seg, start = [], idx + 1


if __name__ == "__main__":
    main()
