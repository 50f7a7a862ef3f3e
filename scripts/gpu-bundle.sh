#!/usr/bin/env bash
# Builds what a GPU machine without a Rust toolchain needs into ./gpu-bundle (git-ignored):
#   bin/aceapex            the release CLI
#   bin/test-*             release test binaries (tests/gpu.rs and the others)
#   bin/bench-*            criterion bench binaries whose names start with "gpu"
#   bin/test-racecheck-gpu tests/gpu.rs with the kernels' `racecheck` build (device crate
#                          feature: stage 3 without its by-design races), for
#                          scripts/gpu-sanitizer.sh's racecheck
#   data/*.acx             archives of real corpora, made here by the CPU encoder at level
#                          $BUNDLE_LEVEL (default 6) with $BUNDLE_FLAGS (default "--target gpu":
#                          archives every GPU decoder reads, without line layouts);
#                          run.sh restores the originals from them with the CPU decoder
#   run.sh                 what to run on the GPU machine (a copy of scripts/gpu-run.sh)
# Copy the folder to the GPU machine and run `bash gpu-bundle/run.sh` there (CONTRIBUTING.md).
# Usage: [BUNDLE_DIR=gpu-bundle-b] scripts/gpu-bundle.sh [CORPUS_FILE ...]
#   (default: a DNA/FASTQ/text/protein set from ./corpora, CONTRIBUTING.md lists the files).
#   BUNDLE_KEEP_DATA=1 rebuilds only bin/; BUNDLE_MIB caps the archives' total (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE_DIR:-gpu-bundle}
if [ "${BUNDLE_KEEP_DATA:-0}" = 1 ]; then rm -rf "$B/bin"; else rm -rf "$B"; fi
mkdir -p "$B/bin" "$B/data"
cargo build --release --bin aceapex
cp "${CARGO_TARGET_DIR:-target}/release/aceapex" "$B/bin/aceapex"
collect() { # cargo subcommand args...; copies executables named <prefix>-<target name>
  local prefix=$1; shift
  cargo "$@" --message-format=json 2>/dev/null | python3 -c '
import json, sys, shutil
prefix, dest = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"].startswith("gpu"):
        shutil.copy(m["executable"], f"{dest}/{prefix}-{m['"'"'target'"'"']['"'"'name'"'"']}")
' "$prefix" "$B/bin"
}
collect test test --release --no-run
collect bench bench --no-run
ACEAPEX_DEVICE_FEATURES=racecheck collect test-racecheck test --release --no-run --test gpu
strip "$B"/bin/*
cp scripts/gpu-run.sh "$B/run.sh"
CORPORA=${CORPORA:-corpora}
if [ "${BUNDLE_KEEP_DATA:-0}" = 1 ]; then du -sh "$B"; exit 0; fi
if [ $# -eq 0 ]; then
  set -- "$CORPORA/dna/hs37_chrX_first70Mb.fa" "$CORPORA/dna/E_coli_K12_MG1655_NC_000913.2.fa" \
    "$CORPORA/dna/TAIR10_chr1.fna" "$CORPORA/fastq/mouse_RNAseq_top100k_1.fq" "$CORPORA/text/moby_dick.txt" \
    "$CORPORA/text/gcide.txt" "$CORPORA/protein/swissprot201401_GO_BPO.fasta"
fi
budget=$(( ${BUNDLE_MIB:-60} * 1024 * 1024 ))
used=$(du -sb "$B" | cut -f1)
flags=${BUNDLE_FLAGS-"--target gpu"}
for f in "$@"; do
  [ -f "$f" ] || { echo "skip $f (missing)"; continue; }
  name=$(basename "$f")
  # shellcheck disable=SC2086 # a list of compress options
  "$B/bin/aceapex" compress "$f" -o "$B/data/$name.acx" -f -l "${BUNDLE_LEVEL:-6}" $flags
  size=$(stat -c %s "$B/data/$name.acx")
  if [ $((used + size)) -gt "$budget" ]; then
    echo "skip $name (bundle budget)"; rm "$B/data/$name.acx"; continue
  fi
  used=$((used + size))
done
du -sh "$B" "$B"/bin "$B"/data
