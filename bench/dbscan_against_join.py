#!/usr/bin/env python3
"""Issue 26's H100 targets: `epsjoin dbscan` against the count-only join of the same points,
engine and eps (DBSCAN at most 1.5x its time), with each run's peak host RSS. Prints a Markdown
table. Standard library only; Linux (peak RSS from wait4 of each child, forked from this small
process).

usage: bench/dbscan_against_join.py EPSJOIN [--engine lbjoin] [--min-samples 10] [--repeat 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (name, generator arguments, eps): Expo2D 2M at S 50 and 497, uniform 2-D 50M at S 50.
CASES = [
    ("expo2d-2m-s50", ["--generate", "expo:2:2000000", "--paper"], 0.000141),
    ("expo2d-2m-s497", ["--generate", "expo:2:2000000", "--paper"], 0.000448),
    ("uniform2d-50m-s50", ["--generate", "uniform:2:50000000"], 0.000564),
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--engine", default="lbjoin")
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    print("| case | engine | count-only join s | DBSCAN s | ratio | clusters | core / border / noise "
          "| DBSCAN peak RSS GB | DBSCAN stages |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    for name, gen, eps in CASES:
        join = run([a.binary, "join", *gen, "--eps", str(eps), "--engine", a.engine, "--format",
                    "count", "--json", "--repeat", str(a.repeat)])
        times, last = [], None
        for _ in range(a.repeat):
            last = run([a.binary, "dbscan", *gen, "--eps", str(eps), "--min-samples",
                        str(a.min_samples), "--engine", a.engine, "--json"])
            times.append(last["seconds"])
        t = sorted(times)[len(times) // 2]
        stages = ", ".join(f"{k} {v:.3f}" for k, v in last.get("stages", {}).items())
        print(f"| {name} | {a.engine} | {join['seconds']:.3f} | {t:.3f} | {t / join['seconds']:.2f} | "
              f"{last.get('clusters')} | {last.get('core')} / {last.get('border')} / {last.get('noise')} | "
              f"{last['peak_rss'] / 1e9:.2f} | {stages} |", flush=True)


if __name__ == "__main__":
    main()
