#!/usr/bin/env python3
"""Tabulates issue 7's sweep (dissertation fig. 5.4/5.5): one row per (dataset, eps), the end-to-end
seconds of each engine (median of the runs in the JSON lines), ted-join's speed-up over gds-join and
the fastest engine.

usage: hd_table.py RESULTS.jsonl [RESULTS.jsonl ...]
Standard library only.
"""
import json
import sys
from collections import OrderedDict

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

ENGINES = ["lbjoin", "gds-join", "ted-join", "super-ego"]


def main():
    rows = OrderedDict()
    for path in sys.argv[1:]:
        for line in open(path):
            r = json.loads(line)
            name = r["dataset"].rsplit("/", 1)[-1].removesuffix(".npy")
            key = (name, float(r["eps"]))
            row = rows.setdefault(key, {"S": r.get("selectivity")})
            row[r.get("config", r["engine"])] = r["seconds"]
            row["R"] = r.get("pairs_with_self")
    print("| data | eps | S | " + " | ".join(ENGINES) + " | ted-join / gds-join speed-up | fastest |")
    print("| --- | ---: | ---: | " + " | ".join("---:" for _ in ENGINES) + " | ---: | --- |")
    for (name, eps), row in sorted(rows.items(), key=lambda kv: (kv[0][0].startswith("Uniform"),
                                                                   kv[0][0], kv[0][1])):
        timed = {e: row[e] for e in ENGINES if e in row}
        if not timed:
            continue
        cells = [f"{row[e]:.3f}" if e in row else "" for e in ENGINES]
        ratio = (f"{row['gds-join'] / row['ted-join']:.2f}x"
                 if "gds-join" in row and "ted-join" in row else "")
        best = min(timed, key=timed.get)
        print(f"| {name} | {eps:g} | {row['S']:.0f} | " + " | ".join(cells) + f" | {ratio} | {best} |")


if __name__ == "__main__":
    main()
