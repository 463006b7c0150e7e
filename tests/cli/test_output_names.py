#!/usr/bin/env python3
"""Names that do what they say: an output's format follows its extension in any case, a format
the extension contradicts is refused, --sort and --threads 0 are refused where they would be
ignored, `info` gives the true reason a build lacks its GPU engines, and cpu-rtree reports the
one thread it uses.

usage: test_output_names.py PATH/TO/epsjoin   (standard library only; run by CTest)
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

BIN = None
JOIN = ["join", "--generate", "uniform:2:2000:seed=3", "--eps", "0.04", "--threads", "1",
        "--engine", "cpu-grid", "--quiet"]


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, timeout=300)


def npy_array(data):
    """(descr, shape, payload) of a version-1 .npy."""
    assert data[:6] == b"\x93NUMPY", data[:16]
    header_len = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + header_len].decode("latin1"))  # a Python literal by the format
    return header["descr"], header["shape"], data[10 + header_len:]


class Names(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="epsjoin-output-names-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def test_extensions_in_any_case(self):
        for name, kind in [("p.npy", "npy"), ("P.NPY", "npy"), ("p.Csv", "csv"), ("p.TXT", "csv"),
                           ("t.CSR", "csr"), ("t.bin", "csr")]:
            with self.subTest(name=name):
                p = run(*JOIN, "--output", self.path(name))
                self.assertEqual(p.returncode, 0, p.stderr)
                data = self.read(name)
                if kind == "npy":
                    self.assertEqual(npy_array(data)[0], "<u4")
                elif kind == "csv":
                    self.assertRegex(data.decode().splitlines()[0], r"^\d+,\d+$")
                else:
                    self.assertEqual(data[:8], b"EPSJCSR1")
        self.assertEqual(self.read("p.npy"), self.read("P.NPY"))
        self.assertEqual(self.read("p.Csv"), self.read("p.TXT"))

    def test_counts_follow_the_extension(self):
        self.assertEqual(run(*JOIN, "--format", "count", "--output", self.path("c.txt")).returncode, 0)
        text = [int(line) for line in self.read("c.txt").decode().split()]
        for name in ["c.npy", "C.NPY"]:
            p = run(*JOIN, "--format", "count", "--output", self.path(name))
            self.assertEqual(p.returncode, 0, p.stderr)
            descr, shape, payload = npy_array(self.read(name))
            self.assertEqual((descr, shape), ("<u8", (2000,)))
            self.assertEqual(list(struct.unpack(f"<{len(text)}Q", payload)), text)
        self.assertGreater(sum(text), 0)

    def test_a_format_the_extension_contradicts_is_refused(self):
        for fmt, name in [("csr", "x.npy"), ("csr", "x.CSV"), ("pairs", "x.csr"), ("csv", "x.npy"),
                          ("pairs", "x.txt"), ("count", "x.csr")]:
            with self.subTest(format=fmt, name=name):
                p = run(*JOIN, "--format", fmt, "--output", self.path(name))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(b"contradicts", p.stderr)
                self.assertEqual(os.listdir(self.dir), [])

    def test_sort_and_zero_threads_are_refused(self):
        for fmt in ["pairs", "csv", "count"]:
            p = run(*JOIN, "--format", fmt, "--sort", "--output", self.path("r.out"))
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(b"--sort", p.stderr)
        self.assertEqual(run(*JOIN, "--sort", "--output", self.path("t.csr")).returncode, 0)
        for command in [["join", "--generate", "uniform:2:100", "--eps", "0.1"],
                        ["dbscan", "--generate", "uniform:2:100", "--eps", "0.1", "--min-samples", "3"]]:
            p = run(*command, "--threads", "0")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(b"--threads must be at least 1", p.stderr)

    def test_dbscan_labels_npy_in_any_case(self):
        for name in ["l.npy", "L.NPY"]:
            p = run("dbscan", "--generate", "uniform:2:500:seed=1", "--eps", "0.05",
                    "--min-samples", "3", "--output", self.path(name), "--quiet")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(npy_array(self.read(name))[:2], ("<i8", (500,)))

    def test_cpu_rtree_reports_one_thread(self):
        p = run("join", "--generate", "uniform:2:2000", "--eps", "0.05", "--engine", "cpu-rtree",
                "--threads", "2", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["threads"], 1)

    def test_info_gives_the_true_reason_for_missing_gpu_engines(self):
        p = run("info")
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout.decode()
        self.assertNotIn("configure with nvcc present", text)
        if "this build has no CUDA" in text:
            self.assertTrue(any(reason in text for reason in
                                ["-DEPSJOIN_CUDA=OFF", "no CUDA compiler was found", "fuzzing"]),
                            text)


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
