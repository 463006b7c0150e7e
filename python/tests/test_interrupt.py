"""Ctrl-C within half a second in the slowest calls (issue 43, part 4), each in a Python of its
own: the call starts, SIGINT comes a second later (in the sorted table's row sort, after its
join), and KeyboardInterrupt must reach the caller
soon after, the interpreter then exiting cleanly with nothing leaked (nanobind says "leaked" on
stderr for an instance left alive).

The bound asserted is 1.5 s, for a loaded 2-core test machine; the target, and what an idle
machine measures, is 0.5 s. Each test prints its latency (pytest -s shows it). The pytest suite
runs one test at a time, so nothing else loads the machine meanwhile but other programs.
"""

import signal
import subprocess
import sys
import textwrap
import time

BOUND = 1.5
# Points where cpu-grid's grid indexes no dimension (16 dimensions spanning < 4 cells each): one
# cell, so on one thread the whole join was one task that nothing interrupted.
ONE_CELL = "X = np.random.default_rng(7).random((30_000, 16)); eps = 0.88"


def interrupt(setup, call, delay="1.0"):
    """Runs `setup` then `call` in a new Python, sends SIGINT `delay` seconds into the call (an
    expression evaluated after `setup`), and returns the seconds until the call raised
    KeyboardInterrupt."""
    code = textwrap.dedent("""
        import signal, sys, time
        import numpy as np
        import epsjoin
        signal.signal(signal.SIGINT, signal.default_int_handler)
        SETUP
        print("calling", DELAY, flush=True)
        try:
            CALL
            print("returned", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        """).replace("SETUP", textwrap.dedent(setup).strip()).replace("DELAY", delay)
    code = code.replace("CALL", call)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        first = child.stdout.readline().split()
        assert first[:1] == ["calling"], child.stderr.read()
        time.sleep(float(first[1]))
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        said = child.stdout.readline().strip()
        latency = time.perf_counter() - sent
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    print(f"\n{call}: KeyboardInterrupt {latency:.3f} s after SIGINT")
    assert said == "interrupted", f"the call {said or 'died'} instead: {err}"
    assert child.returncode == 0, err
    assert "leaked" not in err, err
    return latency


def test_eps_index_graph():
    latency = interrupt(f"{ONE_CELL}; index = epsjoin.EpsIndex(X, eps)",
                        "index.neighbor_graph(n_jobs=1)")
    assert latency < BOUND


def test_eps_index_count():
    latency = interrupt(f"{ONE_CELL}; index = epsjoin.EpsIndex(X, eps)", "index.count(n_jobs=1)")
    assert latency < BOUND


def test_distance_graph():
    latency = interrupt(ONE_CELL, 'epsjoin.neighbor_graph(X, eps, mode="distance", '
                                  'engine="cpu-grid", n_jobs=1)')
    assert latency < BOUND


def test_dbscan_in_many_dimensions():
    # super-ego (auto's choice here): a work item joins a part of the points with all of them,
    # seconds each in 256 dimensions.
    # The estimator is imported first (scikit-learn's import takes seconds on a loaded machine):
    # the signal must land in the join, not in an import.
    latency = interrupt("X = np.random.default_rng(7).random((20_000, 256)); epsjoin.DBSCAN",
                        "epsjoin.DBSCAN(eps=5.9, min_samples=5).fit(X)")
    assert latency < BOUND


def test_pairs_on_super_ego():
    latency = interrupt("X = np.random.default_rng(7).random((20_000, 256))",
                        'epsjoin.pairs(X, 5.9, engine="super-ego", n_jobs=1)')
    assert latency < BOUND


def test_sorted_table():
    # The rows' sort comes after the join, in the sink's finish (107M neighbours: about 1 s on
    # one thread). The signal comes halfway between the end of the join and the end of the sort,
    # both timed warm in the child: a process's first join pays its fresh pages (1.2 s against
    # 0.36 s warm on an idle 2-core machine), which timed alone put the signal after the sort.
    setup = textwrap.dedent("""
        X = np.random.default_rng(7).random((100_000, 2))
        epsjoin.neighbor_table(X, 0.06, n_jobs=1)
        start = time.perf_counter()
        epsjoin.neighbor_table(X, 0.06, n_jobs=1)
        join_seconds = time.perf_counter() - start
        start = time.perf_counter()
        epsjoin.neighbor_table(X, 0.06, sort_indices=True, n_jobs=1)
        sorted_seconds = time.perf_counter() - start""")
    latency = interrupt(setup, "epsjoin.neighbor_table(X, 0.06, sort_indices=True, n_jobs=1)",
                        delay="(join_seconds + sorted_seconds) / 2")
    assert latency < BOUND
