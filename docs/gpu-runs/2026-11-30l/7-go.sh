#!/bin/bash
# run 7 of the seventh session: rANS output staged per warp in shared memory and written
# as 16-byte vectors every 16 steps (bench-new) against 2586290 (bench-base)
X=gpu-bundle/x7
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2 3; do
echo "== base (2586290)"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-base --bench none 2>&1 | s
echo "== staged output"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
done 2>&1 | tee $OUT/7-variants.log
echo "== tests"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/7-tests.log
echo "== sanitizer"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -3 | tee $OUT/7-sanitizer.log
echo "== racecheck (shared memory hazards) on the rANS staging"; compute-sanitizer --tool racecheck --error-exitcode 9 $X/test-new --test-threads=1 dense_kernel_resolves 2>&1 | tail -4 | tee -a $OUT/7-sanitizer.log
