#!/bin/bash
# seventeenth session run 6: spamassassin (-l 7 --min-match 5) and brown (-l 7), archives of
# this session's encoder (data/) and of the sixteenth session's (data-old/, made here by
# old/aceapex from the originals), bench alternated, nvCOMP 6 between the bench rounds
B=$(cd "$(dirname "$0")" && pwd)
bash $B/run.sh none > /dev/null 2>&1
mkdir -p $B/data-old
$B/old/aceapex compress -q -l 7 --min-match 5 -T 16 -f /tmp/corp/spamassassin_corpus.txt -o $B/data-old/spamassassin_corpus.txt.acx
$B/old/aceapex compress -q -l 7 -T 16 -f /tmp/corp/brown_tagged.txt -o $B/data-old/brown_tagged.txt.acx
ls -l $B/data $B/data-old
VARIANTS="new: oldarc:ACEAPEX_BENCH_ARCHIVES=$B/data-old" ROUNDS=2 bash scripts/gpu-go.sh $B bench nvcomp
VARIANTS="new: oldarc:ACEAPEX_BENCH_ARCHIVES=$B/data-old" ROUNDS=1 bash scripts/gpu-go.sh $B bench
