#!/usr/bin/env python3
"""`epsjoin dbscan` side by side with scikit-learn's DBSCAN (n_jobs=-1: every core).

usage: dbscan_vs_sklearn.py --bin build/epsjoin [--n 200000 1000000] [--selectivity 50]
                            [--spec expo:2] [--engines cpu-grid super-ego] [--skip-sklearn-above N]
                            [--repeat 3] [--sklearn-repeat 1] [--merge device|host]

For each N: generates SPEC:N with the program, finds eps for the target selectivity (mean
neighbours per point, self excluded) by bisection with counting joins, then runs each epsjoin
engine and scikit-learn on the same points, each in its own process so that its peak resident
memory (ru_maxrss) is its own. Checks that both find the same core points, noise and number of
clusters, and prints one JSON line per case and a table. min_samples defaults to 10. On a shared
machine other work only ever slows a run down, so each tool's time is its best of --repeat
(epsjoin) and --sklearn-repeat (scikit-learn) runs, the tools alternated round by round; the
CPU seconds (epsjoin: user + system of the whole process, reading its input included;
scikit-learn: the process's CPU time over `fit` alone) are the least of its runs, and their ratio
is the comparison that the machine's load moves least.
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
start, cpu_start = time.perf_counter(), time.process_time()
model = DBSCAN(eps=eps, min_samples=min_samples, n_jobs=-1).fit(points)
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
np.save(sys.argv[4], model.labels_.astype(np.int64))
core = np.zeros(len(points), dtype=bool)
core[model.core_sample_indices_] = True
np.save(sys.argv[5], core)
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds}))
"""


def peak_rss_of(cmd):
    """Runs cmd; returns (stdout, wall seconds, peak RSS in bytes, CPU seconds) of that child."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()[-500:]}")
    return out, wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


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
    ap.add_argument("--data", nargs="+", default=[],
                    help="raw float64 files NAME_Dd_*.f64 (the shared samples) instead of --spec:"
                         " D is read from the name")
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
        cases = [(None, n) for n in args.n] if not args.data else [(f, 0) for f in args.data]
        for source, n in cases:
            path = os.path.join(tmp, "points.npy")
            if source is None:
                subprocess.run([args.bin, "gen", f"{args.spec}:{n}:seed=1", "--output", path],
                               check=True, capture_output=True)
            else:
                d = int(next(p for p in os.path.basename(source).split("_") if p.endswith("d")
                             and p[:-1].isdigit())[:-1])
                points = np.fromfile(source, dtype="<f8").reshape(-1, d)
                np.save(path, points)
                n = len(points)
            case = os.path.basename(source) if source else f"{args.spec}:{n}"
            if args.eps_at_1m > 0 and source is None:
                d = int(args.spec.split(":")[1])
                eps = args.eps_at_1m * (1e6 / n) ** (1 / d)
            else:
                eps = find_eps(args.bin, path, args.selectivity)
            # Rounds alternate the tools, so that a change in the machine's load falls on all.
            tools = [f"epsjoin {e}" for e in args.engines]
            run_sklearn = not (args.skip_sklearn_above and n > args.skip_sklearn_above)
            if run_sklearn:
                tools.append("scikit-learn")
            runs = {t: [] for t in tools}
            failed = None
            sk_labels, sk_core = os.path.join(tmp, "sk_labels.npy"), os.path.join(tmp, "sk_core.npy")
            for r in range(max(args.repeat, args.sklearn_repeat, 1)):
                for engine in args.engines:
                    if r >= max(args.repeat, 1):
                        continue
                    out, wall, rss, cpu = peak_rss_of(
                        [args.bin, "dbscan", "--input", path, "--eps", repr(eps), "--min-samples",
                         str(args.min_samples), "--engine", engine, "--merge", args.merge,
                         "--output", os.path.join(tmp, f"{engine}.npy"), "--json"])
                    runs[f"epsjoin {engine}"].append((json.loads(out), rss, cpu))
                if run_sklearn and failed is None and r < max(args.sklearn_repeat, 1):
                    try:
                        out, wall, rss, cpu = peak_rss_of(
                            [sys.executable, "-c", SKLEARN_RUN, path, repr(eps),
                             str(args.min_samples), sk_labels, sk_core])
                        runs["scikit-learn"].append((json.loads(out), rss, cpu))
                    except RuntimeError as e:
                        failed = str(e)[-200:]
            ours = {}
            for engine in args.engines:
                mine = runs[f"epsjoin {engine}"]
                summary = min(mine, key=lambda x: x[0]["seconds"])[0]
                count = json.loads(subprocess.run(
                    [args.bin, "join", "--input", path, "--eps", repr(eps), "--engine", engine,
                     "--json"], capture_output=True, text=True, check=True).stdout)
                row = {"tool": f"epsjoin {engine}", "case": case, "n": n, "eps": eps,
                       "merge": summary["merge"],
                       "selectivity": count["selectivity"], "seconds": summary["seconds"],
                       "seconds_all": [x[0]["seconds"] for x in mine],
                       "cpu_seconds": min(x[2] for x in mine),
                       "stages": summary["stages"], "peak_rss_bytes": max(x[1] for x in mine),
                       "clusters": summary["clusters"], "core": summary["core"],
                       "noise": summary["noise"], "threads": summary["threads"],
                       "count_join_seconds": count["seconds"]}
                ours[engine] = np.load(os.path.join(tmp, f"{engine}.npy"))
                rows.append(row)
                print(json.dumps(row), flush=True)
            if not run_sklearn:
                continue
            if failed is not None:
                row = {"tool": "scikit-learn", "case": case, "n": n, "eps": eps, "error": failed}
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            sk = np.load(sk_labels)
            sk_core_flags = np.load(sk_core)
            theirs = runs["scikit-learn"]
            row = {"tool": "scikit-learn", "case": case, "n": n, "eps": eps,
                   "seconds": min(x[0]["seconds"] for x in theirs),
                   "seconds_all": [x[0]["seconds"] for x in theirs],
                   "cpu_seconds": min(x[0]["cpu_seconds"] for x in theirs),
                   "peak_rss_bytes": max(x[1] for x in theirs), "clusters": int(sk.max() + 1),
                   "core": int(sk_core_flags.sum()), "noise": int((sk == -1).sum()),
                   "threads": os.cpu_count()}
            for engine, labels_ in ours.items():
                same = (np.array_equal(labels_ == -1, sk == -1) and
                        int(labels_.max() + 1) == row["clusters"])
                row[f"agrees_with_{engine}"] = bool(same)
                mine = next(x for x in rows if x["tool"] == f"epsjoin {engine}" and x["n"] == n)
                row[f"ratio_to_{engine}"] = row["seconds"] / mine["seconds"]
                row[f"cpu_ratio_to_{engine}"] = row["cpu_seconds"] / mine["cpu_seconds"]
            rows.append(row)
            print(json.dumps(row), flush=True)

    print(f"\n| tool | case | N | eps | S | seconds | CPU s | count-only join (s) | peak RSS (MB) | clusters | core | noise | scikit-learn's time over epsjoin's (CPU time's) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['tool']} | {r['case']} | {r['n']} | {r['eps']:.4g} | | failed: {r['error'][:60]} | | | | | | | |")
            continue
        s = r.get("selectivity", "")
        print(f"| {r['tool']} | {r['case']} | {r['n']} | {r['eps']:.4g} | {s if s == '' else f'{s:.1f}'} | "
              f"{r['seconds']:.3f} | {r['cpu_seconds']:.2f} | "
              f"{r.get('count_join_seconds', float('nan')):.3f} | "
              f"{r['peak_rss_bytes'] / 2**20:.0f} | {r['clusters']} | "
              f"{r['core']} | {r['noise']} | "
              + ", ".join(f"{k[len('ratio_to_'):]} {v:.1f}x ({r['cpu_ratio_to_' + k[len('ratio_to_'):]]:.1f}x)"
                          for k, v in r.items() if k.startswith("ratio_to_")) + " |")


if __name__ == "__main__":
    main()
