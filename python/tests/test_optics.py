"""epsjoin.OPTICS against scikit-learn's OPTICS on tie-free random data of several shapes, for
every metric both compute, min_samples as a count and a fraction, finite and infinite max_eps,
both cluster methods and every CPU engine: the same ordering_, predecessor_, labels_ and
cluster_hierarchy_, exactly; reachability_ and core_distances_ within 1e-12 (scikit-learn rounds
its own to 15 decimals), inf where scikit-learn has inf. On lattices (equal reachabilities
everywhere) both break ties by the smallest index. Refusals as scikit-learn words them."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.cluster import OPTICS as SkOPTICS  # noqa: E402

import epsjoin  # noqa: E402
from conftest import CPU_ENGINES, lattice  # noqa: E402


def points(rng, n, d, metric="euclidean"):
    X = rng.random((n, d))
    # Dense groups of several spreads among uniform points: clusters of several densities.
    for g, spread in enumerate((0.01, 0.03, 0.06)):
        rows = slice(g * n // 5, (g + 1) * n // 5)
        X[rows] = rng.random(d) + spread * rng.standard_normal((n // 5, d))
    return X + 0.5 if metric == "cosine" else X


def assert_same(ours, theirs):
    np.testing.assert_array_equal(ours.ordering_, theirs.ordering_)
    np.testing.assert_array_equal(ours.predecessor_, theirs.predecessor_)
    for name in ("reachability_", "core_distances_"):
        a, b = getattr(ours, name), getattr(theirs, name)
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b), err_msg=name)
        finite = np.isfinite(b)
        np.testing.assert_allclose(a[finite], b[finite], rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    assert ours.labels_.dtype == np.int64 and ours.ordering_.dtype == np.int64
    if hasattr(theirs, "cluster_hierarchy_"):
        np.testing.assert_array_equal(ours.cluster_hierarchy_, theirs.cluster_hierarchy_)


@pytest.mark.parametrize("n,d", [(300, 1), (600, 2), (500, 3), (300, 5)])
@pytest.mark.parametrize("cluster_method", ["xi", "dbscan"])
def test_optics_equals_sklearn(rng, n, d, cluster_method):
    X = points(rng, n, d)
    for min_samples, max_eps in [(5, 0.15), (12, 0.3), (0.03, np.inf), (2, 0.08)]:
        kw = dict(min_samples=min_samples, max_eps=max_eps, cluster_method=cluster_method)
        if cluster_method == "dbscan":
            kw["eps"] = min(0.05, max_eps)
        assert_same(epsjoin.OPTICS(**kw).fit(X), SkOPTICS(**kw).fit(X))


@pytest.mark.parametrize("metric,p", [("manhattan", 2), ("chebyshev", 2), ("cosine", 2),
                                      ("minkowski", 1), ("l1", 2)])
def test_optics_metrics_equal_sklearn(rng, metric, p):
    X = points(rng, 400, 3, metric)
    max_eps = 0.02 if metric == "cosine" else 0.25
    for xi in (0.05, 0.2):
        kw = dict(min_samples=6, max_eps=max_eps, metric=metric, p=p, xi=xi)
        assert_same(epsjoin.OPTICS(**kw).fit(X), SkOPTICS(**kw).fit(X))


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_optics_every_cpu_engine(rng, engine):
    X = points(rng, 500, 2)
    kw = dict(min_samples=8, max_eps=0.2)
    ours = epsjoin.OPTICS(engine=engine, **kw).fit(X)
    assert ours.stats_["engine"] == engine
    assert_same(ours, SkOPTICS(**kw).fit(X))


def test_optics_ties_on_a_lattice(rng):
    # Integer points with holes: reachabilities 1, sqrt(2), ... everywhere, equal in both
    # (scikit-learn's rounding to 15 decimals keeps equal values equal); both take the smallest
    # index among equals.
    X = lattice(14, 2).astype(np.float64)
    X = X[rng.random(len(X)) < 0.8]
    for min_samples, max_eps in [(3, 1.0), (5, 1.5), (4, np.inf)]:
        kw = dict(min_samples=min_samples, max_eps=max_eps)
        assert_same(epsjoin.OPTICS(**kw).fit(X), SkOPTICS(**kw).fit(X))


def test_optics_duplicates_and_float32(rng):
    base = rng.random((60, 2))
    X = base[rng.integers(0, 60, 400)] + 1e-9 * rng.standard_normal((400, 2))
    kw = dict(min_samples=4, max_eps=0.2)
    assert_same(epsjoin.OPTICS(**kw).fit(X), SkOPTICS(**kw).fit(X))
    X32 = points(rng, 300, 2).astype(np.float32)
    ours, theirs = epsjoin.OPTICS(**kw).fit(X32), SkOPTICS(**kw).fit(X32)
    np.testing.assert_array_equal(ours.ordering_, theirs.ordering_)
    np.testing.assert_allclose(ours.reachability_, theirs.reachability_, rtol=1e-6)


def test_optics_refusals_and_warning(rng):
    X = rng.random((20, 2))
    with pytest.raises(ValueError, match="no greater than the number of samples"):
        epsjoin.OPTICS(min_samples=30).fit(X)
    with pytest.raises(ValueError, match="min_samples"):
        epsjoin.OPTICS(min_samples=1).fit(X)
    with pytest.raises(ValueError, match="cluster_method"):
        epsjoin.OPTICS(cluster_method="hdbscan").fit(X)
    with pytest.raises(ValueError, match="Specify an epsilon smaller than 0.5"):
        epsjoin.OPTICS(max_eps=0.5, cluster_method="dbscan", eps=0.6).fit(X)
    with pytest.raises(ValueError, match="max_eps"):
        epsjoin.OPTICS(max_eps=0.0).fit(X)
    with pytest.raises(ValueError, match="metric"):
        epsjoin.OPTICS(metric="precomputed").fit(X)
    with pytest.raises(ValueError, match="minimum of 2"):
        epsjoin.OPTICS().fit(X[:1])
    with pytest.warns(UserWarning, match="All reachability values are inf"):
        epsjoin.OPTICS(min_samples=3, max_eps=1e-9).fit(X)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.OPTICS().fit(X)
