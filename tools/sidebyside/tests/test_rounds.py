"""rounds: iibench.py's flags per step, the parser of its output, the figures taken from
dbperf's JSON report, the redaction of its password; no server is started."""

import os
import shutil
import tempfile
import types
import unittest

from tools.sidebyside import rounds


def a(**kw):
    d = dict(rows=1000000, rows2=500000, time=30.0)
    d.update(kw)
    return types.SimpleNamespace(**d)


def stats_line(inserted, deleted, queries):
    """iibench.py's per-report line: 17 tab-separated columns, [11] rows inserted so far,
    [12] deleted, [13] queries."""
    cols = ["1.0", "2.0", "100", "100", "1", "1", "0", "0", "0", "0", "0",
            str(inserted), str(deleted), str(queries), "0", "0", "0"]
    return "\t".join(cols) + "\n"


HEADER = "\t".join(["i_sec", "t_sec", "i_ips", "t_ips", "i_qps", "t_qps", "max_i", "max_q",
                    "a", "b", "c", "rows", "deleted", "queries", "d", "e", "f"]) + "\n"


class IibenchArgsTest(unittest.TestCase):
    def test_load_steps(self):
        self.assertEqual(rounds.iibench_step_args("l.i0", a()),
                         ["--max_rows=1000000", "--setup", "--num_secondary_indexes=0",
                          "--rows_per_commit=100", "--inserts_per_second=0", "--query_threads=0"])
        self.assertEqual(rounds.iibench_step_args("l.x", a())[:2],
                         ["--max_rows=100", "--num_secondary_indexes=3"])
        self.assertIn("--secondary_at_end", rounds.iibench_step_args("l.x", a()))
        li1 = rounds.iibench_step_args("l.i1", a())
        self.assertEqual(li1[0], "--max_rows=400000")          # 4/5 of --rows2
        self.assertIn("--rows_per_commit=50", li1)
        self.assertIn("--delete_per_insert", li1)
        li2 = rounds.iibench_step_args("l.i2", a())
        self.assertEqual(li2[0], "--max_rows=100000")          # 1/5 of --rows2
        self.assertIn("--rows_per_commit=5", li2)
        self.assertEqual(rounds.iibench_step_args("l.i2", a(rows2=3))[0], "--max_rows=1")

    def test_read_write_steps(self):
        qr = rounds.iibench_step_args("qr100", a())
        self.assertEqual(qr, ["--max_rows=3000", "--num_secondary_indexes=3",
                              "--rows_per_commit=50", "--inserts_per_second=100",
                              "--query_threads=1", "--delete_per_insert"])
        qp = rounds.iibench_step_args("qp500", a(time=8))
        self.assertEqual(qp[0], "--max_rows=4000")             # 8 s x 500 rows/s
        self.assertEqual(qp[-1], "--query_pk_only")
        self.assertIsNone(rounds.iibench_step_args("cleanup", a()))


class ParseIibenchTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sbs-iibench-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def parse(self, text):
        p = os.path.join(self.tmp, "out.txt")
        with open(p, "w") as f:
            f.write(text)
        return rounds.parse_iibench(p)

    def test_insert_step(self):
        out = self.parse(HEADER + stats_line(500, 0, 0) + stats_line(1000, 0, 0)
                         + "Totals: 12.5 secs, 80000.0 rows/sec, 1000000 rows, 1 2 3\n")
        self.assertEqual(out["inserted"], 1000000)             # the Totals line wins
        self.assertEqual(out["retries"], [1, 2, 3])
        self.assertEqual(out["deleted"], 0)
        self.assertEqual(out["queries"], 0)                     # from the stats line
        self.assertEqual(out["errors"], [])

    def test_query_threads_are_exact(self):
        out = self.parse(HEADER + stats_line(3000, 2990, 2890)
                         + "Query thread: 2900 queries\nQuery thread: 15 queries\n")
        self.assertEqual(out["inserted"], 3000)                # no Totals: the last stats line
        self.assertEqual(out["deleted"], 2990)
        self.assertEqual(out["queries_stats"], 2890)
        self.assertEqual(out["queries"], 2915)
        self.assertEqual(rounds.iibench_ops("qr100", out), 2915)
        self.assertEqual(rounds.iibench_ops("l.i1", out), 3000)

    def test_errors_and_index_time(self):
        out = self.parse("Created secondary indexes in 3.25 seconds\n"
                         "Traceback (most recent call last):\n"
                         "psycopg2.OperationalError: connection refused\n")
        self.assertEqual(out["index_secs"], 3.25)
        self.assertEqual(out["errors"], ["Traceback (most recent call last):",
                                         "psycopg2.OperationalError: connection refused"])
        self.assertIsNone(out["inserted"])
        self.assertIsNone(out["queries"])

    def test_missing_output_file(self):
        with self.assertRaises(OSError):
            rounds.parse_iibench(os.path.join(self.tmp, "absent.txt"))


class DbperfStepTest(unittest.TestCase):
    def test_figures(self):
        s = {"name": "l.i0", "status": "ok", "seconds": 4.5, "primary": "insert",
             "ops": {"insert": {"count": 1000000, "statements": 10000}},
             "client_cpu_sec": 0.5, "client_cpu_us_per_op": 0.5,
             "hw": {"server": {"cpu_sec": 9.5}, "server_cpupq": 9.5, "cpu_busy_sec": 11.0},
             "conn_cpu": {"insert": 8.0}}
        d = rounds.dbperf_step(s)
        self.assertEqual((d["ops"], d["client_cpu_sec"], d["server_cpu_sec"]), (1000000, 0.5, 9.5))
        self.assertEqual(d["statements"], {"insert": 10000})
        self.assertEqual(d["machine_busy_sec"], 11.0)
        self.assertEqual(d["conn_cpu"], {"insert": 8.0})

    def test_busy_from_proc_stat_ticks(self):
        hw = {"cpu_user_sec": 1.0, "cpu_nice_sec": 0.5, "cpu_system_sec": 2.0,
              "cpu_irq_sec": 0.25, "cpu_softirq_sec": 0.25}
        d = rounds.dbperf_step({"primary": "insert", "ops": {}, "hw": hw})
        self.assertEqual(d["machine_busy_sec"], 4.0)
        self.assertIsNone(d["ops"])
        self.assertIsNone(d["server_cpu_sec"])


class RedactTest(unittest.TestCase):
    def test_password(self):
        self.assertEqual(rounds.redact_argv(["py", "--db_password=s3cret", "--db_password=",
                                             "--db_user=u"]),
                         ["py", "--db_password=xxxxx", "--db_password=", "--db_user=u"])


if __name__ == "__main__":
    unittest.main()
