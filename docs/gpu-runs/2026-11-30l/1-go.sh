#!/bin/bash
# run 1 of the seventh session: rANS word prefetch and memoised chase variants
B=gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for v in v0 v1 v2 v3 v4 v5 v6; do echo "== $v"; ACEAPEX_DEV_PTX=$B/x1/$v.ptx ACEAPEX_BENCH_ARCHIVES=$B/x1/data $B/bin/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror"; done 2>&1 | tee $OUT/1-variants.log
for v in v3 v4 v5; do echo "== tests $v"; ACEAPEX_DEV_PTX=$B/x1/$v.ptx $B/bin/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick"; done 2>&1 | tee $OUT/1-tests.log
for v in v3 v5; do echo "== sanitizer $v"; ACEAPEX_DEV_PTX=$B/x1/$v.ptx compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -3; done 2>&1 | tee $OUT/1-sanitizer.log
