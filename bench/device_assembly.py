#!/usr/bin/env python3
"""A device table's assembly in the library against the same steps in CuPy, in one process.

Points as a CuPy array on the GPU (uniform 2-D, eps for a selectivity S). For each step the
library's call (`epsjoin.neighbor_graph(mode="distance")`, `neighbor_table(sort_indices=True)`,
`pairs`) is timed against the table alone and against what the Python layer did before issue 44
part 6: the same step in CuPy array operations on the library's table (row ids by repeat,
distances gathered in chunks, rows sorted by an argsort of row * n + id, pairs by a mask). The
best of --repeat calls after a first one; every call ends with a device synchronisation.

  python3 bench/device_assembly.py --case 10000000:50
"""

import argparse
import time

import cupy
import numpy as np

import epsjoin


def best(call, repeat):
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        result = call()
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - start)
        del result
    return times[0], min(times[1:])


def cupy_rows(indptr):
    n = indptr.shape[0] - 1
    return cupy.repeat(cupy.arange(n, dtype=cupy.int64), cupy.diff(indptr))


def cupy_distances(X, eps):
    indptr, indices = epsjoin.neighbor_table(X, eps)
    rows = cupy_rows(indptr)
    total = cupy.zeros(indices.shape[0])
    chunk = 1 << 24
    for begin in range(0, indices.shape[0], chunk):
        q, j = rows[begin:begin + chunk], indices[begin:begin + chunk].astype(cupy.int64)
        part = cupy.zeros(q.shape[0])
        for k in range(X.shape[1]):
            diff = X[q, k] - X[j, k]
            part += diff * diff
        total[begin:begin + chunk] = cupy.sqrt(part)
    return total


def cupy_sorted(X, eps):
    indptr, indices = epsjoin.neighbor_table(X, eps)
    keys = cupy_rows(indptr) * X.shape[0] + indices.astype(cupy.int64)
    return indices[cupy.argsort(keys)]


def cupy_pairs(X, eps):
    indptr, indices = epsjoin.neighbor_table(X, eps)
    i, j = cupy_rows(indptr), indices.astype(cupy.int64)
    kept = j > i
    return cupy.stack([i[kept], j[kept]], axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], help="N:S (default 10000000:50)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| N | S | pairs | step | library first / warm s | CuPy steps warm s | "
          "library / CuPy | library / table alone |")
    print("| ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    for case in args.case or ["10000000:50"]:
        n, s = (int(float(v)) for v in case.split(":"))
        X = cupy.asarray(np.random.default_rng(7).random((n, 2)))
        eps = float(np.sqrt(s / (np.pi * n)))
        _, table = best(lambda: epsjoin.neighbor_table(X, eps), args.repeat)
        nnz = int(epsjoin.neighbor_table(X, eps)[0][-1])
        steps = {
            "distance graph": (lambda: epsjoin.neighbor_graph(X, eps, mode="distance"),
                               lambda: cupy_distances(X, eps)),
            "sorted table": (lambda: epsjoin.neighbor_table(X, eps, sort_indices=True),
                             lambda: cupy_sorted(X, eps)),
            "unique pairs": (lambda: epsjoin.pairs(X, eps), lambda: cupy_pairs(X, eps)),
        }
        print(f"| {n} | {s} | {nnz} | table alone | - / {table:.4f} | | | 1.00 |")
        for name, (library, steps_in_cupy) in steps.items():
            first, warm = best(library, args.repeat)
            _, cupy_warm = best(steps_in_cupy, args.repeat)
            print(f"| {n} | {s} | {nnz} | {name} | {first:.4f} / {warm:.4f} | {cupy_warm:.4f} | "
                  f"{warm / cupy_warm:.2f} | {warm / table:.2f} |")


if __name__ == "__main__":
    main()
