#!/usr/bin/env python3
"""Runs epsjoin and adds what the process got of the machine to its --json summary.

usage: cpu_share.py EPSJOIN_BINARY ARGS...   (as run_scenarios.py's --bin, through EPSJOIN_BIN)

For a shared, noisy machine: a run whose threads had to wait for a core is slower for reasons
outside the engine. Adds to the JSON object (other output passes through unchanged):
  process_wall_s   wall seconds of the whole process (data generation included)
  process_cpu_s    user + system CPU seconds of the process (all its threads)
  cores_used       process_cpu_s / process_wall_s: near the thread count when nothing else
                   competed (less in serial stages), well below it when the cores were shared
  loadavg_1m       the 1-minute load average when the run ended
With run_scenarios.py: EPSJOIN_BIN=build-cpu/epsjoin run_scenarios.py ... --bin bench/cpu_share.py
"""
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time


def die_with_parent():
    # run_scenarios.py's timeout kills this wrapper (SIGKILL): take epsjoin with it (Linux).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def main():
    binary = os.environ.get("EPSJOIN_BIN")
    args = sys.argv[1:]
    if not binary:
        if not args:
            sys.exit("cpu_share.py: set EPSJOIN_BIN or pass the binary first")
        binary, args = args[0], args[1:]
    start = time.perf_counter()
    proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, text=True,
                            preexec_fn=die_with_parent)
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    # communicate() reaped the child; its rusage is in RUSAGE_CHILDREN (the only child here).
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    try:
        summary = json.loads(out)
    except json.JSONDecodeError:
        sys.stdout.write(out)
        sys.exit(proc.returncode)
    summary.update({"process_wall_s": round(wall, 4), "process_cpu_s": round(cpu, 4),
                    "cores_used": round(cpu / wall, 3) if wall > 0 else None,
                    "loadavg_1m": os.getloadavg()[0]})
    print(json.dumps(summary))
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
