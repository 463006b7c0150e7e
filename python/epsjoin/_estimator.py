"""What the estimators share: scikit-learn's base classes (or stand-ins where it is not
installed), input checks, metric names and the sparse interface of their graphs."""

from __future__ import annotations

import inspect
import warnings
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import scipy.sparse

from ._metrics import metric_name
from ._validation import check_points


# Stand-ins for scikit-learn's base classes where it is not installed; mypy sees them in any case
# (scikit-learn has no type hints).
class _BaseEstimator:
    """scikit-learn's parameter protocol: enough for clone(), Pipeline and repr."""

    @classmethod
    def _get_param_names(cls) -> List[str]:
        signature = inspect.signature(cls.__init__)
        return sorted(name for name in signature.parameters
                      if name not in ("self", "args", "kwargs"))

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Any:
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self!r}. "
                                 f"Valid parameters are: {valid!r}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        signature = inspect.signature(type(self).__init__)
        defaults = {name: p.default for name, p in signature.parameters.items()}
        changed = [f"{name}={value!r}" for name, value in self.get_params().items()
                   if value is not defaults.get(name) and value != defaults.get(name)]
        return f"{type(self).__name__}({', '.join(changed)})"

class _ClusterMixin:
    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> Any:
        self.fit(X, sample_weight=sample_weight)  # type: ignore[attr-defined]
        return self.labels_  # type: ignore[attr-defined]

class _TransformerMixin:
    def fit_transform(self, X: Any, y: Any = None) -> Any:
        return self.fit(X).transform(X)  # type: ignore[attr-defined]

def _check_is_fitted(estimator: Any, attributes: Any = None) -> None:
    if not any(k.endswith("_") and not k.startswith("__") for k in vars(estimator)):
        raise AttributeError(f"This {type(estimator).__name__} instance is not fitted yet. "
                             "Call 'fit' with appropriate arguments first.")


HAVE_SKLEARN: bool
if TYPE_CHECKING:
    BaseEstimator = _BaseEstimator
    ClusterMixin = _ClusterMixin
    TransformerMixin = _TransformerMixin
    check_is_fitted = _check_is_fitted

    def validate_data(_estimator: Any, /, X: Any, **kwargs: Any) -> Any: ...
    def get_config() -> Dict[str, Any]: ...
else:
    try:
        from sklearn import get_config
        from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
        from sklearn.utils.validation import check_is_fitted, validate_data

        HAVE_SKLEARN = True
    except ImportError:  # the estimators work without scikit-learn; its contract needs it
        HAVE_SKLEARN = False
        BaseEstimator, ClusterMixin = _BaseEstimator, _ClusterMixin
        TransformerMixin, check_is_fitted = _TransformerMixin, _check_is_fitted


_ALGORITHMS = ("auto", "ball_tree", "kd_tree", "brute")


def check_search_parameters(estimator: Any) -> None:
    """scikit-learn's algorithm and leaf_size, accepted and checked: the engine decides how to
    search, so neither changes the result."""
    if estimator.algorithm not in _ALGORITHMS:
        raise ValueError(f"The 'algorithm' parameter of {type(estimator).__name__} must be a str "
                         f"among {set(_ALGORITHMS)}. Got {estimator.algorithm!r} instead.")
    leaf = estimator.leaf_size
    if isinstance(leaf, bool) or not isinstance(leaf, (int, np.integer)) or leaf < 1:
        raise ValueError(f"The 'leaf_size' parameter of {type(estimator).__name__} must be an "
                         f"int in the range [1, inf). Got {leaf!r} instead.")


def library_metric(metric: Any, p: Any, metric_params: Optional[Mapping[str, Any]]) -> str:
    """The library's name of scikit-learn's `metric` with Minkowski's `p` (also from
    ``metric_params={"p": ...}``), or ValueError for what epsjoin does not compute."""
    params = dict(metric_params or {})
    if "p" in params:
        if p is not None:
            warnings.warn("Parameter p is found in metric_params. The corresponding parameter "
                          "from __init__ is ignored.", SyntaxWarning, stacklevel=3)
        p = params.pop("p")
    if params:
        raise ValueError(f"metric_params other than 'p' are not supported, got {sorted(params)}")
    if callable(metric):
        raise ValueError("epsjoin computes its own metrics only; a callable metric needs "
                         "scikit-learn's estimator")
    if metric == "minkowski":
        p = 2 if p is None else p
        if p == 1:
            return "manhattan"
        if p == 2:
            return "euclidean"
        if p == float("inf"):
            return "chebyshev"
        raise ValueError(f"epsjoin computes minkowski distances for p = 1, 2 and inf only, "
                         f"got p={p!r}")
    return metric_name(metric)


def validated(estimator: Any, X: Any, *, reset: bool, sparse: bool = False,
              square: bool = False) -> Any:
    """X checked as scikit-learn checks an estimator's input (its words, n_features_in_ and
    feature_names_in_): float32 or float64, C-contiguous; CSR where `sparse` allows it."""
    name = type(estimator).__name__
    if HAVE_SKLEARN:
        # "numeric" first, as scikit-learn's estimators check: its refusals word for word.
        X = validate_data(estimator, X, reset=reset, accept_sparse="csr" if sparse else False,
                          dtype="numeric", order="C")
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)  # C order kept, sparse stays sparse
    else:
        if sparse and is_sparse(X):
            X = scipy.sparse.csr_matrix(X, dtype=np.float64)
        else:
            X = check_points(X, min_samples=1, estimator=name)
        if reset:
            estimator.n_features_in_ = X.shape[1]
        elif X.shape[1] != estimator.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting "
                             f"{estimator.n_features_in_} features as input.")
    if square and X.shape[0] != X.shape[1]:
        raise ValueError(f"Precomputed matrix must be square. Input is a {X.shape[0]}x"
                         f"{X.shape[1]} matrix.")
    return X


def is_sparse(X: Any) -> bool:
    """Whether X is a scipy sparse matrix or array."""
    # Not scipy's issparse: its type guard would narrow X to a base without the methods used.
    return bool(scipy.sparse.issparse(X))


def check_weights(sample_weight: Any, n: int) -> Optional[np.ndarray]:
    """scikit-learn's sample_weight as float64 [n], or None for none: a number means the same
    weight for every sample."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:  # scikit-learn's checks for one number: nonzero (inf passes, as there)
        if n and float(w) == 0:
            raise ValueError("Sample weights must contain at least one non-zero number.")
        return np.full(n, float(w))
    if w.ndim != 1:
        raise ValueError("Sample weights must be 1D array or scalar")
    if w.shape != (n,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
    if not np.isfinite(w).all():
        raise ValueError("Input sample_weight contains NaN or infinity.")
    if n and not w.any():
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return np.ascontiguousarray(w)


def as_configured(graph: Any) -> Any:
    """A scipy sparse result in the interface scikit-learn's ``set_config(sparse_interface=)``
    asks for ("spmatrix", the default, or "sparray"); others (device graphs) as they are."""
    if not is_sparse(graph):
        return graph
    wanted = get_config().get("sparse_interface", "spmatrix") if HAVE_SKLEARN else "spmatrix"
    fmt: str = graph.format
    if wanted == "sparray" and scipy.sparse.isspmatrix(graph):
        return getattr(scipy.sparse, fmt + "_array")(graph)
    if wanted == "spmatrix" and not scipy.sparse.isspmatrix(graph):
        return getattr(scipy.sparse, fmt + "_matrix")(graph)
    return graph


def int64_indices(graph: scipy.sparse.csr_matrix) -> scipy.sparse.csr_matrix:
    """The graph with int64 indices and indptr, scikit-learn's index type for its graphs."""
    graph.indices = graph.indices.astype(np.int64, copy=False)
    graph.indptr = graph.indptr.astype(np.int64, copy=False)
    return graph


def rows_of(graph: scipy.sparse.csr_matrix) -> Tuple[np.ndarray, np.ndarray]:
    """The rows of a CSR graph as scikit-learn's radius_neighbors returns them: object arrays of
    the distances and of the int64 indices of each row."""
    n = graph.shape[0]
    cuts = graph.indptr[1:-1]
    dist = np.empty(n, dtype=object)
    ind = np.empty(n, dtype=object)
    # Assigned one by one: numpy would make rows of equal length one 2-D array.
    for i, (d, j) in enumerate(zip(np.split(graph.data, cuts),
                                   np.split(graph.indices.astype(np.int64, copy=False), cuts))):
        dist[i] = d
        ind[i] = j
    return dist, ind
