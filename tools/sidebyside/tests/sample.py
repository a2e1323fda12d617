"""Hand-made round results for the report's tests: what measure_engine would have stored
for two engines: postgres measured (l.i0 and qr100 in two rounds, l.x once; iibench.py's
qr100 run of round 2 failed, so that round has no dbperf/iibench ratio), innodb failed at
its start. The numbers are chosen so that the per-op figures are easy to check by hand:

  l.i0  r1: dbperf 0.5 s / 1,000,000 rows = 0.5 µs/row, server 9.5 s -> 9.5 µs/row,
            share 0.5 / (0.5 + 9.5) = 5%; iibench.py 4.0 s -> 4 µs/row, ratio 0.125;
            floor 0.4 µs/row -> dbperf/floor 1.25
        r2: dbperf 0.7 µs/row, server 10.5, share 0.7 / 11.2 = 6.25%; iibench.py 3.5,
            ratio 0.2; floor 0.5 -> 1.4
  l.x   r1: dbperf 0.02 s / 1,000,000 indexed rows = 0.02 µs/row
  qr100 r1: dbperf 0.09 s / 3000 queries = 30 µs, iibench.py 0.174 s / 2900 = 60 µs,
            ratio 0.5; floor 25 µs -> 1.2
        r2: dbperf 0.096 s / 3000 = 32 µs; iibench.py failed; floor 25.6 -> 1.25
"""

import types


def args(**kw):
    """The parsed options the report reads."""
    a = dict(engines=["postgres", "innodb"], steps=["l.i0", "l.x", "qr100"], rows=1000000,
             rows2=500000, time=30.0, rounds=2, floor_secs=3.0, settle=20.0, out=None)
    a.update(kw)
    return types.SimpleNamespace(**a)


def _dbperf(rnd, ops, client, server, settle, primary="insert", statements=None):
    return {"round": rnd, "settle_sec": settle, "t_start": 1.0, "t_end": 2.0,
            "outside": {"rc": 0, "user_sec": client + 0.1, "sys_sec": 0.1, "wall_sec": 5.0,
                        "maxrss_kb": 50000, "timed_out": False},
            "server_cpu_sec_outside": server + 0.1, "machine_busy_sec_outside": client + server + 1.0,
            "status": "ok", "error": None, "seconds": 4.5, "primary": primary, "ops": ops,
            "counts": {primary: ops}, "statements": statements or {primary: ops},
            "client_cpu_sec": client, "server_cpu_sec": server, "machine_busy_sec": None,
            "conn_cpu": {primary: server * 0.9}}


def _iibench(rnd, ops, client, server, settle, busy):
    return {"round": rnd, "settle_sec": settle, "t_start": 3.0, "t_end": 4.0,
            "client_cpu_sec": client, "server_cpu_sec": server, "machine_busy_sec": busy,
            "seconds": 6.0, "ops": ops, "inserted": ops, "errors": []}


def _floor(rnd, us_per_op, us_per_rt, burn, req, rep, rt_per_op, settle):
    return {"round": rnd, "transport": "tcp", "burn_us": burn, "burn_source": "dbperf conn_cpu",
            "req_bytes": req, "rep_bytes": rep, "rt_per_op": rt_per_op, "settle_sec": settle,
            "us_per_rt": us_per_rt, "us_per_op": us_per_op,
            "sample": {"round_trips": 1000, "user_sec": 0.2, "sys_sec": 0.1,
                       "server_cpu_sec": 2.6, "machine_busy_sec": 3.0}}


def postgres():
    """The result dict of the measured engine."""
    li0 = [
        {"round": 1, "order": ["dbperf", "floor", "iibench"],
         "dbperf": _dbperf(1, 1000000, 0.5, 9.5, 1.5, statements={"insert": 10000}),
         "floor": _floor(1, 0.4, 40.0, 950.0, 6000.0, 20.0, 0.01, 0.5),
         "iibench": _iibench(1, 1000000, 4.0, 10.0, 2.0, 14.5)},
        {"round": 2, "order": ["iibench", "dbperf", "floor"],
         "iibench": _iibench(2, 1000000, 3.5, 10.0, 20.0, 14.0),
         "dbperf": _dbperf(2, 1000000, 0.7, 10.5, 1.0, statements={"insert": 10000}),
         "floor": _floor(2, 0.5, 50.0, 1050.0, 6100.0, 20.0, 0.01, 0.5)},
    ]
    lx = [{"round": 1, "order": ["dbperf"],
           "dbperf": _dbperf(1, 1000000, 0.02, 3.0, 0.0, primary="index")}]
    qr = [
        {"round": 1, "order": ["dbperf", "floor", "iibench"],
         "dbperf": _dbperf(1, 3000, 0.09, 0.6, 0.5, primary="range-query"),
         "floor": _floor(1, 25.0, 25.0, 180.0, 16, 8, 1.0, 0.5),
         "iibench": _iibench(1, 2900, 0.174, 0.61, 0.5, 1.0)},
        {"round": 2, "order": ["iibench", "dbperf", "floor"],
         "iibench": dict(_iibench(2, None, 0.1, 0.2, 0.5, 0.4),
                         failed="exit 1; Traceback (most recent call last):"),
         "dbperf": _dbperf(2, 3000, 0.096, 0.6, 0.5, primary="range-query"),
         "floor": _floor(2, 25.6, 25.6, 180.0, 16, 8, 1.0, 0.5)},
    ]
    return {"server": {"pid": 4242, "version": "16.4", "dsn": "postgres://u:xxxxx@127.0.0.1:5433/ib",
                       "socket": None, "profile": "default"},
            "transport": {"dbperf": "tcp", "iibench": "tcp"},
            "steps": {"l.i0": {"rounds": li0}, "l.x": {"rounds": lx}, "qr100": {"rounds": qr}},
            "table_rows_end": 1000000, "seconds": 754.2}


def innodb():
    """The result dict of an engine whose server did not start."""
    return {"steps": {}, "seconds": 3.0,
            "error": "dbperf server start mariadb failed (exit 1): no mariadbd"}


def report():
    """The whole report as main builds it (before build_rows fills in each engine's rows)."""
    return {"script": "scripts/sidebyside.py", "started_at": "2024-05-01T10:00:00+0000",
            "params": {"engines": ["postgres", "innodb"], "steps": ["l.i0", "l.x", "qr100"],
                       "rows": 1000000, "rows2": 500000, "time": 30.0, "rounds": 2,
                       "floor_secs": 3.0, "settle": 20.0, "iibench": "/x/iibench.py",
                       "dbperf": "/x/bin/dbperf", "python": "/usr/bin/python3"},
            "host": {"cpus": 2, "loadavg_start": (0.5, 0.4, 0.3), "loadavg_end": (1.5, 1.0, 0.5)},
            "engines": {"postgres": postgres(), "innodb": innodb()},
            "finished_at": "2024-05-01T10:12:40+0000", "seconds": 760.0}
