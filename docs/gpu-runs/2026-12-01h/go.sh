#!/usr/bin/env bash
# Sixteenth session's calls: bash docs/gpu-runs/2026-12-01h/go.sh BUNDLE [parts...] ran what is now
# scripts/gpu-go.sh (moved there unchanged but for its header, so later sessions call it
# instead of copying it).
exec bash "$(dirname "$0")/../../../scripts/gpu-go.sh" "$@"
