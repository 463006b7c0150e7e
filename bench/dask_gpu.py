#!/usr/bin/env python3
"""epsjoin.dask on GPUs: a dask-cuda LocalCUDACluster of one worker a GPU, CuPy chunks, against
one GPU's worker in the same run (issue 47's targets: counts 1.8x on 2 GPUs, 3.2x on 4; DBSCAN
2.5x on 4).

Uniform points in the unit cube, generated on the workers by CuPy (the same seed and chunks at
every worker count, so every run joins the same points) and persisted before anything is timed.
Each run counts the pairs (the total: nothing but a number comes back) and clusters them
(DBSCAN's labels, int64, back to the client), cut into one slab a worker. A run's first call
pays the workers' CUDA contexts and the library's loading; the warm calls are the median of
--repeat. Exactness: every worker count's total and labels are checked against the first's.

On the GPU machine, with epsjoin's CUDA wheel and the dask-cuda wheels (README: Dask on GPUs)
on PYTHONPATH:
  NCCL_NVLS_ENABLE=0 python3 bench/dask_gpu.py --n 20000000 --d 2 --neighbours 64 --gpus 1,2
"""

import argparse
import json
import math
import os
import shutil
import statistics
import time

import numpy as np


def eps_for(n, d, neighbours):
    """The radius at which a point of n uniform points in the unit d-cube has about
    `neighbours` others within it (edges ignored)."""
    ball = math.pi ** (d / 2) / math.gamma(d / 2 + 1)
    return (neighbours / (n * ball)) ** (1 / d)


def timed(call, repeat):
    """(first call's seconds, median of the next `repeat`, the last result)."""
    times, result = [], None
    for _ in range(repeat + 1):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:]) if repeat else times[0], result


def _block(seed, rows, d, stratum=None):
    """Uniform points; with `stratum` (k, of), those of the k-th of `of` equal slices of the
    first coordinate, in a box whose other sides are 0.999 long (so the planner cuts the first:
    its widest)."""
    import cupy

    block = cupy.random.RandomState(seed).random_sample((rows, d))
    if stratum is not None:
        block[:, 0] = (stratum[0] + block[:, 0]) / stratum[1]
        block[:, 1:] *= 0.999
    return block


def points(n, d, chunks, seed, placed=False, client=None):
    """n uniform points as a dask array of `chunks` CuPy chunks, each made on its worker. When
    `placed`, the points are placed by slab: chunk k holds the k-th slice of the first coordinate
    and (given the `client`) is persisted on worker k * workers // chunks, so that each worker
    already holds the rows of one slab and only halos move."""
    import cupy
    import dask
    import dask.array as da

    size = -(-n // chunks)
    count = -(-n // size)
    workers = sorted(client.scheduler_info()["workers"]) if placed and client else []
    blocks = []
    for k in range(count):
        rows = min(size, n - k * size)
        stratum = (k, count) if placed else None
        block = da.from_delayed(dask.delayed(_block)(seed * 1000 + k, rows, d, stratum),
                                shape=(rows, d), dtype=np.float64, meta=cupy.empty((0, d)))
        if workers:
            block = client.persist(block, workers=[workers[k * len(workers) // count]],
                                   allow_other_workers=False)
        blocks.append(block)
    return da.concatenate(blocks)


def tree_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def disk_rate(directory, size):
    """Bytes a second this process writes to `directory`: `size` bytes in 64 MiB writes, then
    os.sync(), as the Parquet runs are timed (the floor they are held to)."""
    block = np.random.default_rng(0).integers(0, 255, 64 << 20, dtype=np.uint8).tobytes()
    path = os.path.join(directory, "disk-rate.bin")
    start = time.perf_counter()
    with open(path, "wb") as out:
        for _ in range(max(1, -(-size // len(block)))):
            out.write(block)
    os.sync()
    seconds = time.perf_counter() - start
    written = os.path.getsize(path)
    os.remove(path)
    return written / seconds


def parquet(X, eps, gpus, args):
    """Pairs to Parquet, each worker writing its partitions: (first and warm seconds, bytes)
    and the same run's disk rate for as many bytes."""
    import epsjoin.dask as ejd

    # Plain: no dictionary (the ids are mostly distinct, so pyarrow builds one only to drop it)
    # and no compression, 16 bytes a pair, the layout the disk rate is the floor of.
    options = {"use_dictionary": False, "compression": None} if args.parquet_plain else {}

    def write():
        path = os.path.join(args.parquet, f"pairs-{gpus}")
        shutil.rmtree(path, ignore_errors=True)
        ejd.pairs(X, eps, n_slabs=gpus).to_parquet(path, write_index=False, **options)
        os.sync()
        return tree_bytes(path)

    first, warm, size = timed(write, args.repeat)
    rate = disk_rate(args.parquet, size)
    shutil.rmtree(os.path.join(args.parquet, f"pairs-{gpus}"), ignore_errors=True)
    # Parquet packs ascending ids tightly: the pairs' own bytes (i and j, 16 a pair) a second
    # are the rate a reader of the pairs sees.
    pairs = int(ejd.count(X, eps, n_slabs=gpus).compute()) // 2
    return {"parquet_plain": args.parquet_plain, "parquet_first_s": first, "parquet_warm_s": warm,
            "parquet_bytes": size,
            "parquet_pairs": pairs, "parquet_rate": size / warm, "disk_rate": rate,
            "parquet_of_disk": size / warm / rate, "pair_bytes_of_disk": 16 * pairs / warm / rate}


def profile(client, build, label):
    """Where one call's time goes: building its graph on the client (the plan included), then
    each kind of task's compute and transfer seconds summed over the workers, with the workers
    each kind ran on, from the scheduler's task stream."""
    from distributed import get_task_stream

    start = time.perf_counter()
    graph = build()
    built = time.perf_counter() - start
    with get_task_stream(client) as stream:
        start = time.perf_counter()
        graph.compute()
        computed = time.perf_counter() - start
    kinds = {}
    for task in stream.data:
        name = str(task["key"]).strip("()'\"").split("-")[0].split("'")[0]
        entry = kinds.setdefault(name, {"tasks": 0, "compute_s": 0.0, "transfer_s": 0.0,
                                        "workers": set()})
        entry["tasks"] += 1
        entry["workers"].add(task["worker"])
        for part in task["startstops"]:
            if part["action"] in ("compute", "transfer"):
                entry[part["action"] + "_s"] += part["stop"] - part["start"]
    for entry in kinds.values():
        entry["workers"] = len(entry["workers"])
    return {"profile": label, "graph_s": built, "compute_s": computed, "tasks": kinds}


def run(gpus, args, eps):
    from dask_cuda import LocalCUDACluster
    from distributed import Client, wait

    import epsjoin.dask as ejd

    visible = ",".join(str(g) for g in range(gpus))
    with LocalCUDACluster(n_workers=gpus, CUDA_VISIBLE_DEVICES=visible,
                          threads_per_worker=args.threads, protocol=args.protocol,
                          dashboard_address=None) as cluster, \
            Client(cluster) as client:
        X = client.persist(points(args.n, args.d, args.chunks, args.seed, args.placed, client))
        wait(X)
        out = {"gpus": gpus, "threads": args.threads, "n": args.n, "d": args.d, "eps": eps,
               "chunks": args.chunks, "protocol": args.protocol, "placed": args.placed}
        first, warm, total = timed(lambda: int(ejd.count(X, eps, n_slabs=gpus).compute()),
                                   args.repeat)
        out.update(count_first_s=first, count_warm_s=warm, pairs=total)
        labels = None
        if args.min_samples:
            first, warm, labels = timed(
                lambda: ejd.dbscan(X, eps, args.min_samples, n_slabs=gpus).compute(), args.repeat)
            out.update(dbscan_first_s=first, dbscan_warm_s=warm,
                       clusters=int(labels.max()) + 1, noise=int((labels < 0).sum()))
        if args.parquet:
            out.update(parquet(X, eps, gpus, args))
        if args.profile:
            print(json.dumps({"gpus": gpus, **profile(
                client, lambda: ejd.count(X, eps, n_slabs=gpus), "count")}), flush=True)
            if args.min_samples:
                print(json.dumps({"gpus": gpus, **profile(
                    client, lambda: ejd.dbscan(X, eps, args.min_samples, n_slabs=gpus),
                    "dbscan")}), flush=True)
        return out, total, labels


def direct(args, eps):
    """The same points and calls on one GPU without Dask, in this process: the floor a worker's
    join stands on."""
    import cupy

    import epsjoin

    X = points(args.n, args.d, args.chunks, args.seed, args.placed).compute(scheduler="sync")
    out = {"direct": True, "n": args.n, "d": args.d, "placed": args.placed}
    first, warm, total = timed(lambda: epsjoin.count(X, eps), args.repeat)
    out.update(count_first_s=first, count_warm_s=warm, pairs=total)
    if args.min_samples:
        first, warm, _ = timed(lambda: epsjoin.DBSCAN(eps=eps, min_samples=args.min_samples)
                               .fit(X), args.repeat)
        out.update(dbscan_first_s=first, dbscan_warm_s=warm)
    del X
    cupy.get_default_memory_pool().free_all_blocks()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000_000)
    parser.add_argument("--d", type=int, default=2)
    parser.add_argument("--neighbours", type=float, default=64.0,
                        help="mean neighbours a point (sets eps)")
    parser.add_argument("--gpus", default="1,2", help="worker counts, one GPU each")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads a worker (tasks it runs at once on its GPU)")
    parser.add_argument("--chunks", type=int, default=8, help="row chunks of the points")
    parser.add_argument("--min-samples", type=int, default=20,
                        help="DBSCAN's min_samples (0: no DBSCAN)")
    parser.add_argument("--repeat", type=int, default=3, help="warm calls after the first")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--protocol", default="tcp", choices=["tcp", "ucx"],
                        help="how workers move points: tcp (through host memory) or ucx (NVLink "
                             "where there is one; needs scripts/fetch-dask-wheels.sh --ucx)")
    parser.add_argument("--placed", action="store_true",
                        help="points placed by slab: chunk k holds the k-th slice of the first "
                             "coordinate, on the worker of that slab (only halos move)")
    parser.add_argument("--parquet", metavar="DIR",
                        help="also write the pairs to Parquet under DIR (each worker its "
                             "partitions), against the same run's disk rate into DIR")
    parser.add_argument("--parquet-plain", action="store_true",
                        help="write Parquet without dictionaries or compression (default: "
                             "pyarrow's, dictionaries and snappy)")
    parser.add_argument("--direct", action="store_true",
                        help="also time the calls on one GPU without Dask, in this process")
    parser.add_argument("--profile", action="store_true",
                        help="also print where one warm call's time goes, task by task")
    args = parser.parse_args()
    eps = eps_for(args.n, args.d, args.neighbours)
    if args.direct:
        print(json.dumps(direct(args, eps)), flush=True)
    rows, want_total, want_labels = [], None, None
    for gpus in [int(g) for g in args.gpus.split(",")]:
        out, total, labels = run(gpus, args, eps)
        if want_total is None:
            want_total, want_labels = total, labels
        out["equal_to_first"] = bool(total == want_total and (
            labels is None or np.array_equal(labels, want_labels)))
        rows.append(out)
        print(json.dumps(out), flush=True)
    base = rows[0]
    for row in rows[1:]:
        speedups = {f"{job}_speedup_warm": base[f"{job}_warm_s"] / row[f"{job}_warm_s"]
                    for job in ("count", "dbscan", "parquet") if f"{job}_warm_s" in row}
        print(json.dumps({"gpus": row["gpus"], "against_gpus": base["gpus"], **speedups}))


if __name__ == "__main__":
    main()
