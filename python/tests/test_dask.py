"""epsjoin.dask: joins of slabs of a dask.array, each slab with its halo on its own task, equal
to the one-node functions (issue 47), on uniform and skewed points, lattice ties, duplicates,
several chunkings and slab counts, and on a distributed cluster of processes; pairs in blocks
of every size, each a partition of bounded size; DBSCAN's labels,
weighted or not, equal to epsjoin.DBSCAN's (border points between two clusters included); the
same results when a worker dies mid-join. The shared splits of high dimensions are in
test_dask_split.py."""

import os

import numpy as np
import pytest

import epsjoin
from conftest import bridged_clusters, dask_cases, eps_for, lattice, sorted_pairs

da = pytest.importorskip("dask.array")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
import epsjoin.dask as ejd  # noqa: E402

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("chunks,slabs", [(500, None), (1000, 2), (700, 5), (4000, 1)])
def test_pairs_and_counts_equal_the_one_node_functions(chunks, slabs, rng):
    for name, (X, eps) in dask_cases(rng).items():
        eps = eps if eps is not None else eps_for(X, 12, rng)
        D = da.from_array(X, chunks=(chunks, -1))
        for include_self in (False, True):
            got = ejd.pairs(D, eps, include_self=include_self, n_slabs=slabs).compute(
                scheduler="sync")
            want = epsjoin.pairs(X, eps, include_self=include_self, sort=True)
            np.testing.assert_array_equal(sorted_pairs(got), want, err_msg=name)
            rows = ejd.count(D, eps, per_row=True, include_self=include_self, n_slabs=slabs)
            np.testing.assert_array_equal(
                rows.compute(scheduler="sync"),
                epsjoin.count(X, eps, per_row=True, include_self=include_self), err_msg=name)
        assert int(ejd.count(D, eps, n_slabs=slabs).compute(scheduler="sync")) == \
            epsjoin.count(X, eps)


@pytest.mark.parametrize("chunks,slabs", [(600, None), (1000, 3), (400, 7), (5000, 1)])
def test_dbscan_labels_equal_the_one_node_estimators(chunks, slabs, rng):
    cases = {**dask_cases(rng), "bridged clusters": (bridged_clusters(2, rng), 0.25)}
    for name, (X, eps) in cases.items():
        eps = eps if eps is not None else eps_for(X, 8, rng)
        D = da.from_array(X, chunks=(chunks, -1))
        for min_samples in (1, 4, 9):
            want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X).labels_
            got = ejd.dbscan(D, eps, min_samples, n_slabs=slabs).compute(scheduler="sync")
            np.testing.assert_array_equal(got, want, err_msg=f"{name}, min_samples {min_samples}")


def test_distances_float32_and_a_dataframe(rng):
    X = rng.random((2000, 3)).astype(np.float32)
    eps = eps_for(X, 10, rng)
    got = ejd.pairs(da.from_array(X, chunks=(300, 3)), eps, return_distance=True,
                    n_slabs=4).compute(scheduler="sync")
    graph = epsjoin.neighbor_graph(X, eps, mode="distance")
    np.testing.assert_array_equal(got["distance"].to_numpy(),
                                  np.asarray(graph[got["i"].to_numpy(), got["j"].to_numpy()]).ravel())
    assert len(got) == graph.nnz // 2
    import dask.dataframe as dd
    import pandas as pd

    frame = dd.from_pandas(pd.DataFrame(X.astype(np.float64), columns=list("xyz")), npartitions=3)
    np.testing.assert_array_equal(sorted_pairs(ejd.pairs(frame, eps).compute(scheduler="sync")),
                                  epsjoin.pairs(X.astype(np.float64), eps, sort=True))


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
# dask's Parquet writer still passes pandas 3.1 an inplace keyword it deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_the_graph_and_parquet(mode, rng, tmp_path):
    X = rng.random((2500, 2))
    eps = eps_for(X, 10, rng)
    D = da.from_array(X, chunks=(600, 2))
    for include_self in (False, True):
        got = ejd.neighbor_graph(D, eps, mode=mode, include_self=include_self).compute(
            scheduler="sync")
        want = epsjoin.neighbor_graph(X, eps, mode=mode, include_self=include_self,
                                      sort_indices=True)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    pytest.importorskip("pyarrow")
    import dask.dataframe as dd

    ejd.pairs(D, eps, return_distance=True).to_parquet(tmp_path / "pairs",
                                                       compute_kwargs={"scheduler": "sync"})
    back = dd.read_parquet(tmp_path / "pairs").compute(scheduler="sync")
    np.testing.assert_array_equal(sorted_pairs(back), epsjoin.pairs(X, eps, sort=True))


def _block_cases(rng):
    """Small sets, as the smallest blocks make about one task a point."""
    dup = rng.random((250, 3))
    centres = rng.random((4, 2))
    return {
        "uniform-2d": (rng.random((500, 2)), None),
        "clustered-2d": (centres[rng.integers(0, 4, 500)] + rng.normal(0, 0.02, (500, 2)), None),
        "duplicates": (np.vstack([dup, dup[:100], dup[:30]]), None),
        "lattice ties": (lattice(18, 2), 1.0),
    }


def _sorted_with_distances(frame):
    order = np.lexsort((frame["j"].to_numpy(), frame["i"].to_numpy()))
    return (frame[["i", "j"]].to_numpy().astype(np.int64)[order].reshape(-1, 2),
            frame["distance"].to_numpy()[order])


@pytest.mark.parametrize("block_pairs", [1, 7, 60, None, 2**40])
def test_pairs_in_blocks_equal_the_one_node_pairs(block_pairs, rng):
    # Blocks from about one query point each (1) to one a slab (2**40, the slab's self-join):
    # each pair once, the distances those of one node's graph, ties at exactly eps included.
    for name, (X, eps) in _block_cases(rng).items():
        eps = eps if eps is not None else eps_for(X, 10, rng)
        D = da.from_array(X, chunks=(130, -1))
        graph = epsjoin.neighbor_graph(X, eps, mode="distance")
        for include_self in (False, True):
            want = epsjoin.pairs(X, eps, include_self=include_self, sort=True)
            frame = ejd.pairs(D, eps, include_self=include_self, return_distance=True, n_slabs=3,
                              block_pairs=block_pairs).compute(scheduler="sync")
            got, distances = _sorted_with_distances(frame)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}, {include_self}")
            off = got[:, 0] != got[:, 1]
            np.testing.assert_array_equal(
                distances[off], np.asarray(graph[got[off, 0], got[off, 1]]).ravel(), err_msg=name)
            assert not distances[~off].any(), name
            plain = ejd.pairs(D, eps, include_self=include_self, n_slabs=3,
                              block_pairs=block_pairs).compute(scheduler="sync")
            assert list(plain.columns) == ["i", "j"]
            np.testing.assert_array_equal(sorted_pairs(plain), want, err_msg=f"{name}, {include_self}")


def test_smaller_blocks_make_more_partitions_of_bounded_size(rng):
    # Every point is sampled here, so the estimate is exact: a block holds its share of the
    # slab's pairs, at most `block_pairs`, and the pairs of the point it was cut after.
    for X, eps in [(rng.random((3000, 2)), None), (lattice(40, 2), 1.0)]:
        eps = eps if eps is not None else eps_for(X, 20, rng)
        D = da.from_array(X, chunks=(1000, 2))
        total = len(epsjoin.pairs(X, eps))
        most = int(epsjoin.count(X, eps, per_row=True).max())
        counts = []
        for block_pairs in (2**40, total // 2, total // 8, total // 40, 10):
            frame = ejd.pairs(D, eps, n_slabs=2, block_pairs=block_pairs)
            sizes = frame.map_partitions(len).compute(scheduler="sync")
            assert sizes.sum() == total
            assert sizes.max() <= block_pairs + most, (block_pairs, most, sizes.max())
            counts.append(frame.npartitions)
        assert counts[0] == 2 and counts == sorted(counts) and counts[-1] > total // 20, counts


def test_blocks_cut_from_a_thin_sample(rng, monkeypatch):
    # A sample of 300 of 6,000 points (about one sampled neighbour each: the estimate counts at
    # a wider radius, as the planner does, and a sampled point stands for 20): the cuts follow
    # the sample's noise, never the result.
    planned = ejd._plan_on_sample
    monkeypatch.setattr(ejd, "_plan_on_sample",
                        lambda X, eps, n_slabs, sample_size=0: planned(X, eps, n_slabs, 300))
    X = np.vstack([rng.random((3000, 2)), rng.random((3000, 2)) * 0.1])
    eps = eps_for(X, 20, rng)
    D = da.from_array(X, chunks=(2000, 2))
    want = epsjoin.pairs(X, eps, sort=True)
    for include_self in (False, True):
        frame = ejd.pairs(D, eps, include_self=include_self, n_slabs=3,
                          block_pairs=len(want) // 20)
        parts = frame.to_delayed()
        assert len(parts) > 3 * 4
        sizes = [len(p.compute(scheduler="sync")) for p in parts]
        # Each block's estimate rests on about 15 sampled points here.
        assert max(sizes) <= 3 * (len(want) // 20), sizes
        got = sorted_pairs(frame.compute(scheduler="sync"))
        np.testing.assert_array_equal(got[got[:, 0] != got[:, 1]], want)
        assert (got[:, 0] == got[:, 1]).sum() == (len(X) if include_self else 0)


def test_blocks_cut_from_every_few_rows_of_a_dense_sample(rng):
    # About 200 neighbours a point: the blocks are estimated from every third sampled row.
    X = rng.random((2000, 2))
    eps = eps_for(X, 200, rng)
    want = epsjoin.pairs(X, eps, sort=True)
    frame = ejd.pairs(da.from_array(X, chunks=(700, 2)), eps, n_slabs=2,
                      block_pairs=len(want) // 20, return_distance=True)
    parts = [p.compute(scheduler="sync") for p in frame.to_delayed()]
    assert len(parts) >= 20 and max(len(p) for p in parts) <= 3 * (len(want) // 20)
    got, distances = _sorted_with_distances(pd.concat(parts))
    np.testing.assert_array_equal(got, want)
    graph = epsjoin.neighbor_graph(X, eps, mode="distance")
    np.testing.assert_array_equal(distances, np.asarray(graph[got[:, 0], got[:, 1]]).ravel())


def test_bad_block_sizes_are_refused(rng):
    D = da.from_array(rng.random((100, 2)), chunks=(50, 2))
    for bad in (0, -3, np.int64(0)):
        with pytest.raises(ValueError, match=r"block_pairs must be an integer >= 1 or None"):
            ejd.pairs(D, 0.1, block_pairs=bad)
    for bad in (2.5, 1e6, "1000", True):
        with pytest.raises(TypeError, match="block_pairs must be an integer or None"):
            ejd.pairs(D, 0.1, block_pairs=bad)
    with pytest.raises(ValueError, match="block_pairs"):
        ejd.neighbor_graph(D, 0.1, block_pairs=0)
    # np.int64 is an integer; memory_limit alone sets the default: a quarter of it in pairs
    # (24 bytes each), here about 2,700 of 20,000.
    assert ejd.pairs(D, 0.1, block_pairs=np.int64(5)).npartitions > 2
    X = rng.random((2000, 2))
    eps = eps_for(X, 20, rng)
    frame = ejd.pairs(da.from_array(X, chunks=(1000, 2)), eps, memory_limit="256K")
    assert frame.npartitions >= 2 * 3
    np.testing.assert_array_equal(sorted_pairs(frame.compute(scheduler="sync")),
                                  epsjoin.pairs(X, eps, sort=True))


def test_the_plan_and_refusals(rng):
    X = rng.random((4000, 2)) * [4.0, 1.0]
    D = da.from_array(X, chunks=(1000, 2))
    plan = ejd.plan(D, 0.02)
    assert plan.n_slabs == 4 and plan.dim == 0
    with pytest.warns(UserWarning, match="wider than the points' extent"):
        assert ejd.plan(D, 10.0).n_slabs == 1  # eps wider than the points: one slab, stated
    with pytest.raises(TypeError, match="dask.array"):
        ejd.pairs(X, 0.1)
    with pytest.raises(ValueError, match="eps"):
        ejd.pairs(D, 0.0)
    with pytest.raises(ValueError, match="2D"):
        ejd.count(da.zeros(10, chunks=5), 0.1)
    with pytest.raises(ValueError, match="min_samples"):
        ejd.dbscan(D, 0.1, 0)
    for metric in ("cosine", "haversine"):
        with pytest.raises(ValueError, match="euclidean, manhattan and chebyshev"):
            ejd.pairs(D, 0.1, metric=metric)
    for metric in ("l1", "chebyshev"):
        np.testing.assert_array_equal(
            sorted_pairs(ejd.pairs(D, 0.05, metric=metric, return_distance=True).compute(
                scheduler="sync")),
            epsjoin.pairs(X, 0.05, metric=metric, sort=True))
    assert ejd.dbscan(da.zeros((0, 2), chunks=(1, 2)), 0.1).shape == (0,)
    assert ejd.count(da.zeros((0, 2), chunks=(1, 2)), 0.1).compute(scheduler="sync") == 0


@pytest.fixture(scope="module", params=[4, 2], ids=lambda n: f"{n} workers")
def client(request, tmp_path_factory):
    """A cluster of worker processes, shared by the module's tests at each size (starting one
    costs seconds on a small machine); its scratch space in a test folder, not TMPDIR."""
    import dask

    scratch = tmp_path_factory.mktemp(f"dask-{request.param}")
    with dask.config.set({"temporary-directory": str(scratch)}), \
            distributed.LocalCluster(n_workers=request.param, threads_per_worker=1,
                                     processes=True, dashboard_address=None,
                                     local_directory=str(scratch)) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_on_a_cluster_of_processes(client, rng):
    X = np.vstack([rng.random((4000, 2)), rng.random((2000, 2)) * 0.2])
    eps = eps_for(X, 15, rng)
    D = da.from_array(X, chunks=(1500, 2))
    want = epsjoin.pairs(X, eps, sort=True)
    got = client.compute(ejd.pairs(D, eps, n_slabs=4)).result()
    np.testing.assert_array_equal(sorted_pairs(got), want)
    rows = client.compute(ejd.count(D, eps, per_row=True)).result()
    np.testing.assert_array_equal(rows, epsjoin.count(X, eps, per_row=True))
    labels = client.compute(ejd.dbscan(D, eps, 6, n_slabs=3)).result()
    np.testing.assert_array_equal(labels, epsjoin.DBSCAN(eps=eps, min_samples=6).fit(X).labels_)
    # High d: halos would hold every point, so the counts share work items instead.
    H = rng.random((3000, 12))
    counts, stats = ejd.count(da.from_array(H, chunks=(800, 12)), 0.8, per_row=True,
                              return_stats=True)
    assert stats["split"] == "items"
    np.testing.assert_array_equal(client.compute(counts).result(),
                                  epsjoin.count(H, 0.8, per_row=True))


def test_pairs_in_blocks_on_a_cluster_of_processes(client, rng):
    X = np.vstack([rng.random((3000, 2)), rng.random((1500, 2)) * 0.1, lattice(20, 2) / 20])
    eps = 0.05  # the lattice's spacing: ties at exactly eps
    D = da.from_array(X, chunks=(1200, 2))
    for include_self in (False, True):
        want = epsjoin.pairs(X, eps, include_self=include_self, sort=True)
        frame = ejd.pairs(D, eps, include_self=include_self, n_slabs=3, block_pairs=2000)
        assert frame.npartitions > 3 * 4
        np.testing.assert_array_equal(sorted_pairs(client.compute(frame).result()), want)
    graph = ejd.neighbor_graph(D, eps, mode="distance", block_pairs=3000)
    want = epsjoin.neighbor_graph(X, eps, mode="distance", sort_indices=True)
    got = client.compute(graph).result()
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def _weighted_cases(rng):
    """(points, eps, weights): weights in quarters from -0.5 to 2.75, so every sum is exact in
    any order (the slabs sum a point's neighbours in another order than one node does) and
    negative weights can keep a point from being core."""
    centres = rng.random((6, 2)) * 10
    blobs = centres[rng.integers(0, 6, 1500)] + rng.normal(0, 0.3, (1500, 2))
    dup = rng.random((500, 3))
    cases = {
        "uniform-2d": (rng.random((1500, 2)), None),
        "blobs": (blobs, None),
        "lattice ties": (lattice(30, 2), 1.0),
        "duplicates": (np.vstack([dup, dup[:150], dup[:50]]), None),
    }
    for name, (X, eps) in cases.items():
        eps = eps if eps is not None else eps_for(X, 8, rng)
        yield name, X, eps, rng.integers(-2, 12, X.shape[0]) / 4


@pytest.mark.parametrize("chunks,slabs", [(400, None), (700, 3), (300, 6)])
def test_weighted_dbscan_equals_the_one_node_estimator(chunks, slabs, rng):
    for name, X, eps, w in _weighted_cases(rng):
        D = da.from_array(X, chunks=(chunks, -1))
        # The weights as a dask array chunked otherwise than X (rechunked), and as numpy.
        given = [da.from_array(w, chunks=chunks // 2 + 1), w, w]
        for min_samples, weights in zip((1, 3, 8), given):
            want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X, sample_weight=w)
            got = ejd.dbscan(D, eps, min_samples, sample_weight=weights,
                             n_slabs=slabs).compute(scheduler="sync")
            np.testing.assert_array_equal(
                got, want.labels_,
                err_msg=f"{name}, min_samples {min_samples}, {type(weights).__name__}")
        # One number for every point: min_samples 4 at weight 0.5 wants 8 points.
        want = epsjoin.DBSCAN(eps=eps, min_samples=4).fit(X, sample_weight=0.5).labels_
        got = ejd.dbscan(D, eps, 4, sample_weight=0.5, n_slabs=slabs).compute(scheduler="sync")
        np.testing.assert_array_equal(got, want, err_msg=f"{name}, weight 0.5")


def test_weighted_dbscan_on_a_cluster_of_processes(client, rng):
    for (name, X, eps, w), min_samples in zip(_weighted_cases(rng), (2, 5, 3, 6)):
        D = da.from_array(X, chunks=(500, -1))
        W = da.from_array(w, chunks=500)
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples).fit(X, sample_weight=w)
        got = client.compute(ejd.dbscan(D, eps, min_samples, sample_weight=W,
                                        n_slabs=4)).result()
        np.testing.assert_array_equal(got, want.labels_,
                                      err_msg=f"{name}, min_samples {min_samples}")


def test_bad_sample_weights_are_refused_at_the_call(rng):
    X = rng.random((300, 2))
    D = da.from_array(X, chunks=(100, 2))
    w = np.ones(300)
    bad = {
        "shape == \\(299,\\)": [w[:299], da.from_array(w[:299], chunks=100)],
        "NaN or infinity": [np.where(np.arange(300) == 7, np.nan, w),
                            da.from_array(np.where(np.arange(300) == 250, np.inf, w), chunks=60),
                            np.inf],
        "1D array or scalar": [w.reshape(150, 2), da.ones((150, 2), chunks=50)],
        "non-zero": [np.zeros(300), da.zeros(300, chunks=100), 0.0],
        "numbers": [da.from_array(np.array(["a"] * 300), chunks=100)],
    }
    for message, weights in bad.items():
        for given in weights:
            with pytest.raises(ValueError, match=message):
                ejd.dbscan(D, 0.1, 3, sample_weight=given)
    # Lengths of a dask array are known without computing it, unknown ones computed first.
    unknown = da.from_array(w, chunks=100)[da.from_array(w, chunks=100) > 0]
    labels = ejd.dbscan(D, 0.1, 3, sample_weight=unknown).compute(scheduler="sync")
    np.testing.assert_array_equal(labels, epsjoin.DBSCAN(0.1, min_samples=3).fit(X).labels_)


def test_eps_wider_than_the_points_runs_as_one_slab_and_says_so(rng):
    X = rng.random((500, 2))
    D = da.from_array(X, chunks=(100, 2))
    w = rng.integers(-2, 12, 500) / 4
    with pytest.warns(UserWarning, match="wider than the points' extent"):
        got = ejd.dbscan(D, 2.0, 300, sample_weight=w).compute(scheduler="sync")
    np.testing.assert_array_equal(
        got, epsjoin.DBSCAN(2.0, min_samples=300).fit(X, sample_weight=w).labels_)
    with pytest.warns(UserWarning, match="wider than the points' extent"):
        assert len(ejd.pairs(D, 2.0).compute(scheduler="sync")) == 500 * 499 // 2


def test_without_dask_the_import_names_the_extra(monkeypatch):
    import importlib
    import sys

    # dask as if not installed (None in sys.modules makes its import fail), and epsjoin.dask
    # imported afresh; monkeypatch puts both back.
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.delitem(sys.modules, "epsjoin.dask")
    with pytest.raises(ImportError, match=r"pip install epsjoin\[dask\]"):
        importlib.import_module("epsjoin.dask")


class _DieOnce(distributed.WorkerPlugin):
    """Ends its worker's process (os._exit: no clean-up, no goodbye to the scheduler, as a
    killed process goes) the first time a task whose key names one of `steps` starts
    executing, once a step over the cluster: the first worker to create the step's marker file
    (O_EXCL: exactly one can) writes its pid there and dies."""

    def __init__(self, folder, steps):
        self.folder, self.steps = str(folder), steps

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing":
            return
        for step in self.steps:
            if step in str(key):
                marker = os.path.join(self.folder, step)
                try:
                    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os._exit(1)


@pytest.mark.parametrize("client", [2], indirect=True, ids=["2 workers"])
def test_a_worker_lost_mid_join_changes_nothing(client, rng, tmp_path):
    """A worker process dies while it runs a slab's join (pairs) or clustering (DBSCAN); the
    scheduler runs its tasks again on the other worker or the one its nanny starts in its
    place. The results are still the one-node ones, no pair twice. The markers hold the pids
    of the processes that died, which are no longer among the workers: the deaths happened
    (the task keys are named after the functions in epsjoin/_dask_pairs.py and _dask_dbscan.py; a
    renamed step would leave no marker and fail here, not pass unharmed)."""
    X = np.vstack([rng.random((3000, 2)), rng.random((1500, 2)) * 0.2])
    eps = eps_for(X, 10, rng)
    w = rng.integers(-2, 12, X.shape[0]) / 4
    D = da.from_array(X, chunks=(1000, 2))
    steps = ("slab_pairs", "slab_components")
    plugin = _DieOnce(tmp_path, steps)
    client.register_plugin(plugin, name="die-once")
    try:
        got = client.compute(ejd.pairs(D, eps, n_slabs=4)).result()
        labels = client.compute(ejd.dbscan(D, eps, 4, sample_weight=w, n_slabs=4)).result()
        alive = set(client.run(os.getpid).values())
    finally:
        client.unregister_worker_plugin("die-once")
    pairs = sorted_pairs(got)
    np.testing.assert_array_equal(pairs, epsjoin.pairs(X, eps, sort=True))
    assert len(np.unique(pairs, axis=0)) == len(got)
    np.testing.assert_array_equal(
        labels, epsjoin.DBSCAN(eps, min_samples=4).fit(X, sample_weight=w).labels_)
    died = {step: int((tmp_path / step).read_text()) for step in steps}
    assert not alive & set(died.values()), (died, alive)

