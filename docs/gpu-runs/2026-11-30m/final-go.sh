#!/bin/bash
# runs 5-7 of the eighth session: the final binary (bench-gpu_decode SUMMARY, two
# alternations) and nvCOMP 6.0.0 on the same files in the same call (LZ4, Snappy, GDeflate,
# Zstd at 16 KiB chunks; Snappy at 8 KiB and at its default chunk size). Usage:
# bash final-go.sh FOLDER RUN [tests]   (FOLDER = aceapex, bench-gpu_decode, test-gpu,
# nvcomp_bench.py, data/*.acx; the wheels in .whl)
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p /tmp/f
echo "== originals restored by the CPU decoder; the GPU decoder (dense) checked bit-exact against them"
for a in $X/data/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/f/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex decompress $a -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/f/$n /tmp/gpu.out && echo "  bit-exact: $n" || echo "  MISMATCH: $n"
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2; do ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror"; done | tee $OUT/$R-ours.log
# (run 5 ran each nvCOMP line once; runs 6-7 twice)
for rep in 1 2; do
python3 $X/nvcomp_bench.py --chunk 16384 --algos LZ4,Snappy,GDeflate,Zstd /tmp/f/* 2>&1 | tee -a $OUT/$R-nvcomp16k.tsv
python3 $X/nvcomp_bench.py --chunk 8192 --algos Snappy /tmp/f/* 2>&1 | tee -a $OUT/$R-nvcomp8k.tsv
done
python3 $X/nvcomp_bench.py --algos Snappy /tmp/f/* 2>&1 | tee $OUT/$R-nvcomp-default.tsv
if [ "$3" = tests ]; then
  echo "== tests"; $X/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/$R-tests.log
  echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/$R-sanitizer.log
fi
