"""epsjoin.dask's shared splits of high dimensions (issue 47), where slabs' halos would hold
most points: counts by the join's work items, pairs and DBSCAN by ranges of queries, every task
holding every point; each equal to the one-node function at d 2, 8 and 12, on lattice ties at
exactly eps, duplicates and border points between two clusters; `split="auto"` choosing them in
high d; the refusals."""

import numpy as np
import pytest

import epsjoin
from conftest import bridged_clusters, eps_for, lattice, sorted_pairs

da = pytest.importorskip("dask.array")
pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pandas")
import epsjoin.dask as ejd  # noqa: E402


def _in_thirds(points):
    return da.from_array(points, chunks=(len(points) // 3 + 1, points.shape[1]))


def _uniform(n, d, neighbours, rng):
    X = rng.random((n, d))
    return X, eps_for(X, neighbours, rng)


def _uniform_and_lattice(X, eps):
    """(points, eps, their dask array in three chunks): X, and a 3-D lattice at its spacing."""
    for points, radius in [(X, eps), (lattice(7, 3).astype(np.float64), 1.0)]:
        yield points, radius, _in_thirds(points)


@pytest.mark.parametrize("d,neighbours", [(12, 20), (8, 30), (2, 15)])
def test_counts_split_by_work_items_equal_the_one_node_counts(d, neighbours, rng):
    # Every share holds all the points and counts its work items; the shares add up exactly,
    # per point and in total, with and without the points themselves, on lattice ties too.
    X, eps = _uniform(3000, d, neighbours, rng)
    for points, radius, D in _uniform_and_lattice(X, eps):
        for include_self in (False, True):
            want = epsjoin.count(points, radius, per_row=True, include_self=include_self)
            for shares in (None, 1, 5):
                rows, stats = ejd.count(D, radius, per_row=True, include_self=include_self,
                                        split="items", n_slabs=shares, return_stats=True)
                assert stats["split"] == "items"
                np.testing.assert_array_equal(rows.compute(scheduler="sync"), want)
            total = ejd.count(D, radius, include_self=include_self, split="items")
            assert int(total.compute(scheduler="sync")) == int(want.sum())
    auto = ejd.count(da.from_array(X, chunks=(1000, d)), eps, split="auto", return_stats=True)[1]
    assert auto["split"] == ("items" if auto["halo_fraction"] > 0.5 else "slabs"), auto
    assert (d >= 8) == (auto["split"] == "items"), auto


@pytest.mark.parametrize("d,neighbours", [(12, 20), (8, 30), (2, 15)])
def test_pairs_split_by_blocks_of_queries_equal_the_one_node_pairs(d, neighbours, rng):
    # One slab of every point, shared by blocks of queries that each hold all the points: the
    # blocks' pairs are the one-node pairs, once each, ties at exactly eps included.
    X, eps = _uniform(2500, d, neighbours, rng)
    for points, radius, D in _uniform_and_lattice(X, eps):
        for include_self in (False, True):
            want = epsjoin.pairs(points, radius, include_self=include_self, sort=True)
            for shares, block_pairs in [(None, None), (1, None), (5, None), (4, 300)]:
                frame, stats = ejd.pairs(D, radius, include_self=include_self, split="items",
                                         n_slabs=shares, block_pairs=block_pairs,
                                         return_stats=True)
                assert stats["split"] == "items"
                assert stats["tasks"] == frame.npartitions >= (shares or 3)
                np.testing.assert_array_equal(sorted_pairs(frame.compute(scheduler="sync")),
                                              want)
        manhattan = ejd.pairs(D, radius, split="items", metric="manhattan", n_slabs=3)
        np.testing.assert_array_equal(sorted_pairs(manhattan.compute(scheduler="sync")),
                                      epsjoin.pairs(points, radius, metric="manhattan",
                                                    sort=True))
    auto = ejd.pairs(da.from_array(X, chunks=(1000, d)), eps, return_stats=True)[1]
    assert (d >= 8) == (auto["split"] == "items"), auto
    graph = ejd.neighbor_graph(da.from_array(X, chunks=(1000, d)), eps, split="items")
    assert (graph.compute(scheduler="sync") != epsjoin.neighbor_graph(X, eps)).nnz == 0


@pytest.mark.parametrize("d,neighbours", [(12, 20), (8, 30), (2, 15)])
def test_dbscan_split_by_items_equals_the_one_node_estimator(d, neighbours, rng):
    # Every task holds all the points; core flags from the shared counts, core-core edges by
    # the range of their smaller end, forests merged in pairs: the one-node labels exactly, on
    # blobs with noise, lattice ties at exactly eps, duplicates and border points between two
    # clusters.
    centres = rng.random((5, d))
    blobs = np.vstack([centres[rng.integers(0, 5, 1500)] + rng.normal(0, 0.04, (1500, d)),
                       rng.random((500, d))])
    dup = np.vstack([blobs[:300], blobs[:300]])
    L = lattice(7, 3).astype(np.float64)
    cases = [(blobs, eps_for(blobs, neighbours, rng)), (dup, None), (L, 1.0),
             (bridged_clusters(d, rng), 0.25)]
    for points, radius in cases:
        radius = radius if radius is not None else eps_for(points, neighbours, rng)
        D = _in_thirds(points)
        for min_samples in (1, 4, 9):
            want = epsjoin.DBSCAN(eps=radius, min_samples=min_samples).fit(points).labels_
            for shares in (None, 1, 5):
                got, stats = ejd.dbscan(D, radius, min_samples, split="items", n_slabs=shares,
                                        return_stats=True)
                assert stats["split"] == "items"
                np.testing.assert_array_equal(got.compute(scheduler="sync"), want,
                                              err_msg=f"{min_samples}, {shares}")
    uniform = rng.random((2000, d))
    auto = ejd.dbscan(da.from_array(uniform, chunks=(700, d)), eps_for(uniform, neighbours, rng),
                      5, return_stats=True)[1]
    assert (d >= 8) == (auto["split"] == "items"), auto


def test_split_refusals(rng):
    D = da.from_array(rng.random((100, 3)), chunks=(50, 3))
    with pytest.raises(ValueError, match="split must be"):
        ejd.count(D, 0.1, split="boxes")
    with pytest.raises(ValueError, match="split must be"):
        ejd.pairs(D, 0.1, split="boxes")
    with pytest.raises(ValueError, match="Euclidean"):
        ejd.count(D, 0.1, split="items", metric="manhattan")
    # Other metrics keep to slabs under auto.
    assert ejd.count(D, 0.9, metric="manhattan", return_stats=True)[1]["split"] == "slabs"
    with pytest.raises(ValueError, match="split must be"):
        ejd.dbscan(D, 0.1, split="boxes")
    with pytest.raises(ValueError, match="split='items'"):
        ejd.dbscan(D, 0.1, split="items", metric="manhattan")
    with pytest.raises(ValueError, match="split='items'"):
        ejd.dbscan(D, 0.1, split="items", sample_weight=np.ones(100))
    w = ejd.dbscan(D, 0.9, 3, sample_weight=np.ones(100), return_stats=True)[1]
    assert w["split"] == "slabs"
