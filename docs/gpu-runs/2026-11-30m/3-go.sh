#!/bin/bash
# run 3 of the eighth session: old binary (4382afd + the rANS-only bench switch) against
# new: rANS symbol stores st.global.L1::no_allocate and word loads ld.global.L2::256B
# (inline asm), short commands filled two pointers per 32-bit store by their lane, long
# ones two per lane per store by the warp/CTA. Variants of the new binary by PTX:
# rans-hints (only the rANS change), fill-quad (short commands four pointers per 64-bit
# store). Then tests and memcheck of the new binary, tests of fill-quad.
X=gpu-bundle/x3
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in old new rans-hints fill-quad; do
  echo "== $v"
  case $v in
    old) ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-old --bench none 2>&1 | s ;;
    new) ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s ;;
    *) ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s ;;
  esac
done; done > $OUT/3-variants.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/3-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(10), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
echo "== tests new"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/3-tests.log
echo "== tests fill-quad"; ACEAPEX_DEV_PTX=$X/fill-quad.ptx $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee -a $OUT/3-tests.log
echo "== memcheck new"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -2 | tee $OUT/3-sanitizer.log
