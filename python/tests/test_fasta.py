"""FASTA access through aceapex against pyfaidx on the same files."""

import os
import shutil
import time

import pytest

import aceapex
from compare import compare_with_pyfaidx
from conftest import GOLDEN, corpora_dir, random_genome, write_fasta

pyfaidx = pytest.importorskip("pyfaidx")


def archive_of(fasta_path, tmp_path, **options):
    """Compresses `fasta_path` into `tmp_path` and opens the archive."""
    out = tmp_path / (fasta_path.name + ".acx")
    aceapex.compress_file(str(fasta_path), str(out), **options)
    return aceapex.open(str(out))


def pyfaidx_of(fasta_path, tmp_path):
    """pyfaidx on a copy of `fasta_path` in `tmp_path` (pyfaidx writes its .fai beside it)."""
    copy = tmp_path / fasta_path.name
    if copy != fasta_path:
        shutil.copyfile(fasta_path, copy)
    return pyfaidx.Fasta(str(copy))


def test_generated_fasta_matches_pyfaidx(generated_fasta, tmp_path):
    archive = archive_of(generated_fasta, tmp_path)
    fasta = pyfaidx_of(generated_fasta, tmp_path)
    assert len(archive.keys()) == 42
    assert compare_with_pyfaidx(archive, fasta, 6000) == []


def test_small_blocks_and_cross_block_window(generated_fasta, tmp_path):
    # reads that span many 4 KiB blocks, and an archive whose matches reach earlier blocks
    fasta = pyfaidx_of(generated_fasta, tmp_path)
    for options in ({"block_size": 4096}, {"block_size": 4096, "window": 65536}):
        sub = tmp_path / ("b%d" % len(options))
        sub.mkdir()
        archive = archive_of(generated_fasta, sub, **options)
        assert archive.block_size == 4096
        assert compare_with_pyfaidx(archive, fasta, 1500, seed=len(options)) == []


def test_crlf_lowercase_and_line_widths(tmp_path):
    import random

    rng = random.Random(7)
    for width, newline in ((1, b"\n"), (7, b"\n"), (60, b"\r\n"), (80, b"\n"), (1000, b"\n")):
        path = tmp_path / ("w%d.fa" % width)
        write_fasta(path, random_genome(rng, 5, 1, 3000), width, newline)
        archive = archive_of(path, tmp_path)
        fasta = pyfaidx_of(path, tmp_path)
        assert compare_with_pyfaidx(archive, fasta, 800, seed=width) == [], (width, newline)


def golden_cases():
    """The indexable FASTA cases of tests/golden/fasta (those samtools indexed)."""
    cases = GOLDEN / "fasta" / "cases"
    return sorted(p for p in cases.glob("*.fa") if (cases / (p.stem + ".fai")).exists())


@pytest.mark.parametrize("path", golden_cases(), ids=lambda p: p.stem)
def test_golden_cases_match_pyfaidx(path, tmp_path):
    # pyfaidx reads samtools' index, copied beside the file (newer than it), so that both
    # sides agree on the records and the comparison is of the coordinates alone
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    shutil.copyfile(path.with_suffix(".fai"), str(copy) + ".fai")
    later = time.time() + 5
    os.utime(str(copy) + ".fai", (later, later))
    fasta = pyfaidx.Fasta(str(copy))
    archive = archive_of(path, tmp_path)
    assert archive.fai() == path.with_suffix(".fai").read_bytes()
    n = sum(1 for k in fasta.keys() if len(fasta[k]) > 0)
    if n == 0:
        pytest.skip("no record with bases")
    assert compare_with_pyfaidx(archive, fasta, 300) == []


@pytest.mark.parametrize("name", ["dna.fa"])
def test_golden_files_and_committed_archives(name, tmp_path):
    # the archive committed beside the golden file, made by an earlier build of the CLI
    fasta = pyfaidx_of(GOLDEN / name, tmp_path)
    for archive in (archive_of(GOLDEN / name, tmp_path), aceapex.open(str(GOLDEN / (name + ".acx")))):
        assert compare_with_pyfaidx(archive, fasta, 1000) == []


def test_whole_records_and_names(generated_fasta, tmp_path):
    archive = archive_of(generated_fasta, tmp_path)
    fasta = pyfaidx_of(generated_fasta, tmp_path)
    names = [r.name for r in archive]
    assert names == list(fasta.keys())
    assert "seq3" in archive and "nope" not in archive
    for name in ("seq0", "one_line", "short"):
        assert str(archive[name]) == str(fasta[name][:])
        assert archive.fetch(name) == str(fasta[name])
    for name in ("seq1", "one_line", "short"):
        # line by line, as pyfaidx iterates a record
        assert list(archive[name]) == [str(line) for line in fasta[name]]
    assert archive[0].name == "seq0"
    assert archive["short"][:] == "ACG"
    assert archive.get_seq("short", 1, 3) == "ACG"
    assert archive.fetch("short", 1, 2) == "C"


def test_errors_match_pyfaidx_kinds(generated_fasta, tmp_path):
    archive = archive_of(generated_fasta, tmp_path)
    with pytest.raises(KeyError, match="nope not in"):
        archive["nope"]
    with pytest.raises(KeyError):
        archive.fetch("nope", 0, 10)
    with pytest.raises(KeyError):
        archive.get_seq("nope", 1, 10)
    with pytest.raises(IndexError, match="greater than 1"):
        archive.get_seq("seq0", 0, 10)
    with pytest.raises(IndexError):
        archive[1000]
    with pytest.raises(TypeError):
        archive[1.5]
    with pytest.raises(TypeError):
        archive["seq0"][1.5]


def test_archive_without_fasta_index(tmp_path):
    # an archive that carries no index (as the encoder leaves out that of a file of many
    # short records) is indexed on first use from its decoded data
    records = [(b"p%d" % i, b"protein", b"MKV" * (i % 7 + 1)) for i in range(3000)]
    path = tmp_path / "proteins.fasta"
    write_fasta(path, records, 60)
    archive = archive_of(path, tmp_path)
    assert archive.keys()[:2] == ["p0", "p1"]
    fasta = pyfaidx_of(path, tmp_path)
    assert compare_with_pyfaidx(archive, fasta, 1000) == []


def test_not_fasta(tmp_path):
    archive = archive_of(GOLDEN / "moby_dick_64k.txt", tmp_path)
    with pytest.raises(ValueError, match="not FASTA"):
        archive.keys()
    assert archive.read(0, 10) == (GOLDEN / "moby_dick_64k.txt").read_bytes()[:10]


def corpus_files():
    root = corpora_dir()
    if root is None:
        return []
    files = sorted((root / "dna").iterdir()) + sorted((root / "protein").iterdir())
    return [f for f in files if f.is_file() and f.suffix in (".fa", ".fna", ".fasta")]


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpora_match_pyfaidx(path, tmp_path):
    # pyfaidx writes its .fai beside the FASTA: it reads a link in tmp_path, not the corpus
    link = tmp_path / path.name
    link.symlink_to(path)
    fasta = pyfaidx.Fasta(str(link))
    archive = archive_of(path, tmp_path, level=1)
    assert compare_with_pyfaidx(archive, fasta, 5000) == []
