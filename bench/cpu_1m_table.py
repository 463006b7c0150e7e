#!/usr/bin/env python3
"""The tables of the section "CPU engines, 1M points (issue 3)" of docs/bench-history/cpu.md.

usage: cpu_1m_table.py RESULTS.jsonl [RESULTS.jsonl ...]

Reads the results.jsonl files that run_scenarios.py writes (every run; with bench/cpu_share.py
as --bin they also carry cores_used). For each (dataset, eps, engine, threads) takes the median
run by seconds, as run_scenarios.py does; later files win over earlier ones for the same key.
Prints markdown: one table per dataset, then grid / super-ego candidate ratios, super-ego /
cpu-grid time ratios and 1 -> 2 thread speedups. |R| is ordered pairs i != j (N x S); index
includes super-ego's prepare stage (dimension reordering).
"""
import json
import math
import sys


if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

NAMES = {"expo:2:1000000": "Expo2D 1M", "expo:4:1000000": "Expo4D 1M",
         "uniform:4:1000000": "Uniform4D 1M", "expo:8:1000000": "Expo8D 1M"}
ENGINES = ["cpu-grid", "super-ego", "cpu-rtree"]


def load(paths):
    groups = {}
    for path in paths:
        mine = {}
        for line in open(path):
            r = json.loads(line)
            if "error" in r:
                continue
            key = (r["dataset"], float(r["eps"]), r["engine"], r["threads"])
            mine.setdefault(key, []).append(r)
        groups.update(mine)
    return {k: sorted(v, key=lambda r: r["seconds"])[len(v) // 2] | {"runs": len(v)}
            for k, v in groups.items()}


def sig(x, digits=3):
    return f"{x:.{digits}g}"


def main():
    med = load(sys.argv[1:])
    datasets = [d for d in NAMES if any(k[0] == d for k in med)]
    for d in datasets:
        print(f"\n**{NAMES[d]}** (`{d}`)\n")
        print("| eps | S | \\|R\\| | engine | threads | seconds | index | plan | execute | runs |"
              " candidates | candidates/s | cores used |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for eps in sorted({k[1] for k in med if k[0] == d}):
            for e in ENGINES:
                for t in (1, 2):
                    r = med.get((d, eps, e, t))
                    if r is None:
                        continue
                    cores = r.get("cores_used")
                    st = r.get("stages", {})
                    index = st.get("prepare", 0.0) + st.get("index", 0.0)
                    plan = f'{st["plan"]:.3g}' if "plan" in st else "–"
                    print(f'| {eps:g} | {r["selectivity"]:.2f} | {r["pairs"]:,} | {e} | {t} |'
                          f' {sig(r["seconds"])} | {index:.3g} | {plan} | {st.get("execute", 0.0):.3g} |'
                          f' {r["runs"]} | {r["candidates"]:.3e} |'
                          f' {r["candidates_per_second"]:.3g} |'
                          f' {"–" if cores is None else f"{cores:.2f}"} |')
    print("\n| dataset | S | candidates grid / super-ego | time super-ego / cpu-grid, 1 t |"
          " 2 t | cpu-grid 1 -> 2 t | super-ego 1 -> 2 t | cpu-rtree / cpu-grid, 1 t |")
    print("|---|---|---|---|---|---|---|---|")
    for d in datasets:
        for eps in sorted({k[1] for k in med if k[0] == d}):
            g1, g2 = med.get((d, eps, "cpu-grid", 1)), med.get((d, eps, "cpu-grid", 2))
            s1, s2 = med.get((d, eps, "super-ego", 1)), med.get((d, eps, "super-ego", 2))
            rt = med.get((d, eps, "cpu-rtree", 1))
            def ratio(a, b, key, fmt):
                return fmt.format(a[key] / b[key]) if a and b else "–"
            near = 10 ** round(math.log10(g1["selectivity"]))
            print(f"| {NAMES[d]} | ≈{near} | "
                  + " | ".join([ratio(g1, s1, "candidates", "{:.2f}"),
                                ratio(s1, g1, "seconds", "{:.2f}"),
                                ratio(s2, g2, "seconds", "{:.2f}"),
                                ratio(g1, g2, "seconds", "{:.2f}x"),
                                ratio(s1, s2, "seconds", "{:.2f}x"),
                                ratio(rt, g1, "seconds", "{:.1f}")]) + " |")
    # Every engine must report the same |R| for a (dataset, eps).
    for d, eps in sorted({(k[0], k[1]) for k in med}):
        counts = {(k[2], k[3]): r["pairs"] for k, r in med.items() if k[:2] == (d, eps)}
        if len(set(counts.values())) != 1:
            print(f"\nDISAGREEMENT on {d} eps {eps}: {counts}")


if __name__ == "__main__":
    main()
