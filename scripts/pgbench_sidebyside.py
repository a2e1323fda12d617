#!/usr/bin/env python3
"""Measure dbperf's `run script` against pgbench on one managed PostgreSQL: pgbench's
built-in tpcb-like and select-only scripts, same tables, same clients, in paired rounds,
and print TPS and client CPU per transaction of each, and their ratios (issue 41).

Usage (from the repository root, after `make build`; pgbench is Debian's
postgresql-client-15, /usr/lib/postgresql/15/bin/pgbench):

    python3 scripts/pgbench_sidebyside.py
    python3 scripts/pgbench_sidebyside.py --scale-factor 2 --clients 2 --time 20 --rounds 3 --out pgb

The script starts one throwaway PostgreSQL (`dbperf server start postgres` in a temporary
--workdir; stopped at the end, also on an error or Ctrl-C), builds pgbench's tables with
`pgbench -i -s N` (pgbench's own initialization), then runs --rounds rounds of, for each
script (tpcb-like, then select-only):

    odd rounds:   dbperf, pgbench
    even rounds:  pgbench, dbperf

each for --time seconds with --clients clients (pgbench -j --pgbench-threads: 1 by
default, pgbench's default; dbperf runs one goroutine per client). Both use server-side prepared statements over TCP (pgbench -M prepared; dbperf
prepares every statement but BEGIN and COMMIT, which it sends as text) and neither
vacuums before a measurement (pgbench -n). Before every measurement the script waits
until the server is quiet (as scripts/sidebyside.py).

 - pgbench: `pgbench -n -M prepared -b SCRIPT -c C -j J -T T`; its client CPU is the
   rusage of its whole process; transactions from its "number of transactions actually
   processed" line, TPS from its "tps =" line.
 - dbperf: `dbperf run script --dsn ... -b SCRIPT --scale-factor N --clients C --time T`;
   its client CPU is the rusage of its whole process too (start-up, its results store and
   /proc sampling included), and, for reference, the step's own figure from `dbperf
   report --format json` (client_cpu_sec ÷ the step's transactions); TPS is the step's.

The ratios are dbperf ÷ pgbench per round (TPS, whole-process client CPU per
transaction); the table shows the median and min-max over rounds.
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
SCRIPTS = ("tpcb-like", "select-only")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dbperf", default=os.path.join(REPO, "bin", "dbperf"),
                   help="dbperf binary (default: bin/dbperf; run `make build`)")
    p.add_argument("--pgbench", default="/usr/lib/postgresql/15/bin/pgbench",
                   help="pgbench binary (default: Debian's PostgreSQL 15 pgbench)")
    p.add_argument("--scale-factor", type=int, default=2, help="pgbench -i -s (default 2)")
    p.add_argument("--clients", type=int, default=2, help="clients (default 2)")
    p.add_argument("--pgbench-threads", type=int, default=1,
                   help="pgbench -j (default 1, pgbench's; dbperf runs one goroutine per client)")
    p.add_argument("--time", type=int, default=20, help="seconds per measurement (default 20)")
    p.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--settle", type=float, default=20,
                   help="wait at most this many seconds for a quiet server before each measurement")
    p.add_argument("--scripts", default=",".join(SCRIPTS),
                   help="the scripts run by both, comma-separated: a pgbench built-in name, or a FILE.sql "
                        "(pgbench -f, dbperf -f; e.g. scripts/tpcb-pipelined.sql) (default %(default)s)")
    p.add_argument("--out", help="also write OUT.md and OUT.json")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = p.parse_args(argv)
    problems = []
    a.scripts = [x.strip() for x in a.scripts.split(",") if x.strip()]
    for x in a.scripts:
        if x.endswith(".sql") and not os.path.isfile(x):
            problems.append("--scripts: %s is not a file" % x)
        elif not x.endswith(".sql") and x not in ("tpcb-like", "simple-update", "select-only"):
            problems.append("--scripts: %s: give a pgbench built-in (tpcb-like, simple-update, select-only) or a FILE.sql" % x)
    if not os.access(a.dbperf, os.X_OK):
        problems.append("--dbperf %s is not an executable: run `make build`" % a.dbperf)
    if not os.access(a.pgbench, os.X_OK):
        problems.append("--pgbench %s is not an executable: apt-get install postgresql-client-15" % a.pgbench)
    if a.scale_factor < 1 or a.clients < 1 or a.time < 1 or a.rounds < 1 or a.pgbench_threads < 1:
        problems.append("--scale-factor, --clients, --pgbench-threads, --time and --rounds must be at least 1")
    elif a.pgbench_threads > a.clients:
        problems.append("--pgbench-threads must be at most --clients (pgbench's rule)")
    if problems:
        for m in problems:
            print("pgbench_sidebyside: " + m, file=sys.stderr)
        sys.exit(2)
    return a


def pgbench_env(conn):
    env = os.environ.copy()
    env.update({"PGHOST": conn["host"], "PGPORT": str(conn["port"]), "PGUSER": conn["user"],
                "PGPASSWORD": conn["password"], "PGDATABASE": conn["db"]})
    if conn.get("sslmode"):
        env["PGSSLMODE"] = conn["sslmode"]
    return env


def parse_pgbench(path):
    with open(path, errors="replace") as f:
        text = f.read()
    n = re.search(r"^number of transactions actually processed:\s+(\d+)", text, re.M)
    tps = re.search(r"^tps = ([0-9.]+)", text, re.M)
    return (int(n.group(1)) if n else None), (float(tps.group(1)) if tps else None)


def script_args(script):
    """pgbench's and dbperf's arguments naming a script: -b NAME, or -f FILE."""
    if script.endswith(".sql"):
        return ["-f", os.path.abspath(script)]
    return ["-b", script]


def script_tag(script):
    """A file-name-safe name of a script."""
    return os.path.basename(script).replace(".sql", "")


def measure_pgbench(a, conn, tmp, rnd, script):
    out = os.path.join(tmp, "pgbench-%s-r%d.out" % (script_tag(script), rnd))
    argv = [a.pgbench, "-n", "-M", "prepared"] + script_args(script) + ["-c", str(a.clients), "-j", str(a.pgbench_threads),
            "-T", str(a.time)]
    ru = sbs.run_measured(argv, tmp, pgbench_env(conn), out, a.time + 120)
    n, tps = parse_pgbench(out)
    if ru["rc"] != 0 or not n:
        raise sbs.EngineFailed("pgbench %s failed (exit %s): %s" % (script, ru["rc"], sbs.tail(out)))
    return {"tx": n, "tps": tps, "cpu_sec": ru["user_sec"] + ru["sys_sec"], "wall_sec": ru["wall_sec"]}


def measure_dbperf(a, dsn, tmp, rnd, script):
    results = os.path.join(tmp, "dbperf-%s-r%d.db" % (script_tag(script), rnd))
    out = os.path.join(tmp, "dbperf-%s-r%d.out" % (script_tag(script), rnd))
    argv = [a.dbperf, "run", "script", "--engine", "postgres", "--dsn", dsn] + script_args(script) + [
            "--scale-factor", str(a.scale_factor), "--clients", str(a.clients), "--time", str(a.time),
            "--results", results, "--quiet"]
    ru = sbs.run_measured(argv, tmp, os.environ.copy(), out, a.time + 300)
    if ru["rc"] != 0:
        raise sbs.EngineFailed("dbperf run failed (exit %s): %s" % (ru["rc"], sbs.tail(out)))
    rep = sbs.subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                             stdout=sbs.subprocess.PIPE, stderr=sbs.subprocess.STDOUT, text=True)
    if rep.returncode != 0:
        raise sbs.EngineFailed("dbperf report failed: %s" % rep.stdout[-800:])
    steps = [s for s in json.loads(rep.stdout)["runs"][0]["steps"] if s["name"] == "run"]
    if not steps or steps[0]["status"] != "ok":
        raise sbs.EngineFailed("dbperf's run step did not run: %s" % (steps[0] if steps else "absent"))
    st = sbs.dbperf_step(steps[0])
    return {"tx": st["ops"], "tps": st["ops"] / st["seconds"], "cpu_sec": ru["user_sec"] + ru["sys_sec"],
            "wall_sec": ru["wall_sec"], "step_cpu_sec": st["client_cpu_sec"],
            "server_cpu_sec": st["server_cpu_sec"], "step_sec": st["seconds"]}


def us(sec, n):
    return None if not sec or not n else sec * 1e6 / n


def med(vals):
    vals = [v for v in vals if v is not None]
    return (statistics.median(vals), min(vals), max(vals)) if vals else (None, None, None)


def summarize(rounds, script):
    rs = [r[script] for r in rounds]
    return {
        "pgbench_tps": med([r["pgbench"]["tps"] for r in rs]),
        "dbperf_tps": med([r["dbperf"]["tps"] for r in rs]),
        "tps_ratio": med([r["dbperf"]["tps"] / r["pgbench"]["tps"] for r in rs]),
        "pgbench_us": med([us(r["pgbench"]["cpu_sec"], r["pgbench"]["tx"]) for r in rs]),
        "dbperf_us": med([us(r["dbperf"]["cpu_sec"], r["dbperf"]["tx"]) for r in rs]),
        "dbperf_step_us": med([us(r["dbperf"]["step_cpu_sec"], r["dbperf"]["tx"]) for r in rs]),
        "cpu_ratio": med([us(r["dbperf"]["cpu_sec"], r["dbperf"]["tx"]) /
                          us(r["pgbench"]["cpu_sec"], r["pgbench"]["tx"]) for r in rs]),
    }


def fmt(t, digits=3):
    m, lo, hi = t
    if m is None:
        return "–"
    return "%.*g (%.*g–%.*g)" % (digits, m, digits, lo, digits, hi)


def fmt_tps(t):
    m, lo, hi = t
    if m is None:
        return "–"
    return "%.0f (%.0f–%.0f)" % (m, lo, hi)


def render(a, version, sums, n):
    lines = [
        "| script | client | TPS, median (min–max) | client CPU µs/transaction, median (min–max) |",
        "|---|---|---:|---:|",
    ]
    for script in a.scripts:
        s = sums[script]
        lines += [
            "| %s | pgbench -M prepared (whole process) | %s | %s |" % (script, fmt_tps(s["pgbench_tps"]), fmt(s["pgbench_us"])),
            "| %s | dbperf run script (whole process) | %s | %s |" % (script, fmt_tps(s["dbperf_tps"]), fmt(s["dbperf_us"])),
            "| %s | dbperf run script (the step's own figure) | | %s |" % (script, fmt(s["dbperf_step_us"])),
            "| %s | **dbperf ÷ pgbench** | **%s** | **%s** |" % (script, fmt(s["tps_ratio"], 2), fmt(s["cpu_ratio"], 2)),
        ]
    lines += [
        "",
        "PostgreSQL %s, pgbench -i -s %d, %d clients (pgbench -j %d), %d s per measurement, "
        "%d rounds, prepared statements over TCP." % (version, a.scale_factor, a.clients, a.pgbench_threads, a.time, n),
    ]
    return "\n".join(lines)


def main(argv):
    a = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="pgbench-sidebyside-")
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
        init = os.path.join(tmp, "init.out")
        sbs.log("pgbench -i -s %d" % a.scale_factor)
        ru = sbs.run_measured([a.pgbench, "-i", "-s", str(a.scale_factor)], tmp, pgbench_env(conn), init, 1800)
        if ru["rc"] != 0:
            raise sbs.EngineFailed("pgbench -i failed: %s" % sbs.tail(init))
        for rnd in range(1, a.rounds + 1):
            order = ["dbperf", "pgbench"] if rnd % 2 else ["pgbench", "dbperf"]
            rec = {"round": rnd, "time": a.time}
            for script in a.scripts:
                rec[script] = {}
                for tool in order:
                    sbs.settle(pid, a.settle)
                    sbs.log("round %d: %s %s" % (rnd, script, tool))
                    rec[script][tool] = (measure_dbperf(a, dsn, tmp, rnd, script) if tool == "dbperf"
                                         else measure_pgbench(a, conn, tmp, rnd, script))
            rounds.append(rec)
        version = state.get("version", "")
    except sbs.Interrupted:
        print("interrupted", file=sys.stderr)
        return 130
    except sbs.EngineFailed as e:
        print("pgbench_sidebyside: %s" % e, file=sys.stderr)
        return 1
    finally:
        srv.stop()
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            sbs.log("kept %s" % tmp)
    sums = {s: summarize(rounds, s) for s in a.scripts}
    text = render(a, version, sums, len(rounds))
    print(text)
    if a.out:
        with open(a.out + ".md", "w") as f:
            f.write("<!-- scripts/pgbench_sidebyside.py %s; %s -->\n\n%s\n"
                    % (" ".join(argv), time.strftime("%Y-%m-%dT%H:%M:%S%z"), text))
        with open(a.out + ".json", "w") as f:
            json.dump({"args": vars(a), "rounds": rounds, "summary": sums}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
