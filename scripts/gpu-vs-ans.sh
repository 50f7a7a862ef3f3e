#!/usr/bin/env bash
# Full decode of FASTA genomes on the GPU, ours against nvCOMP's ANS codec, in one sitting
# (docs/PERFORMANCE.md, "Full decode of DNA against nvCOMP's ANS codec"): the originals are
# restored from level-6 archives with the CPU decoder, `--target gpu` archives are made from
# them here, then ours (both archives), nvCOMP ANS at its default and 16 KiB chunks (and Zstd
# at 16 KiB), and ours again, so that drift between the two shows.
#
# Usage: scripts/gpu-vs-ans.sh DATA
#   DATA          folder of `aceapex compress -l 6` archives (*.acx) of the genomes
# Environment:
#   BIN           folder holding aceapex and bench-gpu_decode built with the kernels
#                 (default gpu-bundle/bin, scripts/gpu-bundle.sh)
#   NVCOMP_BENCH  nvCOMP's decode benchmark (../shared/anchors/nvcomp_bench.py, needs CuPy and
#                 the nvidia-nvcomp-cu13 bindings importable: PYTHONPATH)
#   WORK          scratch folder (default /tmp/vs-ans)
set -euo pipefail
DATA=${1:?usage: scripts/gpu-vs-ans.sh DATA}
BIN=${BIN:-gpu-bundle/bin}
NVCOMP_BENCH=${NVCOMP_BENCH:?set NVCOMP_BENCH to nvcomp_bench.py}
WORK=${WORK:-/tmp/vs-ans}
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf "$WORK" && mkdir -p "$WORK/g" "$WORK/l6" "$WORK/tg"
for a in "$DATA"/*.acx; do
  n=$(basename "$a" .acx)
  "$BIN/aceapex" decompress "$a" -o "$WORK/g/$n" --device cpu -f -q
  cp "$a" "$WORK/l6/"
  "$BIN/aceapex" compress --target gpu "$WORK/g/$n" -o "$WORK/tg/$n.acx" -f -q
done
ours() {
  for d in l6 tg; do
    echo "== ours, $d archives ($1)"
    ACEAPEX_BENCH_ARCHIVES="$WORK/$d" "$BIN/bench-gpu_decode" --bench none 2>&1 |
      grep -E "^SUMMARY" | sed -E 's/; stage split.*//'
  done
}
ours "before nvCOMP"
python3 "$NVCOMP_BENCH" --algos ANS "$WORK"/g/*
python3 "$NVCOMP_BENCH" --chunk 16384 --algos ANS,Zstd "$WORK"/g/*
ours "after nvCOMP"
