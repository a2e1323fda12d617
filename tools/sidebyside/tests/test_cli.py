"""cli: the checks of the options (bad input: one line on stderr, exit status 2, nothing
started), --help, and the launcher scripts/sidebyside.py (the same, run as a command, and
the helpers scripts/sysbench_sidebyside.py imports from it). Only inputs refused before
anything is run: no gcc, no iibench.py, no server."""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from tools.sidebyside import cli
from tools.sidebyside.common import REPO, BadInput

LAUNCHER = os.path.join(REPO, "scripts", "sidebyside.py")


class ParseArgsTest(unittest.TestCase):
    def bad(self, *argv):
        with self.assertRaises(BadInput) as cm:
            cli.parse_args(list(argv))
        return str(cm.exception)

    def test_refused(self):
        nx = "/nonexistent/iibench.py"
        cases = [
            (["--engines", "foo,postgres"], "--engines: unknown foo (want postgres, innodb, rocksdb)"),
            (["--engines", ","], "--engines: unknown  (want postgres, innodb, rocksdb)"),
            (["--steps", "l.i0,bogus"], "--steps: unknown bogus (known: l.i0 l.x l.i1 l.i2 qr100 "
                                        "qp100 qr500 qp500 qr1000 qp1000)"),
            (["--steps", "l.x"], "--steps must include l.i0 (both clients create their table there)"),
            (["--steps", "l.i0,qr100"], "--steps: l.i1, l.i2 and the read-write steps need l.x "
                                        "(the secondary indexes)"),
            (["--rows", "99"], "--rows must be >= 100, --rows2 >= 10 and --time > 0"),
            (["--rows2", "9"], "--rows must be >= 100, --rows2 >= 10 and --time > 0"),
            (["--time", "0"], "--rows must be >= 100, --rows2 >= 10 and --time > 0"),
            (["--rounds", "0"], "--rounds must be >= 1"),
            (["--floor-secs", "0"], "--floor-secs must be > 0 and --settle >= 0"),
            (["--settle", "-1"], "--floor-secs must be > 0 and --settle >= 0"),
            ([], "--iibench %s: no such file (git clone https://github.com/mdcallag/mytools and "
                 "pass bench/ibench/iibench.py)" % nx),
        ]
        for extra, want in cases:
            self.assertEqual(self.bad("--iibench", nx, *extra), want, extra)

    def test_missing_dbperf(self):
        with tempfile.NamedTemporaryFile(suffix=".py") as f:
            msg = self.bad("--iibench", f.name, "--dbperf", "/nonexistent/dbperf")
        self.assertEqual(msg, "dbperf binary /nonexistent/dbperf not found: run `make build` in "
                              "%s, or pass --dbperf PATH" % REPO)

    def test_argparse_errors_exit_2(self):
        for argv in ([], ["--iibench", "/x", "--rows", "abc"]):
            with contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertRaises(SystemExit) as cm:
                cli.parse_args(argv, prog="sidebyside.py")
            self.assertEqual(cm.exception.code, 2)
            self.assertIn("sidebyside.py: error:", err.getvalue())

    def test_help(self):
        with contextlib.redirect_stdout(io.StringIO()) as out, self.assertRaises(SystemExit) as cm, \
                mock.patch.dict(os.environ, {"COLUMNS": "80"}):
            cli.parse_args(["--help"], prog="sidebyside.py")
        self.assertEqual(cm.exception.code, 0)
        for opt in ("--iibench", "--rounds", "--out", "--engines", "--steps", "--settle",
                    "--floor-secs", "--keep"):
            self.assertIn(opt, out.getvalue())
        self.assertTrue(out.getvalue().startswith("usage: sidebyside.py [-h] --iibench PATH"))


class MainTest(unittest.TestCase):
    def test_bad_input_one_line_exit_2(self):
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()) as err:
            rc = cli.main(["--iibench", "/nonexistent.py"])
        self.assertEqual(rc, 2)
        self.assertEqual(out.getvalue(), "")
        self.assertEqual(err.getvalue(),
                         "sidebyside: --iibench /nonexistent.py: no such file (git clone "
                         "https://github.com/mdcallag/mytools and pass bench/ibench/iibench.py)\n")


class LauncherTest(unittest.TestCase):
    def run_launcher(self, *argv):
        return subprocess.run([sys.executable, LAUNCHER] + list(argv), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60, cwd=REPO)

    def test_missing_iibench(self):
        p = self.run_launcher("--iibench", "/nonexistent.py")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("sidebyside: --iibench /nonexistent.py: no such file"))

    def test_help(self):
        p = self.run_launcher("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("usage: sidebyside.py "))
        for opt in ("--iibench", "--rounds", "--out"):
            self.assertIn(opt, p.stdout)

    def test_helpers_for_sysbench_sidebyside(self):
        spec = importlib.util.spec_from_file_location("sidebyside_launcher", LAUNCHER)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        for name in ("EngineFailed", "Interrupted", "Server", "dbperf_step", "log", "on_signal",
                     "parse_dsn", "run_measured", "settle", "subprocess", "tail", "main"):
            self.assertTrue(hasattr(m, name), name)
        self.assertIs(m.EngineFailed, cli.EngineFailed)


if __name__ == "__main__":
    unittest.main()
