#!/usr/bin/env python3
"""`epsjoin dbscan` side by side with scikit-learn's DBSCAN (n_jobs=-1: every core).

usage: dbscan_vs_sklearn.py --bin build/epsjoin [--n 200000 1000000] [--selectivity 50]
                            [--spec expo:2] [--engines cpu-grid super-ego] [--skip-sklearn-above N]
                            [--repeat 3] [--sklearn-repeat 1] [--merge device|host]

For each N: generates SPEC:N with the program, finds eps for the target selectivity (mean
neighbours per point, self excluded) by bisection with counting joins, then runs each epsjoin
engine and scikit-learn on the same points, each in its own process so that its peak resident
memory (ru_maxrss) is its own. Checks that both find the same core points, noise and number of
clusters, and prints one JSON line per run and a table. min_samples defaults to 10. On a shared
machine other work only ever slows a run down, so each tool's time is its best of --repeat
(epsjoin) and --sklearn-repeat (scikit-learn) runs, alternated.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

SKLEARN_RUN = r"""
import json, resource, sys, time
import numpy as np
from sklearn.cluster import DBSCAN
points = np.load(sys.argv[1])
eps, min_samples = float(sys.argv[2]), int(sys.argv[3])
start = time.perf_counter()
model = DBSCAN(eps=eps, min_samples=min_samples, n_jobs=-1).fit(points)
seconds = time.perf_counter() - start
np.save(sys.argv[4], model.labels_.astype(np.int64))
core = np.zeros(len(points), dtype=bool)
core[model.core_sample_indices_] = True
np.save(sys.argv[5], core)
print(json.dumps({"seconds": seconds}))
"""


def peak_rss_of(cmd):
    """Runs cmd; returns (stdout, wall seconds, peak RSS in bytes of that child)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()[-500:]}")
    return out, wall, usage.ru_maxrss * 1024


def selectivity(binary, path, eps):
    out = subprocess.run([binary, "join", "--input", path, "--eps", repr(eps), "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["selectivity"]


def find_eps(binary, path, target):
    # Up from a tiny eps first, so no join of the search has more than 2^d times the target's
    # pairs; then bisect.
    hi = 1e-6
    while selectivity(binary, path, hi) < target:
        hi *= 2
    lo = hi / 2
    while hi / lo > 1.002:
        mid = (lo * hi) ** 0.5
        if selectivity(binary, path, mid) < target:
            lo = mid
        else:
            hi = mid
    return hi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--spec", default="expo:2", help="distribution:d of 'epsjoin gen'")
    ap.add_argument("--n", type=int, nargs="+", default=[200000, 1000000])
    ap.add_argument("--selectivity", type=float, default=50)
    ap.add_argument("--min-samples", type=int, default=10)
    ap.add_argument("--engines", nargs="+", default=["cpu-grid", "super-ego"])
    ap.add_argument("--skip-sklearn-above", type=int, default=0,
                    help="run only epsjoin for N above this (0: always run scikit-learn)")
    ap.add_argument("--repeat", type=int, default=3, help="epsjoin runs a case; the best counts")
    ap.add_argument("--sklearn-repeat", type=int, default=1,
                    help="scikit-learn runs a case; the best counts")
    ap.add_argument("--eps-at-1m", type=float, default=0,
                    help="skip the search: eps = this x (1e6 / N)^(1/d), which keeps S about "
                         "constant for these generators (0: search each N)")
    ap.add_argument("--merge", default="device", choices=["device", "host"],
                    help="epsjoin's --merge (host: two joins on every engine)")
    args = ap.parse_args()
    import numpy as np  # only the comparison needs it

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            path = os.path.join(tmp, "points.npy")
            subprocess.run([args.bin, "gen", f"{args.spec}:{n}:seed=1", "--output", path],
                           check=True, capture_output=True)
            if args.eps_at_1m > 0:
                d = int(args.spec.split(":")[1])
                eps = args.eps_at_1m * (1e6 / n) ** (1 / d)
            else:
                eps = find_eps(args.bin, path, args.selectivity)
            ours = {}
            for engine in args.engines:
                labels = os.path.join(tmp, f"{engine}.npy")
                runs = []
                for _ in range(max(args.repeat, 1)):
                    out, wall, rss = peak_rss_of([args.bin, "dbscan", "--input", path, "--eps",
                                                  repr(eps), "--min-samples", str(args.min_samples),
                                                  "--engine", engine, "--merge", args.merge,
                                                  "--output", labels, "--json"])
                    runs.append((json.loads(out), rss))
                summary, rss = min(runs, key=lambda r: r[0]["seconds"])
                count = json.loads(subprocess.run(
                    [args.bin, "join", "--input", path, "--eps", repr(eps), "--engine", engine,
                     "--json"], capture_output=True, text=True, check=True).stdout)
                row = {"tool": f"epsjoin {engine}", "n": n, "eps": eps, "merge": summary["merge"],
                       "selectivity": count["selectivity"], "seconds": summary["seconds"],
                       "seconds_all": [r[0]["seconds"] for r in runs],
                       "stages": summary["stages"], "peak_rss_bytes": max(r[1] for r in runs),
                       "clusters": summary["clusters"], "core": summary["core"],
                       "noise": summary["noise"], "threads": summary["threads"],
                       "count_join_seconds": count["seconds"]}
                ours[engine] = np.load(labels)
                rows.append(row)
                print(json.dumps(row), flush=True)
            if args.skip_sklearn_above and n > args.skip_sklearn_above:
                continue
            labels, core = os.path.join(tmp, "sk_labels.npy"), os.path.join(tmp, "sk_core.npy")
            try:
                sk_runs = []
                for _ in range(max(args.sklearn_repeat, 1)):
                    out, wall, rss = peak_rss_of([sys.executable, "-c", SKLEARN_RUN, path,
                                                  repr(eps), str(args.min_samples), labels, core])
                    sk_runs.append((json.loads(out)["seconds"], rss))
            except RuntimeError as e:
                row = {"tool": "scikit-learn", "n": n, "eps": eps, "error": str(e)[-200:]}
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            sk = np.load(labels)
            sk_core = np.load(core)
            row = {"tool": "scikit-learn", "n": n, "eps": eps,
                   "seconds": min(r[0] for r in sk_runs), "seconds_all": [r[0] for r in sk_runs],
                   "peak_rss_bytes": max(r[1] for r in sk_runs), "clusters": int(sk.max() + 1),
                   "core": int(sk_core.sum()), "noise": int((sk == -1).sum()),
                   "threads": os.cpu_count()}
            for engine, labels_ in ours.items():
                same = (np.array_equal(labels_ == -1, sk == -1) and
                        int(labels_.max() + 1) == row["clusters"])
                row[f"agrees_with_{engine}"] = bool(same)
                mine = next(r for r in rows if r["tool"] == f"epsjoin {engine}" and r["n"] == n)
                row[f"ratio_to_{engine}"] = row["seconds"] / mine["seconds"]
            rows.append(row)
            print(json.dumps(row), flush=True)

    print(f"\n| tool | N | eps | S | seconds | count-only join (s) | peak RSS (MB) | clusters | core | noise | scikit-learn's time over epsjoin's |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['tool']} | {r['n']} | {r['eps']:.4g} | | failed: {r['error'][:60]} | | | | | | |")
            continue
        s = r.get("selectivity", "")
        print(f"| {r['tool']} | {r['n']} | {r['eps']:.4g} | {s if s == '' else f'{s:.1f}'} | "
              f"{r['seconds']:.3f} | {r.get('count_join_seconds', float('nan')):.3f} | "
              f"{r['peak_rss_bytes'] / 2**20:.0f} | {r['clusters']} | "
              f"{r['core']} | {r['noise']} | "
              + ", ".join(f"{k[len('ratio_to_'):]} {v:.1f}x" for k, v in r.items()
                          if k.startswith("ratio_to_")) + " |")


if __name__ == "__main__":
    main()
