#!/usr/bin/env python3
"""Checks that every folder of src/ is one floor: each #include in a .cpp, .hpp, .cu or .cuh file
names the public API (epsjoin/), its own folder, or a folder on a lower floor than its own.

usage: scripts/check-floors.py [SRC_DIR]   (exit 1 and one line per include that points up or
sideways; docs/architecture.md draws the same floors)
"""

import pathlib
import re
import sys

# Bottom first. Folders on one floor do not include each other.
FLOORS = [
    ["base"],
    ["grid", "io", "data", "model"],
    ["results", "gpu/agents"],
    ["core"],
    ["batch", "cluster", "reference", "cpu", "cpu/super_ego", "gpu"],
    ["gpu/row_join", "gpu/brute_gpu", "gpu/gpu_sj"],
    ["tensor/common"],
    ["tensor/fp16"],
    ["gpu/lbjoin", "gpu/gds", "tensor/meta16q", "tensor/meta1q", "tensor/ted"],
    ["hetero"],
]
FLOOR = {folder: level for level, folders in enumerate(FLOORS) for folder in folders}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src").resolve()
    problems = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh"}:
            continue
        folder = path.parent.relative_to(src).as_posix()
        if folder not in FLOOR:
            problems.append(f"{path.relative_to(src)}: folder {folder} has no floor in {__file__}")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or match.group(1).startswith("epsjoin/"):
                continue
            target = pathlib.PurePosixPath(match.group(1)).parent.as_posix()
            if target == folder:
                continue
            if target not in FLOOR:
                problems.append(f"{path.relative_to(src)}:{number}: includes {match.group(1)}, "
                                f"outside every floor")
            elif FLOOR[target] >= FLOOR[folder]:
                problems.append(f"{path.relative_to(src)}:{number}: {folder} (floor "
                                f"{FLOOR[folder] + 1}) includes {match.group(1)} (floor "
                                f"{FLOOR[target] + 1})")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
