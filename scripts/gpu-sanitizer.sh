#!/usr/bin/env bash
# The GPU hostile-archive tests (tests/gpu/hostile.rs) under compute-sanitizer, on a machine
# with an NVIDIA GPU, from a test binary built elsewhere (scripts/gpu-bundle.sh puts it at
# gpu-bundle/bin/test-gpu; no Rust needed here):
#   memcheck   every hostile-archive path (dense, dense --target gpu, lane, wavefront, seek)
#              with $HOSTILE_MUTANTS mutants each (default 25), and the moved-block test
#   racecheck  the moved-block test (dense, lane, wavefront and seek on six 4 KiB blocks)
#              and the dense pipe with 2 mutants
# Each tool's run is cut at $SANITIZER_TIMEOUT seconds (default 270; a cut run fails).
# Exits non-zero when a test fails or the sanitizer reports anything (an error or a
# hazard). Logs to $OUT (default /tmp/aceapex-out): sanitizer-*.log.
# Usage: bash scripts/gpu-sanitizer.sh [TEST_BINARY]   (default gpu-bundle/bin/test-gpu)
set -uo pipefail
BIN=${1:-gpu-bundle/bin/test-gpu}
OUTD=${OUT:-/tmp/aceapex-out}
mkdir -p "$OUTD"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$CS" ] || { echo "compute-sanitizer not found"; exit 2; }
[ -x "$BIN" ] || { echo "no test binary at $BIN"; exit 2; }
rc=0
# run NAME TOOL FILTER...: the test binary's GPU tests matching FILTER under TOOL
run() {
  local name=$1 tool=$2; shift 2
  local log="$OUTD/sanitizer-$name.log"
  echo "== compute-sanitizer --tool $tool: $*"
  timeout "${SANITIZER_TIMEOUT:-270}" "$CS" --tool "$tool" --error-exitcode 9 "$BIN" \
    --include-ignored --test-threads=1 --nocapture --skip hostile_mutants_against_the_cpu \
    "$@" > "$log" 2>&1
  local st=$?
  grep -E "^test |test result|hostile archives|disagreements|DISAGREEMENT|ERROR SUMMARY|RACECHECK SUMMARY" "$log"
  # a summary line with a count above zero is a report, whatever the exit status says
  if [ $st -ne 0 ] || grep -Eq "(ERROR|RACECHECK) SUMMARY: [1-9]" "$log" \
    || ! grep -q "test result: ok" "$log"; then
    echo "   FAILED ($name, exit $st): see $log"
    rc=1
  fi
}
ACEAPEX_HOSTILE_MUTANTS=${HOSTILE_MUTANTS:-25} run memcheck memcheck hostile::
ACEAPEX_HOSTILE_MUTANTS=2 run racecheck racecheck \
  hostile::moved_blocks_fail_on_every_gpu_path hostile::hostile_archives_on_the_dense_pipe --exact
exit $rc
