#!/usr/bin/env bash
# Side-by-side comparison of two builds of aceapex on a GPU machine, on the same originals:
# ratio, encode and CPU decode MB/s, device-resident GPU full-decode GB/s, and a bit-exact
# check of each build's own archives on the GPU.
#
#   bash scripts/gpu-ab.sh A_DIR B_DIR DATA_DIR [RECIPES_FILE]
#
# A_DIR and B_DIR each hold a stripped `aceapex` CLI and the `bench-gpu_decode` criterion
# binary of one build (scripts/gpu-bundle.sh makes them). DATA_DIR holds archives (*.acx)
# that B's CLI restores to the originals. RECIPES_FILE has one line per recipe,
# `BUILD NAME compress-options...` (BUILD is A or B); without it, each build compresses at
# its default settings only. Each recipe's archives are benchmarked $PASSES times (default 2),
# the builds alternating, so the spread between passes shows the noise; a recipe whose name
# starts with `cpu_` is left out of the GPU benchmark. STAGE=cpu runs only the CPU table and
# the bit-exact GPU check, STAGE=gpu only the GPU benchmark (both compress first).
# Writes cpu.tsv and gpu.tsv and the raw logs to $OUT (or /tmp/ab-out). The GPU figure is the
# bench's device-resident dense decode (mean of 5 after a verified decode); criterion's own
# loop is skipped.
set -uo pipefail
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) DATA=$(cd "$3" && pwd)
RECIPES=${4:-}
OUTD=${OUT:-/tmp/ab-out}
W=/tmp/ab-work
rm -rf "$W"
mkdir -p "$OUTD" "$W/orig"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUTD/gpu.txt"
threads=$(nproc)

# originals, restored and verified by B's CPU decoder
for a in "$DATA"/*.acx; do
    "$B/aceapex" decompress "$a" -o "$W/orig/$(basename "$a" .acx)" --device cpu -f -q || exit 1
done

if [[ -n $RECIPES ]]; then
    mapfile -t recipes < <(grep -v '^\s*\(#\|$\)' "$RECIPES")
else
    recipes=("A default" "B default")
fi

now() { date +%s%N; } # nanoseconds
printf 'recipe\tcorpus\tbytes\tratio\tencode_MBps\tcpu_decode_MBps_1thread_best_of_5\n' >"$OUTD/cpu.tsv"
STAGE=${STAGE:-all}
for r in "${recipes[@]}"; do
    read -r build name opts <<<"$r"
    bin=$A/aceapex
    [[ $build == B ]] && bin=$B/aceapex
    mkdir -p "$W/$build-$name"
    for f in "$W"/orig/*; do
        n=$(basename "$f")
        out=$W/$build-$name/$n.acx
        t0=$(now)
        # shellcheck disable=SC2086 # opts is a list of compress options
        "$bin" compress "$f" -o "$out" -f -q -T "$threads" $opts || { echo "compress failed: $r $n"; continue; }
        t1=$(now)
        [[ $STAGE == gpu ]] && continue
        best=0
        for _ in 1 2 3 4 5; do
            s=$(now)
            "$bin" decompress "$out" -t --device cpu -T 1 -q || echo "CPU decode failed: $r $n"
            e=$(now)
            ((best == 0 || e - s < best)) && best=$((e - s))
        done
        size=$(stat -c %s "$f") csize=$(stat -c %s "$out")
        awk -v r="$build-$name" -v n="$n" -v s="$size" -v c="$csize" -v te=$((t1 - t0)) -v td="$best" \
            'BEGIN { printf "%s\t%s\t%d\t%.4f\t%.1f\t%.1f\n", r, n, s, s / c, s / te * 1e3, s / td * 1e3 }' >>"$OUTD/cpu.tsv"
        if "$bin" decompress "$out" -o "$W/gpu.out" --device gpu -f -q && cmp -s "$f" "$W/gpu.out"; then
            echo "bit-exact on the GPU: $r $n"
        else
            echo "GPU MISMATCH or failure: $r $n"
        fi
    done
done
cat "$OUTD/cpu.tsv"
[[ $STAGE == cpu ]] && exit 0

# device-resident full decode: every recipe's archives, $PASSES passes, builds alternating
printf 'pass\trecipe\tcorpus\tGBps\n' >"$OUTD/gpu.tsv"
for pass in $(seq "${PASSES:-2}"); do
    for r in "${recipes[@]}"; do
        read -r build name _ <<<"$r"
        [[ $name == cpu_* ]] && continue
        bench=$A/bench-gpu_decode
        [[ $build == B ]] && bench=$B/bench-gpu_decode
        log=$OUTD/bench-$build-$name-$pass.log
        ACEAPEX_BENCH_ARCHIVES=$W/$build-$name "$bench" --bench 'criterion-loop-skipped' >"$log" 2>&1
        # "SUMMARY gpu_decode NAME: ... device-resident dense T ms = X GB/s"
        sed -n 's/^SUMMARY gpu_decode \([^:]*\):.*device-resident dense [0-9.]* ms = \([0-9.]*\) GB\/s.*/\1\t\2/p' "$log" |
            while IFS=$'\t' read -r n g; do printf '%s\t%s-%s\t%s\t%s\n' "$pass" "$build" "$name" "$n" "$g"; done >>"$OUTD/gpu.tsv"
    done
done
cat "$OUTD/gpu.tsv"
# the raw bench logs in one file
tar czf "$OUTD/bench-logs.tgz" -C "$OUTD" $(cd "$OUTD" && ls bench-*.log) && rm -f "$OUTD"/bench-*.log
