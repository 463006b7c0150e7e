"""The k nearest within a radius (EpsIndex.kneighbors, RadiusNeighbors.kneighbors) against an
exact oracle written here: every distance summed dimension by dimension as the library and
scipy's trees sum it, every point within the radius (inclusive) kept, sorted by (distance,
index), cut at k and padded with inf / n. Random data of several shapes, ties at exactly the
radius and equal distances (lattices, duplicates), float32, every metric, every CPU engine,
self-joins without the point itself, single points; and scipy's and scikit-learn's own answers
where they are defined."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin
from conftest import CPU_ENGINES, lattice
from epsjoin._metrics import pair_distances


def oracle(Q, X, k, r, metric="euclidean", exclude_self=False):
    m, n = len(Q), len(X)
    dist = np.full((m, k), np.inf)
    ind = np.full((m, k), n, dtype=np.int64)
    for q in range(m):
        d = pair_distances(Q, X, np.full(n, q), np.arange(n), metric, None)
        keep = np.flatnonzero(d <= r)
        if exclude_self:
            keep = keep[keep != q]
        order = keep[np.lexsort((keep, d[keep]))][:k]
        dist[q, :len(order)] = d[order]
        ind[q, :len(order)] = order
    return dist, ind


def shapes(rng):
    yield "uniform-2", rng.random((600, 2)), 0.05
    yield "uniform-3", rng.random((500, 3)), 0.12
    yield "uniform-8", rng.random((300, 8)), 0.6
    yield "lattice", lattice(9, 2).astype(np.float64), 1.0  # ties at exactly r
    dup = rng.random((40, 3))
    yield "duplicates", dup[rng.integers(0, 40, 400)], 0.1
    yield "float32", rng.random((500, 2)).astype(np.float32), 0.06


@pytest.mark.parametrize("k", [1, 3, 12, 700])
def test_index_kneighbors_equal_the_oracle(rng, k):
    for name, X, r in shapes(rng):
        Q = X[rng.integers(0, len(X), 30)] + (0 if name == "lattice" else 0.01)
        index = epsjoin.EpsIndex(X, r)
        for radius in (r, r / 2):
            dist, ind = index.kneighbors(Q, k, radius)
            want_d, want_i = oracle(Q.astype(np.float64), X.astype(np.float64), k, radius)
            np.testing.assert_array_equal(ind, want_i, err_msg=name)
            np.testing.assert_array_equal(dist, want_d, err_msg=name)
            assert dist.dtype == np.float64 and ind.dtype == np.int64
        dist, ind = index.kneighbors(None, k)
        want_d, want_i = oracle(X.astype(np.float64), X.astype(np.float64), k, r, exclude_self=True)
        np.testing.assert_array_equal(ind, want_i, err_msg=name)
        np.testing.assert_array_equal(dist, want_d, err_msg=name)


def test_index_kneighbors_equal_ckdtree(rng):
    # scipy's radius-bounded search: the same arrays (its bound is strict, so it is nudged).
    X = rng.random((3000, 3))
    Q = rng.random((200, 3))
    r = 0.07
    dist, ind = epsjoin.EpsIndex(X, 0.1).kneighbors(Q, 9, r)
    sd, si = cKDTree(X).query(Q, 9, distance_upper_bound=np.nextafter(r, np.inf))
    np.testing.assert_array_equal(ind, si)
    np.testing.assert_array_equal(dist, sd)
    one_d, one_i = epsjoin.EpsIndex(X, 0.1).kneighbors(Q[0], 4)
    assert one_d.shape == (4,) and one_i.shape == (4,)
    np.testing.assert_array_equal(one_i, epsjoin.EpsIndex(X, 0.1).kneighbors(Q[:1], 4)[1][0])


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine", "haversine"])
def test_index_kneighbors_in_every_metric(rng, metric):
    if metric == "haversine":
        X = np.column_stack([rng.uniform(-1.2, 1.2, 800), rng.uniform(-np.pi, np.pi, 800)])
        r = 0.1
    else:
        X = rng.random((600, 3)) + (0.1 if metric == "cosine" else 0)
        r = 0.01 if metric == "cosine" else 0.15
    Q = X[:40] + 0.003
    dist, ind = epsjoin.EpsIndex(X, r, metric=metric).kneighbors(Q, 5)
    want_d, want_i = oracle(Q, X, 5, r, metric)
    np.testing.assert_array_equal(ind, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=1e-12, atol=1e-15)
    L = lattice(8, 2).astype(np.float64) if metric in ("manhattan", "chebyshev") else None
    if L is not None:  # ties at exactly r
        dist, ind = epsjoin.EpsIndex(L, 2.0, metric=metric).kneighbors(None, 6, 2.0)
        want_d, want_i = oracle(L, L, 6, 2.0, metric, exclude_self=True)
        np.testing.assert_array_equal(ind, want_i)
        np.testing.assert_array_equal(dist, want_d)


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_estimator_kneighbors_every_engine(rng, engine):
    X = rng.random((700, 2))
    Q = rng.random((60, 2))
    est = epsjoin.RadiusNeighbors(radius=0.04, n_neighbors=6, engine=engine).fit(X)
    dist, ind = est.kneighbors(Q)
    want_d, want_i = oracle(Q, X, 6, 0.04)
    np.testing.assert_array_equal(ind, want_i)
    np.testing.assert_array_equal(dist, want_d)
    dist, ind = est.kneighbors(None, 4, max_radius=0.03)
    want_d, want_i = oracle(X, X, 4, 0.03, exclude_self=True)
    np.testing.assert_array_equal(ind, want_i)
    np.testing.assert_array_equal(dist, want_d)
    np.testing.assert_array_equal(est.kneighbors(Q, return_distance=False),
                                  oracle(Q, X, 6, 0.04)[1])


def test_estimator_kneighbors_equal_sklearn(rng):
    # Where the radius holds every point, scikit-learn's unbounded kneighbors is the answer.
    from sklearn.neighbors import NearestNeighbors

    for X in (rng.random((500, 3)), rng.random((400, 2)).astype(np.float32)):
        Q = rng.random((50, X.shape[1])).astype(X.dtype)
        ours = epsjoin.RadiusNeighbors(radius=2.0).fit(X)
        theirs = NearestNeighbors().fit(X)
        for args in ((Q, 7), (None, 7)):
            d, i = ours.kneighbors(*args)
            sd, si = theirs.kneighbors(*args)
            np.testing.assert_array_equal(i, si)
            np.testing.assert_allclose(d, sd, rtol=1e-6 if X.dtype == np.float32 else 1e-12)
            assert d.dtype == X.dtype


def test_kneighbors_arguments(rng):
    X = rng.random((50, 2))
    index = epsjoin.EpsIndex(X, 0.2)
    est = epsjoin.RadiusNeighbors(radius=0.2).fit(X)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="Expected k > 0"):
            index.kneighbors(X, bad)
        with pytest.raises(ValueError, match="Expected n_neighbors > 0"):
            est.kneighbors(X, bad)
    with pytest.raises(TypeError, match="integer"):
        index.kneighbors(X, 2.5)
    with pytest.raises(ValueError, match="max_eps"):
        index.kneighbors(X, 2, 0.3)
    with pytest.raises(ValueError, match="max_radius"):
        index.kneighbors(X, 2, 0.0)
    with pytest.raises(ValueError, match="max_radius"):
        est.kneighbors(X, 2, max_radius=-1.0)
    with pytest.raises(ValueError, match="features"):
        est.kneighbors(rng.random((3, 5)))
