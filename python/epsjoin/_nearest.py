"""The k nearest within a radius (the library's nearest_sink) as scipy's ``cKDTree.query``
gives a radius-bounded search: (n, k) arrays, nearest first, a missing neighbour at distance
inf with index n (the number of points searched)."""

from __future__ import annotations

import numbers
from typing import Any, Tuple

import numpy as np


def check_k(k: Any, name: str = "k") -> int:
    """k as an int >= 1, or ValueError / TypeError in scikit-learn's words."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} does not take {type(k).__name__} value, enter integer value")
    if k < 1:
        raise ValueError(f"Expected {name} > 0. Got {k}")
    return int(k)


def padded(offsets: np.ndarray, ids: np.ndarray, distances: np.ndarray, k: int,
           n_points: int) -> Tuple[np.ndarray, np.ndarray]:
    """The rows of a nearest table (at most k each) as dense (rows, k) arrays: float64
    distances padded with inf, int64 indices padded with `n_points`."""
    rows = len(offsets) - 1
    starts = offsets.astype(np.int64)
    lengths = np.diff(starts)
    dist = np.full((rows, k), np.inf)
    ind = np.full((rows, k), n_points, dtype=np.int64)
    # Each entry's place in its row: its position less its row's start.
    row_of = np.repeat(np.arange(rows), lengths)
    place = np.arange(len(ids)) - np.repeat(starts[:-1], lengths)
    dist[row_of, place] = distances
    ind[row_of, place] = ids
    return dist, ind
