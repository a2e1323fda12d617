"""The managed servers: starting and stopping them (`dbperf server start/stop`), their DSN,
running SQL on them (in the Python that has the drivers), and waiting until one is quiet."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.parse

from .common import EngineFailed, log
from .procfs import alive, tree_cpu_sec

# settle: the server is quiet when its process tree used less than this share of one CPU
# in each of two consecutive half-second windows.
QUIET_SHARE = 0.10


# Runs in the Python that runs iibench (it has the drivers): executes SQL on the server.
SQL_HELPER = r"""
import json, sys
cfg = json.loads(sys.argv[1])
if cfg["kind"] == "postgres":
    import psycopg2
    c = psycopg2.connect(dbname=cfg["db"], host=cfg["host"], port=cfg["port"],
                         user=cfg["user"], password=cfg["password"])
    c.set_session(autocommit=True)
else:
    import MySQLdb
    c = MySQLdb.connect(unix_socket=cfg["socket"], user=cfg["user"], passwd=cfg["password"],
                        db=cfg["db"], autocommit=True)
cur = c.cursor()
out = []
for s in cfg["sql"]:
    cur.execute(s)
    try:
        out.append([list(r) for r in cur.fetchall()])
    except Exception:
        out.append(None)
print(json.dumps(out, default=str))
"""


class Server:
    """A server started with `dbperf server start`, stopped by stop() (idempotent)."""

    def __init__(self, dbperf, engine, storage, workdir):
        self.dbperf, self.engine, self.storage, self.workdir = dbperf, engine, storage, workdir
        self.state = None
        self.started = False

    def start(self):
        argv = [self.dbperf, "server", "start", self.engine, "--workdir", self.workdir]
        if self.storage:
            argv += ["--mysql-storage-engine", self.storage]
        self.started = True  # from here on, stop() must run
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True, timeout=300)
        if p.returncode != 0:
            raise EngineFailed("dbperf server start %s failed (exit %d): %s"
                               % (self.engine, p.returncode, p.stdout.strip()[-800:]))
        with open(os.path.join(self.workdir, self.engine + ".json")) as f:
            self.state = json.load(f)
        # The state file's DSN is redacted; the DSN with the server's password is in
        # dsn_file (mode 0600). "dsn" becomes the usable one, "dsn_redacted" is for records.
        self.state["dsn_redacted"] = self.state.get("dsn")
        if self.state.get("dsn_file"):
            with open(self.state["dsn_file"]) as f:
                self.state["dsn"] = f.readline().strip()
        return self.state

    def stop(self):
        if not self.started:
            return
        self.started = False
        argv = [self.dbperf, "server", "stop", self.engine, "--workdir", self.workdir]
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, timeout=180)
            ok = p.returncode == 0
            msg = p.stdout.strip()
        except (subprocess.TimeoutExpired, OSError) as e:
            ok, msg = False, str(e)
        pid = (self.state or {}).get("pid")
        if pid and alive(pid):  # stop failed or left it running: end it by its pid
            log("[%s] server pid %d still running after 'server stop' (%s): SIGTERM"
                % (self.engine, pid, msg))
            _kill_wait(pid)
        elif not ok:
            log("[%s] dbperf server stop: %s" % (self.engine, msg))


def _kill_wait(pid):
    for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while time.monotonic() < end and alive(pid):
            time.sleep(0.2)
        if not alive(pid):
            return


def parse_dsn(dsn):
    """-> dict(kind, user, password, host, port, socket, db, transport)"""
    if dsn.startswith("postgres://") or dsn.startswith("postgresql://"):
        u = urllib.parse.urlsplit(dsn)
        q = urllib.parse.parse_qs(u.query)
        host = u.hostname or "127.0.0.1"
        return {"kind": "postgres", "user": urllib.parse.unquote(u.username or "postgres"),
                "password": urllib.parse.unquote(u.password or ""), "host": host,
                "port": u.port or 5432, "db": u.path.lstrip("/") or "ib",
                "sslmode": (q.get("sslmode") or [""])[0],
                "transport": "unix" if host.startswith("/") else "tcp"}
    m = re.match(r"^mysql://([^:@]*)(?::([^@]*))?@(tcp|unix)\(([^)]*)\)/([^?]*)", dsn)
    if not m:
        raise EngineFailed("cannot parse the server's DSN %r" % dsn)
    user, pw, net, addr, db = m.groups()
    d = {"kind": "mysql", "user": urllib.parse.unquote(user or "root"),
         "password": urllib.parse.unquote(pw or ""), "db": db or "ib", "transport": net,
         "socket": None, "host": None, "port": None}
    if net == "unix":
        d["socket"] = addr
    else:
        host, _, port = addr.rpartition(":")
        d["host"], d["port"] = host, int(port)
    return d


def run_sql(a, conn, sqls, timeout=600):
    cfg = dict(conn)
    cfg["sql"] = sqls
    p = subprocess.run([a.python, "-c", SQL_HELPER, json.dumps(cfg)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, start_new_session=True)
    if p.returncode != 0:
        raise EngineFailed("SQL %s failed: %s" % (sqls, p.stdout.strip()[-600:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def settle(pid, max_secs):
    """Wait until the server's process tree has used less than QUIET_SHARE of one CPU in
    two consecutive half-second windows, at most max_secs; returns the seconds waited."""
    t0 = time.monotonic()
    if max_secs <= 0:
        return 0.0
    prev, quiet = tree_cpu_sec(pid), 0
    if prev is None:
        raise EngineFailed("the server (pid %d) is gone" % pid)
    while time.monotonic() - t0 < max_secs:
        time.sleep(0.5)
        cur = tree_cpu_sec(pid)
        if cur is None:
            raise EngineFailed("the server (pid %d) is gone" % pid)
        quiet = quiet + 1 if cur - prev < QUIET_SHARE * 0.5 else 0
        prev = cur
        if quiet >= 2:
            break
    return time.monotonic() - t0
