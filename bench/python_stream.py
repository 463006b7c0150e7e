#!/usr/bin/env python3
"""Pairs larger than memory from Python: epsjoin.iter_pairs and join_to against epsjoin.pairs
(and np.save of its array), in one process.

Uniform 2-D points at a selectivity S (mean neighbours a point). Each way runs in a process
of its own: the best of --repeat calls (after a first), and the process's peak resident memory
beyond what it held before its first call (the points, the imports): pairs() holds the whole
result, iter_pairs one block, join_to none (the library writes the file). scipy's
cKDTree.query_pairs is the peer.

  build/python-venv/bin/python bench/python_stream.py --case 1000000:50 --n-jobs 2
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.spatial import cKDTree

import epsjoin


def peak_rss_mb():
    # VmHWM, not getrusage's ru_maxrss: that one survives execve, so a child started by a
    # parent that held the result would report the parent's peak.
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def ways(X, eps, n_jobs, block_bytes, path):
    def blocks():
        for block in epsjoin.iter_pairs(X, eps, n_jobs=n_jobs, block_bytes=block_bytes):
            del block

    return {
        "pairs()": lambda: epsjoin.pairs(X, eps, n_jobs=n_jobs),
        "iter_pairs": blocks,
        "pairs() + np.save": lambda: np.save(path, epsjoin.pairs(X, eps, n_jobs=n_jobs)),
        "join_to .npy": lambda: epsjoin.join_to(path, X, eps, n_jobs=n_jobs),
        "cKDTree.query_pairs": lambda: cKDTree(X).query_pairs(eps, output_type="ndarray"),
    }


def child(args):
    """One way in this process: prints 'first warm peak_mb'."""
    n, s = (int(float(v)) for v in args.case[0].split(":"))
    X = np.random.default_rng(7).random((n, 2))
    eps = float(np.sqrt(s / (np.pi * n)))
    call = ways(X, eps, args.n_jobs, args.block_bytes, args.path)[args.way]
    before = peak_rss_mb()
    times = []
    for _ in range(args.repeat + 1):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print(times[0], min(times[1:]), peak_rss_mb() - before)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], help="N:S (default 1000000:50)")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--block-bytes", default="64M")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--way", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.way:
        return child(args)
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "p.npy")
    print(f"{os.cpu_count()} cores, n_jobs {args.n_jobs}, blocks of {args.block_bytes}\n")
    print("| N | S | pairs | way | first / warm s | warm / pairs() | peak RSS beyond the points, MB |")
    print("| ---: | ---: | ---: | --- | --- | ---: | ---: |")
    for case in args.case or ["1000000:50"]:
        n, s = (int(float(v)) for v in case.split(":"))
        X = np.random.default_rng(7).random((n, 2))
        m = len(epsjoin.pairs(X, float(np.sqrt(s / (np.pi * n))), n_jobs=args.n_jobs))
        base = None
        for name in ways(X, 0.0, None, None, path):
            command = [sys.executable, __file__, "--case", case, "--way", name, "--path", path,
                       "--block-bytes", str(args.block_bytes), "--repeat", str(args.repeat)]
            if args.n_jobs is not None:
                command += ["--n-jobs", str(args.n_jobs)]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            first, warm, peak = (float(v) for v in out.split())
            base = base or warm
            print(f"| {n} | {s} | {m} | {name} | {first:.3f} / {warm:.3f} | {warm / base:.2f} | "
                  f"{peak:.0f} |")
    if os.path.exists(path):
        os.remove(path)
    os.rmdir(folder)


if __name__ == "__main__":
    main()
