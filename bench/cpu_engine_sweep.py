#!/usr/bin/env python3
"""The CPU engines against each other over dimensions: the measurements behind `auto`'s CPU rule
(src/core/auto_select.cpp). For each shape and d, eps is bisected for S neighbours a point, then
cpu-grid, super-ego and cpu-rtree run interleaved, --rounds times, counting (`--format count`)
and building the CSR table in memory (`--format csr`); each figure is the median of the join's
own `seconds`. Prints a Markdown table with each engine's time over the fastest's, and what
`--engine auto` picked.

usage: bench/cpu_engine_sweep.py [--bin build-cpu/epsjoin] [--threads 2] [--n 200000]
                                 [--dims 1-16] [--shapes uniform,expo] [--selectivity 50]
                                 [--rounds 3] [--formats count,csr] [--engines ...]
  bench/cpu_engine_sweep.py --threads 16 --n 1000000 --dims 2,3,4,6,8,12,16   # H100 machine

Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cpu_engine_sweep.py: {' '.join(cmd)} failed: {out.stderr.strip()}")
    return json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])


def dims_of(text):
    dims = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            dims += list(range(int(a), int(b) + 1))
        else:
            dims.append(int(part))
    return dims


def eps_for(binary, path, d, target, threads):
    lo, hi = 1e-9, 1e4
    for _ in range(50):
        mid = (lo * hi) ** 0.5
        s = run_json([binary, "join", "--input", path, "--dim", str(d), "--eps", repr(mid),
                      "--engine", "super-ego", "--threads", str(threads), "--format", "count",
                      "--json"])["selectivity"]
        if abs(s - target) < 0.03 * target:
            return mid, s
        lo, hi = (mid, hi) if s < target else (lo, mid)
    return mid, s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build-cpu/epsjoin")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--dims", default="1-16")
    ap.add_argument("--shapes", default="uniform,expo")
    ap.add_argument("--selectivity", type=float, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--formats", default="count,csr")
    ap.add_argument("--engines", default="cpu-grid,super-ego,cpu-rtree")
    ap.add_argument("--timeout", type=float, default=120,
                    help="an engine whose first run takes longer is not run again for the case")
    args = ap.parse_args()
    engines = args.engines.split(",")
    formats = args.formats.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            for d in dims_of(args.dims):
                path = os.path.join(tmp, f"{shape}{d}.f64")
                subprocess.run([args.bin, "gen", f"{shape}:{d}:{args.n}", "--output", path,
                                "--format", "f64"], check=True, capture_output=True)
                eps, s = eps_for(args.bin, path, d, args.selectivity, args.threads)
                auto = run_json([args.bin, "join", "--input", path, "--dim", str(d), "--eps",
                                 repr(eps), "--threads", str(args.threads), "--format", "count",
                                 "--json"])["engine"]
                times = {}
                slow = set()
                for _ in range(args.rounds):
                    for fmt in formats:
                        for e in engines:
                            if (e, fmt) in slow:
                                continue
                            r = run_json([args.bin, "join", "--input", path, "--dim", str(d),
                                          "--eps", repr(eps), "--engine", e, "--threads",
                                          str(args.threads), "--format", fmt, "--json"])
                            times.setdefault((e, fmt), []).append(r["seconds"])
                            if r["seconds"] > args.timeout:
                                slow.add((e, fmt))
                med = {k: statistics.median(v) for k, v in times.items()}
                row = {"shape": shape, "d": d, "n": args.n, "eps": eps, "S": s, "auto": auto,
                       "seconds": {f"{e} {f}": t for (e, f), t in med.items()}}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print(f"\n{args.threads} threads, N = {args.n:,}, S ~ {args.selectivity:g}, median of "
          f"{args.rounds}; seconds (x the fastest engine for that format)\n")
    head = "| shape | d | S |" + "".join(f" {e} {f} |" for f in formats for e in engines)
    print(head + " auto picks |")
    print("| --- | ---: | ---: |" + " ---: |" * (len(formats) * len(engines)) + " --- |")
    for r in rows:
        line = f"| {r['shape']} | {r['d']} | {r['S']:.0f} |"
        for f in formats:
            ts = {e: r["seconds"].get(f"{e} {f}") for e in engines}
            best = min(t for t in ts.values() if t is not None)
            for e in engines:
                t = ts[e]
                line += " - |" if t is None else f" {t:.3f} ({t / best:.2f}x) |"
        print(line + f" {r['auto']} |")


if __name__ == "__main__":
    main()
