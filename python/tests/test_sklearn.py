"""radius_neighbors_graph against scikit-learn's, element for element."""

import numpy as np
import pytest

import epsjoin
from conftest import eps_for, lattice

sklearn_neighbors = pytest.importorskip("sklearn.neighbors")


def sklearn_graph(X, radius, **kw):
    g = sklearn_neighbors.radius_neighbors_graph(X, radius, **kw)
    g.sort_indices()
    return g


def assert_identical(got, want):
    assert type(got) is type(want)
    assert (got != want).nnz == 0  # as matrices, before any sorting
    got.sort_indices()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("n,d", [(12, 2), (500, 1), (800, 2), (600, 3), (400, 8), (300, 15)])
@pytest.mark.parametrize("mode", ["connectivity", "distance"])
@pytest.mark.parametrize("include_self", [False, True, "auto"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_equal_to_sklearn_where_it_computes_exactly(n, d, mode, include_self, dtype, rng):
    # With up to 15 features and 12 samples or more, scikit-learn's algorithm="auto" uses a tree:
    # exact distances.
    X = rng.random((n, d)).astype(dtype)
    X[n // 2:] = X[: n - n // 2]  # duplicates: explicit zero distances
    radius = eps_for(X, 7, rng)
    want = sklearn_graph(X, radius, mode=mode, include_self=include_self)
    got = epsjoin.radius_neighbors_graph(X, radius, mode=mode, include_self=include_self)
    assert_identical(got, want)


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
def test_equal_to_sklearn_at_ties(mode):
    X = lattice(12, 3)
    for radius in (1.0, 2.0, 3.0):
        assert_identical(epsjoin.radius_neighbors_graph(X, radius, mode=mode),
                         sklearn_graph(X, radius, mode=mode))


@pytest.mark.parametrize("d", [16, 40, 64])
def test_high_dimensions_agree_up_to_sklearns_rounding(d, rng):
    # Above 15 features scikit-learn takes its brute-force path (the expanded formula): the
    # same pairs on random data, distances equal to its rounding.
    X = rng.random((300, d))
    radius = eps_for(X, 7, rng)
    want = sklearn_graph(X, radius, mode="distance")
    got = epsjoin.radius_neighbors_graph(X, radius, mode="distance")
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-7)


@pytest.mark.parametrize("n", [1, 2, 5, 11])
def test_few_samples_agree_up_to_sklearns_rounding(n, rng):
    # Below 12 samples scikit-learn computes by brute force (the expanded formula): identical
    # points come out about 1e-8 apart there, exactly 0 here.
    X = rng.random((n, 3))
    X[n // 2:] = X[: n - n // 2]
    want = sklearn_graph(X, 0.8, mode="distance", include_self=True)
    got = epsjoin.radius_neighbors_graph(X, 0.8, mode="distance", include_self=True)
    got.sort_indices()
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-7, atol=1e-7)


def test_refuses_what_sklearn_refuses():
    with pytest.raises(ValueError, match="0 sample"):
        epsjoin.radius_neighbors_graph(np.empty((0, 2)), 1.0)
    # Manhattan, chebyshev, cosine and haversine are computed (test_metrics.py); not these.
    with pytest.raises(ValueError, match="metric must be one of"):
        epsjoin.radius_neighbors_graph(np.ones((3, 2)), 1.0, metric="mahalanobis")
    with pytest.raises(ValueError, match="p = 1, 2 and inf"):
        epsjoin.radius_neighbors_graph(np.ones((3, 2)), 1.0, p=3)
    with pytest.raises(ValueError, match="mode"):
        epsjoin.radius_neighbors_graph(np.ones((3, 2)), 1.0, mode="weights")


def test_list_input_and_docstring_example():
    X = [[0], [3], [1]]
    got = epsjoin.radius_neighbors_graph(X, 1.5, mode="connectivity", include_self=True)
    np.testing.assert_array_equal(got.toarray(), [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
