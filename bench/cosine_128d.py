"""Cosine join of a 1M-point 128-D embedding-like set: epsjoin against FAISS's exact range search
(faiss-cpu) and scikit-learn's brute force, on the same queries (bench/RESULTS.md, issue 27).

usage: python bench/cosine_128d.py --bin build-cpu/epsjoin [--n 1000000] [--queries 10000]
                                   [--threads 2] [--neighbours 50] [--skip-sklearn]
                                   [--engines auto:f64,super-ego:f32,cpu-grid:f64]

The set: 1M points around 20,000 random directions (unit centres plus Gaussian noise of 0.35 per
coordinate / sqrt(128), so a point's cosine distance to its centre is about 0.06), numpy's PCG64
with a fixed seed. The queries are its first rows (an A x B join of the queries against the whole
set: on a 2-core machine the full self-join would take hours in any of the three). eps is the
median cosine distance of the queries' `--neighbours`-th nearest neighbour (FAISS's exact k-NN),
so S is about that. Each method's count of pairs is printed: epsjoin's is the exact float64
result, FAISS decides in float32 inner products.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np


def make_set(n, d, centres, seed=27):
    rng = np.random.Generator(np.random.PCG64(seed))
    c = rng.standard_normal((centres, d))
    c /= np.linalg.norm(c, axis=1)[:, None]
    x = c[rng.integers(0, centres, n)] + rng.standard_normal((n, d)) * (0.35 / np.sqrt(d))
    return np.ascontiguousarray(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--neighbours", type=int, default=50)
    ap.add_argument("--skip-sklearn", action="store_true")
    ap.add_argument("--engines", default="auto:f64,super-ego:f32,cpu-grid:f64",
                    help="ENGINE:PRECISION,... epsjoin runs")
    args = ap.parse_args()
    import faiss

    faiss.omp_set_num_threads(args.threads)
    x = make_set(args.n, 128, 20000)
    q = x[: args.queries]
    unit = (x / np.linalg.norm(x, axis=1)[:, None]).astype(np.float32)
    unit_q = unit[: args.queries]
    index = faiss.IndexFlatIP(128)
    index.add(unit)
    sims, _ = index.search(unit_q[:1000], args.neighbours + 1)
    eps = float(np.median(1.0 - sims[:, args.neighbours]))
    print(f"N {args.n}, 128-D, {args.queries} queries, eps {eps:.6g} (S about {args.neighbours}), "
          f"{args.threads} threads")

    t = time.perf_counter()
    lims, _, _ = index.range_search(unit_q, 1.0 - eps)
    t_faiss = time.perf_counter() - t
    faiss_pairs = int(lims[-1])
    print(f"FAISS IndexFlatIP.range_search (float32): {t_faiss:.2f} s, {faiss_pairs} pairs")

    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), x)
        np.save(os.path.join(tmp, "q.npy"), q)
        for run in args.engines.split(","):
            engine, _, precision = run.partition(":")
            out = subprocess.run([args.bin, "join", "--input", os.path.join(tmp, "x.npy"),
                                  "--queries", os.path.join(tmp, "q.npy"), "--metric", "cosine",
                                  "--eps", repr(eps), "--engine", engine, "--threads",
                                  str(args.threads), "--precision", precision or "f64",
                                  "--format", "count", "--json"],
                                 capture_output=True, text=True, check=True)
            stats = json.loads(out.stdout)
            print(f"epsjoin {stats['engine']} {precision or 'f64'} (exact, float64 re-check): "
                  f"{stats['seconds']:.2f} s, {stats['pairs']} pairs; "
                  f"{t_faiss / stats['seconds']:.2f}x FAISS's speed")

    if not args.skip_sklearn:
        from sklearn.neighbors import NearestNeighbors

        t = time.perf_counter()
        nn = NearestNeighbors(radius=eps, metric="cosine", algorithm="brute",
                              n_jobs=args.threads).fit(x)
        found = nn.radius_neighbors(q, return_distance=False)
        t_sk = time.perf_counter() - t
        print(f"scikit-learn brute force (cosine): {t_sk:.2f} s, {sum(len(r) for r in found)} pairs")


if __name__ == "__main__":
    main()
