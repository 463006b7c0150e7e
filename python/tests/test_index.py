"""EpsIndex against scipy's cKDTree: one index, several query sets and eps up to max_eps."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin
from conftest import assert_same_csr, eps_for, lattice, oracle_table


@pytest.mark.parametrize("n,d", [(0, 3), (1, 2), (500, 1), (900, 2), (700, 3), (400, 8), (300, 16)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_queries_at_several_eps_equal_ckdtree(n, d, dtype, precision, rng):
    X = rng.random((n, d)).astype(dtype)
    max_eps = eps_for(X, 12, rng)
    index = epsjoin.EpsIndex(X, max_eps, precision=precision, n_jobs=2, finer_grids=2)
    assert index.n == n and index.m == d and index.max_eps == max_eps
    query_sets = [rng.random((m, d)).astype(dtype) for m in (n // 2 + 5, 1, 0)]
    for eps in (max_eps, max_eps * 0.6, max_eps * 0.2):
        indptr, indices, _ = oracle_table(X, eps)
        assert_same_csr(index.neighbor_graph(eps=eps), indptr, indices)
        for Q in query_sets:
            indptr, indices, _ = oracle_table(Q, eps, X)
            assert_same_csr(index.neighbor_graph(Q, eps, sort_indices=True), indptr, indices)
            np.testing.assert_array_equal(index.count(Q, eps, per_row=True), np.diff(indptr))
            assert index.count(Q, eps) == indptr[-1]


def test_query_ball_point_as_scipy_with_ties_at_eps():
    X = lattice(12, 2)  # integer grid: pairs at exactly 1 and 2
    Q = lattice(5, 2) + 0.0
    index = epsjoin.EpsIndex(X, 2.0)
    tree = cKDTree(X)
    for r in (2.0, 1.0):
        got = index.query_ball_point(Q, r)
        want = tree.query_ball_point(Q, r, return_sorted=True)
        assert got.shape == want.shape and got.dtype == object
        assert [list(a) for a in got] == [list(b) for b in want]
        np.testing.assert_array_equal(index.query_ball_point(Q, r, return_length=True),
                                      tree.query_ball_point(Q, r, return_length=True))
        assert index.query_ball_point(Q[3], r) == tree.query_ball_point(Q[3], r, return_sorted=True)
    grid = Q.reshape(5, 5, 2)
    assert index.query_ball_point(grid, 1.0).shape == (5, 5)
    pairs = index.neighbor_graph(eps=1.0)
    assert pairs.nnz == 2 * len(tree.query_pairs(1.0))
    with_self = index.count(eps=1.0, include_self=True)
    assert with_self == pairs.nnz + len(X)


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine"])
def test_other_metrics_equal_fresh_joins(metric, rng):
    X = rng.random((600, 3)) + 0.1
    Q = rng.random((200, 3)) + 0.1
    max_eps = 0.2 if metric != "cosine" else 0.01
    index = epsjoin.EpsIndex(X, max_eps, metric=metric)
    for eps in (max_eps, max_eps / 3):
        want = epsjoin.neighbor_graph(Q, eps, X, metric=metric, engine="brute-cpu", sort_indices=True)
        got = index.neighbor_graph(Q, eps, sort_indices=True)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)


def test_errors_and_ownership(rng):
    X = rng.random((100, 3))
    index = epsjoin.EpsIndex(X, 0.1)
    want = index.count(X, 0.1, per_row=True)
    X[:] = 5.0  # the index keeps its own copies
    np.testing.assert_array_equal(index.count(rng.random((0, 3)), 0.1, per_row=True), [])
    np.testing.assert_array_equal(index.count(X * 0 + 5.0, 0.05, per_row=True), np.zeros(100))
    assert index.memory_bytes > 0
    with pytest.raises(ValueError, match="exceeds the index's max_eps"):
        index.count(None, 0.2)
    with pytest.raises(ValueError, match="features"):
        index.count(rng.random((4, 2)), 0.1)
    with pytest.raises(ValueError, match="include_self"):
        index.neighbor_graph(rng.random((4, 3)), include_self=True)
    with pytest.raises(ValueError, match="finer_grids"):
        epsjoin.EpsIndex(X, 0.1, finer_grids=9)
    with pytest.raises(ValueError, match="max_eps must be"):
        epsjoin.EpsIndex(X, -1.0)
    bad = rng.random((10, 3))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError):
        epsjoin.EpsIndex(bad, 0.1)
    assert want.shape == (100,)
