#!/usr/bin/env python3
"""An in-memory result far over the memory limit is refused before the work, on every CPU
engine, with the estimate it was refused on (a sample of the queries counted first); a result
that fits runs, and its summary gives the estimate.

usage: test_refusals.py PATH/TO/epsjoin   (standard library only; run by CTest)
"""
import json
import os
import subprocess
import sys
import unittest

BIN = None
CPU_ENGINES = ["cpu-grid", "super-ego", "cpu-rtree", "brute-cpu"]


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


class EarlyRefusal(unittest.TestCase):
    def test_a_table_far_over_the_limit_is_refused_from_a_sample(self):
        # About 250 neighbours a point: a table of about 190 MiB against a limit of 16 MiB.
        for engine in CPU_ENGINES:
            with self.subTest(engine=engine):
                p = run("join", "--generate", "uniform:2:200000", "--eps", "0.02", "--engine",
                        engine, "--format", "csr", "--memory-limit", "16M")
                self.assertEqual(p.returncode, 1, p.stderr)
                lines = [l for l in p.stderr.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn("the neighbour table needs at least", lines[0])
                self.assertIn("estimated from 4096 sampled queries: about", lines[0])
                self.assertIn("16.0 MiB are allowed (the memory limit)", lines[0])
                self.assertIn("--output FILE", lines[0])

    def test_a_table_that_fits_runs_and_reports_the_estimate(self):
        # About 100 neighbours a point: a table of 38.5 MiB, beside which cpu-grid's own memory
        # (its points, index, counts and row cursors) takes 6 MiB. Far above the table a rough
        # estimate against a sample of the points suffices; under twice the table the sample is
        # counted against all of them.
        def summary(limit):
            p = run("join", "--generate", "uniform:2:100000", "--eps", "0.0178", "--engine",
                    "cpu-grid", "--format", "csr", "--memory-limit", limit, "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            s = json.loads(p.stdout)
            self.assertIn("estimate", s["stages"])
            return s, s["notes"]["result estimate"]

        def number_after(text, words):
            return int(text.split(words)[1].split(" ")[0])

        s, note = summary("128M")
        self.assertIn("4096 sampled queries against 65536 sampled points", note)
        self.assertLess(abs(number_after(note, "about ") - s["pairs"]), 0.1 * s["pairs"])
        s, note = summary("64M")
        self.assertIn("(4096 sampled queries)", note)
        self.assertLess(abs(number_after(note, "about ") - s["pairs"]), 0.1 * s["pairs"])
        self.assertLessEqual(number_after(note, "at least "), s["pairs"])

if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
