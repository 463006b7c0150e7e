#!/usr/bin/env python3
"""How far ted-join's kernels would have to go for issue 7's target "ted-join at least 1.3x faster
than gds-join on every d <= 8 case at the two larger selectivities", from the stage times the
engines report.

Both engines run the same pipeline (index, row plan, table layout, copies, assembly); only their
counting and filling kernels differ. So, per case:

  measured      gds-join's end-to-end median over ted-join's
  kernels       gds-join's count + fill kernel seconds over ted-join's
  bound now     the speed-up if ted-join's kernels took no time at all and the rest of its join
                stayed as measured: gds / (ted - ted's kernels). Below 1.3 no kernel can meet
                the target on this pipeline.
  ted kernels   what ted-join's kernels would have to shrink to (ms), and by what factor, for
                1.3x on this pipeline
  bound ideal   the speed-up on an ideal pipeline that costs only the index and the faulting
                in of the fresh host table, while gds-join's kernels stay exposed in full and
                ted-join's take no time: (index + gds kernels + fault) / (index + fault).
                The fault time is the marginal cost of the `rows` stage per table byte (where
                the first touch of the table happens), fitted over every record given.

usage: ratio_bound.py RESULTS.jsonl [RESULTS.jsonl ...]
Later files override earlier ones for the same (dataset, eps, engine). Standard library only.
"""
import json
import sys


if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

TARGET = 1.3
ENGINES = ("gds-join", "ted-join")


def load(paths):
    records = {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if r.get("engine") not in ENGINES or r.get("config", r["engine"]) != r["engine"]:
                continue
            if r["d"] > 8:
                continue
            name = r["dataset"].rsplit("/", 1)[-1].removesuffix(".npy")
            records[(name, float(r["eps"]), r["engine"])] = r
    return records


def kernel_seconds(r):
    notes = r.get("notes", {})
    return float(notes.get("count kernel seconds", 0)) + float(notes.get("fill kernels seconds", 0))


def last_run_seconds(r):
    """The stages come from the last join of a --repeat run, so compare them with its time."""
    runs = r.get("run_seconds") or [r["seconds"]]
    return runs[-1]


def table_bytes(r):
    return 4.0 * r["pairs_with_self"]


def fault_seconds_per_byte(records):
    """Least-squares slope of the `rows` stage against the table's bytes."""
    xs = [table_bytes(r) for r in records.values()]
    ys = [r["stages"]["rows"] for r in records.values()]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / sxx


def main():
    records = load(sys.argv[1:])
    per_byte = fault_seconds_per_byte(records)
    print(f"table faulting, marginal: {per_byte * 1e12:.1f} ms per GB "
          f"({1 / per_byte / 1e9:.0f} GB/s), fitted over {len(records)} records\n")
    cases = {}
    for (name, eps, _), r in records.items():
        cases.setdefault(name, set()).add(eps)
    print("| data | eps | S | gds-join (s) | ted-join (s) | measured | kernels, gds / ted (ms) | "
          "bound now | ted kernels for 1.3x (ms) | bound ideal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in sorted(cases, key=lambda n: (n.startswith("Uniform"), n)):
        for eps in sorted(cases[name])[-2:]:
            gds, ted = records.get((name, eps, "gds-join")), records.get((name, eps, "ted-join"))
            if gds is None or ted is None:
                continue
            g, t = gds["seconds"], ted["seconds"]
            kg, kt = kernel_seconds(gds), kernel_seconds(ted)
            # ted-join's join without its kernels, scaled from the last run to the median.
            rest = t * (1 - kt / last_run_seconds(ted))
            bound_now = g / rest
            allowed = g / TARGET - rest
            if allowed <= 0:
                need = "none can"
            else:
                need = f"{allowed * 1e3:.0f} ({kt / allowed:.2f}x less)" if allowed < kt else "met"
            index = min(gds["stages"]["index"], ted["stages"]["index"])
            fault = per_byte * table_bytes(ted)
            ideal = (index + kg + fault) / (index + fault)
            print(f"| {name} | {eps:g} | {ted['selectivity']:.0f} | {g:.3f} | {t:.3f} | {g / t:.2f}x | "
                  f"{kg * 1e3:.0f} / {kt * 1e3:.0f} | {bound_now:.3f}x | {need} | {ideal:.3f}x |")


if __name__ == "__main__":
    main()
