#!/usr/bin/env bash
# Fifteenth session's calls: bash docs/gpu-runs/2026-12-01g/go.sh BUNDLE [tests] [cli] [sanitizer] [bench] [pdl] [nvcomp]
# The script these runs used is now scripts/gpu-go.sh (the same steps, its bench loop
# generalised to $VARIANTS); this file maps the old arguments onto it: `pdl` adds the variant
# "nopdl" (ACEAPEX_GPU_PDL=0; run 1 only: its binary launched the dense and lane kernels with
# programmatic dependent launch, which this switch turned off; the change was dropped).
b=$1
shift
args=()
variants="new:"
for a in "$@"; do
  if [ "$a" = pdl ]; then variants="new: nopdl:ACEAPEX_GPU_PDL=0"; else args+=("$a"); fi
done
# only `pdl` named: no part (as before), not the default parts
[ $# -gt 0 ] && [ ${#args[@]} -eq 0 ] && args=(none)
VARIANTS=${VARIANTS:-$variants} exec bash "$(dirname "$0")/../../../scripts/gpu-go.sh" "$b" "${args[@]}"
