#!/bin/bash
# run 10 of the seventh session: warps per rANS CTA by block count (auto: fewest of
# 2/4/8/16 that keep one round at 2 CTAs per SM) against fixed 16 (2586290's choice), 8, 4
X=gpu-bundle/x10
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for w in auto 16 8 4; do echo "== $w"; if [ $w = auto ]; then ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s; else ACEAPEX_RANS_WARPS=$w ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s; fi; done; done > $OUT/10-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/10-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(5), m.group(1)[:10].ljust(10), *m.groups()[1:])
PY
echo "== tests auto"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/10-tests.log
echo "== memcheck auto"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -2 | tee $OUT/10-sanitizer.log
