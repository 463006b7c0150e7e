#!/usr/bin/env python3
"""epsjoin's Python package side by side with scipy and scikit-learn, in one run.

For each dataset (Expo2D, the papers' exponential set, and the real samples in
../shared/data/), eps is chosen for a selectivity S (mean neighbours a point), then:

- unique pairs: epsjoin.pairs (1 thread, all threads) vs cKDTree.query_pairs(output_type="ndarray")
  (scipy: one thread, tree build included);
- distance matrix: epsjoin.neighbor_graph(mode="distance") vs cKDTree.sparse_distance_matrix;
- graph: epsjoin.radius_neighbors_graph vs sklearn's radius_neighbors_graph(n_jobs=-1);
- Python overhead: wall time of epsjoin.neighbor_table (the CSR arrays, no copy) and of
  epsjoin.neighbor_graph less the C++ join's own time (stats["seconds"]), at the dataset's N
  and at N = 1000.

Each figure is the best of --repeat runs. Prints a Markdown table.

  build/python-venv/bin/python bench/python_vs_scipy.py --n 200000 --selectivity 50
"""

import argparse
import os
import platform
import time

import numpy as np
import scipy
import sklearn
from scipy.spatial import cKDTree
from sklearn.neighbors import radius_neighbors_graph as sklearn_graph

import epsjoin

ENGINE = "auto"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def best(repeat, call):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def eps_for_selectivity(X, s):
    """eps for S = ordered pairs / n: doubled from below (a count costs in proportion to S, so
    never start large), then bisected."""
    def selectivity(eps):
        return epsjoin.count(X, eps, engine=ENGINE) / len(X)
    hi = float(np.ptp(X, axis=0).max()) * 1e-6 or 1e-6
    while selectivity(hi) < s:
        hi *= 2
    lo = hi / 2
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if selectivity(mid) < s else (lo, mid)
    return hi


def datasets(n, rng, data_dir):
    yield f"Expo2D {n // 1000}k", rng.exponential(1 / 40, (n, 2))
    for name, d in (("gshhg_coast_2d_sample", 2), ("osm_coast_2d_sample", 2),
                    ("skimage_patch8x8_64d_sample", 64)):
        path = os.path.join(data_dir, name + ".f64")
        if os.path.exists(path):
            yield name, np.fromfile(path, dtype="<f8").reshape(-1, d)


def overhead(X, eps, repeat):
    """Seconds beyond the C++ join (stats["seconds"]) of neighbor_table (the library's CSR
    arrays) and of neighbor_graph (a csr_matrix of ones: one more array of nnz float64), with
    the join's seconds; the best of `repeat` each."""
    def extra(func):
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            result = func(X, eps, engine=ENGINE, return_stats=True)
            samples.append((time.perf_counter() - start - result[-1]["seconds"], result[-1]["seconds"]))
        return min(samples)
    table, join = extra(epsjoin.neighbor_table)
    graph, _ = extra(epsjoin.neighbor_graph)
    return table, graph, join


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="points of the Expo2D set")
    parser.add_argument("--selectivity", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", default=DATA,
                        help="folder of the real samples (default ../shared/data beside the checkout)")
    parser.add_argument("--engine", default="auto",
                        help="epsjoin's engine for every call (e.g. cpu-grid on a machine with a GPU, "
                             "whose auto takes it)")
    args = parser.parse_args()
    global ENGINE
    ENGINE = args.engine
    rng = np.random.default_rng(args.seed)
    cores = os.cpu_count()
    print(f"epsjoin {epsjoin.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"scikit-learn {sklearn.__version__}, Python {platform.python_version()}, "
          f"{cores} cores; best of {args.repeat}; S = {args.selectivity}\n")
    print("| dataset | N | d | eps | unique pairs | query_pairs s | epsjoin.pairs 1 thr s | "
          "ratio | sparse_distance_matrix s | neighbor_graph(distance) s | ratio | "
          f"sklearn ({cores} thr) s | epsjoin ({cores} thr) s | ratio | engine |")
    print("|---" * 15 + "|")
    overheads = []
    for name, X in datasets(args.n, rng, args.data):
        eps = eps_for_selectivity(X, args.selectivity)
        t_scipy, want = best(args.repeat, lambda: cKDTree(X).query_pairs(eps, output_type="ndarray"))
        t_pairs, (got, stats) = best(args.repeat, lambda: epsjoin.pairs(X, eps, n_jobs=1, engine=ENGINE, return_stats=True))
        assert len(got) == len(want), (name, len(got), len(want))
        t_sdm, _ = best(1, lambda: (lambda t: t.sparse_distance_matrix(t, eps, output_type="coo_matrix"))(cKDTree(X)))
        t_dist, _ = best(args.repeat, lambda: epsjoin.neighbor_graph(X, eps, mode="distance", n_jobs=1, engine=ENGINE))
        t_sk, _ = best(1, lambda: sklearn_graph(X, eps, n_jobs=-1))
        t_ours, _ = best(args.repeat, lambda: epsjoin.radius_neighbors_graph(X, eps, engine=ENGINE))
        print(f"| {name} | {len(X)} | {X.shape[1]} | {eps:.4g} | {len(got)} | {t_scipy:.3f} | "
              f"{t_pairs:.3f} | {t_scipy / t_pairs:.1f}x | {t_sdm:.3f} | {t_dist:.3f} | "
              f"{t_sdm / t_dist:.1f}x | {t_sk:.3f} | {t_ours:.3f} | {t_sk / t_ours:.1f}x | "
              f"{stats['engine']} |")
        overheads.append((name, len(X), *overhead(X, eps, args.repeat)))
    small = rng.exponential(1 / 40, (1000, 2))
    overheads.append(("Expo2D 1k", 1000, *overhead(small, eps_for_selectivity(small, args.selectivity),
                                                    max(args.repeat, 20))))
    print("\n| dataset | N | C++ join s | neighbor_table overhead ms | / join | "
          "neighbor_graph overhead ms | / join |")
    print("|---|---|---|---|---|---|---|")
    for name, n, table, graph, join in overheads:
        print(f"| {name} | {n} | {join:.4f} | {table * 1e3:.3f} | {table / join:.1%} | "
              f"{graph * 1e3:.3f} | {graph / join:.1%} |")


if __name__ == "__main__":
    main()
