"""EpsIndex's scipy-style queries beyond one radius: a radius per query, and count_neighbors with
weights and bins (scipy's cKDTree.count_neighbors)."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Tuple

import numpy as np

from ._metrics import pair_distances

# scipy's p of the metrics it shares with epsjoin.
_P_OF = {"euclidean": 2.0, "manhattan": 1.0, "chebyshev": float("inf")}


def check_p(p: Any, metric: str) -> None:
    """scipy's `p`, when given, must name the index's own metric (cosine and haversine take
    none, or 2)."""
    if p is None:
        return
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"p must be a number, got {type(p).__name__}")
    if float(p) != _P_OF.get(metric, 2.0):
        raise ValueError(f"p={p!r} is not this index's metric ({metric!r}); build an EpsIndex "
                         f"with the metric of p (1: 'manhattan', 2: 'euclidean', inf: "
                         f"'chebyshev')")


def within(Q: np.ndarray, D: np.ndarray, rows: np.ndarray, cols: np.ndarray, radius: np.ndarray,
           metric: str) -> np.ndarray:
    """Which pairs (Q[rows], D[cols]) lie within radius[rows]: squared euclidean distances
    against squared radii, as the joins and scipy compare them."""
    if metric in ("euclidean", "manhattan", "chebyshev"):
        diff = np.abs(Q[rows].astype(np.float64) - D[cols])
        r = radius[rows]
        if metric == "manhattan":
            near: np.ndarray = diff.sum(axis=1) <= r
        elif metric == "chebyshev":
            near = diff.max(axis=1, initial=0.0) <= r
        else:
            near = (diff * diff).sum(axis=1) <= r * r
        return near
    near = pair_distances(Q, D, rows, cols, metric, None) <= radius[rows]
    return near


def rows_by_radius(Q: np.ndarray, radius: np.ndarray,
                   rows_at: Callable[[np.ndarray, float], Tuple[np.ndarray, np.ndarray]],
                   D: np.ndarray, metric: str) -> Tuple[np.ndarray, np.ndarray]:
    """The table (offsets int64, ids) of queries Q, each within its own radius. Queries at 0,
    at inf and between are answered apart (rows_at(queries, eps) gives a sorted table); the
    last from one table at their largest radius, filtered pair by pair."""
    n = Q.shape[0]
    lens = np.zeros(n, dtype=np.int64)
    pieces = []
    groups = [radius == 0, np.isinf(radius), (radius > 0) & np.isfinite(radius)]
    for k, mask in enumerate(groups):
        which = np.nonzero(mask)[0]
        if which.size == 0:
            continue
        eps = [0.0, float("inf"), float(radius[which].max())][k]
        offsets, ids = rows_at(Q[which], eps)
        local = np.repeat(np.arange(which.size), np.diff(offsets))
        if k == 2:
            keep = within(Q[which], D, local, ids.astype(np.int64), radius[which], metric)
            local, ids = local[keep], ids[keep]
        lens[which] = np.bincount(local, minlength=which.size)
        pieces.append((which[local], ids))
    rows = np.concatenate([p[0] for p in pieces]) if pieces else np.empty(0, np.int64)
    ids = np.concatenate([p[1] for p in pieces]) if pieces else np.empty(0, np.intp)
    order = np.argsort(rows, kind="stable")  # row by row, each row's ids still sorted
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets, ids[order]


def broadcast_radii(r: Any, shape: Tuple[int, ...]) -> np.ndarray:
    """scipy's rule: r broadcasts to the shape of the queries (x.shape[:-1])."""
    radius = np.asarray(r)
    if radius.dtype.kind not in "iuf":
        raise TypeError(f"r must be a number or an array of numbers, got {radius.dtype}")
    radius = np.broadcast_to(radius.astype(np.float64), shape).reshape(-1) + 0.0
    if np.isnan(radius).any() or (radius < 0).any():
        raise ValueError("r must be >= 0 (0 finds exact duplicates, inf every point)")
    return radius


def _weights(weights: Any, same: bool, n_self: int, n_other: int
             ) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    if weights is None:
        return None, None
    if isinstance(weights, tuple):
        w1, w2 = weights
    else:
        if not same:
            raise ValueError("Two different trees are used. Specify weights for both in a tuple.")
        w1 = w2 = weights
    w1 = None if w1 is None else np.asarray(w1, dtype=np.float64)
    w2 = None if w2 is None else np.asarray(w2, dtype=np.float64)
    for w, n, name in ((w1, n_self, "self"), (w2, n_other, "other")):
        if w is not None and w.shape != (n,):
            raise ValueError(f"the weights of {name} must have shape ({n},), got {w.shape}")
    return w1, w2


def count_neighbors(
    D: np.ndarray, other: np.ndarray, same: bool, r: Any, weights: Any, cumulative: bool,
    count_radii: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    table: Callable[[np.ndarray, float, np.ndarray], Tuple[np.ndarray, np.ndarray]],
) -> Any:
    """scipy's count_neighbors of D against other. count_radii(X, radii, Y) gives per-row counts
    of X against Y; table(X, eps, Y) a CSR table (offsets, ids)."""
    radius = np.asarray(r, dtype=np.float64) + 0.0
    if radius.ndim > 1:
        raise ValueError("r must be either a single value or a one-dimensional array of values")
    radii = np.atleast_1d(radius)
    if np.isnan(radii).any() or (radii < 0).any():
        raise ValueError("r must be >= 0 (0 finds exact duplicates, inf every pair)")
    if not cumulative and (np.diff(radii) < 0).any():
        raise ValueError("r must be non-decreasing for non-cumulative counting.")
    w1, w2 = _weights(weights, same, D.shape[0], other.shape[0])
    if radii.size == 0:
        result: np.ndarray = np.zeros(0, dtype=np.int64 if weights is None else np.float64)
    elif w1 is None and w2 is None:
        result = count_radii(D, radii, other).sum(axis=0)
    elif w2 is None:
        result = w1 @ count_radii(D, radii, other)
    elif w1 is None:
        result = w2 @ count_radii(other, radii, D)
    else:
        # Both sides weighted: a join per radius, each pair's weight product summed.
        result = np.empty(radii.size)
        for k, eps in enumerate(radii):
            offsets, ids = table(D, float(eps), other)
            rows = np.repeat(np.arange(D.shape[0]), np.diff(offsets))
            result[k] = w1 @ np.bincount(rows, weights=w2[ids], minlength=D.shape[0])
    if not cumulative:
        result = np.diff(result, prepend=result.dtype.type(0))
    if radius.ndim == 0:
        return int(result[0]) if weights is None else np.float64(result[0])
    return result
