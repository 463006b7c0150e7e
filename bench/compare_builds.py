#!/usr/bin/env python3
"""Two builds of epsjoin side by side on the same machine in one run: each case is run by the
old and the new binary in turn (interleaved, so drift in the machine hits both alike), with
--repeat inside each process, and the medians and their ratio (new / old) are printed as a
Markdown table. A refactor that claims "no engine slower" shows it with this table.

usage: bench/compare_builds.py OLD_EPSJOIN NEW_EPSJOIN [--rounds R] [--repeat N] [--cpu-only]
       [--only ENGINE[:DATA]] [--out FILE.jsonl]
Standard library only.
"""
import argparse
import json
import statistics
import subprocess
import sys

# (engine, generator, eps, extra arguments): the papers' Expo sets at S near 50-500, small
# enough that the whole table takes a few minutes on the H100 machine.
GPU_CASES = [
    ("lbjoin", "expo:2:2000000", 0.000448, ["--format", "csr"]),
    ("lbjoin", "expo:4:2000000", 0.00447, ["--format", "csr"]),
    ("lbjoin", "expo:8:2000000", 0.0178, []),
    ("gds-join", "expo:16:1000000", 0.0396, []),
    ("ted-join", "expo:16:1000000", 0.0396, ["--format", "csr"]),
    ("ted-join", "uniform:64:131072", 2.2, []),
    ("meta-16q", "expo:16:1000000", 0.0396, ["--format", "csr"]),
    ("meta-16q", "uniform:64:131072", 2.2, []),
    ("meta-1q", "expo:8:500000", 0.0178, []),
    ("hegjoin", "expo:4:2000000", 0.00447, ["--format", "csr"]),
    ("gpu-sj", "expo:2:2000000", 0.000448, ["--format", "csr"]),
    ("brute-gpu", "expo:2:100000", 0.00093, []),
]
CPU_CASES = [
    ("cpu-grid", "expo:2:1000000", 0.000634, ["--format", "csr"]),
    ("cpu-grid", "uniform:4:1000000", 0.05, []),
    ("super-ego", "expo:8:500000", 0.0178, []),
]


def run(binary, case, repeat):
    engine, spec, eps, extra = case
    cmd = [binary, "join", "--generate", spec, "--paper" if spec.startswith("expo") else None,
           "--eps", str(eps), "--engine", engine, "--json", "--repeat", str(repeat)]
    cmd = [c for c in cmd if c is not None] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cpu-only", action="store_true")
    p.add_argument("--only", action="append", default=[],
                   help="run only this engine (or engine:data, e.g. meta-16q:uniform:64:131072)")
    p.add_argument("--out")
    a = p.parse_args()
    cases = CPU_CASES if a.cpu_only else GPU_CASES + CPU_CASES
    if a.only:
        cases = [c for c in cases if c[0] in a.only or f"{c[0]}:{c[1]}" in a.only]
    log = open(a.out, "w") if a.out else None
    print("| engine | data | eps | pairs | old s (median) | new s (median) | new / old |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        times = {"old": [], "new": []}
        pairs = {}
        try:
            for _ in range(a.rounds):
                for label, binary in (("old", a.old), ("new", a.new)):
                    r = run(binary, case, a.repeat)
                    times[label].append(r["seconds"])
                    pairs[label] = r["pairs"]
                    if log:
                        log.write(json.dumps({"build": label, **r}) + "\n")
        except subprocess.CalledProcessError as e:
            print(f"| {case[0]} | {case[1]} | {case[2]} | failed: {e.stderr.strip()[:80]} | | | |")
            continue
        if pairs["old"] != pairs["new"]:
            print(f"| {case[0]} | {case[1]} | {case[2]} | MISMATCH {pairs['old']} vs "
                  f"{pairs['new']} | | | |")
            continue
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        print(f"| {case[0]} | {case[1]} | {case[2]} | {pairs['new']} | {old:.4f} | {new:.4f} | "
              f"{new / old:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
