"""epsjoin.DBSCAN against scikit-learn's DBSCAN: core samples, noise and clusters identical."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import epsjoin
from conftest import CPU_ENGINES, eps_for, lattice

sklearn_cluster = pytest.importorskip("sklearn.cluster")


def sklearn_dbscan(X, eps, min_samples):
    # The k-d tree computes exact float64 distances and compares squares with eps**2, as
    # epsjoin does; the brute-force path (which "auto" may take) rounds in the last bits.
    return sklearn_cluster.DBSCAN(eps=eps, min_samples=min_samples, algorithm="kd_tree").fit(X)


def assert_same_clustering(got, X, eps, min_samples):
    want = sklearn_dbscan(X, eps, min_samples)
    labels = got.labels_
    assert labels.dtype == np.int64 and labels.shape == (len(X),)
    assert got.core_sample_indices_.dtype == np.int64
    np.testing.assert_array_equal(got.core_sample_indices_, want.core_sample_indices_)
    np.testing.assert_array_equal(got.components_, np.asarray(X)[want.core_sample_indices_])
    np.testing.assert_array_equal(labels == -1, want.labels_ == -1)
    # The clusters as partitions of the core samples: one-to-one between the two labelings.
    core = want.core_sample_indices_
    pairs = set(zip(labels[core].tolist(), want.labels_[core].tolist()))
    assert len(pairs) == len(set(labels[core].tolist())) == len(set(want.labels_[core].tolist()))
    assert len(set(labels.tolist()) - {-1}) == len(set(want.labels_.tolist()) - {-1})
    # Each border point lies within eps of a core sample of its own cluster.
    X64 = np.asarray(X, dtype=np.float64)
    is_core = np.zeros(len(X), dtype=bool)
    is_core[core] = True
    for i in np.flatnonzero(~is_core & (labels != -1)):
        mates = core[labels[core] == labels[i]]
        assert (((X64[mates] - X64[i]) ** 2).sum(axis=1) <= eps * eps).any(), i
    # Clusters numbered in the order of their first core point, as scikit-learn numbers them.
    seen = labels[core]
    _, first = np.unique(seen, return_index=True)
    np.testing.assert_array_equal(seen[np.sort(first)], np.arange(len(first)))
    return want


def clustered(rng, n, d):
    centres = rng.random((5, d)) * 10
    return centres[rng.integers(0, 5, n)] + rng.normal(scale=0.4, size=(n, d))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", ["uniform", "clustered"])
def test_same_clustering_as_sklearn(d, dtype, shape, rng):
    n = 400
    X = (rng.random((n, d)) if shape == "uniform" else clustered(rng, n, d)).astype(dtype)
    for neighbours, min_samples in ((3, 2), (8, 5), (20, 15)):
        eps = eps_for(X, neighbours, rng)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X)
        assert_same_clustering(got, X, eps, min_samples)


@pytest.mark.parametrize("d,side,radii", [(1, 60, (1, 2, 3)), (2, 15, (1, 2, 3)),
                                          (3, 7, (1, 2)), (4, 4, (1, 2))])
def test_ties_at_exactly_eps(d, side, radii, rng):
    # Integer points and radii: squared distances equal eps**2 exactly. Holes make noise and
    # borders, duplicates make dense spots.
    X = lattice(side, d)
    X = X[rng.random(len(X)) < 0.6]
    X = np.concatenate([X, X[rng.integers(0, len(X), len(X) // 5)]])
    for eps in radii:
        for min_samples in (2, 4, 2 * d + 2, 3 * d + 3):
            got = epsjoin.DBSCAN(eps=float(eps), min_samples=min_samples).fit(X)
            assert_same_clustering(got, X, eps, min_samples)


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_every_cpu_engine_gives_the_same_labels(engine, rng):
    X = clustered(rng, 600, 3)
    eps = eps_for(X, 10, rng)
    reference = epsjoin.DBSCAN(eps=eps, min_samples=6, engine="cpu-grid").fit(X)
    got = epsjoin.DBSCAN(eps=eps, min_samples=6, engine=engine, n_jobs=2).fit(X)
    assert got.stats_["engine"] == engine
    np.testing.assert_array_equal(got.labels_, reference.labels_)
    assert_same_clustering(got, X, eps, 6)


def test_small_and_degenerate_inputs():
    one = np.array([[0.5, 0.5]])
    np.testing.assert_array_equal(epsjoin.DBSCAN(eps=1.0, min_samples=1).fit_predict(one), [0])
    np.testing.assert_array_equal(epsjoin.DBSCAN(eps=1.0, min_samples=2).fit_predict(one), [-1])
    same = np.full((30, 3), 7.0)
    for min_samples in (1, 5, 30):
        got = epsjoin.DBSCAN(eps=0.1, min_samples=min_samples).fit(same)
        assert_same_clustering(got, same, 0.1, min_samples)
    got = epsjoin.DBSCAN(eps=0.1, min_samples=31).fit(same)
    assert (got.labels_ == -1).all() and got.core_sample_indices_.size == 0
    assert got.components_.shape == (0, 3)
    # min_samples 1: every point core, clusters the connected components.
    X = np.array([[0.0], [1.0], [2.5], [3.0], [10.0]])
    got = epsjoin.DBSCAN(eps=1.0, min_samples=1).fit(X)
    np.testing.assert_array_equal(got.labels_, [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(got.core_sample_indices_, np.arange(5))
    # eps large enough for one cluster.
    np.testing.assert_array_equal(epsjoin.DBSCAN(eps=100.0, min_samples=3).fit_predict(X), [0] * 5)


def test_estimator_interface(rng):
    X = clustered(rng, 300, 2)
    model = epsjoin.DBSCAN(eps=0.3, min_samples=4, n_jobs=1)
    np.testing.assert_array_equal(model.fit_predict(X), model.labels_)
    assert model.n_features_in_ == 2
    assert model.stats_["n_core"] == model.core_sample_indices_.size
    assert model.stats_["n_noise"] == (model.labels_ == -1).sum()
    assert model.stats_["n_clusters"] == model.labels_.max() + 1
    assert set(model.stats_["stages"]) == {"count", "merge", "label"}
    assert model.stats_["merge"] in ("cells", "host", "device")
    assert model.stats_["precision"] == "f64"
    assert epsjoin.DBSCAN(eps=0.3, precision="float32").fit(X).stats_["precision"] == "f32"
    assert model.get_params()["eps"] == 0.3 and model.get_params()["n_jobs"] == 1
    assert model.set_params(min_samples=9) is model and model.min_samples == 9
    with pytest.raises(ValueError, match="Invalid parameter"):
        model.set_params(leaf_sizes=30)
    assert repr(model) == "DBSCAN(eps=0.3, min_samples=9, n_jobs=1)"
    clone = pytest.importorskip("sklearn.base").clone(model)
    assert clone.get_params() == model.get_params() and not hasattr(clone, "labels_")
    # Weights of 1 are no weights (test_sklearn_equal.py compares others with scikit-learn's).
    weighted = clone.fit(X, sample_weight=np.ones(len(X))).labels_
    np.testing.assert_array_equal(weighted, model.fit(X).labels_)
    # Integer input is clustered as float64; float32 stays float32.
    model = epsjoin.DBSCAN(eps=1.5, min_samples=2)
    assert model.fit(lattice(4, 2).astype(int)).components_.dtype == np.float64
    assert model.fit(lattice(4, 2, np.float32)).components_.dtype == np.float32


@pytest.mark.parametrize("X,eps,min_samples", [
    (np.empty((0, 2)), 0.5, 5),
    (np.ones(4), 0.5, 5),
    (np.ones((2, 2, 2)), 0.5, 5),
    (np.array([[0.0, 1.0], [np.nan, 0.0]]), 0.5, 1),
    (np.array([[0.0, 1.0], [np.inf, 0.0]]), 0.5, 1),
    (np.array([["a", "b"], ["c", "d"]]), 0.5, 1),
    (np.ones((3, 2)), 0.0, 5),
    (np.ones((3, 2)), -1.0, 5),
    (np.ones((3, 2)), float("inf"), 5),
    (np.ones((3, 2)), 0.5, 0),
    (np.ones((3, 2)), 0.5, 2.5),
])
def test_refuses_what_sklearn_refuses(X, eps, min_samples):
    with pytest.raises(ValueError):
        sklearn_cluster.DBSCAN(eps=eps, min_samples=min_samples).fit(X)
    with pytest.raises(ValueError):
        epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X)


@pytest.mark.parametrize("X", [
    np.empty((0, 2)), np.ones(4), np.ones((2, 2, 2)), np.array([[0.0, 1.0], [np.nan, 0.0]]),
    np.array([[0.0, 1.0], [np.inf, 0.0]]), np.array([["a", "b"], ["c", "d"]]),
    np.array([[1 + 2j, 0], [0, 1]]), np.ones((3, 0)),
], ids=["empty", "1-D", "3-D", "nan", "inf", "strings", "complex", "no features"])
def test_bad_points_get_sklearns_message_word_for_word(X):
    with pytest.raises(ValueError) as theirs:
        sklearn_cluster.DBSCAN(eps=0.5, min_samples=1).fit(X)
    with pytest.raises(ValueError) as ours:
        epsjoin.DBSCAN(eps=0.5, min_samples=1).fit(X)
    assert str(ours.value) == str(theirs.value)


def test_memory_limit_and_unknown_params_raise(rng):
    X = rng.random((100_000, 2))
    with pytest.raises(MemoryError, match="DBSCAN"):
        epsjoin.DBSCAN(eps=0.01, min_samples=3, memory_limit="1M", engine="cpu-grid").fit(X)
    with pytest.raises(ValueError):
        epsjoin.DBSCAN(eps=0.01, engine="cpu-grid", params={"no-such-key": 1}).fit(X[:100])


def test_the_gil_is_released_during_dbscan(rng):
    X = rng.random((5000, 64))
    done = threading.Event()

    def cluster():
        epsjoin.DBSCAN(eps=0.5, min_samples=3, engine="brute-cpu", n_jobs=1).fit(X)
        done.set()

    worker = threading.Thread(target=cluster)
    worker.start()
    time.sleep(0.05)
    # Python code runs here while the joins go on, which a held GIL would not let it.
    sum(range(200_000))
    ran_during_fit = not done.is_set()
    worker.join()
    assert ran_during_fit


def test_ctrl_c_stops_dbscan(rng, sigint_raises):
    X = rng.random((14_000, 64))  # brute force on one thread: seconds
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    returned = False
    with pytest.raises(KeyboardInterrupt):
        epsjoin.DBSCAN(eps=0.5, min_samples=3, engine="brute-cpu", n_jobs=1).fit(X)
        returned = True
        time.sleep(5)  # it ended before the signal came: fail below, not hang
    assert not returned, "DBSCAN ended before Ctrl-C: the test needs a slower run"
    assert time.perf_counter() - start < 1.5


def test_docstring_example_runs():
    import doctest

    import epsjoin._dbscan

    assert doctest.testmod(epsjoin._dbscan).failed == 0
