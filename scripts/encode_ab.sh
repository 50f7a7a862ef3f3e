#!/usr/bin/env bash
# Interleaved A/B of the CPU encoder: scripts/decode_ab.sh with examples/encode_speed
# (single thread, thread CPU time; columns: the whole compress under --target size, the same
# under --target gpu, the match layer alone, MB/s of input). The examples' `--runs` (default 3) and
# `--mb` (default 16) go after the files.
#
# Usage: scripts/encode_ab.sh OLD_REV NEW_REV ROUNDS FILE... [--runs N] [--mb N]
#   e.g. scripts/encode_ab.sh main HEAD 3 corpora/text/gcide.txt corpora/text/moby_dick.txt
set -euo pipefail

if [[ $# -lt 4 ]]; then
    sed -n '2,8p' "$0" >&2
    exit 2
fi
AB_EXAMPLE=encode_speed AB_KEYS="encode= gpu parse=" \
    exec "$(dirname "$0")/decode_ab.sh" "$@"
