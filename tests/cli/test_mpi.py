#!/usr/bin/env python3
"""epsjoin mpi-join against the single-process join, byte for byte, on 1 to 4 ranks.

usage: test_mpi.py PATH/TO/epsjoin MPIEXEC   (standard library only; run by CTest)
MPIEXEC is empty in a build without MPI, and every test then skips. The ranks run oversubscribed
(more ranks than cores) and, as CI does, possibly as root.
"""
import filecmp
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

BIN = None
MPIEXEC = None
HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.environ.get("EPSJOIN_DATA_DIR") or os.path.join(HERE, "..", "..", "..", "shared", "data")
RANKS = (1, 2, 3, 4)

# Open MPI in a container: no cross-memory attach between ranks, and more ranks than cores, where
# a rank that waits must give its core to the rank it waits for (Open MPI yields by itself only
# when it counts more ranks than slots, not at 2 ranks on 2 busy cores).
MPI_ENV = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")


def mpirun(np, *args):
    command = [MPIEXEC, "--oversubscribe", "-np", str(np)]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return subprocess.run(command + [BIN, "mpi-join", *args], capture_output=True, text=True,
                          timeout=300, env=MPI_ENV)


def single(*args):
    proc = subprocess.run([BIN, "join", *args], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"epsjoin join {' '.join(args)} failed: {proc.stderr}")
    return proc


def read_pairs(path):
    """The header bytes and the (i, j) pairs of a (n, 2) <u4 .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    header_len = struct.unpack("<H", data[8:10])[0]
    body = data[10 + header_len:]
    words = struct.unpack(f"<{len(body) // 4}I", body)
    return data[:10 + header_len], list(zip(words[::2], words[1::2]))


def write_f64(path, rows):
    with open(path, "wb") as f:
        for row in rows:
            f.write(struct.pack(f"<{len(row)}d", *row))


class WithoutMpi(unittest.TestCase):
    def test_a_build_without_mpi_says_so(self):
        if MPIEXEC:
            self.skipTest("this build has MPI")
        proc = subprocess.run([BIN, "mpi-join", "--eps", "1"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("this build has no MPI", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1)


class MpiJoin(unittest.TestCase):
    def setUp(self):
        if not MPIEXEC:
            self.skipTest("this build has no MPI (EPSJOIN_MPI, scripts/setup.sh installs Open MPI)")
        self.tmp = tempfile.mkdtemp(prefix="epsjoin-mpi-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run_ranks(self, np, *args):
        proc = mpirun(np, *args)
        self.assertEqual(proc.returncode, 0, f"-np {np} {' '.join(args)}: {proc.stderr}")
        return proc

    def assert_same(self, source, eps, engines=("cpu-grid",), ranks=RANKS, counts=True,
                    extra=(), threads=1):
        """The CSR file (and the counts file) of every rank count equal the single run's."""
        extra = list(extra)
        for engine in engines:
            base = [*source, "--eps", str(eps), "--engine", engine, *extra]
            single(*base, "--sort", "--format", "csr", "--output", self.path("one.csr"), "--quiet")
            if counts:
                single(*base, "--format", "count", "--output", self.path("one.txt"), "--quiet")
            for np in ranks:
                with self.subTest(engine=engine, np=np):
                    self.run_ranks(np, *base, "--threads", str(threads), "--format", "csr", "--output",
                                   self.path("many.csr"), "--quiet")
                    self.assertTrue(filecmp.cmp(self.path("one.csr"), self.path("many.csr"),
                                                shallow=False), f"CSR differs at -np {np}")
                    self.assertFalse(os.path.exists(self.path("many.csr.part")))
                    # Counts by boxes, and by the automatic split (work items where the halo
                    # is large and the engine shares its items).
                    for split in (["--split", "boxes"], []) if counts else ():
                        self.run_ranks(np, *base, *split, "--threads", str(threads), "--format",
                                       "count", "--output", self.path("many.txt"), "--quiet")
                        self.assertTrue(filecmp.cmp(self.path("one.txt"), self.path("many.txt"),
                                                    shallow=False),
                                        f"counts differ at -np {np} {' '.join(split)}")

    def test_uniform(self):
        self.assert_same(["--generate", "uniform:3:3000:seed=5"], 0.08,
                         engines=("cpu-grid", "super-ego"))

    def test_exponential(self):
        self.assert_same(["--generate", "expo:2:4000:seed=9"], 0.01,
                         engines=("cpu-grid", "super-ego"))
        # Several threads a rank: the rows are turned to global ids in blocks, one a thread.
        self.assert_same(["--generate", "expo:3:4000:seed=10"], 0.03, ranks=(1, 2), threads=3)

    def test_coastline_sample(self):
        source = os.path.join(DATA_DIR, "gshhg_coast_2d_sample.f64")
        if not os.path.exists(source):
            self.skipTest(f"no sample data at {DATA_DIR} (set EPSJOIN_DATA_DIR)")
        shutil.copy(source, self.path("coast.f64"))
        self.assert_same(["--input", self.path("coast.f64"), "--dim", "2"], 0.05,
                         engines=("cpu-grid", "super-ego"))

    def test_every_input_format(self):
        # Every rank reads a share: .npy and raw files a range of rows, text a range of lines.
        for name, reader in (("p.npy", "ranges"), ("p.f32", "ranges"), ("p.f64", "ranges"),
                             ("p.csv", "ranges")):
            with self.subTest(name=name):
                path = self.path(name)
                single_gen = subprocess.run([BIN, "gen", "expo:3:2500:seed=12", "--output", path],
                                            capture_output=True, text=True)
                self.assertEqual(single_gen.returncode, 0, single_gen.stderr)
                source = ["--input", path] + (["--dim", "3"] if name[-4:] in (".f32", ".f64")
                                              else [])
                self.assert_same(source, 0.03, ranks=(1, 3), counts=name == "p.npy")
                proc = self.run_ranks(3, *source, "--eps", "0.03", "--json")
                self.assertEqual(json.loads(proc.stdout)["read"], reader)

    def test_generated_points_made_in_shares(self):
        # Each rank draws its own rows of a generated set (every point from its own index), so
        # the result is the single run's; the papers' sequential draws stay with rank 0.
        for spec, extra, reader in (("gauss:3:5000:clusters=5:sigma=0.03:seed=21", [], "ranges"),
                                    ("uniform:1:3000:seed=22", [], "ranges"),
                                    ("expo:2:3000", ["--paper"], "rank 0"),
                                    ("expo:2:3000:paper=1", [], "rank 0")):
            with self.subTest(spec=spec, extra=extra):
                self.assert_same(["--generate", spec, *extra], 0.02, ranks=(1, 2, 4))
                proc = self.run_ranks(3, "--generate", spec, *extra, "--eps", "0.02", "--json")
                self.assertEqual(json.loads(proc.stdout)["read"], reader)
        # A set that cannot be generated fails on every rank, and is reported once.
        for bad, why in (("uniform:2:0", "no points"), ("uniform:2:3e9", "at most 2^31 - 1")):
            proc = mpirun(3, "--generate", bad, "--eps", "0.1")
            self.assertNotEqual(proc.returncode, 0, bad)
            self.assertEqual(proc.stderr.count("epsjoin mpi-join: error:"), 1, proc.stderr)
            self.assertIn(why, proc.stderr)

    def test_text_in_shares_of_lines(self):
        # Lines of very different lengths, comments, CRLF, a byte-order mark, blank lines at the
        # end: every rank parses the lines that start in its share of the bytes.
        lines = ["\ufeff# x, y, z"]
        for k in range(700):
            value = (k * 37 % 101) / 101.0
            row = f"{value},{(k % 13) / 13.0:.17g},  {k / 700.0}"
            lines.append(row if k % 3 else f"  {row}   ")
            if k % 50 == 0:
                lines.append("# a comment")
        path = self.path("mixed.csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write("\r\n".join(lines) + "\r\n\r\n\n")
        self.assert_same(["--input", path], 0.05, ranks=(1, 2, 3, 4))
        proc = self.run_ranks(4, "--input", path, "--eps", "0.05", "--json")
        self.assertEqual(json.loads(proc.stdout)["read"], "ranges")

    def test_text_errors_name_the_whole_files_lines(self):
        def error_of(text, np=4):
            path = self.path("bad.csv")
            with open(path, "w") as f:
                f.write(text)
            one = subprocess.run([BIN, "join", "--input", path, "--eps", "0.1"],
                                 capture_output=True, text=True)
            proc = mpirun(np, "--input", path, "--eps", "0.1")
            self.assertEqual(proc.returncode, 1, proc.stderr)
            errors = [l for l in proc.stderr.splitlines() if "error:" in l]
            self.assertEqual(len(errors), 1, proc.stderr)
            return one.stderr.strip().split("error: ", 1)[-1], errors[0].split("error: ", 1)[-1]

        good = "".join(f"{k},{k + 1}\n" for k in range(60))
        for text in (good[:300] + "1,abc\n" + good[300:],        # a bad value in a late share
                     good[:200] + "\n" + good[200:],              # a blank line between points
                     good + "1,2,3\n",                            # one value too many
                     good[:400] + "7\n" + good[400:],             # one value too few
                     "", "# only a comment\n\n"):                # no points at all
            with self.subTest(text=text[-20:]):
                single_error, mpi_error = error_of(text)
                self.assertEqual(mpi_error, single_error)

    def test_a_bad_value_is_reported_once_by_the_rank_that_read_it(self):
        rows = [(0.1 * k, 0.0) for k in range(40)]
        rows[33] = (float("nan"), 0.0)
        write_f64(self.path("nan.f64"), rows)
        proc = mpirun(4, "--input", self.path("nan.f64"), "--dim", "2", "--eps", "0.1")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        errors = [l for l in proc.stderr.splitlines() if "epsjoin mpi-join: error:" in l]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertIn("point 33", errors[0])

    def test_ties_at_eps_on_a_lattice(self):
        # Integer points at distance exactly eps = 1: the halo must keep the points on its edge.
        write_f64(self.path("lattice.f64"),
                  [(x, y) for x in range(17) for y in range(9)] * 2)  # duplicates too
        self.assert_same(["--input", self.path("lattice.f64"), "--dim", "2"], 1.0,
                         engines=("cpu-grid", "super-ego"))

    def test_include_self_and_f32_precision(self):
        self.assert_same(["--generate", "expo:2:2000:seed=3"], 0.02, ranks=(3,),
                         extra=["--include-self"])
        self.assert_same(["--generate", "uniform:2:2000:seed=4"], 0.03, ranks=(2, 4),
                         extra=["--precision", "f32"], counts=False)

    def test_boxes_thinner_than_eps(self):
        # Four boxes of width about 0.25 and eps 0.4: a halo spans several boxes.
        self.assert_same(["--generate", "uniform:2:1500:seed=6"], 0.4, ranks=(4,))
        proc = self.run_ranks(4, "--generate", "uniform:2:1500:seed=6", "--eps", "0.4",
                              "--threads", "1", "--json", "--split", "boxes")
        report = json.loads(proc.stdout)
        self.assertGreater(report["halo_points"], 1500)

    def test_identical_points_fill_one_box(self):
        write_f64(self.path("same.f64"), [(0.5, 0.25)] * 40 + [(0.5, 0.75)])
        self.assert_same(["--input", self.path("same.f64"), "--dim", "2"], 0.1, ranks=(3,))
        proc = self.run_ranks(3, "--input", self.path("same.f64"), "--dim", "2", "--eps", "0.1",
                              "--json", "--split", "boxes")
        busy = [r for r in json.loads(proc.stdout)["per_rank"] if r["points"] > 0]
        self.assertEqual(len(busy), 1, proc.stdout)  # the cuts coincide: one box holds them all

    def test_fewer_points_than_ranks(self):
        write_f64(self.path("two.f64"), [(0.0, 0.0), (0.5, 0.0)])
        self.assert_same(["--input", self.path("two.f64"), "--dim", "2"], 0.6, ranks=(3, 4))
        write_f64(self.path("one.f64"), [(0.0, 0.0)])
        self.assert_same(["--input", self.path("one.f64"), "--dim", "2"], 0.6, ranks=(4,))

    def test_json_report(self):
        proc = self.run_ranks(3, "--generate", "expo:2:3000:seed=7", "--eps", "0.01",
                              "--threads", "1", "--json", "--split", "boxes")
        report = json.loads(proc.stdout)  # one object, from rank 0 only
        total = json.loads(single("--generate", "expo:2:3000:seed=7", "--eps", "0.01",
                                  "--json").stdout)["pairs"]
        self.assertEqual(report["pairs"], total)
        self.assertEqual(report["ranks"], 3)
        self.assertEqual(len(report["per_rank"]), 3)
        self.assertEqual(sum(r["points"] for r in report["per_rank"]), 3000)
        self.assertEqual(sum(r["pairs"] for r in report["per_rank"]), total)
        for r in report["per_rank"]:
            self.assertGreaterEqual(r["rows_seconds"], 0)
            self.assertGreaterEqual(r["join_seconds"], 0)
            # Each rank's own stages, those of its engine (the CPU grid's here).
            self.assertEqual(r["engine"], "cpu-grid")
            self.assertEqual(set(r["stages"]), {"index", "execute"}, r["stages"])
            self.assertLessEqual(sum(r["stages"].values()), r["join_seconds"] * 1.01 + 1e-6)
        self.assertEqual(report["halo_points"], sum(r["halo"] for r in report["per_rank"]))
        self.assertAlmostEqual(report["halo_fraction"], report["halo_points"] / 3000)
        self.assertEqual(len(report["cuts"]), 2)
        for key in ("imbalance_seconds", "imbalance_pairs", "exchange_seconds"):
            self.assertGreaterEqual(report[key], 0)

    def test_a_join_a_x_b(self):
        # B is cut into boxes with halos; each query goes to the rank of its box, and its row is
        # the single-process join's, byte for byte.
        self.assert_same(["--generate", "expo:2:4000:seed=9", "--generate-queries",
                          "expo:2:1500:seed=77"], 0.01, engines=("cpu-grid", "super-ego"))
        self.assert_same(["--generate", "uniform:3:3000:seed=5", "--generate-queries",
                          "uniform:3:3:seed=6"], 0.08, ranks=(1, 4))  # fewer queries than ranks
        write_f64(self.path("lattice.f64"),
                  [(x * 0.25, y * 0.25) for x in range(30) for y in range(30)])
        write_f64(self.path("lattice_q.f64"),
                  [(x * 0.5, y * 0.25) for x in range(15) for y in range(30)])
        self.assert_same(["--input", self.path("lattice.f64"), "--queries",
                          self.path("lattice_q.f64"), "--dim", "2"], 0.25,
                         ranks=(1, 3))  # ties at exactly eps
        # Both sets binary: every rank reads its rows of each (queries without halo).
        for name, spec in (("b.npy", "expo:3:3000:seed=3"), ("a.npy", "expo:3:700:seed=4"),
                           ("a2.npy", "expo:2:50:seed=5")):
            subprocess.run([BIN, "gen", spec, "--output", self.path(name)], check=True,
                           capture_output=True)
        self.assert_same(["--input", self.path("b.npy"), "--queries", self.path("a.npy")], 0.02,
                         ranks=(1, 2, 4))
        proc = self.run_ranks(2, "--input", self.path("b.npy"), "--queries", self.path("a.npy"),
                              "--eps", "0.02", "--json")
        self.assertEqual(json.loads(proc.stdout)["read"], "ranges")
        proc = mpirun(2, "--input", self.path("b.npy"), "--queries", self.path("a2.npy"),
                      "--eps", "0.02")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("differ in dimension or element type", proc.stderr)
        self.assertEqual(proc.stderr.count("error:"), 1, proc.stderr)
        proc = self.run_ranks(3, "--generate", "expo:2:4000:seed=9", "--generate-queries",
                              "expo:2:1500:seed=77", "--eps", "0.01", "--json")
        report = json.loads(proc.stdout)
        self.assertEqual(report["n_queries"], 1500)
        self.assertEqual(sum(r["queries"] for r in report["per_rank"]), 1500)
        self.assertEqual(report["read"], "ranges")  # generated sets: each rank draws its rows
        # A file and a generated set together, each taken in shares.
        self.assert_same(["--input", self.path("b.npy"), "--generate-queries",
                          "expo:3:700:seed=4"], 0.02, ranks=(1, 3))
        proc = self.run_ranks(2, "--input", self.path("b.npy"), "--generate-queries",
                              "expo:3:700:seed=4", "--eps", "0.02", "--json")
        self.assertEqual(json.loads(proc.stdout)["read"], "ranges")
        proc = mpirun(3, "--input", self.path("b.npy"), "--generate-queries", "expo:2:50",
                      "--eps", "0.02")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("differ in dimension or element type", proc.stderr)
        self.assertEqual(proc.stderr.count("error:"), 1, proc.stderr)
        proc = mpirun(2, "--generate", "uniform:2:10", "--generate-queries", "uniform:2:5",
                      "--eps", "0.1", "--include-self")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--include-self applies to a self-join", proc.stderr)

    def assert_same_pairs(self, source, eps, ranks=RANKS, extra=()):
        """mpi-join's .npy pairs (sorted) hold exactly the single-process join's pairs, under
        the same header."""
        one = self.path("single.npy")
        single(*source, "--eps", repr(eps), "--output", one, "--quiet", *extra)
        header, expected = read_pairs(one)
        for np in ranks:
            out = self.path(f"mpi{np}.npy")
            self.run_ranks(np, *source, "--eps", repr(eps), "--output", out, "--quiet", *extra)
            got_header, got = read_pairs(out)
            self.assertEqual(got_header, header, f"{np} ranks")
            self.assertEqual(got, sorted(got), f"{np} ranks: pairs not sorted")
            self.assertEqual(got, sorted(expected), f"{np} ranks")
            self.assertFalse(os.path.exists(out + ".part"))

    def test_csv_pair_files(self):
        # The same pairs as the single process's CSV lines, sorted.
        source = ["--generate", "expo:2:5000:seed=6", "--eps", "0.005"]
        one = self.path("single.csv")
        single(*source, "--output", one, "--quiet")
        with open(one) as f:
            expected = sorted(tuple(map(int, line.split(","))) for line in f)
        for np in (1, 3):
            out = self.path(f"mpi{np}.csv")
            self.run_ranks(np, *source, "--output", out, "--quiet")
            with open(out) as f:
                got = [tuple(map(int, line.split(","))) for line in f]
            self.assertEqual(got, expected, f"{np} ranks")

    def test_pair_files(self):
        self.assert_same_pairs(["--generate", "expo:2:6000:seed=4"], 0.004)
        self.assert_same_pairs(["--generate", "uniform:3:2000:seed=8"], 0.08, ranks=(2, 3),
                               extra=("--include-self",))
        write_f64(self.path("lattice.f64"),
                  [(x * 0.25, y * 0.25) for x in range(24) for y in range(24)])
        self.assert_same_pairs(["--input", self.path("lattice.f64"), "--dim", "2"], 0.25,
                               ranks=(1, 4))  # ties at exactly eps
        self.assert_same_pairs(["--generate", "expo:2:3000:seed=9", "--generate-queries",
                                "expo:2:900:seed=77"], 0.01, ranks=(1, 3))
        self.assert_same_pairs(["--generate", "uniform:2:500:seed=2"], 1e-9, ranks=(2,))  # none

    def items_report(self, np, *args):
        proc = self.run_ranks(np, *args, "--threads", "1", "--format", "count", "--json")
        return json.loads(proc.stdout)

    def test_work_items_split(self):
        # 16-D: two boxes would hold nearly every point in a halo, so the ranks share the join's
        # work items instead, every rank holding all the points; each point's count and the
        # total are the single run's.
        source = ["--generate", "expo:16:3000:seed=12"]
        self.assert_same(source, 0.1, ranks=(2, 3, 4))
        total = json.loads(single(*source, "--eps", "0.1", "--format", "count", "--json").stdout)
        for np in (2, 3):
            report = self.items_report(np, *source, "--eps", "0.1")
            self.assertEqual(report["split"], "items")
            self.assertIn("of the points in halos: work items", report["split_reason"])
            self.assertEqual(report["pairs"], total["pairs"])
            self.assertEqual(report["halo_points"], 0)
            self.assertEqual([r["work_share"] for r in report["per_rank"]],
                             [f"items {r}, {r} + {np}, ..." for r in range(np)])
            self.assertEqual(sum(r["pairs"] for r in report["per_rank"]), total["pairs"])
            self.assertTrue(all(r["points"] == 3000 for r in report["per_rank"]))
        # Asked for: ties at exactly eps, duplicates, self pairs (share 0's), fewer points than
        # ranks; files read in ranges and by rank 0 alike.
        write_f64(self.path("lattice.f64"), [(x, y) for x in range(13) for y in range(7)] * 2)
        lattice = ["--input", self.path("lattice.f64"), "--dim", "2", "--eps", "1"]
        for extra in ([], ["--include-self"]):
            single(*lattice, *extra, "--format", "count", "--output", self.path("one.txt"))
            for np in (1, 2, 4):
                with self.subTest(np=np, extra=extra):
                    self.run_ranks(np, *lattice, *extra, "--split", "items", "--format", "count",
                                   "--output", self.path("many.txt"), "--quiet")
                    self.assertTrue(filecmp.cmp(self.path("one.txt"), self.path("many.txt"),
                                                shallow=False))
        self.assertEqual(self.items_report(4, *lattice, "--split", "items")["split"], "items")
        # A text file, read in shares of lines, and float32 arithmetic.
        with open(self.path("lattice.txt"), "w") as f:
            f.writelines(f"{x} {y}\n" for x in range(13) for y in range(7))
        for extra in ([], ["--precision", "f32"]):
            text = ["--input", self.path("lattice.txt"), "--eps", "1", *extra]
            single(*text, "--format", "count", "--output", self.path("one.txt"))
            with self.subTest(text=extra):
                self.run_ranks(3, *text, "--split", "items", "--format", "count", "--output",
                               self.path("many.txt"), "--quiet")
                self.assertTrue(filecmp.cmp(self.path("one.txt"), self.path("many.txt"),
                                            shallow=False))
        write_f64(self.path("two.f64"), [(0.0, 0.0), (0.5, 0.0)])
        report = self.items_report(4, "--input", self.path("two.f64"), "--dim", "2", "--eps",
                                   "0.6", "--split", "items")
        self.assertEqual(report["pairs"], 2)  # ordered, as 'epsjoin join --format count' counts
        report = self.items_report(2, "--generate", "expo:2:3000:seed=4", "--paper", "--eps",
                                   "0.01", "--split", "items")
        self.assertEqual((report["read"], report["split"]), ("rank 0", "items"))
        # Where boxes' halos are thin, auto keeps the boxes.
        report = self.items_report(2, "--generate", "uniform:2:4000:seed=2", "--eps", "0.01")
        self.assertEqual(report["split"], "boxes")
        self.assertTrue(report["split_reason"].endswith("of the points in halos: boxes"),
                        report["split_reason"])

    def test_work_items_split_refusals(self):
        base = ["--generate", "uniform:2:100", "--eps", "0.1"]
        for args, message in (
                (["--split", "items", "--format", "csr", "--output", self.path("x.csr")],
                 "--split items needs --format count"),
                (["--split", "items", "--engine", "super-ego"],
                 "--split items needs an engine that shares its work items; engines that do: "),
                (["--split", "items", "--generate-queries", "uniform:2:10"],
                 "--split items needs a self-join"),
                (["--split", "slabs"], "--split must be auto, boxes or items, got 'slabs'")):
            with self.subTest(args=args):
                proc = mpirun(2, *base, *args)
                self.assertNotEqual(proc.returncode, 0)
                self.assertIn(message, proc.stderr)
                self.assertEqual(proc.stderr.count("epsjoin mpi-join:"), 1, proc.stderr)
                self.assertFalse(os.path.exists(self.path("x.csr")))

    def test_errors(self):
        open(self.path("empty.f64"), "wb").close()
        proc = mpirun(2, "--input", self.path("empty.f64"), "--dim", "2", "--eps", "0.1")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("epsjoin mpi-join: error:", proc.stderr)
        proc = mpirun(2, "--generate", "uniform:2:10", "--eps", "0.1", "--format", "text",
                      "--output", self.path("x.csv"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--format must be csr, pairs, csv or count", proc.stderr)
        proc = mpirun(2, "--generate", "uniform:2:10", "--eps", "0.1", "--format", "pairs")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--format pairs needs --output FILE", proc.stderr)
        proc = mpirun(2, "--generate", "uniform:2:10", "--eps", "0.1", "--output",
                      os.path.join(self.tmp, "no", "such", "dir.csr"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(proc.stderr.count("epsjoin mpi-join: error:"), 1, proc.stderr)


if __name__ == "__main__":
    BIN = sys.argv[1]
    MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else ""
    unittest.main(argv=[sys.argv[0]], verbosity=2)
