"""Typical calls of the public API, each assigned to the type its hints promise.

Not a test module (pytest collects test_*.py only): test_typing.py has mypy check it, so a hint
that regressed to something else than what users are told breaks the suite. Never run.
"""

from typing import Any, Dict, List, Tuple

import numpy as np
import numpy.typing as npt
import scipy.sparse

import epsjoin

X: npt.NDArray[np.float64] = np.zeros((10, 3))
Y = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
Ints = npt.NDArray[np.integer[Any]]
Counts = npt.NDArray[np.int64]
Stats = Dict[str, Any]

graph: scipy.sparse.csr_matrix = epsjoin.neighbor_graph(X, 0.1)
graph = epsjoin.neighbor_graph(X, 0.1, Y, mode="distance", engine="cpu-grid", n_jobs=4)
graph_stats: Tuple[scipy.sparse.csr_matrix, Stats] = epsjoin.neighbor_graph(
    X, 0.1, return_stats=True, metric="manhattan", boxsize=[1.0, 1.0, 1.0], memory_limit="1G")

table: Tuple[npt.NDArray[np.int64], Ints] = epsjoin.neighbor_table(X, 0.1, sort_indices=True)
table_stats: Tuple[npt.NDArray[np.int64], Ints, Stats] = epsjoin.neighbor_table(
    X, 0.1, Y, return_stats=True, precision="float32", params={"pattern": "lid-unicomp"})

unique: Ints = epsjoin.pairs(X, 0.1, sort=True, dtype=np.int32)
unique_stats: Tuple[Ints, Stats] = epsjoin.pairs(X, 0.1, return_stats=True, device=[0, 1])

total: int = epsjoin.count(X, 0.1)
per_row: Counts = epsjoin.count(X, 0.1, Y, per_row=True)
total_stats: Tuple[int, Stats] = epsjoin.count(X, 0.1, return_stats=True)
per_row_stats: Tuple[Counts, Stats] = epsjoin.count(X, 0.1, per_row=True, return_stats=True)
radii: Counts = epsjoin.count_radii(X, [0.1, 0.2], include_self=True)
radii_stats: Tuple[Counts, Stats] = epsjoin.count_radii(X, np.array([0.1]), return_stats=True)

sk_graph: scipy.sparse.csr_matrix = epsjoin.radius_neighbors_graph(X, 0.1, include_self="auto")

blocks: epsjoin.PairBlocks = epsjoin.iter_pairs(X, 0.1, block_bytes="16M", sort=True)
for block in epsjoin.iter_pairs(X, 0.1, Y, engine="super-ego", memory_limit=1 << 30):
    pass
written: Stats = epsjoin.join_to("pairs.npy", X, 0.1, n_jobs=2)
sk_stats: Tuple[scipy.sparse.csr_matrix, Stats] = epsjoin.radius_neighbors_graph(
    X, 0.1, mode="distance", p=1, n_jobs=2, return_stats=True)

# A flag that is not a literal gives Any, as points on a device do (_join.py says why).
flag: bool = bool(X.size)
either: Any = epsjoin.neighbor_graph(X, 0.1, return_stats=flag)

index = epsjoin.EpsIndex(X, max_eps=0.5, metric="chebyshev", finer_grids=2)
index_graph: scipy.sparse.csr_matrix = index.neighbor_graph(X, 0.2, sort_indices=True)
index_graph_stats: Tuple[scipy.sparse.csr_matrix, Stats] = index.neighbor_graph(return_stats=True)
index_total: int = index.count(eps=0.3)
index_rows: Counts = index.count(X, 0.3, per_row=True)
index_rows_stats: Tuple[Counts, Stats] = index.count(per_row=True, return_stats=True)
balls: Any = index.query_ball_point([0.0, 0.0, 0.0], 0.2)
sizes: float = index.max_eps + index.n + index.m + index.memory_bytes

model: epsjoin.DBSCAN = epsjoin.DBSCAN(eps=0.3, min_samples=4, n_jobs=2).fit(X)
model = model.set_params(eps=0.2)
labels: Counts = epsjoin.DBSCAN(engine="cpu-grid").fit_predict(X)
params: Dict[str, Any] = model.get_params()

names: List[str] = [e["name"] for e in epsjoin.engines()]
info: Dict[str, Any] = epsjoin.build_info()
