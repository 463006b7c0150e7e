"""Unsorted unique pairs from the GPU engines: their rows, streamed in blocks, are cut into the
pairs as they come (no table in host memory) and held to the memory limit as the result they
make. Against the CPU oracle, ties at exactly eps, self pairs, A x B. Skipped as test_gpu.py is."""

import numpy as np
import pytest

import epsjoin
from conftest import GPU_ENGINES, KIB, eps_for, lattice, oracle_pairs, smallest_limit
from test_gpu import _MISSING

pytestmark = pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "GPU present")

def sorted_rows(p):
    return p[np.lexsort((p[:, 1], p[:, 0]))]


@pytest.mark.parametrize("engine", GPU_ENGINES)
@pytest.mark.parametrize("n,d", [(1, 2), (700, 2), (600, 8), (20_000, 2)])
@pytest.mark.parametrize("include_self", [False, True])
def test_unsorted_pairs_equal_the_oracle(engine, n, d, include_self, rng):
    X = rng.exponential(1 / 40, (n, d))
    eps = eps_for(X, 8, rng)
    want = oracle_pairs(X, eps)
    if include_self:
        want = sorted_rows(np.concatenate([want, np.repeat(np.arange(n), 2).reshape(-1, 2)]))
    for threads in (1, 2):
        got = epsjoin.pairs(X, eps, engine=engine, include_self=include_self, n_jobs=threads)
        assert got.dtype == np.intp and got.shape == want.shape
        assert np.all(got[:, 0] <= got[:, 1])
        np.testing.assert_array_equal(sorted_rows(got), want)


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_unsorted_pairs_at_ties_and_a_join_b(engine, rng):
    X = lattice(20, 3)
    for eps in (1.0, 2.0):  # the lattice's spacings: pairs at exactly eps
        np.testing.assert_array_equal(sorted_rows(epsjoin.pairs(X, eps, engine=engine)),
                                      oracle_pairs(X, eps))
    A, B = rng.random((500, 4)), rng.random((800, 4))
    eps = eps_for(np.vstack([A, B]), 8, rng)
    np.testing.assert_array_equal(sorted_rows(epsjoin.pairs(A, eps, B, engine=engine)),
                                  oracle_pairs(A, eps, B))


def test_streamed_pairs_need_no_table_and_keep_to_the_limit(rng):
    X = rng.exponential(1 / 40, (20_000, 2))
    eps = eps_for(X, 30, rng)
    nnz = int(epsjoin.count(X, eps))
    unsorted = smallest_limit(lambda m: epsjoin.pairs(X, eps, engine="lbjoin", memory_limit=m))
    table = smallest_limit(lambda m: epsjoin.pairs(X, eps, engine="lbjoin", memory_limit=m,
                                                   sort=True))
    # 16 bytes a unique pair (8 an ordered one) at least; the sorted pairs are cut from a table
    # (4 bytes an ordered pair more, and its offsets), which the streamed ones never hold.
    assert unsorted >= 8 * nnz
    assert unsorted + 3 * nnz < table
    with pytest.raises(MemoryError):
        epsjoin.pairs(X, eps, engine="lbjoin", memory_limit=unsorted - 2 * KIB)
