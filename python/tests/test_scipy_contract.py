"""scipy's range-query contract (issue 46, part 2): r = 0, r = inf, r above half a periodic box,
a radius per query, queries outside the box, count_neighbors with weights and bins, numpy
scalar types, complex input, pickling. Each against cKDTree on random data and at ties."""

import pickle

import numpy as np
import pytest
from scipy.spatial import KDTree, cKDTree

import epsjoin
from conftest import lattice


def sorted_pairs(P):
    P = np.asarray(P, dtype=np.int64).reshape(-1, 2)
    return P[np.lexsort((P[:, 1], P[:, 0]))]


def ball_lists(result):
    return [sorted(r) for r in result]


def with_duplicates(rng, n, d, dtype=np.float64):
    """Points on a coarse integer grid (many exact duplicates), some coordinates -0.0."""
    X = rng.integers(0, 4, (n, d)).astype(dtype)
    zeros = X == 0
    X[zeros & (rng.random(X.shape) < 0.5)] = -0.0
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_r_zero_finds_exact_duplicates_as_ckdtree(dtype, rng):
    X = with_duplicates(rng, 300, 2, dtype)
    Q = with_duplicates(rng, 50, 2, dtype)
    tree = cKDTree(X)
    want = tree.query_pairs(0.0, output_type="ndarray")
    assert len(want) > 100
    np.testing.assert_array_equal(sorted_pairs(epsjoin.pairs(X, 0.0)), sorted_pairs(want))
    np.testing.assert_array_equal(sorted_pairs(epsjoin.pairs(X, -0.0, sort=True)),
                                  sorted_pairs(want))
    assert epsjoin.count(X, 0, include_self=True) == tree.count_neighbors(tree, 0.0)
    index = epsjoin.EpsIndex(X, 1.0)
    assert ball_lists(index.query_ball_point(Q, 0.0)) == ball_lists(tree.query_ball_point(Q, 0.0))
    np.testing.assert_array_equal(index.query_ball_point(Q, 0.0, return_length=True),
                                  tree.query_ball_point(Q, 0.0, return_length=True))
    assert index.count_neighbors(index, 0.0) == tree.count_neighbors(tree, 0.0)
    assert index.count(eps=0.0) == 2 * len(want)
    other = cKDTree(Q)
    assert index.count_neighbors(epsjoin.EpsIndex(Q, 1.0), 0.0) == tree.count_neighbors(other, 0.0)
    # scipy's ball_tree query: the table of Q against X.
    graph = epsjoin.neighbor_graph(Q, 0.0, X, mode="distance", sort_indices=True)
    rows = other.query_ball_tree(tree, 0.0)
    assert [sorted(graph.indices[graph.indptr[i]:graph.indptr[i + 1]]) for i in range(len(Q))] \
        == [sorted(r) for r in rows]
    assert (graph.data == 0).all()
    sdm = tree.sparse_distance_matrix(tree, 0.0, output_type="ndarray")
    self_graph = epsjoin.neighbor_graph(X, 0.0, include_self=True)
    assert self_graph.nnz == len(sdm)


def test_r_zero_in_every_path_and_metric(rng):
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 2.0], [2.0, 4.0], [1.0, np.nextafter(2.0, 3.0)]])
    assert sorted_pairs(epsjoin.pairs(X, 0.0)).tolist() == [[0, 1]]
    # Cosine distance 0: one direction.
    assert sorted_pairs(epsjoin.pairs(X[2:4], 0.0, metric="cosine")).tolist() == [[0, 1]]
    np.testing.assert_array_equal(epsjoin.count(X, 0.0, per_row=True), [1, 1, 0, 0, 0])
    np.testing.assert_array_equal(epsjoin.count_radii(X, [0.0, 10.0]),
                                  [[1, 4], [1, 4], [0, 4], [0, 4], [0, 4]])
    indptr, indices = epsjoin.neighbor_table(X, 0.0)
    assert indptr.tolist() == [0, 1, 2, 2, 2, 2] and indices.tolist() == [1, 0]
    # scikit-learn's trees (from 12 samples) compute distances exactly; its brute force below
    # pairs X[2] and X[4] too (the expanded formula loses their last bit).
    from sklearn.neighbors import radius_neighbors_graph
    Z = with_duplicates(rng, 200, 3)
    for mode in ("distance", "connectivity"):
        graph = epsjoin.radius_neighbors_graph(Z, 0.0, mode=mode, include_self="auto")
        want = radius_neighbors_graph(Z, 0.0, mode=mode, include_self="auto")
        assert abs(graph - want).nnz == 0 and graph.nnz == want.nnz > 200


def test_r_zero_and_inf_refuse_what_the_core_refuses():
    X = np.array([[0.0, 1.0], [np.nan, 1.0]])
    for eps in (0.0, np.inf):
        with pytest.raises(ValueError, match="Input X contains NaN"):
            epsjoin.count(X, eps)
        with pytest.raises(ValueError, match="zero vector"):
            epsjoin.pairs(np.array([[1.0, 1.0], [0.0, 0.0]]), eps, metric="cosine")
        with pytest.raises(ValueError, match="latitude"):
            epsjoin.pairs(np.array([[2.0, 1.0], [0.0, 0.0]]), eps, metric="haversine")
        with pytest.raises(ValueError, match="must lie in"):
            epsjoin.pairs(np.array([[2.0, 0.5]]), eps, boxsize=1.0)


def test_r_inf_is_every_pair_and_refused_when_it_cannot_fit(rng):
    X = rng.random((60, 3)) * 1e6
    Q = rng.random((7, 3))
    tree = cKDTree(X)
    assert epsjoin.count(X, np.inf) == 60 * 59
    assert len(epsjoin.pairs(X, float("inf"))) == len(tree.query_pairs(np.inf)) == 60 * 59 // 2
    index = epsjoin.EpsIndex(X, 1.0)
    assert ball_lists(index.query_ball_point(Q, np.inf)) == ball_lists(tree.query_ball_point(Q, np.inf))
    assert index.count_neighbors(index, np.inf) == tree.count_neighbors(tree, np.inf)
    assert epsjoin.neighbor_graph(X, np.inf, Q, metric="manhattan").nnz == 60 * 7
    big = rng.random((20000, 2))
    with pytest.raises(MemoryError) as refused:
        epsjoin.pairs(big, np.inf, memory_limit="64M")
    assert "memory_limit=" in str(refused.value) and "--" not in str(refused.value)


@pytest.mark.parametrize("metric,p", [("euclidean", 2), ("manhattan", 1), ("chebyshev", np.inf)])
@pytest.mark.parametrize("r", [0.3, 0.5, 0.51, 0.7, 0.9, 1.2])
def test_r_above_half_the_box_as_ckdtree(metric, p, r, rng):
    X = rng.random((250, 2))
    box = [1.0, 1.0]
    tree = cKDTree(X, boxsize=box)
    want = tree.query_pairs(r, p=p, output_type="ndarray")
    got = epsjoin.pairs(X, r, boxsize=box, metric=metric)
    np.testing.assert_array_equal(sorted_pairs(got), sorted_pairs(want))
    Q = rng.random((40, 2)) * 3 - 1  # outside the box: wrapped as scipy wraps them
    rows = tree.query_ball_point(Q, r, p=p)
    indptr, indices = epsjoin.neighbor_table(Q, r, X, boxsize=box, metric=metric,
                                             sort_indices=True)
    assert [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(len(Q))] == ball_lists(rows)
    np.testing.assert_array_equal(epsjoin.count(Q, r, X, boxsize=1.0, per_row=True,
                                                 metric=metric),
                                  tree.query_ball_point(Q, r, p=p, return_length=True))


@pytest.mark.parametrize("r", [0.25, 0.5, 0.625, 0.75, 1.0])
def test_periodic_ties_on_a_dyadic_lattice(r):
    X = lattice(8, 2) / 8  # exact in binary: distances k/8 exactly
    tree = cKDTree(X, boxsize=1.0)
    want = tree.count_neighbors(tree, [0.0, r, np.inf])
    got = epsjoin.count_radii(X, [0.0, r, np.inf], boxsize=1.0, include_self=True)
    np.testing.assert_array_equal(got.sum(axis=0), want)
    assert len(epsjoin.pairs(X, r, boxsize=1.0)) == len(tree.query_pairs(r))
    Q = X[::5] - 1.0  # every query outside, landing on lattice points
    graph = epsjoin.neighbor_graph(Q, r, X, boxsize=1.0, mode="distance")
    assert graph.nnz == sum(tree.query_ball_point(Q, r, return_length=True))


def test_a_radius_per_query_as_ckdtree(rng):
    X = lattice(10, 2)
    tree = cKDTree(X)
    index = epsjoin.EpsIndex(X, 2.0)
    Q = X[rng.integers(0, len(X), 60)] + rng.integers(-1, 2, (60, 2)) * 0.5
    r = rng.choice([0.0, 0.5, 1.0, np.sqrt(2.0), 2.0, np.inf], 60)
    assert ball_lists(index.query_ball_point(Q, r)) == ball_lists(tree.query_ball_point(Q, r))
    np.testing.assert_array_equal(index.query_ball_point(Q, r, return_length=True),
                                  tree.query_ball_point(Q, r, return_length=True))
    # Broadcast as scipy: r against x.shape[:-1].
    Q3 = Q.reshape(6, 10, 2)
    r3 = rng.random((6, 1)) * 2
    got = index.query_ball_point(Q3, r3, return_length=True)
    np.testing.assert_array_equal(got, tree.query_ball_point(Q3, r3, return_length=True))
    with pytest.raises(ValueError):
        index.query_ball_point(Q, np.full(60, 3.0))  # above max_eps
    Y = rng.random((300, 3))
    index3 = epsjoin.EpsIndex(Y, 0.3, metric="manhattan")
    rr = rng.random(80) * 0.3
    want = cKDTree(Y).query_ball_point(Y[:80], rr, p=1)
    assert ball_lists(index3.query_ball_point(Y[:80], rr, p=1)) == ball_lists(want)


def test_count_neighbors_weights_and_bins_as_ckdtree(rng):
    X, Y = rng.random((200, 2)), rng.random((150, 2))
    t, u = cKDTree(X), cKDTree(Y)
    a, b = epsjoin.EpsIndex(X, 0.2), epsjoin.EpsIndex(Y, 0.2)
    w, v = rng.random(200), rng.random(150)
    r = np.array([0.0, 0.05, 0.1, 0.1, 0.3, 2.0, np.inf])
    cases = [(a, a, t, t, None), (a, a, t, t, w), (b, b, u, u, (v, None)),
             (a, b, t, u, (None, v)), (a, b, t, u, (w, v)), (a, b, t, u, (w, None)),
             (a, b, t, u, None), (a, Y, t, u, None)]
    for cumulative in (True, False):
        for ours, other, tree, tree_other, weights in cases:
            want = tree.count_neighbors(tree_other, r, weights=weights, cumulative=cumulative)
            got = ours.count_neighbors(other, r, weights=weights, cumulative=cumulative)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-12)
    # Scalars: int unweighted, numpy.float64 weighted, as scipy's.
    for weights in (None, w):
        got, want = a.count_neighbors(a, 0.1, weights=weights), t.count_neighbors(t, 0.1,
                                                                                  weights=weights)
        assert type(got) is type(want) and got == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="Two different trees"):
        a.count_neighbors(b, 0.1, weights=w)
    with pytest.raises(ValueError, match="non-decreasing"):
        a.count_neighbors(b, [0.2, 0.1], cumulative=False)
    with pytest.raises(ValueError, match="one-dimensional"):
        a.count_neighbors(b, [[0.1]])
    with pytest.raises(ValueError, match="metric"):
        a.count_neighbors(b, 0.1, p=1)


def test_count_neighbors_ties_on_the_lattice():
    X = lattice(9, 3)
    t = cKDTree(X)
    index = epsjoin.EpsIndex(X, 1.0)
    r = [0.0, 1.0, np.sqrt(2.0), np.sqrt(3.0), 2.0, 3.0]
    np.testing.assert_array_equal(index.count_neighbors(index, r), t.count_neighbors(t, r))
    w = np.arange(len(X), dtype=float)
    np.testing.assert_allclose(index.count_neighbors(index, r, weights=w, cumulative=False),
                               t.count_neighbors(t, r, weights=w, cumulative=False), rtol=1e-12)


def test_numpy_scalars_and_complex_input_as_scipy(rng):
    X = rng.random((50, 2))
    index, tree = epsjoin.EpsIndex(X, 0.3), cKDTree(X)
    got = index.query_ball_point(X[0], 0.3, return_length=True)
    want = tree.query_ball_point(X[0], 0.3, return_length=True)
    assert type(got) is type(want) is np.int64 and got == want
    with pytest.raises(TypeError) as ours:
        epsjoin.EpsIndex(X + 0j, 0.3)
    with pytest.raises(TypeError) as theirs:
        KDTree(X + 0j)
    assert str(ours.value) == str(theirs.value).replace("KDTree", "EpsIndex")
    with pytest.raises(TypeError):
        index.query_ball_point(X[:3] + 1j, 0.3)


def test_eps_as_a_zero_d_array(rng):
    X = rng.random((80, 2))
    want = epsjoin.neighbor_graph(X, 0.2, sort_indices=True)
    got = epsjoin.neighbor_graph(X, np.array(0.2), sort_indices=True)
    assert (got != want).nnz == 0
    assert epsjoin.EpsIndex(X, np.array(0.2)).count() == epsjoin.count(X, 0.2)
    assert epsjoin.count(X, np.float32(0.2)) == epsjoin.count(X, float(np.float32(0.2)))
    for bad in (np.array([0.2]), "0.2", True):
        with pytest.raises(TypeError):
            epsjoin.count(X, bad)
    for bad in (-1.0, np.nan):
        with pytest.raises(ValueError):
            epsjoin.count(X, bad)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_pickled_index_answers_the_same(metric, rng):
    X = rng.random((400, 3)).astype(np.float32)
    index = epsjoin.EpsIndex(X, 0.2, metric=metric, finer_grids=1, n_jobs=1)
    copy = pickle.loads(pickle.dumps(index))
    assert copy.max_eps == index.max_eps and copy.n == index.n and copy.data.dtype == X.dtype
    np.testing.assert_array_equal(copy.data, X)
    for eps in (0.2, 0.07):
        a = index.neighbor_graph(eps=eps, sort_indices=True)
        b = copy.neighbor_graph(eps=eps, sort_indices=True)
        assert (a != b).nnz == 0 and a.nnz > 0
        assert ball_lists(index.query_ball_point(X[:20], eps)) == \
            ball_lists(copy.query_ball_point(X[:20], eps))
