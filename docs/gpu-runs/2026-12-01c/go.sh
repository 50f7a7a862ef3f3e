#!/usr/bin/env bash
# Run 1 of the eleventh session (format v4): bash docs/gpu-runs/2026-12-01c/go.sh gpu-bundle-v4
# B/data: level-6 archives (base 6, version 3); B/data9: level-9 archives (base 4, version 4);
# B/old/bench-gpu_decode: the bench binary of the previous commit (f1aa207) for a same-call A/B.
set -uo pipefail
B=$1
OUTD=${OUT:-/tmp/out}
mkdir -p "$OUTD"
rc=0
# GPU tests (real corpora from data/, now also at minimum matches 4 and 5), CLI dense and
# wavefront checks, memcheck
bash "$B/run.sh" tests sanitizer 2>&1 | tee "$OUTD/run-tests.log" | grep -vE "^test .* ok$" | tail -60 || rc=1
echo "== version-4 archives (level 9, match base 4): GPU against the CPU decoder"
mkdir -p /tmp/c9
for a in "$B"/data9/*.acx; do
  n=$(basename "$a" .acx)
  "$B/bin/aceapex" info "$a" | grep -E "format|encoder"
  "$B/bin/aceapex" decompress "$a" -o "/tmp/c9/$n" --device cpu -f 2>&1 | tail -1
  ACEAPEX_GPU_PHASES=0 "$B/bin/aceapex" decompress "$a" -o /tmp/g9.out --device gpu -f 2>&1 | tail -1
  cmp -s "/tmp/c9/$n" /tmp/g9.out && echo "  bit-exact: $n (dense)" || { echo "  MISMATCH: $n"; rc=1; }
  "$B/bin/aceapex" decompress -t "$a" --device gpu 2>&1 | tail -1
done
echo "== version-4 cross-block archives (-l 8 --window 1M, match base 4: the wavefront decoder)"
head -c 4000000 /tmp/corp/gcide.txt > /tmp/c9/gcide4M.txt
for f in /tmp/c9/moby_dick.txt /tmp/c9/gcide4M.txt; do
  "$B/bin/aceapex" compress "$f" -o /tmp/x9.acx -l 8 --window 1M -f 2>&1 | tail -1
  "$B/bin/aceapex" info /tmp/x9.acx | grep -E "format|encoder|window"
  "$B/bin/aceapex" decompress /tmp/x9.acx -o /tmp/g9.out --device gpu -f 2>&1 | tail -1
  cmp -s "$f" /tmp/g9.out && echo "  bit-exact: $(basename "$f") --window 1M -l 8" || { echo "  MISMATCH: $f"; rc=1; }
done
echo "== decode bench: new vs old binary on the level-6 archives (alternated), then the v4 archives"
for i in 1 2; do
  for who in new old; do
    bin=$B/bin/bench-gpu_decode; [ $who = old ] && bin=$B/old/bench-gpu_decode
    echo "-- $who ($i)"
    ACEAPEX_BENCH_ARCHIVES="$B/data" "$bin" --bench 2>&1 | tee "$OUTD/bench-$who-$i.log" | grep -E "SUMMARY|skipped"
  done
done
echo "-- new, v4 archives"
ACEAPEX_BENCH_ARCHIVES="$B/data9" "$B/bin/bench-gpu_decode" --bench 2>&1 | tee "$OUTD/bench-v4.log" | grep -E "SUMMARY|skipped"
exit $rc
