"""50,000 points against scipy's cKDTree: every CPU engine, float32 and float64, 2-D to 8-D."""

import numpy as np
import pytest
import scipy.sparse
from scipy.spatial import cKDTree

import epsjoin
from conftest import CPU_ENGINES, lattice, oracle_pairs

N = 50_000
# brute-cpu compares every pair: about 2.5 s a call at 50,000 points on two cores, 0.4 s at
# 20,000, which keeps this file within a minute. Its answer is checked against the first
# BRUTE_N points' part of the oracle.
BRUTE_N = 20_000
# cpu-rtree takes about 2.5 s a call at 50,000 8-D points (test_against_scipy runs it in 8-D
# and above on smaller sets).
SLOW_IN_HIGH_D = {"cpu-rtree"}
# Neighbours a point: 10 in 8-D, where cKDTree's three queries take 3 s each and cpu-grid's
# calls grow from 0.5 s at 10 neighbours to 3 s at 20.
UNIFORM = [(2, 20), (3, 20), (8, 10)]


def eps_for_neighbours(X, k, rng):
    # conftest's eps_for takes a quantile of 4000 sampled pairs, under two of which lie below
    # k / N at this size; the median distance to the k-th nearest neighbour of 500 points is
    # steady. Moved off that pair's own distance as eps_for does.
    tree = cKDTree(X)
    dist, _ = tree.query(X[rng.integers(0, len(X), 500)], k=k + 1)
    return float(np.median(dist[:, -1])) * (1 + 1e-9)


class Oracle:
    """cKDTree's three answers for X at eps. float32 points are widened exactly to float64, as
    cKDTree (and conftest's oracle_pairs) does: the float64 join of the same values."""

    def __init__(self, X, eps):
        tree = cKDTree(X)
        self.pairs = oracle_pairs(X, eps)  # query_pairs(output_type="ndarray"), sorted
        # The point itself counted too.
        self.lengths = tree.query_ball_point(X, eps, return_length=True, workers=-1)
        coo = tree.sparse_distance_matrix(tree, eps, output_type="coo_matrix")
        off_diagonal = coo.row != coo.col
        self.graph = scipy.sparse.csr_matrix(
            (coo.data[off_diagonal], (coo.row[off_diagonal], coo.col[off_diagonal])),
            shape=coo.shape)
        self.graph.sort_indices()

    def first(self, n):
        """The oracle of X[:n]: the pairs and edges among those points."""
        part = Oracle.__new__(Oracle)
        part.pairs = self.pairs[self.pairs[:, 1] < n]  # i < j
        part.graph = self.graph[:n, :n]
        part.graph.sort_indices()
        part.lengths = np.diff(part.graph.indptr) + 1
        return part


def assert_engine_matches(X, eps, oracle, engine):
    if engine == "brute-cpu":
        X, oracle = X[:BRUTE_N], oracle.first(BRUTE_N)
    np.testing.assert_array_equal(epsjoin.pairs(X, eps, sort=True, engine=engine), oracle.pairs)
    np.testing.assert_array_equal(
        epsjoin.count(X, eps, per_row=True, include_self=True, engine=engine), oracle.lengths)
    graph = epsjoin.neighbor_graph(X, eps, mode="distance", engine=engine, sort_indices=True)
    np.testing.assert_array_equal(graph.indptr, oracle.graph.indptr)
    np.testing.assert_array_equal(graph.indices, oracle.graph.indices)
    # scipy sums the squares in another order from 4-D on (a few ulp apart); epsjoin's sum
    # is compared bit for bit with conftest's oracle_table in test_against_scipy.
    np.testing.assert_allclose(graph.data, oracle.graph.data, rtol=1e-14, atol=0)


@pytest.mark.parametrize("d,neighbours", UNIFORM)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fifty_thousand_uniform_points(d, neighbours, dtype, rng):
    X = rng.random((N, d)).astype(dtype)
    eps = eps_for_neighbours(X, neighbours, rng)
    oracle = Oracle(X, eps)
    assert 0.8 * neighbours <= len(oracle.pairs) * 2 / N <= 1.2 * neighbours
    for engine in CPU_ENGINES:
        if d < 8 or engine not in SLOW_IN_HIGH_D:
            assert_engine_matches(X, eps, oracle, engine)


@pytest.mark.parametrize("side,d,eps", [(224, 2, 2.0), (37, 3, 2.0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fifty_thousand_lattice_points_with_ties_at_eps(side, d, eps, dtype):
    # Integer coordinates: distances 1, sqrt(2), 2 are exact, so many pairs lie at exactly eps
    # and all of them are in (distance <= eps).
    X = lattice(side, d, dtype)
    oracle = Oracle(X, eps)
    assert (oracle.graph.data == eps).sum() > len(X)
    for engine in CPU_ENGINES:
        assert_engine_matches(X, eps, oracle, engine)
