"""scikit-learn's radius-neighbours estimators (NearestNeighbors' radius half and
RadiusNeighborsTransformer), computed by epsjoin's joins."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, cast

import numpy as np
import numpy.typing as npt
import scipy.sparse

from . import _device, _epsjoin, _nearest
from ._estimator import (HAVE_SKLEARN, BaseEstimator, TransformerMixin, as_configured,
                         check_is_fitted, check_search_parameters, int64_indices, is_sparse,
                         library_metric, rows_of, validated)
from ._join import neighbor_graph
from ._validation import Devices, MemorySize, check_eps, run_settings

_MODES = ("connectivity", "distance")


class RadiusNeighbors(BaseEstimator):
    """Neighbours within a radius, in the style of ``sklearn.neighbors.NearestNeighbors``.

    ``fit`` keeps the points; ``radius_neighbors`` and ``radius_neighbors_graph`` answer as
    scikit-learn's methods of those names do (the same neighbours, distances, dtypes and
    sparse interface), each call one epsjoin join of the queries against the fitted points, on
    the CPU or on a GPU engine. A CuPy array or CUDA tensor is joined on its device, and its
    graph is a ``cupyx``/torch one there.

    Parameters
    ----------
    radius : float, default=1.0
        Default radius of the queries (inclusive: ``distance <= radius``).
    n_neighbors : int, default=5
        Default number of neighbours of :meth:`kneighbors`.
    metric : str, default="minkowski"
        ``"minkowski"`` (with ``p``), ``"euclidean"`` (``"l2"``), ``"manhattan"``
        (``"cityblock"``, ``"l1"``), ``"chebyshev"`` (``"infinity"``), ``"cosine"`` or
        ``"haversine"`` (radians). Others, ``"precomputed"`` and callables raise ``ValueError``.
    p : float, default=2
        Minkowski's power: 1, 2 or inf.
    metric_params : dict, default=None
        Only ``{"p": ...}``.
    algorithm : {"auto", "ball_tree", "kd_tree", "brute"}, default="auto"
        Accepted and checked as scikit-learn does; the engine decides how to search.
    leaf_size : int, default=30
        Accepted and checked; it changes nothing here.
    n_jobs : int, default=None
        CPU threads; ``None`` or ``-1`` means every core.
    engine, precision, memory_limit, device_memory_limit, device, params
        The join's options, as :func:`epsjoin.neighbor_graph` takes them.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.
    n_samples_fit_ : int
        Number of fitted points.
    effective_metric_ : str
        The metric as epsjoin names it (``"euclidean"`` for minkowski with p = 2).
    effective_metric_params_ : dict
        Always empty.
    """

    def __init__(
        self,
        radius: float = 1.0,
        *,
        n_neighbors: int = 5,
        metric: str = "minkowski",
        p: float = 2,
        metric_params: Optional[Mapping[str, Any]] = None,
        algorithm: str = "auto",
        leaf_size: int = 30,
        n_jobs: Optional[int] = None,
        engine: str = "auto",
        precision: npt.DTypeLike = "float64",
        memory_limit: MemorySize = None,
        device_memory_limit: MemorySize = None,
        device: Devices = "auto",
        params: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self.radius = radius
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs
        self.engine = engine
        self.precision = precision
        self.memory_limit = memory_limit
        self.device_memory_limit = device_memory_limit
        self.device = device
        self.params = params

    def fit(self, X: Any, y: Any = None) -> Any:
        """Keep the points `X` (array-like of shape (n_samples, n_features); a sparse matrix is
        made dense) to search later; returns the estimator."""
        check_search_parameters(self)
        self.effective_metric_ = library_metric(self.metric, self.p, self.metric_params)
        self.effective_metric_params_: Dict[str, Any] = {}
        if _device.any_on_device(X):
            _, self._fit_X, _ = _device.check_device_pair(X, None, min_samples=1,
                                                          estimator=type(self).__name__)
            self.n_features_in_ = int(self._fit_X.shape[1])
        else:
            self._fit_X = _dense(validated(self, X, reset=True, sparse=True))
        self.n_samples_fit_ = int(self._fit_X.shape[0])
        return self

    def radius_neighbors(self, X: Any = None, radius: Optional[float] = None,
                         return_distance: bool = True, sort_results: bool = False) -> Any:
        """The fitted points within `radius` of each query, as scikit-learn's
        ``NearestNeighbors.radius_neighbors``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            Queries; ``None`` queries the fitted points, each without itself.
        radius : float, default=None
            The radius; ``None`` is the estimator's.
        return_distance : bool, default=True
            Return the distances too.
        sort_results : bool, default=False
            Sort each query's neighbours by distance (needs ``return_distance``); otherwise
            their order is unspecified.

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries,) of arrays
            Each query's distances (the points' float dtype), with ``return_distance`` only.
        neigh_ind : ndarray of shape (n_queries,) of int64 arrays
            Each query's neighbours, indices into the fitted points.
        """
        if sort_results and not return_distance:
            raise ValueError("return_distance must be True if sort_results is True.")
        graph = self._graph(X, radius, "distance", sort_results)
        if not is_sparse(graph):
            graph = _on_host(graph)
        dist, ind = rows_of(graph)
        return (dist, ind) if return_distance else ind

    def kneighbors(self, X: Any = None, n_neighbors: Optional[int] = None,
                   return_distance: bool = True, *, max_radius: Optional[float] = None) -> Any:
        """Each query's `n_neighbors` nearest fitted points within `max_radius`, as
        scikit-learn's ``NearestNeighbors.kneighbors`` with a bound on the distance (default
        the estimator's ``radius``; inclusive), nearest first, equal distances by index.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            Queries; ``None`` queries the fitted points, each without itself.
        n_neighbors : int, default=None
            The number of neighbours; ``None`` is the estimator's ``n_neighbors``.
        return_distance : bool, default=True
            Return the distances too.
        max_radius : float, default=None
            Neighbours beyond it are not returned; ``None`` is the estimator's ``radius``.

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries, n_neighbors)
            Distances (the points' float dtype), ``inf`` where fewer neighbours lie within
            ``max_radius`` (scipy's ``cKDTree.query`` convention); with ``return_distance``.
        neigh_ind : ndarray of shape (n_queries, n_neighbors), dtype int64
            Indices into the fitted points, ``n_samples_fit_`` where missing.
        """
        check_is_fitted(self)
        k = _nearest.check_k(self.n_neighbors if n_neighbors is None else n_neighbors,
                             "n_neighbors")
        eps = check_eps(self.radius if max_radius is None else max_radius, "max_radius",
                        positive=True)
        if _device.any_on_device(self._fit_X) or (X is not None and _device.any_on_device(X)):
            raise ValueError("kneighbors takes points in host memory; copy device arrays to "
                             "the host (the join may still run on a GPU engine)")
        queries = None if X is None else _dense(validated(self, X, reset=False, sparse=True))
        settings = run_settings(self.engine, self.precision, False, self.n_jobs,
                                self.memory_limit, self.device_memory_limit, self.device,
                                self.params)
        settings.metric = self.effective_metric_
        fit_X = self._fit_X
        distances, indices, _ = _epsjoin.nearest(fit_X if queries is None else queries,
                                                 None if queries is None else fit_X, eps, k,
                                                 False, settings)
        distances = distances.astype(fit_X.dtype, copy=False)
        return (distances, indices) if return_distance else indices

    def radius_neighbors_graph(self, X: Any = None, radius: Optional[float] = None,
                               mode: str = "connectivity", sort_results: bool = False) -> Any:
        """The graph of the fitted points within `radius` of each query, as scikit-learn's
        ``NearestNeighbors.radius_neighbors_graph``: CSR of shape (n_queries, n_samples_fit)
        with int64 indices, 1.0 (``mode="connectivity"``, float64) or the distance (``"distance"``,
        the points' float dtype, explicit zeros kept), rows sorted by distance with
        ``sort_results``; a sparse matrix or array as ``sklearn.set_config(sparse_interface=)``
        says. ``X=None`` queries the fitted points, each without itself."""
        if mode not in _MODES:
            raise ValueError('Unsupported mode, must be one of "connectivity", or "distance" '
                             f'but got "{mode}" instead')
        return self._graph(X, radius, mode, sort_results and mode == "distance")

    def _graph(self, X: Any, radius: Optional[float], mode: str, sort_results: bool) -> Any:
        check_is_fitted(self)
        radius = self.radius if radius is None else radius
        fit_X = self._fit_X
        queries = None
        if X is not None:
            on_device = _device.any_on_device(X)
            queries = X if on_device else _dense(validated(self, X, reset=False, sparse=True))
        graph = neighbor_graph(
            fit_X if queries is None else queries, radius, None if queries is None else fit_X,
            mode=mode, metric=self.effective_metric_, n_jobs=self.n_jobs, engine=self.engine,
            precision=self.precision, memory_limit=self.memory_limit,
            device_memory_limit=self.device_memory_limit, device=self.device,
            params=self.params)
        if not is_sparse(graph):  # a device graph, as the join gives it
            return graph
        # Distances in the points' dtype, ones in float64, as scikit-learn gives them (the
        # cosine join gives float32 ones for float32 points).
        graph.data = graph.data.astype(fit_X.dtype if mode == "distance" else np.float64,
                                       copy=False)
        if sort_results:
            _sort_rows_by_distance(graph)
        return as_configured(int64_indices(graph))

    if HAVE_SKLEARN:
        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()  # type: ignore[misc]
            tags.input_tags.sparse = True
            return tags


class RadiusNeighborsTransformer(TransformerMixin, RadiusNeighbors):
    """Points into their radius-neighbours graph, as ``sklearn.neighbors.
    RadiusNeighborsTransformer``: a pipeline step that hands a precomputed sparse graph to
    scikit-learn's DBSCAN, OPTICS, Isomap, TSNE, SpectralClustering
    (``metric="precomputed"``).

    ``fit`` keeps the points; ``transform(X)`` is ``radius_neighbors_graph(X, mode=mode,
    sort_results=True)``: each query's row holds the fitted points within ``radius``, itself
    included at distance 0 (an explicit zero). The parameters and attributes are
    :class:`RadiusNeighbors`', with ``mode`` (``"distance"``, the default, or
    ``"connectivity"``: what the graph's values are) first.
    """

    def __init__(
        self,
        *,
        mode: str = "distance",
        radius: float = 1.0,
        n_neighbors: int = 5,
        metric: str = "minkowski",
        p: float = 2,
        metric_params: Optional[Mapping[str, Any]] = None,
        algorithm: str = "auto",
        leaf_size: int = 30,
        n_jobs: Optional[int] = None,
        engine: str = "auto",
        precision: npt.DTypeLike = "float64",
        memory_limit: MemorySize = None,
        device_memory_limit: MemorySize = None,
        device: Devices = "auto",
        params: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(radius, n_neighbors=n_neighbors, metric=metric, p=p,
                         metric_params=metric_params,
                         algorithm=algorithm, leaf_size=leaf_size, n_jobs=n_jobs, engine=engine,
                         precision=precision, memory_limit=memory_limit,
                         device_memory_limit=device_memory_limit, device=device, params=params)
        self.mode = mode

    def fit(self, X: Any, y: Any = None) -> Any:
        """Keep the points `X`; returns the transformer."""
        if self.mode not in _MODES:
            raise ValueError(f"The 'mode' parameter of {type(self).__name__} must be a str "
                             f"among {set(_MODES)}. Got {self.mode!r} instead.")
        super().fit(X)
        self._n_features_out = self.n_samples_fit_
        return self

    def transform(self, X: Any) -> Any:
        """The graph of `X` against the fitted points (n_queries, n_samples_fit), sparse."""
        check_is_fitted(self)
        return self.radius_neighbors_graph(X, mode=self.mode, sort_results=True)

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``radiusneighborstransformer0``, ... one name per fitted point, as scikit-learn's."""
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)


def _dense(X: Any) -> np.ndarray:
    return cast(np.ndarray, X.toarray() if is_sparse(X) else X)


def _sort_rows_by_distance(graph: scipy.sparse.csr_matrix) -> None:
    """Each row's entries in ascending distance, ties by index (scikit-learn's stable sort of
    rows in index order)."""
    rows = np.repeat(np.arange(graph.shape[0]), np.diff(graph.indptr))
    order = np.lexsort((graph.indices, graph.data, rows))
    graph.indices = graph.indices[order]
    graph.data = graph.data[order]
    graph.has_sorted_indices = False


def _on_host(graph: Any) -> scipy.sparse.csr_matrix:
    """A device graph (cupyx or torch CSR) as a scipy one."""
    if hasattr(graph, "get"):
        return cast(scipy.sparse.csr_matrix, graph.get())
    crow = graph.crow_indices().cpu().numpy()
    return scipy.sparse.csr_matrix((graph.values().cpu().numpy(),
                                    graph.col_indices().cpu().numpy(), crow),
                                   shape=tuple(graph.shape))

