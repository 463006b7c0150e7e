#!/usr/bin/env python3
"""Finds the eps giving a target selectivity (mean neighbours per point, self excluded).

usage: find_eps.py --bin PATH/TO/epsjoin SPEC S [S ...] [--sample M]

Bisects eps with counting joins on the first M points of the generator spec (default 200000;
a generated set's first M points are the M-point set of the same spec). Selectivity grows
linearly with N at fixed eps, so the target on the subsample is S * M / N. Prints "S eps" lines.
"""
import argparse
import json
import subprocess


def selectivity(binary, spec, eps):
    out = subprocess.run([binary, "join", "--generate", spec, "--eps", repr(eps), "--json",
                          "--format", "count"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["selectivity"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("spec")
    ap.add_argument("targets", nargs="+", type=float)
    ap.add_argument("--sample", type=int, default=200000)
    args = ap.parse_args()
    parts = args.spec.split(":")
    n = int(float(parts[2]))
    m = min(n, args.sample)
    sub = ":".join(parts[:2] + [str(m)] + parts[3:])
    for target in args.targets:
        lo, hi = 1e-9, 10.0
        for _ in range(60):
            mid = (lo * hi) ** 0.5
            if selectivity(args.bin, sub, mid) * n / m < target:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.001:
                break
        print(f"{target:g} {hi:.6g}", flush=True)


if __name__ == "__main__":
    main()
