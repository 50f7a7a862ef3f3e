#!/usr/bin/env bash
# Run 3 of the eleventh session (the final commit's binaries): bash docs/gpu-runs/2026-12-01c/go3.sh gpu-bundle-v4c
# GPU tests, memcheck, CLI bit-exact (dense, wavefront) on the level-6 archives and the level-9
# v4 archive of moby_dick (whose trial default chose minimum match 4).
set -uo pipefail
B=$1
rc=0
bash "$B/run.sh" tests sanitizer 2>&1 | grep -vE "^test .* ok$" | tail -40 || rc=1
a=$B/data9/moby_dick.txt.acx
"$B/bin/aceapex" info "$a" | grep -E "format|encoder"
"$B/bin/aceapex" decompress "$a" -o /tmp/m9.cpu --device cpu -f 2>&1 | tail -1
"$B/bin/aceapex" decompress "$a" -o /tmp/m9.gpu --device gpu -f 2>&1 | tail -1
cmp -s /tmp/m9.cpu /tmp/m9.gpu && cmp -s /tmp/m9.cpu /tmp/corp/moby_dick.txt && echo "  bit-exact: moby_dick level 9 (v4)" || { echo "  MISMATCH"; rc=1; }
exit $rc
