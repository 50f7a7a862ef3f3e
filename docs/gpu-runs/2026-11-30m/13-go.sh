#!/bin/bash
# run 13 of the eighth session (review mend): the lane fill's self-overlapping matches go
# through the warp fill's `fill_run` with a stride of one (one pointer per store) instead of
# its own paired copy of that loop; mend.ptx against d5071b3's embedded kernels; tests and
# memcheck with mend.ptx.
X=nv16
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in base mend; do echo "== $v"
  if [ $v = base ]; then ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
  else ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s; fi
done; done > $OUT/13-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/13-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(4), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
echo "== tests mend"; ACEAPEX_DEV_PTX=$X/mend.ptx $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/13-tests.log
echo "== memcheck mend"; ACEAPEX_DEV_PTX=$X/mend.ptx compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/13-sanitizer.log
