"""Issue 46's scipy contract and progress on the GPU engines: eps 0 and inf with a GPU engine
named (answered on the host, the same as the CPU's), progress and Ctrl-C through a GPU join,
memory advice in Python's terms, device arrays at eps 0 refused clearly. Skipped without a GPU
(EPSJOIN_REQUIRE_GPU=1 makes that a failure, as in test_gpu.py)."""

import signal

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin
from test_gpu import _MISSING  # noqa: F401  (the same skip, and the same EPSJOIN_REQUIRE_GPU)

pytestmark = pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "GPU present")
ENGINES = ["lbjoin", "gds-join", "ted-join"]


@pytest.mark.parametrize("engine", ENGINES)
def test_gpu_engines_take_eps_zero_and_inf(engine, rng):
    X = rng.integers(0, 4, (500, 2)).astype(np.float64)
    tree = cKDTree(X)
    got = epsjoin.pairs(X, 0.0, engine=engine, sort=True)
    want = tree.query_pairs(0.0, output_type="ndarray")
    assert len(got) == len(want)
    assert epsjoin.count(X[:60], np.inf, engine=engine) == 60 * 59


@pytest.mark.parametrize("engine", ENGINES)
def test_progress_through_a_gpu_join(engine, rng):
    X = rng.random((200_000, 3))
    seen = []
    got = epsjoin.count(X, 0.02, engine=engine, per_row=True, progress=seen.append)
    np.testing.assert_array_equal(got, epsjoin.count(X, 0.02, engine="cpu-grid", per_row=True))
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)

    def ctrl_c(fraction):
        signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        epsjoin.neighbor_graph(X, 0.02, engine=engine, progress=ctrl_c)


def test_gpu_memory_advice_speaks_python(rng):
    X = rng.random((200_000, 2))
    with pytest.raises(MemoryError) as refused:
        epsjoin.neighbor_graph(X, 0.5, engine="lbjoin", memory_limit="64M")
    assert "--" not in str(refused.value)


def test_device_arrays_at_eps_zero_are_refused_clearly(rng):
    cupy = pytest.importorskip("cupy")
    X = cupy.asarray(rng.random((100, 2)))
    for eps in (0.0, np.inf):
        with pytest.raises(ValueError, match="host arrays only"):
            epsjoin.pairs(X, eps)
