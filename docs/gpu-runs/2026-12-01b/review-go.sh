#!/bin/bash
# tenth session, call 7: the review-mended final commit's CLI on the H200: `decompress --device gpu`
# of six level-6 archives (dense; output poisoned first by the decoder) and of a --window 1M
# archive of each (wavefront), cmp against the CPU decoder's output; `decompress -t` on the GPU;
# phases of gcide with ACEAPEX_GPU_PHASES=1.
D=gpu-bundle-t10/data; E=gpu-bundle-e2e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for a in $D/*.acx; do
  n=$(basename $a .acx)
  $E/aceapex-final decompress $a -o /tmp/$n.cpu --device cpu -f -q
  $E/aceapex-final decompress $a -o /tmp/$n.gpu --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/$n.cpu /tmp/$n.gpu && echo "bit-exact (dense): $n" || echo "MISMATCH (dense): $n"
  $E/aceapex-final compress /tmp/$n.cpu -o /tmp/cross.acx --window 1M -f -q
  $E/aceapex-final decompress /tmp/cross.acx -o /tmp/$n.gpu --device gpu -f 2>&1 | tail -1
  cmp -s /tmp/$n.cpu /tmp/$n.gpu && echo "bit-exact (--window 1M, wavefront): $n" || echo "MISMATCH (--window 1M): $n"
  $E/aceapex-final decompress -t $a --device gpu 2>&1 | tail -1
done
ACEAPEX_GPU_PHASES=1 $E/aceapex-final decompress $D/gcide.txt.acx -o /tmp/g.gpu --device gpu -f 2>&1
