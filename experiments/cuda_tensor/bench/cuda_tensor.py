#!/usr/bin/env python3
"""cuda-tensor (issue 28) against meta-16q and gds-join alone, and what exactness costs the
tensor-core engines, on the GPU machine.

usage: cuda_tensor.py --bin PATH/TO/epsjoin [--data ../shared/data] [--out DIR] [--repeat N]
                      [--cases NAME,...] [--deadline SECONDS] [--cuda-tensor SPEC]...
                      [--alone ENGINE,...] [--no-exactness]

Cases (1M points each, counts only): the papers' Expo16D at S about 50 and 500 and Expo32D at
S about 50, and the 20-D audio (wesnoth MFCC) and 64-D image-patch samples of ../shared/data
repeated to 1M points with a uniform jitter of 1% of each column's spread (numpy's PCG64, seed
fixed, so every machine writes the same points). Their eps were found on the development
machine by bisection of counting joins of 2000 of the points against all of them (S 49.9-50.2
and 500.0 there) and are fixed here.

For each case: meta-16q, gds-join and cuda-tensor (the model's split) in turn, --repeat times
each, the median kept; cuda-tensor's notes give the modelled and the measured seconds of its
counting pass, each side's candidates and seconds and the overlap (2: both kernels busy the whole
pass). Then exact against --approximate for ted-join, meta-16q and meta-1q on Expo16D S 50.
Writes DIR/cuda_tensor.jsonl and prints a markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BENCH = "/tmp/epsjoin-bench"

# name: (source, eps). source: a generator spec, or a sample file of ../shared/data and its d.
CASES = {
    "expo16d-s50": ("expo:16:1000000", 0.0394),
    "expo16d-s500": ("expo:16:1000000", 0.0487),
    "expo32d-s50": ("expo:32:1000000", 0.0852),
    "audio20d-s50": (("wesnoth_mfcc_20d_sample.f64", 20), 2.73),
    "patch64d-s50": (("skimage_patch8x8_64d_sample.f64", 64), 7.66),
}


def jittered(data_dir, name, d, n, seed=28):
    """The sample repeated to n points with a uniform jitter of 1% of each column's spread."""
    import numpy as np

    path = f"{BENCH}/{os.path.splitext(name)[0]}_1M.npy"
    if os.path.exists(path):
        return path
    base = np.fromfile(os.path.join(data_dir, name), dtype="<f8").reshape(-1, d)
    reps = -(-n // len(base))
    points = np.tile(base, (reps, 1))[:n]
    spread = base.max(axis=0) - base.min(axis=0)
    rng = np.random.Generator(np.random.PCG64(seed))
    points = points + (rng.random(points.shape) - 0.5) * 0.01 * spread
    os.makedirs(BENCH, exist_ok=True)
    np.save(path, np.ascontiguousarray(points))
    return path


def dataset(binary, data_dir, source):
    if isinstance(source, tuple):
        return jittered(data_dir, source[0], source[1], 1000000)
    d = int(source.split(":")[1])
    path = f"{BENCH}/Expo{d}D1M.npy"
    if not os.path.exists(path):
        os.makedirs(BENCH, exist_ok=True)
        subprocess.run([binary, "gen", source, "--paper", "--output", path], check=True)
    return path


def join(binary, path, eps, engine, extra=()):
    name, _, params = engine.partition(":")
    cmd = [binary, "join", "--input", path, "--eps", repr(eps), "--engine", name, "--json",
           "--format", "count", "--devices", "0", *extra]  # one GPU: auto may spread a long join
    for kv in filter(None, params.split(",")):
        cmd += ["--param", kv]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return {"engine": engine, "error": out.stderr.strip()[-300:]}
    stats = json.loads(out.stdout)
    stats["engine"] = engine
    return stats


def median_run(binary, path, eps, engine, repeat, extra=()):
    runs = [join(binary, path, eps, engine, extra) for _ in range(repeat)]
    good = [r for r in runs if "error" not in r]
    if not good:
        return runs[0]
    good.sort(key=lambda r: r["seconds"])
    return good[len(good) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../shared/data"))
    ap.add_argument("--out", default=".")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--eps", action="append", default=[], help="NAME=EPS, overriding the table")
    ap.add_argument("--deadline", type=float, default=1e9, help="stop starting cases after this")
    ap.add_argument("--cuda-tensor", action="append", default=[],
                    help="a split engine with its params, e.g. cuda-tensor:design=blocks; "
                         "repeat it to compare designs in one run (default: cuda-tensor)")
    ap.add_argument("--alone", default="meta-16q,gds-join",
                    help="the engines alone that the split is compared with (the better counts)")
    ap.add_argument("--no-exactness", action="store_true",
                    help="skip the exact against --approximate table")
    args = ap.parse_args()
    splits = args.cuda_tensor or ["cuda-tensor"]
    alone = args.alone.split(",")
    start = time.time()
    overrides = dict(kv.split("=") for kv in args.eps)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "cuda_tensor.jsonl"), "a")
    print("| case | eps | pairs | " + " | ".join(f"{e} s" for e in alone) + " | split engine | s | "
          "vs better | share to tensor | modelled / measured count s | tensor side s | "
          "CUDA side s | overlap |")
    print("| --- | --- | ---: | " + "---: | " * len(alone) + "--- | ---: | ---: | ---: | --- | ---: | "
          "---: | ---: |")
    for name in args.cases.split(","):
        if time.time() - start > args.deadline:
            print(f"(deadline: {name} and later not run)")
            break
        source, eps = CASES[name]
        eps = float(overrides.get(name, eps or "nan"))
        if eps != eps:
            print(f"| {name} | no eps: pass --eps {name}=E |")
            continue
        path = dataset(args.bin, args.data, source)
        row = {}
        for engine in alone + splits:
            row[engine] = median_run(args.bin, path, eps, engine, args.repeat)
            log.write(json.dumps({"case": name, "eps": eps, **row[engine]}) + "\n")
            log.flush()
        failed = [r for r in row.values() if "error" in r]
        if failed:
            print(f"| {name} | {eps} | " + "; ".join(r["engine"] + ": " + r["error"] for r in failed)
                  + " |")
            continue
        better = min(row[e]["seconds"] for e in alone)
        for engine in splits:
            split = row[engine]
            notes = split.get("notes", {})
            share = notes.get("split model", "").split("share ")[-1].split(" ")[0]
            side = lambda key: notes.get(key, "- s").split(" in ")[-1].removesuffix(" s")
            print(f"| {name} | {eps} | {split['pairs']:,} | "
                  + " | ".join(f"{row[e]['seconds']:.3f}" for e in alone)
                  + f" | {engine} | {split['seconds']:.3f} | {better / split['seconds']:.2f}x | "
                  f"{share} | {float(notes.get('split modelled seconds', 'nan')):.3f} / "
                  f"{float(notes.get('split measured seconds', 'nan')):.3f} | "
                  f"{side('split tensor')} | {side('split cuda')} | "
                  f"{float(notes.get('split overlap', 'nan')):.2f} |")
        sys.stdout.flush()
    if (not args.no_exactness and time.time() - start <= args.deadline
            and "expo16d-s50" in args.cases.split(",")):
        path = dataset(args.bin, args.data, CASES["expo16d-s50"][0])
        eps = float(overrides.get("expo16d-s50", CASES["expo16d-s50"][1]))
        print("\n| engine (Expo16D 1M, S 50) | exact s | approximate s | exact at % of approximate speed |")
        print("| --- | ---: | ---: | ---: |")
        for engine in ("ted-join", "meta-16q", "meta-1q"):
            exact = median_run(args.bin, path, eps, engine, args.repeat)
            approx = median_run(args.bin, path, eps, engine, args.repeat, ("--approximate",))
            for r, mode in ((exact, "exact"), (approx, "approximate")):
                log.write(json.dumps({"case": "exactness", "mode": mode, **r}) + "\n")
            if "error" in exact or "error" in approx:
                print(f"| {engine} | {exact.get('error', '')} | {approx.get('error', '')} | |")
                continue
            print(f"| {engine} | {exact['seconds']:.3f} | {approx['seconds']:.3f} | "
                  f"{100 * approx['seconds'] / exact['seconds']:.0f}% |")


if __name__ == "__main__":
    main()
