#!/usr/bin/env python3
"""Time to the first bytes of a command's standard output through a pipe, and to its exit
once the pipe is closed (docs/RELIABILITY.md):

    scripts/first_bytes.py aceapex -q decompress -c big.acx
"""
import subprocess, sys, time
cmd = sys.argv[1:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
first = p.stdout.read(10)
t1 = time.monotonic()
p.stdout.close()
rc = p.wait()
t2 = time.monotonic()
print(f"first 10 bytes {first!r} after {t1-t0:.3f} s; exit {rc} after {t2-t0:.3f} s")
