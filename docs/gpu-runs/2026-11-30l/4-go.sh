#!/bin/bash
# run 4 of the seventh session: rANS renormalisation words loaded a step ahead as a
# per-slice window and handed out by a shuffle (win), with lane-fill threshold 24 (embedded
# value), 32, 48; base = 2586290 (bench-new's embedded PTX)
X=gpu-bundle/x4
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do
echo "== base (2586290)"; ACEAPEX_DEV_PTX=$X/c24.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
for v in win win-lf32 win-lf48; do echo "== $v"; ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s; done
done 2>&1 | tee $OUT/4-variants.log
echo "== tests win"; ACEAPEX_DEV_PTX=$X/win.ptx $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/4-tests.log
echo "== sanitizer win"; ACEAPEX_DEV_PTX=$X/win.ptx compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -3 | tee $OUT/4-sanitizer.log
