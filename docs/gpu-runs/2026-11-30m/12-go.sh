#!/bin/bash
# run 12 of the eighth session: the rANS launch makes only the CTAs the GPU holds at once
# (2 per SM) and the kernel's own loop takes the remaining chunks in the host's order
# (review: the earlier grid of up to 16 CTAs per SM left the order of later rounds to the
# hardware's start order, and the two-round test never ran the kernel's second pass).
# Old = the final binary of runs 10-11 (534f727), new = this change; hs37 (271 chunks for
# 264 CTAs), gcide, swissprot; tests (two-round test: 283 chunks) and memcheck of new.
X=nv15
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for b in old new; do echo "== $b"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-$b --bench none 2>&1 | s; done; done > $OUT/12-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/12-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(4), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
echo "== tests new"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/12-tests.log
echo "== memcheck new"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/12-sanitizer.log
