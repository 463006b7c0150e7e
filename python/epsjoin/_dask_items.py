"""Counts on Dask split by work items (epsjoin.dask.count; issue 47's high dimensions).

Where the slabs' halos would hold most of the points (high d: eps is wide against any one
coordinate's spread), every worker takes all the points and counts its share of the join's work
items, items i, i + S, i + 2S, ... of the workload every share builds alike from the same
points (the library's ``join_options::share``, mpi-join's ``--split items``). The shares' counts
add up to the one-node counts, total and per point, and no distance is computed twice.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from . import _epsjoin
from ._device import to_host
from ._partition import SlabPlan
from .dask import _settings, da, dask

#: The halo fraction above which ``split="auto"`` shares work items (mpi-join's rule).
ITEMS_ABOVE_HALO = 0.5


def halo_fraction(plan: SlabPlan, sample: np.ndarray) -> float:
    """The fraction of the sampled points that the slabs would send to more than one slab."""
    if plan.n_slabs < 2 or len(sample) == 0:
        return 0.0
    first, last = plan.halo_slabs(sample)
    return float(np.mean(last > first))


def check_split(split: str) -> None:
    if split not in ("auto", "slabs", "items"):
        raise ValueError(f"split must be 'auto', 'slabs' or 'items', got {split!r}")


def chosen_split(split: str, plan: SlabPlan, sample: np.ndarray, items_allowed: bool
                 ) -> Tuple[bool, Dict[str, Any]]:
    """(whether every task holds all the points and takes a share of the work, the stats that
    say so: ``split``, ``halo_fraction`` and ``reason``). ``"auto"`` shares where the slabs
    would send more than half of the sampled points to more than one slab, and
    `items_allowed`."""
    halo = halo_fraction(plan, sample)
    shared = split == "items" or (split == "auto" and items_allowed and halo > ITEMS_ABOVE_HALO)
    reason = f"slabs would put {halo:.3g} of the sampled points in halos"
    if split == "auto":
        reason += f"; items above {ITEMS_ABOVE_HALO}"
    return shared, {"split": "items" if shared else "slabs", "halo_fraction": halo,
                    "reason": reason}


def _share_counts(points: np.ndarray, eps: float, include_self: bool, options: Dict[str, Any],
                  index: int, shares: int) -> np.ndarray:
    settings = _settings(options)
    settings.share_index = index
    settings.share_count = shares
    _, rows, _ = _epsjoin.neighbor_counts(points, None, float(eps), bool(include_self), True,
                                          settings)
    assert rows is not None  # asked per row
    return rows.astype(np.int64)


def _summed(*parts: np.ndarray) -> np.ndarray:
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


def _host_concatenated(*blocks: Any) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate([to_host(b) for b in blocks]))


def host_points(X: Any) -> Any:
    """Every point of X in host memory, one C-contiguous array, as a ``dask.delayed``: what
    each task of a shared split holds (CuPy chunks copied: the library shares work items of
    host points)."""
    return dask.delayed(_host_concatenated)(*X.to_delayed().ravel())


def item_counts(X: Any, eps: float, include_self: bool, options: Dict[str, Any],
                shares: int, whole: Any = None) -> Any:
    """Each point's neighbour count, the join shared by `shares` tasks that each hold every
    point, as a ``dask.array`` chunked as X's rows. `whole`: :func:`host_points` of X where
    the caller has it already."""
    whole = host_points(X) if whole is None else whole
    parts = [dask.delayed(_share_counts)(whole, eps, include_self, options, i, shares)
             for i in range(shares)]
    rows = da.from_delayed(dask.delayed(_summed)(*parts), shape=(int(X.shape[0]),),
                           dtype=np.int64)
    return rows.rechunk((X.chunks[0],))
