#!/usr/bin/env python3
"""Writes a large file of real data for the memory-bound measurements (docs/RELIABILITY.md):
the genomes of a corpus folder concatenated, repeated until SIZE bytes, with a few bases of
each copy changed (so that no copy is a byte-exact repeat of the previous one).

    scripts/big_real_file.py OUT SIZE [FOLDER]     # FOLDER: /work/corpora/dna by default
"""
import os
import random
import sys

out, size = sys.argv[1], int(float(sys.argv[2]))
folder = sys.argv[3] if len(sys.argv) > 3 else "/work/corpora/dna"
base = b"".join(
    open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))
)
rng = random.Random(1)
written = 0
with open(out, "wb") as f:
    while written < size:
        copy = bytearray(base)
        # about 100 changed bases per copy, only where a base was (headers and line ends kept)
        for _ in range(100):
            at = rng.randrange(len(copy))
            if copy[at] in b"ACGTacgt":
                copy[at] = b"ACGT"[rng.randrange(4)]
        piece = copy[: size - written]
        f.write(piece)
        written += len(piece)
