#!/usr/bin/env bash
# Blockwise zstd ratio with the zstd CLI, any zstd options: the first MIB MiB of FILE cut into
# independent 16 KiB pieces (`split -b 16384`), each compressed on its own as
# `zstd -19 --no-check OPTIONS`, ratio = bytes / sum of the compressed pieces, e.g.
#   scripts/zstd_blockwise.sh corpora/text/gcide.txt 4 --zstd=mml=6
# Usage: scripts/zstd_blockwise.sh FILE MIB [ZSTD_OPTIONS...]
set -euo pipefail
file=$1
mib=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c $((mib * 1048576)) "$file" > "$tmp/in"
n=$(stat -c %s "$tmp/in")
(cd "$tmp" && split -b 16384 -a 5 in p_)
total=0
for f in "$tmp"/p_*; do
  total=$((total + $(zstd -19 --no-check "$@" -c "$f" | wc -c)))
done
python3 -c "print(f'$(basename "$file") first {$n} bytes, zstd -19 $*: ratio {$n / $total:.4f}')"
