#!/usr/bin/env bash
# Thirteenth session: bash docs/gpu-runs/2026-12-01e/go.sh gpu-bundle-v6 [tests] [bench] [twice] [global]
# Format v6 (packed literal tables, FORMAT.md §5.6): GPU tests (packed archives of widths
# 2-4, staged and unstaged expansion tables, versions 3-6), memcheck, CLI bit-exact on the
# level-6 archives of the new encoder (v6 on DNA) and their --window 1M archives; then the
# decode bench: the same corpora at level 6 with --no-pack (made here) against the packed
# ones, alternated, the previous commit's bench binary (old/) on the --no-pack archives, and
# the packed ones with the expansion table read from global memory.
set -uo pipefail
B=$1
shift
what=" ${*:-tests bench} "
OUTD=${OUT:-/tmp/out}
mkdir -p "$OUTD" "$B/data5"
rc=0
case $what in *" tests "*)
bash "$B/run.sh" tests sanitizer 2>&1 | tee "$OUTD/run-tests.log" | grep -vE "^test .* ok$" | tail -45 || rc=1
;; esac
case $what in *" bench "*) ;; *) exit $rc ;; esac
if [ ! -d /tmp/corp ] || [ -z "$(ls /tmp/corp)" ]; then
  mkdir -p /tmp/corp
  for a in "$B"/data/*.acx; do
    "$B/bin/aceapex" decompress "$a" -o "/tmp/corp/$(basename "$a" .acx)" --device cpu -f -q
  done
fi
if [ -f "$B/aceapex.ptx" ]; then
  echo "== ptxas: registers and spills of the rANS and dense kernels"
  ptxas -arch=sm_90 -v "$B/aceapex.ptx" -o /tmp/k.cubin 2>&1 | grep -A2 -E "entry function '(rans_decode_slices[a-z_]*|decode_blocks_dense)'" | grep -E "entry|Used|spill"
fi
echo "== archives: info of the level-6 ones; --no-pack ones made here"
for f in /tmp/corp/*; do
  n=$(basename "$f")
  "$B/bin/aceapex" info "$B/data/$n.acx" | grep -E "format|archive size|stream literals"
  "$B/bin/aceapex" compress "$f" -o "$B/data5/$n.acx" -l 6 --no-pack -f -q
  "$B/bin/aceapex" info "$B/data5/$n.acx" | grep -E "format|archive size"
  "$B/bin/aceapex" decompress "$B/data5/$n.acx" -o /tmp/g.out --device gpu -f 2>&1 | tail -1
  cmp -s "$f" /tmp/g.out && echo "  bit-exact: data5/$n" || { echo "  MISMATCH: data5/$n"; rc=1; }
done
echo "== decode bench: packed (v6), --no-pack (new and previous binary), packed again"
run_bench() { # label archives-dir binary
  echo "-- $1"
  ACEAPEX_BENCH_ARCHIVES="$2" "$3" --bench 2>&1 | tee "$OUTD/bench-$1.log" | grep -E "SUMMARY|skipped"
}
run_bench packed-1 "$B/data" "$B/bin/bench-gpu_decode"
run_bench nopack-new "$B/data5" "$B/bin/bench-gpu_decode"
run_bench nopack-old "$B/data5" "$B/old/bench-gpu_decode"
case $what in *" twice "*) run_bench packed-2 "$B/data" "$B/bin/bench-gpu_decode" ;; esac
case $what in *" global "*)
  ACEAPEX_GPU_STAGE_EXPAND=0 run_bench packed-global "$B/data" "$B/bin/bench-gpu_decode" ;;
esac
exit $rc
