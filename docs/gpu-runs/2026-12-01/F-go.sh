#!/bin/bash
# ninth session, run 7: the binaries of commit ad3e158 (the GPU and decode code of the final commit). Every archive of FOLDER/data (v3, 16 KiB
# blocks), FOLDER/k8 (v3, 8 KiB blocks) and tests/golden (v3, and v2 in tests/golden/v2)
# decoded by the CPU and by the GPU (`--device gpu`) and the two outputs compared (golden ones
# also against their committed originals); the decode bench's SUMMARY lines once per folder;
# the GPU tests and compute-sanitizer memcheck. Usage: bash F-go.sh FOLDER RUN
X=$1; R=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for a in $X/data/*.acx $X/k8/*.acx tests/golden/*.acx tests/golden/v2/*.acx; do
  $X/aceapex decompress $a -o /tmp/cpu.out --device cpu -f >/dev/null 2>&1 || echo "  CPU FAILED: $a"
  $X/aceapex decompress $a -o /tmp/gpu.out --device gpu -f 2>&1 | grep -o "on the GPU ([^)]*)" | head -1
  cmp -s /tmp/cpu.out /tmp/gpu.out && echo "  GPU = CPU: $a" || echo "  MISMATCH: $a"
  case $a in tests/golden/*)
    o=tests/golden/$(basename $a | sed -e 's/\.w64k-b4k\.acx$//' -e 's/\.acx$//')
    cmp -s /tmp/gpu.out $o && echo "  = original: $o" || echo "  NOT ORIGINAL: $o";;
  esac
done 2>&1 | tee $OUT/$R-cli.log
for d in $X/data $X/k8; do ACEAPEX_BENCH_ARCHIVES=$d $X/bench-gpu_decode --bench none 2>&1 | grep -E "SUMMARY|panick|rror"; done | tee $OUT/$R-ours.log
echo "== tests"; $X/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/$R-tests.log
echo "== memcheck"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/$R-sanitizer.log
