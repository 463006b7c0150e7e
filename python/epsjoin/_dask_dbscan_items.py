"""DBSCAN on Dask with every task holding every point (epsjoin.dask.dbscan(split="items");
issue 47's high dimensions, where slabs' halos would hold most points anyway).

1. Core flags from the per-point counts of the shared count (_dask_items: each task counts its
   share of the join's work items, and the shares add up exactly).
2. The ids are cut into ranges, one a task. A task joins its range's core points against the
   core points from its first one on, so each core-core edge is found by the range of its
   smaller end, and joins its range's other points against all core points for their
   smallest-id core neighbour (the library's rule for a border point).
3. Each task's edges become a forest over the core points (each one's smallest core in its
   component); forests merge two at a time, so no task holds more than two of them.
4. The last task numbers the clusters by their smallest core point, as the one-node DBSCAN
   does, labels the border points by their core neighbour's cluster and cuts the labels into
   X's chunks.
Every task holds all the points (n d floats) and O(n) integers, as the shared count does.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from . import _dask_items, _join
from ._dask_dbscan import smallest_in_component
from .dask import da, dask

#: A task's piece: (each core point's smallest core in its component, as positions among the
#: core points; border ids; each border's smallest core neighbour, as a position).
Forest = Tuple[np.ndarray, np.ndarray, np.ndarray]


def _core_flags(min_samples: int, *counts: np.ndarray) -> np.ndarray:
    # The counts include each point itself, as scikit-learn counts a core point's neighbours.
    return np.concatenate(counts) >= min_samples


def range_forest(points: np.ndarray, core: np.ndarray, lo: int, hi: int, eps: float,
                 options: Dict[str, Any]) -> Forest:
    """The forest of the core-core edges whose smaller end lies in [lo, hi), and that range's
    border points with their smallest-id core neighbours."""
    cores = np.flatnonzero(core)
    start, stop = np.searchsorted(cores, [lo, hi])
    a = b = np.empty(0, np.int64)
    if stop > start:
        found = _join.pairs(points[cores[start:stop]], eps, points[cores[start:]], **options)
        a, b = found[:, 0].astype(np.int64) + start, found[:, 1].astype(np.int64) + start
        keep = a < b
        a, b = a[keep], b[keep]
    roots = smallest_in_component(cores.size, a, b)
    others = np.flatnonzero(~core[lo:hi]) + lo
    if others.size == 0 or cores.size == 0:
        return roots, np.empty(0, np.int64), np.empty(0, np.int64)
    indptr, indices = _join.neighbor_table(points[others], eps, points[cores],
                                           sort_indices=True, **options)
    reached = np.diff(indptr) > 0
    return roots, others[reached], indices[indptr[:-1][reached]].astype(np.int64)


def merged(left: Forest, right: Forest) -> Forest:
    """Two tasks' forests as one: each core point tied to both of its roots."""
    nodes = np.arange(left[0].size)
    roots = smallest_in_component(nodes.size, np.concatenate([nodes, nodes]),
                                   np.concatenate([left[0], right[0]]))
    return roots, np.concatenate([left[1], right[1]]), np.concatenate([left[2], right[2]])


def _labels(n: int, core: np.ndarray, forest: Forest) -> np.ndarray:
    roots, borders, neighbour = forest
    cluster = np.searchsorted(np.unique(roots), roots)  # numbered by their smallest core point
    labels = np.full(n, -1, dtype=np.int64)
    labels[np.flatnonzero(core)] = cluster
    labels[borders] = cluster[neighbour]
    return labels


def _reduced(forests: List[Any]) -> Any:
    """The forests merged in a tree of pairs (each merge holds two)."""
    while len(forests) > 1:
        pairs = [dask.delayed(merged)(forests[k], forests[k + 1])
                 for k in range(0, len(forests) - 1, 2)]
        forests = pairs + ([forests[-1]] if len(forests) % 2 else [])
    return forests[0]


def item_labels(X: Any, eps: float, min_samples: int, options: Dict[str, Any],
                tasks: int) -> Any:
    """DBSCAN's labels of X as a ``dask.array`` chunked as X's rows, every task holding every
    point and taking a share of the work (the counts' work items, then ranges of ids)."""
    n = int(X.shape[0])
    points = _dask_items.host_points(X)
    counts = _dask_items.item_counts(X, eps, True, options, tasks, points).to_delayed().ravel()
    core = dask.delayed(_core_flags)(int(min_samples), *counts)
    # A range joins against the core points from its first one on: equal shares of that
    # triangle's area, n^2 / 2, end where n - n sqrt(1 - k / tasks) does.
    shares = np.arange(tasks + 1) / tasks
    bounds = np.unique((n - n * np.sqrt(1.0 - shares)).round().astype(np.int64))
    forests = [dask.delayed(range_forest)(points, core, int(lo), int(hi), eps, options)
               for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    labels = dask.delayed(_labels)(n, core, _reduced(forests))
    return da.from_delayed(labels, shape=(n,), dtype=np.int64).rechunk((X.chunks[0],))
