"""Neighbour counts within several radii from one join (scipy's count_neighbors with an array r)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from . import _epsjoin
from ._join import _check_self, _run, _with_run_options
from ._metrics import set_geometry
from ._validation import Devices, MemorySize, check_pair, run_settings


@_with_run_options
def count_radii(
    X: Any,
    radii: Any,
    Y: Any = None,
    *,
    include_self: bool = False,
    engine: str = "auto",
    precision: Any = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Mapping[str, Any]] = None,
    return_stats: bool = False,
    metric: str = "euclidean",
    boxsize: Any = None,
) -> Any:
    """Each query's neighbour count within every radius of `radii`, from one join at the largest.

    ``counts[i, k]`` is the number of points within ``radii[k]`` of ``X[i]`` (self excluded
    unless ``include_self``): the same as :func:`count` with ``per_row=True`` at each radius, and
    ``counts.sum(axis=0)`` is what scipy's ``cKDTree(X).count_neighbors(cKDTree(Y), radii)``
    returns (with ``include_self=True`` for a self-join).

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
    radii : array-like of shape (n_radii,)
        Radii, each finite and > 0, in any order.
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    include_self : bool, default=False
        Self-join only: count each point as its own neighbour.
    {run_options}

    Returns
    -------
    counts : ndarray of shape (n_queries, n_radii), dtype int64
    stats : dict
        Only with ``return_stats=True``.
    """
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    r = np.ascontiguousarray(np.atleast_1d(np.asarray(radii, dtype=np.float64)))
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"radii must be a non-empty 1-D list of numbers, got shape {r.shape}")
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split)
    set_geometry(settings, metric, boxsize, X.shape[1])
    rows, _, stats = _run(_epsjoin.neighbor_counts_radii, X, Y, r, bool(include_self), settings)
    counts = rows.astype(np.int64)
    return (counts, stats) if return_stats else counts
