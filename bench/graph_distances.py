#!/usr/bin/env python3
"""A distance graph against the connectivity graph of the same join, in one process (issue 44).

`epsjoin.neighbor_graph(X, eps, mode="distance")` and `mode="connectivity"` on uniform 2-D
points at a selectivity S (mean neighbours a point), alternated --repeat times after a first
call of each (a process's first call pays the fresh pages of its arrays). Prints a Markdown
table: the first and the best warm seconds of each mode, and their ratio (the issue's target:
distance at most 1.3x connectivity), with the engine and where its distances came from.

  build/python-venv/bin/python bench/graph_distances.py --case 1000000:50 --case 2000000:150

With --device the points are a CuPy array on the GPU: the table, its distances (on the device,
by the library) and the graph stay there; the times include a synchronisation.
"""

import argparse
import os
import platform
import time

import numpy as np

import epsjoin


def timed(call, device=False):
    start = time.perf_counter()
    result = call()
    if device:
        import cupy

        cupy.cuda.Device().synchronize()
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[],
                        help="N:S, uniform 2-D points at selectivity S (repeatable; "
                             "default 1000000:50)")
    parser.add_argument("--threads", type=int, default=1, help="n_jobs (default 1)")
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--repeat", type=int, default=3, help="warm calls of each mode")
    parser.add_argument("--device", action="store_true",
                        help="points as a CuPy array on the GPU (needs CuPy)")
    args = parser.parse_args()
    cases = args.case or ["1000000:50"]
    print(f"{platform.node()}, {os.cpu_count()} cores, n_jobs {args.threads}, "
          f"engine {args.engine}, {'device (CuPy)' if args.device else 'host'} points, "
          f"epsjoin {epsjoin.__version__}\n")
    print("| N | S | pairs | connectivity first / warm s | distance first / warm s | "
          "ratio (warm) | engine | distances |")
    print("| ---: | ---: | ---: | --- | --- | ---: | --- | --- |")
    for case in cases:
        n, s = (int(float(v)) for v in case.split(":"))
        X = np.random.default_rng(7).random((n, 2))
        if args.device:
            import cupy

            X = cupy.asarray(X)
        eps = float(np.sqrt(s / (np.pi * n)))  # uniform in the unit square, edges aside
        times = {"connectivity": [], "distance": []}
        stats = {}
        for _ in range(args.repeat + 1):
            for mode in times:
                seconds, (graph, stats[mode]) = timed(lambda: epsjoin.neighbor_graph(
                    X, eps, mode=mode, n_jobs=args.threads, engine=args.engine,
                    return_stats=True), args.device)
                times[mode].append(seconds)
                nnz = graph.nnz
                del graph
        con, dist = times["connectivity"], times["distance"]
        warm_con, warm_dist = min(con[1:]), min(dist[1:])
        note = ("on the device, after the rows (device_distances)" if args.device else
                stats["distance"].get("notes", {}).get("distances", "by the sink, after the rows"))
        print(f"| {n} | {s} | {nnz} | {con[0]:.3f} / {warm_con:.3f} | {dist[0]:.3f} / "
              f"{warm_dist:.3f} | {warm_dist / warm_con:.2f} | {stats['distance']['engine']} | "
              f"{note} |")


if __name__ == "__main__":
    main()
