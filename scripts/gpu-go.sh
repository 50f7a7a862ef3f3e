#!/usr/bin/env bash
# One device call of a GPU session: bash scripts/gpu-go.sh BUNDLE [tests] [cli] [sanitizer] [bench] [nvcomp]
# (no part named: tests bench). tests/cli/sanitizer: the bundle's run.sh parts (scripts/gpu-run.sh).
# bench: the bundle's archives (data/) with its bench binary (bin/) under each of the
# variants in $VARIANTS ("label:VAR=V,VAR=V label2:..."; a variant without extra environment is
# written "label:"; default one variant "new:"; each a run of the same binary under other
# environment settings, e.g. ACEAPEX_DEV_PTX for other kernels, or ACEAPEX_BENCH_ARCHIVES for
# other archives of the same files) and, when the bundle has
# one, an earlier binary to compare with (old/, e.g. the previous session's final),
# alternated ROUNDS times (default 2).
# Prints the SUMMARY lines only (criterion filtered out: `none`); whole logs in $OUT.
# nvcomp: nvCOMP 6 (wheels in .whl/, carried) on the restored originals, default, 16 KiB and
# 8 KiB chunks, LZ4/Snappy/GDeflate/Zstd.
. "$(dirname "$0")/gpu-lib.sh"
go_init "$@"
parts=$(parts_in "$what" tests cli sanitizer)
run_parts 45 $parts || rc=1
# the originals of this bundle's archives (a warm machine may still hold another bundle's)
[ -n "$parts" ] || bash "$B/run.sh" none > /dev/null 2>&1
case $what in *" bench "*)
  for i in $(seq 1 "${ROUNDS:-2}"); do
    for v in ${VARIANTS:-new:}; do
      label=${v%%:*}
      envs=${v#*:}
      run_bench "$label-$i" "$B/bin/bench-gpu_decode" ${envs//,/ }
    done
    [ -x "$B/old/bench-gpu_decode" ] && run_bench old-$i "$B/old/bench-gpu_decode"
  done ;;
esac
case $what in *" nvcomp "*)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=/tmp/site
  for c in "" 16384 8192; do
    python3 "$B/nvcomp_bench.py" ${c:+--chunk $c} --algos LZ4,Snappy,GDeflate,Zstd /tmp/corp/* 2>&1 |
      tee -a "$OUTD/nvcomp.tsv" | grep -vE "^#|^file"
  done ;;
esac
exit $rc
