"""k nearest within a radius (issue 48 part 3) against scikit-learn's unbounded kneighbors.

The radius is the 95th percentile of the points' k-th neighbour distance (from scikit-learn's
answer), so it holds k neighbours for 95% of the points, as the issue's target sets it. Both
answer the points themselves as queries (each point its own nearest, at 0) with n_jobs 2;
epsjoin's rows equal scikit-learn's wherever k neighbours lie within the radius. The first call
of each is reported beside the best of the rest (a process's first run).

    python bench/knn_radius.py [--n 200000] [--d 2 3] [--k 10] [--repeat 3]
"""

import argparse
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

import epsjoin


def timed(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times[0], min(times[1:] or times), result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--d", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    print(f"n {a.n}, k {a.k}, n_jobs 2; seconds first / best of {a.repeat}")
    for d in a.d:
        X = rng.random((a.n, d))
        sk_first, sk_best, (sk_d, sk_i) = timed(
            lambda: NearestNeighbors(n_neighbors=a.k, n_jobs=2).fit(X).kneighbors(X), a.repeat)
        r = float(np.quantile(sk_d[:, -1], 0.95))
        ej_first, ej_best, (ej_d, ej_i) = timed(
            lambda: epsjoin.RadiusNeighbors(radius=r, n_neighbors=a.k, n_jobs=2).fit(X)
            .kneighbors(X), a.repeat)
        ix_first, ix_best, (ix_d, ix_i) = timed(
            lambda: epsjoin.EpsIndex(X, r, n_jobs=2).kneighbors(X, a.k), a.repeat)
        full = np.isfinite(ej_d[:, -1])
        same = (np.array_equal(ej_i[full], sk_i[full]) and np.array_equal(ix_i, ej_i)
                and np.allclose(ej_d[full], sk_d[full], rtol=1e-12, atol=0))
        print(f"d {d}: radius {r:.4g}, rows with k within it {full.mean():.1%}, equal {same}")
        print(f"  scikit-learn kneighbors  {sk_first:.3f} / {sk_best:.3f}")
        print(f"  RadiusNeighbors.kneighbors {ej_first:.3f} / {ej_best:.3f}  "
              f"({sk_best / ej_best:.1f}x)")
        print(f"  EpsIndex(...).kneighbors   {ix_first:.3f} / {ix_best:.3f}  "
              f"({sk_best / ix_best:.1f}x)")


if __name__ == "__main__":
    main()
