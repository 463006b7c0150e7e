#!/usr/bin/env python3
"""Outputs by kind, end to end: what --output names is never damaged.

A regular file (or a new name) is written beside itself and renamed into place; a symlink is
followed and survives; standard output ('-', a link to /proc/self/fd/1), a character device, a FIFO and a Unix
socket are written in place, in order, and stay what they are; a directory is refused before the
input is read. Every case runs as the invoking user and, when that is root, again as `nobody`,
in a private folder on a tmpfs where there is one. The device node is the test's own (mknod,
root only): the real /dev/null is never touched.

usage: test_output_kinds.py PATH/TO/epsjoin   (standard library only; run by CTest)
"""
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BIN = None
NOBODY = 65534
# Small, deterministic joins: one thread; JOIN writes a CSR with sorted rows.
BASE = ["join", "--generate", "uniform:2:3000:seed=1", "--eps", "0.03", "--engine", "cpu-grid",
        "--threads", "1"]
JOIN = BASE + ["--sort"]
DBSCAN = ["dbscan", "--generate", "uniform:2:3000:seed=1", "--eps", "0.03", "--min-samples", "4",
          "--threads", "1"]
# Seconds to generate and join: a refusal must come long before.
HUGE = ["join", "--generate", "uniform:2:20000000", "--eps", "0.001"]


def tmpfs_root():
    """A tmpfs to work in: TMPDIR's when it is one, else /dev/shm's, else TMPDIR."""
    mounts = {}
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            mounts[fields[1]] = fields[2]
    base = tempfile.gettempdir()
    path = os.path.realpath(base)
    while True:
        if path in mounts:
            if mounts[path] == "tmpfs":
                return base
            break
        path = os.path.dirname(path)
    return "/dev/shm" if mounts.get("/dev/shm") == "tmpfs" else base


class Reader(threading.Thread):
    """Everything written into a FIFO or to a Unix socket's one connection."""

    def __init__(self, path, listening=None):
        super().__init__(daemon=True)
        self.path, self.listening, self.data = path, listening, b""

    def run(self):
        if self.listening is not None:
            conn, _ = self.listening.accept()
            with conn:
                while chunk := conn.recv(65536):
                    self.data += chunk
        else:
            with open(self.path, "rb") as f:
                self.data = f.read()

    def result(self):
        self.join(timeout=1)
        if self.is_alive() and self.listening is None:
            # The writer never came: open and close the write end so the reader returns.
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
        self.join(timeout=5)
        return self.data


class OutputKinds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="epsjoin-output-kinds-", dir=tmpfs_root())
        os.chmod(cls.root, 0o777)  # nobody's runs write here too
        # A writer that mistook '-' for a name would leave its file here, not in the build.
        os.chdir(cls.root)
        cls.ref = {}
        for name, args in [("csr", JOIN + ["--format", "csr"]), ("csv", BASE + ["--format", "csv"]),
                           ("count", BASE + ["--format", "count"]), ("labels", DBSCAN)]:
            path = os.path.join(cls.root, "reference." + name)
            p = subprocess.run([BIN, *args, "--output", path, "--quiet"], capture_output=True)
            assert p.returncode == 0, p.stderr
            with open(path, "rb") as f:
                cls.ref[name] = f.read()
            os.remove(path)

    @classmethod
    def tearDownClass(cls):
        os.chdir("/")
        shutil.rmtree(cls.root)

    def identities(self):
        """(name, run keyword arguments) for each user the cases run as."""
        found = [("invoking user", {})]
        if os.geteuid() == 0:
            probe = subprocess.run([BIN, "gen", "uniform:1:1", "--output",
                                    os.path.join(self.root, "nobody.probe")],
                                   capture_output=True, user=NOBODY, group=NOBODY)
            if probe.returncode == 0:
                os.remove(os.path.join(self.root, "nobody.probe"))
                found.append(("nobody", {"user": NOBODY, "group": NOBODY}))
            else:
                print(f"note: nobody cannot run {BIN} or write in {self.root}; the cases run as "
                      "root only", file=sys.stderr)
        return found

    def folder(self, who):
        path = tempfile.mkdtemp(dir=self.root)
        os.chmod(path, 0o777)
        return path

    def run_as(self, who, args, **kwargs):
        return subprocess.run([BIN, *args], capture_output=True, timeout=120, **who, **kwargs)

    def assert_only(self, folder, names):
        self.assertEqual(sorted(os.listdir(folder)), sorted(names))

    def test_standard_output(self):
        for name, who in self.identities():
            with self.subTest(user=name):
                # A link of our own to what /dev/stdout links to: a regression must not be able
                # to replace the real /dev/stdout.
                own_stdout = os.path.join(self.folder(name), "stdout")
                os.symlink("/proc/self/fd/1", own_stdout)
                for target in ["-", own_stdout]:
                    p = self.run_as(who, JOIN + ["--output", target, "--json"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(p.stdout, self.ref["csr"], target)
                    # The summary moved to standard error.
                    self.assertEqual(json.loads(p.stderr.splitlines()[-1])["output"], target)
                p = self.run_as(who, BASE + ["--format", "csv", "--output", "-", "--quiet"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(sorted(p.stdout.splitlines()), sorted(self.ref["csv"].splitlines()))
                p = self.run_as(who, DBSCAN + ["--output", "-", "--quiet"])
                self.assertEqual(p.stdout, self.ref["labels"])
                self.assertTrue(stat.S_ISLNK(os.lstat(own_stdout).st_mode))

    def test_fifo(self):
        for name, who in self.identities():
            with self.subTest(user=name):
                d = self.folder(name)
                fifo = os.path.join(d, "result.pipe")
                os.mkfifo(fifo, 0o666)
                os.chmod(fifo, 0o666)
                for fmt, args in [("csr", JOIN), ("count", BASE + ["--format", "count"]),
                                  ("labels", DBSCAN)]:
                    reader = Reader(fifo)
                    reader.start()
                    p = self.run_as(who, args + ["--output", fifo, "--quiet"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(reader.result(), self.ref[fmt], fmt)
                    self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
                self.assert_only(d, ["result.pipe"])

    def test_formats_that_seek_and_repeats_are_refused_on_a_stream_at_once(self):
        d = self.folder("any")
        fifo = os.path.join(d, "pairs.npy")
        os.mkfifo(fifo)
        start = time.monotonic()
        # No reader: had the FIFO been opened, the run would block here.
        p = subprocess.run([BIN, *HUGE, "--format", "pairs", "--output", fifo],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--format pairs", p.stderr)
        self.assertIn("a FIFO", p.stderr)
        table = os.path.join(d, "table.pipe")
        os.mkfifo(table)
        p = subprocess.run([BIN, *HUGE, "--repeat", "2", "--output", table],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--repeat 2", p.stderr)
        self.assertLess(time.monotonic() - start, 4.0)
        self.assert_only(d, ["pairs.npy", "table.pipe"])

    def test_unix_socket(self):
        for name, who in self.identities():
            with self.subTest(user=name):
                d = self.folder(name)
                path = os.path.join(d, "result.sock")
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
                    server.bind(path)
                    os.chmod(path, 0o666)
                    server.listen(1)
                    reader = Reader(path, server)
                    reader.start()
                    p = self.run_as(who, JOIN + ["--output", path, "--quiet"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(reader.result(), self.ref["csr"])
                self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode))

    def test_own_device_node(self):
        d = self.folder("root")
        node = os.path.join(d, "null")
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.chmod(node, 0o666)
            os.close(os.open(node, os.O_WRONLY))
        except OSError as e:
            self.skipTest(f"no device node of our own here: {e}")
        for name, who in self.identities():
            with self.subTest(user=name):
                for args in [JOIN, BASE + ["--format", "csv"], BASE + ["--format", "count"],
                             JOIN + ["--repeat", "2"], DBSCAN]:
                    p = self.run_as(who, args + ["--output", node, "--quiet"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    info = os.lstat(node)
                    self.assertTrue(stat.S_ISCHR(info.st_mode))
                    self.assertEqual(info.st_rdev, os.makedev(1, 3))
                self.assert_only(d, ["null"])

    def test_symlinks_are_followed_and_survive(self):
        for name, who in self.identities():
            with self.subTest(user=name):
                d = self.folder(name)
                os.mkdir(os.path.join(d, "real"))
                os.chmod(os.path.join(d, "real"), 0o777)
                target = os.path.join(d, "real", "t.csr")
                with open(target, "wb") as f:
                    f.write(b"old")
                os.chmod(target, 0o666)
                os.symlink("real/t.csr", os.path.join(d, "link.csr"))
                os.symlink("link.csr", os.path.join(d, "chain.csr"))
                os.symlink("real/new.csr", os.path.join(d, "dangling.csr"))
                for link, file in [("chain.csr", target),
                                   ("dangling.csr", os.path.join(d, "real", "new.csr"))]:
                    p = self.run_as(who, JOIN + ["--output", os.path.join(d, link), "--quiet"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertTrue(os.path.islink(os.path.join(d, link)))
                    with open(file, "rb") as f:
                        self.assertEqual(f.read(), self.ref["csr"])
                self.assert_only(d, ["chain.csr", "dangling.csr", "link.csr", "real"])
                self.assert_only(os.path.join(d, "real"), ["new.csr", "t.csr"])

    def test_directories_and_unwritable_folders_are_refused_before_the_input(self):
        for name, who in self.identities():
            with self.subTest(user=name):
                d = self.folder(name)
                os.symlink(".", os.path.join(d, "here"))
                locked = os.path.join(d, "locked")
                os.mkdir(locked, 0o555)
                os.chmod(locked, 0o555)
                cases = [(d, "is a directory"), (os.path.join(d, "here"), "is a directory")]
                if who:  # root writes into any folder
                    cases.append((os.path.join(locked, "t.csr"), "Permission denied"))
                for target, reason in cases:
                    start = time.monotonic()
                    p = self.run_as(who, HUGE + ["--output", target], text=True)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn(reason, p.stderr)
                    self.assertLess(time.monotonic() - start, 2.0)
                self.assert_only(d, ["here", "locked"])
                self.assert_only(locked, [])

    def test_gen_to_standard_output(self):
        path = os.path.join(self.folder("any"), "points.csv")
        subprocess.run([BIN, "gen", "gauss:3:500:seed=4", "--output", path], check=True,
                       capture_output=True)
        p = subprocess.run([BIN, "gen", "gauss:3:500:seed=4", "--output", "-"],
                           capture_output=True, check=True)
        with open(path, "rb") as f:
            self.assertEqual(p.stdout, f.read())


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
