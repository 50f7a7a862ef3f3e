#!/usr/bin/env bash
# Run 1 of the twelfth session: bash docs/gpu-runs/2026-12-01d/go.sh gpu-bundle-v5
# Format v5 (context tables, FORMAT.md §5.4): GPU tests (a soft-masked sample, versions 3-5),
# memcheck, CLI bit-exact on the level-6 archives of the new encoder (v5 where contexts pay)
# and on level-9 ones made here; then the decode bench: the new kernels on version-3 archives
# made here with --no-context against the previous bench binary (old/), alternated, and the
# new kernels on the version-5 archives.
set -uo pipefail
B=$1
OUTD=${OUT:-/tmp/out}
mkdir -p "$OUTD" "$B/data3" "$B/data9"
rc=0
bash "$B/run.sh" tests sanitizer 2>&1 | tee "$OUTD/run-tests.log" | grep -vE "^test .* ok$" | tail -45 || rc=1
echo "== archives: info of the level-6 v5 ones; v3 (--no-context) and level-9 ones made here"
for f in /tmp/corp/*; do
  n=$(basename "$f")
  "$B/bin/aceapex" info "$B/data/$n.acx" | grep -E "format|archive size|context"
  "$B/bin/aceapex" compress "$f" -o "$B/data3/$n.acx" -l 6 --no-context -f -q
  "$B/bin/aceapex" compress "$f" -o "$B/data9/$n.acx" -l 9 -f -q
  "$B/bin/aceapex" info "$B/data9/$n.acx" | grep -E "format|archive size"
  for d in data3 data9; do
    "$B/bin/aceapex" decompress "$B/$d/$n.acx" -o /tmp/g.out --device gpu -f 2>&1 | tail -1
    cmp -s "$f" /tmp/g.out && echo "  bit-exact: $d/$n" || { echo "  MISMATCH: $d/$n"; rc=1; }
  done
done
echo "== decode bench: v3 archives new vs old binary (alternated), v5 and level-9 archives new"
for i in 1 2; do
  for who in new old; do
    bin=$B/bin/bench-gpu_decode; [ $who = old ] && bin=$B/old/bench-gpu_decode
    echo "-- $who v3 ($i)"
    ACEAPEX_BENCH_ARCHIVES="$B/data3" "$bin" --bench 2>&1 | tee "$OUTD/bench-v3-$who-$i.log" | grep -E "SUMMARY|skipped"
  done
  echo "-- new v5 ($i)"
  ACEAPEX_BENCH_ARCHIVES="$B/data" "$B/bin/bench-gpu_decode" --bench 2>&1 | tee "$OUTD/bench-v5-$i.log" | grep -E "SUMMARY|skipped"
done
echo "-- new level 9"
ACEAPEX_BENCH_ARCHIVES="$B/data9" "$B/bin/bench-gpu_decode" --bench 2>&1 | tee "$OUTD/bench-l9.log" | grep -E "SUMMARY|skipped"
exit $rc
