"""The command line: its options and their checks (bad input: one line on stderr, exit 2),
and main, which measures the engines one after the other and prints and writes the report.
Exit status: 0 all engines measured, 1 an engine or a measurement failed (the rest is still
printed), 2 bad input or a missing prerequisite, 130 interrupted."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .common import ENGINES, KNOWN_STEPS, REPO, BadInput, EngineFailed, Interrupted, log
from .floor import Floor
from .report import build_rows, engine_text, legend, write_out
from .rounds import measure_engine


def parse_args(argv, prog=None):
    p = argparse.ArgumentParser(
        prog=prog,
        description="Run dbperf and iibench.py side by side on one managed server per engine, "
                    "in paired rounds, and print their client CPU per operation, the ratios and "
                    "the round-trip floor. Needs bin/dbperf (make build), gcc, ss, and iibench.py's "
                    "drivers (Debian: apt-get install python3-psycopg2 python3-mysqldb; pip: "
                    "psycopg2-binary mysqlclient).")
    p.add_argument("--iibench", required=True, metavar="PATH",
                   help="path of iibench.py (mdcallag/mytools bench/ibench/iibench.py)")
    p.add_argument("--dbperf", default=os.path.join(REPO, "bin", "dbperf"), metavar="PATH",
                   help="dbperf binary (default: bin/dbperf of this repository; run `make build`)")
    p.add_argument("--python", metavar="PATH",
                   help="Python that runs iibench.py (default: this one, else /usr/bin/python3 "
                        "when only that one has the drivers)")
    p.add_argument("--engines", default="postgres,innodb,rocksdb",
                   help="comma-separated: postgres, innodb, rocksdb (default all three)")
    p.add_argument("--rows", type=int, default=1_000_000, help="rows l.i0 inserts (default 1000000)")
    p.add_argument("--rows2", type=int, default=500_000,
                   help="l.i1 inserts 4/5 and l.i2 1/5 of it, as the reference (default 500000)")
    p.add_argument("--time", type=float, default=30,
                   help="seconds per read-write step; iibench inserts time x rate rows (default 30)")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds per step (l.x: one run); dbperf goes first in odd rounds, "
                        "iibench.py in even ones (default 3)")
    p.add_argument("--steps", default="l.i0,l.x,l.i1,qr100,qp100",
                   help="steps, run in the spec's order: %s (default l.i0,l.x,l.i1,qr100,qp100)"
                        % " ".join(KNOWN_STEPS))
    p.add_argument("--floor-secs", type=float, default=3,
                   help="seconds of the floor's run in each round (default 3)")
    p.add_argument("--settle", type=float, default=20,
                   help="before each measurement wait at most this many seconds for the server "
                        "to be quiet (under 10%% of a CPU for 1 s); 0: do not wait (default 20)")
    p.add_argument("--out", metavar="FILE",
                   help="also write FILE.md (the tables) and FILE.json (every round's raw numbers)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (iibench outputs, dbperf's results stores, logs)")
    a = p.parse_args(argv)

    a.engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    bad = [e for e in a.engines if e not in ENGINES]
    if bad or not a.engines:
        raise BadInput("--engines: unknown %s (want postgres, innodb, rocksdb)" % ",".join(bad))
    a.engines = list(dict.fromkeys(a.engines))
    steps = [s.strip() for s in a.steps.split(",") if s.strip()]
    bad = [s for s in steps if s not in KNOWN_STEPS]
    if bad:
        raise BadInput("--steps: unknown %s (known: %s)" % (",".join(bad), " ".join(KNOWN_STEPS)))
    a.steps = sorted(dict.fromkeys(steps), key=KNOWN_STEPS.index)
    if "l.i0" not in a.steps:
        raise BadInput("--steps must include l.i0 (both clients create their table there)")
    if "l.x" not in a.steps and any(s != "l.i0" for s in a.steps):
        raise BadInput("--steps: l.i1, l.i2 and the read-write steps need l.x (the secondary indexes)")
    if a.rows < 100 or a.rows2 < 10 or a.time <= 0:
        raise BadInput("--rows must be >= 100, --rows2 >= 10 and --time > 0")
    if a.rounds < 1:
        raise BadInput("--rounds must be >= 1")
    if a.floor_secs <= 0 or a.settle < 0:
        raise BadInput("--floor-secs must be > 0 and --settle >= 0")
    a.iibench = os.path.abspath(os.path.expanduser(a.iibench))
    if not os.path.isfile(a.iibench):
        raise BadInput("--iibench %s: no such file (git clone https://github.com/mdcallag/mytools "
                       "and pass bench/ibench/iibench.py)" % a.iibench)
    a.dbperf = os.path.abspath(os.path.expanduser(a.dbperf))
    if not os.access(a.dbperf, os.X_OK):
        raise BadInput("dbperf binary %s not found: run `make build` in %s, or pass --dbperf PATH"
                       % (a.dbperf, REPO))
    if not shutil.which("gcc"):
        raise BadInput("the round-trip floor needs gcc: apt-get install gcc")
    if "postgres" in a.engines and not shutil.which("ss"):
        raise BadInput("the insert floor on PostgreSQL needs ss: apt-get install iproute2")
    # Load steps (and l.x) may take long at large --rows; read-write steps are bounded by --time.
    a.load_timeout = 900 + (a.rows + a.rows2) / 500
    check_drivers(a)
    h = subprocess.run([a.python, a.iibench, "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=60)
    if "--delete_per_insert" not in h.stdout or "--query_pk_only" not in h.stdout:
        raise BadInput("--iibench %s does not look like iibench.py (its --help lacks "
                       "--delete_per_insert/--query_pk_only): %s"
                       % (a.iibench, (h.stdout.strip().splitlines() or [""])[-1][-300:]))
    return a


def check_drivers(a):
    mods = sorted({ENGINES[e][3] for e in a.engines})

    def missing(py):
        return [m for m in mods
                if subprocess.run([py, "-c", "import " + m], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode != 0]

    explicit = a.python is not None
    a.python = a.python or sys.executable
    if not (shutil.which(a.python) or os.access(a.python, os.X_OK)):
        raise BadInput("--python %s: not found" % a.python)
    miss = missing(a.python)
    if miss and not explicit and os.access("/usr/bin/python3", os.X_OK) \
            and os.path.realpath(a.python) != os.path.realpath("/usr/bin/python3") \
            and not missing("/usr/bin/python3"):
        log("iibench.py runs under /usr/bin/python3: it has %s, %s has not" % (", ".join(mods), a.python))
        a.python, miss = "/usr/bin/python3", []
    if miss:
        pkgs = {"psycopg2": ("python3-psycopg2", "psycopg2-binary"),
                "MySQLdb": ("python3-mysqldb", "mysqlclient")}
        raise BadInput("iibench.py needs the Python module(s) %s in %s: apt-get install %s "
                       "(Debian's /usr/bin/python3, then --python /usr/bin/python3) or pip install %s"
                       % (", ".join(miss), a.python, " ".join(pkgs[m][0] for m in miss),
                          " ".join(pkgs[m][1] for m in miss)))


def on_signal(signum, frame):
    # Once: a second signal during the clean-up must not cut it short.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted()


def main(argv=None, prog=None):
    """Runs the comparison with argv (default sys.argv[1:]); returns the exit status.
    prog: the program's name in --help and argparse's errors (default: argparse's)."""
    if argv is None:
        argv = sys.argv[1:]
    try:
        a = parse_args(argv, prog)
    except BadInput as e:
        print("sidebyside: %s" % e, file=sys.stderr)
        return 2
    # Explicit, so that Ctrl-C also works when the shell started us with SIGINT ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    tmp = tempfile.mkdtemp(prefix="sidebyside-")
    os.chmod(tmp, 0o755)  # as root, PostgreSQL runs as user postgres and must reach its data dir
    t0 = time.monotonic()
    report = {"script": "scripts/sidebyside.py", "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "params": {k: getattr(a, k) for k in ("engines", "steps", "rows", "rows2", "time",
                                                    "rounds", "floor_secs", "settle",
                                                    "iibench", "dbperf", "python")},
              "host": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg()},
              "engines": {}}
    floor = None
    status = 0
    try:
        try:
            floor = Floor(tmp)
        except BadInput as e:
            print("sidebyside: %s" % e, file=sys.stderr)
            return 2
        for name in a.engines:
            res = report["engines"][name] = {}
            try:
                measure_engine(name, a, floor, tmp, res)
            except EngineFailed as e:
                res["error"] = str(e)
                log("[%s] FAILED: %s" % (name, e))
                status = 1
            except subprocess.TimeoutExpired as e:
                res["error"] = "timed out: %s" % e
                log("[%s] FAILED: %s" % (name, res["error"]))
                status = 1
            res["rows"] = build_rows(res, a.steps)
            if any(r["failed"] for r in res["rows"]):
                status = 1
            sys.stdout.write(engine_text(name, res, a))
            sys.stdout.flush()
    except (KeyboardInterrupt, Interrupted):
        log("interrupted: servers stopped")
        status = 130
    finally:
        if floor:
            floor.close()
        report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        report["seconds"] = round(time.monotonic() - t0, 1)
        report["host"]["loadavg_end"] = os.getloadavg()
        if a.out:
            for res in report["engines"].values():
                if "rows" not in res:  # interrupted mid-engine
                    res["rows"] = build_rows(res, a.steps)
            write_out(a, report)
        if a.keep:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if status == 130:
        return status
    print("\n" + legend(a.rounds))
    log("done in %.0f min" % (report["seconds"] / 60))
    return status
