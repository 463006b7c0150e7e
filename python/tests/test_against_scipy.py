"""Every CPU engine against scipy's cKDTree on many shapes: graphs, pairs and counts."""

import numpy as np
import pytest

import epsjoin
from conftest import CPU_ENGINES, assert_same_csr, eps_for, lattice, oracle_pairs, oracle_table

# (n, d): empty, tiny, small, high-dimensional; brute-cpu and cpu-rtree get the small ones.
SHAPES = [(0, 3), (1, 2), (2, 1), (17, 5), (300, 1), (700, 2), (900, 3), (600, 8), (400, 16),
          (300, 33), (250, 64)]


def data(rng, n, d, dtype, kind):
    if kind == "uniform":
        return rng.random((n, d)).astype(dtype)
    if kind == "expo":  # the papers' skewed sets
        return rng.exponential(1 / 40, (n, d)).astype(dtype)
    # duplicates: every point repeated, so pairs at distance 0 abound
    base = rng.random((max(n // 3, 1), d)).astype(dtype)
    return base[rng.integers(0, len(base), n)]


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("n,d", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["uniform", "expo", "duplicates"])
def test_self_join_graph_and_pairs(engine, n, d, dtype, kind, rng):
    X = data(rng, n, d, dtype, kind)
    eps = eps_for(X, 6, rng)
    indptr, indices, dist = oracle_table(X, eps)
    graph = epsjoin.neighbor_graph(X, eps, mode="distance", engine=engine, n_jobs=2)
    assert_same_csr(graph, indptr, indices, dist)
    assert graph.dtype == np.float64
    got = epsjoin.pairs(X, eps, engine=engine, sort=True)
    np.testing.assert_array_equal(got, oracle_pairs(X, eps))
    assert got.dtype == np.intp and got.shape[1] == 2
    unsorted = epsjoin.pairs(X, eps, engine=engine)
    assert np.all(unsorted[:, 0] < unsorted[:, 1])
    np.testing.assert_array_equal(unsorted[np.lexsort((unsorted[:, 1], unsorted[:, 0]))], got)
    per_row = epsjoin.count(X, eps, per_row=True, engine=engine)
    np.testing.assert_array_equal(per_row, np.diff(indptr))
    assert epsjoin.count(X, eps, engine=engine) == indptr[-1]


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("na,nb,d", [(0, 50, 2), (40, 0, 3), (300, 500, 2), (200, 300, 7),
                                     (150, 100, 40)])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64)])
def test_a_join_b(engine, na, nb, d, dtypes, rng):
    A = rng.random((na, d)).astype(dtypes[0])
    B = rng.random((nb, d)).astype(dtypes[1])
    eps = eps_for(np.vstack([A, B]).astype(np.float64), 8, rng)
    indptr, indices, dist = oracle_table(A, eps, B)
    graph = epsjoin.neighbor_graph(A, eps, B, mode="distance", engine=engine)
    assert graph.shape == (na, nb)
    assert_same_csr(graph, indptr, indices, dist)
    np.testing.assert_array_equal(epsjoin.pairs(A, eps, B, engine=engine, sort=True),
                                  oracle_pairs(A, eps, B))
    np.testing.assert_array_equal(epsjoin.count(A, eps, B, per_row=True, engine=engine),
                                  np.diff(indptr))


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("side,d,eps", [(40, 1, 1.0), (30, 2, 1.0), (30, 2, 2.0), (9, 3, 1.0),
                                        (5, 4, 2.0), (3, 6, 1.0)])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_ties_at_exactly_eps(engine, side, d, eps, precision):
    # Integer lattices: distances 1, sqrt(2), 2 ... are exact, so pairs at exactly eps abound
    # and must all be in (within means distance <= eps).
    for dtype in (np.float64, np.float32):
        X = lattice(side, d, dtype)
        indptr, indices, dist = oracle_table(X, eps)
        graph = epsjoin.neighbor_graph(X, eps, mode="distance", engine=engine, precision=precision,
                                       sort_indices=True)
        assert graph.has_sorted_indices
        assert_same_csr(graph, indptr, indices, dist)
        assert (graph.data == eps).sum() > 0


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_include_self_matches_scipy_ball_queries(engine, rng):
    X = np.vstack([rng.random((300, 3)), rng.random((50, 3))[[0] * 50]])  # 50 copies of one point
    eps = eps_for(X, 5, rng)
    indptr, indices, dist = oracle_table(X, eps, include_self=True)
    graph = epsjoin.neighbor_graph(X, eps, mode="distance", include_self=True, engine=engine)
    assert_same_csr(graph, indptr, indices, dist)
    assert np.all(graph.diagonal() == 0)
    # query_ball_point(return_length=True) counts the point itself.
    from scipy.spatial import cKDTree
    lengths = cKDTree(X).query_ball_point(X, eps, return_length=True)
    np.testing.assert_array_equal(
        epsjoin.count(X, eps, per_row=True, include_self=True, engine=engine), lengths)
    assert epsjoin.count(X, eps, include_self=True, engine=engine) == \
        cKDTree(X).count_neighbors(cKDTree(X), eps)
    with_self = epsjoin.pairs(X, eps, include_self=True, engine=engine)
    assert len(with_self) == len(epsjoin.pairs(X, eps, engine=engine)) + len(X)


def test_fifty_thousand_points_every_fast_engine(rng):
    X = rng.exponential(1 / 40, (50_000, 2))
    eps = eps_for(X, 10, rng)
    indptr, indices, _ = oracle_table(X, eps)
    for engine in ("cpu-grid", "super-ego", "auto"):
        graph = epsjoin.neighbor_graph(X, eps, engine=engine)
        assert_same_csr(graph, indptr, indices, np.ones(len(indices)))


def test_unsorted_rows_hold_the_same_sets(rng):
    X = rng.random((2000, 2))
    eps = eps_for(X, 20, rng)
    indptr, indices = epsjoin.neighbor_table(X, eps, sort_indices=False)
    want_ptr, want_idx, _ = oracle_table(X, eps)
    np.testing.assert_array_equal(indptr, want_ptr)
    for i in range(len(X)):
        np.testing.assert_array_equal(np.sort(indices[indptr[i]:indptr[i + 1]]),
                                      want_idx[want_ptr[i]:want_ptr[i + 1]])
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
