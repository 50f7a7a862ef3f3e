#!/bin/bash
# run 9 of the eighth session: the lane fill with a plain loop for literal runs and matches
# that do not overlap themselves (ncu run 8: the lane fill loop ran 1.6 M times at 9 active
# lanes, 18 instructions per pointer pair), against the final binary's embedded kernels;
# and the same with lane threshold 48. Tests and memcheck of linfill.
X=nv12
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in base linfill linfill48; do
  echo "== $v"
  if [ $v = base ]; then ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | s
  else ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-gpu_decode --bench none 2>&1 | s; fi
done; done > $OUT/9-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/9-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(9), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
echo "== tests linfill"; ACEAPEX_DEV_PTX=$X/linfill.ptx $X/test-gpu --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/9-tests.log
echo "== memcheck linfill"; ACEAPEX_DEV_PTX=$X/linfill.ptx compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-gpu --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -2 | tee $OUT/9-sanitizer.log
