"""The rounds: per engine one server, and per step --rounds rounds of dbperf's run, the
floor and iibench.py's run (the order alternating), each measurement's raw numbers stored
in the engine's result dict as they come."""

import json
import os
import re
import signal
import subprocess
import time

from .children import run_measured, tail
from .common import (ENGINES, INSERT_STEPS, KNOWN_STEPS, QUERY_REP_BYTES, QUERY_REQ_BYTES,
                     REPO, RW_STEP, EngineFailed, delta, log)
from .floor import MYSQL_WIRE_VARS, WireSampler, mysql_wire_status
from .procfs import alive, machine_busy_sec, tree_cpu_sec
from .servers import Server, parse_dsn, run_sql, settle

TABLE = "pi1"  # dbperf's table for client 1; iibench uses the same name (np.sh: pi${n})
IIBENCH_SEED = 3221223452  # iibench.py's default --seed
DBPERF_SEED = 3221223452   # dbperf's default --seed


def iibench_step_args(step, a):
    """iibench.py's step-specific flags, as iq.sh passes them to np.sh (reference §1.9)."""
    if step == "l.i0":
        return (["--max_rows=%d" % a.rows, "--setup", "--num_secondary_indexes=0",
                 "--rows_per_commit=100", "--inserts_per_second=0", "--query_threads=0"])
    if step == "l.x":
        return (["--max_rows=100", "--num_secondary_indexes=3", "--rows_per_commit=100",
                 "--inserts_per_second=0", "--query_threads=0", "--secondary_at_end"])
    if step in ("l.i1", "l.i2"):
        frac, rpc = (4 / 5, 50) if step == "l.i1" else (1 / 5, 5)
        return (["--max_rows=%d" % max(1, round(a.rows2 * frac)), "--num_secondary_indexes=3",
                 "--rows_per_commit=%d" % rpc, "--inserts_per_second=0", "--query_threads=0",
                 "--delete_per_insert"])
    m = RW_STEP.match(step)
    if m:
        ips = int(m.group(2))
        args = ["--max_rows=%d" % max(1, int(round(a.time * ips))), "--num_secondary_indexes=3",
                "--rows_per_commit=50", "--inserts_per_second=%d" % ips, "--query_threads=1",
                "--delete_per_insert"]
        if m.group(1) == "p":
            args.append("--query_pk_only")
        return args
    return None


def parse_iibench(path):
    """Counts from iibench's output (reference §1.11)."""
    out = {"inserted": None, "deleted": None, "queries": None, "queries_stats": None,
           "retries": None, "index_secs": None, "errors": []}
    qthreads = []
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 17 and cols[0] != "i_sec":
                last = cols
                continue
            m = re.match(r"Query thread: (\d+) queries", line)
            if m:
                qthreads.append(int(m.group(1)))
            m = re.match(r"Totals: [\d.]+ secs, [\d.]+ rows/sec, (\d+) rows, (\d+) (\d+) (\d+)", line)
            if m:
                out["inserted"] = int(m.group(1))
                out["retries"] = [int(m.group(i)) for i in (2, 3, 4)]
            m = re.match(r"Created secondary indexes in ([\d.]+) seconds", line)
            if m:
                out["index_secs"] = float(m.group(1))
            if re.match(r"(SQL error|Query error|Traceback|.*Error:)", line):
                out["errors"].append(line.strip())
    if last:
        if out["inserted"] is None:
            out["inserted"] = int(last[11])
        out["deleted"] = int(last[12])
        out["queries_stats"] = int(last[13])
    if qthreads:
        out["queries"] = sum(qthreads)  # exact; the stats line lags by up to 15 per thread
    elif out["queries_stats"] is not None:
        out["queries"] = out["queries_stats"]
    return out


def redact_argv(argv):
    """argv as recorded: the value of a --db_password= argument replaced by xxxxx."""
    return [x if not x.startswith("--db_password=") or x == "--db_password=" else "--db_password=xxxxx"
            for x in argv]


def dbperf_step(s):
    prim = s.get("primary")
    ops = s.get("ops") or {}
    hw = s.get("hw") or {}
    count = (ops.get(prim) or {}).get("count")
    srv = (hw.get("server") or {}).get("cpu_sec")
    busy = hw.get("cpu_busy_sec")  # every process's CPU (newer dbperf), else /proc/stat's ticks
    if busy is None and all(("cpu_%s_sec" % k) in hw for k in ("user", "nice", "system", "irq", "softirq")):
        busy = sum(hw["cpu_%s_sec" % k] for k in ("user", "nice", "system", "irq", "softirq"))
    return {"status": s.get("status"), "error": s.get("error"), "seconds": s.get("seconds"),
            "primary": prim, "ops": count,
            "counts": {k: v.get("count") for k, v in ops.items()},
            "statements": {k: v.get("statements") for k, v in ops.items()},
            "client_cpu_sec": s.get("client_cpu_sec"),
            "client_cpu_us_per_op": s.get("client_cpu_us_per_op"),
            "server_cpu_sec": srv, "server_cpupq": hw.get("server_cpupq"),
            "machine_busy_sec": busy, "conn_cpu": s.get("conn_cpu"),
            "audit": s.get("audit"), "absent": hw.get("absent")}


def iibench_ops(step, rec):
    if RW_STEP.match(step):
        return rec.get("queries")
    return rec.get("inserted")


class EngineRun:
    """One engine's server and the three kinds of measurement made on it."""

    def __init__(self, name, a, floor, tmp, res):
        self.name, self.a, self.floor, self.res = name, a, floor, res
        self.dbengine, self.storage, self.dbms, _ = ENGINES[name]
        self.edir = os.path.join(tmp, name)
        os.makedirs(self.edir)
        self.server = Server(a.dbperf, self.dbengine, self.storage, os.path.join(self.edir, "servers"))
        self.t0 = time.monotonic()

    def start(self):
        log("[%s] starting the server" % self.name)
        st = self.server.start()
        self.pid = st["pid"]
        self.dsn_text = st["dsn"]
        # dbperf reads the DSN from its file (no password on a command line or in argv below).
        self.dsn_arg = "@" + st["dsn_file"] if st.get("dsn_file") else st["dsn"]
        self.res["server"] = {"pid": self.pid, "version": st.get("version"), "dsn": st.get("dsn_redacted"),
                              "socket": st.get("socket"), "profile": st.get("profile")}
        dsn = self.dsn = parse_dsn(st["dsn"])
        # dbperf connects as the printed DSN says; iibench.py as the reference drivers do
        # (np.sh): Postgres over TCP to 127.0.0.1, MySQL over the unix socket.
        self.transport = dsn["transport"]
        self.res["transport"] = {"dbperf": dsn["transport"],
                                 "iibench": "tcp" if self.dbms == "postgres" else "unix"}
        if dsn["kind"] == "postgres":
            self.conn = {"kind": "postgres", "host": dsn["host"], "port": dsn["port"],
                         "db": dsn["db"], "user": dsn["user"], "password": dsn["password"]}
        else:
            sock = dsn["socket"] or st.get("socket")
            if not sock:
                raise EngineFailed("the server's state names no unix socket for iibench.py")
            self.conn = {"kind": "mysql", "socket": sock, "db": dsn["db"], "user": dsn["user"],
                         "password": dsn["password"]}
        self.env = os.environ.copy()
        common = ["--dbms=%s" % self.dbms, "--db_name=%s" % self.conn["db"],
                  "--secs_per_report=1", "--db_user=%s" % self.conn["user"],
                  "--db_password=%s" % self.conn["password"], "--table_name=%s" % TABLE,
                  "--data_length_min=10", "--data_length_max=20", "--dbopt=none", "--my_id=1"]
        if self.dbms == "postgres":
            # iibench.py has no port flag: libpq takes it from PGPORT.
            self.env["PGPORT"] = str(self.conn["port"])
            if dsn.get("sslmode"):
                self.env["PGSSLMODE"] = dsn["sslmode"]
            common += ["--db_host=%s" % self.conn["host"], "--engine=pg", "--unique_checks=1",
                       "--bulk_load=0", "--use_prepared_query"]
        else:
            common += ["--db_host=127.0.0.1", "--engine=%s" % self.storage, "--engine_options=",
                       "--unique_checks=1", "--bulk_load=0", "--db_socket=%s" % self.conn["socket"]]
        self.iibench_common = common

    def stop(self):
        log("[%s] stopping the server" % self.name)
        self.server.stop()

    def now(self):
        return round(time.monotonic() - self.t0, 3)

    def check_server(self):
        if not alive(self.pid):
            raise EngineFailed("the server (pid %d) died; its log: %s"
                               % (self.pid, (self.res.get("server") or {}).get("dsn")))

    def fresh_table(self):
        """Drop the table before a tool's l.i0, so both start from the same empty database
        whatever the previous measurement left (PostgreSQL: and checkpoint its WAL)."""
        run_sql(self.a, self.conn, ["drop table if exists %s" % TABLE]
                + (["checkpoint"] if self.dbms == "postgres" else []), timeout=1800)

    # ---- dbperf
    def run_dbperf(self, step, rnd):
        a = self.a
        results = os.path.join(self.edir, "dbperf-%s-r%d.db" % (step, rnd))
        argv = [a.dbperf, "run", "insertbench", "--engine", self.dbengine, "--dsn", self.dsn_arg,
                "--steps", step, "--rows", str(a.rows), "--rows2", str(a.rows2),
                "--time", "%g" % a.time, "--clients", "1", "--results", results,
                "--seed", str(DBPERF_SEED + rnd - 1),
                "--label", "sidebyside-%s-%s-r%d" % (self.name, step, rnd), "--quiet"]
        if self.storage:
            argv += ["--mysql-storage-engine", self.storage]
        rec = {"round": rnd, "settle_sec": settle(self.pid, a.settle)}
        sampler, status0 = None, None
        if step in INSERT_STEPS:
            if self.transport == "tcp":
                sampler = WireSampler(self.dsn["port"])
            elif self.conn["kind"] == "mysql":
                status0 = mysql_wire_status(a, self.conn)
        log("[%s] %s round %d: dbperf" % (self.name, step, rnd))
        timeout = a.load_timeout if step.startswith("l.") else 3 * a.time + 600
        out = os.path.join(self.edir, "dbperf-%s-r%d.log" % (step, rnd))
        rec["t_start"] = self.now()
        cpu0, busy0 = tree_cpu_sec(self.pid), machine_busy_sec()
        r = run_measured(argv, REPO, os.environ.copy(), out, timeout=timeout,
                         stop_signal=signal.SIGINT, tick=sampler.tick if sampler else None)
        cpu1, busy1 = tree_cpu_sec(self.pid), machine_busy_sec()
        rec["t_end"] = self.now()
        rec.update({"argv": argv, "outside": r, "server_cpu_sec_outside": delta(cpu0, cpu1),
                    "machine_busy_sec_outside": busy1 - busy0})
        if r["rc"] not in (0, 1):
            rec["failed"] = "dbperf run exited %s%s: %s" % (
                r["rc"], " (timed out)" if r["timed_out"] else "", tail(out, 8).strip())
            self.check_server()
            log("[%s] %s round %d: dbperf FAILED: %s" % (self.name, step, rnd, rec["failed"]))
            return rec
        rep = subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if rep.returncode != 0:
            rec["failed"] = "dbperf report failed: %s" % rep.stderr.strip()
            return rec
        run = json.loads(rep.stdout)["runs"][-1]
        rec["run_status"] = run.get("status")
        s = next((x for x in run.get("steps") or [] if x.get("name") == step), None)
        if s is None:
            rec["failed"] = "dbperf's report has no step %s: %s" % (step, tail(out, 8).strip())
            return rec
        rec.update(dbperf_step(s))
        if rec["status"] != "ok":
            rec["failed"] = "step %s: %s" % (rec["status"], rec.get("error") or tail(out, 5).strip())
            log("[%s] %s round %d: dbperf FAILED: %s" % (self.name, step, rnd, rec["failed"]))
        stm = sum(v for v in (rec.get("statements") or {}).values() if v)
        if sampler:
            rec["wire"] = sampler.result()
        elif status0 is not None:
            status1 = mysql_wire_status(a, self.conn)
            d = {k: status1[k] - status0[k] for k in MYSQL_WIRE_VARS if k in status0 and k in status1}
            if stm and "Bytes_received" in d:
                rec["wire"] = {"source": "the server's Bytes_received and Bytes_sent over the step "
                                         "/ dbperf's statements",
                               "req_bytes": d["Bytes_received"] / stm,
                               "rep_bytes": d.get("Bytes_sent", 0) / stm,
                               "status_delta": d, "statements": stm}
        return rec

    # ---- iibench.py
    def run_iibench(self, step, rnd):
        a = self.a
        flags = iibench_step_args(step, a)
        argv = [a.python, a.iibench] + self.iibench_common + flags + \
            ["--seed=%d" % (IIBENCH_SEED + 100 * rnd + KNOWN_STEPS.index(step))]
        sdir = os.path.join(self.edir, "iibench-%s-r%d" % (step, rnd))
        os.makedirs(sdir)
        rec = {"round": rnd, "settle_sec": settle(self.pid, a.settle)}
        log("[%s] %s round %d: iibench.py" % (self.name, step, rnd))
        timeout = a.load_timeout if step.startswith("l.") else 3 * a.time + 600
        rec["t_start"] = self.now()
        cpu0, busy0 = tree_cpu_sec(self.pid), machine_busy_sec()
        r = run_measured(argv, sdir, self.env, os.path.join(sdir, "out.txt"), timeout)
        cpu1, busy1 = tree_cpu_sec(self.pid), machine_busy_sec()
        rec["t_end"] = self.now()
        p = parse_iibench(os.path.join(sdir, "out.txt"))
        rec.update({"argv": redact_argv(argv), "rusage": r,
                    "client_cpu_sec": r["user_sec"] + r["sys_sec"] if r["user_sec"] is not None else None,
                    "server_cpu_sec": delta(cpu0, cpu1), "machine_busy_sec": busy1 - busy0,
                    "seconds": r["wall_sec"], **p})
        rec["ops"] = iibench_ops(step, rec)
        if r["rc"] != 0 or r["timed_out"] or p["errors"] or not rec["ops"]:
            rec["failed"] = ("timed out after %ds; " % timeout if r["timed_out"] else "") + \
                "exit %s; %s" % (r["rc"], "; ".join(p["errors"][:3]) or
                                 tail(os.path.join(sdir, "out.txt"), 5).strip())
            log("[%s] %s round %d: iibench.py FAILED: %s" % (self.name, step, rnd, rec["failed"]))
            self.check_server()
        return rec

    # ---- floor
    def run_floor(self, step, d, rnd):
        """The C client right after dbperf's run of this round, with its server CPU per
        statement (and, for inserts, its statements' sizes on the wire)."""
        a = self.a
        rec = {"round": rnd, "transport": self.transport}
        if not d or d.get("failed"):
            rec["skipped"] = "dbperf's run failed"
            return rec
        conn_cpu = d.get("conn_cpu") or {}
        if step in INSERT_STEPS:
            stm = sum(v for v in (d.get("statements") or {}).values() if v)
            rows = d.get("ops")
            csum = sum(v for v in conn_cpu.values() if v is not None) if conn_cpu else None
            wire = d.get("wire") or {}
            if not stm or not rows:
                rec["skipped"] = "no statement or row count in dbperf's report"
                return rec
            if not wire.get("req_bytes"):
                rec["skipped"] = "the statements' size on the wire was not measured"
                return rec
            req, rep = wire["req_bytes"], wire.get("rep_bytes") or QUERY_REP_BYTES
            rt_per_op = stm / rows
            per = stm
            what = "statement"
        else:
            req, rep, rt_per_op = QUERY_REQ_BYTES, QUERY_REP_BYTES, 1.0
            per = d.get("ops")
            # the query actor's connection ("query"; the op itself is range-query/point-query)
            csum = conn_cpu.get("query", conn_cpu.get(d.get("primary")))
            what = "query"
        if csum:
            burn_cpu, src = csum, "dbperf conn_cpu per %s" % what
        elif d.get("server_cpu_sec") is not None:
            burn_cpu, src = d["server_cpu_sec"], "dbperf hw.server.cpu_sec per %s" % what
        else:
            rec["skipped"] = "no server CPU in dbperf's report"
            return rec
        if not per:
            rec["skipped"] = "no ops in dbperf's report"
            return rec
        burn_us = burn_cpu * 1e6 / per
        rec.update({"burn_us": burn_us, "burn_source": src, "req_bytes": req, "rep_bytes": rep,
                    "rt_per_op": rt_per_op,
                    "server_cpu_per_stmt_us": (d["server_cpu_sec"] * 1e6 / per
                                               if d.get("server_cpu_sec") is not None else None)})
        rec["settle_sec"] = settle(self.pid, a.settle)
        log("[%s] %s round %d: floor (%s, burn %.1f µs, %d/%d bytes, %gs)"
            % (self.name, step, rnd, self.transport, burn_us, req, rep, a.floor_secs))
        rec["t_start"] = self.now()
        rec["sample"] = s = self.floor.measure(self.transport, burn_us, req, rep, a.floor_secs)
        rec["t_end"] = self.now()
        rec["us_per_rt"] = s["cpu_us_per_rt"]
        rec["us_per_op"] = s["cpu_us_per_rt"] * rt_per_op
        return rec


def measure_engine(name, a, floor, tmp, res):
    """Fills res (the engine's JSON) measurement by measurement, so a failure keeps what
    was measured."""
    er = EngineRun(name, a, floor, tmp, res)
    res["steps"] = {}
    try:
        er.start()
        for step in a.steps:
            srec = res["steps"][step] = {"rounds": []}
            if step == "l.x":
                # Once: ~0 client CPU for both; the table (whichever tool loaded it last)
                # gets dbperf's three secondary indexes.
                rr = {"round": 1, "order": ["dbperf"]}
                srec["rounds"].append(rr)
                rr["dbperf"] = er.run_dbperf(step, 1)
                continue
            for rnd in range(1, a.rounds + 1):
                order = ["dbperf", "floor", "iibench"] if rnd % 2 else ["iibench", "dbperf", "floor"]
                rr = {"round": rnd, "order": order}
                srec["rounds"].append(rr)
                for who in order:
                    if who == "floor":
                        rr["floor"] = er.run_floor(step, rr.get("dbperf"), rnd)
                        continue
                    if step == "l.i0":
                        er.fresh_table()
                    rr[who] = er.run_dbperf(step, rnd) if who == "dbperf" else er.run_iibench(step, rnd)
        res["table_rows_end"] = _count(a, er.conn)
    finally:
        res["seconds"] = round(time.monotonic() - er.t0, 1)
        er.stop()


def _count(a, conn):
    try:
        return run_sql(a, conn, ["select count(*) from %s" % TABLE])[0][0][0]
    except EngineFailed as e:
        log("count(*) failed: %s" % e)
        return None
