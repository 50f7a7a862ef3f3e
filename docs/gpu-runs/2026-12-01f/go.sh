#!/usr/bin/env bash
# Fourteenth session: bash docs/gpu-runs/2026-12-01f/go.sh BUNDLE [tests] [sanitizer] [bench] [profile]
# bench: the bundle's level-6 archives with the new bench binary and the previous commit's
# (BUNDLE/old/), alternated; then the new one with the rANS CTA size forced to 16 warps
# (the 64-register packed kernel) and to 8 (the narrow packed kernel). SUMMARY lines only
# (criterion filtered out: `none`); logs in $OUT. profile: ncu on hs37 (run.sh profile).
set -uo pipefail
B=$1
shift
what=" ${*:-tests bench} "
OUTD=${OUT:-/tmp/out}
mkdir -p "$OUTD"
rc=0
parts=""
case $what in *" tests "*) parts="$parts tests" ;; esac
case $what in *" sanitizer "*) parts="$parts sanitizer" ;; esac
case $what in *" profile "*) parts="$parts profile" ;; esac
if [ -n "$parts" ]; then
  bash "$B/run.sh" $parts > "$OUTD/run.log" 2>&1 || rc=1
  grep -vE "^test .* ok$" "$OUTD/run.log" | grep -vE "^\s*$" | tail -60
fi
case $what in *" bench "*) ;; *) exit $rc ;; esac
[ -d /tmp/corp ] && [ -n "$(ls /tmp/corp)" ] || bash "$B/run.sh" none > /dev/null 2>&1
run_bench() { # label binary [env...]
  local label=$1 bin=$2; shift 2
  echo "-- $label"
  env "$@" ACEAPEX_BENCH_ARCHIVES="$B/data" "$bin" --bench none 2>&1 | tee "$OUTD/bench-$label.log" |
    grep -E "SUMMARY" | sed -E 's/SUMMARY gpu_decode ([^:]*): [0-9]+ bytes, ratio ([0-9.]+); device-resident dense ([0-9.]+ ms = [0-9.]+ GB\/s).*stage split \(dense\): (.*); parse\+fill parallel.*/\1 r=\2 dense \3 | \4/'
}
run_bench new-1 "$B/bin/bench-gpu_decode"
run_bench old-1 "$B/old/bench-gpu_decode"
run_bench new-2 "$B/bin/bench-gpu_decode"
run_bench old-2 "$B/old/bench-gpu_decode"
run_bench new-w16 "$B/bin/bench-gpu_decode" ACEAPEX_GPU_RANS_WARPS=16
run_bench new-w8 "$B/bin/bench-gpu_decode" ACEAPEX_GPU_RANS_WARPS=8
exit $rc
