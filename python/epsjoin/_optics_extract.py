"""Cluster extraction from an OPTICS reachability plot: a DBSCAN cut at one eps, and Xi.

The functions take the arrays OPTICS computes (``reachability_``, ``core_distances_``,
``predecessor_``, ``ordering_``, all indexed by point, the ordering a permutation of the
points) and give the labels (and for Xi the cluster hierarchy) that scikit-learn's
``cluster_optics_dbscan`` and ``cluster_optics_xi`` give for the same arguments.

Xi follows Ankerst et al. (1999), "OPTICS: Ordering Points To Identify the Clustering
Structure", section 4.3, with the corrections scikit-learn makes to its definitions 9 and 11
and the predecessor correction of Schubert & Gertz (2018), "Improving the Cluster Structure
Extracted from OPTICS Plots" (algorithm 2).
"""

from __future__ import annotations

import bisect
import math
import numbers
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


# ---------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------

def _vector(values: npt.ArrayLike, name: str, size: Optional[int]) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got an array of shape {array.shape}.")
    if size is not None and array.shape[0] != size:
        raise ValueError(
            f"{name} has {array.shape[0]} entries, but reachability has {size}; the OPTICS "
            "arrays must all have one entry a point."
        )
    return array


def _distances(values: npt.ArrayLike, name: str, size: Optional[int]) -> FloatArray:
    array = _vector(values, name, size)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {array.dtype}.")
    # float64 whatever came in: scikit-learn's extraction computes its ratios in float64 too.
    floats = array.astype(np.float64)
    if np.isnan(floats).any():
        raise ValueError(f"{name} must not contain NaN.")
    if (floats < 0).any():
        raise ValueError(f"{name} must not be negative (distances, or inf).")
    return floats


def _indices(values: npt.ArrayLike, name: str, size: int) -> IntArray:
    array = _vector(values, name, size)
    if array.size and array.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers (point indices); got dtype {array.dtype}.")
    return array.astype(np.int64)


def _ordering(values: npt.ArrayLike, size: int) -> IntArray:
    order = _indices(values, "ordering", size)
    in_range = bool(((order >= 0) & (order < size)).all())
    if not in_range or (np.bincount(order, minlength=size) != 1).any():
        raise ValueError(f"ordering must be a permutation of the {size} point indices 0..n-1.")
    return order


def _predecessors(values: npt.ArrayLike, size: int) -> IntArray:
    predecessor = _indices(values, "predecessor", size)
    if ((predecessor < -1) | (predecessor >= size)).any():
        raise ValueError("predecessor must hold point indices, or -1 for a point without one.")
    return predecessor


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_fraction(value: Any) -> bool:
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))
    return real and 0 < value <= 1


def _sample_count(value: Any, name: str, n_samples: int, owner: str = "xi_clusters") -> int:
    """An int >= 2 as given, or a fraction of n rounded down and raised to at least 2."""
    if not (_is_int(value) and value >= 2) and not _is_fraction(value):
        raise ValueError(
            f"The '{name}' parameter of {owner} must be an int in the range [2, inf) or a "
            f"float in the range (0.0, 1.0]. Got {value!r} instead."
        )
    # Compared before rounding, as scikit-learn does: a fraction fails only when n is 0.
    if value > n_samples:
        raise ValueError(
            f"{name} must be no greater than the number of samples ({n_samples}). "
            f"Got {value}"
        )
    if _is_int(value):
        return int(value)
    return max(2, int(value * n_samples))


def _xi_value(xi: Any) -> float:
    real = isinstance(xi, numbers.Real) and not isinstance(xi, bool)
    if not real or not 0 < float(xi) < 1:
        # 0 would make every non-rising point steep, and 1 makes 1 / (1 - xi) infinite.
        raise ValueError(
            "The 'xi' parameter of xi_clusters must be a float in the range (0.0, 1.0). "
            f"Got {xi!r} instead."
        )
    return float(xi)


# ---------------------------------------------------------------------------------------------
# DBSCAN-like extraction
# ---------------------------------------------------------------------------------------------

def dbscan_labels(
    reachability: npt.ArrayLike,
    core_distances: npt.ArrayLike,
    ordering: npt.ArrayLike,
    eps: float,
) -> IntArray:
    """Labels of a DBSCAN-like cut of an OPTICS plot at ``eps``, noise as -1.

    Walking the ordering, a point whose reachability exceeds ``eps`` is not density-reachable
    from the points before it: if it is core at ``eps`` (core distance <= eps) it opens a new
    cluster, else it is noise. Every other point joins the cluster open at that point.
    This is ``sklearn.cluster.cluster_optics_dbscan``; ``eps`` should not exceed the
    ``max_eps`` the plot was computed with (not checked here: the plot does not record it),
    and the labels are close to DBSCAN's only for ``eps`` close to ``max_eps``.

    Parameters
    ----------
    reachability, core_distances : array of shape (n_samples,)
        OPTICS' ``reachability_`` and ``core_distances_``, by point; inf allowed.
    ordering : array of shape (n_samples,)
        OPTICS' ``ordering_``, a permutation of the point indices.
    eps : float >= 0

    Returns
    -------
    labels : int64 array of shape (n_samples,)
    """
    reach = _distances(reachability, "reachability", None)
    n_samples = reach.shape[0]
    core = _distances(core_distances, "core_distances", n_samples)
    order = _ordering(ordering, n_samples)
    if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not eps >= 0:
        raise ValueError(
            "The 'eps' parameter of dbscan_labels must be a float in the range [0.0, inf]. "
            f"Got {eps!r} instead."
        )
    unreached = reach[order] > eps
    is_core = core[order] <= eps
    in_plot = np.cumsum(unreached & is_core, dtype=np.int64) - 1
    in_plot[unreached & ~is_core] = -1
    labels = np.empty(n_samples, dtype=np.int64)
    labels[order] = in_plot
    return labels


# ---------------------------------------------------------------------------------------------
# Xi: steep areas
# ---------------------------------------------------------------------------------------------

def _area_ends(steep: BoolArray, turning: BoolArray, min_samples: int) -> IntArray:
    """For each steep point, the last point of the maximal steep area that starts there.

    An area runs on from one steep point to the next while no point in between goes the
    other way (``turning``) and at most ``min_samples`` points lie in between (definitions
    10 and 12 of the paper). That link depends only on the pair, so an area starting at any
    steep point ends where the first broken link after it is. Entries at non-steep points
    are meaningless.
    """
    at = np.flatnonzero(steep)
    ends = np.zeros(steep.shape[0], dtype=np.int64)
    if at.size == 0:
        return ends
    turns_before = np.concatenate(([0], np.cumsum(turning, dtype=np.int64)))
    turned = turns_before[at[1:]] > turns_before[at[:-1] + 1]
    broken = turned | (np.diff(at) - 1 > min_samples)
    last_of_run = np.append(np.flatnonzero(broken), at.size - 1)
    ends[at] = at[last_of_run[np.searchsorted(last_of_run, np.arange(at.size))]]
    return ends


class _DownAreas:
    """The steep down areas still able to start a cluster, with their mib values.

    Kept in the order they were found (ascending start). The mib of an area is the highest
    reachability seen between its end and the current position (section 4.3.2).
    """

    def __init__(self) -> None:
        self.starts = np.empty(0, dtype=np.int64)
        self.ends = np.empty(0, dtype=np.int64)
        self.mibs = np.empty(0, dtype=np.float64)

    def append(self, start: int, end: int) -> None:
        self.starts = np.append(self.starts, start)
        self.ends = np.append(self.ends, end)
        self.mibs = np.append(self.mibs, 0.0)

    def raise_mib(self, mib: float, plot: FloatArray, xi_complement: float) -> None:
        """Drops the areas whose start is not xi-steeper than ``mib``; raises the others'."""
        if math.isinf(mib):
            # Nothing beyond an infinite reachability belongs with what came before it.
            keep = np.zeros(self.starts.shape[0], dtype=bool)
        else:
            keep = mib <= plot[self.starts] * xi_complement
        self.starts, self.ends = self.starts[keep], self.ends[keep]
        self.mibs = np.maximum(self.mibs[keep], mib)


# ---------------------------------------------------------------------------------------------
# Xi: clusters from a down area and an up area
# ---------------------------------------------------------------------------------------------

def _trim_by_predecessor(plot: FloatArray, pred_at: IntArray, start: int, end: int) -> int:
    """The end moved left to the last point that lies below the start or whose predecessor
    is inside the cluster; -1 when none is left after the start (Schubert & Gertz, alg. 2).

    A last point no lower than the start, reached by OPTICS from a point outside the
    cluster, belongs with what follows the cluster rather than with the cluster.
    """
    tail = np.arange(start + 1, end + 1)
    pred = pred_at[start + 1:end + 1]
    fits = (plot[start] > plot[start + 1:end + 1]) | ((pred >= start) & (pred < tail))
    hits = np.flatnonzero(fits)
    return int(tail[hits[-1]]) if hits.size else -1


def _cluster_bounds(
    plot: FloatArray, down: Tuple[int, int], up: Tuple[int, int], xi_complement: float
) -> Tuple[int, int]:
    """The cluster from steep down area ``down`` to steep up area ``up`` (each (start, end)),
    with its start or end moved in to the level of the other side (definition 11, 4b/4c)."""
    d_start, d_end = down
    u_start, u_end = up
    after = plot[u_end + 1]
    top = plot[d_start]
    start, end = d_start, u_end
    if top * xi_complement >= after:
        # The start drops to the first point followed by one no higher than the end's level.
        low_next = plot[d_start + 1:d_end + 1] <= after
        start = d_start + int(np.argmax(low_next)) if low_next.any() else d_end
    elif after * xi_complement >= top:
        # scikit-learn's reading of 4c: the end climbs back to the last point preceded by
        # one no higher than the start (the paper's r(x) < r(sD) reversed).
        low_before = np.flatnonzero(plot[u_start:u_end] <= top)
        end = u_start + 1 + int(low_before[-1]) if low_before.size else u_start
    return start, end


def _clusters_at_up_area(
    plot: FloatArray,
    pred_at: Optional[IntArray],
    downs: _DownAreas,
    up: Tuple[int, int],
    xi_complement: float,
    min_cluster_size: int,
) -> List[Tuple[int, int]]:
    """The clusters ending at steep up area ``up``, innermost (latest down area) first."""
    # The sc2* condition: the end must rise xi above everything between the down area and it.
    enclosing = np.flatnonzero(~(plot[up[1] + 1] * xi_complement < downs.mibs))
    found = []
    for d_start, d_end in zip(downs.starts[enclosing[::-1]].tolist(),
                              downs.ends[enclosing[::-1]].tolist()):
        start, end = _cluster_bounds(plot, (d_start, d_end), up, xi_complement)
        if pred_at is not None:
            end = _trim_by_predecessor(plot, pred_at, start, end)
            if end < 0:
                continue
        # Definition 11: criteria 3a, 1 and 2. The last two cannot fail as the areas are
        # kept (the mib filter puts the up area's start below the cluster's start, where the
        # predecessor correction stops), but they are the definition's, and cheap.
        if end - start + 1 >= min_cluster_size and start <= d_end and end >= up[0]:
            found.append((start, end))
    return found


def _xi_hierarchy(
    plot: FloatArray,
    pred_at: Optional[IntArray],
    xi: float,
    min_samples: int,
    min_cluster_size: int,
) -> List[Tuple[int, int]]:
    """Clusters as (start, end) plot positions, inclusive, in the order scikit-learn lists
    them: by up area, and within one up area from the innermost out (figure 19)."""
    xi_complement = 1.0 - xi
    # An inf past the end closes any cluster still open at the end of the plot.
    plot = np.append(plot, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        # As ratios, as scikit-learn has them, so that ties at the xi boundary fall alike.
        # 0/0 and inf/inf are NaN: neither steep nor up nor down.
        ratio = plot[:-1] / plot[1:]
    steep_up, steep_down = ratio <= xi_complement, ratio >= 1 / xi_complement
    up_ends = _area_ends(steep_up, ratio > 1, min_samples)
    down_ends = _area_ends(steep_down, ratio < 1, min_samples)
    steep_at = np.flatnonzero(steep_up | steep_down)

    downs = _DownAreas()
    clusters: List[Tuple[int, int]] = []
    position, mib = 0, 0.0
    while True:
        k = int(np.searchsorted(steep_at, position))
        if k == steep_at.shape[0]:
            return clusters
        start = int(steep_at[k])
        mib = max(mib, float(plot[position:start + 1].max()))
        downs.raise_mib(mib, plot, xi_complement)
        if steep_down[start]:
            end = int(down_ends[start])
            downs.append(start, end)
        else:
            end = int(up_ends[start])
            clusters += _clusters_at_up_area(
                plot, pred_at, downs, (start, end), xi_complement, min_cluster_size)
        position = end + 1
        mib = float(plot[position])


def _leaf_labels(clusters: List[Tuple[int, int]], order: IntArray) -> IntArray:
    """Labels from the clusters that overlap no cluster listed before them, in list order
    (the innermost come first); points in none of those are noise (-1)."""
    starts: List[int] = []
    ends: List[int] = []
    leaves = []
    for start, end in clusters:
        # The accepted clusters are disjoint, so sorted by start they are sorted by end too.
        i = bisect.bisect_right(starts, end)
        if i and ends[i - 1] >= start:
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        leaves.append((start, end))
    in_plot = np.full(order.shape[0], -1, dtype=np.int64)
    for label, (start, end) in enumerate(leaves):
        in_plot[start:end + 1] = label
    labels = np.empty(order.shape[0], dtype=np.int64)
    labels[order] = in_plot
    return labels


def xi_clusters(
    reachability: npt.ArrayLike,
    predecessor: npt.ArrayLike,
    ordering: npt.ArrayLike,
    min_samples: float,
    min_cluster_size: Optional[float] = None,
    xi: float = 0.05,
    predecessor_correction: bool = True,
) -> Tuple[IntArray, IntArray]:
    """Clusters of an OPTICS plot by the Xi steep-area method, and the labels of its leaves.

    A cluster starts in a steep down area and ends in a steep up area of the plot, where a
    point is steep when its reachability and its successor's differ by a factor of
    ``1 - xi`` or more. This is ``sklearn.cluster.cluster_optics_xi``, with the same results.

    Parameters
    ----------
    reachability : array of shape (n_samples,)
        OPTICS' ``reachability_``, by point; inf allowed.
    predecessor : array of shape (n_samples,)
        OPTICS' ``predecessor_``, by point, -1 for none.
    ordering : array of shape (n_samples,)
        OPTICS' ``ordering_``, a permutation of the point indices.
    min_samples : int >= 2, or float in (0, 1]
        As given to OPTICS; a float is a fraction of n_samples, rounded down, at least 2.
        A steep area holds at most ``min_samples`` consecutive non-steep points.
    min_cluster_size : int >= 2, float in (0, 1], or None
        The fewest points in a cluster, as ``min_samples``; None means ``min_samples``.
    xi : float in (0, 1)
        The steepness that makes a cluster boundary.
    predecessor_correction : bool
        Whether to trim cluster ends by the OPTICS predecessors (Schubert & Gertz 2018).

    Returns
    -------
    labels : int64 array of shape (n_samples,)
        The leaf cluster of each point (the clusters that contain no other one, taken
        innermost first), -1 for a point in none.
    clusters : int64 array of shape (n_clusters, 2)
        ``[start, end]`` positions in the ordering, inclusive: the whole hierarchy, a cluster
        listed after the clusters nested in it (``cluster_hierarchy_``). Empty, shape (0, 2),
        when there is none (scikit-learn returns shape (0,) then).
    """
    reach = _distances(reachability, "reachability", None)
    n_samples = reach.shape[0]
    pred = _predecessors(predecessor, n_samples)
    order = _ordering(ordering, n_samples)
    samples = _sample_count(min_samples, "min_samples", n_samples)
    smallest = _sample_count(
        samples if min_cluster_size is None else min_cluster_size, "min_cluster_size", n_samples)
    xi_float = _xi_value(xi)
    if not isinstance(predecessor_correction, (bool, np.bool_)):
        raise ValueError(
            "The 'predecessor_correction' parameter of xi_clusters must be a bool. "
            f"Got {predecessor_correction!r} instead."
        )
    pred_at = None
    if predecessor_correction:
        # Each plot position's predecessor, as a plot position too (-1 for none).
        position = np.empty(n_samples + 1, dtype=np.int64)
        position[order] = np.arange(n_samples)
        position[-1] = -1
        pred_at = position[pred[order]]
    clusters = _xi_hierarchy(reach[order], pred_at, xi_float, samples, smallest)
    hierarchy = np.array(clusters, dtype=np.int64).reshape(-1, 2)
    return _leaf_labels(clusters, order), hierarchy
