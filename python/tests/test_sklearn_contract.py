"""The scikit-learn estimator contract, checked by scikit-learn's own estimator checks (run from
the installed scikit-learn, never copied), and the estimators in scikit-learn's machinery:
GridSearchCV, clone, tags, HTML display, pipelines into scikit-learn's DBSCAN, OPTICS, Isomap and
TSNE, the sparse interface."""

import pickle

import numpy as np
import pytest
import scipy.sparse

sklearn = pytest.importorskip("sklearn")
from sklearn import neighbors as sk_neighbors  # noqa: E402
from sklearn.base import clone, is_clusterer  # noqa: E402
from sklearn.cluster import DBSCAN as SkDBSCAN  # noqa: E402
from sklearn.cluster import OPTICS  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from sklearn.manifold import TSNE, Isomap  # noqa: E402
from sklearn.metrics import adjusted_rand_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import epsjoin  # noqa: E402

ESTIMATORS = [epsjoin.DBSCAN(), epsjoin.DBSCAN(metric="precomputed"), epsjoin.OPTICS(),
              epsjoin.RadiusNeighbors(),
              epsjoin.RadiusNeighborsTransformer()]

# Checks that cannot apply, each with its reason; everything else must pass. Only DBSCAN on
# precomputed distances has any: these checks hand it feature vectors (50 x 2, with negative
# values) where a square matrix of distances is required, and scikit-learn's own
# DBSCAN(metric="precomputed") fails the same three.
_NOT_DISTANCES = ("fits feature vectors (50 x 2, negative values) where precomputed distances "
                  "must be square and non-negative; sklearn's DBSCAN(metric='precomputed') "
                  "fails it too")
EXPECTED_FAILED_PRECOMPUTED = {
    "check_clustering": _NOT_DISTANCES,
    "check_positive_only_tag_during_fit": _NOT_DISTANCES,
}


def expected_failed_checks(estimator):
    if getattr(estimator, "metric", None) == "precomputed":
        return EXPECTED_FAILED_PRECOMPUTED
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def blobs(rng_seed=0, n=300):
    return make_blobs(n_samples=n, centers=4, cluster_std=0.5, random_state=rng_seed)


def test_grid_search_over_eps():
    X, y = blobs()

    def score(estimator, X, y):
        return adjusted_rand_score(y, estimator.fit_predict(X))

    search = GridSearchCV(epsjoin.DBSCAN(min_samples=4), {"eps": [0.05, 0.4, 0.8]},
                          scoring=score, cv=3).fit(X, y)
    assert search.best_params_["eps"] in (0.4, 0.8)
    assert search.best_score_ > 0.9


def test_estimator_protocol():
    est = epsjoin.DBSCAN(eps=0.7, metric="manhattan")
    assert is_clusterer(est)
    assert clone(est).get_params() == est.get_params()
    assert "DBSCAN" in est._repr_html_()
    assert "RadiusNeighborsTransformer" in make_pipeline(
        epsjoin.RadiusNeighborsTransformer(radius=0.5), SkDBSCAN(metric="precomputed")
    )._repr_html_()
    assert repr(est) == "DBSCAN(eps=0.7, metric='manhattan')"
    tags = epsjoin.DBSCAN(metric="precomputed").__sklearn_tags__()
    assert tags.input_tags.pairwise and tags.input_tags.sparse
    assert epsjoin.RadiusNeighborsTransformer().__sklearn_tags__().transformer_tags is not None
    X, _ = blobs()
    fitted = epsjoin.DBSCAN(eps=0.5).fit(X)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.labels_, fitted.labels_)


@pytest.mark.parametrize("metric,p,message", [
    ("minkowski", 3, "p = 1, 2 and inf"),
    ("mahalanobis", None, "metric must be one of"),
])
def test_metrics_epsjoin_does_not_compute(metric, p, message):
    X, _ = blobs()
    with pytest.raises(ValueError, match=message):
        epsjoin.DBSCAN(metric=metric, p=p).fit(X)
    with pytest.raises(ValueError, match=message):
        epsjoin.RadiusNeighbors(metric=metric, p=p or 2).fit(X)


def test_radius_neighbors_refuses_a_callable():
    # DBSCAN calls a callable per pair (test_sklearn_equal.py); the neighbours' estimator,
    # whose point is the engines' speed, refuses one.
    with pytest.raises(ValueError, match="callable"):
        epsjoin.RadiusNeighbors(metric=lambda a, b: 0.0).fit(blobs()[0])


def test_search_parameters_checked():
    X, _ = blobs()
    for bad in [{"algorithm": "octree"}, {"leaf_size": 0}]:
        with pytest.raises(ValueError, match=next(iter(bad))):
            epsjoin.DBSCAN(**bad).fit(X)
        with pytest.raises(ValueError, match=next(iter(bad))):
            epsjoin.RadiusNeighbors(**bad).fit(X)
    # Accepted values change nothing.
    base = epsjoin.DBSCAN(eps=0.4).fit(X).labels_
    for algorithm in ["auto", "ball_tree", "kd_tree", "brute"]:
        got = epsjoin.DBSCAN(eps=0.4, algorithm=algorithm, leaf_size=5, n_jobs=1).fit(X).labels_
        np.testing.assert_array_equal(got, base)


def same_graphs(a, b):
    a, b = scipy.sparse.csr_matrix(a), scipy.sparse.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=1e-12, atol=1e-15)


def pipelines_agree(step, X):
    """`step` fed by epsjoin's transformer and by scikit-learn's gives the same result."""
    radius = 0.9
    ours = make_pipeline(epsjoin.RadiusNeighborsTransformer(radius=radius), clone(step))
    theirs = make_pipeline(sk_neighbors.RadiusNeighborsTransformer(radius=radius,
                                                                   algorithm="kd_tree"),
                           clone(step))
    method = "fit_transform" if hasattr(step, "fit_transform") else "fit_predict"
    return getattr(ours, method)(X), getattr(theirs, method)(X)


def test_pipeline_into_sklearn_dbscan_and_optics():
    X, _ = blobs(n=200)
    ours, theirs = pipelines_agree(SkDBSCAN(eps=0.4, min_samples=4, metric="precomputed"), X)
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, SkDBSCAN(eps=0.4, min_samples=4).fit_predict(X))
    ours, theirs = pipelines_agree(OPTICS(min_samples=5, max_eps=0.9, metric="precomputed"), X)
    np.testing.assert_array_equal(ours, theirs)


def test_pipeline_into_isomap_and_tsne():
    X, _ = make_blobs(n_samples=120, centers=1, cluster_std=0.3, random_state=3)
    ours, theirs = pipelines_agree(Isomap(radius=0.9, n_neighbors=None, metric="precomputed",
                                          n_components=2), X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)
    ours, theirs = pipelines_agree(TSNE(metric="precomputed", init="random", perplexity=5,
                                        max_iter=250, random_state=0), X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("interface", ["spmatrix", "sparray"])
def test_sparse_interface(interface):
    X, _ = blobs(n=100)
    with sklearn.config_context(sparse_interface=interface):
        ours = epsjoin.RadiusNeighbors(radius=0.5).fit(X)
        theirs = sk_neighbors.NearestNeighbors(radius=0.5).fit(X)
        for mode in ["connectivity", "distance"]:
            a = ours.radius_neighbors_graph(mode=mode)
            b = theirs.radius_neighbors_graph(mode=mode)
            assert type(a) is type(b), (type(a), type(b))
            assert a.indices.dtype == b.indices.dtype and a.indptr.dtype == b.indptr.dtype
            assert a.dtype == b.dtype
            same_graphs(a, b)
        a = epsjoin.RadiusNeighborsTransformer(radius=0.5).fit_transform(X)
        b = sk_neighbors.RadiusNeighborsTransformer(radius=0.5).fit_transform(X)
        assert type(a) is type(b)
        same_graphs(a, b)


def test_float32_kept():
    # float32 points give float32 distances, whatever the metric (scikit-learn 1.9 gives float32
    # for cosine and float64 for euclidean); indices are int64 as scikit-learn's.
    X = blobs(n=150)[0].astype(np.float32)
    for metric in ["euclidean", "cosine", "manhattan"]:
        ours = epsjoin.RadiusNeighbors(radius=0.5, metric=metric).fit(X)
        theirs = sk_neighbors.NearestNeighbors(radius=0.5, metric=metric).fit(X)
        dist, ind = ours.radius_neighbors(X[:10])
        sk_dist, sk_ind = theirs.radius_neighbors(X[:10])
        assert dist[0].dtype == np.float32
        assert ind[0].dtype == sk_ind[0].dtype == np.int64
        for i in range(10):
            np.testing.assert_allclose(np.sort(dist[i]), np.sort(sk_dist[i]), rtol=1e-5,
                                       atol=1e-6)
        graph = ours.radius_neighbors_graph(X[:10], mode="distance")
        assert graph.dtype == np.float32 and graph.indices.dtype == np.int64
        assert ours.radius_neighbors_graph(X[:10]).dtype == np.float64  # ones, as scikit-learn's
    fitted = epsjoin.DBSCAN(eps=0.5).fit(X)
    assert fitted.components_.dtype == np.float32
