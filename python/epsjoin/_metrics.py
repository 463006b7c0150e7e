"""Metrics and periodic boxes for the joins (docs/metrics.md): names, boxes, distances."""

from __future__ import annotations

from typing import Any, List, Optional, cast

import numpy as np

# scikit-learn's and scipy's names of the metrics epsjoin computes.
_METRICS = {
    "euclidean": "euclidean", "l2": "euclidean",
    "manhattan": "manhattan", "l1": "manhattan", "cityblock": "manhattan",
    "chebyshev": "chebyshev", "linf": "chebyshev", "infinity": "chebyshev",
    "cosine": "cosine",
    "haversine": "haversine",
}


def metric_name(metric: Any) -> str:
    """The library's name of `metric`, or ValueError naming those it knows."""
    if not isinstance(metric, str) or metric not in _METRICS:
        raise ValueError(
            f"metric must be one of {sorted(_METRICS)}, got {metric!r}"
        )
    return _METRICS[metric]


def set_geometry(settings: Any, metric: Any, boxsize: Any, n_features: int) -> None:
    """Puts the metric and the periodic box (scipy's ``boxsize``: a number or one per feature)
    into the core's RunSettings."""
    settings.metric = metric_name(metric)
    if boxsize is None:
        settings.box = []
        return
    box = np.asarray(boxsize, dtype=np.float64)
    if box.ndim > 1 or (box.ndim == 1 and box.shape[0] != n_features):
        raise ValueError(f"boxsize must be a number or one side per feature ({n_features}), "
                         f"got shape {box.shape}")
    settings.box = [float(v) for v in np.broadcast_to(box, (n_features,))]


def pair_distances(X: np.ndarray, Y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   metric: str, box: Optional[List[float]]) -> np.ndarray:
    """Distances of the pairs (X[rows], Y[cols]) in `metric` (float64), minimum image in `box`."""
    a = np.asarray(X, dtype=np.float64)[rows]
    b = np.asarray(Y, dtype=np.float64)[cols]
    if metric == "cosine":
        dot = np.einsum("ij,ij->i", a, b)
        return cast(np.ndarray,
                    1.0 - dot / np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b)))
    if metric == "haversine":
        s_lat = np.sin((a[:, 0] - b[:, 0]) / 2)
        s_lon = np.sin((a[:, 1] - b[:, 1]) / 2)
        h = s_lat * s_lat + np.cos(a[:, 0]) * np.cos(b[:, 0]) * (s_lon * s_lon)
        return cast(np.ndarray, 2.0 * np.arcsin(np.minimum(1.0, np.sqrt(h))))
    diff = np.abs(a - b)
    if box:
        side = np.asarray(box)
        diff = np.minimum(diff, side - diff)
    if metric == "manhattan":
        return cast(np.ndarray, diff.sum(axis=1))
    if metric == "chebyshev":
        return cast(np.ndarray, diff.max(axis=1, initial=0.0))
    # Dimension by dimension, the order scipy's and scikit-learn's trees and the library sum
    # in, so the distances agree to the last bit (numpy's sum over an axis adds pairwise).
    total = np.zeros(diff.shape[0])
    for k in range(diff.shape[1]):
        total += diff[:, k] * diff[:, k]
    return np.sqrt(total)
