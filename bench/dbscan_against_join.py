#!/usr/bin/env python3
"""Issues 26's and 48's targets: `epsjoin dbscan` against the count-only join of the same points,
engine and eps (issue 48: DBSCAN at most 1.3x its time), each the median of --repeat runs in one
process, with DBSCAN's first run in that process and its peak host RSS, and optionally
against a second binary (`--before`, e.g. main's build) or the host merge of the same binary
(`--merge host`), checking that both write the same labels. Prints a Markdown table. Standard
library only; Linux (peak RSS from wait4 of each child, forked from this small process).

usage: bench/dbscan_against_join.py EPSJOIN [--before EPSJOIN_OF_MAIN] [--host-merge]
           [--engine lbjoin] [--param KEY=VALUE] [--min-samples 10] [--repeat 3] [--data DIR]
           [--cases SUBSTRING ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (name, input arguments, eps): Expo2D 2M at S 50 and 497, uniform 2-D 50M at S 50, and the
# real coastline samples (50,000 points each, ../shared/data) at S about 50 and 500 (eps from
# 400 random queries' exact neighbour distances; the table prints the S each gives).
CASES = [
    ("expo2d-2m-s50", ["--generate", "expo:2:2000000", "--paper"], 0.000141),
    ("expo2d-2m-s497", ["--generate", "expo:2:2000000", "--paper"], 0.000448),
    ("uniform2d-50m-s50", ["--generate", "uniform:2:50000000"], 0.000564),
]
COASTS = [
    ("gshhg-coast-50k-s50", "gshhg_coast_2d_sample.f64", 0.9965),
    ("gshhg-coast-50k-s500", "gshhg_coast_2d_sample.f64", 5.943),
    ("osm-coast-50k-s50", "osm_coast_2d_sample.f64", 0.7946),
    ("osm-coast-50k-s500", "osm_coast_2d_sample.f64", 5.257),
]


def run(cmd):
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(cmd)} failed: {err.strip()}")
        out.seek(0)
        text = out.read().decode()
    record = json.loads([l for l in text.splitlines() if l.startswith("{")][-1])
    record["peak_rss"] = usage.ru_maxrss * 1024
    return record


def dbscan(binary, args, merge=None, labels=None, repeat=1):
    cmd = [binary, "dbscan", *args, "--json"]
    if merge:
        cmd += ["--merge", merge]
    if labels:
        cmd += ["--output", labels]
    if repeat > 1:
        cmd += ["--repeat", str(repeat)]
    return run(cmd)


def takes_repeat(binary):
    """Whether BINARY's dbscan has --repeat (older builds do not)."""
    proc = subprocess.run([binary, "dbscan", "--help"], capture_output=True, text=True)
    return "--repeat" in proc.stdout


def timed(binary, args, repeat, merge=None):
    """The median of `repeat` runs in one process (as the count-only join is timed), and the
    process's first run; for a binary without --repeat, the median of `repeat` processes."""
    if takes_repeat(binary):
        last = dbscan(binary, args, merge, repeat=repeat)
        runs = last.get("run_seconds", [last["seconds"]])
        return last["seconds"], runs[0], last
    times, last = [], None
    for _ in range(repeat):
        last = dbscan(binary, args, merge)
        times.append(last["seconds"])
    return sorted(times)[len(times) // 2], times[0], last


def same_labels(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--before", help="a second epsjoin (main's) whose DBSCAN is timed beside")
    p.add_argument("--host-merge", action="store_true",
                   help="also time BINARY's own host merge (--merge host)")
    p.add_argument("--engine", default="lbjoin")
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data", default=os.path.join(root, "..", "shared", "data"))
    p.add_argument("--cases", nargs="*", help="run only cases whose name holds one of these")
    p.add_argument("--param", action="append", default=[],
                   help="KEY=VALUE engine parameter for every join (repeatable)")
    a = p.parse_args()
    cases = list(CASES)
    for name, file, eps in COASTS:
        path = os.path.join(a.data, file)
        if os.path.exists(path):
            cases.append((name, ["--input", path, "--dim", "2"], eps))
    if a.cases:
        cases = [c for c in cases if any(k in c[0] for k in a.cases)]
    others = ([("before", a.before, None)] if a.before else []) + \
             ([("host merge", a.binary, "host")] if a.host_merge else [])
    print("| case | engine | S | count-only join s | join first run s | DBSCAN s (merge) | ratio | " +
          "first run s | " +
          "".join(f"{label} s | {label} ratio | same labels | " for label, _, _ in others) +
          "clusters | core / border / noise | DBSCAN peak RSS GB | DBSCAN stages |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | " + "---: | ---: | --- | " * len(others) +
          "---: | --- | ---: | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, source, eps in cases:
            args = [*source, "--eps", str(eps), "--engine", a.engine]
            for kv in a.param:
                args += ["--param", kv]
            join = run([a.binary, "join", *args, "--format", "count", "--json", "--repeat",
                        str(a.repeat)])
            dargs = [*args, "--min-samples", str(a.min_samples)]
            t, first, last = timed(a.binary, dargs, a.repeat)
            mine = os.path.join(tmp, "after.npy")
            dbscan(a.binary, dargs, labels=mine)
            cells = ""
            for label, binary, merge in others:
                bt, _, _ = timed(binary, dargs, a.repeat, merge)
                theirs = os.path.join(tmp, "before.npy")
                dbscan(binary, dargs, merge, labels=theirs)
                cells += (f"{bt:.3f} | {bt / join['seconds']:.2f} | "
                          f"{'yes' if same_labels(mine, theirs) else 'NO'} | ")
            s = join["pairs"] / max(join["n_queries"], 1)
            stages = ", ".join(f"{k} {v:.3f}" for k, v in last.get("stages", {}).items())
            join_first = join.get("run_seconds", [join["seconds"]])[0]
            print(f"| {name} | {a.engine} | {s:.0f} | {join['seconds']:.3f} | {join_first:.3f} | {t:.3f} "
                  f"({last.get('merge', 'host')}) | {t / join['seconds']:.2f} | {first:.3f} | {cells}"
                  f"{last.get('clusters')} | {last.get('core')} / {last.get('border')} / "
                  f"{last.get('noise')} | {last['peak_rss'] / 1e9:.2f} | {stages} |", flush=True)
            if last.get("notes"):
                print(f"  {name} notes: {last['notes']}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
