#!/usr/bin/env bash
# Fourteenth session: bash docs/gpu-runs/2026-12-01f/go.sh BUNDLE [tests] [sanitizer] [bench] [profile]
# bench: the bundle's level-6 archives with the new bench binary against the previous step's
# (BUNDLE/old2/) and the session start's (BUNDLE/old/), alternated; with `warps`, the new one
# with the rANS CTA size forced to 16 warps (the 64-register packed kernel) and to 8 (the
# narrow packed kernel). SUMMARY lines only
# (criterion filtered out: `none`); logs in $OUT (at most 8 files come back). profile: ncu on hs37 (run.sh profile).
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
  rm -f "$OUTD/prof.ncu-rep" # large; the details and the SASS page are kept
fi
case $what in *" bench "*) ;; *) exit $rc ;; esac
[ -d /tmp/corp ] && [ -n "$(ls /tmp/corp)" ] || bash "$B/run.sh" none > /dev/null 2>&1
run_bench() { # label binary [env...]
  local label=$1 bin=$2; shift 2
  echo "-- $label"
  env "$@" ACEAPEX_BENCH_ARCHIVES="$B/data" "$bin" --bench none 2>&1 | sed "s/^/$label: /" | tee -a "$OUTD/bench.log" |
    grep -E "SUMMARY" | sed -E 's/^[^:]*: //; s/SUMMARY gpu_decode ([^:]*): [0-9]+ bytes, ratio ([0-9.]+); device-resident dense ([0-9.]+ ms = [0-9.]+ GB\/s).*stage split \(dense\): (.*); parse\+fill parallel.*/\1 r=\2 dense \3 | \4/'
}
# A/B: new against the previous step (old2/, when present) and the session's start (old/)
prev="$B/old/bench-gpu_decode"
[ -x "$B/old2/bench-gpu_decode" ] && prev="$B/old2/bench-gpu_decode"
run_bench new-1 "$B/bin/bench-gpu_decode"
run_bench prev-1 "$prev"
run_bench new-2 "$B/bin/bench-gpu_decode"
run_bench prev-2 "$prev"
run_bench base "$B/old/bench-gpu_decode"
case $what in *" warps "*)
  run_bench new-w16 "$B/bin/bench-gpu_decode" ACEAPEX_GPU_RANS_WARPS=16
  run_bench new-w8 "$B/bin/bench-gpu_decode" ACEAPEX_GPU_RANS_WARPS=8 ;;
esac
exit $rc
