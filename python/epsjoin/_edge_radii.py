"""The radii the grid cannot take, answered exactly beside it.

- eps = 0: the exact-duplicate search. A grid of cells of width 0 means nothing, and a tiny
  positive cell would make linear ids overflow; equal rows are found by sorting instead.
- eps = inf: every pair. Nothing to search; the table is all of them, refused up front when it
  cannot fit.
- a periodic box with eps above half a side: the minimum image is then no longer the only image
  within eps, which the core's image scheme relies on. The minimum-image distance (scipy's
  boxsize semantics) is computed for every pair in chunks, in two passes (count, fill).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._validation import raise_if_not_finite

# Values (query rows x points x features) one chunk of the periodic brute force holds: its
# float64 temporaries stay near 32 MiB whatever the sizes.
_CHUNK_VALUES = 1 << 22


def kind_of(eps: float, box: Sequence[float], metric: str) -> Optional[str]:
    """Which exact path a join at `eps` takes outside the core: "duplicates", "all", "box",
    or None for the core's own."""
    if eps == 0:
        return "duplicates"
    if math.isinf(eps):
        return "all"
    if box and eps > min(box) / 2:
        return "all" if eps >= widest(box, metric) * (1 + 1e-12) else "box"
    return None


def widest(box: Sequence[float], metric: str) -> float:
    """The largest minimum-image distance two points of the box can have."""
    half = np.asarray(box, dtype=np.float64) / 2
    if metric == "manhattan":
        return float(half.sum())
    if metric == "chebyshev":
        return float(half.max())
    return float(np.sqrt((half * half).sum()))


def wrap(X: np.ndarray, box: Sequence[float]) -> np.ndarray:
    """Query points folded into [0, L) as scipy folds them (floor, then one side's correction
    where the division rounded); X itself when every point lies inside already."""
    side = np.asarray(box, dtype=X.dtype)
    if not ((X < 0) | (X >= side)).any():
        return X
    out = X - np.floor(X / side) * side
    out = np.where(out >= side, out - side, out)
    return np.ascontiguousarray(np.where(out < 0, out + side, out))


def check_in_box(D: np.ndarray, box: Sequence[float], what: str) -> None:
    """The core's refusal of a point outside the box, in its words."""
    side = np.asarray(box, dtype=np.float64)
    outside = (D < 0) | (D >= side)
    if outside.any():
        i, k = (int(v[0]) for v in np.nonzero(outside))
        raise ValueError(f"{what}: point {i}, dimension {k} is {D[i, k]}; coordinates must lie "
                         f"in [0, {side[k]:g}) in the periodic box")


def host_limit(settings: Any) -> int:
    """memory_limit, or the machine's memory when there is none."""
    limit = int(getattr(settings, "host_memory_bytes", 0) or 0)
    if limit > 0:
        return limit
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def require(n_rows: int, nnz: int, per_pair: float, settings: Any, what: str) -> None:
    """MemoryError before a table of `nnz` entries (and what the caller adds a pair) is
    allocated, in Python's terms."""
    needed = 8 * (n_rows + 1) + (4 + per_pair) * nnz
    limit = host_limit(settings)
    if needed > limit:
        raise MemoryError(
            f"{what}: the result of {nnz} pairs needs {int(needed)} bytes of host memory but "
            f"{limit} are {'allowed (memory_limit)' if settings.host_memory_bytes else 'there'}: "
            "count it instead (epsjoin.count), or raise memory_limit="
        )


def _keys(A: np.ndarray, metric: str) -> np.ndarray:
    # Cosine distance 0 is one direction: rows equal once divided by their norms.
    if metric == "cosine":
        A = A / np.linalg.norm(A, axis=1, keepdims=True)
    return A + 0.0  # -0.0 and 0.0 are one coordinate


def _groups(Q: np.ndarray, D: Optional[np.ndarray], metric: str) -> Tuple[np.ndarray, np.ndarray]:
    """For each query and each point, the id of its group of equal rows."""
    keys = _keys(Q, metric) if D is None else np.vstack([_keys(Q, metric), _keys(D, metric)])
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return (inverse, inverse) if D is None else (inverse[:Q.shape[0]], inverse[Q.shape[0]:])


class _Duplicates:
    def __init__(self, Q: np.ndarray, D: Optional[np.ndarray], metric: str, drop_self: bool):
        gq, gd = _groups(Q, D, metric)
        self.order = np.argsort(gd, kind="stable")  # ids by group, ascending within one
        size = np.bincount(gd, minlength=int(max(gq.max(initial=-1), gd.max(initial=-1))) + 1)
        self.start = (np.cumsum(size) - size)[gq]
        self.full = size[gq].astype(np.int64)
        self.drop_self = drop_self
        self.lens = self.full - 1 if drop_self else self.full

    def indices(self) -> np.ndarray:
        total = int(self.full.sum())
        first = np.cumsum(self.full) - self.full
        pos = np.repeat(self.start - first, self.full) + np.arange(total)
        ids = self.order[pos]
        if self.drop_self:
            ids = ids[ids != np.repeat(np.arange(self.full.shape[0]), self.full)]
        return ids.astype(np.uint32)


def _all_lens(n: int, m: int, drop_self: bool) -> np.ndarray:
    return np.full(n, m - 1 if drop_self else m, dtype=np.int64)


def _all_indices(n: int, m: int, drop_self: bool) -> np.ndarray:
    ids = np.tile(np.arange(m, dtype=np.uint32), n)
    if drop_self:
        ids = ids.reshape(n, m)[~np.eye(n, m, dtype=bool)].reshape(-1)
    return ids


def _box_within(Qc: np.ndarray, D: np.ndarray, eps: float, side: np.ndarray,
                metric: str) -> np.ndarray:
    """Which (query, point) pairs of a chunk lie within eps by the minimum image, compared as
    scipy compares them (squared for the euclidean metric)."""
    diff = np.abs(Qc[:, None, :].astype(np.float64) - D[None, :, :])
    diff = np.minimum(diff, side - diff)
    if metric == "manhattan":
        near: np.ndarray = diff.sum(axis=2) <= eps
    elif metric == "chebyshev":
        near = diff.max(axis=2) <= eps
    else:
        near = (diff * diff).sum(axis=2) <= eps * eps
    return near


def _box_chunks(Q: np.ndarray, D: np.ndarray) -> range:
    step = max(1, _CHUNK_VALUES // max(1, D.shape[0] * D.shape[1]))
    return range(0, Q.shape[0], step)


def _box_rows(Q: np.ndarray, D: np.ndarray, eps: float, box: Sequence[float], metric: str,
              drop_self: bool, report: Callable[[float], None],
              fill: bool) -> Tuple[np.ndarray, List[np.ndarray]]:
    side = np.asarray(box, dtype=np.float64)
    D64 = D.astype(np.float64)
    chunks = _box_chunks(Q, D)
    lens = np.empty(Q.shape[0], dtype=np.int64)
    parts: List[np.ndarray] = []
    for k, start in enumerate(chunks):
        stop = min(start + chunks.step, Q.shape[0])
        within = _box_within(Q[start:stop], D64, eps, side, metric)
        if drop_self:
            within[np.arange(stop - start), np.arange(start, stop)] = False
        lens[start:stop] = within.sum(axis=1)
        if fill:
            parts.append(np.nonzero(within)[1].astype(np.uint32))
        report((k + 1) / max(1, len(chunks)))
    return lens, parts


def _no_report(_: float) -> None:
    pass


def _stats(kind: str, pairs: int, seconds: float, settings: Any) -> Dict[str, Any]:
    names = {"duplicates": "exact-duplicates", "all": "all-pairs", "box": "periodic-brute"}
    return {"engine": names[kind], "pairs": int(pairs), "seconds": seconds, "stages": {},
            "threads": 1, "precision": getattr(settings, "precision", "f64")}


def _check_points(X: np.ndarray, Y: Optional[np.ndarray], metric: str) -> None:
    """The refusals the core makes before a join, which these paths do not reach: non-finite
    points (scikit-learn's words), zero rows for cosine, angles out of range for haversine."""
    raise_if_not_finite(X, Y)
    for A, what in ((X, "the query dataset A" if Y is not None else "the dataset"),
                    (Y, "the indexed dataset B")):
        if A is None or A.shape[0] == 0:
            continue
        if metric == "cosine" and not A.any(axis=1).all():
            i = int(np.nonzero(~A.any(axis=1))[0][0])
            raise ValueError(f"{what}: point {i} is the zero vector; the cosine distance is "
                             "undefined for it")
        if metric == "haversine" and ((np.abs(A[:, 0]) > np.pi / 2).any()
                                      or (np.abs(A[:, 1]) > 2 * np.pi).any()):
            raise ValueError(f"{what}: latitudes lie in [-pi/2, pi/2] and longitudes in "
                             "[-2 pi, 2 pi] radians (column 0 is the latitude)")


def _prepare(kind: str, X: np.ndarray, Y: Optional[np.ndarray], settings: Any
             ) -> Tuple[np.ndarray, np.ndarray, bool]:
    _check_points(X, Y, settings.metric)
    D = X if Y is None else Y
    if settings.box:
        check_in_box(D, settings.box, "the dataset" if Y is None else "the indexed dataset B")
        X = X if Y is None else wrap(X, settings.box)
    return X, D, Y is None


def lens_of(kind: str, X: np.ndarray, Y: Optional[np.ndarray], eps: float, include_self: bool,
            settings: Any, report: Callable[[float], None] = _no_report) -> np.ndarray:
    """Each query's neighbour count, int64."""
    Q, D, self_join = _prepare(kind, X, Y, settings)
    drop = self_join and not include_self
    if kind == "duplicates":
        lens: np.ndarray = _Duplicates(Q, None if self_join else D, settings.metric, drop).lens
        return lens
    if kind == "all":
        return _all_lens(Q.shape[0], D.shape[0], drop)
    return _box_rows(Q, D, eps, settings.box, settings.metric, drop, report, False)[0]


def table(kind: str, X: np.ndarray, Y: Optional[np.ndarray], eps: float, include_self: bool,
          settings: Any, per_pair: float = 0.0,
          report: Callable[[float], None] = _no_report) -> Tuple[np.ndarray, np.ndarray]:
    """(indptr uint64, indices uint32) with rows sorted by id, as the core's table."""
    Q, D, self_join = _prepare(kind, X, Y, settings)
    drop = self_join and not include_self
    n, m = Q.shape[0], D.shape[0]
    if kind == "duplicates":
        dup = _Duplicates(Q, None if self_join else D, settings.metric, drop)
        lens = dup.lens
        require(n, int(lens.sum()), per_pair, settings, "eps=0")
        indices = dup.indices()
    elif kind == "all":
        lens = _all_lens(n, m, drop)
        require(n, int(lens.sum()), per_pair, settings, "eps=inf")
        indices = _all_indices(n, m, drop)
    else:
        lens, _ = _box_rows(Q, D, eps, settings.box, settings.metric, drop,
                            lambda f: report(f / 2), False)
        require(n, int(lens.sum()), per_pair, settings, "eps above half the periodic box")
        _, parts = _box_rows(Q, D, eps, settings.box, settings.metric, drop,
                             lambda f: report(0.5 + f / 2), True)
        indices = np.concatenate(parts) if parts else np.empty(0, dtype=np.uint32)
    indptr = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(lens, out=indptr[1:])
    return indptr, indices


# The core's calls, answered here (their signatures: _epsjoin's).
def _progress(settings: Any) -> Callable[[float], None]:
    report = getattr(settings, "progress", None)
    return report if callable(report) else _no_report


def neighbor_table(kind: str, X: np.ndarray, Y: Optional[np.ndarray], eps: float,
                   include_self: bool, sort_indices: bool, settings: Any,
                   added_bytes_per_pair: float = 0.0) -> Tuple[np.ndarray, np.ndarray, Any]:
    clock = time.perf_counter()
    indptr, indices = table(kind, X, Y, eps, include_self, settings, added_bytes_per_pair,
                            _progress(settings))
    return indptr, indices, _stats(kind, len(indices), time.perf_counter() - clock, settings)


def neighbor_counts(kind: str, X: np.ndarray, Y: Optional[np.ndarray], eps: float,
                    include_self: bool, per_row: bool, settings: Any) -> Tuple[int, Any, Any]:
    clock = time.perf_counter()
    lens = lens_of(kind, X, Y, eps, include_self, settings, _progress(settings))
    total = int(lens.sum())
    stats = _stats(kind, total - (X.shape[0] if Y is None and include_self else 0),
                   time.perf_counter() - clock, settings)
    return total, (lens.astype(np.uint64) if per_row else None), stats


def pairs_from_rows(kind: str, X: np.ndarray, Y: Optional[np.ndarray], eps: float,
                    include_self: bool, sort: bool, settings: Any,
                    once: bool = True) -> Tuple[np.ndarray, Any]:
    clock = time.perf_counter()
    indptr, indices = table(kind, X, Y, eps, include_self, settings, 8.0, _progress(settings))
    rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(indptr).astype(np.int64))
    cols = indices.astype(np.int64)
    if Y is None:  # each unordered pair once, i < j (i <= j with the diagonal)
        keep = rows <= cols if include_self else rows < cols
        rows, cols = rows[keep], cols[keep]
    out = np.stack([rows, cols], axis=1)
    return out, _stats(kind, 2 * len(out), time.perf_counter() - clock, settings)


def count_radii(X: np.ndarray, Y: Optional[np.ndarray], radii: np.ndarray, include_self: bool,
                settings: Any, core: Callable[..., Any]) -> Tuple[np.ndarray, Any]:
    """counts[i, k] within radii[k] (int64): the radii the core takes from one core join at the
    largest of them, the others here."""
    counts = np.empty((X.shape[0], radii.shape[0]), dtype=np.int64)
    kinds = [kind_of(float(r), list(settings.box), settings.metric) for r in radii]
    by_core = [k for k, kind in enumerate(kinds) if kind is None]
    stats: Any = _stats("all", 0, 0.0, settings)
    if by_core:
        rows, _, stats = core(X, Y, np.ascontiguousarray(radii[by_core]), include_self, settings)
        counts[:, by_core] = rows
    for k, kind in enumerate(kinds):
        if kind is not None:
            counts[:, k] = lens_of(kind, X, Y, float(radii[k]), include_self, settings)
    return counts, stats
