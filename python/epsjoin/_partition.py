"""Slabs of like work, each with its halo: the library's planner (the cuts mpi-join and several
devices take), for joins split across processes or machines (Dask partitions)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _epsjoin
from ._validation import (MemorySize, _is_device_array, check_eps, check_points,
                          raise_if_not_finite, run_settings)

#: A point's own work in units of one result pair (its copy, its index entry, its row): the
#: library's measure (core/device_split.cpp).
_POINT_COST = 700.0


class SlabPlan:
    """Cuts of the points along one coordinate into slabs of about equal estimated work.

    Slab ``r`` holds the coordinates in ``[cuts[r - 1], cuts[r])`` (the first from -inf, the last
    to +inf). Its halo is the points of the other slabs within eps of it (with the library's
    margin for rounding): a join of a slab's own points against its own and halo points finds
    every neighbour of its own points, so slabs join apart and together give the one-node result.

    Attributes
    ----------
    dim : int
        The coordinate cut (the one of widest spread).
    cuts : ndarray of shape (n_slabs - 1,), float64
        Ascending cut points (equal cuts leave slabs empty: identical points).
    eps : float
    work : float
        All the points' estimated work (700 + neighbours a point, in pairs).
    """

    def __init__(self, dim: int, cuts: npt.ArrayLike, eps: float, work: float = 0.0) -> None:
        self.dim = int(dim)
        self.cuts = np.asarray(cuts, dtype=np.float64)
        self.eps = float(eps)
        self.work = float(work)
        reach = self.eps * (1 + 1e-6) + 1e-6 * np.abs(self.cuts)
        # Both increase with the cut: a point's halo slabs are two binary searches.
        self._upper = self.cuts + reach
        self._lower = self.cuts - reach

    @property
    def n_slabs(self) -> int:
        return int(self.cuts.shape[0]) + 1

    def slab_of(self, X: npt.ArrayLike) -> Any:
        """Each point's own slab (int64; a CuPy array for points on a device)."""
        x, xp = self._coordinate(X)
        return _bounds_passed(self.cuts, x, xp, "right")

    def halo_slabs(self, X: npt.ArrayLike) -> Tuple[Any, Any]:
        """(first, last), int64: the slabs ``first..last`` whose own points or halo hold each
        point; its own slab among them. CuPy arrays for points on a device, which are routed
        there (a Dask chunk's rows to their slabs)."""
        return self.routes(X)[1:]

    def routes(self, X: npt.ArrayLike) -> Tuple[Any, Any, Any]:
        """(own slab, first, last) of each point: :meth:`slab_of` and :meth:`halo_slabs` from
        one read of the coordinate."""
        x, xp = self._coordinate(X)
        home = _bounds_passed(self.cuts, x, xp, "right")
        first = xp.minimum(home, _bounds_passed(self._upper, x, xp, "left"))
        last = xp.maximum(home, _bounds_passed(self._lower, x, xp, "right"))
        return home, first, last

    def in_other_halos(self, X: npt.ArrayLike) -> Any:
        """Whether each point is in the halo of a slab other than its own (bool; a CuPy array
        for points on a device, so that one byte a point comes to the host)."""
        if self.cuts.size == 0:
            x, xp = self._coordinate(X)
            return xp.zeros(x.shape[0], dtype=bool)
        home, first, last = self.routes(X)
        return (first < home) | (last > home)

    def _coordinate(self, X: npt.ArrayLike) -> Tuple[Any, Any]:
        """(the cut coordinate of each point as float64, numpy or cupy: where they lie)."""
        if _is_device_array(X):
            from ._device import _Cupy

            cupy = _Cupy()
            A = cupy.asarray(X)
            column = A[:, self.dim] if A.ndim == 2 else A
            return column.astype(np.float64), cupy.xp
        A = np.asarray(X)
        return np.asarray(A[:, self.dim] if A.ndim == 2 else A, dtype=np.float64), np

    def __repr__(self) -> str:
        return (f"SlabPlan(dim={self.dim}, cuts={self.cuts.tolist()!r}, eps={self.eps!r}, "
                f"work={self.work!r})")


#: Up to this many bounds, a host point's place among them is counted by comparisons, one pass
#: over the points each, which beats a binary search a point (numpy's searchsorted: about 18 ns
#: a point at one bound, the comparisons about 1 ns a bound; routing a 2.5M-row chunk to 1 or 2
#: slabs 1.6x faster). On a device, searchsorted is one kernel either way.
_COMPARED_BOUNDS = 16


def _bounds_passed(bounds: np.ndarray, x: Any, xp: Any, side: str) -> Any:
    """How many of the ascending `bounds` each x has passed: those <= x (side "right"), or
    those < x (side "left"), as searchsorted counts them."""
    if bounds.size > _COMPARED_BOUNDS or xp is not np:
        return xp.searchsorted(xp.asarray(bounds), x, side=side).astype(np.int64)
    count = xp.zeros(x.shape, dtype=np.int64)
    for bound in bounds.tolist():
        count += (x >= bound) if side == "right" else (x > bound)
    return count


def plan_slabs(X: npt.ArrayLike, eps: float, n_slabs: int, *, n_points: Optional[int] = None,
               sample_size: Optional[int] = None, n_jobs: Optional[int] = None,
               memory_limit: MemorySize = None) -> SlabPlan:
    """Plans `n_slabs` slabs of `X`'s points (or of a sample of a larger set) of about equal
    estimated work at radius `eps`, as ``epsjoin mpi-join`` cuts its ranks' slabs.

    A point's work is 700 (its copy and index entry, in units of one pair) plus its neighbours
    at eps, estimated by joining a sample of the points (the library's, on `n_jobs` threads), so
    dense regions get narrower slabs.

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        The points, or a sample of them (then give `n_points`).
    eps : float
        The join's radius (> 0).
    n_slabs : int
        How many slabs (>= 1).
    n_points : int, default=None
        How many points `X` stands for (a sample of a larger set); ``None``: ``len(X)``.
    sample_size : int, default=None
        At most this many of `X` are joined for the estimate; ``None``: the library's default
        (200,000 up to 3-D, 20,000 above).

    Returns
    -------
    plan : SlabPlan
    """
    A = check_points(X, "X")
    eps = check_eps(eps)
    if not 0 < eps < np.inf:
        raise ValueError(f"eps must be a finite number > 0 to plan slabs, got {eps!r}")
    if isinstance(n_slabs, bool) or not isinstance(n_slabs, (int, np.integer)) or n_slabs < 1:
        raise ValueError(f"n_slabs must be an integer >= 1, got {n_slabs!r}")
    n = A.shape[0] if n_points is None else int(n_points)
    size = (200_000 if A.shape[1] <= 3 else 20_000) if sample_size is None else int(sample_size)
    if size < 1:
        raise ValueError(f"sample_size must be at least 1, got {sample_size!r}")
    settings = run_settings("auto", "float64", False, n_jobs, memory_limit, None, 0, None)
    try:
        dim, cuts, work, _, _ = _epsjoin.plan_slabs(A, size, n, eps, int(n_slabs), _POINT_COST,
                                                    settings)
    except ValueError:
        raise_if_not_finite(A, None)  # scikit-learn's words when that was the reason
        raise
    return SlabPlan(dim, cuts, eps, work)
