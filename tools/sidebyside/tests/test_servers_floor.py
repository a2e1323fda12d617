"""servers: the DSN parser and settle's exits; floor: the parser of `ss -tinH` and the
request and reply sizes the insert floor takes from it. No server, no ss, no gcc."""

import unittest
from unittest import mock

from tools.sidebyside import floor, servers
from tools.sidebyside.common import EngineFailed


class ParseDsnTest(unittest.TestCase):
    def test_postgres_tcp(self):
        d = servers.parse_dsn("postgres://dbperf:p%40ss@127.0.0.1:5433/ib?sslmode=disable")
        self.assertEqual(d, {"kind": "postgres", "user": "dbperf", "password": "p@ss",
                             "host": "127.0.0.1", "port": 5433, "db": "ib",
                             "sslmode": "disable", "transport": "tcp"})

    def test_postgres_defaults(self):
        d = servers.parse_dsn("postgresql://")
        self.assertEqual((d["user"], d["host"], d["port"], d["db"], d["transport"]),
                         ("postgres", "127.0.0.1", 5432, "ib", "tcp"))

    def test_mysql_unix(self):
        d = servers.parse_dsn("mysql://root:pw@unix(/tmp/x/mysqld.sock)/ib?parseTime=true")
        self.assertEqual(d, {"kind": "mysql", "user": "root", "password": "pw", "db": "ib",
                             "transport": "unix", "socket": "/tmp/x/mysqld.sock",
                             "host": None, "port": None})

    def test_mysql_tcp(self):
        d = servers.parse_dsn("mysql://u@tcp(127.0.0.1:3307)/")
        self.assertEqual((d["host"], d["port"], d["password"], d["db"], d["transport"]),
                         ("127.0.0.1", 3307, "", "ib", "tcp"))

    def test_unknown(self):
        with self.assertRaises(EngineFailed) as cm:
            servers.parse_dsn("sqlite:///tmp/x.db")
        self.assertIn("cannot parse the server's DSN", str(cm.exception))


class SettleTest(unittest.TestCase):
    def test_no_wait(self):
        with mock.patch.object(servers, "tree_cpu_sec") as cpu:
            self.assertEqual(servers.settle(123, 0), 0.0)
        cpu.assert_not_called()

    def test_server_gone(self):
        with mock.patch.object(servers, "tree_cpu_sec", return_value=None):
            with self.assertRaises(EngineFailed) as cm:
                servers.settle(123, 5)
        self.assertEqual(str(cm.exception), "the server (pid 123) is gone")

    def test_quiet_after_two_quiet_windows(self):
        # 0.5 s windows: busy (0.3 s of CPU), then two quiet ones (< 0.05 s each).
        readings = iter([10.0, 10.3, 10.31, 10.32])
        with mock.patch.object(servers, "tree_cpu_sec", side_effect=lambda pid: next(readings)), \
                mock.patch.object(servers.time, "sleep"):
            servers.settle(123, 60)
        self.assertRaises(StopIteration, next, readings)  # exactly four readings


SS = """0      0        127.0.0.1:5433      127.0.0.1:40000
\t cubic wscale:7,7 rto:204 rtt:0.05/0.02 mss:32768 bytes_sent:80000 bytes_acked:80001 bytes_received:600000 segs_out:1002 segs_in:1001 data_segs_out:1000 data_segs_in:1000 send 5Gbps
0      0        127.0.0.1:5433      127.0.0.1:40002
\t cubic wscale:7,7 rto:204 bytes_sent:2000 bytes_received:9000 data_segs_out:30 data_segs_in:10
0      0        127.0.0.1:5433      127.0.0.1:40004
\t cubic wscale:7,7 rto:204 bytes_acked:1 segs_out:2 segs_in:1
"""


class WireTest(unittest.TestCase):
    def test_parse_ss(self):
        conns = floor.parse_ss_ti(SS)
        self.assertEqual(list(conns), ["127.0.0.1:40000", "127.0.0.1:40002"])  # 40004: no data
        self.assertEqual(conns["127.0.0.1:40000"],
                         {"bytes_sent": 80000, "bytes_received": 600000,
                          "data_segs_in": 1000, "data_segs_out": 1000})
        self.assertEqual(floor.parse_ss_ti(""), {})
        self.assertEqual(floor.parse_ss_ti("\t bytes_received:1 data_segs_in:1\n"), {})  # no peer

    def test_sizes(self):
        w = floor.WireSampler(5433)
        w.conns.update(floor.parse_ss_ti(SS))
        w.samples = 1
        r = w.result()
        self.assertEqual(r["req_bytes"], 609000 / 1010)        # bytes_received / data_segs_in
        self.assertEqual(r["rep_bytes"], 82000 / 1030)         # bytes_sent / data_segs_out
        self.assertEqual(r["samples"], 1)
        self.assertIsNone(floor.WireSampler(5433).result())     # nothing sampled

    def test_later_sample_replaces_a_connection(self):
        w = floor.WireSampler(5433)
        w.conns.update(floor.parse_ss_ti(SS))
        w.conns.update(floor.parse_ss_ti(
            "0 0 127.0.0.1:5433 127.0.0.1:40002\n\t bytes_sent:4000 bytes_received:18000 "
            "data_segs_out:60 data_segs_in:20\n"))
        self.assertEqual(w.conns["127.0.0.1:40002"]["bytes_received"], 18000)
        self.assertEqual(len(w.conns), 2)

    def test_schedule(self):
        w = floor.WireSampler(5433)
        now = [0.0]
        with mock.patch.object(floor.time, "monotonic", side_effect=lambda: now[0]), \
                mock.patch.object(w, "sample") as sample:
            for t in (0.0, 0.05, 0.1, 0.15, 0.2, 0.4, 0.8, 1.5, 3.0, 7.9, 8.0, 13.0):
                now[0] = t
                w.tick()
        # due at 0.1, 0.2, 0.4, 0.8, 1.5, 3 s, then every 5 s (8, 13, ...)
        self.assertEqual(sample.call_count, 8)


if __name__ == "__main__":
    unittest.main()
