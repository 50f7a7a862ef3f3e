#!/bin/bash
# run 2 of the seventh session: rANS decode tables in shared memory (ACEAPEX_RANS_SMEM=1),
# 16-warp rANS CTAs without (=2), wide pointer loads in the write stage (n1.ptx); baseline
# = the memo commit's binary (705c122)
X=gpu-bundle/x2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do
echo "== memo (705c122)"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-memo --bench none 2>&1 | s
echo "== new, global tables"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
echo "== new, smem tables, 16 warps"; ACEAPEX_RANS_SMEM=1 ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
echo "== new, global tables, 16 warps"; ACEAPEX_RANS_SMEM=2 ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
echo "== new + n1 (wide write)"; ACEAPEX_DEV_PTX=$X/n1.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
done 2>&1 | tee $OUT/2-variants.log
for m in 0 1; do echo "== tests ACEAPEX_RANS_SMEM=$m"; ACEAPEX_RANS_SMEM=$m $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick"; done 2>&1 | tee $OUT/2-tests.log
echo "== tests n1"; ACEAPEX_DEV_PTX=$X/n1.ptx $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee -a $OUT/2-tests.log
for m in 0 1; do echo "== sanitizer ACEAPEX_RANS_SMEM=$m"; ACEAPEX_RANS_SMEM=$m compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -3; done 2>&1 | tee $OUT/2-sanitizer.log
echo "== ncu gcide, smem tables"
ACEAPEX_RANS_SMEM=1 ACEAPEX_BENCH_ARCHIVES=$X/gc timeout 300 ncu --clock-control none -k regex:'rans_decode_slices|decode_blocks_dense' -c 2 --set full --import-source no -o $OUT/2-prof -f $X/bench-new --bench none 2>&1 | tail -3
ncu -i $OUT/2-prof.ncu-rep --page details > $OUT/2-prof-details.txt 2>&1
ncu -i $OUT/2-prof.ncu-rep --page source --csv --print-source sass > $OUT/2-prof-sass.csv 2>&1; gzip $OUT/2-prof-sass.csv; rm -f $OUT/2-prof.ncu-rep
ls -la $OUT
