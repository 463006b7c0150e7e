"""One point at a time: EpsIndex.query_ball_point against cKDTree's, per call, in the same run
(bench/RESULTS.md, issue 46). The cost measured is the call's overhead: each query has about
ten neighbours.

usage: python bench/index_single_point.py [N] [CALLS]
"""

import sys
import time

import numpy as np
from scipy.spatial import cKDTree

import epsjoin

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
rng = np.random.default_rng(46)
X = rng.random((n, 2))
r = float(np.sqrt(10 / (np.pi * n)))  # about ten neighbours a point
queries = rng.random((calls, 2))
tree = cKDTree(X)
index = epsjoin.EpsIndex(X, r)


def per_call(f):
    """Median over 5 rounds of the mean time of one call, in microseconds."""
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for q in queries:
            f(q)
        rounds.append((time.perf_counter() - t) / calls * 1e6)
    return float(np.median(rounds))


for q in queries[:200]:  # the same answers, before anything is timed
    assert sorted(index.query_ball_point(q, r)) == sorted(tree.query_ball_point(q, r))

cases = [
    ("list", lambda q: tree.query_ball_point(q, r), lambda q: index.query_ball_point(q, r)),
    ("return_length", lambda q: tree.query_ball_point(q, r, return_length=True),
     lambda q: index.query_ball_point(q, r, return_length=True)),
]
print(f"N {n}, 2-D uniform, r {r:.5f}, {calls} single-point calls, median of 5 rounds")
for name, theirs, ours in cases:
    t_scipy, t_ours = per_call(theirs), per_call(ours)
    print(f"{name:14s} cKDTree {t_scipy:6.1f} us  EpsIndex {t_ours:6.1f} us  "
          f"ratio {t_ours / t_scipy:.2f}x")
