#!/usr/bin/env python3
"""Measure dbperf's sysbench point-query against sysbench 1.0.20's oltp_point_select on one
managed PostgreSQL, same table, one thread, in paired rounds, and print their client CPU
per query and the ratio (issue 10).

Usage (from the repository root, after `make build`; Debian: `apt-get install sysbench`):

    python3 scripts/sysbench_sidebyside.py
    python3 scripts/sysbench_sidebyside.py --table-size 100000 --time 20 --rounds 3 --out sb

The script starts one throwaway PostgreSQL (`dbperf server start postgres` in a temporary
--workdir; stopped at the end, also on an error or Ctrl-C), creates the table with
sysbench's own `oltp_point_select prepare` (sbtest1, --table-size rows, the secondary
index), then runs --rounds rounds of

    odd rounds:   dbperf point-query, sysbench oltp_point_select
    even rounds:  sysbench oltp_point_select, dbperf point-query

each for --time seconds with one thread, on that table. Both use server-side prepared
statements over TCP (sysbench's default --db-ps-mode=auto; dbperf's default). Before every
measurement the script waits until the server is quiet (as scripts/sidebyside.py).

 - sysbench: `sysbench oltp_point_select --db-driver=pgsql ... --threads=1 --time=T run`;
   its client CPU is the rusage of its whole process; queries from its `queries:` line.
 - dbperf: `dbperf run sysbench --dsn ... --steps point-query --threads 1 --time T`; its
   client CPU is the rusage of its whole process too (start-up, its results store and
   /proc sampling included, as sysbench's start-up is), and, for reference, the step's own
   figure from `dbperf report --format json` (client_cpu_sec ÷ the step's queries).

The ratio is dbperf ÷ sysbench of whole-process client CPU per query, per round; the
table shows the median and min-max over rounds.
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sidebyside as sbs  # noqa: E402  (the shared process, server and /proc helpers)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dbperf", default=os.path.join(REPO, "bin", "dbperf"),
                   help="dbperf binary (default: bin/dbperf; run `make build`)")
    p.add_argument("--sysbench", default=shutil.which("sysbench") or "sysbench",
                   help="sysbench binary (Debian: apt-get install sysbench; 1.0.20)")
    p.add_argument("--table-size", type=int, default=100000, help="rows of sbtest1 (default 100000)")
    p.add_argument("--time", type=int, default=20, help="seconds per measurement (default 20)")
    p.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--settle", type=float, default=20,
                   help="wait at most this many seconds for a quiet server before each measurement")
    p.add_argument("--out", help="also write OUT.md and OUT.json")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = p.parse_args(argv)
    problems = []
    if not os.access(a.dbperf, os.X_OK):
        problems.append("--dbperf %s is not an executable: run `make build`" % a.dbperf)
    if not shutil.which(a.sysbench):
        problems.append("--sysbench %s not found: apt-get install sysbench" % a.sysbench)
    if a.table_size < 1 or a.time < 1 or a.rounds < 1:
        problems.append("--table-size, --time and --rounds must be at least 1")
    if problems:
        for m in problems:
            print("sysbench_sidebyside: " + m, file=sys.stderr)
        sys.exit(2)
    return a


def sysbench_argv(a, conn, cmd):
    return [a.sysbench, "oltp_point_select", "--db-driver=pgsql",
            "--pgsql-host=%s" % conn["host"], "--pgsql-port=%d" % conn["port"],
            "--pgsql-user=%s" % conn["user"], "--pgsql-password=%s" % conn["password"],
            "--pgsql-db=%s" % conn["db"], "--tables=1", "--table-size=%d" % a.table_size,
            "--threads=1", "--time=%d" % a.time, "--events=0", "--rand-type=uniform", cmd]


def parse_sysbench(path):
    with open(path, errors="replace") as f:
        text = f.read()
    m = re.search(r"^\s*queries:\s+(\d+)", text, re.M)
    return int(m.group(1)) if m else None


def measure_sysbench(a, conn, tmp, rnd):
    out = os.path.join(tmp, "sysbench-r%d.out" % rnd)
    ru = sbs.run_measured(sysbench_argv(a, conn, "run"), tmp, os.environ.copy(), out, a.time + 120)
    q = parse_sysbench(out)
    if ru["rc"] != 0 or not q:
        raise sbs.EngineFailed("sysbench run failed (exit %s): %s" % (ru["rc"], sbs.tail(out)))
    return {"queries": q, "cpu_sec": ru["user_sec"] + ru["sys_sec"], "wall_sec": ru["wall_sec"]}


def measure_dbperf(a, dsn, tmp, rnd):
    results = os.path.join(tmp, "dbperf-r%d.db" % rnd)
    out = os.path.join(tmp, "dbperf-r%d.out" % rnd)
    argv = [a.dbperf, "run", "sysbench", "--engine", "postgres", "--dsn", dsn, "--steps", "point-query",
            "--threads", "1", "--time", str(a.time), "--tables", "1",
            "--table-size", str(a.table_size), "--results", results, "--quiet"]
    ru = sbs.run_measured(argv, tmp, os.environ.copy(), out, a.time + 300)
    if ru["rc"] != 0:
        raise sbs.EngineFailed("dbperf run failed (exit %s): %s" % (ru["rc"], sbs.tail(out)))
    rep = sbs.subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                             stdout=sbs.subprocess.PIPE, stderr=sbs.subprocess.STDOUT, text=True)
    if rep.returncode != 0:
        raise sbs.EngineFailed("dbperf report failed: %s" % rep.stdout[-800:])
    steps = [s for s in json.loads(rep.stdout)["runs"][0]["steps"] if s["name"] == "point-query"]
    if not steps or steps[0]["status"] != "ok":
        raise sbs.EngineFailed("dbperf's point-query step did not run: %s" % (steps[0] if steps else "absent"))
    st = sbs.dbperf_step(steps[0])
    return {"queries": st["ops"], "cpu_sec": ru["user_sec"] + ru["sys_sec"], "wall_sec": ru["wall_sec"],
            "step_cpu_sec": st["client_cpu_sec"], "server_cpu_sec": st["server_cpu_sec"],
            "step_sec": st["seconds"]}


def us(sec, n):
    return None if not sec or not n else sec * 1e6 / n


def summarize(rounds):
    def med(vals):
        vals = [v for v in vals if v is not None]
        return (statistics.median(vals), min(vals), max(vals)) if vals else (None, None, None)
    sb = med([us(r["sysbench"]["cpu_sec"], r["sysbench"]["queries"]) for r in rounds])
    db = med([us(r["dbperf"]["cpu_sec"], r["dbperf"]["queries"]) for r in rounds])
    step = med([us(r["dbperf"]["step_cpu_sec"], r["dbperf"]["queries"]) for r in rounds])
    ratio = med([us(r["dbperf"]["cpu_sec"], r["dbperf"]["queries"]) /
                 us(r["sysbench"]["cpu_sec"], r["sysbench"]["queries"]) for r in rounds])
    qps_sb = med([r["sysbench"]["queries"] / r["sysbench"]["wall_sec"] for r in rounds])
    qps_db = med([r["dbperf"]["queries"] / r["dbperf"]["step_sec"] for r in rounds])
    return {"sysbench_us": sb, "dbperf_us": db, "dbperf_step_us": step, "ratio": ratio,
            "sysbench_qps": qps_sb, "dbperf_qps": qps_db}


def fmt(t, digits=3):
    m, lo, hi = t
    if m is None:
        return "–"
    return "%.*g (%.*g–%.*g)" % (digits, m, digits, lo, digits, hi)


def render(a, version, s, n):
    lines = [
        "| client, 1 thread | client CPU µs/query, median (min–max) | queries/s, median (min–max) |",
        "|---|---:|---:|",
        "| sysbench 1.0.20 oltp_point_select (whole process) | %s | %s |" % (fmt(s["sysbench_us"]), fmt(s["sysbench_qps"])),
        "| dbperf sysbench point-query (whole process) | %s | %s |" % (fmt(s["dbperf_us"]), fmt(s["dbperf_qps"])),
        "| dbperf sysbench point-query (the step's own figure) | %s | |" % fmt(s["dbperf_step_us"]),
        "",
        "dbperf ÷ sysbench, client CPU per query (whole processes), median of %d rounds: **%s**"
        % (n, fmt(s["ratio"], 2)),
        "",
        "PostgreSQL %s, sbtest1 of %d rows, %d s per measurement, prepared statements over TCP."
        % (version, a.table_size, a.time),
    ]
    return "\n".join(lines)


def main(argv):
    a = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="sysbench-sidebyside-")
    os.chmod(tmp, 0o755)
    srv = sbs.Server(a.dbperf, "postgres", None, os.path.join(tmp, "servers"))
    os.makedirs(srv.workdir)
    os.chmod(srv.workdir, 0o755)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, sbs.on_signal)
    rounds = []
    try:
        sbs.log("starting PostgreSQL")
        state = srv.start()
        dsn, pid = state["dsn"], state["pid"]
        conn = sbs.parse_dsn(dsn)
        prep = os.path.join(tmp, "prepare.out")
        sbs.log("sysbench prepare: sbtest1, %d rows" % a.table_size)
        ru = sbs.run_measured(sysbench_argv(a, conn, "prepare"), tmp, os.environ.copy(), prep, 1800)
        if ru["rc"] != 0:
            raise sbs.EngineFailed("sysbench prepare failed: %s" % sbs.tail(prep))
        for rnd in range(1, a.rounds + 1):
            order = ["dbperf", "sysbench"] if rnd % 2 else ["sysbench", "dbperf"]
            rec = {"round": rnd, "time": a.time}
            for tool in order:
                sbs.settle(pid, a.settle)
                sbs.log("round %d: %s" % (rnd, tool))
                rec[tool] = measure_dbperf(a, dsn, tmp, rnd) if tool == "dbperf" else measure_sysbench(a, conn, tmp, rnd)
            rounds.append(rec)
        version = state.get("version", "")
    except sbs.Interrupted:
        print("interrupted", file=sys.stderr)
        return 130
    except sbs.EngineFailed as e:
        print("sysbench_sidebyside: %s" % e, file=sys.stderr)
        return 1
    finally:
        srv.stop()
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            sbs.log("kept %s" % tmp)
    s = summarize(rounds)
    text = render(a, version, s, len(rounds))
    print(text)
    if a.out:
        with open(a.out + ".md", "w") as f:
            f.write("<!-- scripts/sysbench_sidebyside.py %s; %s -->\n\n%s\n"
                    % (" ".join(argv), time.strftime("%Y-%m-%dT%H:%M:%S%z"), text))
        with open(a.out + ".json", "w") as f:
            json.dump({"args": vars(a), "rounds": rounds, "summary": s}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
