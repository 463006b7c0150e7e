"""DBSCAN on Dask, slab by slab (epsjoin.dask.dbscan; issue 47).

1. Each slab counts its own points' neighbours among its own and halo points: the core flags,
   exact because the halo holds every neighbour.
2. The flags go back to the chunks, and out again to the slabs beside the points (the same
   routing), so each slab knows which of its halo points are core.
3. Each slab joins its core points' edges (own and halo points) into components, each named by
   its smallest core id (its representative); a border point takes the component of its
   smallest-id core neighbour, the library's rule. Edges that cross slabs come out: each halo
   core point with its component here, each own core point other slabs see with its component.
4. One task unions the crossing edges (their number grows with the halos, not the points) and
   numbers the clusters by their smallest core id, as the one-node DBSCAN numbers them.
5. Each chunk maps its rows' representatives to those labels.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components

from . import _join, _radii
from ._partition import SlabPlan

Pieces = List[Tuple[Any, ...]]


def _gathered(pieces: Pieces) -> Tuple[np.ndarray, ...]:
    return tuple(np.concatenate([p[k] for p in pieces]) for k in range(len(pieces[0])))


def slab_core(pieces: Pieces, eps: float, min_samples: int,
              options: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(global ids, core flags) of the slab's own points."""
    ids, points, own = _gathered(pieces)
    mine = np.nonzero(own)[0]
    if mine.size == 0:
        return ids[mine], np.zeros(0, bool)
    counts = np.asarray(_radii.count(points[mine], eps, points, per_row=True, **options))
    return ids[mine], counts >= min_samples  # the point itself included, as scikit-learn counts


def route_flags(block_flags: np.ndarray, block: np.ndarray, plan: SlabPlan) -> List[np.ndarray]:
    """The flags of the rows `_route` sends each slab, in the same order."""
    first, last = plan.halo_slabs(block)
    return [block_flags[(first <= r) & (r <= last)] for r in range(plan.n_slabs)]


def slab_components(pieces: Pieces, flags: List[np.ndarray], plan: SlabPlan, eps: float,
                    options: Dict[str, Any]) -> Tuple[np.ndarray, ...]:
    """(own ids, their representatives or -1, crossing edges as two id arrays, the slab's
    representatives)."""
    ids, points, own = _gathered(pieces)
    core = np.concatenate(flags).astype(bool)
    mine = np.nonzero(own)[0]
    none = np.empty(0, np.int64)
    if mine.size == 0:
        return ids[mine], none, none, none, none
    indptr, indices = _join.neighbor_table(points[mine], eps, points, sort_indices=True,
                                           **options)
    rows = np.repeat(mine, np.diff(indptr))
    cols = indices.astype(np.int64)
    # Components of the core points over core-core edges of own points (a halo core point's
    # edges to other halo points are its own slab's to find).
    both = core[rows] & core[cols]
    n = ids.shape[0]
    graph = scipy.sparse.coo_matrix((np.ones(int(both.sum()), np.int8), (rows[both], cols[both])),
                                    shape=(n, n))
    _, component = connected_components(graph, directed=False)
    # A component's representative: its smallest core id (non-core points are singletons).
    rep_of = np.full(component.max() + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(rep_of, component[core], ids[core])
    rep = np.full(n, -1, dtype=np.int64)
    rep[core] = rep_of[component[core]]
    # Border points: the component of their smallest-id core neighbour (rows sorted by slab
    # position; ids ascend with it within one chunk, not across chunks, so take the minimum).
    labels = rep[mine].copy()
    border = ~core[rows] & core[cols]
    if border.any():
        b_rows, b_cols = rows[border], cols[border]
        key = ids[b_cols]
        order = np.lexsort((key, b_rows))
        b_rows, b_cols = b_rows[order], b_cols[order]
        firsts = np.concatenate([[True], b_rows[1:] != b_rows[:-1]])
        position = np.searchsorted(mine, b_rows[firsts])
        labels[position] = rep[b_cols[firsts]]
    # Crossing edges: each halo core point with its component here, and each own core point
    # that other slabs see with its own.
    first, last = plan.halo_slabs(points)
    home = plan.slab_of(points)
    seen_elsewhere = (first < home) | (last > home)
    crossing = core & (~own | seen_elsewhere)
    return (ids[mine], labels, ids[crossing], rep[crossing], np.unique(rep[core]))


def union(*crossings: Tuple[np.ndarray, ...]) -> Tuple[np.ndarray, np.ndarray]:
    """(every representative, sorted; its cluster label) from each slab's (crossing ids, their
    representatives, the slab's representatives): clusters merged over the crossing edges,
    numbered by their smallest core id."""
    reps = np.unique(np.concatenate([c[2] for c in crossings]))
    a = np.concatenate([c[0] for c in crossings])
    b = np.concatenate([c[1] for c in crossings])
    nodes = np.unique(np.concatenate([reps, a, b]))
    if nodes.size == 0:
        return reps, np.zeros(0, np.int64)
    ia, ib = np.searchsorted(nodes, a), np.searchsorted(nodes, b)
    graph = scipy.sparse.coo_matrix((np.ones(ia.size, np.int8), (ia, ib)),
                                    shape=(nodes.size, nodes.size))
    _, component = connected_components(graph, directed=False)
    root = np.full(component.max() + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(root, component, nodes)
    rep_root = root[component[np.searchsorted(nodes, reps)]]
    roots = np.unique(rep_root)
    return reps, np.searchsorted(roots, rep_root).astype(np.int64)


def chunk_labels(size: int, numbered: Tuple[np.ndarray, np.ndarray],
                 *pieces: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """A chunk's labels from the (offsets in the chunk, representatives) each slab sent it."""
    reps, labels = numbered
    out = np.full(size, -1, dtype=np.int64)
    for at, rep in pieces:
        clustered = rep >= 0
        out[at[clustered]] = labels[np.searchsorted(reps, rep[clustered])]
    return out
