#!/usr/bin/env python3
"""epsjoin.dask on a LocalCluster of processes: each worker's peak memory against its share of
the points, and the time against the one-node function in the same run (issue 47).

Uniform 2-D points at selectivity S, generated on the workers (da.random), chunked into one
chunk a worker; counts per point, DBSCAN labels, and the pairs, once with one partition a slab
and once in blocks of --block-pairs (each partition reduced to a fingerprint where it was made,
as a consumer that writes it out would, and the fingerprints compared with one node's pairs').
A worker's peak is its process's VmHWM minus its resident size before the job (the peak is reset
first, /proc/self/clear_refs); "broadcast" is what every worker would hold if the points were
sent to all of them (cuML's multi-GPU DBSCAN scatters them with broadcast=True).

  build/python-venv/bin/python bench/dask_memory.py --n 4000000 --s 50 --workers 1,2,4,8
  build/python-venv/bin/python bench/dask_memory.py --n 2000000 --jobs pairs --block-pairs 1048576
"""

import argparse
import time

import numpy as np


def status_mb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def hwm_mb():
    return status_mb("VmHWM")


def reset_peak_mb():
    """Resets this process's peak (VmHWM) to its resident size now, which it returns."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    return status_mb("VmRSS")


#: Wide enough that no slab is cut: one partition a slab, as before blocks.
ONE_BLOCK_A_SLAB = 2**62
_MIX = np.uint64(0x9E3779B97F4A7C15)


def fingerprint(frame, n):
    """(pairs, sum of keys, sum of mixed keys), uint64 with wrap-around: equal for equal sets
    of pairs in any order and any cut into partitions."""
    key = frame["i"].to_numpy().astype(np.uint64) * np.uint64(n) + \
        frame["j"].to_numpy().astype(np.uint64)
    return np.array([key.size, key.sum(dtype=np.uint64), (key * _MIX).sum(dtype=np.uint64)],
                    dtype=np.uint64)


def summed(*parts):
    return np.sum(parts, axis=0, dtype=np.uint64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=4_000_000)
    parser.add_argument("--s", type=float, default=50)
    parser.add_argument("--workers", default="2",
                        help="worker processes, or a comma-separated list (a cluster each)")
    parser.add_argument("--min-samples", type=int, default=20)
    parser.add_argument("--jobs", default="count,dbscan,pairs",
                        help="a comma-separated choice of count, dbscan, pairs")
    parser.add_argument("--block-pairs", type=int, default=2**20,
                        help="the pairs job's small blocks (pairs a partition)")
    args = parser.parse_args()
    n, eps = args.n, float(np.sqrt(args.s / (np.pi * args.n)))
    points_mb = n * 2 * 8 / 2**20
    print(f"{n} uniform 2-D points ({points_mb:.0f} MiB), S {args.s:g}, eps {eps:.3g}; worker "
          "processes of one thread each; every result equal to one node's\n")
    print("| workers | job | seconds | one node (numpy, same machine) s | worker peak beyond its "
          "resident size, MiB (max) | the worker's share of the points, MiB | broadcast, MiB |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for workers in (int(w) for w in str(args.workers).split(",")):
        run(workers, n, eps, args.min_samples, points_mb, args.jobs.split(","), args.block_pairs)


def run(workers, n, eps, min_samples, points_mb, chosen, block_pairs):
    import dask
    import dask.array as da
    import distributed

    import epsjoin
    import epsjoin.dask as ejd

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit=0) as cluster, \
            distributed.Client(cluster) as client:
        X = da.random.default_rng(7).random((n, 2), chunks=(-(-n // workers), 2)).persist()
        distributed.wait(X)
        host = X.compute()
        jobs = {}
        if "count" in chosen:
            jobs["count per point"] = (lambda: ejd.count(X, eps, per_row=True, n_jobs=1),
                                       lambda: epsjoin.count(host, eps, per_row=True, n_jobs=1))
        if "dbscan" in chosen:
            jobs["DBSCAN labels"] = (lambda: ejd.dbscan(X, eps, min_samples, n_jobs=1),
                                     lambda: epsjoin.DBSCAN(eps=eps, min_samples=min_samples,
                                                            n_jobs=1).fit(host).labels_)
        if "pairs" in chosen:
            import pandas as pd

            def one_node_pairs():
                found = epsjoin.pairs(host, eps, n_jobs=1)
                return fingerprint(pd.DataFrame({"i": found[:, 0], "j": found[:, 1]}), n)

            for most in (ONE_BLOCK_A_SLAB, block_pairs):
                frame = ejd.pairs(X, eps, n_jobs=1, block_pairs=most)
                name = (f"pairs, {frame.npartitions} partitions ("
                        + ("one a slab" if most == ONE_BLOCK_A_SLAB else f"blocks of {most}")
                        + ")")
                jobs[name] = (lambda frame=frame: dask.delayed(summed)(
                    *[dask.delayed(fingerprint)(p, n) for p in frame.to_delayed()]),
                    one_node_pairs)
        # A first run of each, unmeasured: the workers' imports (epsjoin, scipy, pandas) and the
        # one node's (scikit-learn's base classes) are not the join's memory or time.
        for distributed_job, one_node in jobs.values():
            client.compute(distributed_job()).result()
            one_node()
        for name, (distributed_job, one_node) in jobs.items():
            client.run(lambda: __import__("ctypes").CDLL("libc.so.6").malloc_trim(0))
            before = client.run(reset_peak_mb)
            start = time.perf_counter()
            got = client.compute(distributed_job()).result()
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            want = one_node()
            local = time.perf_counter() - start
            assert np.array_equal(got, want), name
            after = client.run(hwm_mb)
            peak = max(after[w] - before[w] for w in after)
            print(f"| {workers} | {name} | {seconds:.2f} | {local:.2f} | {peak:.0f} | "
                  f"{points_mb / workers:.0f} | {points_mb:.0f} |")


if __name__ == "__main__":
    main()
