#!/bin/bash
# ninth session, call B: format-v3 archives of the smaller files (level 6, 16 KiB blocks) in
# FOLDER/data, and of brown and swissprot also at 8 KiB blocks (made here from the originals,
# level 6): `decompress --device gpu` bit-exact (dense) against the CPU decoder's output, the
# decode bench's SUMMARY lines twice per archive set, and nvCOMP 6.0.0 (LZ4, Snappy, Zstd)
# at 8 KiB and 16 KiB chunks on the same originals, twice. Usage: bash B-go.sh FOLDER RUN
# (FOLDER = aceapex, bench-gpu_decode, nvcomp_bench.py, data/*.acx; the wheels in .whl)
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p /tmp/f /tmp/d8
echo "== originals restored by the CPU decoder; 8 KiB-block archives; the GPU decoder checked bit-exact"
for a in $X/data/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex decompress $a -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (16K): $n" || echo "  MISMATCH (16K): $n"
  case $n in brown*|swissprot*)
    $X/aceapex compress /tmp/f/$n -o /tmp/d8/$n.acx -l 6 --block-size 8K -f 2>&1 | tail -1
    $X/aceapex decompress /tmp/d8/$n.acx -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
    cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (8K): $n" || echo "  MISMATCH (8K): $n";;
  esac
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2; do
  ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror"
  ACEAPEX_BENCH_ARCHIVES=/tmp/d8 $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed 's/^/8K /'
done | tee $OUT/$R-ours.log
for rep in 1 2; do
  python3 $X/nvcomp_bench.py --chunk 8192 --algos LZ4,Snappy,Zstd /tmp/f/brown* /tmp/f/swissprot* 2>&1 | tee -a $OUT/$R-nvcomp8k.tsv
  python3 $X/nvcomp_bench.py --chunk 16384 --algos LZ4,Snappy,Zstd /tmp/f/* 2>&1 | tee -a $OUT/$R-nvcomp16k.tsv
done
