#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU, from the folder that holds the bundle
# (scripts/gpu-bundle.sh builds it elsewhere and copies this script into it as run.sh):
#   bash gpu-bundle/run.sh [PART...]   PART: tests (the GPU tests, then cli), cli (`decompress
#   --device gpu` on every archive and on a `--window 1M` archive of each, compared with the
#   originals), sanitizer (compute-sanitizer memcheck on the GPU tests), bench (copy + decode
#   benches), decode-bench (decode bench only), profile (Nsight Compute on the dense pipe's
#   kernels, hs37 archive if present), all (= tests sanitizer bench; the default)
# Writes logs to $OUT when set, else /tmp/aceapex-out. See CONTRIBUTING.md.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
OUTD=${OUT:-/tmp/aceapex-out}
# a fresh corpora folder: a warm machine may still hold another bundle's files
rm -rf /tmp/corp
mkdir -p "$OUTD" /tmp/corp
what=" ${*:-all} "
has() { case $what in *" $1 "* | *" all "*) [ "$1" != profile ] || case $what in *" profile "*) true ;; *) false ;; esac ;; *) false ;; esac; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
echo "== restoring corpora from the bundle's archives (CPU decoder, verified)"
for a in "$B"/data/*.acx; do
  n=$(basename "$a" .acx)
  "$B/bin/aceapex" decompress "$a" -o "/tmp/corp/$n" --device cpu -f 2>&1 | tail -1
done
rc=0
if has tests; then
  echo "== GPU tests"
  ACEAPEX_TEST_CORPORA=/tmp/corp "$B/bin/test-gpu" --include-ignored --test-threads=1 2>&1 | tee "$OUTD/test-gpu.log" || rc=1
fi
if has tests || has cli; then
  echo "== CLI --device gpu on every corpus"
  for f in /tmp/corp/*; do
    "$B/bin/aceapex" decompress "$B/data/$(basename "$f").acx" -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
    cmp -s "$f" /tmp/gpu.out && echo "  bit-exact: $(basename "$f")" || { echo "  MISMATCH: $(basename "$f")"; rc=1; }
  done
  echo "== CLI --device gpu on cross-block archives (--window 1M: the wavefront decoder)"
  for f in /tmp/corp/*; do
    "$B/bin/aceapex" compress "$f" -o /tmp/cross.acx --window 1M -f 2>&1 | tail -1
    "$B/bin/aceapex" decompress /tmp/cross.acx -o /tmp/gpu.out --device gpu -f 2>&1 | tail -1
    cmp -s "$f" /tmp/gpu.out && echo "  bit-exact: $(basename "$f") --window 1M" || { echo "  MISMATCH: $(basename "$f") --window 1M"; rc=1; }
  done
fi
if has sanitizer; then
  echo "== compute-sanitizer memcheck (GPU tests; the corpora are not given, to keep it short)"
  compute-sanitizer --tool memcheck --error-exitcode 9 "$B/bin/test-gpu" --include-ignored --test-threads=1 2>&1 | tail -8 | tee "$OUTD/sanitizer.log" || rc=1
fi
if has bench; then
  echo "== copy benchmarks"
  "$B/bin/bench-gpu_copy" --bench 2>&1 | tee "$OUTD/bench-gpu_copy.log" | grep -E "SUMMARY|token list|skipped"
  for n in hs37_chrX_first70Mb.fa mouse_RNAseq_top100k_1.fq; do
    [ -f "$B/data/$n.acx" ] && ACEAPEX_COPY_ARCHIVE="$B/data/$n.acx" "$B/bin/bench-gpu_copy" --bench 2>&1 | tee -a "$OUTD/bench-gpu_copy.log" | grep -E "SUMMARY|token list|skipped"
  done
fi
if has bench || has decode-bench; then
  echo "== decode benchmarks"
  ACEAPEX_BENCH_ARCHIVES="$B/data" "$B/bin/bench-gpu_decode" --bench 2>&1 | tee "$OUTD/bench-gpu_decode.log" | grep -E "SUMMARY|skipped"
fi
if has profile; then
  echo "== ncu: the dense pipe's kernels on the first archive of the bundle (hs37 if present)"
  a=$B/data/hs37_chrX_first70Mb.fa.acx
  [ -f "$a" ] || a=$(ls "$B"/data/*.acx | head -1)
  ncu --clock-control none -k regex:'rans_decode_slices|decode_blocks_dense' -c 2 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section LaunchStats --section InstructionStats --section SourceCounters \
    -o "$OUTD/prof" -f "$B/bin/aceapex" decompress "$a" -o /tmp/prof.out --device gpu -f 2>&1 | tail -3
  ncu -i "$OUTD/prof.ncu-rep" --page details > "$OUTD/prof-details.txt" 2>&1
  ncu -i "$OUTD/prof.ncu-rep" --page source --csv --print-source sass > "$OUTD/prof-sass.csv" 2>&1 \
    || echo "  (no source page from this ncu)"
  grep -E "^  [a-z_]+ |Duration|Warp Cycles Per Issued|Issued Ipc|Achieved Occupancy|Stall" "$OUTD/prof-details.txt" | head -40
fi
exit $rc
