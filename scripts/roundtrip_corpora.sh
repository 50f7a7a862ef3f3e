#!/usr/bin/env bash
# Round-trips every file under DIR (default ./corpora; hidden files and folders such as
# .cache are skipped) through the release binary: compress, decompress, cmp. Prints a table of
# size, ratio and the compress/decompress speeds the CLI reports, and exits non-zero if any
# file fails to round-trip.
#
# Usage: scripts/roundtrip_corpora.sh [DIR]
# Env:   ACEAPEX_BIN   binary to use (default: $CARGO_TARGET_DIR/release/aceapex or
#                      target/release/aceapex; build it first with `cargo build --release`)
#        DEVICE        decompress --device value (default: cpu)
#        COMPRESS_ARGS extra arguments for compress (e.g. "-l 9 --window 1M")
set -u -o pipefail

dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/corpora}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ACEAPEX_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/aceapex}
device=${DEVICE:-cpu}
if [[ ! -x $bin ]]; then
    echo "roundtrip_corpora: $bin not found; run 'cargo build --release' first (or set ACEAPEX_BIN)" >&2
    exit 2
fi
if [[ ! -d $dir ]]; then
    echo "roundtrip_corpora: $dir is not a directory" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/roundtrip_corpora.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the number after the last "ratio " / the last "MB/s" value of a CLI stderr line
ratio_of() { sed -n 's/.*(ratio \([0-9.]*\)).*/\1/p' "$1" | tail -n 1; }
speed_of() { sed -n 's/.* \([0-9.]*\) MB\/s$/\1/p' "$1" | tail -n 1; }

failures=0
count=0
total_in=0
total_out=0
printf '%-60s %12s %8s %10s %10s  %s\n' "file" "size" "ratio" "comp MB/s" "dec MB/s" "result"
while IFS= read -r -d '' f; do
    rel=${f#"$dir"/}
    size=$(stat -L -c %s "$f")
    count=$((count + 1))
    arc=$work/a.acx
    out=$work/out
    rm -f "$arc" "$out"
    # shellcheck disable=SC2086
    if ! "$bin" compress "$f" -o "$arc" ${COMPRESS_ARGS:-} 2>"$work/c.err"; then
        printf '%-60s %12d %8s %10s %10s  %s\n' "$rel" "$size" "-" "-" "-" "FAIL (compress: $(tail -n 1 "$work/c.err"))"
        failures=$((failures + 1))
        continue
    fi
    if ! "$bin" decompress "$arc" -o "$out" --device "$device" 2>"$work/d.err"; then
        printf '%-60s %12d %8s %10s %10s  %s\n' "$rel" "$size" "$(ratio_of "$work/c.err")" "$(speed_of "$work/c.err")" "-" "FAIL (decompress: $(tail -n 1 "$work/d.err"))"
        failures=$((failures + 1))
        continue
    fi
    result=ok
    if ! cmp -s "$f" "$out"; then
        result="FAIL (decoded bytes differ)"
        failures=$((failures + 1))
    fi
    total_in=$((total_in + size))
    total_out=$((total_out + $(stat -L -c %s "$arc")))
    printf '%-60s %12d %8s %10s %10s  %s\n' "$rel" "$size" "$(ratio_of "$work/c.err")" "$(speed_of "$work/c.err")" "$(speed_of "$work/d.err")" "$result"
done < <(find -L "$dir" -name '.*' -prune -o -type f -print0 | sort -z)

if ((count == 0)); then
    echo "roundtrip_corpora: no files under $dir" >&2
    exit 2
fi
awk -v i="$total_in" -v o="$total_out" -v n="$count" -v f="$failures" \
    'BEGIN { printf "%d files, %d -> %d bytes (ratio %.3f), %d failed\n", n, i, o, (o ? i / o : 0), f }'
((failures == 0))
