"""The comparison against pyfaidx: random slices, single bases and get_seq calls on the same
FASTA, read through pyfaidx from the plain file and through aceapex from its archive."""

import random


def _outcome(call):
    """(result, exception type): the result as text, or the built-in exception class the
    error is (pyfaidx's FetchError is an IndexError, which aceapex raises)."""
    try:
        return str(call()), None
    except Exception as e:  # the kind must match, whatever it is
        return None, next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def _coordinate(rng, length):
    """An index inside the record, at or near its ends, negative, or past its end."""
    kind = rng.random()
    if kind < 0.55:
        return rng.randint(0, max(0, length))
    if kind < 0.7:
        return rng.choice([0, 1, length - 1, length, length + 1])
    if kind < 0.85:
        return -rng.randint(0, length + 3)
    return length + rng.randint(0, 1000)


def compare_with_pyfaidx(archive, fasta, n_calls, seed=1):
    """Makes `n_calls` random calls on each side and returns the mismatches (empty when all
    agree); `fasta` is a pyfaidx.Fasta of the archive's original."""
    rng = random.Random(seed)
    names = list(fasta.keys())
    assert archive.keys() == names
    assert archive.lengths() == {n: len(fasta[n]) for n in names}
    bad = []
    for i in range(n_calls):
        name = rng.choice(names)
        length = len(fasta[name])
        kind = i % 5
        if kind == 0:  # a slice inside the record, the common case
            a = rng.randint(0, length)
            b = rng.randint(a, min(length, a + rng.choice([1, 10, 100, 5000])))
            args = ("slice", a, b, None)
            want = _outcome(lambda: fasta[name][a:b])
            got = _outcome(lambda: archive[name][a:b])
            got2 = _outcome(lambda: archive.fetch(name, a, b))
            if got2 != got:
                bad.append((name, "fetch", a, b, got, got2))
        elif kind == 1:  # any slice: negative, reversed, past the end, with a step
            a = _coordinate(rng, length)
            if rng.random() < 0.8:  # mostly short: a long record's random span is megabytes
                b = a + rng.choice([-5, 0, 1, 100, 5000])
            else:
                b = _coordinate(rng, length)
            a = None if rng.random() < 0.1 else a
            b = None if rng.random() < 0.1 else b
            step = rng.choice([None, None, None, 1, 2, 3, -1, -2])
            args = ("slice", a, b, step)
            want = _outcome(lambda: fasta[name][a:b:step])
            got = _outcome(lambda: archive[name][a:b:step])
        elif kind == 2:  # one base
            a = _coordinate(rng, length)
            args = ("index", a)
            want = _outcome(lambda: fasta[name][a])
            got = _outcome(lambda: archive[name][a])
        else:  # get_seq: 1-based, closed
            a = rng.randint(1, max(1, length))
            b = a + rng.choice([0, 1, 59, 60, 61, 1000]) if kind == 3 else _coordinate(rng, length)
            if rng.random() < 0.05:
                a = rng.randint(-3, 0)
            args = ("get_seq", a, b)
            want = _outcome(lambda: fasta.get_seq(name, a, b))
            got = _outcome(lambda: archive.get_seq(name, a, b))
        if got != want:
            bad.append((name, args, want, got))
    return bad
