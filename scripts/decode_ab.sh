#!/usr/bin/env bash
# Interleaved A/B of the CPU decoder: builds `examples/decode_speed` at two git revisions (in
# temporary worktrees), then runs the two binaries alternately ROUNDS times on the same files
# and prints, per file and revision, the best and the median of the per-process results
# (each process already reports the best of ACEAPEX_RUNS runs, default 15) for the columns
# total, streams (rANS alone) and lz (match layer alone), in MB/s of output. Alternating
# within one invocation is what makes the comparison fair on a machine whose speed drifts
# between minutes (shared or virtual machines); each side decodes the archives its own revision's encoder
# made (cached in its worktree; the same bytes when the encoder did not change), so the
# script compares encoder changes too.
#
# Usage: scripts/decode_ab.sh OLD_REV NEW_REV ROUNDS FILE...
#   e.g. scripts/decode_ab.sh main HEAD 8 corpora/text/gcide.txt corpora/text/moby_dick.txt
# Env:   ACEAPEX_CACHE_TAG (passed on to the example's archive cache), ACEAPEX_RUNS;
#        AB_EXAMPLE and AB_KEYS pick another example and its columns (the words before each
#        number), as scripts/encode_ab.sh does for examples/encode_speed
set -euo pipefail

if [[ $# -lt 4 ]]; then
    sed -n '2,18p' "$0" >&2
    exit 2
fi
old=$1 new=$2 rounds=$3
shift 3
example=${AB_EXAMPLE:-decode_speed}
keys=${AB_KEYS:-total= streams= lz=}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" 2>/dev/null || true;
      git -C "$root" worktree remove --force "$work/new" 2>/dev/null || true; rm -rf "$work"' EXIT

for side in old new; do
    rev=${!side}
    git -C "$root" worktree add -q --detach "$work/$side" "$rev"
    # one target folder per side, so both builds are incremental on a second call
    (cd "$work/$side" && ACEAPEX_SKIP_PTX=1 CARGO_TARGET_DIR="$root/target/ab-$side" \
        cargo build -q --release --example "$example")
    cp "$root/target/ab-$side/release/examples/$example" "$work/$side.bin"
done

# the example caches its archives under its own manifest folder, the side's worktree: each
# side decodes what its own encoder made (the same bytes when the encoder did not change)
export ACEAPEX_CACHE_TAG=${ACEAPEX_CACHE_TAG:-v3}
for _ in $(seq "$rounds"); do
    for side in old new; do
        # per result line: the side, the file, then the number after each key
        (cd "$root" && "$work/$side.bin" "$@") 2>&1 | awk -v s="$side" -v keys="$keys" '/ratio=/ {
            n = split(keys, k, " "); line = s " " $1
            # "key= 123.4", or "key=12345.6" where the number fills the field width
            for (j = 1; j <= n; j++) for (i = 1; i < NF; i++) if (index($i, k[j]) == 1) {
                v = substr($i, length(k[j]) + 1); if (v == "") v = $(i+1)
                gsub(/[^0-9.]/, "", v); line = line " " v; break }
            print line }'
    done
done | python3 -c '
import sys, collections
keys = sys.argv[1].split()
names = [k.rstrip("=") for k in keys]
runs = collections.defaultdict(list)
for line in sys.stdin:
    side, f, *v = line.split()
    runs[(f, side)].append([float(x) for x in v])
print("%-32s %-4s %12s %8s" % ("file", "rev", names[0] + " best", "median"), *("%12s" % (k + " best") for k in names[1:]))
for (f, side) in sorted(runs):
    v = runs[(f, side)]
    col = lambda i: sorted(x[i] for x in v)
    t = col(0)
    print(f"{f:32} {side:4} {t[-1]:12.1f} {t[len(t)//2]:8.1f}", *("%12.1f" % col(i)[-1] for i in range(1, len(keys))))
' "$keys"
