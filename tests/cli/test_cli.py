#!/usr/bin/env python3
"""End-to-end tests of the epsjoin program: errors, output formats, JSON summary.

usage: test_cli.py PATH/TO/epsjoin   (standard library only; run by CTest)
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

BIN = None


def run(*args, ok=True):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    if ok and proc.returncode != 0:
        raise AssertionError(f"epsjoin {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def read_npy_pairs(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", "bad npy magic"
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode()
    assert "'<u4'" in header and "(" in header
    rows = int(header.split("'shape': (")[1].split(",")[0])
    body = data[10 + header_len:]
    assert len(body) == rows * 8, (len(body), rows)
    values = struct.unpack(f"<{rows * 2}I", body)
    return sorted(zip(values[0::2], values[1::2]))


def read_csr(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"EPSJCSR1"
    n, nnz = struct.unpack("<QQ", data[8:24])
    offsets = struct.unpack(f"<{n + 1}Q", data[24:24 + 8 * (n + 1)])
    start = 24 + 8 * (n + 1)
    neighbors = struct.unpack(f"<{nnz}I", data[start:start + 4 * nnz])
    return [(i, neighbors[k]) for i in range(n) for k in range(offsets[i], offsets[i + 1])]


def significant_digits(number):
    mantissa = number.split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return len(mantissa)


class Errors(unittest.TestCase):
    def assert_one_line_error(self, proc, *fragments):
        self.assertNotEqual(proc.returncode, 0)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_bad_eps(self):
        for eps in ["0", "-1", "nan", "inf", "abc", ""]:
            with self.subTest(eps=eps):
                p = run("join", "--generate", "uniform:2:10", "--eps", eps, ok=False)
                self.assert_one_line_error(p, "eps")

    def test_missing_eps_and_input(self):
        self.assert_one_line_error(run("join", "--generate", "uniform:2:10", ok=False), "--eps")
        self.assert_one_line_error(run("join", "--eps", "0.1", ok=False), "--input")

    def test_unknown_engine(self):
        p = run("join", "--generate", "uniform:2:10", "--eps", "0.1", "--engine", "nope", ok=False)
        self.assertEqual(p.returncode, 2)
        self.assert_one_line_error(p, "unknown engine 'nope'", "brute-cpu")

    def test_missing_file(self):
        p = run("join", "--input", "/nonexistent/points.csv", "--eps", "0.1", ok=False)
        self.assert_one_line_error(p, "/nonexistent/points.csv")

    def test_unknown_option_and_param(self):
        self.assert_one_line_error(run("join", "--bogus", ok=False), "--bogus")
        p = run("join", "--generate", "uniform:2:10", "--eps", "0.1", "--engine", "brute-cpu",
                "--param", "nope=1", ok=False)
        self.assert_one_line_error(p, "nope")

    def test_every_usage_error_exits_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "points.f64")
            with open(raw, "wb") as f:
                f.write(struct.pack("<6d", 0, 0, 0, 1, 1, 1))
            gen = ["--generate", "uniform:2:10", "--eps", "0.1"]
            cases = [
                (["join", "--input", raw, "--eps", "0.1"], ["--dim D is needed", raw]),
                (["join", "--input", raw, "--dim", "0", "--eps", "0.1"], ["--dim must be at least 1"]),
                (["join", *gen, "--repeat", "0"], ["--repeat must be at least 1"]),
                (["join", "--generate", "unif:2:10", "--eps", "0.1"], ["--generate", "unif"]),
                (["join", *gen, "--generate-queries", "uniform:x:3"], ["--generate-queries"]),
                (["join", "--generate", "uniform:2:10", "--paper", "--eps", "0.1"], ["paper"]),
                (["join", *gen, "--engine", "foo"], ["unknown engine 'foo'", "cpu-grid"]),
                (["join", *gen, "--output", ""], ["--output needs a file name"]),
                (["join", *gen, "--threads", "100000"], ["--threads 100000", "at most"]),
                (["join", *gen, "--threads", "-1"], ["--threads"]),
                (["join", *gen, "--bogus"], ["--bogus"]),
                (["join", *gen, "--devices-split", "halves"], ["--devices-split", "halves"]),
                (["join", *gen, "--devices", "most"], ["--devices", "'auto', 'all'", "most"]),
                (["join", *gen, "--devices", "0,0"], ["device 0 twice"]),
                (["join", *gen, "--engine", "cpu-grid", "--param", "nope=1"], ["nope"]),
                (["join", *gen, "--engine", "cpu-grid", "--param", "pattern=zigzag"], ["zigzag"]),
                (["join", "--generate", "uniform:2:10"], ["--eps"]),
                (["gen", "uniform:2:10", "--output", ""], ["--output needs a file name"]),
                (["gen", "bad", "--output", os.path.join(tmp, "x.csv")], ["bad generator spec"]),
                (["nope"], ["unknown command"]),
            ]
            for args, fragments in cases:
                with self.subTest(args=args):
                    p = run(*args, ok=False)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assert_one_line_error(p, *fragments)
                    self.assertNotIn("::", p.stderr)  # the CLI's words, not the library's names

    def test_data_errors_exit_1(self):
        with tempfile.TemporaryDirectory() as tmp:
            empty = os.path.join(tmp, "empty.csv")
            open(empty, "w").close()
            cases = [
                (["join", "--input", empty, "--eps", "0.1"], ["empty"]),
                (["join", "--generate", "uniform:2:0", "--eps", "0.1"], ["uniform:2:0", "no points"]),
                (["join", "--generate", "uniform:2:5", "--generate-queries", "uniform:2:0",
                  "--eps", "0.1"], ["--generate-queries uniform:2:0", "no points"]),
                (["gen", "uniform:2:0", "--output", os.path.join(tmp, "x.csv")], ["no points"]),
                (["join", "--input", os.path.join(tmp, "missing.csv"), "--eps", "0.1"],
                 ["missing.csv"]),
            ]
            for args, fragments in cases:
                with self.subTest(args=args):
                    p = run(*args, ok=False)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assert_one_line_error(p, *fragments)
            self.assertFalse(os.path.exists(os.path.join(tmp, "x.csv")))

    def test_queries_dimension_mismatch_names_the_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            one, three = os.path.join(tmp, "one.csv"), os.path.join(tmp, "three.csv")
            with open(one, "w") as f:
                f.write("0\n1\n")
            with open(three, "w") as f:
                f.write("0 0 0\n1 1 1\n")
            p = run("join", "--input", three, "--queries", one, "--eps", "0.1", ok=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assert_one_line_error(p, one, three, "1 dimension but", "3 dimensions")
            self.assertNotIn("1 dimensions", p.stderr)

    def test_unavailable_engine_names_the_engines_that_run(self):
        info = run("info").stdout
        self.assertNotIn("insufficient", info)
        if "CUDA devices: none" in info and "compiled in, architectures" in info:
            # A CUDA build on a machine without a GPU says so in plain words.
            self.assertIn("no CUDA device", info)
        for line in info.splitlines():
            if "[unavailable" in line:
                name = line.split()[0]
                p = run("join", "--generate", "uniform:2:10", "--eps", "0.1", "--engine", name,
                        ok=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assert_one_line_error(p, name, "engines that can run here", "cpu-grid")
                self.assertNotIn("insufficient", p.stderr)

    def test_gpu_engine_unavailable_here(self):
        info = run("info").stdout
        for line in info.splitlines():
            if "[unavailable" in line:
                name = line.split()[0]
                p = run("join", "--generate", "uniform:2:10", "--eps", "0.1", "--engine", name,
                        ok=False)
                self.assert_one_line_error(p, name, "cannot run here")

    def test_devices_auto_and_all(self):
        # 'auto' (the default) is never an error: without a visible GPU the join runs as before.
        gen = ["--generate", "uniform:2:2000", "--eps", "0.05", "--engine", "cpu-grid", "--json"]
        pairs = lambda *extra: json.loads(run("join", *gen, *extra).stdout)["pairs"]
        self.assertGreater(pairs(), 0)
        self.assertEqual(pairs("--devices", "auto"), pairs())
        if "CUDA devices: none" in run("info").stdout:
            p = run("join", *gen, "--devices", "all", ok=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assert_one_line_error(p, "--devices all", "no CUDA device")


class Outputs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def test_json_fields_and_formats_agree(self):
        spec, eps = "uniform:3:1500", "0.08"
        summary = json.loads(run("join", "--generate", spec, "--eps", eps, "--json").stdout)
        for field in ["engine", "n", "d", "eps", "pairs", "selectivity", "candidates", "seconds"]:
            self.assertIn(field, summary)
        self.assertEqual((summary["n"], summary["d"]), (1500, 3))
        self.assertNotEqual(summary["engine"], "auto")
        self.assertGreater(summary["pairs"], 0)
        self.assertAlmostEqual(summary["selectivity"], summary["pairs"] / 1500)

        run("join", "--generate", spec, "--eps", eps, "--output", self.path("p.npy"), "--quiet")
        run("join", "--generate", spec, "--eps", eps, "--output", self.path("p.csv"), "--quiet")
        run("join", "--generate", spec, "--eps", eps, "--output", self.path("t.csr"), "--quiet")
        run("join", "--generate", spec, "--eps", eps, "--format", "count", "--output",
            self.path("c.txt"), "--quiet")
        npy = read_npy_pairs(self.path("p.npy"))
        with open(self.path("p.csv")) as f:
            csv = sorted(tuple(map(int, line.split(","))) for line in f)
        csr = read_csr(self.path("t.csr"))
        with open(self.path("c.txt")) as f:
            counts = [int(line) for line in f]
        self.assertEqual(npy, csv)
        self.assertTrue(all(i < j for i, j in npy))
        self.assertEqual(2 * len(npy), summary["pairs"])
        self.assertEqual(sorted(csr), sorted(npy + [(j, i) for i, j in npy]))
        self.assertEqual(sum(counts), summary["pairs"])
        self.assertEqual(len(counts), 1500)

    def test_generated_file_equals_generated_spec(self):
        for fmt in ["text", "npy", "f64"]:
            with self.subTest(fmt=fmt):
                out = self.path("pts." + ("csv" if fmt == "text" else fmt))
                run("gen", "expo:2:3000", "--output", out)
                extra = ["--dim", "2"] if fmt == "f64" else []
                a = json.loads(run("join", "--input", out, *extra, "--eps", "0.01", "--json").stdout)
                b = json.loads(run("join", "--generate", "expo:2:3000", "--eps", "0.01",
                                   "--json").stdout)
                self.assertEqual(a["pairs"], b["pairs"])

    def test_include_self_and_cross_join(self):
        base = ["--generate", "uniform:2:800", "--eps", "0.05", "--json"]
        plain = json.loads(run("join", *base).stdout)
        with_self = json.loads(run("join", *base, "--include-self").stdout)
        self.assertEqual(with_self["pairs_with_self"], plain["pairs"] + 800)
        cross = json.loads(run("join", *base, "--generate-queries", "uniform:2:300:seed=5").stdout)
        self.assertFalse(cross["self_join"])
        self.assertEqual(cross["n_queries"], 300)

    def test_info_lists_parameters_by_kind(self):
        info = run("info").stdout
        self.assertIn("engine parameters (--param KEY=VALUE):", info)
        section = info.split("engine parameters")[1]
        grid = section.split("\n  cpu-grid\n")[1].split("\n  ")[0]
        self.assertRegex(grid, r"max_indexed_dims +tuning +0 to 8")
        kinds = [line.split()[1] for line in section.split("\n  cpu-grid\n")[1].splitlines()
                 if line.startswith("    ")][:9]
        self.assertEqual(kinds, sorted(kinds, key=["tuning", "ablation", "debug"].index))
        p = run("join", "--generate", "uniform:2:10", "--eps", "0.1", "--engine", "cpu-grid",
                "--param", "nope=1", ok=False)
        self.assertIn("it takes: tuning: max_indexed_dims", p.stderr)

    def test_numbers_are_readable(self):
        args = ["join", "--generate", "uniform:2:3000", "--eps", "0.1", "--engine", "cpu-grid"]
        text = run(*args).stdout
        self.assertIn("eps = 0.1,", text)
        raw = run(*args, "--json").stdout
        self.assertIn('"eps":0.1,', raw)
        # No number with more digits than it needs to read back (Python's repr is the shortest
        # round-trip form), in the summary, the engine's notes or the JSON.
        for out in [text, raw]:
            for token in re.findall(r"\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+", out):
                self.assertLessEqual(significant_digits(token),
                                     significant_digits(repr(float(token))), (token, out))

        def no_constants(name):
            raise AssertionError(f"not JSON: {name}")
        json.loads(raw, parse_constant=no_constants)

    def test_help_without_options_has_no_options_section(self):
        text = run("info", "--help").stdout
        self.assertNotIn("options:", text)
        self.assertTrue(text.strip())

    def test_help_documents_every_flag(self):
        overview = run("--help").stdout
        for command in ["join", "gen", "info"]:
            self.assertIn(command, overview)
        text = run("join", "--help").stdout
        for flag in ["--input", "--generate", "--eps", "--engine", "--output", "--format",
                     "--threads", "--json", "--queries", "--dim", "--precision"]:
            self.assertIn(flag, text)


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
