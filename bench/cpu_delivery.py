#!/usr/bin/env python3
"""The CPU engines' delivery (issue 23, part 3): a CSR table in host memory against counting only,
on the same engine, in one run, with the time by stage and the ratio; and scipy's
cKDTree.query_pairs(output_type="ndarray") beside it when scipy can be imported (one thread,
tree build included, in memory like epsjoin's table).

Each case runs, interleaved, --rounds times: `--format count`; `--format csr` (the table in
memory; cpu-grid's default fill=auto, and fill=halved: each pair computed once, both rows
written, and fill=full: each row by its own query, all 3^k cells); the other engines' CSR;
scipy. Each figure is the median over the rounds of the join's own `seconds`
(index build included, loading the file not). Prints a Markdown table.

usage: bench/cpu_delivery.py [--bin build-cpu/epsjoin] [--before OLD_EPSJOIN] [--threads 1]
                             [--cases NAME,...] [--rounds 3] [--engines cpu-grid,super-ego,cpu-rtree]
                             [--data DIR] [--no-scipy]
--before runs another build's binary in the same rounds (its count and CSR): a before/after.
       bench/cpu_delivery.py --bin build-device/epsjoin --threads 16 --cases uniform2d-50m \
           --engines cpu-grid --rounds 1 --no-scipy   # the 16-core target (<= 4 s), ~1 minute

--unique measures unique pairs instead (issues 23 and 25, one thread): the CLI's `.npy`
(`--output pairs.npy`, the JSON's `seconds`: index, join and the streamed write; also with
--before), Python's `epsjoin.pairs` (each pair handed over once and grouped by i) and its
previous path (the CSR table cut to j > i, `pairs_from_rows(once=False)`), and scipy's
cKDTree.query_pairs(output_type="ndarray"), all in one run, interleaved, medians of --rounds:
       bench/cpu_delivery.py --unique --before ../wt-main/build-cpu/epsjoin --engines cpu-grid \
           --python build/python-venv/bin/python

Standard library only, scipy optional. Cases (eps for S = 50 neighbours a point):
  uniform2d-2m   uniform 2-D 2M S 50          expo2d-2m   Expo2D 2M S 50 (--paper)
  gshhg, osm, tycho2-radec, tycho2-xyz         the real samples in ../shared/data at S 50
  skimage-64d  image patches, 64-D (../shared/data) at S 50
  uniform2d-50m  uniform 2-D 50M S 50 (the 16-core target; about 1.5 minutes on 16 cores)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))  # --data overrides

# name: (generator spec or sample file, d, eps, extra arguments). eps for S = 50 from
# bench/find_eps.py (generated sets) or a bisection on the sample itself (real samples).
CASES = {
    "uniform2d-2m": ("uniform:2:2000000", 2, 0.00282, []),
    "expo2d-2m": ("expo:2:2000000", 2, 0.000141, ["--paper"]),
    "gshhg": ("gshhg_coast_2d_sample.f64", 2, None, []),
    "osm": ("osm_coast_2d_sample.f64", 2, None, []),
    "tycho2-radec": ("tycho2_radec_2d_sample.f64", 2, None, []),
    "tycho2-xyz": ("tycho2_xyz_3d_sample.f64", 3, None, []),
    "skimage-64d": ("skimage_patch8x8_64d_sample.f64", 64, None, []),
    "uniform2d-50m": ("uniform:2:50000000", 2, 0.000564, []),
}
DEFAULT_CASES = "uniform2d-2m,expo2d-2m,gshhg,osm,tycho2-radec,tycho2-xyz"


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cpu_delivery.py: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])


def materialise(binary, name, tmp, data_dir):
    """The case's points as a raw .f64 file (generated once), its d and its eps."""
    source, d, eps, extra = CASES[name]
    if source.endswith(".f64"):
        path = os.path.join(data_dir, source)
    else:
        path = os.path.join(tmp, name + ".f64")
        subprocess.run([binary, "gen", source, *extra, "--output", path, "--format", "f64"],
                       check=True, capture_output=True)
    if eps is None:
        eps = eps_for(binary, path, d, 50.0)
    return path, d, eps


def eps_for(binary, path, d, target):
    """Bisects eps (log scale) for `target` neighbours a point, with counting joins."""
    lo, hi = 1e-9, 1e3
    for _ in range(40):
        mid = (lo * hi) ** 0.5
        s = run_json([binary, "join", "--input", path, "--dim", str(d), "--eps", repr(mid),
                      "--format", "count", "--json"])["selectivity"]
        if abs(s - target) < 0.02 * target:
            return mid
        lo, hi = (mid, hi) if s < target else (lo, mid)
    return (lo * hi) ** 0.5


def epsjoin_run(binary, path, d, eps, threads, engine, fmt, params=()):
    cmd = [binary, "join", "--input", path, "--dim", str(d), "--eps", repr(eps), "--engine",
           engine, "--threads", str(threads), "--format", fmt, "--json"]
    for p in params:
        cmd += ["--param", p]
    return run_json(cmd)


SCIPY = r"""
import sys, time, numpy as np
from scipy.spatial import cKDTree
path, d, eps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
x = np.fromfile(path, dtype='<f8').reshape(-1, d)
t = time.perf_counter()
p = cKDTree(x).query_pairs(eps, output_type='ndarray')
print(time.perf_counter() - t, len(p))
"""


def scipy_run(path, d, eps):
    out = subprocess.run([sys.executable, "-c", SCIPY, path, str(d), repr(eps)],
                         capture_output=True, text=True, check=True)
    seconds, unique = out.stdout.split()
    return float(seconds), int(unique)


PY_PAIRS = r"""
import sys, time, numpy as np, epsjoin
from epsjoin import _epsjoin
from epsjoin._validation import run_settings
path, d, eps, engine = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
x = np.fromfile(path, dtype='<f8').reshape(-1, d)
epsjoin.pairs(x[:100], eps, engine=engine, n_jobs=1)  # the process's one-time start, untimed
t = time.perf_counter()
p = epsjoin.pairs(x, eps, engine=engine, n_jobs=1)
once = time.perf_counter() - t
s = run_settings(engine, "float64", False, 1)
t = time.perf_counter()
q = _epsjoin.pairs_from_rows(x, None, eps, False, False, s, False)[0]
rows = time.perf_counter() - t
assert len(p) == len(q)
print(once, rows, len(p))
"""


def python_pairs(python, path, d, eps, engine):
    out = subprocess.run([python, "-c", PY_PAIRS, path, str(d), repr(eps), engine],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"cpu_delivery.py: Python pairs failed: {out.stderr.strip()}")
    once, rows, m = out.stdout.split()
    return float(once), float(rows), int(m)


def unique_pairs(args, engines):
    """--unique: unique pairs (CLI .npy, Python) against scipy, one thread, before and after."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        npy = os.path.join(tmp, "pairs.npy")
        for name in args.cases.split(","):
            path, d, eps = materialise(args.bin, name, tmp, args.data)
            runs = {}
            for _ in range(args.rounds):
                for engine in engines:
                    for key, binary in (("npy", args.bin), ("npy-before", args.before)):
                        if binary is None:
                            continue
                        # A new file each time, as a first write: replacing the last run's file
                        # frees its pages inside the rename, about 0.25 s for 400 MB here.
                        if os.path.exists(npy):
                            os.remove(npy)
                        r = run_json([binary, "join", "--input", path, "--dim", str(d), "--eps",
                                      repr(eps), "--engine", engine, "--threads", "1", "--output",
                                      npy, "--json"])
                        runs.setdefault((engine, key), []).append(r)
                    if args.python:
                        once, by_rows, m = python_pairs(args.python, path, d, eps, engine)
                        runs.setdefault((engine, "py"), []).append(once)
                        runs.setdefault((engine, "py-rows"), []).append(by_rows)
                        assert 2 * m == runs[(engine, "npy")][-1]["pairs"], "Python differs"
                runs.setdefault("scipy", []).append(scipy_run(path, d, eps))
            first = runs[(engines[0], "npy")][0]
            assert runs["scipy"][0][1] * 2 == first["pairs"], "scipy differs"
            scipy_s = statistics.median(s for s, _ in runs["scipy"])
            row = {"case": name, "n": first["n"], "S": round(first["selectivity"], 1),
                   "scipy": scipy_s}
            for engine in engines:
                for key in ("npy", "npy-before", "py", "py-rows"):
                    if (engine, key) in runs:
                        v = runs[(engine, key)]
                        row[f"{engine} {key}"] = statistics.median(
                            x["seconds"] if isinstance(x, dict) else x for x in v)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    keys = [k for k in rows[0] if k not in ("case", "n", "S", "scipy")]
    print(f"\n1 thread, median of {args.rounds}, seconds; in parentheses scipy's time over "
          f"this one (x faster than scipy). npy: the CLI's `seconds` (index, join, streamed "
          f"write); py: epsjoin.pairs; py-rows: the CSR table cut to j > i.\n")
    print("| case | N | S | scipy query_pairs | " + " | ".join(keys) + " |")
    print("| --- | ---: | ---: | ---: |" + " ---: |" * len(keys))
    for r in rows:
        cells = " | ".join(f"{r[k]:.3f} ({r['scipy'] / r[k]:.1f}x)" for k in keys)
        print(f"| {r['case']} | {r['n']:,} | {r['S']} | {r['scipy']:.3f} | {cells} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build-cpu/epsjoin")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default="cpu-grid,super-ego,cpu-rtree")
    ap.add_argument("--no-scipy", action="store_true")
    ap.add_argument("--before", help="another build's epsjoin, run in the same rounds")
    ap.add_argument("--data", default=DATA, help="folder of the real samples")
    ap.add_argument("--unique", action="store_true",
                    help="unique pairs (.npy, Python) against scipy instead of CSR and count")
    ap.add_argument("--python", help="--unique: a Python with epsjoin installed, for its pairs")
    args = ap.parse_args()
    use_scipy = not args.no_scipy
    if use_scipy:
        try:
            import scipy  # noqa: F401
        except ImportError:
            print("(scipy not importable: its column is left out)", file=sys.stderr)
            use_scipy = False
    engines = [e for e in args.engines.split(",") if e]
    if args.unique:
        return unique_pairs(args, engines)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            path, d, eps = materialise(args.bin, name, tmp, args.data)
            runs = {}

            def add(key, value):
                runs.setdefault(key, []).append(value)

            for _ in range(args.rounds):
                # Unrecorded: a virtual machine faults fresh memory in far slower than memory a
                # process freed just before (about 1 s of system time for a 400 MB table here),
                # which would fall on whichever CSR ran first.
                epsjoin_run(args.bin, path, d, eps, args.threads, engines[0], "csr")
                for engine in engines:
                    add((engine, "count"), epsjoin_run(args.bin, path, d, eps, args.threads,
                                                       engine, "count"))
                    add((engine, "csr"), epsjoin_run(args.bin, path, d, eps, args.threads,
                                                     engine, "csr"))
                    if args.before:
                        add((engine, "count-before"),
                            epsjoin_run(args.before, path, d, eps, args.threads, engine, "count"))
                        add((engine, "csr-before"),
                            epsjoin_run(args.before, path, d, eps, args.threads, engine, "csr"))
                    if engine == "cpu-grid":
                        for fill in ("halved", "full"):
                            add((engine, "csr-" + fill),
                                epsjoin_run(args.bin, path, d, eps, args.threads, engine, "csr",
                                            ["fill=" + fill]))
                if use_scipy and args.threads == 1:
                    add(("scipy", "pairs"), scipy_run(path, d, eps))
            first = runs[(engines[0], "count")][0]
            row = {"case": name, "n": first["n"], "d": d, "eps": eps,
                   "S": round(first["selectivity"], 1), "pairs": first["pairs"]}
            for engine in engines:
                count = statistics.median(r["seconds"] for r in runs[(engine, "count")])
                csr = runs[(engine, "csr")]
                csr_s = statistics.median(r["seconds"] for r in csr)
                assert all(r["pairs"] == first["pairs"] for r in csr), "pair counts differ"
                stages = {}
                for k in csr[0].get("stages", {}):
                    stages[k] = statistics.median(r["stages"].get(k, 0) for r in csr)
                row[engine] = {"count": count, "csr": csr_s, "stages": stages}
                for key in ("count-before", "csr-before"):
                    if (engine, key) in runs:
                        row[engine][key] = statistics.median(r["seconds"]
                                                             for r in runs[(engine, key)])
                for fill in ("halved", "full"):
                    if (engine, "csr-" + fill) in runs:
                        row[engine]["csr_" + fill] = statistics.median(
                            r["seconds"] for r in runs[(engine, "csr-" + fill)])
            if ("scipy", "pairs") in runs:
                row["scipy"] = statistics.median(s for s, _ in runs[("scipy", "pairs")])
                assert runs[("scipy", "pairs")][0][1] * 2 == first["pairs"], "scipy differs"
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)

    print(f"\n{args.threads} thread(s), median of {args.rounds}; seconds of the join "
          f"(index included); CSR in memory.\n")
    head = "| case | N | S |"
    rule = "| --- | ---: | ---: |"
    for e in engines:
        head += f" {e} count | {e} CSR | CSR/count |"
        rule += " ---: | ---: | ---: |"
        if args.before:
            head += f" before: count | CSR | CSR/count |"
            rule += " ---: | ---: | ---: |"
        if e == "cpu-grid":
            head += " CSR stages | CSR fill=halved | CSR fill=full |"
            rule += " --- | ---: | ---: |"
    if any("scipy" in r for r in rows):
        head += " scipy query_pairs | scipy / best CSR |"
        rule += " ---: | ---: |"
    print(head)
    print(rule)
    for r in rows:
        line = f"| {r['case']} | {r['n']:,} | {r['S']} |"
        best = min(r[e]["csr"] for e in engines)
        for e in engines:
            x = r[e]
            line += f" {x['count']:.3f} | {x['csr']:.3f} | {x['csr'] / x['count']:.2f} |"
            if args.before:
                b0, b1 = x["count-before"], x["csr-before"]
                line += f" {b0:.3f} | {b1:.3f} | {b1 / b0:.2f} |"
            if e == "cpu-grid":
                st = ", ".join(f"{k} {v:.3f}" for k, v in x["stages"].items())
                line += (f" {st} | {x.get('csr_halved', float('nan')):.3f} |"
                         f" {x.get('csr_full', float('nan')):.3f} |")
        if "scipy" in r:
            line += f" {r['scipy']:.3f} | {r['scipy'] / best:.1f}x |"
        print(line)


if __name__ == "__main__":
    main()
