#!/bin/bash
# run 4 of the eighth session: old binary (4382afd + the rANS-only bench switch) against
# new: rANS hints (st L1::no_allocate, ld L2::256B), short commands filled two pointers per
# 32-bit store (long ones as before, warp/CTA one pointer per lane per store), and the rANS
# chunk order (longest chain first; hs37 needs 271 chunks of 16 blocks for 264 CTA slots).
# PTX variants of the new binary: lane-fill threshold 32 and 40 (24 in new). Tests (13, with
# a two-round archive) and memcheck of the new binary.
X=gpu-bundle/x4
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in old new lane32 lane40; do
  echo "== $v"
  case $v in
    old) ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-old --bench none 2>&1 | s ;;
    new) ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s ;;
    *) ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s ;;
  esac
done; done > $OUT/4-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/4-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(7), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
echo "== tests new"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/4-tests.log
echo "== memcheck new"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint two_rounds 2>&1 | tail -2 | tee $OUT/4-sanitizer.log
