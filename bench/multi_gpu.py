#!/usr/bin/env python3
"""Issues 29 and 30: one join spread over 1, 2, 4, ... GPUs of one host (`--devices`), each
count in the same run, so the speed-ups compare like with like. Every case checks that every
device count finds exactly the one-GPU pairs. Prints a Markdown table (seconds: the best of
--repeat runs of the join itself, without generating or reading the points); --out keeps
every record as JSON lines.

usage: bench/multi_gpu.py EPSJOIN [--gpus 1,2,4] [--only NAME,...] [--repeat N] [--out FILE]

Cases (name, engine, generator, eps, format): the count-only joins of issue 29 (uniform 2-D
50M at S ~ 5000, Expo16D 4M at S ~ 500), issue 30's strong-scaling 200M uniform 2-D at S ~
500, and the CSR to host memory (uniform 2-D 50M, S ~ 50). Standard library only.
"""
import argparse
import json
import subprocess
import sys

CASES = [
    ("uniform2d-50m-s5000-count", "lbjoin", "uniform:2:50000000", 0.005642, "count", []),
    ("expo16d-4m-s500-count", "gds-join", "expo:16:4000000", 0.0420, "count", ["--paper"]),
    ("uniform2d-200m-s500-count", "lbjoin", "uniform:2:200000000", 0.000892, "count", []),
    ("uniform2d-50m-s50-csr", "lbjoin", "uniform:2:50000000", 0.000564, "csr", []),
]


def run_case(binary, case, gpus, repeat):
    name, engine, spec, eps, fmt, extra = case
    devices = ",".join(str(g) for g in range(gpus))
    cmd = [binary, "join", "--generate", spec, *extra, "--eps", str(eps), "--engine", engine,
           "--format", fmt, "--json", "--repeat", str(repeat), "--devices", devices]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"multi_gpu.py: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    record = json.loads([l for l in proc.stdout.splitlines() if l.startswith("{")][-1])
    notes = record.get("notes", {})
    if isinstance(notes, list):
        notes = {k: v for k, v in notes}
    return {
        "case": name, "engine": record["engine"], "gpus": gpus, "pairs": record["pairs"],
        "selectivity": record["selectivity"], "seconds": min(record["run_seconds"]),
        "halo_fraction": float(notes.get("devices_halo_fraction", 0) or 0),
        "imbalance": float(notes.get("devices_imbalance", 0) or 0),
        "work": notes.get("devices_work", ""), "stages": record.get("stages"),
        "command": " ".join(cmd),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--gpus", default="1,2")
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    gpu_counts = [int(g) for g in args.gpus.split(",")]
    only = set(filter(None, args.only.split(",")))
    rows, failures = [], 0
    print("| case | engine | GPUs | S | seconds | speed-up | efficiency | halo | imbalance |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in CASES:
        if only and case[0] not in only:
            continue
        base = None
        for gpus in gpu_counts:
            r = run_case(args.binary, case, gpus, args.repeat)
            rows.append(r)
            if base is None:
                base = r
            if r["pairs"] != base["pairs"]:
                failures += 1
                print(f"MISMATCH: {case[0]} on {gpus} GPUs found {r['pairs']} pairs, "
                      f"{base['gpus']} GPU(s) {base['pairs']}", file=sys.stderr)
            speedup = base["seconds"] / r["seconds"] * base["gpus"]
            print(f"| {r['case']} | {r['engine']} | {gpus} | {r['selectivity']:.0f} | "
                  f"{r['seconds']:.3f} | {speedup:.2f} | {speedup / gpus:.2f} | "
                  f"{r['halo_fraction']:.4f} | {r['imbalance']:.3f} |", flush=True)
    if args.out:
        with open(args.out, "w") as out:
            for r in rows:
                out.write(json.dumps(r) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
