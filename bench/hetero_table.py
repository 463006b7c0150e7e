#!/usr/bin/env python3
"""Tabulates issue 6's experiment (dissertation fig. 4.10/4.11) from run_scenarios.py output.

usage: hetero_table.py RESULTS.jsonl [RESULTS.jsonl ...]

For each dataset and eps: the time of hegjoin under each partition strategy (static ones without
their calibration stage, which a user pays once per machine and data set: hegjoin keeps it), of its GPU side alone
(gpu_fraction=1), its CPU side alone (gpu_fraction=0, 16 workers), lbjoin, super-ego and
cpu-grid; the upper bound of the hybrid, 1 / (1 / t_GPU side + 1 / t_CPU side) (the two sides'
throughputs added: their candidates are the same), the ratio of that bound to each strategy's
time, the load-imbalance ratio k = |t_GPU - t_CPU| / T of the counting phase, and each
strategy's time over the faster of its two sides, and over lbjoin's. Medians over the runs of
each configuration.
Standard library only.
"""
import json
import statistics
import sys
from collections import defaultdict

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

STRATEGIES = [("dynamic", "hegjoin"),
              ("static-queries", "hegjoin:partition=static-queries"),
              ("static-candidates", "hegjoin:partition=static-candidates")]
GPU_SIDE = "hegjoin:partition=static-candidates,gpu_fraction=1"
CPU_SIDE = "hegjoin:partition=static-candidates,gpu_fraction=0,cpu_threads=16"


def seconds(run):
    # The static strategies' calibration is a one-off per data set, not part of the join.
    return run["seconds"] - run.get("stages", {}).get("calibration", 0.0)


def main():
    runs = defaultdict(list)
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if "error" in r:
                    continue
                name = r["dataset"].rsplit("/", 1)[-1].removesuffix(".npy")
                runs[(name, r["eps"], r["config"])].append(r)

    def median_run(key):
        rs = runs.get(key)
        if not rs:
            return None
        return sorted(rs, key=seconds)[len(rs) // 2]

    cases = sorted({(k[0], k[1]) for k in runs}, key=lambda c: (c[0], c[1]))
    head = ["data", "eps", "S", "lbjoin", "GPU side", "CPU side", "super-ego", "cpu-grid"]
    for s, _ in STRATEGIES:
        head += [s, "/bound", "k", "/faster side"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    summary = defaultdict(list)
    against_lbjoin = defaultdict(list)
    for name, eps in cases:
        def t(config):
            r = median_run((name, eps, config))
            return seconds(r) if r else None
        any_run = next(r for k, rs in runs.items() if k[:2] == (name, eps) for r in rs)
        g, c = t(GPU_SIDE), t(CPU_SIDE)
        bound = 1 / (1 / g + 1 / c) if g and c else None
        cells = [name, f"{eps:g}", f'{any_run["selectivity"]:.0f}']
        for x in (t("lbjoin"), g, c, t("super-ego"), t("cpu-grid")):
            cells.append(f"{x:.3f}" if x else "")
        for s, config in STRATEGIES:
            r = median_run((name, eps, config))
            if not r:
                cells += ["", "", "", ""]
                continue
            x = seconds(r)
            k = float(r.get("notes", {}).get("load imbalance", "nan"))
            ratio = bound / x if bound else float("nan")
            over = x / min(g, c) if g and c else float("nan")
            summary[s].append((ratio, k, over))
            if t("lbjoin"):
                against_lbjoin[s].append(x / t("lbjoin"))
            cells += [f"{x:.3f}", f"{ratio:.2f}", f"{k:.2f}", f"{over:.2f}"]
        print("| " + " | ".join(cells) + " |")
    print()
    for s, _ in STRATEGIES:
        v = [x for x in summary[s] if x[0] == x[0]]  # cases with both sides measured
        if v:
            print(f"{s}: mean ratio to the bound {statistics.mean(x[0] for x in v):.3f}, "
                  f"mean k {statistics.mean(x[1] for x in v):.3f}, worst time over the faster "
                  f"side {max(x[2] for x in v):.3f}, best {min(x[2] for x in v):.3f} "
                  f"({len(v)} cases)")
        if against_lbjoin[s]:
            w = against_lbjoin[s]
            print(f"{s}: time over lbjoin's {min(w):.2f}-{max(w):.2f}, median "
                  f"{statistics.median(w):.2f} ({len(w)} cases)")


if __name__ == "__main__":
    main()
