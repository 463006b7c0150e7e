#!/usr/bin/env python3
"""scripts/check-floors.py on small trees of its own: a tree whose includes point down passes; an
include up a floor, one sideways on a floor, one to a folder with no floor and a file in a
folder with no floor each fail, naming the file and line.

usage: test_check_floors.py PATH/TO/check-floors.py
"""
import pathlib
import subprocess
import sys
import tempfile


def check(script, files):
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src"
        for name, text in files.items():
            path = src / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        done = subprocess.run([sys.executable, script, str(src)], capture_output=True, text=True)
        return done.returncode, done.stdout


def main():
    script = sys.argv[1]
    good = {
        "base/expects.hpp": "#pragma once\n",
        "core/dispatch.cpp": '#include "base/expects.hpp"\n#include "epsjoin/join.hpp"\n'
                             '#include "core/engine.hpp"\n',
        "core/engine.hpp": '#include "results/handover.hpp"\n',
        "results/handover.hpp": '#include "io/readers.hpp"\n',
        "io/readers.hpp": "",
        "gpu/lbjoin/kernels.cuh": '  #  include "gpu/agents/work_fetch.cuh"\n',
        "gpu/agents/work_fetch.cuh": "",
    }
    failures = []
    rc, out = check(script, good)
    if rc != 0 or out:
        failures.append(f"a tree that points down failed: {rc} {out!r}")
    bad = {
        "up": ({"base/expects.hpp": '#include "core/engine.hpp"\n', "core/engine.hpp": ""},
               "base/expects.hpp:1: base (floor 1) includes core/engine.hpp (floor 4)"),
        "sideways": ({"grid/plan.cpp": '\n#include "io/readers.hpp"\n', "io/readers.hpp": ""},
                     "grid/plan.cpp:2: grid (floor 2) includes io/readers.hpp (floor 2)"),
        "kernel up": ({"gpu/agents/a.cuh": '#include "gpu/lbjoin/kernels.cuh"\n',
                       "gpu/lbjoin/kernels.cuh": ""},
                      "gpu/agents/a.cuh:1: gpu/agents (floor 3) includes gpu/lbjoin/kernels.cuh"),
        "unknown target": ({"core/a.cpp": '#include "nowhere/x.hpp"\n'},
                           "core/a.cpp:1: includes nowhere/x.hpp, outside every floor"),
        "unknown folder": ({"newfolder/a.cpp": ""}, "newfolder/a.cpp: folder newfolder has no floor"),
    }
    for name, (files, expected) in bad.items():
        rc, out = check(script, files)
        if rc != 1 or expected not in out:
            failures.append(f"{name}: exit {rc}, output {out!r}, wanted {expected!r}")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
