"""children: run_measured on trivial commands (a shell that exits, one that leaves an
orphan behind, one that outlives its timeout) and tail. Each takes well under a second."""

import os
import shutil
import signal
import sys
import tempfile
import unittest

from tools.sidebyside import children


@unittest.skipUnless(sys.platform.startswith("linux"), "PR_SET_CHILD_SUBREAPER is Linux's")
class RunMeasuredTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sbs-children-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.out = os.path.join(self.tmp, "out.txt")

    def read(self):
        with open(self.out) as f:
            return f.read()

    def test_exit_status_and_output(self):
        r = children.run_measured(["sh", "-c", "echo hello; echo oops >&2; exit 3"], self.tmp,
                                  dict(os.environ), self.out, timeout=30)
        self.assertEqual(r["rc"], 3)
        self.assertFalse(r["timed_out"])
        self.assertEqual(sorted(self.read().split()), ["hello", "oops"])
        for k in ("user_sec", "sys_sec", "wall_sec", "maxrss_kb"):
            self.assertGreaterEqual(r[k], 0, k)

    def test_waits_for_orphans(self):
        # The shell exits at once; its background child, reparented to the subreaper, is
        # still waited for (so its CPU would be counted) before run_measured returns.
        r = children.run_measured(["sh", "-c", "(sleep 0.2; echo orphan) & exit 0"], self.tmp,
                                  dict(os.environ), self.out, timeout=30)
        self.assertEqual(r["rc"], 0)
        self.assertEqual(self.read(), "orphan\n")

    def test_cannot_run(self):
        r = children.run_measured(["/nonexistent/program"], self.tmp, dict(os.environ),
                                  self.out, timeout=30)
        self.assertEqual(r["rc"], 127)
        self.assertIn("cannot run /nonexistent/program", self.read())

    def test_timeout(self):
        # On a timeout the whole group is stopped, the subreaper with it: the result says
        # timed_out, with rc -1 and no rusage (the run's figures are not used).
        ticks = []
        r = children.run_measured(["sleep", "30"], self.tmp, dict(os.environ), self.out,
                                  timeout=0.2, stop_signal=signal.SIGTERM,
                                  tick=lambda: ticks.append(1))
        self.assertTrue(r["timed_out"])
        self.assertNotEqual(r["rc"], 0)
        self.assertGreater(len(ticks), 0)


class TailTest(unittest.TestCase):
    def test_tail(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "log")
            with open(p, "w") as f:
                f.write("".join("line %d\n" % i for i in range(1, 21)))
            self.assertEqual(children.tail(p, 2), "line 19\nline 20\n")
            self.assertEqual(children.tail(p).count("\n"), 15)
            self.assertEqual(children.tail(os.path.join(d, "absent")), "")


if __name__ == "__main__":
    unittest.main()
