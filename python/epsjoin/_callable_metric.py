"""Neighbourhoods under a metric given as a Python callable, which no engine can run.

The callable is called once per pair of points, as scikit-learn's brute-force search and
``scipy.spatial.distance.cdist`` call it: n^2 calls, so this serves small data and custom
distances, not speed. Rows are computed in blocks so that at most ``_BLOCK_BYTES`` of distances
are held at once, and only the entries within the radius are kept, as a sparse radius graph
that the precomputed path then clusters.
"""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional

import numpy as np
import scipy.sparse

_BLOCK_BYTES = 16 << 20


def radius_graph(X: Any, eps: float, metric: Callable[..., Any],
                 metric_params: Optional[Mapping[str, Any]]) -> scipy.sparse.csr_matrix:
    """The (n, n) CSR matrix of the distances ``metric(X[i], X[j], **metric_params)`` that are
    at most `eps` (explicit zeros kept: a stored entry is a neighbour, as in scikit-learn's
    radius graphs). A result that is not a finite number >= 0 raises ValueError naming the
    pair."""
    # Imported here: only a callable metric needs it, and `import epsjoin.DBSCAN` stays light.
    from scipy.spatial.distance import cdist

    points = np.asarray(X.todense()) if bool(scipy.sparse.issparse(X)) else np.asarray(X)
    params = dict(metric_params or {})
    n = points.shape[0]
    rows_per_block = max(1, _BLOCK_BYTES // (8 * max(n, 1)))
    data: List[np.ndarray] = []
    indices: List[np.ndarray] = []
    counts = np.zeros(n, dtype=np.int64)
    for start in range(0, n, rows_per_block):
        block = points[start:start + rows_per_block]
        D = np.asarray(cdist(block, points, lambda u, v: metric(u, v, **params)),
                       dtype=np.float64)
        _check_distances(D, start)
        rows, cols = np.nonzero(D <= eps)
        data.append(D[rows, cols])
        indices.append(cols)
        counts[start:start + len(block)] = np.bincount(rows, minlength=len(block))
    indptr = np.concatenate(([0], np.cumsum(counts)))
    return scipy.sparse.csr_matrix(
        (np.concatenate(data) if data else np.zeros(0), np.concatenate(indices) if indices
         else np.zeros(0, dtype=np.int64), indptr), shape=(n, n))


def _check_distances(D: np.ndarray, first_row: int) -> None:
    bad = ~np.isfinite(D) | (D < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"the metric gave {D[i, j]!r} for samples {first_row + i} and {j}; a "
                         "distance must be a finite number >= 0")
