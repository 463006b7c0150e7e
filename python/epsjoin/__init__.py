"""epsjoin: every pair of points within distance eps, on CPU cores and NVIDIA GPUs.

The Python front end of the epsjoin C++/CUDA library (the same engines as the ``epsjoin``
program). Functions:

- :func:`neighbor_graph`: the eps-graph as a ``scipy.sparse.csr_matrix`` (connectivity or
  distances), self-join or X against Y.
- :func:`radius_neighbors_graph`: scikit-learn's function of that name, same arguments and
  result.
- :func:`pairs`: unique pairs ``i < j`` as an (m, 2) array, like
  ``cKDTree.query_pairs(output_type="ndarray")``.
- :func:`count`: the number of pairs, or of each point's neighbours.
- :func:`neighbor_table`: the library's CSR arrays themselves, without a copy.
- :class:`DBSCAN`: scikit-learn's DBSCAN estimator (``fit``, ``labels_``, ...) on two joins,
  without storing any neighbourhood.
- :class:`EpsIndex`: the points' grid built once at a largest eps and queried many times, at
  any eps up to it (scipy's ``cKDTree`` style: ``query_ball_point``, ``count``,
  ``neighbor_graph``).
- :func:`engines`, :func:`build_info`: what this build has.

Every join takes the radius ``eps`` (never its square; within means ``distance <= eps``) and
the options ``engine``, ``precision``, ``n_jobs``, ``memory_limit``, ``device``, ``params`` and
``return_stats``. The GIL is released while the library works, and Ctrl-C stops a join.
"""

from ._dbscan import DBSCAN
from ._epsjoin import CudaError, UnavailableError
from ._epsjoin import __version__ as __version__
from ._index import EpsIndex
from ._join import build_info, engines, neighbor_graph, neighbor_table, pairs
from ._radii import count, count_radii
from ._sklearn import radius_neighbors_graph

__all__ = [
    "CudaError",
    "DBSCAN",
    "EpsIndex",
    "UnavailableError",
    "build_info",
    "count",
    "count_radii",
    "engines",
    "neighbor_graph",
    "neighbor_table",
    "pairs",
    "radius_neighbors_graph",
]
