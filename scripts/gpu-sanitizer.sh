#!/usr/bin/env bash
# The GPU hostile-archive tests (tests/gpu/hostile.rs) under compute-sanitizer, on a machine
# with an NVIDIA GPU, from a test binary built elsewhere (scripts/gpu-bundle.sh puts it at
# gpu-bundle/bin/test-gpu; no Rust needed here):
#   memcheck   every hostile-archive path (dense, dense --target gpu, lane, wavefront, seek)
#              with $HOSTILE_MUTANTS mutants each (default 25), and the moved-block test
#   racecheck  the moved-block test (dense, lane, wavefront and seek on six 4 KiB blocks)
#              and the dense pipe with 2 mutants, from RACECHECK_BINARY (default: the
#              bundle's bin/test-racecheck-gpu beside TEST_BINARY), the kernels' `racecheck`
#              build: its stage 3 has no by-design races (device/src/dense/write.rs:
#              `write_memo`'s pointer stores race with other threads' chain loads, which
#              racecheck reports as an error on any block with matches), so every hazard
#              it reports is one to fix; then the seek of damaged archives of MBs in 4
#              and 16 KiB blocks, $RACECHECK_SEEK_MUTANTS per archive (default 1): more
#              blocks than the seek's grid, so a CTA takes another block after one that
#              failed before its write (the hostile archives' seeks have one block a CTA)
# Each tool's run is cut at $SANITIZER_TIMEOUT seconds (default 270; a cut run fails).
# Exits non-zero when a test fails or the sanitizer reports anything (an error or a
# hazard). Logs to $OUT (default /tmp/aceapex-out): sanitizer-*.log.
# Usage: bash scripts/gpu-sanitizer.sh [TEST_BINARY [RACECHECK_BINARY]]
#   (default gpu-bundle/bin/test-gpu and gpu-bundle/bin/test-racecheck-gpu)
set -uo pipefail
BIN=${1:-gpu-bundle/bin/test-gpu}
RBIN=${2:-$(dirname "$BIN")/test-racecheck-gpu}
OUTD=${OUT:-/tmp/aceapex-out}
mkdir -p "$OUTD"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$CS" ] || { echo "compute-sanitizer not found"; exit 2; }
[ -x "$BIN" ] || { echo "no test binary at $BIN"; exit 2; }
[ -x "$RBIN" ] || { echo "no racecheck test binary at $RBIN (scripts/gpu-bundle.sh)"; exit 2; }
rc=0
# run NAME TOOL BINARY FILTER...: the GPU tests of BINARY matching FILTER under TOOL
run() {
  local name=$1 tool=$2 bin=$3; shift 3
  local log="$OUTD/sanitizer-$name.log"
  echo "== compute-sanitizer --tool $tool: $*"
  timeout "${SANITIZER_TIMEOUT:-270}" "$CS" --tool "$tool" --error-exitcode 9 "$bin" \
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
ACEAPEX_HOSTILE_MUTANTS=${HOSTILE_MUTANTS:-25} run memcheck memcheck "$BIN" hostile::
ACEAPEX_HOSTILE_MUTANTS=2 run racecheck racecheck "$RBIN" \
  hostile::moved_blocks_fail_on_every_gpu_path hostile::hostile_archives_on_the_dense_pipe --exact
ACEAPEX_SEEK_MUTANTS=${RACECHECK_SEEK_MUTANTS:-1} run racecheck-seek racecheck "$RBIN" \
  seek::seek_reports_damaged_blocks_as_the_cpu_does --exact
exit $rc
