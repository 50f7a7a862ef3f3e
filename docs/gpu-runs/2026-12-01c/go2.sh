#!/usr/bin/env bash
# Run 2 of the eleventh session: bash docs/gpu-runs/2026-12-01c/go2.sh gpu-bundle-v4b
# The dense kernel's distance cap 2048 -> 2688 (more shared memory per CTA): GPU tests (with
# the token samples around the cap), memcheck, the v4 level-9 archive of moby_dick (73 of 75
# blocks over the old cap) and the level-6 archives against the previous bench binary.
set -uo pipefail
B=$1
OUTD=${OUT:-/tmp/out}
mkdir -p "$OUTD"
rc=0
bash "$B/run.sh" tests sanitizer 2>&1 | tee "$OUTD/run-tests.log" | grep -vE "^test .* ok$" | tail -40 || rc=1
echo "== moby_dick level 9 (v4): GPU against the CPU decoder"
a=$B/data9/moby_dick.txt.acx
"$B/bin/aceapex" decompress "$a" -o /tmp/m9.cpu --device cpu -f 2>&1 | tail -1
"$B/bin/aceapex" decompress "$a" -o /tmp/m9.gpu --device gpu -f 2>&1 | tail -1
cmp -s /tmp/m9.cpu /tmp/m9.gpu && echo "  bit-exact" || { echo "  MISMATCH"; rc=1; }
echo "== decode bench: new vs old binary on the level-6 archives (alternated), then v4 moby_dick"
for i in 1 2; do
  for who in new old; do
    bin=$B/bin/bench-gpu_decode; [ $who = old ] && bin=$B/old/bench-gpu_decode
    echo "-- $who ($i)"
    ACEAPEX_BENCH_ARCHIVES="$B/data" "$bin" --bench 2>&1 | tee "$OUTD/bench-$who-$i.log" | grep -E "SUMMARY|skipped"
  done
done
echo "-- new, v4"
ACEAPEX_BENCH_ARCHIVES="$B/data9" "$B/bin/bench-gpu_decode" --bench 2>&1 | tee "$OUTD/bench-v4.log" | grep -E "SUMMARY|skipped"
exit $rc
