#!/usr/bin/env python3
"""Pairs larger than memory from Python: epsjoin.iter_pairs and join_to against epsjoin.pairs
(and np.save of its array), in one process.

Uniform 2-D points at a selectivity S (mean neighbours a point). For each way: the best of
--repeat calls (after a first), and the peak of numpy's allocations (tracemalloc) during one
call: pairs() holds the whole result, iter_pairs one block, join_to none (the library writes the
file). scipy's cKDTree.query_pairs is the peer.

  build/python-venv/bin/python bench/python_stream.py --case 1000000:50 --n-jobs 2
"""

import argparse
import os
import tempfile
import time
import tracemalloc

import numpy as np
from scipy.spatial import cKDTree

import epsjoin


def measured(call, repeat):
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return times[0], min(times[1:]), peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], help="N:S (default 1000000:50)")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--block-bytes", default="64M")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    folder = tempfile.mkdtemp()
    print(f"{os.cpu_count()} cores, n_jobs {args.n_jobs}, blocks of {args.block_bytes}\n")
    print("| N | S | pairs | way | first / warm s | warm / pairs() | numpy peak MB |")
    print("| ---: | ---: | ---: | --- | --- | ---: | ---: |")
    for case in args.case or ["1000000:50"]:
        n, s = (int(float(v)) for v in case.split(":"))
        X = np.random.default_rng(7).random((n, 2))
        eps = float(np.sqrt(s / (np.pi * n)))
        m = len(epsjoin.pairs(X, eps, n_jobs=args.n_jobs))

        def blocks():
            for block in epsjoin.iter_pairs(X, eps, n_jobs=args.n_jobs,
                                            block_bytes=args.block_bytes):
                del block

        path = os.path.join(folder, "p.npy")
        ways = {
            "pairs()": lambda: epsjoin.pairs(X, eps, n_jobs=args.n_jobs),
            "iter_pairs": blocks,
            "pairs() + np.save": lambda: np.save(path, epsjoin.pairs(X, eps, n_jobs=args.n_jobs)),
            "join_to .npy": lambda: epsjoin.join_to(path, X, eps, n_jobs=args.n_jobs),
            "cKDTree.query_pairs": lambda: cKDTree(X).query_pairs(eps, output_type="ndarray"),
        }
        base = None
        for name, call in ways.items():
            first, warm, peak = measured(call, args.repeat)
            base = base or warm
            print(f"| {n} | {s} | {m} | {name} | {first:.3f} / {warm:.3f} | {warm / base:.2f} | "
                  f"{peak / 1e6:.0f} |")
    os.remove(os.path.join(folder, "p.npy"))
    os.rmdir(folder)


if __name__ == "__main__":
    main()
