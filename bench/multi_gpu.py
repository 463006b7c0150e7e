#!/usr/bin/env python3
"""Issues 29 and 30: one join spread over 1, 2, 4, ... GPUs of one host (`--devices`), each
count in the same run, so the speed-ups compare like with like. Every case checks that every
device count finds exactly the one-GPU pairs. Prints a Markdown table (seconds: the best of
--repeat runs of the join itself, without generating or reading the points); --out keeps
every record as JSON lines.

usage: bench/multi_gpu.py EPSJOIN [--gpus 1,2,4,auto] [--only NAME,...] [--repeat N] [--out FILE]
       [--deadline SECONDS] [--split auto|items|slabs] [--weak] [--data DIR]
Each record is appended to --out as it is measured; no run starts after --deadline seconds.
`auto` in --gpus runs the case without --devices (the default, `--devices auto`: the join decides
how many of the visible GPUs to use); its record's `gpus` is the number it used.

Cases (name, engine, source, eps, format): the count-only joins of issue 29 (uniform 2-D 50M at
S ~ 5000, Expo16D 4M at S ~ 500), issue 30's strong-scaling set (uniform 2-D 200M at S ~ 500,
Expo16D 8M at S ~ 500, the GSHHG coastline sample repeated to 100M points with a uniform jitter
of 1% of each column's spread, numpy's PCG64 with a fixed seed, at S ~ 500: eps 0.0823 gives S
5.00 on 1M of those points on the development machine, and S grows with the copies), the CSR to
host memory (uniform 2-D 50M, S ~ 50) and, with --weak, issue 30's weak scaling: 25M uniform 2-D
points a GPU at S ~ 50, the CSR table streamed to a file (deleted after each run).
Standard library only, and numpy for the coastline case.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

BENCH = "/tmp/epsjoin-bench"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")

# name, engine, source (a generator spec, or (sample file, d, points)), eps, format, extra args
CASES = [
    ("expo16d-4m-s500-count", "meta-16q", "expo:16:4000000", 0.0420, "count", ["--paper"]),
    ("uniform2d-50m-s5000-count", "lbjoin", "uniform:2:50000000", 0.005642, "count", []),
    ("uniform2d-200m-s500-count", "lbjoin", "uniform:2:200000000", 0.000892, "count", []),
    ("expo16d-8m-s500-count", "meta-16q", "expo:16:8000000", 0.0402, "count", ["--paper"]),
    ("coast-100m-s500-count", "lbjoin", ("gshhg_coast_2d_sample.f64", 2, 100000000), 0.0823,
     "count", []),
    ("uniform2d-50m-s50-csr", "lbjoin", "uniform:2:50000000", 0.000564, "csr", []),
    # Short enough that `--devices auto` should keep it on one GPU.
    ("uniform2d-2m-s50-count", "lbjoin", "uniform:2:2000000", 0.002821, "count", []),
]


def jittered(name, d, n, seed=30):
    """The sample repeated to n points with a uniform jitter of 1% of each column's spread."""
    import numpy as np  # only this case needs it

    path = f"{BENCH}/{os.path.splitext(name)[0]}_{n}.npy"
    if os.path.exists(path):
        return path
    base = np.fromfile(os.path.join(DATA, name), dtype="<f8").reshape(-1, d)
    points = np.tile(base, (-(-n // len(base)), 1))[:n]
    spread = base.max(axis=0) - base.min(axis=0)
    rng = np.random.Generator(np.random.PCG64(seed))
    points += (rng.random(points.shape) - 0.5) * 0.01 * spread
    os.makedirs(BENCH, exist_ok=True)
    np.save(path, points)
    return path


def run_case(binary, case, gpus, repeat, split="auto"):
    name, engine, source, eps, fmt, extra = case
    devices = [] if gpus is None else ["--devices", ",".join(str(g) for g in range(gpus))]
    points = ["--input", jittered(*source)] if isinstance(source, tuple) else ["--generate", source]
    output = []
    if fmt == "csr-file":
        os.makedirs(BENCH, exist_ok=True)
        output, fmt = ["--output", f"{BENCH}/weak.csr"], "csr"
    cmd = [binary, "join", *points, *extra, "--eps", str(eps), "--engine", engine,
           "--format", fmt, *output, "--json", "--repeat", str(repeat), *devices,
           "--devices-split", split]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if output:
        os.remove(output[1])
    if proc.returncode != 0:
        sys.exit(f"multi_gpu.py: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    record = json.loads([l for l in proc.stdout.splitlines() if l.startswith("{")][-1])
    notes = record.get("notes", {})
    if isinstance(notes, list):
        notes = {k: v for k, v in notes}
    # A join written to a file runs once (no run_seconds): its time includes the writing.
    seconds = (min(record["run_seconds"]) if "run_seconds" in record
               else record["seconds"] + record.get("write_seconds", 0))
    if gpus is None:  # what --devices auto chose
        gpus = len(notes["devices"].split(",")) if "devices" in notes else 1
    return {
        "case": name, "engine": record["engine"], "gpus": gpus, "pairs": record["pairs"],
        "devices_auto": notes.get("devices_auto", ""),
        "selectivity": record["selectivity"], "seconds": seconds,
        "halo_fraction": float(notes.get("devices_halo_fraction", 0) or 0),
        "imbalance": float(notes.get("devices_imbalance", 0) or 0),
        "split": notes.get("devices_split", "slabs" if gpus > 1 else ""),
        "work": notes.get("devices_work", ""), "stages": record.get("stages"),
        "count_kernel_seconds": notes.get("count kernel seconds", ""),
        "command": " ".join(cmd),
    }


def weak_case(gpus):
    n = 25000000 * gpus
    eps = math.sqrt(50 / (math.pi * n))
    return (f"weak-uniform2d-{25 * gpus}m-s50-csr-file", "lbjoin", f"uniform:2:{n}",
            round(eps, 9), "csr-file", [])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--gpus", default="1,2")
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    parser.add_argument("--deadline", type=float, default=0)
    parser.add_argument("--weak", action="store_true", help="issue 30's weak scaling instead")
    parser.add_argument("--split", default="auto", help="--devices-split: auto, items or slabs")
    parser.add_argument("--data", help="the folder of the shared samples (../shared/data)")
    args = parser.parse_args()
    if args.data:
        global DATA
        DATA = args.data
    start = time.monotonic()
    out = open(args.out, "a") if args.out else None
    gpu_counts = [None if g == "auto" else int(g) for g in args.gpus.split(",")]
    if args.weak and None in gpu_counts:
        sys.exit("multi_gpu.py: --weak needs GPU counts, not auto")
    only = set(filter(None, args.only.split(",")))
    rows, failures = [], 0
    print("| case | engine | GPUs | S | seconds | speed-up | efficiency | halo | imbalance |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    # Strong scaling: each case on every GPU count. Weak: one case a GPU count, the work growing
    # with the GPUs, so the "speed-up" column is time(1 GPU) / time(G GPUs) x G, and the
    # efficiency the ratio of the times.
    series = ([[(weak_case(g), g) for g in gpu_counts]] if args.weak else
              [[(case, g) for g in gpu_counts] for case in CASES if not only or case[0] in only])
    for runs in series:
        base = None
        for case, gpus in runs:
            if args.deadline and time.monotonic() - start > args.deadline:
                print(f"deadline: {case[0]} on {gpus} GPUs not run", flush=True)
                continue
            r = run_case(args.binary, case, gpus, args.repeat, args.split)
            label = gpus if gpus is not None else f"auto: {r['gpus']}"
            gpus = r["gpus"]
            rows.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
            if base is None:
                base = r
            if not args.weak and r["pairs"] != base["pairs"]:
                failures += 1
                print(f"MISMATCH: {case[0]} on {gpus} GPUs found {r['pairs']} pairs, "
                      f"{base['gpus']} GPU(s) {base['pairs']}", file=sys.stderr)
            speedup = base["seconds"] / r["seconds"] * (gpus if args.weak else base["gpus"])
            print(f"| {r['case']} | {r['engine']} | {label} | {r['selectivity']:.0f} | "
                  f"{r['seconds']:.3f} | {speedup:.2f} | {speedup / gpus:.2f} | "
                  f"{r['halo_fraction']:.4f} | {r['imbalance']:.3f} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
