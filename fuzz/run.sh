#!/usr/bin/env bash
# Runs every fuzz target in turn for SECONDS each (default 600), one process at a time at
# low priority, seeded from tests/golden (docs/RELIABILITY.md). Logs go to fuzz/logs/; a
# crash, timeout or out-of-memory input lands in fuzz/artifacts/<target>/.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -u
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_mutated decode container roundtrip determinism)
export ACEAPEX_SKIP_PTX=1
mkdir -p logs
for t in "${targets[@]}"; do mkdir -p "corpus/$t"; done
cp ../tests/golden/*.acx corpus/decode/
cp ../tests/golden/*.acx corpus/container/
# small seeds for the script-driven targets: a base index and a few operations
for i in $(seq 0 15); do
  printf "\\x$(printf %x "$i")\\x03\\x09\\x03\\x00\\x00\\x00\\x80" > "corpus/decode_mutated/s$i"
  printf "\\x01\\x$(printf %x "$i")\\x02\\x06\\x04\\x01" > "corpus/container/s$i"
done
printf '\x04\x00\x00\x02\x07\x00\x00\x00\x00hello hello hello world' > corpus/roundtrip/s0
{ printf '\x05\x00\x02\x02\x3f\x00\x01\x00\x84'; head -c 3000 ../tests/golden/dna.fa; } > corpus/roundtrip/s1
cp corpus/roundtrip/s* corpus/determinism/
cargo fuzz build -O || exit 1
for t in "${targets[@]}"; do
  case $t in
    roundtrip | determinism) len=(-max_len=4096) ;;
    *) len=() ;;
  esac
  echo "== $t $(date -u +%FT%TZ) ${secs}s" | tee -a logs/runs.txt
  nice -n 10 cargo fuzz run -O "$t" -- -max_total_time="$secs" -timeout=60 -rss_limit_mb=4096 \
    -print_final_stats=1 "${len[@]}" > "logs/$t.log" 2>&1
  echo "exit $? $(grep -E '^Done|stat::number_of_executed_units' "logs/$t.log" | tr '\n' ' ')" | tee -a logs/runs.txt
done
