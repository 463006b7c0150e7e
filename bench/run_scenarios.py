#!/usr/bin/env python3
"""Runs benchmark scenarios with the epsjoin program and tabulates every figure.

usage: run_scenarios.py SCENARIOS --bin PATH/TO/epsjoin [--out DIR] [--repeat N] [--timeout S]

A scenario file has one scenario a line, fields separated by '|':
    DATASET | EPS [EPS ...] | ENGINE[:key=value,...] [ENGINE ...] | [extra epsjoin join flags]
DATASET is a generator spec (expo:2:2000000:paper=1) or a file path. '#' starts a comment.
Each (dataset, eps, engine) runs --repeat times; the median run (by wall time of the join) is
reported. Writes DIR/results.jsonl (every run), DIR/results.csv and DIR/results.md (medians).
Standard library only.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

STAGES = ["plan", "index", "estimate", "upload", "execute", "transfer", "assembly",
          "count", "rows", "fill+copy wait"]


def parse(path):
    scenarios = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) < 3:
                sys.exit(f"{path}:{number}: expected DATASET | EPS... | ENGINE... [| FLAGS]")
            extra = fields[3].split() if len(fields) > 3 else []
            scenarios.append((fields[0], fields[1].split(), fields[2].split(), extra))
    return scenarios


def engine_args(token):
    name, _, params = token.partition(":")
    args = ["--engine", name]
    for kv in filter(None, params.split(",")):
        args += ["--param", kv]
    return args


def run_one(binary, dataset, eps, engine, extra, timeout):
    source = ["--input", dataset] if os.path.exists(dataset) else ["--generate", dataset]
    cmd = [binary, "join", *source, "--eps", eps, *engine_args(engine), "--json", *extra]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    return json.loads(proc.stdout)


def row(dataset, eps, engine, r):
    if "error" in r:
        return {"dataset": dataset, "eps": eps, "engine": engine, "error": r["error"]}
    notes = r.get("notes", {})
    stages = r.get("stages", {})
    out = {
        "dataset": dataset, "eps": eps, "engine": engine, "threads": r["threads"],
        "R_with_self": r["pairs_with_self"], "S": round(r["selectivity"], 2),
        "candidates": r["candidates"], "seconds": round(r["seconds"], 4),
        "candidates_per_s": f'{r["candidates_per_second"]:.3g}',
    }
    for s in STAGES:
        out[s] = round(stages.get(s, 0.0), 4)
    kernel = sum(float(notes.get(k, 0) or 0)
                 for k in ("kernel seconds", "count kernel seconds", "fill kernels seconds"))
    out["kernel_s"] = round(kernel, 4)
    out["kernel_fraction"] = round(kernel / r["seconds"], 3) if r["seconds"] > 0 else ""
    out["d2h_GBps"] = notes.get("device-to-host GB/s", "")
    out["batches"] = notes.get("batches", "")
    return out


def markdown(rows):
    cols = ["dataset", "eps", "engine", "threads", "R_with_self", "S", "candidates", "seconds",
            "candidates_per_s", "index", "estimate", "execute", "count", "rows", "fill+copy wait",
            "transfer", "assembly", "kernel_s", "kernel_fraction", "d2h_GBps"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        if "error" in r:
            lines.append(f'| {r["dataset"]} | {r["eps"]} | {r["engine"]} | ' + r["error"] + " |")
        else:
            lines.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with open(os.path.join(args.out, "results.jsonl"), "w") as log:
        for dataset, eps_list, engines, extra in parse(args.scenarios):
            for eps in eps_list:
                for engine in engines:
                    runs = []
                    for _ in range(args.repeat):
                        r = run_one(args.bin, dataset, eps, engine, extra, args.timeout)
                        log.write(json.dumps({"dataset": dataset, "config": engine, **r}) + "\n")
                        log.flush()
                        runs.append(r)
                        if "error" in r:
                            break
                    good = [r for r in runs if "error" not in r]
                    median = (sorted(good, key=lambda r: r["seconds"])[len(good) // 2]
                              if good else runs[-1])
                    rows.append(row(dataset, eps, engine, median))
                    print(json.dumps(rows[-1]), flush=True)
    fields = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(markdown(rows))


if __name__ == "__main__":
    main()
