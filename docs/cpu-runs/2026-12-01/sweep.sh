#!/usr/bin/env bash
# The eighteenth session's instruction counts of level 5 (docs/PERFORMANCE.md): callgrind's
# instruction total and the archive size per file, for one build of `aceapex`.
#
# Usage: sweep.sh ACEAPEX_BINARY DIR LABEL [CFG]
#   DIR holds the inputs (made from the corpora, see below); CFG (with cfg.diff applied to
#   the build, at 2353239) overrides level 5's search settings: chain,lazy,hash_bits,
#   insert_all,nice,accel,reps,skip_insert,lazy_chain (level 5 is 4,1,14,0,64,5,4,1,2).
# Inputs: head -c 4194304 corpora/text/gcide.txt > DIR/gc4
#         cp corpora/text/moby_dick.txt DIR/moby
#         head -c 2097152 corpora/text/spamassassin_corpus.txt > DIR/spam2
#         head -c 4194304 corpora/fastq/mouse_RNAseq_top100k_1.fq > DIR/fq4
#         head -c 4194304 corpora/dna/hs37_chrX_first70Mb.fa | tail -c 2097152 > DIR/hs2
#         head -c 2097152 corpora/protein/swissprot201401_GO_BPO.fasta > DIR/sp2
set -euo pipefail
bin=$1 dir=$2 lab=$3 cfg=${4:-}
line=$lab
for f in gc4 moby spam2 fq4 hs2 sp2; do
    if [[ -n $cfg ]]; then export ACX_CFG=$cfg; else unset ACX_CFG; fi
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" compress -q -T 1 -l 5 \
        -c "$dir/$f" 2>&1 >"$dir/$f.$lab.acx" | awk '/Collected/ {print $4}')
    line="$line $f:$((ir / 1000000))M/$(stat -c %s "$dir/$f.$lab.acx")"
done
echo "$line"
