"""Shared fixtures: the repository's golden files and a generated multi-record FASTA."""

import os
import pathlib
import random

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def corpora_dir():
    """The corpora folder ($ACEAPEX_CORPORA, else /work/corpora), or None when absent."""
    path = pathlib.Path(os.environ.get("ACEAPEX_CORPORA", "/work/corpora"))
    return path if path.is_dir() else None


def write_fasta(path, records, width, newline=b"\n"):
    """Writes `records` ((name, description, sequence bytes)) with `width` bases a line."""
    with open(path, "wb") as f:
        for name, desc, seq in records:
            f.write(b">" + name + (b" " + desc if desc else b"") + newline)
            for i in range(0, len(seq), width):
                f.write(seq[i : i + width] + newline)


def random_genome(rng, n_records, min_len, max_len):
    """Records of DNA with lower-case stretches and N runs, of random lengths."""
    records = []
    for i in range(n_records):
        n = rng.randint(min_len, max_len)
        seq = bytearray(rng.choice(b"ACGT") for _ in range(n))
        for _ in range(rng.randint(0, 3)):
            a = rng.randrange(n)
            b = min(n, a + rng.randint(1, 5000))
            seq[a:b] = seq[a:b].lower()
        for _ in range(rng.randint(0, 2)):
            a = rng.randrange(n)
            b = min(n, a + rng.randint(1, 2000))
            seq[a:b] = b"N" * (b - a)
        records.append((b"seq%d" % i, b"random record %d" % i, bytes(seq)))
    return records


@pytest.fixture(scope="session")
def generated_fasta(tmp_path_factory):
    """A FASTA of about 3 MB: 40 records of 1 to 150,000 bases, 60 bases a line (plus a
    short record and one of exactly one line), written once per test session."""
    rng = random.Random(42)
    records = random_genome(rng, 40, 1, 150_000)
    records.append((b"one_line", b"", b"ACGTACGTAC" * 6))
    records.append((b"short", b"", b"ACG"))
    path = tmp_path_factory.mktemp("fasta") / "generated.fa"
    write_fasta(path, records, 60)
    return path
