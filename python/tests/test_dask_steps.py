"""epsjoin.dask's steps on their own (issue 47): DBSCAN's union of the points several slabs
hold, against a plain union-find; the plans kept for calls again on the same points."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pandas")
import epsjoin  # noqa: E402
import epsjoin.dask as ejd  # noqa: E402


@pytest.mark.parametrize("offset", [0, 2**40])
def test_union_ties_the_representatives_a_point_has_in_each_slab(offset, rng):
    """The union step on its own against a plain union-find: points shared by four slabs, each
    with a representative in each slab that holds it, the slabs' own representatives a part of
    those; ids past 32 bits take the sorted path in place of the hash."""
    from epsjoin._dask_dbscan import union

    # Sparse enough that the meetings form a forest of many trees: no tie is redundant.
    reps = np.sort(rng.choice(10_000, 200, replace=False))
    crossings = []
    for _ in range(4):
        shared = np.sort(rng.choice(1_000, 100, replace=False))
        theirs = rng.choice(reps, shared.size)
        crossings.append((shared + offset, theirs + offset, np.unique(theirs[:50]) + offset))
    got_reps, labels = union(*crossings)

    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    first_rep = {}
    for shared, theirs, _ in crossings:
        for point, rep in zip(shared.tolist(), theirs.tolist()):
            find(rep)
            if point in first_rep:
                a, b = find(first_rep[point]), find(rep)
                parent[max(a, b)] = min(a, b)  # the root stays each component's smallest
            else:
                first_rep[point] = rep
    want_reps = np.unique(np.concatenate([c[2] for c in crossings]))
    roots = np.array([find(int(r)) for r in want_reps])
    np.testing.assert_array_equal(got_reps, want_reps)
    np.testing.assert_array_equal(labels, np.searchsorted(np.unique(roots), roots))



def test_a_call_again_on_the_same_points_reuses_their_plan(rng, monkeypatch):
    planned = []
    plan_slabs = ejd.plan_slabs
    monkeypatch.setattr(ejd, "plan_slabs", lambda *a, **k: planned.append(1) or plan_slabs(*a, **k))
    monkeypatch.setattr(ejd, "_RECENT_PLANS", type(ejd._RECENT_PLANS)())
    X = rng.random((3000, 2))
    D = da.from_array(X, chunks=(700, 2))
    want = epsjoin.count(X, 0.03)
    for _ in range(2):
        assert int(ejd.count(D, 0.03, n_slabs=3).compute(scheduler="sync")) == want
    assert len(planned) == 1
    # The same values chunked anew are the same graph by name; another eps or slab count is not.
    assert int(ejd.count(da.from_array(X, chunks=(700, 2)), 0.03, n_slabs=3).compute(
        scheduler="sync")) == want
    assert len(planned) == 1
    ejd.count(D, 0.031, n_slabs=3)
    ejd.count(D, 0.03, n_slabs=2)
    assert len(planned) == 3
    _, sample, sample_ids, _ = next(iter(ejd._RECENT_PLANS.values()))
    assert not sample.flags.writeable and not sample_ids.flags.writeable


def test_kept_plans_are_bounded_and_still_warn(rng, monkeypatch):
    monkeypatch.setattr(ejd, "_RECENT_PLANS", type(ejd._RECENT_PLANS)())
    monkeypatch.setattr(ejd, "_KEPT_BYTES", 0)  # nothing kept: every call plans afresh
    X = rng.random((2000, 3))
    D = da.from_array(X, chunks=(500, 3))
    assert int(ejd.count(D, 0.05).compute(scheduler="sync")) == epsjoin.count(X, 0.05)
    assert len(ejd._RECENT_PLANS) == 0
    monkeypatch.setattr(ejd, "_KEPT_BYTES", 64 << 20)
    for _ in range(2):  # wider than the points: the warning comes from a kept plan too
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = ejd.count(D, 5.0, n_slabs=2).compute(scheduler="sync")
        assert int(got) == epsjoin.count(X, 5.0)
        assert any("wider than the points' extent" in str(w.message) for w in caught)
    assert len(ejd._RECENT_PLANS) == 1
