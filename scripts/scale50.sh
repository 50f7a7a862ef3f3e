#!/usr/bin/env bash
# The scale test of random access (issue 38): a synthetic genome of SIZE bytes made of real
# ones (examples/synth_genome.rs) streamed straight into `aceapex compress --target gpu`
# (the original is never on disk), then the archive read at positions over the whole file on
# the GPU, every range compared with the generator's bytes (examples/scale_check.rs).
# Prints the time of each phase; exits non-zero when a phase fails or a range is wrong.
#
# Usage: scripts/scale50.sh [SIZE] [-- SCALE_CHECK_OPTIONS...]   SIZE: default 50G (binary
#   suffixes K M G T; KB MB GB TB decimal), at most that many bytes, cut at a line end.
# Environment:
#   BIN     folder holding aceapex, synth_genome and scale_check built with the kernels
#           (default: bin/ next to this script if there is one, else gpu-bundle/bin)
#   DATA    folder of .acx archives of the source genomes, restored here with the CPU decoder
#           (default: data/ beside BIN's default); every *.fa.acx / *.fna.acx / *.fasta.acx
#   OUT     where set, a copy of the output goes to $OUT/scale50.log
#   WORK    scratch folder for the restored genomes and the archive (default /tmp/scale)
#   THREADS compress threads (default: all cores); SEED the mutations' key (default 1)
#   DEVICE  gpu (default) or cpu, for scale_check
#   KEEP=1  keeps the archive afterwards
set -euo pipefail
SIZE=50G
if [ $# -gt 0 ] && [ "$1" != "--" ]; then SIZE=$1; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi
# a copy of this script in a bundle folder (next to its bin/ and data/) finds them there
here=$(cd "$(dirname "$0")" && pwd)
if [ -d "$here/bin" ]; then dflt=$here; else dflt=gpu-bundle; fi
BIN=${BIN:-$dflt/bin}
DATA=${DATA:-$dflt/data}
WORK=${WORK:-/tmp/scale}
THREADS=${THREADS:-$(nproc)}
SEED=${SEED:-1}
DEVICE=${DEVICE:-gpu}
for b in aceapex synth_genome scale_check; do
  [ -x "$BIN/$b" ] || { echo "scale50: $BIN/$b is missing (set BIN)" >&2; exit 2; }
done
# everything also goes to $OUT/scale50.log where $OUT is set (the GPU machine's result folder)
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  exec > >(tee "$OUT/scale50.log") 2>&1
fi
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t_all=$(now)
mkdir -p "$WORK/src"
rm -f "$WORK"/src/* "$WORK/big.acx"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "cores $(nproc), memory $(free -g | awk '/Mem:/ { print $2 " GiB, " $7 " GiB available" }'), disk $(df -h "$WORK" | awk 'NR == 2 { print $4 " free" }')"

echo "== restore the source genomes (CPU decoder, verified)"
t=$(now)
sources=()
for a in "$DATA"/*.fa.acx "$DATA"/*.fna.acx "$DATA"/*.fasta.acx; do
  [ -f "$a" ] || continue
  n=$(basename "$a" .acx)
  "$BIN/aceapex" decompress "$a" -o "$WORK/src/$n" --device cpu -f -q
  sources+=("$WORK/src/$n")
done
[ ${#sources[@]} -gt 0 ] || { echo "scale50: no FASTA archive (*.fa.acx, *.fna.acx, *.fasta.acx) in $DATA" >&2; exit 2; }
ls -l "${sources[@]}"
echo "restore: $(since "$t") s"

echo "== generate $SIZE | compress --target gpu -T $THREADS"
info=$("$BIN/synth_genome" --info --size "$SIZE" --seed "$SEED" "${sources[@]}")
echo "$info"
# a compressor that reads its input whole peaks at about twice the input (measured at 250 and
# 500 MB); one that streams needs far less
bytes=${info#bytes=}
bytes=${bytes%% *}
avail=$(awk '/MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
if [ $((bytes / 1000 * 21 / 10)) -gt $((avail / 1000)) ]; then
  echo "scale50: note: $bytes bytes may not fit memory ($avail available) if compress reads its input whole; if it is killed, give a smaller SIZE"
fi
t=$(now)
# two generator threads: it makes several GB/s, the compressor is the slower side of the pipe
"$BIN/synth_genome" --size "$SIZE" --seed "$SEED" -j 2 "${sources[@]}" |
  "$BIN/aceapex" compress - --target gpu -T "$THREADS" -o "$WORK/big.acx" -f
echo "generate+compress: $(since "$t") s, archive $(stat -c %s "$WORK/big.acx") bytes"

echo "== scale_check --device $DEVICE"
t=$(now)
rc=0
"$BIN/scale_check" "$WORK/big.acx" "${sources[@]}" --seed "$SEED" --device "$DEVICE" "$@" || rc=$?
echo "scale_check: $(since "$t") s, exit status $rc"
[ "${KEEP:-0}" = 1 ] || rm -f "$WORK/big.acx"
echo "total: $(since "$t_all") s"
exit $rc
