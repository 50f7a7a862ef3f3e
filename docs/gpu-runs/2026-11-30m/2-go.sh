#!/bin/bash
# run 2 of the eighth session: finer rANS lane counts (archives re-encoded by the new
# encoder: LANE_COUNTS 1-8 and 4k, chains within 1.5 * 256 steps or the fewest 32 lanes
# allow) and the one-round warp rule (hs37: 17 warps per CTA); old binary (4382afd + the
# rANS-only bench switch) against new on the same new archives; then store/load cache-hint
# variants of the rANS loop (S1 st.cs, S2 st.L1::no_allocate, W1 word loads
# ld.L2::256B, W2 = S2 + W1), rANS stage alone; tests and memcheck of the new binary.
X=gpu-bundle/x2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for b in old new; do
  echo "== $b"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-$b --bench none 2>&1 | s
done; done > $OUT/2-binaries.log 2>&1
python3 - <<'PY'
import re,os
v=None
for line in open(os.environ['OUT']+'/2-binaries.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY gpu_decode (\S+): .*dense ([\d.]+) ms = ([\d.]+) GB/s.*rANS ([\d.]+) ms, \+load/varints ([\d.]+) ms, \+parse/fill ([\d.]+) ms, \+resolve/write ([\d.]+)',line)
    if m: print(v.ljust(4), m.group(1)[:10].ljust(10), *m.groups()[1:])
    elif 'SUMMARY' not in line: print(v, line.strip()[:200])
PY
for rep in 1 2; do for v in base S1-st-cs S2-st-noalloc W1-ld-L2-256 W2-both; do
  echo "== $v"; ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_RANS_ONLY=1 ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
done; done > $OUT/2-variants.log 2>&1
python3 - <<'PY'
import re,os,collections
v=None; t=collections.defaultdict(list)
for line in open(os.environ['OUT']+'/2-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY rans_only (\S+): .*: ([\d.]+) ms',line)
    if m: t[(v,m.group(1)[:8])].append(m.group(2))
for k,x in t.items(): print(k[0].ljust(14),k[1].ljust(9),*x)
PY
echo "== tests new"; $X/test-new --test-threads=1 2>&1 | grep -E "test result|FAIL|panick" | tee $OUT/2-tests.log
echo "== memcheck new"; compute-sanitizer --tool memcheck --error-exitcode 9 $X/test-new --test-threads=1 smoke dense_kernel fail_closed rejects max_depth_hint 2>&1 | tail -2 | tee $OUT/2-sanitizer.log
