#!/usr/bin/env bash
# Fourteenth session: bash docs/gpu-runs/2026-12-01f/go.sh BUNDLE [tests] [sanitizer] [bench] [profile]
# bench: the bundle's level-6 archives with the new bench binary against the previous step's
# (BUNDLE/old2/) and the session start's (BUNDLE/old/), alternated; with `warps`, the new one
# with the rANS CTA size forced to 16 warps (the 64-register packed kernel) and to 8 (the
# narrow packed kernel). SUMMARY lines only
# (criterion filtered out: `none`); logs in $OUT (at most 8 files come back). profile: ncu on hs37 (run.sh profile).
# (the set-up, the part dispatch and run_bench now live in scripts/gpu-lib.sh, shared with
# scripts/gpu-go.sh; the steps are those this session ran)
. "$(dirname "$0")/../../../scripts/gpu-lib.sh"
go_init "$@"
run_parts 60 $(parts_in "$what" tests sanitizer profile) || rc=1
case $what in *" bench "*) ;; *) exit $rc ;; esac
[ -d /tmp/corp ] && [ -n "$(ls /tmp/corp)" ] || bash "$B/run.sh" none > /dev/null 2>&1
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
