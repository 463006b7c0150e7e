"""epsjoin.pairs through its three paths: each unordered pair handed over once by the engines
that find each pair once (cpu-grid's halved patterns, super-ego), written in place by the join's
threads (unsorted) or grouped by i afterwards (sorted, one thread); and the CSR table's rows cut
to their upper half (every engine). All against scipy's cKDTree, on ties at exactly eps
(lattices), duplicates, N = 0, 1, 2, several thread counts, A x B and self pairs."""
import numpy as np
import pytest

import epsjoin
from epsjoin import _epsjoin
from epsjoin._validation import run_settings

from conftest import CPU_ENGINES, lattice, oracle_pairs

ENGINES = [(e, {}) for e in CPU_ENGINES if e != "brute-cpu"] + [("cpu-grid", {"pattern": "full"})]


def points(kind, n, rng):
    if kind == "lattice":
        side = max(1, int(round(n ** 0.5)))
        return lattice(side, 2), 1.0  # eps = the spacing: ties at exactly eps
    if kind == "duplicates":
        return np.repeat(rng.random((max(1, n // 4), 3)), 4, axis=0)[:n], 0.2
    return rng.random((n, 2)), 0.08


def expected(X, eps, Y=None, include_self=False):
    p = oracle_pairs(X, eps, Y)
    if include_self:
        p = np.concatenate([p, np.repeat(np.arange(len(X)), 2).reshape(-1, 2)])
        p = p[np.lexsort((p[:, 1], p[:, 0]))]
    return p


def raw(X, eps, Y, include_self, engine, params, threads, once, sort=False):
    settings = run_settings(engine, "float64", False, threads, None, None, 0, params)
    return _epsjoin.pairs_from_rows(X, Y, eps, include_self, sort, settings, once)[0]


def check_path(p, want, once, sort):
    """Sorted: exactly scipy's pairs. Unsorted: the same set; in order of i from the rows."""
    assert p.dtype == np.int64 and p.shape == (len(want), 2)
    if sort:
        np.testing.assert_array_equal(p, want)
        return
    if not once:
        assert np.all(np.diff(p[:, 0]) >= 0)
    np.testing.assert_array_equal(p[np.lexsort((p[:, 1], p[:, 0]))], want)


@pytest.mark.parametrize("engine,params", ENGINES, ids=lambda v: str(v))
# Larger sets: group_pairs (join_calls.cpp) then has buckets of several i, many pairs each, and
# the pairs written in place come in many batches from several threads at once.
@pytest.mark.parametrize("kind,n", [("lattice", 400), ("duplicates", 300), ("uniform", 1500),
                                    ("uniform", 0), ("uniform", 1), ("duplicates", 2),
                                    ("uniform", 6000), ("lattice", 4900)])
@pytest.mark.parametrize("include_self", [False, True])
def test_both_paths_give_scipy_pairs(engine, params, kind, n, include_self, rng):
    X, eps = points(kind, n, rng)
    want = expected(X, eps, include_self=include_self)
    for threads in (1, 2, 3, 7):
        got = epsjoin.pairs(X, eps, engine=engine, params=params, n_jobs=threads,
                            include_self=include_self, sort=True)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.intp and got.shape == (len(want), 2)
        for once in (True, False):
            for sort in (False, True):
                check_path(raw(X, eps, None, include_self, engine, params, threads, once, sort),
                           want, once, sort)


@pytest.mark.parametrize("engine,params", ENGINES, ids=lambda v: str(v))
def test_both_paths_a_x_b(engine, params, rng):
    X, Y = rng.random((700, 2)), rng.random((300, 2))
    want = expected(X, 0.06, Y)
    for once in (True, False):
        for sort in (False, True):
            for threads in (1, 2):
                check_path(raw(X, 0.06, Y, False, engine, params, threads, once, sort), want,
                           once, sort)
    np.testing.assert_array_equal(epsjoin.pairs(X, 0.06, Y, engine=engine, params=params, sort=True),
                                  want)


def test_small_memory_limit_refuses_as_before(rng):
    X = lattice(60, 2)
    with pytest.raises(MemoryError):
        epsjoin.pairs(X, 3.0, engine="cpu-grid", memory_limit=64 * 1024)
