"""report: the per-round figures, the table rows (medians, min-max, targets), the number
format, and the text, Markdown and JSON renderings of tests/sample.py's hand-made results.
testdata/sample.{txt,md,json} were written by scripts/sidebyside.py as it was before it
became this package (the same inputs through its functions): the output must not change."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

from tools.sidebyside import report
from tools.sidebyside.tests import sample

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def golden(name):
    with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
        return f.read()


def rows_of(res, steps=("l.i0", "l.x", "qr100")):
    return {r["step"]: r for r in report.build_rows(res, list(steps))}


class FiguresTest(unittest.TestCase):
    def test_per_op(self):
        self.assertAlmostEqual(report.per_op(0.5, 1000000), 0.5)     # 0.5 s / 1M rows
        self.assertAlmostEqual(report.per_op(0.09, 3000), 30.0)      # 90 ms / 3000 queries
        self.assertIsNone(report.per_op(None, 10))
        self.assertIsNone(report.per_op(1.0, 0))
        self.assertIsNone(report.per_op(1.0, None))

    def test_round_figures_insert(self):
        rr = sample.postgres()["steps"]["l.i0"]["rounds"][0]
        f = report.round_figures("l.i0", rr)
        self.assertAlmostEqual(f["dbperf_us"], 0.5)
        self.assertAlmostEqual(f["iibench_us"], 4.0)
        self.assertAlmostEqual(f["dbperf_server_us"], 9.5)
        self.assertAlmostEqual(f["iibench_server_us"], 10.0)
        self.assertAlmostEqual(f["floor_us"], 0.4)
        self.assertAlmostEqual(f["ratio"], 0.125)
        self.assertAlmostEqual(f["vs_floor"], 1.25)
        self.assertAlmostEqual(f["share"], 0.05)

    def test_round_figures_failed_and_skipped(self):
        rr = sample.postgres()["steps"]["qr100"]["rounds"][1]   # iibench.py failed
        f = report.round_figures("qr100", rr)
        self.assertAlmostEqual(f["dbperf_us"], 32.0)
        self.assertIsNone(f["iibench_us"])
        self.assertIsNone(f["ratio"])
        self.assertIsNone(f["share"])                            # only l.i0 has a share
        self.assertAlmostEqual(f["vs_floor"], 1.25)
        rr["floor"] = {"round": 2, "skipped": "dbperf's run failed"}
        self.assertIsNone(report.round_figures("qr100", rr)["vs_floor"])

    def test_lx_has_no_ratio(self):
        rr = {"dbperf": {"ops": 100, "client_cpu_sec": 1e-4, "server_cpu_sec": 0.01},
              "iibench": {"ops": 100, "client_cpu_sec": 2e-4, "server_cpu_sec": 0.01}}
        f = report.round_figures("l.x", rr)
        self.assertAlmostEqual(f["dbperf_us"], 1.0)
        self.assertIsNone(f["ratio"])


class RowsTest(unittest.TestCase):
    def setUp(self):
        self.rows = rows_of(sample.postgres())

    def test_medians_and_spread(self):
        r = self.rows["l.i0"]
        self.assertEqual((r["op"], r["rounds"]), ("inserted row", 2))
        self.assertAlmostEqual(r["dbperf_us"]["median"], 0.6)
        self.assertAlmostEqual(r["iibench_us"]["median"], 3.75)
        self.assertAlmostEqual(r["ratio"]["median"], 0.1625)
        self.assertAlmostEqual(r["ratio"]["min"], 0.125)
        self.assertAlmostEqual(r["ratio"]["max"], 0.2)
        self.assertEqual(r["ratio"]["n"], 2)
        self.assertAlmostEqual(r["vs_floor"]["median"], 1.325)
        self.assertAlmostEqual(r["share"]["median"], (0.05 + 0.0625) / 2)
        q = self.rows["qr100"]
        self.assertEqual(q["op"], "query")
        self.assertAlmostEqual(q["dbperf_us"]["median"], 31.0)
        self.assertEqual(q["iibench_us"]["n"], 1)                 # round 2's failed
        self.assertAlmostEqual(q["ratio"]["median"], 0.5)
        self.assertEqual(q["failed"], ["iibench r2: exit 1; Traceback (most recent call last):"])
        x = self.rows["l.x"]
        self.assertEqual((x["op"], x["rounds"], x["targets"]), ("indexed row", 1, []))
        self.assertAlmostEqual(x["dbperf_us"]["median"], 0.02)

    def test_targets(self):
        # l.i0: median 0.6 µs/row meets ≤0.6 but the rounds disagree (0.5 and 0.7): split.
        self.assertEqual(self.rows["l.i0"]["targets"],
                         [{"target": "≤0.6µs", "met": True, "split": True},
                          {"target": "share<10%", "met": True, "split": False}])
        # qr100: ratio 0.5 ≤ 1; dbperf/floor 1.225 > 1.15 in both rounds.
        self.assertEqual(self.rows["qr100"]["targets"],
                         [{"target": "≤iibench", "met": True, "split": False},
                          {"target": "≤1.15×floor", "met": False, "split": False}])

    def test_missing_figure_is_unknown(self):
        res = {"steps": {"l.i1": {"rounds": [{"round": 1, "dbperf": {"failed": "boom"}}]}}}
        (r,) = report.build_rows(res, ["l.i1"])
        self.assertEqual(r["targets"], [{"target": "≤1.5µs", "met": None, "split": False}])
        self.assertEqual(r["failed"], ["dbperf r1: boom"])
        self.assertEqual(report.row_cells(r)[-1], "≤1.5µs ?")

    def test_steps_not_run_have_no_row(self):
        self.assertEqual(report.build_rows({"steps": {}}, ["l.i0"]), [])
        self.assertEqual(report.build_rows({}, ["l.i0"]), [])


class FormatTest(unittest.TestCase):
    def test_fmt(self):
        cases = [(None, "us", "–"), (0, "us", "0"), (0.5, "us", "0.500"), (0.02, "us", "0.0200"),
                 (3.75, "us", "3.75"), (31.0, "us", "31.0"), (99.96, "us", "100"),
                 (200, "us", "200"), (123456, "us", "123000"), (0.001234, "us", "0.00123"),
                 (0.1625, "ratio", "0.16"), (1.325, "ratio", "1.32"), (0.05625, "pct", "5.6%")]
        for v, kind, want in cases:
            self.assertEqual(report.fmt(v, kind), want, (v, kind))

    def test_fmt_spread(self):
        self.assertEqual(report.fmt_spread({"median": 1.325, "min": 1.25, "max": 1.4, "n": 2},
                                           "ratio"), "1.32 (1.25–1.40)")
        self.assertEqual(report.fmt_spread({"median": 0.5, "min": 0.5, "max": 0.5, "n": 1},
                                           "ratio"), "0.50")
        self.assertEqual(report.fmt_spread({"median": None, "min": None, "max": None, "n": 0},
                                           "ratio"), "–")

    def test_row_cells(self):
        r = rows_of(sample.postgres())["l.i0"]
        self.assertEqual(report.row_cells(r),
                         ["l.i0", "inserted row", "2", "0.600", "3.75", "0.16 (0.12–0.20)",
                          "0.450", "1.32 (1.25–1.40)", "10.0", "10.0", "5.6%",
                          "≤0.6µs ✓* share<10% ✓"])

    def test_engine_title(self):
        self.assertEqual(report.engine_title("postgres", sample.postgres()),
                         "postgres 16.4, dbperf over tcp, iibench.py over tcp, 13 min")
        self.assertEqual(report.engine_title("innodb", sample.innodb()), "innodb , 0 min")

    def test_out_base(self):
        self.assertEqual(report.out_base("x/sbs"), "x/sbs")
        self.assertEqual(report.out_base("x/sbs.md"), "x/sbs")
        self.assertEqual(report.out_base("x/sbs.json"), "x/sbs")


class RenderTest(unittest.TestCase):
    """The whole report, against the files the script wrote before it was split up."""

    def rendered(self):
        a = sample.args()
        rep = sample.report()
        text = ""
        for name, res in rep["engines"].items():
            res["rows"] = report.build_rows(res, a.steps)
            text += report.engine_text(name, res, a)
        text += "\n" + report.legend(a.rounds) + "\n"
        return a, rep, text

    def test_text(self):
        _, _, text = self.rendered()
        self.assertEqual(text, golden("sample.txt"))
        self.assertIn("\n  FAILED qr100 iibench r2: exit 1;", text)
        self.assertIn("still busy after --settle 20 s before: iibench l.i0 r2", text)

    def test_notes(self):
        a = sample.args()
        res = sample.postgres()
        res["rows"] = report.build_rows(res, a.steps)
        ns = report.notes("postgres", res, a)
        self.assertEqual(ns[0], "floor (medians over rounds; tcp, 3 s per run): l.i0 burn 1000 µs, "
                                "request 6050 B, reply 20 B, 0.01 round trips/row, 45.0 µs/round "
                                "trip; qr100 burn 180 µs, 25.3 µs/round trip")
        # dbperf's whole process from outside: (client + 0.2 s) per op, median over rounds.
        self.assertTrue(ns[1].endswith("median: l.i0 0.800, l.x 0.220, qr100 97.7"), ns[1])
        self.assertEqual(ns[2], "waited 28 s in all for a quiet server; still busy after "
                                "--settle 20 s before: iibench l.i0 r2")
        self.assertEqual(report.notes("innodb", dict(sample.innodb(), rows=[]), a),
                         ["waited 0 s in all for a quiet server",
                          "ERROR: dbperf server start mariadb failed (exit 1): no mariadbd"])

    def test_markdown_and_json_files(self):
        a, rep, _ = self.rendered()
        tmp = tempfile.mkdtemp(prefix="sbs-report-")
        self.addCleanup(shutil.rmtree, tmp)
        a.out = os.path.join(tmp, "sbs.json")   # either extension names both files
        with contextlib.redirect_stderr(io.StringIO()) as err:
            report.write_out(a, rep)
        self.assertIn("wrote %s.md and %s.json" % (a.out[:-5], a.out[:-5]), err.getvalue())
        with open(os.path.join(tmp, "sbs.md"), encoding="utf-8") as f:
            md = f.read()
        with open(os.path.join(tmp, "sbs.json"), encoding="utf-8") as f:
            js = f.read()
        self.assertEqual(md, golden("sample.md"))
        self.assertEqual(js, golden("sample.json"))
        self.assertTrue(md.startswith("<!-- scripts/sidebyside.py --engines postgres,innodb "
                                      "--rows 1000000 --rows2 500000 --time 30 --rounds 2 "
                                      "--steps l.i0,l.x,qr100 --floor-secs 3 --settle 20; "
                                      "2024-05-01T10:00:00+0000, 13 min -->\n"))
        self.assertIn("| l.i0 | inserted row | 2 | 0.600 | 3.75 | 0.16 (0.12–0.20) | 0.450 | "
                      "1.32 (1.25–1.40) | 10.0 | 10.0 | 5.6% | ≤0.6µs ✓* share<10% ✓ |\n", md)
        data = json.loads(js)
        pg = data["engines"]["postgres"]
        f1 = pg["steps"]["l.i0"]["rounds"][0]["figures"]
        self.assertAlmostEqual(f1["dbperf_us"], 0.5)
        self.assertAlmostEqual(f1["ratio"], 0.125)
        self.assertEqual([r["step"] for r in pg["rows"]], ["l.i0", "l.x", "qr100"])
        self.assertEqual(data["engines"]["innodb"]["rows"], [])
        self.assertEqual(data["host"]["loadavg_start"], [0.5, 0.4, 0.3])


if __name__ == "__main__":
    unittest.main()
