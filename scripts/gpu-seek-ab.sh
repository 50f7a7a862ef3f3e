#!/usr/bin/env bash
# Random access on the GPU, two builds side by side on the same archives (run on the GPU
# machine): each build's `bench-gpu_seek` over every archive of DATA_DIR, $PASSES times
# (default 2) with the builds alternating, so the spread between passes shows the noise;
# then a table of one tile (start, middle, end p50), 1,000 aligned tiles, and 10,000 and
# 100,000 8 KiB windows (end to end, and GPU time queued back to back), per build and pass.
#
#   bash scripts/gpu-seek-ab.sh A_DIR B_DIR DATA_DIR
#
# A_DIR and B_DIR each hold the stripped `bench-gpu_seek` criterion binary of one build
# (scripts/gpu-bundle.sh makes it); DATA_DIR holds `--target gpu` archives (*.acx). Every
# build checks its first request of each kind against the CPU reader (the bench does).
# Writes the logs and seek.tsv to $OUT (or /tmp/seek-ab-out).
set -uo pipefail
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) DATA=$(cd "$3" && pwd)
OUTD=${OUT:-/tmp/seek-ab-out}
mkdir -p "$OUTD"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUTD/gpu.txt"
rc=0
for pass in $(seq 1 "${PASSES:-2}"); do
    for build in A B; do
        dir=$A
        [[ $build == B ]] && dir=$B
        log="$OUTD/seek-$build-$pass.log"
        ACEAPEX_BENCH_ARCHIVES="$DATA" "$dir/bench-gpu_seek" > "$log" 2>&1 || {
            echo "build $build pass $pass failed: $(tail -1 "$log")"
            rc=1
        }
    done
done
# one row per archive, build and pass, from the bench's lines
python3 - "$OUTD" <<'PY' | tee "$OUTD/seek.tsv"
import glob, os, re, sys
out = sys.argv[1]
print("archive\tbuild\tpass\ttile start/mid/end p50 us\t1k tiles us\t10k 8K win/s (GPU)\t100k 8K win/s (GPU)")
for log in sorted(glob.glob(os.path.join(out, "seek-*-*.log"))):
    build, npass = os.path.basename(log)[5:-4].split("-")
    rows = {}
    for line in open(log):
        m = re.match(r"(.+?): (.*)", line)
        if not m or m.group(1).startswith("gpu_seek"):
            continue
        name, rest = m.groups()
        r = rows.setdefault(name, {"tile": [], "tiles": "", "w10k": "", "w100k": ""})
        t = re.match(r"one 16 KiB tile at the \w+: p50 ([\d.]+) us", rest)
        if t:
            r["tile"].append(t.group(1))
        t = re.match(r"1,000 random aligned 16 KiB tiles in one request: p50 ([\d.]+) us", rest)
        if t:
            r["tiles"] = t.group(1)
        t = re.match(r"(10000|100000) random 8 KiB windows: .*?([\d.]+) M windows/s, .* = ([\d.]+) M windows/s", rest)
        if t:
            r["w10k" if t.group(1) == "10000" else "w100k"] = f"{t.group(2)} M ({t.group(3)} M)"
    for name, r in rows.items():
        print(f"{name}\t{build}\t{npass}\t{' / '.join(r['tile'])}\t{r['tiles']}\t{r['w10k']}\t{r['w100k']}")
PY
exit $rc
