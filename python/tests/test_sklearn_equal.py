"""epsjoin's DBSCAN and radius-neighbours estimators against scikit-learn's, on tie-free random
data of several shapes for every metric, with and without sample weights, and on lattices whose
pairs lie at exactly eps. Labels are compared exactly: scikit-learn numbers clusters by their
first core point, as epsjoin does; a border point within eps of two clusters is the one place the
two may differ (epsjoin: the cluster of its core neighbour of smallest index; scikit-learn: the
cluster of smallest label among its core neighbours'), and both rules are checked there."""


import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.cluster import DBSCAN as SkDBSCAN  # noqa: E402
from sklearn.metrics import pairwise_distances  # noqa: E402
from sklearn.neighbors import NearestNeighbors, radius_neighbors_graph  # noqa: E402

import epsjoin  # noqa: E402
from conftest import lattice, skip_without_gpu  # noqa: E402

# (name given to both, p) for each metric epsjoin computes under scikit-learn's names.
METRICS = [("euclidean", None), ("l2", None), ("manhattan", None), ("cityblock", None),
           ("l1", None), ("chebyshev", None), ("infinity", None), ("cosine", None),
           ("haversine", None), ("minkowski", 1), ("minkowski", 2), ("minkowski", np.inf)]
SHAPES = [(300, 2), (400, 3), (250, 6), (200, 16)]


def points(rng, n, d, metric):
    if metric == "haversine":  # latitude, longitude in radians, away from the poles
        return np.column_stack([rng.uniform(-1.2, 1.2, n), rng.uniform(-np.pi, np.pi, n)])
    X = rng.random((n, d))
    # A few tight groups among uniform points: clusters, border points and noise.
    X[: n // 3] = X[rng.integers(0, 5, n // 3)] + 0.02 * rng.standard_normal((n // 3, d))
    return X + 0.1 if metric == "cosine" else X


def clear_eps(D, eps, band):
    """eps moved until no pair distance lies within a relative `band` of it (tie-free)."""
    while np.any(np.abs(D - eps) <= band * eps):
        eps *= 1 + 7 * band
    return eps


def distances(X, metric, p):
    # pairwise_distances knows chebyshev, not the trees' other name for it.
    metric = "chebyshev" if metric == "infinity" else metric
    return pairwise_distances(X, metric=metric, **({"p": p} if p is not None else {}))


def expected_labels(sk_labels, core, D, eps):
    """scikit-learn's labels with epsjoin's border rule: each border point takes the label of
    its core neighbour of smallest index. Also checks scikit-learn's own rule at such points."""
    want = sk_labels.copy()
    for i in np.flatnonzero(~core & (sk_labels >= 0)):
        near = np.flatnonzero((D[i] <= eps) & core)
        want[i] = sk_labels[near[0]]
        assert sk_labels[i] == sk_labels[near].min()
    return want


def sklearn_dbscan(X, eps, min_samples, metric, p, weights=None):
    # scikit-learn's DBSCAN knows neither NearestNeighbors' "infinity" nor p = inf, which
    # epsjoin takes as chebyshev.
    if metric == "infinity" or p == np.inf:
        metric, p = "chebyshev", None
    kwargs = {"p": p} if p is not None else {}
    ref = SkDBSCAN(eps=eps, min_samples=min_samples, metric=metric, **kwargs).fit(
        X, sample_weight=weights)
    core = np.zeros(X.shape[0], dtype=bool)
    core[ref.core_sample_indices_] = True
    return ref.labels_, core


def check_dbscan(X, eps, min_samples, metric, p, weights=None, D=None, **options):
    D = distances(X, metric, p) if D is None else D
    sk_labels, core = sklearn_dbscan(X, eps, min_samples, metric, p, weights)
    got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, metric=metric, p=p,
                         **options).fit(X, sample_weight=weights)
    assert got.labels_.dtype == np.int64
    np.testing.assert_array_equal(got.core_sample_indices_, np.flatnonzero(core))
    np.testing.assert_array_equal(got.labels_, expected_labels(sk_labels, core, D, eps))
    return got.labels_, sk_labels


@pytest.mark.parametrize("metric,p", METRICS)
@pytest.mark.parametrize("weighted", [False, True])
def test_dbscan_labels_equal_sklearn(rng, metric, p, weighted):
    equal_runs = 0
    for n, d in SHAPES:
        if metric == "haversine" and d != 2:
            continue
        X = points(rng, n, d, metric)
        D = distances(X, metric, p)
        eps = clear_eps(D, float(np.quantile(D[D > 0], 8 / n)), 1e-7)
        weights = rng.integers(-2, 12, n) / 4 if weighted else None  # sums exact in binary
        for min_samples in (1, 3, 6):
            ours, theirs = check_dbscan(X, eps, min_samples, metric, p, weights, D)
            equal_runs += bool(np.array_equal(ours, theirs))
    assert equal_runs > 0  # most runs have no border point between two clusters at all


@pytest.mark.parametrize("engine", ["cpu-grid", "super-ego", "brute-cpu"])
@pytest.mark.parametrize("weighted", [False, True])
def test_dbscan_every_cpu_engine(rng, engine, weighted):
    if engine not in [e["name"] for e in epsjoin.engines() if e["available"]]:
        pytest.skip(f"{engine} is not built")
    X = points(rng, 600, 2, "euclidean")
    D = distances(X, "euclidean", None)
    eps = clear_eps(D, 0.03, 1e-9)
    weights = rng.integers(0, 9, len(X)) / 4 if weighted else None
    check_dbscan(X, eps, 4, "euclidean", None, weights, D, engine=engine)


@pytest.mark.parametrize("metric,p", [("euclidean", None), ("manhattan", None),
                                      ("chebyshev", None), ("minkowski", 1)])
def test_dbscan_ties_at_eps_on_a_lattice(rng, metric, p):
    # Integer points with holes: many pairs at exactly eps = 1, which both include.
    X = lattice(12, 2)
    X = X[rng.random(len(X)) < 0.7]
    D = distances(X, metric, p)
    for min_samples in (2, 3, 4, 5):
        weights = rng.integers(1, 6, len(X)) / 2
        for w in (None, weights):
            check_dbscan(X, 1.0, min_samples, metric, p, w, D)


@pytest.mark.parametrize("engine", ["auto", "cpu-grid", "super-ego", "brute-cpu"])
def test_dbscan_border_rule_where_sklearn_differs(engine):
    # Two clusters on a line, B around 0 and A around 2, and point 3 (at 0.9) a border point of
    # both: within eps of core point 2 of B and core point 1 of A. B's first core point (0)
    # comes first, so B is cluster 0, A cluster 1. epsjoin gives point 3 the cluster of its
    # core neighbour of smallest index (1: A), scikit-learn the smaller label (0: B).
    x = [-0.35, 1.8, 0.0, 0.9, -0.25, -0.15, 1.95, 2.05, 2.15]
    X = np.array(x)[:, None]
    ours = epsjoin.DBSCAN(eps=1.0, min_samples=4, engine=engine).fit(X)
    theirs = SkDBSCAN(eps=1.0, min_samples=4).fit(X)
    np.testing.assert_array_equal(ours.core_sample_indices_, [0, 1, 2, 4, 5, 6, 7, 8])
    np.testing.assert_array_equal(ours.core_sample_indices_, theirs.core_sample_indices_)
    np.testing.assert_array_equal(theirs.labels_, [0, 1, 0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(ours.labels_, [0, 1, 0, 1, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_dbscan_precomputed(rng, sparse, weighted):
    X = points(rng, 300, 3, "euclidean")
    D = distances(X, "euclidean", None)
    eps = clear_eps(D, 0.08, 1e-9)
    weights = rng.integers(-2, 12, len(X)) / 4 if weighted else None
    given = radius_neighbors_graph(X, eps, mode="distance") if sparse else D
    sk_labels, core = sklearn_dbscan(given, eps, 4, "precomputed", None, weights)
    got = epsjoin.DBSCAN(eps=eps, min_samples=4, metric="precomputed").fit(
        given, sample_weight=weights)
    np.testing.assert_array_equal(got.core_sample_indices_, np.flatnonzero(core))
    np.testing.assert_array_equal(got.labels_, expected_labels(sk_labels, core, D, eps))


def _weighted_l1(u, v, scale=1.0):
    return scale * float(np.abs(u - v).sum())


@pytest.mark.parametrize("weighted", [False, True])
def test_dbscan_callable_metric(rng, weighted):
    # A callable is called per pair, as scikit-learn calls it: equal labels on random data, at
    # ties on a lattice, with metric_params passed through; sparse input made dense for it.
    X = points(rng, 200, 3, "euclidean")
    weights = rng.integers(-2, 12, len(X)) / 4 if weighted else None
    D = distances(X, "manhattan", None) * 2.0
    eps = clear_eps(D, 0.3, 1e-9)
    for data, radius, dist in [(X, eps, D), (lattice(8, 2), 2.0,
                                             2.0 * distances(lattice(8, 2), "manhattan", None))]:
        w = weights[: len(data)] if weighted and len(data) == len(X) else None
        ref = SkDBSCAN(eps=radius, min_samples=4, metric=_weighted_l1,
                       metric_params={"scale": 2.0}).fit(data, sample_weight=w)
        core = np.zeros(len(data), dtype=bool)
        core[ref.core_sample_indices_] = True
        got = epsjoin.DBSCAN(eps=radius, min_samples=4, metric=_weighted_l1,
                             metric_params={"scale": 2.0}).fit(data, sample_weight=w)
        np.testing.assert_array_equal(got.core_sample_indices_, ref.core_sample_indices_)
        np.testing.assert_array_equal(got.labels_, expected_labels(ref.labels_, core, dist, radius))
        assert got.stats_["merge"] == "callable"
    import scipy.sparse
    sparse = epsjoin.DBSCAN(eps=eps, min_samples=4, metric=_weighted_l1,
                            metric_params={"scale": 2.0}).fit(scipy.sparse.csr_matrix(X))
    np.testing.assert_array_equal(sparse.labels_, epsjoin.DBSCAN(
        eps=eps, min_samples=4, metric=_weighted_l1, metric_params={"scale": 2.0}).fit(X).labels_)


def test_sample_weight_refusals_as_sklearns(rng):
    # scikit-learn's checks and words, for arrays and for one number.
    X = rng.random((40, 2))
    for bad, words in [(0.0, "at least one non-zero"), (np.zeros(40), "at least one non-zero"),
                       (np.ones(39), "shape"), (np.ones((40, 1)), "1D"),
                       (np.r_[np.ones(39), np.nan], "NaN")]:
        with pytest.raises(ValueError, match=words):
            SkDBSCAN(eps=0.2).fit(X, sample_weight=bad)
        with pytest.raises(ValueError, match=words):
            epsjoin.DBSCAN(eps=0.2).fit(X, sample_weight=bad)


def test_callable_metric_refuses_a_bad_distance():
    X = np.arange(6.0).reshape(3, 2)
    for bad in (-1.0, np.nan):
        with pytest.raises(ValueError, match="distance must be a finite number >= 0"):
            epsjoin.DBSCAN(metric=lambda u, v, b=bad: b).fit(X)


def test_dbscan_function_is_the_estimator(rng):
    # scikit-learn's dbscan(): (core_sample_indices_, labels_) of the estimator, its defaults
    # (minkowski, p 2) Euclidean; p in metric_params wins over p, with scikit-learn's warning.
    from sklearn.cluster import dbscan as sk_dbscan

    X = points(rng, 300, 2, "euclidean")
    eps = clear_eps(distances(X, "euclidean", None), 0.05, 1e-9)
    core, labels = epsjoin.dbscan(X, eps, min_samples=4)
    sk_core, sk_labels = sk_dbscan(X, eps, min_samples=4)
    np.testing.assert_array_equal(core, sk_core)
    fitted = epsjoin.DBSCAN(eps, min_samples=4).fit(X)
    np.testing.assert_array_equal(labels, fitted.labels_)
    with pytest.warns(SyntaxWarning, match="Parameter p is found in metric_params"):
        core1, labels1 = epsjoin.dbscan(X, eps, min_samples=4, metric_params={"p": 1})
    manhattan = epsjoin.DBSCAN(eps, min_samples=4, metric="manhattan").fit(X)
    np.testing.assert_array_equal(labels1, manhattan.labels_)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        epsjoin.DBSCAN(eps, metric="minkowski", metric_params={"p": 1}).fit(X)


def sklearn_neighbors(metric, p, radius):
    # Exact distances where it can: kd_tree (ball_tree drops chebyshev ties at exactly radius in
    # scikit-learn 1.9), ball_tree for haversine, brute for cosine.
    tree = {"cosine": "brute", "haversine": "ball_tree"}.get(metric, "kd_tree")
    return NearestNeighbors(radius=radius, metric=metric, p=2 if p is None else p,
                            algorithm=tree)


def assert_same_rows(ours, theirs, sort_results, rtol):
    (dist, ind), (sk_dist, sk_ind) = ours, theirs
    assert len(ind) == len(sk_ind)
    for i in range(len(ind)):
        assert ind[i].dtype == np.int64
        mine = dict(zip(ind[i].tolist(), dist[i].tolist()))
        want = dict(zip(sk_ind[i].tolist(), sk_dist[i].tolist()))
        assert mine.keys() == want.keys(), i
        np.testing.assert_allclose([mine[j] for j in want], list(want.values()), rtol=rtol,
                                   atol=1e-12)
        if sort_results:
            assert np.all(np.diff(dist[i]) >= 0), i


@pytest.mark.parametrize("metric,p", METRICS)
@pytest.mark.parametrize("sort_results", [False, True])
def test_radius_neighbors_equal_sklearn(rng, metric, p, sort_results):
    rtol = 1e-6 if metric == "cosine" else 1e-12
    for n, d in SHAPES[:3]:
        if metric == "haversine" and d != 2:
            continue
        X = points(rng, n, d, metric)
        Q = points(rng, 50, d, metric)
        D = distances(np.vstack([X, Q]), metric, p)
        radius = clear_eps(D, float(np.quantile(D[D > 0], 10 / n)), 1e-7)
        ours = epsjoin.RadiusNeighbors(radius=radius, metric=metric, p=2 if p is None else p)
        theirs = sklearn_neighbors(metric, p, radius)
        ours.fit(X)
        theirs.fit(X)
        for queries in (None, Q):
            assert_same_rows(ours.radius_neighbors(queries, sort_results=sort_results),
                             theirs.radius_neighbors(queries, sort_results=sort_results),
                             sort_results, rtol)
            for mode in ("connectivity", "distance"):
                a = ours.radius_neighbors_graph(queries, mode=mode, sort_results=sort_results)
                b = theirs.radius_neighbors_graph(queries, mode=mode, sort_results=sort_results)
                assert a.shape == b.shape and a.indices.dtype == b.indices.dtype
                a.sort_indices()
                b.sort_indices()
                np.testing.assert_array_equal(a.indptr, b.indptr)
                np.testing.assert_array_equal(a.indices, b.indices)
                np.testing.assert_allclose(a.data, b.data, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("metric,p", [("euclidean", None), ("manhattan", None),
                                      ("chebyshev", None)])
def test_radius_neighbors_ties_on_a_lattice(metric, p):
    X = lattice(7, 3)
    ours = epsjoin.RadiusNeighbors(radius=1.0, metric=metric).fit(X)
    theirs = sklearn_neighbors(metric, p, 1.0).fit(X)
    for queries in (None, X[::5] + 0.0):
        for radius in (None, 2.0):
            assert_same_rows(ours.radius_neighbors(queries, radius, sort_results=True),
                             theirs.radius_neighbors(queries, radius, sort_results=True),
                             True, 1e-15)


def test_radius_neighbors_arguments():
    X = lattice(4, 2)
    est = epsjoin.RadiusNeighbors(radius=1.0).fit(X)
    with pytest.raises(ValueError, match="return_distance must be True"):
        est.radius_neighbors(X, return_distance=False, sort_results=True)
    with pytest.raises(ValueError, match="Unsupported mode"):
        est.radius_neighbors_graph(X, mode="weights")
    ind = est.radius_neighbors(return_distance=False)
    assert ind.dtype == object and len(ind) == len(X)
    assert sorted(ind[0].tolist()) == [1, 4]


needs_gpu = skip_without_gpu()


@needs_gpu
@pytest.mark.parametrize("metric,p", [("euclidean", None), ("manhattan", None), ("cosine", None)])
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_dbscan_equal_sklearn(rng, metric, p, weighted):
    X = points(rng, 3000, 3, metric)
    D = distances(X, metric, p)
    eps = clear_eps(D, float(np.quantile(D[D > 0], 10 / len(X))), 1e-7)
    weights = rng.integers(-2, 12, len(X)) / 4 if weighted else None
    check_dbscan(X, eps, 5, metric, p, weights, D, engine="lbjoin")


@needs_gpu
def test_gpu_radius_neighbors_equal_sklearn(rng):
    X = points(rng, 2000, 3, "euclidean")
    Q = points(rng, 300, 3, "euclidean")
    D = distances(np.vstack([X, Q]), "euclidean", None)
    radius = clear_eps(D, 0.05, 1e-9)
    ours = epsjoin.RadiusNeighbors(radius=radius, engine="lbjoin").fit(X)
    theirs = sklearn_neighbors("euclidean", None, radius).fit(X)
    for queries in (None, Q):
        assert_same_rows(ours.radius_neighbors(queries, sort_results=True),
                         theirs.radius_neighbors(queries, sort_results=True), True, 1e-12)
    cupy = pytest.importorskip("cupy")
    on_device = epsjoin.RadiusNeighbors(radius=radius).fit(cupy.asarray(X))
    graph = on_device.radius_neighbors_graph(cupy.asarray(Q), mode="distance").get()
    want = theirs.radius_neighbors_graph(Q, mode="distance")
    graph.sort_indices()
    want.sort_indices()
    np.testing.assert_array_equal(graph.indices, want.indices)
    np.testing.assert_allclose(graph.data, want.data, rtol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "haversine", "manhattan"])
def test_prefix_queries_of_the_fitted_points(rng, metric):
    # X[:k] starts where X does: the library took such queries for the data itself and read the
    # data's terms past the queries' end (cosine, haversine, periodic boxes).
    X = make_blobs_like(rng, metric)
    radius = 0.3
    ours = epsjoin.RadiusNeighbors(radius=radius, metric=metric).fit(X)
    theirs = sklearn_neighbors(metric, None, radius).fit(X)
    for engine in ["brute-cpu", "cpu-grid", "super-ego"]:
        ours.set_params(engine=engine)
        assert_same_rows(ours.radius_neighbors(X[:7]), theirs.radius_neighbors(X[:7]), False,
                         1e-6)
    box = 1.5
    Y = rng.random((200, 2)) * box
    got = epsjoin.neighbor_graph(Y[:9], 0.3, Y, boxsize=box, mode="distance")
    want = epsjoin.neighbor_graph(Y[:9].copy(), 0.3, Y, boxsize=box, mode="distance")
    got.sort_indices()
    want.sort_indices()
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def make_blobs_like(rng, metric):
    # Centred blobs: vectors of every direction, which the cosine radius 0.3 cuts through.
    X = rng.standard_normal((150, 2)) + rng.standard_normal((4, 2))[rng.integers(0, 4, 150)] * 3
    return np.column_stack([np.tanh(X[:, 0]), X[:, 1] % np.pi]) if metric == "haversine" else X
