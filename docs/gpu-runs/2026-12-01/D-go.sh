#!/bin/bash
# ninth session, run 5: 8 KiB-block level-7 archives of four small files made before (old/)
# and after (new/) the encoder gave blocks under 16 KiB proportionally more lanes
# (entropy::symbols_per_lane); the new ones checked bit-exact through the GPU decoder against
# the CPU decoder's output, then the decode bench's SUMMARY lines, old and new alternated
# three times. Usage: bash D-go.sh FOLDER RUN
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p /tmp/f
for a in $X/new/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex decompress $a -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (new): $n" || echo "  MISMATCH (new): $n"
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2 3; do
  for v in old new; do
    ACEAPEX_BENCH_ARCHIVES=$X/$v $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/$v /"
  done
done | tee $OUT/$R-ours.log
