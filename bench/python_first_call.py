#!/usr/bin/env python3
"""Issue 44 part 4 from Python: a process's first `epsjoin.pairs` call against its warm calls,
and against scipy's `cKDTree.query_pairs` in the same process, on one thread.

Uniform and Expo-like (exponential, lambda 40) 2-D points, 1M by default, eps for S 50. Each
PROCESSES process (fresh, started one after the other) times one call of epsjoin.pairs, three
more, then query_pairs (tree build included, output_type "ndarray") once; one line a process.
The first process of a machine that has not used its memory yet pays for the memory's first
touch (on a virtual machine, the host backing each page); later processes reuse it.

  build/python-venv/bin/python bench/python_first_call.py [--n 1000000] [--processes 3]
"""

import argparse
import json
import subprocess
import sys
import time

import numpy as np


def points(kind, n):
    rng = np.random.default_rng(11)
    return rng.random((n, 2)) if kind == "uniform" else rng.exponential(1 / 40, (n, 2))


def eps_for(X, selectivity):
    """eps at which a sample of 2,000 queries has `selectivity` neighbours on average."""
    from scipy.spatial import cKDTree
    tree = cKDTree(X)
    sample = X[:: max(1, len(X) // 2000)]

    def mean(eps):
        return float(np.mean(tree.query_ball_point(sample, eps, return_length=True))) - 1

    hi = float(np.ptp(X, axis=0).max()) * np.sqrt(selectivity / (np.pi * len(X)))
    while mean(hi) < selectivity:
        hi *= 2
    lo = 0.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) < selectivity else (lo, mid)
    return float(hi)


def one_process(kind, n, eps):
    import epsjoin
    from scipy.spatial import cKDTree
    X = points(kind, n)
    calls = []
    for _ in range(4):
        start = time.perf_counter()
        result = epsjoin.pairs(X, eps, n_jobs=1)
        calls.append(time.perf_counter() - start)
        pairs = len(result)
        del result
    start = time.perf_counter()
    scipy_pairs = len(cKDTree(X).query_pairs(eps, output_type="ndarray"))
    scipy_seconds = time.perf_counter() - start
    assert scipy_pairs == pairs, (scipy_pairs, pairs)
    print(json.dumps({"calls": calls, "scipy": scipy_seconds, "pairs": pairs}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_process(args.one[0], int(args.one[1]), float(args.one[2]))
        return
    print("| points | process | first call s | warm calls s (median) | first / warm | scipy s | "
          "scipy / warm |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("uniform", "expo"):
        eps = eps_for(points(kind, args.n), 50)
        for p in range(1, args.processes + 1):
            out = subprocess.run([sys.executable, __file__, "--one", kind, str(args.n), repr(eps)],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            warm = float(np.median(r["calls"][1:]))
            print(f"| {kind} 2-D {args.n:,} S 50 ({r['pairs']:,} pairs) | {p} | "
                  f"{r['calls'][0]:.3f} | {warm:.3f} | {r['calls'][0] / warm:.2f} | "
                  f"{r['scipy']:.3f} | {r['scipy'] / warm:.1f} |", flush=True)


if __name__ == "__main__":
    main()
