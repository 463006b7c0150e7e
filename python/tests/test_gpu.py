"""Every GPU engine against the CPU oracle, from numpy inputs, and from CuPy arrays and CUDA
tensors (joined on the device: no point uploaded, results on the device). Skipped without a CUDA
build and a device, unless EPSJOIN_REQUIRE_GPU=1 (as scripts/device-check.sh and
scripts/device-python.sh set), which makes that a failure. On the GPU machine:
EPSJOIN_CUDA=AUTO scripts/setup-python.sh, then pytest here; or scripts/device-python.sh with a
wheel built elsewhere."""


import numpy as np
import pytest

import epsjoin
from conftest import (GPU_ENGINES, assert_same_csr, eps_for, gpu_missing, lattice, oracle_pairs,
                      oracle_table, refusal)


_MISSING = gpu_missing()
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "GPU present")

SHAPES = [(1, 2), (700, 2), (900, 3), (600, 8), (400, 16), (300, 64), (20_000, 2)]


@pytest.mark.parametrize("engine", GPU_ENGINES)
@pytest.mark.parametrize("n,d", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_engine_equals_the_oracle(engine, n, d, dtype, rng):
    X = rng.exponential(1 / 40, (n, d)).astype(dtype)
    eps = eps_for(X, 8, rng)
    indptr, indices, dist = oracle_table(X, eps)
    assert_same_csr(epsjoin.neighbor_graph(X, eps, mode="distance", engine=engine), indptr,
                    indices, dist)
    np.testing.assert_array_equal(epsjoin.pairs(X, eps, engine=engine, sort=True),
                                  oracle_pairs(X, eps))
    np.testing.assert_array_equal(epsjoin.count(X, eps, per_row=True, engine=engine),
                                  np.diff(indptr))


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_gpu_engine_ties_and_a_join_b(engine, rng):
    X = lattice(20, 3)
    for eps in (1.0, 2.0):
        indptr, indices, _ = oracle_table(X, eps)
        assert_same_csr(epsjoin.neighbor_graph(X, eps, engine=engine), indptr, indices)
    A, B = rng.random((500, 4)), rng.random((800, 4))
    eps = eps_for(np.vstack([A, B]), 8, rng)
    indptr, indices, dist = oracle_table(A, eps, B)
    assert_same_csr(epsjoin.neighbor_graph(A, eps, B, mode="distance", engine=engine), indptr,
                    indices, dist)


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_gpu_engine_stats_name_it(engine, rng):
    X = rng.random((2000, 2))
    _, stats = epsjoin.count(X, 0.02, engine=engine, return_stats=True)
    assert stats["engine"] == engine and stats["seconds"] > 0


@pytest.mark.parametrize("engine", GPU_ENGINES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_engine_dbscan_labels_equal_the_cpus(engine, dtype, rng):
    # Border points go to the core neighbour of smallest index on every engine, so the labels
    # themselves must agree, not only the partition (test_dbscan.py checks cpu-grid against
    # scikit-learn).
    X = rng.exponential(1 / 40, (20_000, 2)).astype(dtype)
    for neighbours, min_samples in ((8, 5), (40, 30)):
        eps = eps_for(X, neighbours, rng)
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine="cpu-grid").fit(X)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine=engine).fit(X)
        assert got.stats_["engine"] == engine
        np.testing.assert_array_equal(got.labels_, want.labels_)
        np.testing.assert_array_equal(got.core_sample_indices_, want.core_sample_indices_)
    lattice_points = lattice(20, 3)
    for eps, min_samples in ((1.0, 7), (2.0, 20)):
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine="cpu-grid")
        want.fit(lattice_points)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine=engine).fit(lattice_points)
        np.testing.assert_array_equal(got.labels_, want.labels_)


# ---- Points already on the device: CuPy arrays and CUDA tensors -------------------------------

#: Engines that read device points (hegjoin's CPU workers read them on the host: refused).
DEVICE_ENGINES = [e["name"] for e in epsjoin.engines() if e["processor"] in ("gpu", "tensor")]
#: Engines that deliver through the host: their table is uploaded (h2d_result_bytes > 0).
HOST_DELIVERY = {"gpu-sj", "brute-gpu"}


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.zeros(1)
    except Exception as e:  # CuPy without a usable device
        pytest.skip(f"no CUDA device for CuPy: {e}")
    return cupy


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    return torch


def _to_device(framework, X):
    if framework == "cupy":
        return _cupy().asarray(X)
    # Not np.ascontiguousarray, which makes a 0-D array 1-D.
    return _torch().from_numpy(np.asarray(X, order="C")).to("cuda")


def _host_csr(graph):
    """A device graph (cupyx or torch sparse CSR) as a scipy matrix, checking where it lies."""
    import scipy.sparse

    if hasattr(graph, "crow_indices"):
        assert graph.is_cuda and graph.layout == _torch().sparse_csr
        return scipy.sparse.csr_matrix(
            (graph.values().cpu().numpy(), graph.col_indices().cpu().numpy(),
             graph.crow_indices().cpu().numpy()), shape=tuple(graph.shape))
    import cupyx.scipy.sparse

    assert isinstance(graph, cupyx.scipy.sparse.csr_matrix)
    return graph.get()


def _host(array):
    if hasattr(array, "is_cuda"):
        assert array.is_cuda
        return array.cpu().numpy()
    assert isinstance(array, _cupy().ndarray)
    return array.get()


def _no_point_upload(stats, engine, nonempty=True):
    assert stats["engine"] == engine
    assert stats["h2d_point_bytes"] == 0, stats
    if engine not in HOST_DELIVERY and nonempty:
        assert stats["h2d_result_bytes"] == 0, stats


DEVICE_SHAPES = [(0, 3), (1, 2), (700, 2), (600, 8), (300, 64), (20_000, 3)]


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("engine", DEVICE_ENGINES)
@pytest.mark.parametrize("n,d", DEVICE_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_points_equal_the_oracle(framework, engine, n, d, dtype, rng):
    X = rng.exponential(1 / 40, (n, d)).astype(dtype)
    eps = eps_for(X, 8, rng)
    indptr, indices, dist = oracle_table(X, eps)
    Xd = _to_device(framework, X)
    graph, stats = epsjoin.neighbor_graph(Xd, eps, mode="distance", engine=engine,
                                          return_stats=True)
    assert_same_csr(_host_csr(graph), indptr, indices, dist)
    _no_point_upload(stats, engine, nonempty=n > 0)
    got_pairs, stats = epsjoin.pairs(Xd, eps, engine=engine, sort=True, return_stats=True)
    np.testing.assert_array_equal(_host(got_pairs), oracle_pairs(X, eps))
    _no_point_upload(stats, engine, nonempty=n > 0)
    counts, stats = epsjoin.count(Xd, eps, per_row=True, engine=engine, return_stats=True)
    np.testing.assert_array_equal(_host(counts), np.diff(indptr))
    assert stats["h2d_point_bytes"] == 0
    assert epsjoin.count(Xd, eps, engine=engine) == indptr[-1]


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("engine", DEVICE_ENGINES)
def test_device_points_ties_self_pairs_and_a_join_b(framework, engine, rng):
    X = lattice(12, 3)
    Xd = _to_device(framework, X)
    for eps in (1.0, 2.0):
        for include_self in (False, True):
            indptr, indices, _ = oracle_table(X, eps, include_self=include_self)
            got, stats = epsjoin.neighbor_graph(Xd, eps, include_self=include_self,
                                                sort_indices=True, engine=engine,
                                                return_stats=True)
            assert_same_csr(_host_csr(got), indptr, indices)
            _no_point_upload(stats, engine)
            table_indptr, table_indices = epsjoin.neighbor_table(
                Xd, eps, include_self=include_self, sort_indices=True, engine=engine)
            np.testing.assert_array_equal(_host(table_indptr), indptr)
            np.testing.assert_array_equal(_host(table_indices), indices)
            # Pairs cut from the device table: i <= j with self pairs, i < j without, in
            # lexicographic order when sorted, the same set in any order otherwise.
            rows = np.repeat(np.arange(len(X)), np.diff(indptr))
            kept = indices >= rows if include_self else indices > rows
            want = np.stack([rows[kept], indices[kept]], axis=1)
            for sort in (True, False):
                got_pairs = _host(epsjoin.pairs(Xd, eps, include_self=include_self, sort=sort,
                                                engine=engine))
                if not sort:
                    got_pairs = got_pairs[np.lexsort((got_pairs[:, 1], got_pairs[:, 0]))]
                np.testing.assert_array_equal(got_pairs, want)
            # Distances sorted with their neighbours, on the device.
            indptr, indices, dist = oracle_table(X, eps, include_self=include_self)
            got = epsjoin.neighbor_graph(Xd, eps, include_self=include_self, mode="distance",
                                         sort_indices=True, engine=engine)
            assert _host_csr(got).has_sorted_indices
            assert_same_csr(_host_csr(got), indptr, indices, dist)
    A, B = rng.random((500, 4)), rng.random((800, 4)).astype(np.float32)
    eps = eps_for(np.vstack([A, B]), 8, rng)
    # float32 meets float64 as float64, converted on the device.
    indptr, indices, dist = oracle_table(A, eps, B.astype(np.float64))
    got, stats = epsjoin.neighbor_graph(_to_device(framework, A), eps, _to_device(framework, B),
                                        mode="distance", engine=engine, return_stats=True)
    assert_same_csr(_host_csr(got), indptr, indices, dist)
    _no_point_upload(stats, engine)
    np.testing.assert_array_equal(
        _host(epsjoin.pairs(_to_device(framework, A), eps, _to_device(framework, B),
                            engine=engine, sort=True)),
        oracle_pairs(A, eps, B.astype(np.float64)))


@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_device_radius_neighbors_graph_and_auto(framework, rng):
    X = rng.random((3000, 3))
    Xd = _to_device(framework, X)
    for mode in ("connectivity", "distance"):
        want = epsjoin.radius_neighbors_graph(X, 0.05, mode=mode, include_self="auto")
        got, stats = epsjoin.radius_neighbors_graph(Xd, 0.05, mode=mode, include_self="auto",
                                                    return_stats=True)
        got = _host_csr(got)
        got.sort_indices()
        want.sort_indices()
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
        # Few points, but they are on the device: auto takes a GPU engine, and no point moves.
        assert stats["engine"] in DEVICE_ENGINES and stats["h2d_point_bytes"] == 0


def test_device_inputs_are_checked_on_the_device(rng):
    cupy = _cupy()
    X = cupy.asarray(rng.random((50, 2)))
    X[7, 1] = cupy.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        epsjoin.neighbor_graph(X, 0.1)
    X[7, 1] = cupy.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        epsjoin.count(X, 0.1)
    with pytest.raises(ValueError, match="Expected 2D array"):
        epsjoin.pairs(cupy.zeros(5), 0.1)
    with pytest.raises(ValueError, match="both be on the host or both on a CUDA device"):
        epsjoin.count(cupy.zeros((5, 2)), 0.1, np.zeros((5, 2)))
    # The library checks device points itself (for C++ callers), on the device too.
    from epsjoin import _epsjoin, _validation

    bad = cupy.asarray(rng.random((30, 3)))
    bad[29, 2] = cupy.nan
    with pytest.raises(ValueError, match="point 29, dimension 2 is nan"):
        _epsjoin.device_neighbor_table(bad, None, 0.1, False, False, False,
                                       _validation.run_settings("lbjoin"))
    # Integers and Fortran order are converted once, on the device.
    L = lattice(8, 2).astype(np.int32)
    indptr, indices, _ = oracle_table(L, 1.0)
    assert_same_csr(epsjoin.neighbor_graph(cupy.asfortranarray(cupy.asarray(L)), 1.0).get(),
                    indptr, indices)


#: Bad inputs a device array can hold, in every form check_array's messages differ by.
BAD_ON_DEVICE = {
    "nan": np.array([[0.0, 1.0], [np.nan, 0.0]]),
    "nan-and-inf": np.array([[np.inf, 1.0], [np.nan, 0.0]], dtype=np.float32),
    "inf-float64": np.array([[0.0, 1.0], [-np.inf, 0.0]]),
    "inf-float32": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float32),
    "inf-float16": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float16),
    "1-D": np.zeros(5),
    "1-D-long": np.arange(2000.0),
    "1-D-int": np.arange(3, dtype=np.int32),
    "0-D": np.array(3.0),
    "3-D": np.zeros((2, 2, 2)),
    "0-features": np.zeros((4, 0)),
    "0-samples": np.empty((0, 3)),
    "complex": np.array([[1 + 2j, 3]]),
    "complex-1-D": np.array([1j, 2]),
}


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("kind", BAD_ON_DEVICE)
def test_device_refusals_are_sklearns_for_the_host_copy(framework, kind):
    from epsjoin import _device

    validation = pytest.importorskip("sklearn.utils.validation")
    Xd = _to_device(framework, BAD_ON_DEVICE[kind])
    host = _host(Xd)

    def sklearn_says(name="X", estimator=None):
        return refusal(lambda A: validation.check_array(A, input_name=name,
                                                         estimator=estimator), host)

    for estimator in (None, "DBSCAN", "NearestNeighbors"):  # the suffix and the NaN paragraph
        assert refusal(lambda A: _device.check_device_pair(A, None, min_samples=1,
                                                            estimator=estimator), Xd) == \
            sklearn_says(estimator=estimator)
    if kind == "0-samples":  # an empty result for the joins, as for host arrays
        return
    want = sklearn_says()
    assert want is not None, "scikit-learn accepts it: not a bad input"
    for join in (epsjoin.neighbor_graph, epsjoin.neighbor_table, epsjoin.pairs, epsjoin.count):
        assert refusal(lambda A: join(A, 0.1), Xd) == want
    width = host.shape[1] if host.ndim == 2 and host.shape[1] else 2  # X itself acceptable
    X = _to_device(framework, np.zeros((3, width)))
    assert refusal(lambda B: epsjoin.count(X, 0.1, B), Xd) == sklearn_says("Y")


def test_cpu_engines_refuse_device_points():
    cupy = _cupy()
    X = cupy.random.random((100, 2))
    for engine in [e["name"] for e in epsjoin.engines()
                   if e["processor"] not in ("gpu", "tensor") and e["available"]]:
        with pytest.raises(ValueError, match="reads its points on the host"):
            epsjoin.count(X, 0.1, engine=engine)


@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_device_points_refuse_other_metrics_and_boxes(framework, rng):
    X = _to_device(framework, rng.random((100, 2)))
    for kwargs in ({"metric": "manhattan"}, {"metric": "cosine"}, {"boxsize": 1.0}):
        with pytest.raises(ValueError, match="euclidean metric without boxsize"):
            epsjoin.neighbor_graph(X, 0.1, **kwargs)
        with pytest.raises(ValueError, match="euclidean metric without boxsize"):
            epsjoin.count(X, 0.1, **kwargs)
    with pytest.raises(ValueError, match="euclidean metric without boxsize"):
        epsjoin.radius_neighbors_graph(X, 0.1, metric="chebyshev")


#: The GPU engines whose DBSCAN merges on the device, where points already there are clustered.
DBSCAN_DEVICE_ENGINES = ["auto", "lbjoin", "gds-join", "ted-join", "meta-16q", "meta-1q"]


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("engine", DBSCAN_DEVICE_ENGINES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dbscan_of_device_points_equals_the_hosts(framework, engine, dtype, rng):
    # The labels themselves (border points to their smallest core neighbour), on the points'
    # device and of its kind, with no point uploaded; clustered data, 2-D to 16-D, ties.
    cases = [(rng.exponential(1 / 40, (5000, 2)).astype(dtype), 8, 5),
             (rng.normal(size=(3000, 16)).astype(dtype), 12, 10),
             (lattice(12, 3).astype(dtype), None, 7)]
    for X, neighbours, min_samples in cases:
        eps = 1.0 if neighbours is None else eps_for(X, neighbours, rng)
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine="cpu-grid").fit(X)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine=engine)
        labels = got.fit_predict(_to_device(framework, X))
        assert got.stats_["merge"] == "device", got.stats_
        assert got.stats_["notes"]["h2d_point_bytes"] == "0", got.stats_
        np.testing.assert_array_equal(_host(labels), want.labels_)
        np.testing.assert_array_equal(_host(got.core_sample_indices_), want.core_sample_indices_)
        np.testing.assert_array_equal(_host(got.components_), want.components_)
        assert got.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_gpu_engine_kneighbors_and_optics_equal_the_cpus(engine, rng):
    # Both take the engine's pairs through host sinks: the same rows and plot as cpu-grid's.
    X = np.concatenate([rng.random((2000, 2)), 0.5 + 0.01 * rng.standard_normal((1000, 2))])
    cpu = epsjoin.RadiusNeighbors(radius=0.03, n_neighbors=6, engine="cpu-grid").fit(X)
    gpu = epsjoin.RadiusNeighbors(radius=0.03, n_neighbors=6, engine=engine).fit(X)
    for queries in (None, X[:300] + 0.001):
        want, got = cpu.kneighbors(queries), gpu.kneighbors(queries)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
    want = epsjoin.OPTICS(min_samples=6, max_eps=0.05, engine="cpu-grid").fit(X)
    got = epsjoin.OPTICS(min_samples=6, max_eps=0.05, engine=engine).fit(X)
    assert got.stats_["engine"] == engine
    for name in ("ordering_", "reachability_", "core_distances_", "predecessor_", "labels_"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)


@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("engine", ["auto", "lbjoin", "gpu-sj"])
def test_weighted_dbscan_of_device_points(framework, engine, rng):
    # Weights (on the host or the device) take the host merge; the points stay on the device.
    X = rng.exponential(1 / 40, (4000, 2))
    eps = eps_for(X, 8, rng)
    w = rng.integers(-2, 12, len(X)) / 4
    want = epsjoin.DBSCAN(eps=eps, min_samples=5, engine="cpu-grid").fit(X, sample_weight=w)
    for weights in (w, _to_device(framework, w)):
        got = epsjoin.DBSCAN(eps=eps, min_samples=5, engine=engine)
        labels = got.fit_predict(_to_device(framework, X), sample_weight=weights)
        assert got.stats_["merge"] == "host", got.stats_
        np.testing.assert_array_equal(_host(labels), want.labels_)
    with pytest.raises(ValueError, match="Euclidean"):
        epsjoin.DBSCAN(eps=eps, metric="manhattan").fit(_to_device(framework, X))


@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_dbscan_of_device_points_refuses_what_cannot_merge_there(framework, rng):
    X = _to_device(framework, rng.random((500, 2)))
    refused = [e["name"] for e in epsjoin.engines()
               if e["available"] and e["name"] not in DBSCAN_DEVICE_ENGINES]
    assert "cpu-grid" in refused
    for engine in refused:
        with pytest.raises(ValueError, match="clustered on the device"):
            epsjoin.DBSCAN(eps=0.05, min_samples=4, engine=engine).fit(X)
    bad = rng.random((50, 2))
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.DBSCAN(eps=0.05).fit(_to_device(framework, bad))
