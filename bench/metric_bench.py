"""Cosine join on the 64-D image-patch sample: epsjoin against scikit-learn's brute force and,
where it is installed, FAISS's exact range search (bench/RESULTS.md, issue 27).

usage: python bench/metric_bench.py [DATA_DIR] [THREADS]
"""

import os
import sys
import time

import numpy as np

import epsjoin

data_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/data")
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
X = np.fromfile(os.path.join(data_dir, "skimage_patch8x8_64d_sample.f64")).reshape(-1, 64)
X = X[np.any(X != 0, axis=1)]  # cosine is undefined for a zero row


def best_of(f, runs=3):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


for eps in (0.001, 0.01):
    t, got = best_of(lambda: epsjoin.count(X, eps, metric="cosine", engine="cpu-grid", n_jobs=threads))
    t_e, euclid = best_of(lambda: epsjoin.count(X / np.linalg.norm(X, axis=1)[:, None],
                                                np.sqrt(2 * eps), engine="cpu-grid", n_jobs=threads))
    print(f"eps {eps}: N {len(X)}, epsjoin cosine {t:.4f} s ({got} pairs); "
          f"Euclidean join of the unit vectors at sqrt(2 eps) {t_e:.4f} s ({euclid} pairs)")
    from sklearn.neighbors import NearestNeighbors

    def sklearn_brute():
        nn = NearestNeighbors(radius=eps, metric="cosine", algorithm="brute", n_jobs=threads).fit(X)
        return nn.radius_neighbors_graph(X, mode="connectivity").nnz - len(X)  # self included
    t_s, n_s = best_of(sklearn_brute, runs=1)
    print(f"  scikit-learn NearestNeighbors(algorithm='brute', metric='cosine') {t_s:.4f} s "
          f"({n_s} pairs)")
    try:
        import faiss
    except ImportError:
        continue
    faiss.omp_set_num_threads(threads)
    U = (X / np.linalg.norm(X, axis=1)[:, None]).astype(np.float32)

    def faiss_range():
        index = faiss.IndexFlatIP(64)
        index.add(U)
        lims, _, _ = index.range_search(U, 1.0 - eps)
        return int(lims[-1]) - len(U)
    t_f, n_f = best_of(faiss_range)
    print(f"  faiss IndexFlatIP range_search (float32, inner product > 1 - eps) {t_f:.4f} s "
          f"({n_f} pairs, self excluded approximately)")
