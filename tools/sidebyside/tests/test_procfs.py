"""procfs: the /proc/<pid>/stat parser on fixed texts, the readers on a made-up /proc
directory (a vanished process, non-pid entries), and once on the real /proc."""

import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

from tools.sidebyside import procfs, report


def stat_line(pid, comm, state, ppid, utime, stime, cutime, cstime):
    """A /proc/<pid>/stat text as the kernel writes it (52 fields; the rest made up)."""
    fields = [state, ppid, pid, pid, 0, -1, 4194560, 1000, 0, 0, 0, utime, stime, cutime, cstime,
              20, 0, 1, 0, 100] + [0] * 32
    return "%d (%s) %s\n" % (pid, comm, " ".join(str(f) for f in fields))


# A real line (postgres's checkpointer), as read from /proc on Debian 12.
POSTGRES = ("1235 (postgres) S 1234 1235 1235 0 -1 1077936192 1166 0 0 0 150 50 7 3 20 0 1 0 "
            "4406 221347840 1701 18446744073709551615 1 1 0 0 0 0 0 16781312 16898 0 0 0 17 1 "
            "0 0 0 0 0 0 0 0 0 0 0 0 0\n")


class ParseStatTest(unittest.TestCase):
    def test_real_line(self):
        self.assertEqual(procfs.parse_stat(POSTGRES), (1234, 150 + 50 + 7 + 3))
        self.assertEqual(procfs.stat_state(POSTGRES), "S")

    def test_name_with_spaces_and_parentheses(self):
        # The name may hold ") " and look like the fields that follow it: only the last
        # ')' ends it.
        data = stat_line(4321, "a (b) c) R 9 9 9 x) y", "S", 77, 10, 20, 30, 40)
        self.assertEqual(procfs.parse_stat(data), (77, 100))
        self.assertEqual(procfs.stat_state(data), "S")

    def test_name_that_looks_like_a_zombie(self):
        data = stat_line(5, "evil) Z 1", "R", 1, 1, 2, 3, 4)
        self.assertEqual(procfs.stat_state(data), "R")
        self.assertEqual(procfs.parse_stat(data), (1, 10))

    def test_zombie_and_empty(self):
        self.assertEqual(procfs.stat_state(stat_line(6, "sh", "Z", 1, 0, 0, 0, 0)), "Z")
        self.assertEqual(procfs.stat_state(""), "")

    def test_huge_tick_counts(self):
        data = stat_line(7, "mariadbd", "S", 1, 2**40, 2**40, 0, 1)
        self.assertEqual(procfs.parse_stat(data), (1, 2**41 + 1))


class FakeProcTest(unittest.TestCase):
    """A made-up /proc: a server 100 with a child 101 and a grandchild 102, an unrelated
    200 (child of 1), a process 300 that vanished (its directory without stat), and
    entries that are not processes."""

    def setUp(self):
        self.proc = tempfile.mkdtemp(prefix="sbs-proc-")
        self.addCleanup(shutil.rmtree, self.proc)
        self.write(1, stat_line(1, "init", "S", 0, 5, 5, 0, 0))
        self.write(100, stat_line(100, "postgres", "S", 1, 700, 200, 80, 20))   # 1000
        self.write(101, stat_line(101, "postgres: ib ib 127.0.0.1(40000) idle", "S", 100,
                                  150, 50, 0, 0))                                 # 200
        self.write(102, stat_line(102, "worker (x)", "R", 101, 30, 20, 0, 0))     # 50
        self.write(200, stat_line(200, "bash", "S", 1, 1, 1, 1, 1))               # 4
        self.write(201, stat_line(201, "defunct", "Z", 200, 0, 0, 0, 0))
        os.mkdir(os.path.join(self.proc, "300"))
        os.mkdir(os.path.join(self.proc, "self"))
        with open(os.path.join(self.proc, "stat"), "w") as f:
            f.write("cpu  1 2 3 4\n")

    def write(self, pid, text):
        d = os.path.join(self.proc, str(pid))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "stat"), "w") as f:
            f.write(text)

    def test_proc_stat_all(self):
        self.assertEqual(procfs.proc_stat_all(self.proc),
                         {1: (0, 10), 100: (1, 1000), 101: (100, 200), 102: (101, 50),
                          200: (1, 4), 201: (200, 0)})

    def test_tree_ticks(self):
        procs = procfs.proc_stat_all(self.proc)
        self.assertEqual(procfs.tree_ticks(procs, 100), 1250)
        self.assertEqual(procfs.tree_ticks(procs, 101), 250)
        self.assertEqual(procfs.tree_ticks(procs, 102), 50)
        self.assertEqual(procfs.tree_ticks(procs, 1), 1264)
        self.assertIsNone(procfs.tree_ticks(procs, 300))  # vanished
        self.assertIsNone(procfs.tree_ticks(procs, 999))  # never there

    def test_cpu_seconds_from_ticks(self):
        with mock.patch.object(procfs, "TICK", 100):
            self.assertEqual(procfs.tree_cpu_sec(100, self.proc), 12.5)
            self.assertIsNone(procfs.tree_cpu_sec(300, self.proc))
            self.assertEqual(procfs.machine_busy_sec(self.proc), 12.64)

    def test_server_cpu_per_row_from_ticks(self):
        """The server's CPU over a measurement is the difference of two readings of its
        tree's ticks; an exited child counts through its parent's cutime/cstime."""
        with mock.patch.object(procfs, "TICK", 100):
            before = procfs.tree_cpu_sec(100, self.proc)                          # 12.5 s
            self.write(100, stat_line(100, "postgres", "S", 1, 1400, 400, 250, 50))  # 2100
            shutil.rmtree(os.path.join(self.proc, "101"))  # exited, reaped by 100
            self.write(102, stat_line(102, "worker (x)", "R", 100, 30, 20, 0, 0))  # reparented
            after = procfs.tree_cpu_sec(100, self.proc)                           # 21.5 s
        self.assertEqual((before, after), (12.5, 21.5))
        d = {"ops": 1000000, "client_cpu_sec": 0.5, "server_cpu_sec": after - before}
        fig = report.round_figures("l.i0", {"dbperf": d})
        self.assertAlmostEqual(fig["dbperf_server_us"], 9.0)   # 9 s / 1,000,000 rows
        self.assertAlmostEqual(fig["dbperf_us"], 0.5)
        self.assertAlmostEqual(fig["share"], 0.5 / 9.5)

    def test_alive(self):
        self.assertTrue(procfs.alive(100, self.proc))
        self.assertFalse(procfs.alive(201, self.proc))   # zombie
        self.assertFalse(procfs.alive(300, self.proc))   # vanished
        self.assertFalse(procfs.alive(999, self.proc))   # never there


@unittest.skipUnless(sys.platform.startswith("linux"), "/proc is Linux's")
class RealProcTest(unittest.TestCase):
    def test_this_process(self):
        procs = procfs.proc_stat_all()
        self.assertEqual(procs[os.getpid()][0], os.getppid())
        self.assertTrue(procfs.alive(os.getpid()))
        cpu = procfs.tree_cpu_sec(os.getpid())
        self.assertIsInstance(cpu, float)
        self.assertGreaterEqual(cpu, 0.0)
        self.assertGreaterEqual(procfs.machine_busy_sec(), cpu)


if __name__ == "__main__":
    unittest.main()
