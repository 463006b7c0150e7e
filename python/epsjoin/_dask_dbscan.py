"""DBSCAN on Dask, slab by slab (epsjoin.dask.dbscan; issue 47).

1. Each slab counts its own points' neighbours among its own and halo points (or sums their
   weights, which travel with the points): the core flags, exact because the halo holds every
   neighbour.
2. The flags go back to the chunks, and out again to the slabs beside the points (the same
   routing), so each slab knows which of its halo points are core.
3. Each slab joins its core points (own and halo, all flags exact) into components with the
   library's DBSCAN at min_samples 1 (O(n) memory): each is part of one true cluster, named by
   its smallest core id (its representative). Each own border point takes its smallest-id core
   neighbour's representative, the library's rule (the slab holds all its neighbours). Each
   core point that other slabs hold too (halo core points, and own core points in another
   slab's halo) goes out, in id order, with its representative here.
4. One task merges those lists by id: the representatives one point has in the slabs that hold
   it belong to one cluster. Their distinct pairs (as many as the components that meet across
   cuts, however many points the halos hold) are unioned, and the clusters numbered by their
   smallest core id, as the one-node DBSCAN numbers them.
5. Each chunk maps its rows' representatives to those labels.

The local clustering takes only core points because a halo point's flag from a cut
neighbourhood could be wrong either way once weights may be negative; with exact flags from
step 1 no slab ever merges what the whole would not.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components

from . import _device, _epsjoin, _join, _radii
from ._device import to_host
from ._partition import SlabPlan
from .dask import _gathered, _settings, _take_rows, da, dask, dd, pd

Pieces = List[Tuple[Any, ...]]


def checked_weights(sample_weight: Any, X: Any) -> Any:
    """`sample_weight` as float64 chunked as X's rows (a dask array), or None: the one-node
    estimator's checks and words; a dask array's length at once, its values in one pass."""
    if sample_weight is None:
        return None
    n = int(X.shape[0])
    if isinstance(sample_weight, dd.Series):
        sample_weight = sample_weight.to_dask_array(lengths=True)
    if isinstance(sample_weight, da.Array) and sample_weight.ndim == 0:
        sample_weight = sample_weight.compute()
    if not isinstance(sample_weight, da.Array):
        # Imported here: _estimator imports scikit-learn, which the workers should not pay for
        # when they unpickle this module's tasks.
        from ._estimator import check_weights

        w = np.asarray(check_weights(sample_weight, n))
        # Again for one number, which check_weights passes unchecked (scikit-learn refuses 0).
        _check_values(bool(np.isfinite(w).all()), bool(w.any()), n)
        return da.from_array(w, chunks=(X.chunks[0],))
    w = sample_weight
    if w.ndim != 1:
        raise ValueError("Sample weights must be 1D array or scalar")
    if any(np.isnan(c) for c in w.chunks[0]):
        w = w.compute_chunk_sizes()
    if w.shape != (n,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
    if w.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must be numbers, got dtype {w.dtype}")
    w = w.astype(np.float64).rechunk((X.chunks[0],))
    finite, nonzero = dask.compute(da.isfinite(w).all(), (w != 0).any())
    _check_values(bool(finite), bool(nonzero), n)
    return w


def _check_values(finite: bool, nonzero: bool, n: int) -> None:
    if not finite:
        raise ValueError("Input sample_weight contains NaN or infinity.")
    if n and not nonzero:
        raise ValueError("Sample weights must contain at least one non-zero number.")


def _dbscan(points: np.ndarray, eps: float, min_samples: int, options: Dict[str, Any],
            weights: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """(labels, core flags) of the library's DBSCAN of `points`, called straight through the
    extension: the estimator would import scikit-learn on every fresh worker (about 3 s).
    Device points (CuPy chunks) are clustered on their device."""
    settings = _settings(options)
    host_weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if _device.any_on_device(points):
        b, A, _ = _device.check_device_pair(points, None, min_samples=1, estimator="DBSCAN")
        labels, core, _ = _epsjoin.dbscan_device(A, float(eps), int(min_samples),
                                                 _device.settings_on(settings, b, A),
                                                 host_weights)
        return labels.view(np.int64), core.astype(bool)
    data = np.ascontiguousarray(points)
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    labels, core, _ = _epsjoin.dbscan(data, float(eps), int(min_samples), settings,
                                      host_weights)
    return labels.view(np.int64), core.astype(bool)


def slab_core(pieces: Pieces, eps: float, min_samples: int,
              options: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(global ids, core flags) of the slab's own points."""
    ids, points, own, *weights = _gathered(pieces)
    mine = np.nonzero(own)[0]
    if mine.size == 0:
        return ids[mine], np.zeros(0, bool)
    if weights:
        return ids[mine], _weighted_core(points, weights[0], eps, min_samples, options)[mine]
    if _device.any_on_device(points):
        # The device DBSCAN flags cores on the GPU (0.26 s at 20M points), where the library's
        # device counts per row pass through the host (1.4 s); own points' flags are exact.
        return ids[mine], _dbscan(points, eps, min_samples, options)[1][mine]
    counts = np.asarray(_radii.count(points, eps, per_row=True, include_self=True, **options))
    return ids[mine], counts[mine] >= min_samples  # itself included, as scikit-learn counts


def _weighted_core(points: np.ndarray, weights: np.ndarray, eps: float, min_samples: int,
                   options: Dict[str, Any]) -> np.ndarray:
    # No per-row weighted count is exposed: the library's weighted DBSCAN of the slab sums the
    # weights in memory linear in the points, and its core flags are exact for own points.
    core = np.zeros(points.shape[0], bool)
    if weights.any():  # all 0 here: nothing reaches min_samples >= 1 (and fit would refuse)
        core = _dbscan(points, eps, min_samples, options, weights)[1]
    return core


def route_flags(block_flags: np.ndarray, block: np.ndarray, plan: SlabPlan) -> List[np.ndarray]:
    """The flags of the rows `_route` sends each slab, in the same order."""
    first, last = plan.halo_slabs(block)
    return [block_flags[to_host((first <= r) & (r <= last))] for r in range(plan.n_slabs)]


def _components(ids: np.ndarray, points: Any, core: np.ndarray, eps: float,
                options: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(each core point's component among the slab's core points, -1 elsewhere; each
    component's smallest core id, ascending: its representative)."""
    every = bool(core.all())  # dense data: no rows to pick, no labels to place
    at = np.nonzero(core)[0] if not every else np.empty(0, np.int64)
    if not every and at.size == 0:
        return np.full(ids.shape[0], -1, dtype=np.int64), np.zeros(0, np.int64)
    # At min_samples 1 every point given is core: the components over eps edges, numbered by
    # their smallest point (the library's rule), so each one's first point, in the order of
    # the ids, is where the running maximum of the labels first reaches it.
    local = _dbscan(points if every else _take_rows(points, at), eps, 1, options)[0]
    reached = np.maximum.accumulate(local)
    starts = np.flatnonzero(np.concatenate([[True], reached[1:] > reached[:-1]]))
    if not np.array_equal(local[starts], np.arange(starts.size)):
        raise RuntimeError("the library's DBSCAN did not number clusters by their first point")
    if every:
        return local, ids[starts]
    label = np.full(ids.shape[0], -1, dtype=np.int64)
    label[at] = local
    return label, ids[at[starts]]


def _borders(rows: np.ndarray, points: Any, core: np.ndarray, label: np.ndarray,
             eps: float, options: Dict[str, Any]) -> None:
    """`label` of each non-core point of `rows` set to its smallest-id core neighbour's (core
    points are in id order, so a sorted row's first)."""
    if rows.size == 0:
        return
    at = np.nonzero(core)[0]
    if at.size == 0:
        return
    indptr, indices = (to_host(a) for a in _join.neighbor_table(
        _take_rows(points, rows), eps, _take_rows(points, at), sort_indices=True, **options))
    reached = np.diff(indptr) > 0
    label[rows[reached]] = label[at[indices[indptr[:-1][reached]]]]


def slab_components(pieces: Pieces, flags: List[np.ndarray], plan: SlabPlan, eps: float,
                    options: Dict[str, Any]) -> Tuple[np.ndarray, ...]:
    """(own ids, their representatives or -1; the ids of the core points other slabs also
    hold, ascending, and their representatives here; the representatives the slab's labels
    use)."""
    ids, points, own = _gathered(pieces)[:3]
    core = np.concatenate(flags).astype(bool, copy=False)
    none = np.empty(0, np.int64)
    if not own.any():
        return none, none, none, none, none
    label, smallest = _components(ids, points, core, eps, options)
    _borders(np.nonzero(own & ~core)[0], points, core, label, eps, options)
    # Each point's representative: label -1 (noise) reads the -1 appended.
    rep = np.append(smallest, -1)[label]
    # Core points of the halo, and own core points in other slabs' halos: each such point ties
    # its components in every slab that holds it. Local ids ascend with the global ones.
    shared = core & (~own | to_host(plan.in_other_halos(points)))
    # The representatives the own points use (own core points among them), ascending as
    # `smallest` is: a mask over the components (noise marks the extra last), not a sort.
    used = np.zeros(smallest.size + 1, bool)
    used[label[own]] = True
    if own.all():
        return ids, rep, ids[shared], rep[shared], smallest[used[:-1]]
    return ids[own], rep[own], ids[shared], rep[shared], smallest[used[:-1]]


def union(*crossings: Tuple[np.ndarray, ...]) -> Tuple[np.ndarray, np.ndarray]:
    """(every representative, sorted; its cluster label) from each slab's (ids of its shared
    core points, ascending; their representatives there; the slab's representatives): the
    representatives a shared point has in the slabs that hold it are one cluster, numbered by
    its smallest core id."""
    reps = np.unique(np.concatenate([c[2] for c in crossings]))
    shared = np.concatenate([c[0] for c in crossings])
    theirs = np.concatenate([c[1] for c in crossings])
    # Each slab's run is sorted: a stable sort merges them, and a point's entries meet.
    order = np.argsort(shared, kind="stable")
    shared, theirs = shared[order], theirs[order]
    meets = np.flatnonzero(shared[1:] == shared[:-1])
    a, b = _distinct_edges(theirs[meets], theirs[meets + 1])
    nodes = np.unique(np.concatenate([reps, a, b]))
    if nodes.size == 0:
        return reps, np.zeros(0, np.int64)
    root = nodes[smallest_in_component(nodes.size, np.searchsorted(nodes, a),
                                       np.searchsorted(nodes, b))]
    rep_root = root[np.searchsorted(nodes, reps)]
    roots = np.unique(rep_root)
    return reps, np.searchsorted(roots, rep_root).astype(np.int64)


def _distinct_edges(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The edges (a, b) once each: many shared points tie the same two components. A hash of
    the pair where the ids fit 32 bits (pandas' unique, linear), else a sort."""
    if a.size == 0:
        return a, b
    if int(max(a.max(), b.max())) < 2**32 and int(min(a.min(), b.min())) >= 0:
        codes = pd.unique((a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64))
        return (codes >> np.uint64(32)).astype(np.int64), (codes & np.uint64(2**32 - 1)).astype(
            np.int64)
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def smallest_in_component(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each of n nodes' smallest node in its component over the edges (a, b)."""
    graph = scipy.sparse.coo_matrix((np.ones(a.size, np.int8), (a, b)), shape=(n, n))
    _, component = connected_components(graph, directed=False)
    # Nodes ascend, so each component's first node is its smallest.
    _, first = np.unique(component, return_index=True)
    return np.asarray(first[component], dtype=np.int64)


def chunk_labels(size: int, numbered: Tuple[np.ndarray, np.ndarray],
                 *pieces: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """A chunk's labels from the (offsets in the chunk, representatives) each slab sent it."""
    reps, labels = numbered
    out = np.full(size, -1, dtype=np.int64)
    for at, rep in pieces:
        clustered = rep >= 0
        out[at[clustered]] = labels[np.searchsorted(reps, rep[clustered])]
    return out
