"""DBSCAN of precomputed distances (``metric="precomputed"``): the neighbourhoods are given, so
no join runs; the library's rules are applied to them with scipy's sparse graph tools."""

from __future__ import annotations

import warnings
from typing import Any, Optional, Tuple

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components


def neighbourhoods(D: Any, eps: float) -> scipy.sparse.csr_matrix:
    """Which points are within `eps` of which, from a dense distance matrix or a sparse graph
    as scikit-learn reads one: stored entries are distances (explicit zeros included), missing
    ones are beyond any radius, and each point is its own neighbour at the distance stored on
    the diagonal, 0 where none is."""
    G: Optional[scipy.sparse.csr_matrix] = None
    if bool(scipy.sparse.issparse(D)):  # bool(): no narrowing of D to a bare sparse base
        G = scipy.sparse.csr_matrix(D, copy=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.sparse.SparseEfficiencyWarning)
            G.setdiag(G.diagonal())
        data = G.data
    else:
        data = np.asarray(D)
    if (data < 0).any():
        raise ValueError("Negative values in data passed to precomputed distance matrix.")
    if G is None:
        return scipy.sparse.csr_matrix(data <= eps)
    G.data = (G.data <= eps).astype(np.int8)
    G.eliminate_zeros()
    return G


def cluster(G: scipy.sparse.csr_matrix, min_samples: int,
            weights: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Labels (int64) and core flags (bool) of DBSCAN over the neighbourhoods `G` (row i: the
    neighbours of i, itself included), by the library's rules: clusters numbered by their first
    core point, a border point in the cluster of its core neighbour of smallest index. An edge
    from a core point in either direction links (a radius graph is symmetric anyway)."""
    n = G.shape[0]
    if weights is None:
        mass = np.diff(G.indptr).astype(np.float64)
    else:
        mass = G @ weights
    core = mass >= min_samples
    labels = np.full(n, -1, dtype=np.int64)
    core_ids = np.flatnonzero(core)
    if len(core_ids) == 0:
        return labels, core
    links = G[core_ids][:, core_ids]
    _, component = connected_components(links, directed=True, connection="weak")
    # Components numbered in the order of their first core point.
    _, first = np.unique(component, return_index=True)
    number = np.empty(len(first), dtype=np.int64)
    number[component[np.sort(first)]] = np.arange(len(first))
    labels[core_ids] = number[component]
    # Each border point's smallest core neighbour, over edges from core points.
    from_core = G[core_ids].tocoo()
    nearest = np.full(n, n, dtype=np.int64)
    np.minimum.at(nearest, from_core.col, core_ids[from_core.row])
    border = ~core & (nearest < n)
    labels[border] = labels[nearest[border]]
    return labels, core
