#!/usr/bin/env python3
"""Issue 44 parts 2 and 3: a CSR file through one and several GPUs, against the disk's own
sequential write rate measured in the same call with as many streams as devices.

For each DEVICES list (e.g. "0" or "0,1"), one process writes the file (`epsjoin join --format
csr --output DIR/table.csr`, --repeat 1, so the run is the process's first) and reports its join
seconds, peak RSS and the file's bytes. With bench's `file_shards` program as EPSJOIN, a list
may repeat an ordinal ("0,0": two shards sharing one GPU, which the CLI refuses). Then the same
number of bytes is written to DIR by as many threads as the list has devices, and by four, each
a contiguous run with pwrite in 64 MiB pieces, closed as the join's file is, and the ratio of the
join's rate to the faster is printed. Neither is synced: both measure what the page cache and the disk behind it take.

usage: bench/file_on_devices.py DIR "DEVICES;DEVICES..." EPSJOIN [N] [EPS] [ENGINE]
  e.g. bench/file_on_devices.py /tmp/epsjoin-files "0;0,0" build-device/epsjoin
Standard library only."""
import json, os, resource, subprocess, sys, threading, time

PIECE = 64 << 20


def disk_rate(directory, total_bytes, streams):
    """Bytes per second for `streams` threads writing `total_bytes` into one new file."""
    path = os.path.join(directory, "disk_rate.bin")
    buf = os.urandom(1 << 20) * (PIECE >> 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    share = (total_bytes + streams - 1) // streams

    def write(k):
        at, end = k * share, min(total_bytes, (k + 1) * share)
        while at < end:
            n = os.pwrite(fd, memoryview(buf)[: min(PIECE, end - at)], at)
            at += n

    start = time.monotonic()
    threads = [threading.Thread(target=write, args=(k,)) for k in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.close(fd)
    seconds = time.monotonic() - start
    os.unlink(path)
    return total_bytes / seconds


def join_once(binary, devices, directory, n, eps, engine):
    """Runs in a process of its own, so that ru_maxrss is this join's alone."""
    out = os.path.join(directory, "table.csr")
    shards = os.path.basename(binary) == "file_shards"
    if shards:
        cmd = [binary, f"uniform:2:{n}", str(eps), devices, out, engine]
    else:
        cmd = [binary, "join", "--generate", f"uniform:2:{n}", "--eps", str(eps), "--engine",
               engine, "--format", "csr", "--output", out, "--json", "--repeat", "1",
               "--devices", devices]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if p.returncode != 0:
        print(json.dumps({"devices": devices, "failed": p.stderr.strip()[-800:]}), flush=True)
        return
    r = json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])
    size = os.path.getsize(out)
    os.unlink(out)
    if shards:
        seconds, split = r["seconds"], r["split"]
        stages = {**r["stages"], "devices_work": r["work"]} if r["work"] != "one device" \
            else r["stages"]
    else:
        # The join's seconds hold the file's writes (the sink writes as rows arrive) and the
        # rename; write_seconds is what the CLI spent after the join.
        seconds = r.get("run_seconds", [r["seconds"]])[0] + r.get("write_seconds", 0)
        split, stages = r.get("notes", {}).get("devices_split", "one device"), r.get("stages")
    print(json.dumps({"devices": devices, "pairs": r["pairs"], "join_s": seconds, "wall_s": wall,
                      "bytes": size, "peak_rss": rss, "split": split, "stages": stages}),
          flush=True)


def main():
    if sys.argv[1] == "--one":
        join_once(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]),
                  sys.argv[7])
        return
    directory, specs, binary = sys.argv[1], sys.argv[2].split(";"), sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 50_000_000
    eps = float(sys.argv[5]) if len(sys.argv) > 5 else 0.000564  # S 50 at 50M uniform 2-D
    engine = sys.argv[6] if len(sys.argv) > 6 else "lbjoin"
    os.makedirs(directory, exist_ok=True)
    for devices in specs:
        p = subprocess.run([sys.executable, __file__, "--one", binary, devices, directory, str(n),
                            str(eps), engine], capture_output=True, text=True)
        line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "{}"
        r = json.loads(line)
        if "bytes" not in r:
            print(f"devices {devices}: failed: {r.get('failed', p.stderr[-800:])}")
            continue
        # The sink writes a large block as up to four pieces at once, on each device's thread:
        # the disk is measured with one stream a device and with four, the ratio against the
        # faster.
        devices_n = len(devices.split(","))
        rates = {k: disk_rate(directory, r["bytes"], k) for k in sorted({devices_n, 4})}
        best = max(rates.values())
        join_rate = r["bytes"] / r["join_s"]
        disks = ", ".join(f"{k} stream(s) {v / 1e9:.2f} GB/s" for k, v in rates.items())
        print(f"devices {devices:8s} {r['split'][:40]:40s} pairs {r['pairs']} file "
              f"{r['bytes'] / 1e9:.2f} GB join {r['join_s']:.3f} s ({join_rate / 1e9:.2f} GB/s) "
              f"wall {r['wall_s']:.1f} s peak RSS {r['peak_rss'] / 1e9:.2f} GB | disk: {disks} | "
              f"ratio {join_rate / best:.2f}", flush=True)
        if r["stages"]:
            print(f"    stages: {r['stages']}", flush=True)


if __name__ == "__main__":
    main()
