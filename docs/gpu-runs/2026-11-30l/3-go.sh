#!/bin/bash
# run 3 of the seventh session: rANS tables in shared memory + cheaper warp fill of long
# commands (n = embedded), against the memo commit (705c122); variants by ACEAPEX_DEV_PTX:
# lane-fill threshold 8/24/32 (16 embedded), word prefetch with smem tables
X=gpu-bundle/x3
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do
echo "== memo (705c122)"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-memo --bench none 2>&1 | s
echo "== new"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
for v in lf8 lf24 lf32 pf; do echo "== $v"; ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s; done
done 2>&1 | tee $OUT/3-variants.log
echo "== tests new"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/3-tests.log
echo "== sanitizer new"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -3 | tee $OUT/3-sanitizer.log
