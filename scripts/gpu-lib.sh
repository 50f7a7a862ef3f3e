# Steps shared by the device-call scripts (scripts/gpu-go.sh, docs/gpu-runs/2026-12-01f/go.sh):
# source it, then `go_init "$@"`.

# go_init BUNDLE [PART...]: sets B (the bundle's folder), what (the PARTs, space-padded; none
# named: "tests bench"), OUTD ($OUT, else /tmp/out; created) and rc=0, with `set -uo pipefail`.
go_init() {
  set -uo pipefail
  B=$1
  shift
  what=" ${*:-tests bench} "
  OUTD=${OUT:-/tmp/out}
  mkdir -p "$OUTD"
  rc=0
}

# parts_in WHAT NAME...: the NAMEs that the space-padded word list " WHAT " holds, in NAME order.
parts_in() {
  local what=$1 p
  shift
  for p in "$@"; do
    case $what in *" $p "*) printf ' %s' "$p" ;; esac
  done
}

# run_parts TAIL PART...: the bundle's run.sh PARTs (scripts/gpu-run.sh; none named: nothing),
# the whole log in $OUTD/run.log, its last TAIL lines but passing tests and blank lines printed;
# status 1 when run.sh failed. A profile's large ncu report is removed (its details and SASS
# page are kept).
run_parts() {
  local tail=$1 st=0
  shift
  [ $# -gt 0 ] || return 0
  bash "$B/run.sh" "$@" > "$OUTD/run.log" 2>&1 || st=1
  grep -vE "^test .* ok$" "$OUTD/run.log" | grep -vE "^\s*$" | tail -"$tail"
  rm -f "$OUTD/prof.ncu-rep"
  return $st
}

# run_bench LABEL BINARY [VAR=V...]: the bench binary on the bundle's archives (data/, unless a
# VAR=V sets ACEAPEX_BENCH_ARCHIVES) under the extra environment, its log appended to
# $OUTD/bench.log, its SUMMARY lines printed one short line per file.
run_bench() {
  local label=$1 bin=$2
  shift 2
  echo "-- $label"
  env ACEAPEX_BENCH_ARCHIVES="$B/data" "$@" "$bin" --bench none 2>&1 | sed "s/^/$label: /" | tee -a "$OUTD/bench.log" |
    grep -E "SUMMARY" | sed -E 's/^[^:]*: //; s/SUMMARY gpu_decode ([^:]*): [0-9]+ bytes, ratio ([0-9.]+); device-resident dense ([0-9.]+ ms = [0-9.]+ GB\/s).*stage split \(dense\): (.*); parse\+fill parallel.*/\1 r=\2 dense \3 | \4/'
}
