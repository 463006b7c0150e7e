#!/usr/bin/env python3
"""`epsjoin optics` end to end: its errors, its CSV and JSON (standard library only), and its
reachability plots against scikit-learn's OPTICS on random points (skipped when scikit-learn
cannot be imported).

usage: test_optics.py PATH/TO/epsjoin   (run by CTest)
"""
import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    from sklearn.cluster import OPTICS, cluster_optics_dbscan
    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False

BIN = None


def run(*args, ok=True):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    if ok and proc.returncode != 0:
        raise AssertionError(f"epsjoin {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


class Command(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write_points(self, rows):
        path = self.path("points.csv")
        with open(path, "w") as f:
            for row in rows:
                f.write(",".join(repr(float(v)) for v in row) + "\n")
        return path

    def read_plot(self, path):
        with open(path) as f:
            rows = list(csv.reader(f))
        return rows[0], [[float(v) if i in (1, 2) else int(v) for i, v in enumerate(r)]
                         for r in rows[1:]]

    def test_errors_name_the_flag(self):
        for args, words in [
            (["--generate", "uniform:2:100", "--min-samples", "5"], "--max-eps"),
            (["--generate", "uniform:2:100", "--max-eps", "0.1"], "--min-samples"),
            (["--generate", "uniform:2:100", "--max-eps", "0", "--min-samples", "5"], "--max-eps"),
            (["--generate", "uniform:2:100", "--max-eps", "inf", "--min-samples", "5"],
             "--max-eps"),
            (["--generate", "uniform:2:100", "--max-eps", "0.1", "--min-samples", "0"],
             "--min-samples"),
            (["--generate", "uniform:2:100", "--max-eps", "0.1", "--min-samples", "3",
              "--cluster-eps", "0.2"], "--cluster-eps"),
            (["--generate", "uniform:2:100", "--max-eps", "0.1", "--min-samples", "3",
              "--metric", "mahalanobis"], "--metric"),
            (["--max-eps", "0.1", "--min-samples", "3"], "--input"),
        ]:
            with self.subTest(args=args):
                proc = run("optics", *args, ok=False)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(words, proc.stderr)

    def test_csv_and_json(self):
        out = self.path("plot.csv")
        proc = run("optics", "--generate", "gauss:2:3000", "--max-eps", "0.05", "--min-samples",
                   "8", "--cluster-eps", "0.02", "--output", out, "--json")
        summary = json.loads(proc.stdout)
        header, rows = self.read_plot(out)
        self.assertEqual(header, ["point", "reachability", "core_distance", "predecessor",
                                  "label"])
        self.assertEqual(sorted(r[0] for r in rows), list(range(3000)))
        self.assertEqual(summary["n"], 3000)
        self.assertEqual(summary["starts"], sum(math.isinf(r[1]) for r in rows))
        self.assertEqual(summary["clusters"], max(r[4] for r in rows) + 1)
        self.assertTrue(math.isinf(rows[0][1]) and rows[0][3] == -1)
        # Each point was reached from one processed before it.
        seen = set()
        for point, _, _, pred, _ in rows:
            self.assertTrue(pred == -1 or pred in seen)
            seen.add(point)
    @unittest.skipUnless(HAVE_SKLEARN, "scikit-learn not importable")
    def test_plots_equal_sklearn(self):
        rng = random.Random(11)
        for n, d, max_eps, min_samples in [(800, 2, 0.1, 5), (600, 3, 0.2, 10), (500, 1, 0.02, 4)]:
            X = np.array([[rng.random() for _ in range(d)] for _ in range(n)])
            X[: n // 4] = X[0] + 0.02 * np.array([[rng.gauss(0, 1) for _ in range(d)]
                                                  for _ in range(n // 4)])
            out = self.path("plot.csv")
            run("optics", "--input", self.write_points(X), "--max-eps", repr(max_eps),
                "--min-samples", str(min_samples), "--cluster-eps", repr(max_eps / 2),
                "--output", out, "--quiet")
            _, rows = self.read_plot(out)
            ref = OPTICS(min_samples=min_samples, max_eps=max_eps).fit(X)
            with self.subTest(n=n, d=d):
                self.assertEqual([r[0] for r in rows], ref.ordering_.tolist())
                self.assertEqual([r[3] for r in rows], ref.predecessor_[ref.ordering_].tolist())
                reach = np.array([r[1] for r in rows])
                np.testing.assert_allclose(reach, ref.reachability_[ref.ordering_], rtol=0,
                                           atol=1e-12)
                labels = cluster_optics_dbscan(
                    reachability=ref.reachability_, core_distances=ref.core_distances_,
                    ordering=ref.ordering_, eps=max_eps / 2)
                self.assertEqual([r[4] for r in rows], labels[ref.ordering_].tolist())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_optics.py PATH/TO/epsjoin")
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
