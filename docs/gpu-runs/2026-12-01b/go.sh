#!/bin/bash
# tenth session, the one device call: bundle built by
#   BUNDLE_DIR=gpu-bundle-t10 BUNDLE_MIB=58 scripts/gpu-bundle.sh corpora/text/gcide.txt \
#     corpora/fastq/mouse_RNAseq_top100k_1.fq corpora/text/moby_dick.txt \
#     corpora/dna/E_coli_K12_MG1655_NC_000913.2.fa corpora/dna/TAIR10_chr1.fna corpora/text/brown_tagged.txt
# device tool: carry ["gpu-bundle-t10"], command:
bash gpu-bundle-t10/run.sh tests sanitizer decode-bench > $OUT/t10-run.log 2>&1
