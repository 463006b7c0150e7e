#!/usr/bin/env python3
"""scipy's cKDTree.query_pairs on one dataset: the outside baseline epsjoin is compared against.

Prints one JSON line: engine, n, d, eps, pairs (ordered pairs i != j, the count epsjoin
reports for a self-join: twice scipy's unique pairs), seconds (tree build + query, wall),
build_seconds, query_seconds. cKDTree.query_pairs runs on one thread.

  python3 bench/scipy_baseline.py data.f64 --dim 2 --eps 0.001
  python3 bench/scipy_baseline.py data.npy --eps 0.05
  python3 bench/scipy_baseline.py data.csv --eps 0.05       # one point a line, ',' or blanks
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import scipy
from scipy.spatial import cKDTree


def fail(message):
    print(f"scipy_baseline: {message}", file=sys.stderr)
    sys.exit(2)


def load_raw(path, dtype, dim):
    if dim is None or dim < 1:
        fail(f"{path}: a raw binary file needs --dim (>= 1)")
    values = np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<"))
    if values.size == 0:
        fail(f"{path}: empty input")
    if values.size % dim != 0:
        fail(f"{path}: {values.size} values is not a multiple of --dim {dim}")
    return values.reshape(-1, dim)


def load_text(path):
    with open(path, encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    delimiter = "," if "," in first else None
    try:
        return np.loadtxt(path, delimiter=delimiter, ndmin=2, dtype=np.float64)
    except ValueError as e:  # ragged rows or non-numbers; numpy names the line
        fail(f"{path}: {e}")


def load(path, dim):
    ext = os.path.splitext(path)[1].lower()
    if ext == ".f64":
        points = load_raw(path, "f8", dim)
    elif ext == ".f32":
        points = load_raw(path, "f4", dim)
    elif ext == ".npy":
        points = np.load(path, allow_pickle=False)
        if points.ndim != 2 or points.dtype not in (np.float32, np.float64):
            fail(f"{path}: expected a 2-D float32 or float64 array, got {points.dtype} "
                 f"with shape {points.shape}")
    else:
        points = load_text(path)
    if points.shape[0] == 0:
        fail(f"{path}: empty input")
    if dim is not None and points.shape[1] != dim:
        fail(f"{path}: points have {points.shape[1]} dimensions but --dim is {dim}")
    bad = np.argwhere(~np.isfinite(points))
    if bad.size:
        row, col = bad[0]
        fail(f"{path}: point {row}, dimension {col} is {points[row, col]}; "
             "coordinates must be finite")
    return np.ascontiguousarray(points, dtype=np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help=".f64/.f32 raw little-endian (needs --dim), .npy or text")
    parser.add_argument("--eps", type=float, required=True, help="the radius (not its square)")
    parser.add_argument("--dim", type=int, help="dimensions; required for raw binary input")
    parser.add_argument("--leafsize", type=int, default=16, help="cKDTree leaf size (16)")
    args = parser.parse_args()
    if not (math.isfinite(args.eps) and args.eps > 0):
        fail(f"eps must be a finite number > 0, got {args.eps}")

    points = load(args.path, args.dim)
    start = time.perf_counter()
    tree = cKDTree(points, leafsize=args.leafsize)
    built = time.perf_counter()
    # query_pairs keeps pairs with distance <= r, the same inclusive rule as epsjoin.
    pairs = tree.query_pairs(args.eps, output_type="ndarray")
    done = time.perf_counter()

    print(json.dumps({
        "engine": "scipy-ckdtree",
        "n": int(points.shape[0]),
        "d": int(points.shape[1]),
        "eps": args.eps,
        "pairs": 2 * int(pairs.shape[0]),
        "seconds": done - start,
        "build_seconds": built - start,
        "query_seconds": done - built,
        "threads": 1,
        "scipy": scipy.__version__,
    }))


if __name__ == "__main__":
    main()
