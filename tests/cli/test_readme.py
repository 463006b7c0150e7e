#!/usr/bin/env python3
"""Every command of the README's ```sh blocks runs as written and exits 0, so the examples
cannot rot.

usage: test_readme.py README.md PATH/TO/epsjoin   (standard library only; run by CTest)

The commands run in order, each with bash in one temporary folder where build/epsjoin is the
program under test (the README makes its own inputs first). Skipped: the set-up scripts
(scripts/... and pip install: they install and build; scripts/run-tests.sh installs and tests
the Python package itself) and a command naming an engine that cannot run here
(`epsjoin info` says which), so a machine without a GPU skips the GPU examples.
"""
import os
import re
import subprocess
import sys
import tempfile
import time


def sh_commands(readme_text):
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", readme_text, flags=re.S | re.M):
        pending = ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            command = (pending + line).strip()
            pending = ""
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def engines_unavailable_here(binary):
    info = subprocess.run([binary, "info"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in info.splitlines() if "[unavailable" in line}


def main():
    readme, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    with open(readme) as f:
        commands = sh_commands(f.read())
    if not commands:
        print(f"FAIL: no ```sh commands found in {readme}")
        return 1
    unavailable = engines_unavailable_here(binary)
    failures = ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "build"))
        os.symlink(binary, os.path.join(tmp, "build", "epsjoin"))
        for command in commands:
            engine = re.search(r"--engine[ =](\S+)", command)
            if command.startswith(("scripts/", "pip install")):
                print(f"skip (set-up script): {command}")
                continue
            if engine and engine.group(1) in unavailable:
                print(f"skip (engine {engine.group(1)} cannot run here): {command}")
                continue
            start = time.monotonic()
            proc = subprocess.run(["bash", "-c", command], cwd=tmp, capture_output=True,
                                  text=True, timeout=300)
            ran += 1
            took = time.monotonic() - start
            if proc.returncode != 0:
                failures += 1
                print(f"FAIL ({proc.returncode}, {took:.1f} s): {command}\n{proc.stdout}{proc.stderr}")
            else:
                print(f"ok ({took:.1f} s): {command}")
    print(f"{ran - failures} of {ran} README commands ran as written")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
