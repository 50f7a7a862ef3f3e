#!/bin/bash
# run 8 of the seventh session: racecheck on the final test binary (2586290), which kernel
X=gpu-bundle/x8
for t in dense_kernel_resolves dense_kernel_decodes_deep gpu_decoders_fail_closed; do
  echo "== racecheck $t"
  compute-sanitizer --tool racecheck --racecheck-report analysis $X/test-gpu --test-threads=1 $t > $OUT/8-racecheck-$t.log 2>&1
  grep -E "RACECHECK SUMMARY|test result" $OUT/8-racecheck-$t.log
  grep -oE "(in|at) [a-z_]+(\+0x[0-9a-f]+)?" $OUT/8-racecheck-$t.log | sort | uniq -c | sort -rn | head -8
done
