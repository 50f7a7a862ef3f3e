#!/bin/bash
# ninth session, run 6: level-7 archives of gcide, hs37 and mouse FASTQ at 8 KiB blocks (k8/,
# made on the dev machine by commit e862764's encoder: 128 symbols per rANS lane) against the
# same files at 16 KiB blocks (made here from the restored originals, level 7); the 8 KiB ones
# checked bit-exact through the GPU decoder; the decode bench's SUMMARY lines, 16K and 8K
# alternated twice. Usage: bash E-go.sh FOLDER RUN
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p /tmp/f /tmp/k16
for a in $X/k8/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex decompress $a -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (8K): $n" || echo "  MISMATCH (8K): $n"
  $X/aceapex compress /tmp/f/$n -o /tmp/k16/$n.acx -l 7 -f 2>&1 | tail -1
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2; do
  ACEAPEX_BENCH_ARCHIVES=/tmp/k16 $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/16K /"
  ACEAPEX_BENCH_ARCHIVES=$X/k8 $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/8K /"
done | tee $OUT/$R-ours.log
