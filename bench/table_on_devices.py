#!/usr/bin/env python3
"""Issue 44: a CSR table in host memory through one and several GPUs, for one or more builds in
the same call (before and after a change): uniform 2-D 50M points at S 50, lbjoin, --repeat 3 in
one process (the first run of the process and the warm ones), and each process's peak RSS.

usage: bench/table_on_devices.py [--spec SPEC --eps EPS] "DEVICES[@REPEAT];..." EPSJOIN...
  e.g. bench/table_on_devices.py "0;0,1;0,1,2,3" build-before/epsjoin build-device/epsjoin
       bench/table_on_devices.py --spec uniform:3:100000000 --eps 0.00415 "0@1;0@3" epsjoin
A process with @1 runs once: its run is a fresh process's first. Standard library only."""
import json, resource, subprocess, sys, time

def run(binary, devices, spec="uniform:2:50000000", eps=0.000564, repeat=3):
    cmd = [binary, "join", "--generate", spec, "--eps", str(eps), "--engine", "lbjoin",
           "--format", "csr", "--json", "--repeat", str(repeat), "--devices", devices]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode != 0:
        print(f"FAILED {binary} {devices}: {p.stderr.strip()[-800:]}", flush=True)
        return
    r = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    st = r.get("stages", {})
    st = st.items() if isinstance(st, dict) else [(s["name"], s["seconds"]) for s in st]
    stages = ", ".join(f"{k} {v:.3f}" for k, v in st)
    runs = ", ".join(f"{s:.3f}" for s in r.get("run_seconds", [r["seconds"]]))
    print(f"{binary:24s} devices {devices:4s} pairs {r['pairs']} runs [{runs}] wall {wall:.1f} s "
          f"peak RSS {rss / 1e6:.2f} GB\n    stages: {stages}", flush=True)

if sys.argv[1] == "--one":  # in a process of its own, so that ru_maxrss is this run's alone
    run(sys.argv[2], sys.argv[3], sys.argv[5], float(sys.argv[6]), repeat=int(sys.argv[4]))
else:
    args = sys.argv[1:]
    points, eps = "uniform:2:50000000", "0.000564"
    while args[0] in ("--spec", "--eps"):
        if args[0] == "--spec":
            points = args[1]
        else:
            eps = args[1]
        args = args[2:]
    # DEVICES[@REPEAT];... BINARY...
    for item in args[0].split(";"):
        devices, _, repeat = item.partition("@")
        for binary in args[1:]:
            subprocess.run([sys.executable, __file__, "--one", binary, devices, repeat or "3",
                            points, eps])
