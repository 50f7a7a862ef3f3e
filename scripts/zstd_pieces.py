#!/usr/bin/env python3
"""Where a file's archive loses to blockwise zstd-3, piece by piece: cuts FILE into 1 MiB pieces; compresses each piece with `aceapex compress --level L`
and each 16 KiB block of it alone with the zstd CLI (`zstd -3 --no-check`); prints per piece
both sizes and their quotient (above 1: ours larger). zstd CLI frames carry a few bytes more
than the crate's blocks that `examples/ratio_table.rs` counts, so compare pieces, not totals.

Usage: python3 scripts/zstd_pieces.py FILE [LEVEL] [ACEAPEX_BINARY]
"""
import os
import subprocess
import sys
import tempfile

MIB, BLOCK = 1 << 20, 16384


def main():
    path = sys.argv[1]
    level = sys.argv[2] if len(sys.argv) > 2 else "9"
    binary = sys.argv[3] if len(sys.argv) > 3 else "target/release/aceapex"
    data = open(path, "rb").read()
    tot_z = tot_o = 0
    with tempfile.TemporaryDirectory() as d:
        piece, arc = os.path.join(d, "piece"), os.path.join(d, "piece.acx")
        for start in range(0, len(data), MIB):
            chunk = data[start:start + MIB]
            z = sum(
                len(subprocess.run(["zstd", "-3", "-c", "--no-check", "-q"],
                                   input=chunk[b:b + BLOCK], capture_output=True,
                                   check=True).stdout)
                for b in range(0, len(chunk), BLOCK))
            open(piece, "wb").write(chunk)
            subprocess.run([binary, "compress", "-q", piece, "-o", arc, "--level", level, "-f"],
                           check=True)
            o = os.path.getsize(arc)
            tot_z, tot_o = tot_z + z, tot_o + o
            print(start // MIB, len(chunk), z, o, "%.3f" % (o / z))
    print("total", tot_z, tot_o, "%.4f" % (tot_o / tot_z))


if __name__ == "__main__":
    main()
