"""DBSCAN on Dask, slab by slab (epsjoin.dask.dbscan; issue 47).

1. Each slab counts its own points' neighbours among its own and halo points: the core flags,
   exact because the halo holds every neighbour.
2. The flags go back to the chunks, and out again to the slabs beside the points (the same
   routing), so each slab knows which of its halo points are core.
3. Each slab clusters its own and halo points with the library's DBSCAN (O(n) memory): own
   points' core flags are exact there, so each local cluster is part of one true cluster, named
   by its smallest core id (its representative). Own points near a cut are looked at again with
   the exact flags: their edges to true core points of the halo cross slabs, and a border point
   there takes its smallest-id true core neighbour, the library's rule. Each own core point
   other slabs see goes out with its representative.
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
from .dask import _gathered

Pieces = List[Tuple[Any, ...]]


def slab_core(pieces: Pieces, eps: float, min_samples: int,
              options: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(global ids, core flags) of the slab's own points."""
    ids, points, own = _gathered(pieces)
    mine = np.nonzero(own)[0]
    if mine.size == 0:
        return ids[mine], np.zeros(0, bool)
    counts = np.asarray(_radii.count(points, eps, per_row=True, include_self=True, **options))
    return ids[mine], counts[mine] >= min_samples  # itself included, as scikit-learn counts


def route_flags(block_flags: np.ndarray, block: np.ndarray, plan: SlabPlan) -> List[np.ndarray]:
    """The flags of the rows `_route` sends each slab, in the same order."""
    first, last = plan.halo_slabs(block)
    return [block_flags[(first <= r) & (r <= last)] for r in range(plan.n_slabs)]


def slab_components(pieces: Pieces, flags: List[np.ndarray], plan: SlabPlan, eps: float,
                    min_samples: int, options: Dict[str, Any]) -> Tuple[np.ndarray, ...]:
    """(own ids, their representatives or -1, crossing edges as two id arrays, the slab's
    representatives).

    The library's DBSCAN of the slab's points (own and halo) gives its clusters: own points'
    core flags are exact there, a halo point's may be missing (its neighbourhood is cut), so a
    local cluster is part of one true cluster, named by its smallest core id (the slab's points
    are in id order). Own points near a cut (in another slab's halo) are looked at again with
    the exact flags: their edges to true core points of the halo cross slabs, and a border point
    there takes its smallest-id true core neighbour."""
    from ._dbscan import DBSCAN

    ids, points, own = _gathered(pieces)
    core = np.concatenate(flags).astype(bool)
    mine = np.nonzero(own)[0]
    none = np.empty(0, np.int64)
    if mine.size == 0:
        return ids[mine], none, none, none, none
    model = DBSCAN(eps=eps, min_samples=min_samples, engine=options["engine"],
                   precision=options["precision"], n_jobs=options["n_jobs"],
                   memory_limit=options["memory_limit"], metric=options["metric"]).fit(points)
    local = np.asarray(model.labels_)
    local_core = np.zeros(ids.shape[0], bool)
    local_core[model.core_sample_indices_] = True
    rep_of = np.full(int(local.max()) + 1 if local.size else 0, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(rep_of, local[local_core], ids[local_core])
    rep = np.full(ids.shape[0], -1, dtype=np.int64)
    rep[local >= 0] = rep_of[local[local >= 0]]
    labels = rep[mine]
    first, last = plan.halo_slabs(points)
    home = plan.slab_of(points)
    seen_elsewhere = (first < home) | (last > home)
    near = np.nonzero(own & seen_elsewhere)[0]
    a, b = [none], [none]
    if near.size:
        indptr, indices = _join.neighbor_table(points[near], eps, points, sort_indices=True,
                                               **options)
        rows = np.repeat(near, np.diff(indptr))
        cols = indices.astype(np.int64)
        to_core = core[cols]
        # An own core point with each true core point of the halo it reaches.
        cross = core[rows] & to_core & ~own[cols]
        a.append(rep[rows[cross]])
        b.append(ids[cols[cross]])
        # A border point near a cut: its smallest-id true core neighbour, which names its
        # cluster (that point's own slab ties it to its cluster's representative).
        border = ~core[rows] & to_core
        if border.any():
            b_rows, b_cols = rows[border], cols[border]
            order = np.lexsort((ids[b_cols], b_rows))
            b_rows, b_cols = b_rows[order], b_cols[order]
            firsts = np.concatenate([[True], b_rows[1:] != b_rows[:-1]])
            at = np.searchsorted(mine, b_rows[firsts])
            labels[at] = np.where(own[b_cols[firsts]], rep[b_cols[firsts]], ids[b_cols[firsts]])
    # Each own core point other slabs see, with its cluster here.
    seen = core & own & seen_elsewhere
    a.append(ids[seen])
    b.append(rep[seen])
    used = labels[labels >= 0]
    return (ids[mine], labels, np.concatenate(a), np.concatenate(b),
            np.unique(np.concatenate([used, rep[core & own]])))


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
