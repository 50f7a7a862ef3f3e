#!/bin/bash
# ninth session, call A (same as the eighth session's verify-go.sh): format-v3 level-6 archives in
# FOLDER/data: originals restored by the CPU decoder, `decompress --device gpu` bit-exact
# (dense), a `--window 1M` archive of each decoded bit-exact by the GPU (wavefront), the decode
# bench's SUMMARY lines twice; with `tests`: the GPU tests and compute-sanitizer memcheck.
# Usage: bash verify-go.sh FOLDER RUN [tests]
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mkdir -p /tmp/v
for a in $X/data/*.acx; do
  n=$(basename $a .acx)
  $X/aceapex decompress $a -o /tmp/v/$n --device cpu -f 2>&1 | tail -1
  $X/aceapex decompress $a -o /tmp/v/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/v/$n /tmp/v/gpu.out && echo "  bit-exact (dense): $n" || echo "  MISMATCH (dense): $n"
  $X/aceapex compress /tmp/v/$n -o /tmp/v/cross.acx --window 1M -f 2>&1 | tail -1
  $X/aceapex decompress /tmp/v/cross.acx -o /tmp/v/gpu.out --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/v/$n /tmp/v/gpu.out && echo "  bit-exact (--window 1M, wavefront): $n" || echo "  MISMATCH (--window 1M): $n"
  rm -f /tmp/v/$n
done 2>&1 | tee $OUT/$R-cli.log
for rep in 1 2; do ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror"; done | tee $OUT/$R-ours.log
if [ "$3" = tests ]; then
  echo "== tests"; $X/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/$R-tests.log
  echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/$R-sanitizer.log
fi
