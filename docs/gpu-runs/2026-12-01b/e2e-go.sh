#!/bin/bash
# tenth session, call 2: end-to-end GPU decode phases, old (host-filled poison buffer, two
# hash passes) vs new (device memset, one hash pass), alternated; CLI `decompress --device gpu`
# with ACEAPEX_GPU_PHASES=1, then `cmp` against the CPU decoder's output.
D=gpu-bundle-t10/data; E=gpu-bundle-e2e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for a in gcide.txt mouse_RNAseq_top100k_1.fq TAIR10_chr1.fna moby_dick.txt; do
  $E/aceapex-new decompress $D/$a.acx -o /tmp/$a.cpu --device cpu -f -q
  for rep in 1 2 3; do
    for v in old new; do
      echo "== $a $v $rep"
      ACEAPEX_GPU_PHASES=1 $E/aceapex-$v decompress $D/$a.acx -o /tmp/$a.gpu --device gpu -f 2>&1
      cmp -s /tmp/$a.cpu /tmp/$a.gpu && echo "bit-exact" || echo "MISMATCH"
    done
  done
done
