#!/bin/bash
# tenth session, call 4: end-to-end GPU decode phases of three builds, alternated:
# old (host-filled poison buffer, two hash passes), new (device memset, one hash pass),
# new2 (new + a download buffer whose pages are touched in parallel first; upload sub-phases),
# new3 (new2 + the table vector reserved up front, the archive's pages read in parallel before the upload).
# CLI `decompress --device gpu` with ACEAPEX_GPU_PHASES=1, then `cmp` against the CPU output.
D=gpu-bundle-t10/data; E=gpu-bundle-e2e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
for a in gcide.txt mouse_RNAseq_top100k_1.fq TAIR10_chr1.fna; do
  $E/aceapex-new3 decompress $D/$a.acx -o /tmp/$a.cpu --device cpu -f -q
  for rep in 1 2 3; do
    for v in old new2 new3; do
      echo "== $a $v $rep"
      ACEAPEX_GPU_PHASES=1 $E/aceapex-$v decompress $D/$a.acx -o /tmp/$a.gpu --device gpu -f 2>&1
      cmp -s /tmp/$a.cpu /tmp/$a.gpu && echo "bit-exact" || echo "MISMATCH"
    done
  done
done
