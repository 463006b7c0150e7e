"""The run around a join: statistics, Ctrl-C, the GIL, memory limits, GPUs, device arrays."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import epsjoin
from conftest import GPU_ENGINES


def slow_join_points(rng):
    return rng.random((14_000, 64))  # brute force on one thread: seconds


def test_stats_name_the_engine_pairs_stages_and_time(rng):
    X = rng.random((5000, 2))
    graph, stats = epsjoin.neighbor_graph(X, 0.02, engine="cpu-grid", n_jobs=2, return_stats=True)
    assert stats["engine"] == "cpu-grid" and stats["threads"] == 2
    assert stats["pairs"] == graph.nnz and stats["n"] == 5000 and stats["d"] == 2
    assert stats["seconds"] > 0 and stats["stages"] and all(v >= 0 for v in stats["stages"].values())
    assert stats["eps"] == 0.02 and stats["precision"] == "f64" and stats["self_join"]
    _, auto = epsjoin.count(X, 0.02, return_stats=True)
    assert auto["engine"] != "auto" and auto["engine_reason"]
    _, ab = epsjoin.pairs(X[:100], 0.02, X, return_stats=True)
    assert not ab["self_join"] and ab["n_queries"] == 100


def test_ctrl_c_stops_a_long_join_within_a_second(rng, sigint_raises):
    X = slow_join_points(rng)
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    returned = False
    with pytest.raises(KeyboardInterrupt):
        epsjoin.count(X, 0.5, engine="brute-cpu", n_jobs=1)
        returned = True
        time.sleep(5)  # the join ended before the signal came: fail below, not hang
    assert not returned, "the join ended before Ctrl-C: the test needs a slower join"
    assert time.perf_counter() - start < 1.5
    # And the next join runs as usual.
    assert epsjoin.count(X[:100], 0.5) == epsjoin.count(X[:100], 0.5, engine="brute-cpu")


def test_the_gil_is_released_during_a_join(rng):
    X = slow_join_points(rng)
    done = threading.Event()

    def join():
        epsjoin.count(X[:5000], 0.5, engine="brute-cpu", n_jobs=1)
        done.set()

    worker = threading.Thread(target=join)
    worker.start()
    time.sleep(0.05)
    # Python code runs here while the join goes on, which a held GIL would not let it.
    sum(range(200_000))
    ran_during_join = not done.is_set()
    worker.join()
    assert ran_during_join


def test_a_result_over_the_memory_limit_raises_memoryerror_first(rng):
    X = rng.random((20_000, 2))
    with pytest.raises(MemoryError, match="needs .* of host memory"):
        epsjoin.neighbor_graph(X, 0.05, memory_limit="1M", engine="cpu-grid")
    with pytest.raises(MemoryError):
        epsjoin.pairs(X, 0.05, memory_limit=1 << 20, engine="brute-cpu")
    # Counting keeps nothing, so the same limit is no obstacle.
    assert epsjoin.count(X, 0.05, memory_limit="1M") > 0


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_a_gpu_engine_without_a_gpu_says_so(engine):
    if epsjoin.build_info()["cuda_devices"]:
        pytest.skip("a CUDA device is present: the GPU tests run the engines")
    with pytest.raises(epsjoin.UnavailableError, match=engine):
        epsjoin.count(np.random.default_rng(0).random((50, 2)), 0.1, engine=engine)


def test_engines_and_build_info():
    names = [e["name"] for e in epsjoin.engines()]
    assert {"cpu-grid", "super-ego", "brute-cpu", "lbjoin"} <= set(names)
    info = epsjoin.build_info()
    assert info["version"] == epsjoin.__version__ and isinstance(info["cuda"], bool)


def test_help_is_enough_to_use_it():
    for name in epsjoin.__all__:
        obj = getattr(epsjoin, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and "{run_options}" not in obj.__doc__, name
    assert "Returns" in epsjoin.neighbor_graph.__doc__ and "n_jobs" in epsjoin.pairs.__doc__


def test_device_arrays_need_a_cuda_build():
    # With CUDA, test_gpu.py joins them; a CPU-only build refuses them with its reason.
    cupy = pytest.importorskip("cupy")
    if epsjoin.build_info()["cuda"]:
        pytest.skip("this build has CUDA: test_gpu.py joins device arrays")
    try:
        X = cupy.random.random((100, 2))
    except Exception as e:  # CuPy without a usable device
        pytest.skip(f"no CUDA device for CuPy: {e}")
    with pytest.raises(epsjoin.UnavailableError, match="CUDA"):
        epsjoin.count(X, 0.1)


class _FakeDeviceArray:
    """Looks like an array in CUDA memory to the package's dispatch, and has no data at all."""

    __cuda_array_interface__ = {"shape": (4, 2), "typestr": "<f8", "data": (0, True), "version": 3}


@pytest.mark.parametrize("join", ["neighbor_table", "neighbor_graph", "pairs", "count"])
def test_every_device_join_starts_with_the_same_checks(join):
    # The checks every device branch shares (_join._on_device) run before any device work, so
    # they are seen without CuPy or a GPU: another metric or a periodic box is refused by name.
    X = _FakeDeviceArray()
    with pytest.raises(ValueError, match="euclidean metric without boxsize; got metric='manhattan'"):
        getattr(epsjoin, join)(X, 0.1, metric="manhattan")
    with pytest.raises(ValueError, match="boxsize=2.0"):
        getattr(epsjoin, join)(X, 0.1, boxsize=2.0)


def test_host_tensors_go_through_numpy():
    torch = pytest.importorskip("torch")
    X = torch.rand(100, 2, dtype=torch.float64)
    assert epsjoin.count(X, 0.1) == epsjoin.count(X.numpy(), 0.1)


def test_a_list_of_devices_spreads_gpu_joins_and_leaves_cpu_joins_alone(rng):
    X = rng.random((3000, 3))
    one = epsjoin.neighbor_graph(X, 0.05, engine="cpu-grid", sort_indices=True)
    two = epsjoin.neighbor_graph(X, 0.05, engine="cpu-grid", sort_indices=True, device=[0, 1])
    assert (one != two).nnz == 0  # a CPU engine ignores the devices
    for bad in ([], [0, 0], [-1], [0, 1.5], "some", True, None):
        with pytest.raises(ValueError, match="device"):
            epsjoin.count(X, 0.05, device=bad)
    if not epsjoin.build_info()["cuda_devices"]:
        with pytest.raises(ValueError, match="no CUDA device"):
            epsjoin.count(X, 0.05, device="all")


def test_device_auto_is_the_default_and_lets_each_join_decide(rng):
    from epsjoin import _validation
    X = rng.random((2000, 2))
    assert epsjoin.count(X, 0.05, device="auto") == epsjoin.count(X, 0.05, device=0)
    assert epsjoin.count(X, 0.05) == epsjoin.count(X, 0.05, device=0)
    visible = [d["ordinal"] for d in epsjoin.build_info()["cuda_devices"]]
    settings = _validation.run_settings()
    assert settings.devices_automatic and list(settings.devices) == (visible or [0])
    settings = _validation.run_settings(device=[0])
    assert not settings.devices_automatic and list(settings.devices) == [0]
    with pytest.raises(ValueError, match="'auto' or 'all'"):
        epsjoin.count(X, 0.05, device="automatic")


def test_devices_split_is_passed_on_and_checked(rng):
    from epsjoin import _validation
    X = rng.random((1500, 3))
    for split in ("auto", "items", "slabs"):
        assert _validation.run_settings(devices_split=split).devices_split == split
        # A CPU engine ignores the devices, and so their split.
        assert (epsjoin.count(X, 0.05, devices_split=split, engine="cpu-grid")
                == epsjoin.count(X, 0.05, engine="cpu-grid"))
    for call in (epsjoin.count, epsjoin.neighbor_graph, epsjoin.pairs, epsjoin.neighbor_table,
                 epsjoin.radius_neighbors_graph):
        with pytest.raises(ValueError, match="devices_split"):
            call(X, 0.05, devices_split="halves")
    with pytest.raises(ValueError, match="devices_split"):
        epsjoin.count_radii(X, [0.05], devices_split="halves")


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_distance_graph(rng, sigint_raises, threads):
    # Every pair of 4000 points in 256-D: 16M distances, seconds here, whether the engine writes
    # them or the sink computes them after the rows.
    X = rng.random((4000, 256))
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    returned = False
    with pytest.raises(KeyboardInterrupt):
        epsjoin.neighbor_graph(X, 100.0, mode="distance", n_jobs=threads, engine="brute-cpu")
        returned = True
        time.sleep(5)
    assert not returned, "the graph was done before Ctrl-C: the test needs more of it"
    assert time.perf_counter() - start < 1.5
    # The same join runs to the end afterwards.
    g = epsjoin.neighbor_graph(X[:40], 100.0, mode="distance", n_jobs=threads,
                               engine="brute-cpu")
    rows, cols = g.nonzero()
    np.testing.assert_allclose(g.toarray()[rows, cols],
                               np.linalg.norm(X[:40][rows] - X[:40][cols], axis=1))
