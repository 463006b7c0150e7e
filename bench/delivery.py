#!/usr/bin/env python3
"""Issue 23's delivery benchmark: each case's time by stage, its peak host RSS over the table's
size, and the floor measured in the same run (the result's bytes over the slowest of the pinned
device-to-host copy, the all-core first touch of fresh memory and the all-core host copy, from
bench/host_floor). Prints a Markdown table; --out keeps every record as JSON lines.

usage: bench/delivery.py BUILD_DIR [--binary EPSJOIN ...] [--only NAME] [--repeat N]
       [--file-dir DIR] [--out FILE.jsonl]
Several --binary give one row per binary and case (a before/after in one run). Standard library
only; Linux (peak RSS from wait4).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (name, engine, generator, eps, extra arguments). The issue's targets: 50M 2-D S 50 <= 0.8 s,
# 100M 3-D S 30 <= 1.6 s, Expo2D 2M S 497 <= 0.20 s and S 50 <= 0.06 s, to a CSR table in
# host memory; the CPU engines at 50M S 50 <= 4 s on 16 cores.
CASES = [
    ("expo2d-2m-s50", "lbjoin", "expo:2:2000000", 0.000141, ["--paper"]),
    ("expo2d-2m-s497", "lbjoin", "expo:2:2000000", 0.000448, ["--paper"]),
    ("uniform2d-50m-s50", "lbjoin", "uniform:2:50000000", 0.000564, []),
    ("uniform3d-100m-s30", "lbjoin", "uniform:3:100000000", 0.00415, []),
    ("cpu-grid-50m-s50", "cpu-grid", "uniform:2:50000000", 0.000564, []),
]
FILE_CASE = ("file-2g-50m-s50", "lbjoin", "uniform:2:50000000", 0.000564, [])


def run(cmd):
    """Runs cmd; returns (stdout, peak RSS in bytes)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        sys.exit(f"delivery.py: {' '.join(cmd)} failed ({proc.returncode}): {err.strip()}")
    return text, usage.ru_maxrss * 1024


def join(binary, case, repeat, extra=()):
    name, engine, spec, eps, args = case
    cmd = [binary, "join", "--generate", spec, *args, "--eps", str(eps), "--engine", engine,
           "--format", "csr", "--include-self", "--json", "--repeat", str(repeat), *extra]
    text, rss = run(cmd)
    record = json.loads([l for l in text.splitlines() if l.startswith("{")][-1])
    record["peak_rss"] = rss
    record["case"] = name
    record["binary"] = binary
    return record


def table_bytes(r):
    return (r["n_queries"] + 1) * 8 + r["pairs_with_self"] * 4


def after_count_kernel(r):
    """The join's time once the count kernel is done: what the delivery path costs."""
    stages = r.get("stages", {})
    before = stages.get("plan", 0) + stages.get("index", 0)
    kernel = float(r.get("notes", {}).get("count kernel seconds", 0))
    return r["seconds"] - before - kernel


def floor(build, bytes_):
    text, _ = run([os.path.join(build, "bench", "host_floor"), str(bytes_)])
    return json.loads(text)


def disk_write_gbs(directory, bytes_=4 << 30):
    path = os.path.join(directory, "epsjoin-disk-probe")
    cmd = ["dd", "if=/dev/zero", f"of={path}", "bs=64M", f"count={bytes_ >> 26}",
           "conv=fdatasync", "status=none"]
    import time
    t = time.perf_counter()
    subprocess.run(cmd, check=True)
    seconds = time.perf_counter() - t
    os.unlink(path)
    return bytes_ / seconds / 1e9


def same_rows(a, b):
    """Whether two CSR files hold the same rows (neighbour order within a row is unspecified):
    equal headers and offsets, and equal per-row sums of the ids and of their squares."""
    import numpy as np

    def load(path):
        head = np.fromfile(path, dtype="<u8", count=3)
        n = int(head[1])
        offsets = np.memmap(path, dtype="<u8", mode="r", offset=24, shape=(n + 1,))
        ids = np.memmap(path, dtype="<u4", mode="r", offset=24 + 8 * (n + 1), shape=(int(head[2]),))
        return head, offsets, ids

    (ha, oa, ia), (hb, ob, ib) = load(a), load(b)
    if not (np.array_equal(ha, hb) and np.array_equal(oa, ob)):
        return False
    step = 1 << 22  # rows a piece
    for q in range(0, len(oa) - 1, step):
        lo, hi = int(oa[q]), int(oa[min(q + step, len(oa) - 1)])
        end = min(q + step, len(oa) - 1)
        starts = (oa[q:end] - lo).astype(np.int64)
        keep = oa[q + 1:end + 1] > oa[q:end]  # reduceat gives an empty row the next id: skip them
        xa, xb = ia[lo:hi].astype(np.uint64), ib[lo:hi].astype(np.uint64)
        if hi > lo:
            s = starts[keep]
            if not (np.array_equal(np.add.reduceat(xa, s), np.add.reduceat(xb, s)) and
                    np.array_equal(np.add.reduceat(xa * xa, s), np.add.reduceat(xb * xb, s))):
                return False
    return True


def fmt_stages(r):
    return ", ".join(f"{k} {v:.3f}" for k, v in r.get("stages", {}).items())


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--same-rows":
        print(same_rows(sys.argv[2], sys.argv[3]))
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--binary", action="append", default=[])
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--file-dir", help="also write the 50M S 50 CSR to a file here, "
                   "under --memory-limit 2G, and compare it with an unlimited run's file")
    p.add_argument("--out")
    a = p.parse_args()
    binaries = a.binary or [os.path.join(a.build, "epsjoin")]
    cases = [c for c in CASES if not a.only or c[0] in a.only]
    records = []
    print("| case | binary | pairs incl. self | table GB | join s | after count kernel s | "
          "floor s | after / floor | peak RSS / (table + 1 GB) | stages |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    floors = {}
    for case in cases:
        for binary in binaries:
            r = join(binary, case, a.repeat)
            size = table_bytes(r)
            if size not in floors:
                floors[size] = floor(a.build, size)
            f = floors[size]
            r["floor"] = f
            records.append(r)
            after = after_count_kernel(r)
            print(f"| {case[0]} | {os.path.basename(binary)} | {r['pairs_with_self']} | "
                  f"{size / 1e9:.2f} | {r['seconds']:.3f} | {after:.3f} | "
                  f"{f['floor_seconds_for_bytes']:.3f} | "
                  f"{after / max(f['floor_seconds_for_bytes'], 1e-9):.1f} | "
                  f"{r['peak_rss'] / (size + 1e9):.2f} | {fmt_stages(r)} |", flush=True)
    if a.file_dir:
        disk = disk_write_gbs(a.file_dir)
        for binary in binaries:
            paths = []
            for limit in (None, "2G"):
                path = os.path.join(a.file_dir, f"delivery-{limit or 'unlimited'}.csr")
                extra = ["--output", path] + (["--memory-limit", limit] if limit else [])
                r = join(binary, FILE_CASE, 1, extra)
                r["disk_write_gbs"] = disk
                records.append(r)
                paths.append(path)
                size = os.path.getsize(path)
                print(f"| {FILE_CASE[0]} limit {limit or 'none'} | {os.path.basename(binary)} | "
                      f"{r['pairs_with_self']} | {size / 1e9:.2f} | {r['seconds']:.3f} | "
                      f"total {r['total_seconds']:.3f} | disk {size / disk / 1e9:.3f} | "
                      f"{size / disk / 1e9 / r['total_seconds']:.2f} of disk | "
                      f"RSS {r['peak_rss'] / 1e9:.2f} GB | {fmt_stages(r)} |", flush=True)
            # In a child: the comparison maps both files, and a child forked from a large parent
            # would report the parent's resident size as its own peak (ru_maxrss survives exec).
            same = subprocess.run([sys.executable, __file__, "--same-rows", *paths],
                                  capture_output=True, text=True).stdout.strip() == "True"
            print(f"\nsame rows with and without --memory-limit 2G: {same}; "
                  f"disk write {disk:.2f} GB/s (dd, fdatasync)")
            for path in paths:
                os.unlink(path)
    if a.out:
        with open(a.out, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
