#!/bin/bash
# ninth session, run 8: gcide, ours against nvCOMP 6.0.0 Snappy and LZ4 in the
# same call, three alternations: the level-6 archives of FOLDER/data and level-7 ones made
# here from the restored originals (16 KiB blocks), each decode bench once per round, then
# nvcomp_bench.py at 8 KiB and 16 KiB chunks. Usage: bash G-go.sh FOLDER RUN
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p /tmp/f /tmp/l7
for a in $X/data/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>/dev/null
  $X/aceapex compress /tmp/f/$n -o /tmp/l7/$n.acx -l 7 -f 2>/dev/null
  $X/aceapex decompress /tmp/l7/$n.acx -o /tmp/gpu.out --device gpu -f 2>/dev/null
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact (L7): $n" || echo "  MISMATCH (L7): $n"
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2 3; do
  ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/L6 /"
  ACEAPEX_BENCH_ARCHIVES=/tmp/l7 $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror" | sed "s/^/L7 /"
  python3 $X/nvcomp_bench.py --chunk 8192 --algos LZ4,Snappy /tmp/f/*
  python3 $X/nvcomp_bench.py --chunk 16384 --algos LZ4,Snappy /tmp/f/*
done | tee $OUT/$R-ours-nvcomp.log
