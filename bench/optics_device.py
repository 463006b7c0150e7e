"""OPTICS on a GPU engine against the CSR join it rests on (issue 48's H100 target: uniform 2-D
10M S 50 within 3x the CSR join's time). Both in one process, the join warmed first; stages of
each OPTICS run printed so the sequential order's share shows.

    python bench/optics_device.py [--n 10000000] [--s 50] [--engine lbjoin]
"""

import argparse
import math
import time

import numpy as np

import epsjoin


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--s", type=float, default=50)
    ap.add_argument("--engine", default="lbjoin")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    X = np.random.default_rng(5).random((a.n, 2))
    max_eps = math.sqrt(a.s / (math.pi * a.n))
    for i in range(a.repeat + 1):
        start = time.perf_counter()
        indptr, _ = epsjoin.neighbor_table(X, max_eps, engine=a.engine)
        join = time.perf_counter() - start
        start = time.perf_counter()
        est = epsjoin.OPTICS(min_samples=10, max_eps=max_eps, engine=a.engine,
                             cluster_method="dbscan").fit(X)
        whole = time.perf_counter() - start
        print(f"run {i}: CSR join {join:.3f} s ({indptr[-1]} pairs); OPTICS {whole:.3f} s "
              f"= {whole / join:.1f}x; stages {est.stats_['stages']}", flush=True)


if __name__ == "__main__":
    main()
