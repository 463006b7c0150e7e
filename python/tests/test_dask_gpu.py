"""epsjoin.dask on CuPy chunks (dask-cuda's arrays): the points stay on their device from chunk
to slab, each slab is joined there by a GPU engine, and counts, pairs and DBSCAN's labels equal
the one-node host functions' on the shapes test_dask.py checks (ties at exactly eps and
duplicates included); with dask-cuda, on a LocalCUDACluster of one worker a GPU. Skipped
without CuPy, a CUDA build and a device, unless EPSJOIN_REQUIRE_GPU=1 (a failure then)."""

import numpy as np
import pytest

import epsjoin
from conftest import dask_cases, eps_for, skip_without_gpu, sorted_pairs

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")
pytest.importorskip("pandas")
import epsjoin.dask as ejd  # noqa: E402


pytestmark = skip_without_gpu("cupy")


def _on_device(X, chunks):
    import cupy

    return da.from_array(cupy.asarray(X), chunks=(chunks, -1), asarray=False)


def test_a_chunk_is_routed_to_its_slabs_on_its_device(rng):
    import cupy

    X = rng.random((2000, 2))
    plan = epsjoin.plan_slabs(X, 0.05, 3)
    pieces = ejd._route(cupy.asarray(X), 100, plan)
    host = ejd._route(X, 100, plan)
    for (ids, points, own), (want_ids, want_points, want_own) in zip(pieces, host):
        assert isinstance(points, cupy.ndarray)
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(cupy.asnumpy(points), want_points)
        np.testing.assert_array_equal(own, want_own)


@pytest.mark.parametrize("chunks,slabs", [(700, None), (1000, 3), (5000, 1)])
def test_counts_pairs_and_labels_equal_the_one_node_functions(chunks, slabs, rng):
    for name, (X, eps) in dask_cases(rng).items():
        eps = eps if eps is not None else eps_for(X, 10, rng)
        D = _on_device(X, chunks)
        for include_self in (False, True):
            rows = ejd.count(D, eps, per_row=True, include_self=include_self, n_slabs=slabs)
            np.testing.assert_array_equal(
                rows.compute(scheduler="sync"),
                epsjoin.count(X, eps, per_row=True, include_self=include_self), err_msg=name)
            got = ejd.pairs(D, eps, include_self=include_self, n_slabs=slabs).compute(
                scheduler="sync")
            want = epsjoin.pairs(X, eps, include_self=include_self, sort=True)
            np.testing.assert_array_equal(sorted_pairs(got), want, err_msg=name)
        for min_samples in (1, 5):
            want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X).labels_
            got = ejd.dbscan(D, eps, min_samples, n_slabs=slabs).compute(scheduler="sync")
            np.testing.assert_array_equal(got, want, err_msg=f"{name}, {min_samples}")


def test_distances_blocks_weights_and_the_items_split(rng):
    X = rng.random((3000, 3))
    eps = eps_for(X, 12, rng)
    D = _on_device(X, 800)
    frame = ejd.pairs(D, eps, return_distance=True, block_pairs=500, n_slabs=3).compute(
        scheduler="sync")
    np.testing.assert_array_equal(sorted_pairs(frame), epsjoin.pairs(X, eps, sort=True))
    graph = epsjoin.neighbor_graph(X, eps, mode="distance")
    i, j = frame["i"].to_numpy(), frame["j"].to_numpy()
    np.testing.assert_array_equal(frame["distance"].to_numpy(), np.asarray(graph[i, j]).ravel())
    weights = rng.integers(-1, 4, X.shape[0]).astype(np.float64)
    got = ejd.dbscan(D, eps, 6, sample_weight=weights, n_slabs=4).compute(scheduler="sync")
    np.testing.assert_array_equal(
        got, epsjoin.DBSCAN(eps=eps, min_samples=6).fit(X, sample_weight=weights).labels_)
    high = rng.random((1500, 12))
    eps = eps_for(high, 20, rng)
    counts = ejd.count(_on_device(high, 400), eps, per_row=True, split="items")
    np.testing.assert_array_equal(counts.compute(scheduler="sync"),
                                  epsjoin.count(high, eps, per_row=True))


def test_on_a_local_cuda_cluster(rng):
    dask_cuda = pytest.importorskip("dask_cuda")
    from distributed import Client

    X = rng.random((40_000, 2))
    eps = eps_for(X, 16, rng)
    gpus = len(epsjoin.build_info()["cuda_devices"])
    with dask_cuda.LocalCUDACluster(n_workers=min(2, gpus), threads_per_worker=1,
                                    dashboard_address=None) as cluster, Client(cluster) as client:
        D = client.persist(_on_device(X, 5000))
        rows = client.compute(ejd.count(D, eps, per_row=True, n_slabs=min(2, gpus) * 2))
        np.testing.assert_array_equal(rows.result(), epsjoin.count(X, eps, per_row=True))
        labels = client.compute(ejd.dbscan(D, eps, 10)).result()
        np.testing.assert_array_equal(labels, epsjoin.DBSCAN(eps=eps, min_samples=10)
                                      .fit(X).labels_)
