"""OPTICS against scikit-learn's (issue 48 part 2): uniform 2-D points, max_eps for about S
neighbours a point, min_samples 10, the same ordering checked, n_jobs 2. The first fit of each
process is reported beside the best of the others; peak memory (ru_maxrss) is read in a child
process per estimator.

    python bench/optics_bench.py [--n 200000] [--s 50] [--repeat 2]
"""

import argparse
import math
import multiprocessing as mp
import resource
import time

import numpy as np


def fit(which, n, s, repeat, out):
    import epsjoin
    from sklearn.cluster import OPTICS

    X = np.random.default_rng(3).random((n, 2))
    max_eps = math.sqrt(s / (math.pi * n))
    make = {"epsjoin": lambda: epsjoin.OPTICS(min_samples=10, max_eps=max_eps, n_jobs=2),
            "sklearn": lambda: OPTICS(min_samples=10, max_eps=max_eps, n_jobs=2)}[which]
    times, est = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        est = make().fit(X)
        times.append(time.perf_counter() - start)
    out.put((which, times, est.ordering_, est.reachability_,
             resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--s", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    results = {}
    for which in ("epsjoin", "sklearn"):
        q = ctx.Queue()
        repeat = a.repeat if which == "epsjoin" else 1
        p = ctx.Process(target=fit, args=(which, a.n, a.s, repeat, q))
        p.start()
        results[which] = q.get()
        p.join()
    (_, t_e, o_e, r_e, m_e), (_, t_s, o_s, r_s, m_s) = results["epsjoin"], results["sklearn"]
    same = np.array_equal(o_e, o_s) and np.allclose(r_e, r_s, rtol=0, atol=1e-12)
    print(f"n {a.n}, 2-D uniform, S {a.s}, min_samples 10, n_jobs 2; ordering equal: {same}")
    print(f"  scikit-learn OPTICS  {t_s[0]:.2f} s, peak RSS {m_s:.0f} MiB")
    print(f"  epsjoin.OPTICS       first {t_e[0]:.3f} s, best {min(t_e):.3f} s, peak RSS "
          f"{m_e:.0f} MiB  ({t_s[0] / min(t_e):.0f}x, first run {t_s[0] / t_e[0]:.0f}x)")


if __name__ == "__main__":
    main()
