"""DBSCAN clustering with scikit-learn's estimator interface, on the library's two joins."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Mapping, Optional, Union, overload

import numpy as np
import numpy.typing as npt

from . import _callable_metric, _dbscan_graph, _device, _epsjoin, _progress
from ._estimator import (HAVE_SKLEARN, BaseEstimator, ClusterMixin, check_search_parameters,
                         check_weights, is_sparse, library_metric, validated)
from ._join import HostPoints, PointsLike
from ._progress import Progress
from ._validation import MemorySize, raise_if_not_finite, run_settings


def _check_parameters(eps: Any, min_samples: Any) -> None:
    # scikit-learn's words; its InvalidParameterError is a ValueError, so is this.
    real = isinstance(eps, numbers.Real) and not isinstance(eps, bool)
    if not real or not 0 < eps < float("inf"):
        raise ValueError(
            "The 'eps' parameter of DBSCAN must be a float in the range (0.0, inf). "
            f"Got {eps!r} instead."
        )
    integral = isinstance(min_samples, numbers.Integral) and not isinstance(min_samples, bool)
    if not integral or min_samples < 1:
        raise ValueError(
            "The 'min_samples' parameter of DBSCAN must be an int in the range [1, inf). "
            f"Got {min_samples!r} instead."
        )


class DBSCAN(ClusterMixin, BaseEstimator):
    """Density-based clustering (DBSCAN), computed by epsjoin.

    A drop-in for ``sklearn.cluster.DBSCAN``: the same parameters, ``fit``/``fit_predict``,
    fitted attributes and labels. A point is a core sample when at least ``min_samples`` points,
    itself included, lie within ``eps`` (inclusive: ``distance <= eps``), or with
    ``sample_weight`` when their weights sum to at least ``min_samples``; core samples within
    ``eps`` of each other share a cluster; a non-core point with a core sample within ``eps`` is
    a border point of that cluster; other points are noise (label ``-1``). Where scikit-learn is
    installed this is a scikit-learn estimator (``GridSearchCV``, ``clone``, pipelines,
    ``check_estimator``); without it, it works alone.

    Unlike scikit-learn, no neighbourhood is ever stored: two joins (a count, then a merge into
    a concurrent union-find) run in memory linear in the number of points beyond the join's own
    index; cpu-grid in one to three dimensions (``"auto"`` on the CPU) runs no join but
    clusters on its own cells of side ``eps / sqrt(d)`` (Euclidean and unweighted only).
    Clusters are numbered ``0, 1, ...`` in the order of their first core sample in ``X``, as
    scikit-learn numbers them; the core samples, the noise and the clusters are scikit-learn's.
    A border point within ``eps`` of core samples of two clusters joins the cluster of its core
    neighbour of smallest index, the same on every engine and every run; scikit-learn gives it
    the cluster of smallest label among its core neighbours'. Only such points can differ.

    Parameters
    ----------
    eps : float, default=0.5
        The neighbourhood radius (never its square); finite and > 0.
    min_samples : int, default=5
        Points within ``eps`` (the point itself included), or their total weight, that make a
        core sample; at least 1.
    metric : str, default="euclidean"
        ``"euclidean"`` (``"l2"``), ``"manhattan"`` (``"cityblock"``, ``"l1"``), ``"chebyshev"``
        (``"infinity"``), ``"cosine"``, ``"haversine"`` (radians, two features: latitude,
        longitude), ``"minkowski"`` with ``p`` 1, 2 or inf, or ``"precomputed"``: ``X`` is then
        a square distance matrix, dense or a sparse radius-neighbours graph (missing entries
        are no neighbours; each point is its own), and no join runs. A callable
        ``metric(u, v, **metric_params)`` returning a distance is called once per pair of
        samples (n^2 calls, as scikit-learn's brute-force search makes; no engine runs it), in
        blocks of rows whose distances are dropped beyond ``eps``. Another metric name raises
        ``ValueError``.
    metric_params : dict, default=None
        ``{"p": ...}`` for ``"minkowski"`` (where ``p`` is also given, this one is used and a
        ``SyntaxWarning`` says so, as scikit-learn warns); a callable's keyword arguments.
    algorithm : {"auto", "ball_tree", "kd_tree", "brute"}, default="auto"
        Accepted for scikit-learn's sake and checked; the engine decides how to search.
    leaf_size : int, default=30
        Accepted and checked as scikit-learn does; it changes nothing here.
    p : float, default=None
        Minkowski's power with ``metric="minkowski"``: 1, 2 (``None``) or inf.
    n_jobs : int, default=None
        CPU threads; ``None`` or ``-1`` means every core (unlike scikit-learn, where ``None``
        means one).
    engine : str, default="auto"
        An engine name from :func:`epsjoin.engines` or ``"auto"``; both joins run on it. A GPU
        engine raises :class:`epsjoin.UnavailableError` where there is no GPU or no CUDA build.
    precision : {"float64", "float32"}, default="float64"
        Arithmetic of the distance computation (``X`` may be either dtype).
    memory_limit, device_memory_limit : int or str, default=None
        Host and GPU memory the joins plan within, in bytes or as ``"8G"``, ``"512M"``;
        ``None`` means what the machine allows. Too little raises ``MemoryError``.
    device : int, default=0
        CUDA device ordinal for GPU engines. A CuPy array or CUDA tensor is clustered on its
        own device, with a GPU engine that merges there (``"auto"``, lbjoin, gds-join,
        ted-join, meta-16q, meta-1q), Euclidean; the points never leave it (with
        ``sample_weight``, any GPU or tensor engine's pairs come to the host merge).
    params : dict, default=None
        Engine parameters (see :func:`epsjoin.engines`); an unknown key raises ``ValueError``.
    progress : bool or callable, default=False
        Report progress over ``fit``'s passes (the count and the merge, or the cells' passes):
        ``True`` shows a tqdm bar when tqdm is installed (``pip install epsjoin[progress]``),
        else a percentage on stderr; a callable is called with the fraction done (0 to 1, never
        going back) now and then from the calling thread. An exception it raises stops ``fit``,
        as Ctrl-C does.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), dtype int64
        Cluster of each point, ``-1`` for noise. For device input (CuPy, torch) these three
        attributes are arrays of the same kind on the same device, as cuML returns them.
    core_sample_indices_ : ndarray of shape (n_core_samples,), dtype int64
        Indices of the core samples, ascending.
    components_ : ndarray of shape (n_core_samples, n_features)
        A copy of each core sample (``X`` as used: float32 stays float32, other dtypes become
        float64; rows of a sparse ``X`` stay sparse).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names (a pandas DataFrame).
    stats_ : dict
        The run: ``engine``, ``merge`` (``"device"`` where the GPU engine merged on the GPU,
        ``"cells"`` where cpu-grid clustered on its cells, ``"precomputed"`` for precomputed
        distances, else ``"host"``), ``n_clusters``, ``n_core``, ``n_border``, ``n_noise``,
        ``pairs`` (ordered neighbour pairs ``i != j``; 0 for ``"cells"``, whose counts stop at
        ``min_samples``), ``stages`` (seconds of ``count``, ``merge``, ``label``), ``seconds``,
        ``notes`` (the engine's notes as strings; for the device merge ``h2d_point_bytes``, 0
        for points already on the device) and the inputs ``n``, ``d``, ``eps``,
        ``min_samples``, ``precision``.

    Examples
    --------
    >>> import numpy as np, epsjoin
    >>> X = np.array([[1, 2], [2, 2], [2, 3], [8, 7], [8, 8], [25, 80]])
    >>> clustering = epsjoin.DBSCAN(eps=3, min_samples=2).fit(X)
    >>> clustering.labels_
    array([ 0,  0,  0,  1,  1, -1])
    """

    def __init__(
        self,
        eps: float = 0.5,
        min_samples: int = 5,
        *,
        metric: Union[str, Callable[..., float]] = "euclidean",
        metric_params: Optional[Mapping[str, Any]] = None,
        algorithm: str = "auto",
        leaf_size: int = 30,
        p: Optional[float] = None,
        n_jobs: Optional[int] = None,
        engine: str = "auto",
        precision: npt.DTypeLike = "float64",
        memory_limit: MemorySize = None,
        device_memory_limit: MemorySize = None,
        device: int = 0,
        params: Optional[Mapping[str, Any]] = None,
        progress: Progress = False,
    ) -> None:
        # Stored as given and checked in fit, as scikit-learn's estimators do (clone and
        # set_params rely on it).
        self.eps = eps
        self.min_samples = min_samples
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.n_jobs = n_jobs
        self.engine = engine
        self.precision = precision
        self.memory_limit = memory_limit
        self.device_memory_limit = device_memory_limit
        self.device = device
        self.params = params
        self.progress = progress

    def fit(self, X: PointsLike, y: Any = None, sample_weight: Any = None) -> "DBSCAN":
        """Cluster `X`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples)
            Points; at least one, finite. float32 and float64 C-contiguous arrays are used where
            they lie; other dtypes are converted once, to float64; a sparse matrix is made
            dense. With ``metric="precomputed"``, distances (see ``metric``).
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each sample (scikit-learn's meaning): a sample of weight at least
            ``min_samples`` is a core sample by itself, a negative weight may keep its
            neighbours from being core. ``None`` weighs each sample 1.

        Returns
        -------
        self : DBSCAN
            The fitted estimator.
        """
        _check_parameters(self.eps, self.min_samples)
        check_search_parameters(self)
        precomputed = self.metric == "precomputed"
        custom = self.metric if callable(self.metric) else None
        metric = (None if precomputed or custom is not None
                  else library_metric(self.metric, self.p, self.metric_params))
        if _device.any_on_device(X):
            if metric != "euclidean":
                raise ValueError("device points are clustered Euclidean; copy them to the host "
                                 "for another metric")
            return self._fit_on_device(X, sample_weight)
        X = validated(self, X, reset=True, sparse=True, square=precomputed)
        weights = check_weights(sample_weight, X.shape[0])
        if precomputed or custom is not None:
            report = _progress.reporter(self.progress, "epsjoin DBSCAN")
            eps = float(self.eps)
            graph = (X if custom is None
                     else _callable_metric.radius_graph(X, eps, custom, self.metric_params))
            labels, core = _dbscan_graph.cluster(_dbscan_graph.neighbourhoods(graph, eps),
                                                 int(self.min_samples), weights)
            if report is not None:
                report.finish()  # type: ignore[attr-defined]
            self.stats_ = {"merge": "precomputed" if custom is None else "callable",
                           "n": X.shape[0], "eps": eps, "min_samples": int(self.min_samples)}
        else:
            labels, core = self._fit_points(X, metric, weights)
        self.labels_ = labels
        self.core_sample_indices_ = np.flatnonzero(core).astype(np.int64, copy=False)
        self.components_ = X[self.core_sample_indices_]  # fancy indexing copies
        return self

    def _settings(self) -> Any:
        return run_settings(self.engine, self.precision, False, self.n_jobs, self.memory_limit,
                            self.device_memory_limit, self.device, self.params,
                            progress=self.progress)

    def _fit_points(self, X: Any, metric: Optional[str], weights: Optional[np.ndarray]) -> Any:
        dense = X.toarray() if is_sparse(X) else X
        settings = self._settings()
        settings.metric = metric
        try:
            labels, core, stats = _epsjoin.dbscan(dense, float(self.eps), int(self.min_samples),
                                                  settings, weights)
        except ValueError:
            raise_if_not_finite(dense, None, estimator="DBSCAN")  # scikit-learn's words
            raise
        _progress.done(settings)
        self.stats_ = stats
        return labels.view(np.int64), core  # numpy's own int64 type, not C's long long

    def _fit_on_device(self, X: Any, sample_weight: Any) -> "DBSCAN":
        b, A, _ = _device.check_device_pair(X, None, min_samples=1, estimator="DBSCAN")
        settings = self._settings()
        # Weights are read on the host (the merge that sums them runs there); a device array
        # of them is copied, n float64s.
        weights = check_weights(_device.to_host(sample_weight), int(A.shape[0]))
        labels, core, stats = _epsjoin.dbscan_device(A, float(self.eps), int(self.min_samples),
                                                     _device.settings_on(settings, b, A), weights)
        _progress.done(settings)
        self.labels_ = b.upload(labels.view(np.int64), A)
        self.core_sample_indices_ = b.upload(np.flatnonzero(core).astype(np.int64), A)
        self.components_ = A[self.core_sample_indices_]
        self.n_features_in_ = int(A.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.stats_ = stats
        return self

    # Labels of device points are on their device (CuPy, torch), as the joins' results are: the
    # last overload takes and returns Any for them (_join.py says why).
    @overload
    def fit_predict(self, X: HostPoints, y: Any = ...,
                    sample_weight: Any = ...) -> npt.NDArray[np.int64]: ...
    @overload
    def fit_predict(self, X: Any, y: Any = ..., sample_weight: Any = ...) -> Any: ...
    def fit_predict(self, X: PointsLike, y: Any = None, sample_weight: Any = None) -> Any:
        """Cluster `X` and return the labels (see :meth:`fit`).

        Returns
        -------
        labels : ndarray of shape (n_samples,), dtype int64
            Cluster of each point, ``-1`` for noise.
        """
        return self.fit(X, sample_weight=sample_weight).labels_

    if HAVE_SKLEARN:
        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()  # type: ignore[misc]
            tags.input_tags.pairwise = self.metric == "precomputed"
            tags.input_tags.sparse = True
            return tags


def dbscan(X: PointsLike, eps: float = 0.5, *, min_samples: int = 5,
           metric: Union[str, Callable[..., float]] = "minkowski",
           metric_params: Optional[Mapping[str, Any]] = None, algorithm: str = "auto",
           leaf_size: int = 30, p: Optional[float] = 2, sample_weight: Any = None,
           n_jobs: Optional[int] = None, engine: str = "auto",
           precision: npt.DTypeLike = "float64", memory_limit: MemorySize = None,
           device_memory_limit: MemorySize = None, device: int = 0,
           params: Optional[Mapping[str, Any]] = None, progress: Progress = False) -> Any:
    """``sklearn.cluster.dbscan``: :class:`DBSCAN` fitted once, its result as a tuple.

    The parameters are :class:`DBSCAN`'s and :meth:`DBSCAN.fit`'s, with scikit-learn's
    defaults for this function (``metric="minkowski"``, ``p=2``: Euclidean).

    Returns
    -------
    core_samples : ndarray of shape (n_core_samples,), dtype int64
        Indices of the core samples, ascending.
    labels : ndarray of shape (n_samples,), dtype int64
        Cluster of each point, ``-1`` for noise.
    """
    estimator = DBSCAN(eps, min_samples, metric=metric, metric_params=metric_params,
                       algorithm=algorithm, leaf_size=leaf_size, p=p, n_jobs=n_jobs,
                       engine=engine, precision=precision, memory_limit=memory_limit,
                       device_memory_limit=device_memory_limit, device=device, params=params,
                       progress=progress)
    estimator.fit(X, sample_weight=sample_weight)
    return estimator.core_sample_indices_, estimator.labels_
