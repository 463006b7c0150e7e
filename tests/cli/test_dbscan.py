#!/usr/bin/env python3
"""`epsjoin dbscan` end to end: its errors, its files and JSON (standard library only), and its
clusterings against scikit-learn's DBSCAN on generated and real data (skipped when scikit-learn
cannot be imported; `pip install scikit-learn` to run them).

usage: test_dbscan.py PATH/TO/epsjoin   (run by CTest)
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    from sklearn.cluster import DBSCAN
    from sklearn.neighbors import KDTree
    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False

BIN = None
HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.environ.get("EPSJOIN_DATA_DIR") or os.path.join(HERE, "..", "..", "..", "shared", "data")


def run(*args, ok=True):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    if ok and proc.returncode != 0:
        raise AssertionError(f"epsjoin {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def read_npy_labels(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", "bad npy magic"
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode()
    assert "'<i8'" in header, header
    n = int(header.split("'shape': (")[1].split(",")[0])
    assert header.split("'shape': (")[1].startswith(f"{n},)"), header  # one dimension
    body = data[10 + header_len:]
    assert len(body) == 8 * n, (len(body), n)
    return list(struct.unpack(f"<{n}q", body))


class Command(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def assert_usage_error(self, proc, fragment):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(fragment, lines[0])

    def test_help_documents_every_flag(self):
        text = run("dbscan", "--help").stdout
        for flag in ["--input", "--generate", "--eps", "--min-samples", "--engine", "--param",
                     "--precision", "--merge", "--threads", "--memory-limit", "--output", "--json",
                     "--quiet", "--sample-weight", "--repeat"]:
            self.assertIn(flag, text)
        self.assertIn("dbscan", run("--help", ok=False).stdout)

    def test_usage_errors(self):
        gen = ["--generate", "uniform:2:50"]
        self.assert_usage_error(run("dbscan", *gen, "--min-samples", "3", ok=False), "--eps")
        self.assert_usage_error(run("dbscan", *gen, "--eps", "0.1", ok=False), "--min-samples")
        self.assert_usage_error(run("dbscan", *gen, "--eps", "0", "--min-samples", "3", ok=False),
                                "--eps")
        self.assert_usage_error(run("dbscan", *gen, "--eps", "0.1", "--min-samples", "0", ok=False),
                                "--min-samples")
        self.assert_usage_error(run("dbscan", "--eps", "0.1", "--min-samples", "2", ok=False),
                                "--input")
        self.assert_usage_error(
            run("dbscan", *gen, "--eps", "0.1", "--min-samples", "2", "--merge", "gpu", ok=False),
            "--merge")
        self.assert_usage_error(
            run("dbscan", *gen, "--eps", "0.1", "--min-samples", "2", "--repeat", "0", ok=False),
            "--repeat")
        p = run("dbscan", *gen, "--eps", "0.1", "--min-samples", "2", "--engine", "nope", ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("unknown engine 'nope'", p.stderr)

    def test_labels_file_and_json_agree(self):
        out = self.path("labels.npy")
        p = run("dbscan", "--generate", "gauss:2:3000:seed=5", "--eps", "0.01", "--min-samples",
                "5", "--output", out, "--json")
        summary = json.loads(p.stdout)
        labels = read_npy_labels(out)
        self.assertEqual(len(labels), 3000)
        self.assertEqual(summary["n"], 3000)
        self.assertEqual(summary["clusters"], max(labels) + 1)
        self.assertEqual(summary["noise"], labels.count(-1))
        self.assertEqual(summary["core"] + summary["border"] + summary["noise"], 3000)
        self.assertEqual(sorted(summary["stages"]), ["count", "label", "merge"])
        # auto on a machine without a GPU is cpu-grid, which clusters on its cells in 2-D.
        self.assertIn(summary["merge"], ["cells", "device"])
        host = json.loads(run("dbscan", "--generate", "gauss:2:3000:seed=5", "--eps", "0.01",
                              "--min-samples", "5", "--merge", "host", "--json").stdout)
        self.assertEqual(host["merge"], "host")
        self.assertEqual(host["clusters"], summary["clusters"])
        for key in ["engine", "eps", "min_samples", "pairs", "seconds", "total_seconds"]:
            self.assertIn(key, summary)
        # Clusters are numbered 0, 1, ... (in the order of their first core point, which the
        # oracle tests check: the labels alone do not tell core from border).
        self.assertEqual(sorted(set(labels) - {-1}), list(range(summary["clusters"])))
        # Text labels: the same values, one a line.
        text = self.path("labels.txt")
        run("dbscan", "--generate", "gauss:2:3000:seed=5", "--eps", "0.01", "--min-samples", "5",
            "--output", text, "--quiet")
        with open(text) as f:
            self.assertEqual([int(line) for line in f], labels)

    def test_repeat_reports_the_median_run_and_every_time(self):
        gen = ["--generate", "gauss:2:3000:seed=5", "--eps", "0.01", "--min-samples", "5"]
        once_file, thrice_file = self.path("once.npy"), self.path("thrice.npy")
        once = json.loads(run("dbscan", *gen, "--output", once_file, "--json").stdout)
        for merge in ["device", "host"]:
            thrice = json.loads(run("dbscan", *gen, "--merge", merge, "--repeat", "3", "--output",
                                    thrice_file, "--json").stdout)
            self.assertEqual(len(thrice["run_seconds"]), 3)
            self.assertEqual(sorted(thrice["run_seconds"])[1], thrice["seconds"])
            self.assertEqual(read_npy_labels(thrice_file), read_npy_labels(once_file))
            for key in ["clusters", "core", "border", "noise"]:
                self.assertEqual(thrice[key], once[key])
        self.assertNotIn("run_seconds", once)
        text = run("dbscan", *gen, "--repeat", "2").stdout
        self.assertIn("(median of 2 runs)", text)

    def test_sample_weights_against_an_oracle(self):
        # A lattice with eps = 1 spacing: every neighbour pair is a tie at exactly eps. Weights
        # of every sign, in three files: text, raw .f64 and .npy of shape (N, 1).
        rng = random.Random(7)
        points = [(x, y) for x in range(14) for y in range(9) if rng.random() < 0.7]
        weights = [rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 4.0, -1.0]) for _ in points]
        src, text = self.path("points.csv"), self.path("w.txt")
        with open(src, "w") as f:
            f.writelines(f"{x},{y}\n" for x, y in points)
        with open(text, "w") as f:
            f.writelines(f"{w!r}\n" for w in weights)
        raw = self.path("w.f64")
        with open(raw, "wb") as f:
            f.write(struct.pack(f"<{len(weights)}d", *weights))
        npy = self.path("w.npy")
        header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({len(weights)}, 1), }}"
        header += " " * (63 - (10 + len(header)) % 64) + "\n"
        with open(npy, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
            f.write(struct.pack(f"<{len(weights)}d", *weights))
        for min_samples in (1, 3, 5):
            expected = weighted_dbscan(points, weights, 1.0, min_samples)
            for engine in ("auto", "brute-cpu", "super-ego"):
                for path in (text, raw, npy):
                    out = self.path("labels.txt")
                    run("dbscan", "--input", src, "--eps", "1", "--min-samples", str(min_samples),
                        "--engine", engine, "--sample-weight", path, "--output", out, "--quiet")
                    with open(out) as f:
                        got = [int(line) for line in f]
                    self.assertEqual(got, expected, f"{engine} {path} min_samples {min_samples}")
        gen = ["dbscan", "--input", src, "--eps", "1", "--min-samples", "3"]
        short = self.path("short.txt")
        with open(short, "w") as f:
            f.write("1\n2\n")
        self.assert_usage_error(run(*gen, "--sample-weight", short, ok=False),
                                f"holds 2 weights for {len(points)} points")
        self.assert_usage_error(run(*gen, "--sample-weight=", ok=False),
                                "--sample-weight needs a file name")
        with open(short, "w") as f:
            f.write("1\nnan\n")
        p = run(*gen, "--sample-weight", short, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("short.txt", p.stderr)

    def test_every_cpu_engine_gives_the_same_labels(self):
        gen = ["--generate", "expo:3:4000:seed=9", "--eps", "0.02", "--min-samples", "4"]
        results = []
        # cpu-grid twice: on its cells (the default in 3-D) and with its two joins.
        for engine, merge in [("brute-cpu", "device"), ("cpu-grid", "device"),
                              ("cpu-grid", "host"), ("super-ego", "device"),
                              ("cpu-rtree", "device")]:
            out = self.path(engine + merge + ".npy")
            run("dbscan", *gen, "--engine", engine, "--merge", merge, "--output", out, "--quiet")
            results.append(read_npy_labels(out))
        for other in results[1:]:
            self.assertEqual(other, results[0])


def weighted_dbscan(points, weights, eps, min_samples):
    """scikit-learn's DBSCAN with sample weights, written out: core when the weights within eps
    (squared distance <= eps^2, the point itself included) sum to at least min_samples; core
    points within eps share a cluster, numbered by first core point; a border point takes the
    cluster of its core neighbour of smallest index (the library's documented rule)."""
    n = len(points)
    near = [[j for j in range(n)
             if sum((a - b) ** 2 for a, b in zip(points[i], points[j])) <= eps * eps]
            for i in range(n)]
    core = [sum(weights[j] for j in near[i]) >= min_samples for i in range(n)]
    labels, next_label = [-1] * n, 0
    for i in range(n):
        if core[i] and labels[i] == -1:
            labels[i], stack = next_label, [i]
            while stack:
                for j in near[stack.pop()]:
                    if core[j] and labels[j] == -1:
                        labels[j] = next_label
                        stack.append(j)
            next_label += 1
    for i in range(n):
        if not core[i]:
            core_near = [j for j in near[i] if core[j]]
            if core_near:
                labels[i] = labels[min(core_near)]
    return labels


def neighbours_within(points, eps):
    return KDTree(points).query_radius(points, r=eps)


def clear_eps(points, eps, band):
    """An eps near `eps` with no pair distance within a relative `band` of it, so rounding in
    either program cannot decide a pair differently."""
    tree = KDTree(points)
    for _ in range(50):
        lo = tree.query_radius(points, r=eps * (1 - band), count_only=True).sum()
        hi = tree.query_radius(points, r=eps * (1 + band), count_only=True).sum()
        if lo == hi:
            return eps
        eps *= 1 + 7 * band
    raise AssertionError("no eps clear of the pair distances")


@unittest.skipUnless(HAVE_SKLEARN, "scikit-learn (and numpy) cannot be imported")
class AgainstScikitLearn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def compare(self, points, eps, min_samples, engine="auto", precision="f64"):
        # f32 arithmetic errs by about (d + 4) float32 roundings of the squared distance.
        band = 1e-9 if precision == "f64" else 2e-7 * (points.shape[1] + 4)
        eps = clear_eps(points.astype(np.float64), eps, band)
        src = os.path.join(self.tmp.name, "points.npy")
        out = os.path.join(self.tmp.name, "labels.npy")
        np.save(src, points)
        run("dbscan", "--input", src, "--eps", repr(eps), "--min-samples", str(min_samples),
            "--engine", engine, "--precision", precision, "--output", out, "--quiet")
        ours = np.load(out)
        self.assertEqual(ours.dtype, np.int64)
        ref = DBSCAN(eps=eps, min_samples=min_samples, algorithm="kd_tree", n_jobs=-1).fit(
            points.astype(np.float64))
        core = np.zeros(len(points), dtype=bool)
        core[ref.core_sample_indices_] = True
        neighbours = neighbours_within(points.astype(np.float64), eps)
        our_core = np.array([len(nb) >= min_samples for nb in neighbours])
        np.testing.assert_array_equal(our_core, core)
        # The noise is the same points.
        np.testing.assert_array_equal(ours == -1, ref.labels_ == -1)
        # The clusters, as partitions of the core points, are the same: a bijection of labels.
        pairs = set(zip(ours[core].tolist(), ref.labels_[core].tolist()))
        self.assertEqual(len(pairs), len({a for a, _ in pairs}))
        self.assertEqual(len(pairs), len({b for _, b in pairs}))
        # Every border point is in the cluster of its core neighbour of smallest index.
        for i in np.flatnonzero(~core & (ours >= 0)):
            core_near = [j for j in neighbours[i] if core[j]]
            self.assertTrue(core_near, f"border point {i} has no core point within eps")
            self.assertEqual(ours[i], ours[min(core_near)], f"border point {i}")
        return ours

    def generated(self, spec):
        path = os.path.join(self.tmp.name, "gen.npy")
        run("gen", spec, "--output", path)
        return np.load(path)

    def test_generated_shapes(self):
        for spec, eps, min_samples in [
            ("uniform:2:6000:seed=1", 0.02, 5),
            ("gauss:2:6000:seed=2", 0.005, 10),
            ("expo:2:6000:seed=3", 0.004, 4),
            ("gauss:5:4000:seed=4", 0.03, 6),
            ("uniform:1:3000:seed=5", 0.0005, 3),
            ("expo:8:4000:seed=6", 0.05, 3),
            ("gauss:16:3000:seed=7", 0.06, 5),
        ]:
            points = self.generated(spec)
            for dtype in (np.float64, np.float32):
                # f32 arithmetic only where few pair distances crowd its wider band.
                for precision in ("f64", "f32") if points.shape[1] <= 2 else ("f64",):
                    with self.subTest(spec=spec, dtype=dtype.__name__, precision=precision):
                        self.compare(points.astype(dtype), eps, min_samples, precision=precision)

    def test_real_samples(self):
        cases = [("gshhg_coast_2d_sample", 2, 0.2789, 5), ("osm_coast_2d_sample", 2, 1.482, 20),
                 ("tycho2_radec_2d_sample", 2, 1.746, 8), ("tycho2_xyz_3d_sample", 3, 0.01, 4),
                 ("wesnoth_mfcc_20d_sample", 20, None, 5)]
        found = 0
        for name, d, eps, min_samples in cases:
            path = os.path.join(DATA_DIR, name + ".f64")
            if not os.path.exists(path):
                continue
            found += 1
            points = np.fromfile(path, dtype="<f8").reshape(-1, d)[:20000]
            if eps is None:  # about 10 neighbours a point, from a sample of distances
                eps = float(np.median(KDTree(points).query(points[:200], k=11)[0][:, -1]))
            for engine in ("cpu-grid", "super-ego"):
                with self.subTest(sample=name, engine=engine):
                    self.compare(points, eps, min_samples, engine=engine)
        if found == 0:
            self.skipTest(f"no sample data at {DATA_DIR} (set EPSJOIN_DATA_DIR)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_dbscan.py PATH/TO/epsjoin")
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
