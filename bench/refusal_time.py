#!/usr/bin/env python3
"""How long an in-memory table far over the memory limit takes to be refused, and at what peak
RSS, on each CPU engine (issue 43: refused before the work, within 5 s, nothing allocated); and
what the estimate costs a join whose table fits (its "estimate" stage).

usage: refusal_time.py BIN [BIN ...] [--points N] [--eps X] [--limit L|none] [--fits-eps X]
                       [--fits-limit L,none,...] [--engines a,b] [--data DIR] [--timeout S]

Each BIN is an epsjoin program (say the build before and after a change); every engine runs
under each, one after the other, on the same uniform 2-D points (generated once into DIR as
raw float64). Prints a markdown table: wall seconds of the whole command (reading the points
included), peak RSS, and the first words of the refusal. With --fits-eps, also runs cpu-grid
to a CSR table in memory that fits under each --fits-limit and prints its estimate stage and
the join's seconds (a BIN without the estimate shows none). A limit 'none' passes no
--memory-limit: the join is held to what the machine has available.
"""
import argparse
import json
import os
import subprocess
import time


def limit_args(limit):
    """--memory-limit L, or nothing for 'none' (what the machine has available)."""
    return [] if limit == "none" else ["--memory-limit", limit]


def peak_rss_mb(cmd):
    """Runs cmd under GNU time -f %M; returns (seconds, peak MB, rc, stdout, stderr)."""
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    seconds = time.monotonic() - start
    lines = proc.stderr.strip().splitlines()
    rss = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else float("nan")
    err = "\n".join(l for l in lines[:-1] if not l.startswith("Command "))
    return seconds, rss, proc.returncode, proc.stdout, err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--points", type=int, default=20_000_000)
    ap.add_argument("--eps", type=float, default=0.0063)  # about 2500 neighbours at 20M: 185 GiB
    ap.add_argument("--limit", default="4G")
    ap.add_argument("--engines", default="cpu-grid,super-ego,cpu-rtree,brute-cpu")
    ap.add_argument("--fits-eps", type=float, default=None)
    ap.add_argument("--fits-limit", default="16G")
    ap.add_argument("--data", default="/tmp/epsjoin-bench")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    points = os.path.join(a.data, f"uniform2d_{a.points}.f64")
    if not os.path.exists(points):
        subprocess.run([a.bins[0], "gen", f"uniform:2:{a.points}", "--output", points], check=True,
                       capture_output=True)
    common = ["join", "--input", points, "--dim", "2", "--format", "csr"]
    print(f"uniform 2-D, {a.points} points, eps {a.eps}, --memory-limit {a.limit}\n")
    print("| program | engine | seconds | peak RSS (MB) | exit | message |")
    print("| --- | --- | --- | --- | --- | --- |")
    for b in a.bins:
        for engine in a.engines.split(","):
            cmd = ["timeout", str(a.timeout), b, *common, "--eps", str(a.eps), "--engine", engine,
                   *limit_args(a.limit), "--quiet"]
            seconds, rss, rc, _, err = peak_rss_mb(cmd)
            message = err.strip().splitlines()[-1][:110] if err.strip() else ""
            if rc == 124:
                message = f"still running after {a.timeout:g} s"
            print(f"| {b} | {engine} | {seconds:.2f} | {rss:.0f} | {rc} | {message} |", flush=True)
    if a.fits_eps is None:
        return
    print(f"\ncpu-grid to a CSR table that fits: eps {a.fits_eps}, --memory-limit {a.fits_limit}\n")
    print("| program | limit | pairs | estimate stage (s) | join seconds | note |")
    print("| --- | --- | --- | --- | --- | --- |")
    for limit in a.fits_limit.split(","):
        for b in a.bins:
            cmd = [b, *common, "--eps", str(a.fits_eps), "--engine", "cpu-grid",
                   *limit_args(limit), "--json"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"| {b} | {limit} | failed: {proc.stderr.strip()[:100]} | | | |")
                continue
            s = json.loads(proc.stdout)
            est = s["stages"].get("estimate")
            note = s["notes"].get("result estimate", "")
            print(f"| {b} | {limit} | {s['pairs']} | {'-' if est is None else f'{est:.3f}'} | "
                  f"{s['seconds']:.2f} | {note} |", flush=True)


if __name__ == "__main__":
    main()
