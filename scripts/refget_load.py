#!/usr/bin/env python3
"""Bounded load test of `aceapex serve` on the loopback interface.

N concurrent clients (processes, one persistent HTTP/1.1 connection each) fetch random regions
of LENGTH bases (`/sequence/MD5?start=&end=`) of a FASTA file's sequences for a fixed time,
first from the server reading an archive of the file, then from the same server reading the
plain FASTA file through its index. Every answer is checked against the original bases. Prints
requests/s and the p50/p99 latencies of each, as a Markdown table.

Usage: scripts/refget_load.py FASTA [--archive ACX] [--clients N] [--seconds S]
       [--length L] [--aceapex BIN] [--threads T]
Without --archive, FASTA is compressed with `aceapex compress` (default options) into a
temporary archive. Standard library only.
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


def start_server(binary, inputs, threads, log_path):
    """Starts `aceapex serve` on a free loopback port, its standard error (the access log)
    going to `log_path`; returns the process, host and port."""
    args = [binary, "serve", *inputs, "--listen", "127.0.0.1:0"]
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
    raise SystemExit(f"the server did not start: {open(log_path).read()}")


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
    ap.add_argument("--clients", type=int, default=8)
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

    rows = []
    for label, path in (("archive (CPU)", archive), ("plain FASTA (.fai)", a.fasta)):
        log_path = os.path.join(tmp.name, "serve.log")
        proc, host, port = start_server(a.aceapex, [path], a.threads, log_path)
        try:
            run_load(host, port, ids, a.clients, 1, a.length, 0)  # warm-up
            lat = sorted(run_load(host, port, ids, a.clients, a.seconds, a.length, 1))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        rows.append((label, len(lat) / a.seconds, pct(lat, 50) * 1e3, pct(lat, 99) * 1e3, len(lat)))

    print(f"{a.clients} clients, {a.seconds:g} s, random {a.length}-base regions of {a.fasta}")
    print("| source | requests/s | p50 ms | p99 ms | requests |")
    print("|---|---|---|---|---|")
    for label, rps, p50, p99, n in rows:
        print(f"| {label} | {rps:.0f} | {p50:.2f} | {p99:.2f} | {n} |")


if __name__ == "__main__":
    sys.exit(main())
