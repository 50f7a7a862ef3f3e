#!/bin/bash
# tenth session, call 6 (the last line of runs: aceapex-stage adds pinned double-buffered upload staging and parallel decode-table expansion): the final commit's CLI on the H200: `decompress --device gpu` of six
# level-6 archives (dense) and of a --window 1M archive of each (wavefront), cmp against the CPU
# decoder's output, with ACEAPEX_GPU_PHASES=1; then the old build's phases once more beside it.
D=gpu-bundle-t10/data; E=gpu-bundle-e2e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for a in $D/*.acx; do
  n=$(basename $a .acx)
  $E/aceapex-stage decompress $a -o /tmp/$n.cpu --device cpu -f -q
  for v in old final stage; do
    echo "== $n $v"
    ACEAPEX_GPU_PHASES=1 $E/aceapex-$v decompress $a -o /tmp/$n.gpu --device gpu -f 2>&1
    cmp -s /tmp/$n.cpu /tmp/$n.gpu && echo "bit-exact (dense)" || echo "MISMATCH (dense)"
  done
  $E/aceapex-stage compress /tmp/$n.cpu -o /tmp/cross.acx --window 1M -f -q
  $E/aceapex-stage decompress /tmp/cross.acx -o /tmp/$n.gpu --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/$n.cpu /tmp/$n.gpu && echo "bit-exact (--window 1M, wavefront): $n" || echo "MISMATCH (--window 1M): $n"
  $E/aceapex-stage decompress -t $a --device gpu 2>&1 | tail -1
done
