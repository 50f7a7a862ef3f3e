#!/usr/bin/env bash
# CPU decode of level-6 `--raw-match-streams` archives with and without `--wide-lanes`,
# alternated: `aceapex decompress` end to end (2 threads here, checksums verified), MB/s as the
# CLI prints it, ROUNDS rounds (default 6), sorted per archive. Usage (repo root, after cargo
# build --release): bash docs/cpu-runs/2026-12-02d/wide_ab.sh FILE...
set -euo pipefail
A=target/release/aceapex
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in "$@"; do
  b=$(basename "$f")
  $A compress -q -f -l 6 --raw-match-streams "$f" -o "$T/$b.rms.acx"
  $A compress -q -f -l 6 --raw-match-streams --wide-lanes "$f" -o "$T/$b.wide.acx"
  for i in $(seq 1 "${ROUNDS:-6}"); do
    for v in rms wide; do
      $A decompress -f "$T/$b.$v.acx" -o "$T/out" 2>&1 | grep -o '[0-9.]* MB/s' | cut -d' ' -f1 >> "$T/$b.$v.t"
    done
  done
  for v in rms wide; do echo "$b $v $(stat -c %s "$T/$b.$v.acx") bytes; MB/s: $(sort -n "$T/$b.$v.t" | tr '\n' ' ')"; done
done
