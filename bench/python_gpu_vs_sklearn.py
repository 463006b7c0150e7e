#!/usr/bin/env python3
"""Issue 25's GPU target: epsjoin.radius_neighbors_graph on a GPU engine against scikit-learn's
radius_neighbors_graph (n_jobs=-1, every core), in one run, with the results compared element for
element. Inputs from numpy (the points are uploaded) and, where CuPy is there, from a CuPy array
(the graph stays on the device). Each time is the best of --repeat runs. Prints a Markdown table.

  python3 bench/python_gpu_vs_sklearn.py --data ../shared/data --engine lbjoin
"""
import argparse
import os
import time

import numpy as np
from sklearn.neighbors import radius_neighbors_graph as sklearn_graph

import epsjoin


def best(repeat, call):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def expo(n, d, seed=1):
    rng = np.random.default_rng(seed)
    return rng.exponential(1 / 40.0, size=(n, d))


def eps_for(X, selectivity, engine):
    """eps whose mean neighbour count is about `selectivity`, by bisection on counts."""
    lo, hi = 0.0, float(np.max(X.max(axis=0) - X.min(axis=0)))
    hi = min(hi, 1e-3)
    while epsjoin.count(X, hi, engine=engine) / len(X) < selectivity:
        hi *= 2
    for _ in range(30):
        mid = (lo + hi) / 2
        if epsjoin.count(X, mid, engine=engine) / len(X) < selectivity:
            lo = mid
        else:
            hi = mid
    return hi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    ap.add_argument("--engine", default="lbjoin")
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--selectivity", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cases = [(f"Expo2D {args.n // 1_000_000}M", expo(args.n, 2))]
    for name in ("gshhg_coast_2d_sample.f64", "osm_coast_2d_sample.f64"):
        path = os.path.join(args.data, name)
        if os.path.exists(path):
            cases.append((name.split("_")[0] + " coast", np.fromfile(path).reshape(-1, 2)))
    try:
        import cupy
    except ImportError:
        cupy = None
    print(f"| case | N | S | eps | scikit-learn s | epsjoin {args.engine} (numpy) s | ratio | "
          f"epsjoin (CuPy) s | ratio | same graph |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, X in cases:
        eps = eps_for(X, args.selectivity, args.engine)
        s = epsjoin.count(X, eps, engine=args.engine) / len(X)
        t_sk, want = best(1, lambda: sklearn_graph(X, eps, mode="connectivity", n_jobs=-1))
        t_ej, got = best(args.repeat, lambda: epsjoin.radius_neighbors_graph(X, eps, engine=args.engine))
        want.sort_indices()
        got.sort_indices()
        same = (want.shape == got.shape and np.array_equal(want.indptr, got.indptr)
                and np.array_equal(want.indices, got.indices))
        t_dev = ratio_dev = "-"
        if cupy is not None:
            Xd = cupy.asarray(X)
            t, _ = best(args.repeat, lambda: (epsjoin.radius_neighbors_graph(Xd, eps, engine=args.engine),
                                              cupy.cuda.runtime.deviceSynchronize()))
            t_dev, ratio_dev = f"{t:.4f}", f"{t_sk / t:.0f}x"
        print(f"| {name} | {len(X):,} | {s:.1f} | {eps:.6g} | {t_sk:.3f} | {t_ej:.4f} | "
              f"{t_sk / t_ej:.0f}x | {t_dev} | {ratio_dev} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
