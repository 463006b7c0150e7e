"""progress= (issue 46, part 4): a callable sees the fraction done rise to 1; True shows a tqdm
bar where tqdm is installed and a line on stderr where it is not; the results do not change; an
exception from the callable, Ctrl-C included, stops the join."""

import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import epsjoin
from test_interrupt import ONE_CELL, interrupt

CALLS = {
    "neighbor_graph": lambda X, **kw: epsjoin.neighbor_graph(X, 0.05, sort_indices=True, **kw),
    "distances": lambda X, **kw: epsjoin.neighbor_graph(X, 0.05, mode="distance",
                                                        sort_indices=True, **kw),
    "pairs": lambda X, **kw: epsjoin.pairs(X, 0.05, sort=True, **kw),
    "count": lambda X, **kw: epsjoin.count(X, 0.05, per_row=True, **kw),
    "count_radii": lambda X, **kw: epsjoin.count_radii(X, [0.0, 0.02, 0.05], **kw),
    "table": lambda X, **kw: epsjoin.neighbor_table(X, 0.05, sort_indices=True, **kw),
    "eps=0": lambda X, **kw: epsjoin.pairs(np.round(X, 1), 0.0, sort=True, **kw),
    "box above L/2": lambda X, **kw: epsjoin.count(X[:300], 0.6, boxsize=1.0, **kw),
    "sklearn": lambda X, **kw: epsjoin.radius_neighbors_graph(X, 0.05, **kw),
}


def same(a, b):
    if hasattr(a, "nnz"):
        return (a != b).nnz == 0
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_callable_sees_the_fraction_rise_to_one(name, rng):
    X = rng.random((4000, 2))
    seen = []
    got = CALLS[name](X, progress=seen.append)
    assert same(got, CALLS[name](X))
    assert seen and seen[-1] == 1.0, seen
    assert all(0 <= f <= 1 for f in seen) and seen == sorted(seen)


def test_progress_true_without_tqdm_writes_a_line(rng, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails as if not installed
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    epsjoin.pairs(rng.random((3000, 2)), 0.05, progress=True)
    err = capsys.readouterr().err
    assert "epsjoin: 100%" in err and err.endswith("\n")


def test_progress_true_with_tqdm_draws_a_bar(rng, capsys):
    pytest.importorskip("tqdm")
    epsjoin.count(rng.random((3000, 2)), 0.05, progress=True)
    assert "100/100%" in capsys.readouterr().err


def test_a_refusal_of_progress():
    with pytest.raises(TypeError, match="progress"):
        epsjoin.count(np.zeros((3, 2)), 0.5, progress="yes")


class Stop(Exception):
    pass


def test_an_exception_from_the_callable_stops_the_join(rng):
    calls = []

    def stop(fraction):
        calls.append(fraction)
        raise Stop

    with pytest.raises(Stop):
        epsjoin.neighbor_graph(rng.random((20000, 2)), 0.02, progress=stop)
    assert len(calls) == 1


def test_ctrl_c_in_the_callable_stops_the_join(rng, sigint_raises):
    def ctrl_c(fraction):
        signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        epsjoin.pairs(rng.random((20000, 2)), 0.02, progress=ctrl_c)


def test_ctrl_c_stops_a_join_that_shows_a_bar():
    # As test_interrupt's, with progress=True: the bar's line does not keep SIGINT out.
    interrupt(ONE_CELL, "epsjoin.count(X, eps, per_row=True, n_jobs=1, progress=True)")


# DBSCAN: the cells' passes (cpu-grid in 2-D, "auto"), the two joins' (another engine, a
# metric the cells do not take, weights), and precomputed distances, which report only the end.
DBSCAN_RUNS = {
    "cells": {},
    "joins": {"engine": "super-ego"},
    "manhattan": {"metric": "manhattan"},
    "weighted": {"weights": True},
    "precomputed": {"metric": "precomputed"},
}


@pytest.mark.parametrize("run", sorted(DBSCAN_RUNS))
def test_dbscan_reports_its_passes_and_clusters_the_same(run, rng):
    options = dict(DBSCAN_RUNS[run])
    X = rng.random((3000, 2))
    weights = rng.random(len(X)) * 2 if options.pop("weights", False) else None
    if options.get("metric") == "precomputed":
        X = epsjoin.radius_neighbors_graph(X, 0.03, mode="distance")
    seen = []
    got = epsjoin.DBSCAN(0.03, min_samples=4, progress=seen.append, **options).fit(
        X, sample_weight=weights)
    plain = epsjoin.DBSCAN(0.03, min_samples=4, **options).fit(X, sample_weight=weights)
    assert np.array_equal(got.labels_, plain.labels_)
    assert seen and seen[-1] == 1.0, seen
    assert all(0 <= f <= 1 for f in seen) and seen == sorted(seen)
    if run != "precomputed":
        assert len(seen) > 1, seen  # the passes, not only the end
        assert got.stats_["merge"] == ("cells" if run == "cells" else "host")


def test_an_exception_from_the_callable_stops_dbscan(rng):
    def stop(fraction):
        raise Stop

    with pytest.raises(Stop):
        epsjoin.DBSCAN(0.02, progress=stop).fit(rng.random((20000, 2)))
    with pytest.raises(TypeError, match="progress"):
        epsjoin.DBSCAN(0.02, progress="yes").fit(rng.random((20, 2)))


# EpsIndex's queries: the grid's joins, the edge radii (eps 0), radii per query, one point.
INDEX_CALLS = {
    "neighbor_graph": lambda index, X, **kw: index.neighbor_graph(eps=0.04, sort_indices=True,
                                                                  **kw),
    "count": lambda index, X, **kw: index.count(X[:500], 0.05, per_row=True, **kw),
    "count eps=0": lambda index, X, **kw: index.count(eps=0.0, **kw),
    "query_ball_point": lambda index, X, **kw: index.query_ball_point(X[:700], 0.03, **kw),
    "radii": lambda index, X, **kw: index.query_ball_point(
        X[:300], np.linspace(0.01, 0.05, 300), **kw),
    "one point": lambda index, X, **kw: index.query_ball_point(X[0], 0.05, **kw),
    "lengths": lambda index, X, **kw: index.query_ball_point(X[:50], 0.05, return_length=True,
                                                             **kw),
}


@pytest.mark.parametrize("name", sorted(INDEX_CALLS))
def test_an_index_query_sees_the_fraction_rise_to_one(name, rng):
    X = rng.random((4000, 2))
    index = epsjoin.EpsIndex(X, 0.05)
    seen = []
    got = INDEX_CALLS[name](index, X, progress=seen.append)
    expected = INDEX_CALLS[name](index, X)
    if isinstance(expected, np.ndarray) and expected.dtype == object:
        assert got.tolist() == expected.tolist()
    else:
        assert same(got, expected)
    assert seen and seen[-1] == 1.0, seen
    assert all(0 <= f <= 1 for f in seen) and seen == sorted(seen)


def test_an_exception_from_the_callable_stops_an_index_query(rng):
    index = epsjoin.EpsIndex(rng.random((20000, 2)), 0.02)
    with pytest.raises(Stop):
        index.neighbor_graph(progress=lambda fraction: (_ for _ in ()).throw(Stop()))
    with pytest.raises(TypeError, match="progress"):
        index.count(progress="yes")
    assert index.count() == epsjoin.count(index.data, 0.02)  # the index is still whole
