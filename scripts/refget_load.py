#!/usr/bin/env python3
"""Bounded load test of `aceapex serve` on the loopback interface.

N concurrent clients (processes, one persistent HTTP/1.1 connection each) fetch random regions
of LENGTH bases (`/sequence/MD5?start=&end=`) of a FASTA file's sequences for a fixed time,
from the server reading an archive of the file on the CPU ("cpu"), the same archive resident
on the GPU (`serve --device gpu`: "gpu"), and the plain FASTA file through its index
("fasta"), one server at a time. Every answer is checked against the original bases. Prints
requests/s and the p50/p99 latencies of each source at each client count, as a Markdown
table.

Usage: scripts/refget_load.py FASTA [--archive ACX] [--sources cpu,gpu,fasta]
       [--clients 4,16] [--seconds S] [--length L] [--aceapex BIN] [--threads T]
Without --archive, FASTA is compressed with `aceapex compress` (default options) into a
temporary archive. Standard library only (it runs on a machine with only Python 3).
"""

import argparse
import hashlib
import http.client
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time


def sequences(path):
    """(name, canonical bases) of each sequence: letters only, uppercased (refget)."""
    out, name, parts = [], None, []
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b">"):
                if name is not None:
                    out.append((name, b"".join(parts)))
                name, parts = line[1:].split()[0].decode(), []
            else:
                parts.append(line.strip())
    if name is not None:
        out.append((name, b"".join(parts)))
    return [(n, s.upper()) for n, s in out if s.isalpha()]


def start_server(binary, inputs, threads, log_path, device="cpu"):
    """Starts `aceapex serve --device DEVICE` on a free loopback port, its standard error (the
    access log) going to `log_path`; returns the process, host and port."""
    args = [binary, "serve", *inputs, "--listen", "127.0.0.1:0", "--device", device]
    if threads:
        args += ["-T", str(threads)]
    log = open(log_path, "wb")
    proc = subprocess.Popen(args, stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(600):
        with open(log_path, "rb") as f:
            m = re.search(rb"refget server on http://([^/]+)/", f.read())
        if m:
            host, port = m.group(1).decode().rsplit(":", 1)
            return proc, host, int(port)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"the server did not start: {open(log_path).read().strip()}")


def client(host, port, ids, seconds, length, seed, out):
    """One client: requests until `seconds` have passed; puts (latencies, errors) on `out`."""
    rng = random.Random(seed)
    conn = http.client.HTTPConnection(host, port)
    lat, errors = [], []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        md5, s = ids[rng.randrange(len(ids))]
        a = rng.randrange(max(1, len(s) - length))
        b = min(a + length, len(s))
        t0 = time.perf_counter()
        conn.request("GET", f"/sequence/{md5}?start={a}&end={b}")
        r = conn.getresponse()
        body = r.read()
        lat.append(time.perf_counter() - t0)
        if r.status != 200 or body != s[a:b]:
            errors.append(f"{md5} {a}-{b}: {r.status}")
    conn.close()
    out.put((lat, errors))


def run_load(host, port, ids, clients, seconds, length, seed):
    """Latencies (seconds) of every answer within `seconds`, all checked; one process a
    client (forked: they share the sequences), so that the clients do not share a GIL."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=client, args=(host, port, ids, seconds, length, seed * 1000 + k, out))
        for k in range(clients)
    ]
    for p in procs:
        p.start()
    lat, errors = [], []
    for _ in procs:
        l, e = out.get()
        lat += l
        errors += e
    for p in procs:
        p.join()
    if errors:
        raise SystemExit(f"{len(errors)} wrong answers, first: {errors[0]}")
    return lat


def pct(sorted_lat, p):
    return sorted_lat[min(len(sorted_lat) - 1, int(p / 100 * len(sorted_lat)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fasta")
    ap.add_argument("--archive")
    ap.add_argument("--clients", default="8", help="client counts, comma-separated (4,16)")
    ap.add_argument("--sources", default="cpu,fasta", help="of cpu, gpu, fasta (comma-separated)")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--length", type=int, default=5000)
    ap.add_argument("--aceapex", default=os.environ.get("ACEAPEX", "aceapex"))
    ap.add_argument("--threads", type=int, default=0, help="-T of the server")
    a = ap.parse_args()

    seqs = sequences(a.fasta)
    ids = [(hashlib.md5(s).hexdigest(), s) for _, s in seqs]
    if not seqs:
        raise SystemExit(f"{a.fasta}: no sequence of letters only")
    tmp = tempfile.TemporaryDirectory()
    archive = a.archive
    if archive is None:
        archive = os.path.join(tmp.name, os.path.basename(a.fasta) + ".acx")
        subprocess.run([a.aceapex, "compress", "-q", a.fasta, "-o", archive], check=True)

    known = {
        "cpu": ("archive (CPU)", archive, "cpu"),
        "gpu": ("archive (GPU-resident)", archive, "gpu"),
        "fasta": ("plain FASTA (.fai)", a.fasta, "cpu"),
    }
    sources = a.sources.split(",")
    for s in sources:
        if s not in known:
            raise SystemExit(f"--sources: {s!r} is not one of {', '.join(known)}")
    client_counts = [int(c) for c in a.clients.split(",")]

    print(f"{a.seconds:g} s a row, random {a.length}-base regions of {a.fasta}", flush=True)
    print("| clients | source | requests/s | p50 ms | p99 ms | requests |")
    print("|---|---|---|---|---|---|", flush=True)
    failed = False
    for s in sources:
        label, path, device = known[s]
        log_path = os.path.join(tmp.name, f"serve-{s}.log")
        try:
            proc, host, port = start_server(a.aceapex, [path], a.threads, log_path, device)
        except RuntimeError as e:
            # the other sources still run (a machine without a GPU, say)
            print(f"| - | {label} | {e} | | | |", flush=True)
            failed = True
            continue
        try:
            for clients in client_counts:
                run_load(host, port, ids, clients, 1, a.length, 0)  # warm-up
                lat = sorted(run_load(host, port, ids, clients, a.seconds, a.length, 1))
                print(
                    f"| {clients} | {label} | {len(lat) / a.seconds:.0f} | {pct(lat, 50) * 1e3:.2f} "
                    f"| {pct(lat, 99) * 1e3:.2f} | {len(lat)} |",
                    flush=True,
                )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
