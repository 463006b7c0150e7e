#!/usr/bin/env python3
"""Peak resident memory of a CSR file written under --memory-limit (issue 43 part 3).

Runs the same join to a CSR file with no limit and under each limit given, in one process each,
and reports per run the peak RSS (the child's own rusage), the wall time, the minor faults and
whether the file is byte-identical to the unlimited one. The target: the file under a limit at
most the limit plus a small constant, the same bytes.

usage: bench/file_memory_limit.py BUILD/epsjoin [--points N] [--eps X] [--engine E]
                                  [--dir DIR] [--limit 1G ...]
"""
import argparse
import filecmp
import os
import subprocess
import tempfile
import time


def run(binary, args):
    start = time.monotonic()
    proc = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed: {err}")
    return usage.ru_maxrss * 1024, seconds, usage.ru_minflt


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--points", type=int, default=10_000_000)
    parser.add_argument("--eps", default="0.00126", help="S about 50 for uniform 2-D at 10M")
    parser.add_argument("--engine", default="cpu-grid")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the files go")
    parser.add_argument("--limit", action="append", default=None)
    opts = parser.parse_args()
    limits = opts.limit or ["1G"]
    base = ["join", "--generate", f"uniform:2:{opts.points}:seed=1", "--eps", opts.eps,
            "--engine", opts.engine, "--quiet"]
    with tempfile.TemporaryDirectory(dir=opts.dir) as d:
        free = os.path.join(d, "free.csr")
        rows = [("none", *run(opts.binary, [*base, "--output", free]), True)]
        size = os.path.getsize(free)
        for limit in limits:
            bounded = os.path.join(d, "bounded.csr")
            peak, seconds, faults = run(opts.binary, [*base, "--output", bounded,
                                                      "--memory-limit", limit])
            rows.append((limit, peak, seconds, faults, filecmp.cmp(free, bounded, shallow=False)))
            os.remove(bounded)
    print(f"{opts.engine}, uniform 2-D {opts.points} points, eps {opts.eps}, "
          f"file {size / 1e9:.2f} GB in {opts.dir}")
    print("| limit | peak RSS | wall s | minor faults | same bytes |")
    print("| --- | ---: | ---: | ---: | --- |")
    for limit, peak, seconds, faults, same in rows:
        print(f"| {limit} | {peak / 1e9:.2f} GB | {seconds:.1f} | {faults} | {same} |")


if __name__ == "__main__":
    main()
