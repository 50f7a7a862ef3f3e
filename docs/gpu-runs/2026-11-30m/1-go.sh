#!/bin/bash
# run 1 of the eighth session: where the rANS step's ~430 cycles go. PTX variants of the
# decode loop (made by /tmp/exp/mkvar.py from the embedded PTX; the diagnostic ones decode
# garbage, so only the rANS stage is timed, ACEAPEX_BENCH_RANS_ONLY): A no symbol store,
# B renormalisation words from one fixed address (always an L1 hit), C = A + B, D table
# lookup as ld.shared instead of a generic load, E words by ld.global.nc, F one word byte
# load instead of two, G = D + E. Then the SASS of the base loop.
X=gpu-bundle/x1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
s() { grep -E "SUMMARY|panick|rror"; }
for rep in 1 2; do for v in base A-nostore B-hotword C-nostore-hot D-lds E-nc F-oneload G-lds-nc; do
  echo "== $v"; ACEAPEX_DEV_PTX=$X/$v.ptx ACEAPEX_BENCH_RANS_ONLY=1 ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s
done; done > $OUT/1-variants.log 2>&1
python3 - <<'PY'
import re,os,collections
v=None; t=collections.defaultdict(list)
for line in open(os.environ['OUT']+'/1-variants.log'):
    m=re.match(r'== (.*)',line)
    if m: v=m.group(1); continue
    m=re.search(r'SUMMARY rans_only (\S+): .*: ([\d.]+) ms',line)
    if m: t[(v,m.group(1)[:8])].append(m.group(2))
for k,x in t.items(): print(k[0].ljust(14),k[1].ljust(9),*x)
PY
ptxas -arch=sm_90 $X/base.ptx -o /tmp/base.cubin && cuobjdump -sass -fun rans_decode_slices /tmp/base.cubin > $OUT/1-rans-sass.txt; wc -l $OUT/1-rans-sass.txt
echo "== base full"; ACEAPEX_BENCH_ARCHIVES=$X/data $X/bench-new --bench none 2>&1 | s | tee $OUT/1-base.log
