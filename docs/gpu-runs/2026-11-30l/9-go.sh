#!/bin/bash
# run 9 of the seventh session: the memoised walk's racing slot accesses made volatile
# (vol) against the plain ones (c24 = 2586290's embedded PTX); racecheck, tests, memcheck
X=gpu-bundle/x9
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in c24 vol; do echo "== $v"; ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | s; done; done > $OUT/9-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/9-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(5), m.group(1)[:10].ljust(10), *m.groups()[1:])
PY
echo "== tests vol"; ACEAPEX_DEV_PTX=$X/vol.ptx $X/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/9-tests.log
echo "== memcheck vol"; ACEAPEX_DEV_PTX=$X/vol.ptx compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -2 | tee $OUT/9-sanitizer.log
for t in dense_kernel_resolves dense_kernel_decodes_deep; do echo "== racecheck vol $t"; ACEAPEX_DEV_PTX=$X/vol.ptx compute-sanitizer --tool racecheck $X/test-gpu --test-threads=1 $t > $OUT/9-racecheck-$t.log 2>&1; grep -E "RACECHECK SUMMARY|test result" $OUT/9-racecheck-$t.log; done
