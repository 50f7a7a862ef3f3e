#!/bin/bash
# ninth session, runs 3-4: the files of FOLDER/data (level-6 v3 archives) restored by the CPU
# decoder and compressed again here at level LEVEL (16 KiB blocks; and at 8 KiB blocks for
# brown and swissprot), each checked bit-exact through `decompress --device gpu`; then the
# decode bench's SUMMARY lines twice per archive set. Usage: bash C-go.sh FOLDER RUN LEVEL
X=$1; R=$2; L=$3
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p /tmp/f /tmp/l /tmp/l8
for a in $X/data/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex compress /tmp/f/$n -o /tmp/l/$n.acx -l $L -f 2>&1 | tail -1
  $X/aceapex decompress /tmp/l/$n.acx -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (L$L 16K): $n" || echo "  MISMATCH (L$L 16K): $n"
  case $n in brown*|swissprot*)
    $X/aceapex compress /tmp/f/$n -o /tmp/l8/$n.acx -l $L --block-size 8K -f 2>&1 | tail -1
    $X/aceapex decompress /tmp/l8/$n.acx -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
    cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (L$L 8K): $n" || echo "  MISMATCH (L$L 8K): $n";;
  esac
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2; do
  ACEAPEX_BENCH_ARCHIVES=/tmp/l $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/L$L /"
  ls /tmp/l8/*.acx >/dev/null 2>&1 && ACEAPEX_BENCH_ARCHIVES=/tmp/l8 $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/L$L 8K /"
done | tee $OUT/$R-ours.log
