#!/usr/bin/env python3
"""Run dbperf and the reference client iibench.py side by side on one managed server and
print the ratios of their client CPU per operation, plus the round-trip floor (issue 9).

Usage (from the repository root, after `make build`):

    python3 scripts/sidebyside.py --iibench ~/mytools/bench/ibench/iibench.py
    python3 scripts/sidebyside.py --iibench PATH --engines postgres --rows 100000 \\
        --rows2 50000 --time 10 --out sidebyside     # writes sidebyside.md and sidebyside.json

iibench.py is bench/ibench/iibench.py of https://github.com/mdcallag/mytools (this script
never copies it, it runs it from PATH). It needs, in the Python that runs it (--python,
default this interpreter, else Debian's /usr/bin/python3 when only that one has them):
psycopg2 for postgres and MySQLdb for innodb/rocksdb -- Debian:
`apt-get install python3-psycopg2 python3-mysqldb`, or pip: `pip install psycopg2-binary
mysqlclient`. The round-trip floor is two small C programs compiled at run time with gcc.

Per engine (postgres, innodb, rocksdb) the script:
 1. starts ONE throwaway server (`dbperf server start`, in a temporary --workdir) and stops
    it at the end, also on an error or Ctrl-C;
 2. runs dbperf's steps against it (`dbperf run insertbench --dsn ... --clients 1`), reads
    each step's figures from `dbperf report --format json`, and measures dbperf's whole
    process from outside (rusage) as a cross-check of dbperf's own client CPU;
 3. right after that run measures the round-trip floor of each read-write step: a minimal
    blocking C client doing one 8-byte request/reply at a time against a C echo server on
    the same machine that burns, per request, the server CPU per query dbperf's step cost
    (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` loop), over the transport dbperf used (TCP
    with TCP_NODELAY to 127.0.0.1, or the unix socket) and, when that was the unix socket,
    also over TCP; several short runs, interleaved, median of the client's CPU per round trip;
 4. drops dbperf's table, then runs iibench.py for the same steps from l.i0 on the same
    server, one iibench process per step with the flags of the reference drivers (iq.sh,
    np.sh): l.i0 --setup, 0 secondary indexes, 100 rows/commit; l.x --secondary_at_end;
    l.i1/l.i2 --delete_per_insert with 50/5 rows/commit; qrN/qpN --inserts_per_second=N
    --query_threads=1 (qp: --query_pk_only) until time x N rows are inserted;
    --data_length_min=10 --data_length_max=20; Postgres --use_prepared_query; MySQL over
    the server's unix socket. iibench's client CPU is the rusage of the iibench process and
    all its descendants (it forks; this script waits for them as a child subreaper, so
    even orphans are counted); the server's CPU is read from /proc (utime+stime+cutime+
    cstime of the server's process tree, so exited PostgreSQL backends count too).

Op = inserted row (l.i0, l.i1, l.i2), indexed row (l.x), query (qr*, qp*). Targets (issue 9):
l.i0 <= 0.6 us/row and a client share (client / (client + server CPU)) under 10%; l.i1
<= 1.5 us/row; every read-write step's client CPU per query <= iibench.py's and <= 1.15 x
the round-trip floor.

Exit status: 0 all engines measured, 1 an engine or step failed (the rest is still
printed), 2 bad input or a missing prerequisite, 130 interrupted.
"""

import argparse
import ctypes
import json
import math
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The Insert Benchmark's steps in the order of the spec (reference §1.9).
KNOWN_STEPS = ["l.i0", "l.x", "l.i1", "l.i2", "cleanup",
               "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
RW_STEP = re.compile(r"^q([rp])(\d+)$")

# --engines name -> (dbperf engine, MariaDB storage engine, iibench --dbms, Python module)
ENGINES = {
    "postgres": ("postgres", None, "postgres", "psycopg2"),
    "innodb": ("mariadb", "innodb", "mysql", "MySQLdb"),
    "rocksdb": ("mariadb", "rocksdb", "mysql", "MySQLdb"),
}

TABLE = "pi1"  # dbperf's table for client 1; iibench uses the same name (np.sh: pi${n})
IIBENCH_SEED = 3221223452  # iibench.py's default --seed

TARGET_LI0_US = 0.6
TARGET_LI1_US = 1.5
TARGET_SHARE = 0.10
TARGET_FLOOR = 1.15

PR_SET_CHILD_SUBREAPER = 36


class BadInput(Exception):
    """Bad input or a missing prerequisite: one line, exit 2."""


class EngineFailed(Exception):
    """This engine cannot be measured further; the others still run."""


class Interrupted(BaseException):
    pass


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- C programs

ECHO_C = r"""
/* sidebyside echo server: reads 8-byte requests (a little-endian count of nanoseconds),
   burns that much of its own thread CPU, replies with the same 8 bytes. One connection at
   a time; prints its port (tcp) or path (unix), then per closed connection
   "served N cpu_ns C". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static int full_read(int fd, void *b, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)b + got, n - got);
    if (r == 0) return 0;
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    got += (size_t)r;
  }
  return 1;
}
static int full_write(int fd, const void *b, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char *)b + put, n - put);
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    put += (size_t)r;
  }
  return 1;
}
int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: echo tcp | echo unix PATH\n"); return 2; }
  int tcp = strcmp(argv[1], "tcp") == 0;
  signal(SIGPIPE, SIG_IGN);
  int ls;
  if (tcp) {
    struct sockaddr_in a; socklen_t al = sizeof a; int one = 1;
    ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); a.sin_port = 0;
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 8) < 0) { perror("bind"); return 1; }
    getsockname(ls, (struct sockaddr *)&a, &al);
    printf("%d\n", ntohs(a.sin_port));
  } else {
    struct sockaddr_un a;
    if (argc < 3 || strlen(argv[2]) >= sizeof a.sun_path) { fprintf(stderr, "bad unix path\n"); return 2; }
    ls = socket(AF_UNIX, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a); a.sun_family = AF_UNIX; strcpy(a.sun_path, argv[2]);
    unlink(argv[2]);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 8) < 0) { perror("bind"); return 1; }
    printf("%s\n", argv[2]);
  }
  fflush(stdout);
  for (;;) {
    int c = accept(ls, NULL, NULL);
    if (c < 0) { if (errno == EINTR) continue; perror("accept"); return 1; }
    if (tcp) { int one = 1; setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
    uint64_t req, n = 0, t0 = thread_ns();
    while (full_read(c, &req, 8) == 1) {
      if (req) { uint64_t s = thread_ns(); while (thread_ns() - s < req) {} }
      if (full_write(c, &req, 8) != 1) break;
      n++;
    }
    printf("served %llu cpu_ns %llu\n", (unsigned long long)n, (unsigned long long)(thread_ns() - t0));
    fflush(stdout);
    close(c);
  }
}
"""

RTT_C = r"""
/* sidebyside round-trip client: one blocking 8-byte write + 8-byte read at a time for
   SECONDS, after 200 warm-up round trips; prints one JSON line with its own CPU
   (getrusage) per round trip.  usage: rtt tcp PORT BURN_NS SECONDS | rtt unix PATH BURN_NS SECONDS */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int full_read(int fd, void *b, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)b + got, n - got);
    if (r == 0) return 0;
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    got += (size_t)r;
  }
  return 1;
}
static int full_write(int fd, const void *b, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char *)b + put, n - put);
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    put += (size_t)r;
  }
  return 1;
}
static double tv(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }
static double ts(struct timespec t) { return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: rtt tcp PORT BURN_NS SECONDS | rtt unix PATH BURN_NS SECONDS\n"); return 2; }
  int tcp = strcmp(argv[1], "tcp") == 0, fd;
  uint64_t req = strtoull(argv[3], NULL, 10), rep;
  double secs = atof(argv[4]);
  if (tcp) {
    struct sockaddr_in a; int one = 1;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); a.sin_port = htons(atoi(argv[2]));
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  } else {
    struct sockaddr_un a;
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a); a.sun_family = AF_UNIX; strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
  }
  for (int i = 0; i < 200; i++)
    if (full_write(fd, &req, 8) != 1 || full_read(fd, &rep, 8) != 1) { perror("warm-up"); return 1; }
  struct rusage r0, r1; struct timespec w0, w1, now;
  getrusage(RUSAGE_SELF, &r0); clock_gettime(CLOCK_MONOTONIC, &w0);
  double deadline = ts(w0) + secs;
  uint64_t n = 0;
  for (;;) {
    if (full_write(fd, &req, 8) != 1 || full_read(fd, &rep, 8) != 1) { perror("round trip"); return 1; }
    n++;
    if ((n & 31) == 0) { clock_gettime(CLOCK_MONOTONIC, &now); if (ts(now) >= deadline) break; }
  }
  clock_gettime(CLOCK_MONOTONIC, &w1); getrusage(RUSAGE_SELF, &r1);
  double u = tv(r1.ru_utime) - tv(r0.ru_utime), s = tv(r1.ru_stime) - tv(r0.ru_stime), w = ts(w1) - ts(w0);
  printf("{\"round_trips\": %llu, \"wall_sec\": %.6f, \"user_sec\": %.6f, \"sys_sec\": %.6f, "
         "\"cpu_us_per_rt\": %.3f, \"wall_us_per_rt\": %.3f}\n",
         (unsigned long long)n, w, u, s, (u + s) * 1e6 / n, w * 1e6 / n);
  close(fd);
  return 0;
}
"""

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


# --------------------------------------------------------------------------- /proc

TICK = os.sysconf("SC_CLK_TCK")


def proc_stat_all():
    """pid -> (ppid, utime+stime+cutime+cstime in ticks) for every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                data = f.read().decode("ascii", "replace")
        except OSError:
            continue
        rest = data[data.rindex(")") + 2:].split()
        # rest[0]=state [1]=ppid ... [11]=utime [12]=stime [13]=cutime [14]=cstime
        out[int(name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    return out


def tree_cpu_sec(root):
    """CPU seconds of root and all its descendants, including the children they reaped
    (cutime/cstime), so processes that exit between two readings still count."""
    procs = proc_stat_all()
    if root not in procs:
        return None
    kids = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += procs[p][1]
        todo.extend(kids.get(p, []))
    return total / TICK


def machine_busy_sec():
    """user+nice+system+irq+softirq of all CPUs, as dbperf's hw.cpupq counts."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / TICK


# --------------------------------------------------------------------------- children

_libc = None


def _set_subreaper():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def run_measured(argv, cwd, env, out_path, timeout, stop_signal=signal.SIGTERM):
    """Run argv in its own process group under a forked subreaper that waits for it and
    every descendant (orphans included), and return the rusage of that whole tree:
    {rc, user_sec, sys_sec, wall_sec, maxrss_kb, timed_out}. stdout+stderr go to out_path.
    On timeout or Ctrl-C the group gets stop_signal, then SIGKILL after 15 s."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the subreaper
        code = 0
        try:
            os.close(r)
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _set_subreaper()
            fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            t0 = time.monotonic()
            child = os.fork()
            if child == 0:
                try:
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    os.chdir(cwd)
                    os.execvpe(argv[0], argv, env)
                except BaseException as e:  # exec failed
                    os.write(2, ("cannot run %s: %s\n" % (argv[0], e)).encode())
                os._exit(127)
            status, wall = None, None
            while True:
                try:
                    p, st = os.wait()
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
                if p == child:
                    status, wall = st, time.monotonic() - t0
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            rc = os.waitstatus_to_exitcode(status) if status is not None else -1
            os.write(w, json.dumps({"rc": rc, "user_sec": ru.ru_utime, "sys_sec": ru.ru_stime,
                                    "wall_sec": wall, "maxrss_kb": ru.ru_maxrss}).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    try:
        os.setpgid(pid, pid)  # also done by the child; avoids a race with killpg below
    except OSError:
        pass
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline and not timed_out:
                timed_out = True
                _stop_group(pid, stop_signal)
            time.sleep(0.05)
    except BaseException:
        _stop_group(pid, stop_signal)
        raise
    with os.fdopen(r, "rb") as f:
        data = f.read()
    res = json.loads(data) if data else {"rc": -1, "user_sec": None, "sys_sec": None,
                                         "wall_sec": None, "maxrss_kb": None}
    res["timed_out"] = timed_out
    return res


def _stop_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return
    for _ in range(300):
        try:
            done, _ = os.waitpid(pgid, os.WNOHANG)
        except ChildProcessError:
            done = pgid
        if done:
            break
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pgid, 0)
    except ChildProcessError:
        pass


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# --------------------------------------------------------------------------- servers

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
        if pid and _alive(pid):  # stop failed or left it running: end it by its pid
            log("[%s] server pid %d still running after 'server stop' (%s): SIGTERM"
                % (self.engine, pid, msg))
            _kill_wait(pid)
        elif not ok:
            log("[%s] dbperf server stop: %s" % (self.engine, msg))


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def _kill_wait(pid):
    for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while time.monotonic() < end and _alive(pid):
            time.sleep(0.2)
        if not _alive(pid):
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


# --------------------------------------------------------------------------- floor

class Floor:
    """The C echo servers (one per transport, started on first use) and the client."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.servers = {}  # transport -> (Popen, address)
        src = {"echo": ECHO_C, "rtt": RTT_C}
        self.bin = {}
        for name, code in src.items():
            c = os.path.join(tmp, "sbs_%s.c" % name)
            with open(c, "w") as f:
                f.write(code)
            exe = os.path.join(tmp, "sbs_" + name)
            p = subprocess.run(["gcc", "-O2", "-Wall", "-o", exe, c], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                raise BadInput("gcc cannot compile the round-trip floor's %s.c: %s"
                               % (name, p.stdout.strip()[-500:]))
            self.bin[name] = exe

    def address(self, transport):
        if transport not in self.servers:
            argv = [self.bin["echo"], transport]
            if transport == "unix":
                argv.append(os.path.join(self.tmp, "echo.sock"))
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
            addr = p.stdout.readline().strip()
            if not addr:
                p.kill()
                raise EngineFailed("the echo server (%s) did not start" % transport)
            self.servers[transport] = (p, addr)
        return self.servers[transport][1]

    def measure(self, transport, burn_us, secs):
        addr = self.address(transport)
        argv = [self.bin["rtt"], transport, addr, str(int(round(burn_us * 1000))), str(secs)]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=secs + 30 + burn_us * 1e-6 * 300, start_new_session=True)
        if p.returncode != 0:
            raise EngineFailed("round-trip client failed: %s" % p.stdout.strip())
        return json.loads(p.stdout)

    def close(self):
        for p, _ in self.servers.values():
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.servers = {}


# --------------------------------------------------------------------------- iibench

def iibench_step_args(step, a):
    """iibench.py's step-specific flags, as iq.sh passes them to np.sh (reference §1.9);
    None for a step iibench has no process for (cleanup)."""
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


# --------------------------------------------------------------------------- one engine

def run_sql(a, conn, sqls, timeout=600):
    cfg = dict(conn)
    cfg["sql"] = sqls
    p = subprocess.run([a.python, "-c", SQL_HELPER, json.dumps(cfg)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, start_new_session=True)
    if p.returncode != 0:
        raise EngineFailed("SQL %s failed: %s" % (sqls, p.stdout.strip()[-600:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def measure_engine(name, a, tools, tmp, res):
    """Fills res (the engine's JSON) step by step, so a failure keeps what was measured."""
    dbengine, storage, dbms, _ = ENGINES[name]
    edir = os.path.join(tmp, name)
    os.makedirs(edir)
    server = Server(a.dbperf, dbengine, storage, os.path.join(edir, "servers"))
    try:
        log("[%s] starting the server" % name)
        st = server.start()
        pid = st["pid"]
        res["server"] = {"pid": pid, "version": st.get("version"), "dsn": st.get("dsn"),
                         "socket": st.get("socket"), "profile": st.get("profile")}
        dsn = parse_dsn(st["dsn"])
        # dbperf connects as the printed DSN says; iibench.py as the reference drivers do
        # (np.sh): Postgres over TCP to 127.0.0.1, MySQL over the unix socket.
        res["transport"] = {"dbperf": dsn["transport"],
                            "iibench": "tcp" if dbms == "postgres" else "unix"}
        if dsn["kind"] == "postgres":
            conn = {"kind": "postgres", "host": dsn["host"], "port": dsn["port"], "db": dsn["db"],
                    "user": dsn["user"], "password": dsn["password"]}
        else:
            sock = dsn["socket"] or st.get("socket")
            if not sock:
                raise EngineFailed("the server's state names no unix socket for iibench.py")
            conn = {"kind": "mysql", "socket": sock, "db": dsn["db"], "user": dsn["user"],
                    "password": dsn["password"]}

        # ---- dbperf
        results = os.path.join(edir, "dbperf-results.db")
        argv = [a.dbperf, "run", "insertbench", "--engine", dbengine, "--dsn", st["dsn"],
                "--steps", ",".join(a.steps), "--rows", str(a.rows), "--rows2", str(a.rows2),
                "--time", "%g" % a.time, "--clients", "1", "--results", results,
                "--label", "sidebyside-" + name, "--quiet"]
        if storage:
            argv += ["--mysql-storage-engine", storage]
        if "cleanup" in a.steps:
            argv += ["--cleanup-wait", "%g" % a.cleanup_wait]
        log("[%s] dbperf run %s" % (name, ",".join(a.steps)))
        cpu0, busy0 = tree_cpu_sec(pid), machine_busy_sec()
        r = run_measured(argv, REPO, os.environ.copy(), os.path.join(edir, "dbperf.log"),
                         timeout=a.load_timeout + len(a.steps) * (a.time + 600),
                         stop_signal=signal.SIGINT)
        cpu1, busy1 = tree_cpu_sec(pid), machine_busy_sec()
        res["dbperf"] = {"argv": argv, "outside": r,
                         "server_cpu_sec_outside": _delta(cpu0, cpu1),
                         "machine_busy_sec": busy1 - busy0, "steps": {}}
        if r["rc"] not in (0, 1):
            raise EngineFailed("dbperf run exited %s%s:\n%s" % (
                r["rc"], " (timed out)" if r["timed_out"] else "", tail(os.path.join(edir, "dbperf.log"))))
        rep = subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if rep.returncode != 0:
            raise EngineFailed("dbperf report failed: %s" % rep.stderr.strip())
        run = json.loads(rep.stdout)["runs"][-1]
        res["dbperf"]["run_id"] = run.get("id")
        res["dbperf"]["status"] = run.get("status")
        res["dbperf"]["engine_version"] = run.get("engine_version")
        for s in run["steps"]:
            res["dbperf"]["steps"][s["name"]] = dbperf_step(s)
        if r["rc"] == 1:
            log("[%s] dbperf: a step failed (see the table); continuing" % name)
        res["table_rows_after_dbperf"] = _count(a, conn)

        # ---- round-trip floor, right after dbperf's run
        qsteps = [s for s in a.steps if RW_STEP.match(s)]
        if qsteps:
            res["floor"] = measure_floor(name, a, tools["floor"], qsteps, res, dsn["transport"])

        # ---- iibench, from l.i0 on the same server
        run_sql(a, conn, ["drop table if exists %s" % TABLE]
                + (["checkpoint"] if dbms == "postgres" else []))
        res["iibench"] = {"steps": {}}
        env = os.environ.copy()
        common = ["--dbms=%s" % dbms, "--db_name=%s" % conn["db"], "--secs_per_report=1",
                  "--db_user=%s" % conn["user"], "--db_password=%s" % conn["password"],
                  "--table_name=%s" % TABLE, "--data_length_min=10", "--data_length_max=20",
                  "--dbopt=none", "--my_id=1"]
        if dbms == "postgres":
            # iibench.py has no port flag: libpq takes it from PGPORT.
            env["PGPORT"] = str(conn["port"])
            if dsn.get("sslmode"):
                env["PGSSLMODE"] = dsn["sslmode"]
            common += ["--db_host=%s" % conn["host"], "--engine=pg", "--unique_checks=1",
                       "--bulk_load=0", "--use_prepared_query"]
        else:
            common += ["--db_host=127.0.0.1", "--engine=%s" % storage, "--engine_options=",
                       "--unique_checks=1", "--bulk_load=0", "--db_socket=%s" % conn["socket"]]
        loaded = 0
        for i, step in enumerate(a.steps):
            if step == "cleanup":
                res["iibench"]["steps"][step] = iibench_cleanup(a, conn, dbms, res)
                continue
            flags = iibench_step_args(step, a)
            argv = [a.python, a.iibench] + common + flags + ["--seed=%d" % (IIBENCH_SEED + i)]
            sdir = os.path.join(edir, "iibench-" + step)
            os.makedirs(sdir)
            log("[%s] iibench.py %s" % (name, step))
            timeout = a.load_timeout if step.startswith("l.") else 3 * a.time + 300
            cpu0, busy0 = tree_cpu_sec(pid), machine_busy_sec()
            r = run_measured(argv, sdir, env, os.path.join(sdir, "out.txt"), timeout)
            cpu1, busy1 = tree_cpu_sec(pid), machine_busy_sec()
            p = parse_iibench(os.path.join(sdir, "out.txt"))
            rec = {"argv": argv, "rusage": r, "client_cpu_sec": r["user_sec"] + r["sys_sec"]
                   if r["user_sec"] is not None else None,
                   "server_cpu_sec": _delta(cpu0, cpu1), "machine_busy_sec": busy1 - busy0,
                   "seconds": r["wall_sec"], **p}
            if step == "l.i0":
                loaded = p["inserted"] or 0
            if step == "l.x":
                rec["indexed_rows"] = loaded + (p["inserted"] or 0)
            rec["ops"] = iibench_ops(step, rec)
            if r["rc"] != 0 or r["timed_out"] or p["errors"] or rec["ops"] is None:
                rec["failed"] = ("timed out after %ds; " % timeout if r["timed_out"] else "") + \
                    "exit %s; %s" % (r["rc"], "; ".join(p["errors"][:3]) or
                                     tail(os.path.join(sdir, "out.txt"), 5).strip())
            res["iibench"]["steps"][step] = rec
            if rec.get("failed"):
                raise EngineFailed("iibench.py %s failed: %s" % (step, rec["failed"]))
        res["table_rows_after_iibench"] = _count(a, conn)
    finally:
        log("[%s] stopping the server" % name)
        server.stop()


def _delta(x0, x1):
    return None if x0 is None or x1 is None else x1 - x0


def _count(a, conn):
    try:
        return run_sql(a, conn, ["select count(*) from %s" % TABLE])[0][0][0]
    except EngineFailed as e:
        log("count(*) failed: %s" % e)
        return None


def dbperf_step(s):
    prim = s.get("primary")
    ops = s.get("ops") or {}
    hw = s.get("hw") or {}
    count = (ops.get(prim) or {}).get("count")
    srv = (hw.get("server") or {}).get("cpu_sec")
    busy = None
    if all(("cpu_%s_sec" % k) in hw for k in ("user", "nice", "system", "irq", "softirq")):
        busy = sum(hw["cpu_%s_sec" % k] for k in ("user", "nice", "system", "irq", "softirq"))
    return {"status": s.get("status"), "error": s.get("error"), "seconds": s.get("seconds"),
            "primary": prim, "ops": count,
            "counts": {k: v.get("count") for k, v in ops.items()},
            "client_cpu_sec": s.get("client_cpu_sec"),
            "client_cpu_us_per_op": s.get("client_cpu_us_per_op"),
            "server_cpu_sec": srv, "server_cpupq": hw.get("server_cpupq"),
            "machine_busy_sec": busy, "conn_cpu": s.get("conn_cpu"),
            "absent": hw.get("absent")}


def iibench_ops(step, rec):
    if step == "l.x":
        return rec.get("indexed_rows")
    if RW_STEP.match(step):
        return rec.get("queries")
    return rec.get("inserted")


def iibench_cleanup(a, conn, dbms, res):
    """iibench has no cleanup step: do what the reference's iq.sh (vac_pg / vac_my) does at
    its core, then wait as long as dbperf's cleanup step lasted. Not compared."""
    t0 = time.monotonic()
    if dbms == "postgres":
        sql = ["vacuum (analyze, index_cleanup on) %s" % TABLE, "checkpoint"]
    else:
        sql = ["analyze table %s" % TABLE]
    log("[cleanup] %s" % "; ".join(sql))
    run_sql(a, conn, sql, timeout=3600)
    target = (res["dbperf"]["steps"].get("cleanup") or {}).get("seconds") or a.cleanup_wait
    left = target - (time.monotonic() - t0)
    if left > 0:
        time.sleep(left)
    return {"sql": sql, "seconds": time.monotonic() - t0}


def measure_floor(name, a, floor, qsteps, res, transport):
    """Interleaved runs of the C client per read-write step and transport; medians."""
    transports = [transport] + (["tcp"] if transport != "tcp" else [])
    out = {}
    for step in qsteps:
        d = res["dbperf"]["steps"].get(step) or {}
        burn, src = None, None
        if d.get("server_cpu_sec") is not None and d.get("ops"):
            burn, src = d["server_cpu_sec"] * 1e6 / d["ops"], "dbperf hw.server.cpu_sec / queries"
        elif (d.get("conn_cpu") or {}).get("query") is not None and d.get("ops"):
            burn, src = d["conn_cpu"]["query"] * 1e6 / d["ops"], "dbperf conn_cpu.query / queries"
        if burn is None:
            log("[%s] no server CPU per query for %s: floor skipped" % (name, step))
            continue
        out[step] = {"burn_us": burn, "burn_source": src, "transport": transport,
                     "by_transport": {t: {"samples": []} for t in transports}}
    if not out:
        return out
    log("[%s] round-trip floor: %s x %d rounds of %gs (%s)" % (
        name, ",".join(out), a.floor_rounds, a.floor_secs, "+".join(transports)))
    for _ in range(a.floor_rounds):
        for step, f in out.items():
            for t in transports:
                f["by_transport"][t]["samples"].append(floor.measure(t, f["burn_us"], a.floor_secs))
    for f in out.values():
        for t, b in f["by_transport"].items():
            b["median_us"] = statistics.median(s["cpu_us_per_rt"] for s in b["samples"])
            b["min_us"] = min(s["cpu_us_per_rt"] for s in b["samples"])
            b["max_us"] = max(s["cpu_us_per_rt"] for s in b["samples"])
        f["median_us"] = f["by_transport"][transport]["median_us"]
    return out


# --------------------------------------------------------------------------- table

def per_op(sec, ops):
    if sec is None or not ops:
        return None
    return sec * 1e6 / ops


def build_rows(res, steps):
    rows = []
    d_steps = (res.get("dbperf") or {}).get("steps") or {}
    i_steps = (res.get("iibench") or {}).get("steps") or {}
    floors = res.get("floor") or {}
    for step in steps:
        if step == "cleanup":
            continue
        d, i = d_steps.get(step) or {}, i_steps.get(step) or {}
        row = {"step": step,
               "op": "inserted row" if step in ("l.i0", "l.i1", "l.i2") else
                     "indexed row" if step == "l.x" else "query",
               "dbperf_status": d.get("status"), "iibench_failed": i.get("failed"),
               "dbperf_ops": d.get("ops"), "iibench_ops": i.get("ops"),
               "dbperf_client_us": per_op(d.get("client_cpu_sec"), d.get("ops")),
               "iibench_client_us": per_op(i.get("client_cpu_sec"), i.get("ops")),
               "dbperf_server_us": per_op(d.get("server_cpu_sec"), d.get("ops")),
               "iibench_server_us": per_op(i.get("server_cpu_sec"), i.get("ops"))}
        if d.get("status") not in (None, "ok"):
            row["dbperf_client_us"] = row["dbperf_server_us"] = None
        dc, ic = row["dbperf_client_us"], row["iibench_client_us"]
        row["ratio"] = dc / ic if step != "l.x" and dc is not None and ic else None
        row["share"] = None
        if step == "l.i0" and d.get("client_cpu_sec") is not None and d.get("server_cpu_sec") is not None:
            tot = d["client_cpu_sec"] + d["server_cpu_sec"]
            row["share"] = d["client_cpu_sec"] / tot if tot else None
        f = floors.get(step) or {}
        row["floor_us"] = f.get("median_us")
        row["floor_transport"] = f.get("transport")
        row["vs_floor"] = dc / row["floor_us"] if dc is not None and row["floor_us"] else None
        # met: True, False, or None when a figure is missing
        checks = []
        if step == "l.i0":
            checks.append(("≤%.1fµs" % TARGET_LI0_US, _le(dc, TARGET_LI0_US)))
            checks.append(("share<%d%%" % (TARGET_SHARE * 100),
                           None if row["share"] is None else row["share"] < TARGET_SHARE))
        elif step == "l.i1":
            checks.append(("≤%.1fµs" % TARGET_LI1_US, _le(dc, TARGET_LI1_US)))
        elif RW_STEP.match(step):
            checks.append(("≤iibench", _le(dc, ic)))
            checks.append(("≤%.2f×floor" % TARGET_FLOOR, _le(row["vs_floor"], TARGET_FLOOR)))
        row["targets"] = [{"target": t, "met": ok} for t, ok in checks]
        rows.append(row)
    return rows


def _le(x, limit):
    return None if x is None or limit is None else x <= limit


def fmt(v, kind="us"):
    if v is None:
        return "–"
    if kind == "ratio":
        return "%.2f" % v
    if kind == "pct":
        return "%.1f%%" % (v * 100)
    v = float("%.3g" % v)
    if v >= 100 or v == 0:
        return "%.0f" % v
    return "%.*f" % (max(0, 2 - math.floor(math.log10(abs(v)))), v)  # 3 significant digits


HEAD = ["step", "op", "dbperf µs/op", "iibench µs/op", "dbperf/iibench",
        "server µs/op dbperf", "server µs/op iibench", "client share", "floor µs/rt",
        "dbperf/floor", "targets"]


def row_cells(r):
    t = " ".join("%s %s" % (x["target"], {True: "✓", False: "✗", None: "?"}[x["met"]])
                 for x in r["targets"])
    dc = fmt(r["dbperf_client_us"])
    if r["dbperf_status"] not in (None, "ok"):
        dc = r["dbperf_status"]
    ic = fmt(r["iibench_client_us"]) if not r["iibench_failed"] else "failed"
    return [r["step"], r["op"], dc, ic, fmt(r["ratio"], "ratio"), fmt(r["dbperf_server_us"]),
            fmt(r["iibench_server_us"]), fmt(r["share"], "pct"), fmt(r["floor_us"]),
            fmt(r["vs_floor"], "ratio"), t or "–"]


def engine_title(name, res):
    srv = res.get("server") or {}
    bits = ["%s %s" % (name, srv.get("version") or "")]
    tr = res.get("transport")
    if tr:
        bits.append("dbperf over %s, iibench.py over %s" % (tr["dbperf"], tr["iibench"]))
    if res.get("table_rows_after_dbperf") is not None:
        bits.append("rows in %s after dbperf %s, after iibench.py %s" % (
            TABLE, res.get("table_rows_after_dbperf"), res.get("table_rows_after_iibench", "–")))
    return ", ".join(bits)


def text_table(rows):
    cells = [HEAD] + [row_cells(r) for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(len(HEAD))]
    lines = []
    for n, c in enumerate(cells):
        lines.append("  ".join(x.ljust(w[i]) if i < 2 or i == len(HEAD) - 1 else x.rjust(w[i])
                               for i, x in enumerate(c)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * x for x in w))
    return "\n".join(lines)


def md_table(rows):
    out = ["| " + " | ".join(HEAD) + " |",
           "|" + "|".join("---" if i < 2 or i == len(HEAD) - 1 else "---:" for i in range(len(HEAD))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(row_cells(r)) + " |")
    return "\n".join(out)


def notes(name, res):
    """Cross-checks and caveats printed under an engine's table."""
    out = []
    d = res.get("dbperf") or {}
    o = d.get("outside") or {}
    if o.get("user_sec") is not None and d.get("steps"):
        inside = sum((s.get("client_cpu_sec") or 0) for s in d["steps"].values())
        out.append("dbperf process CPU from outside (rusage) %.2f s over %.0f s; its steps' own "
                   "client_cpu_sec sum to %.2f s (the rest: start-up, audits, results store)"
                   % (o["user_sec"] + o["sys_sec"], o.get("wall_sec") or 0, inside))
    if d.get("server_cpu_sec_outside") is not None and d.get("steps"):
        inside = sum((s.get("server_cpu_sec") or 0) for s in d["steps"].values())
        out.append("server CPU during dbperf's run from /proc %.2f s; its steps' hw.server.cpu_sec "
                   "sum to %.2f s" % (d["server_cpu_sec_outside"], inside))
    fl = res.get("floor") or {}
    for step, f in fl.items():
        parts = ["%s %s µs [%s–%s]" % (t, fmt(b.get("median_us")), fmt(b.get("min_us")), fmt(b.get("max_us")))
                 for t, b in f["by_transport"].items()]
        out.append("floor %s: server burn %s µs/request; client CPU per round trip, median "
                   "[min–max] of %d runs: %s" % (step, fmt(f["burn_us"]),
                                                 len(next(iter(f["by_transport"].values()))["samples"]),
                                                 ", ".join(parts)))
    busy = []
    for who, steps in (("dbperf", d.get("steps") or {}),
                       ("iibench", ((res.get("iibench") or {}).get("steps") or {}))):
        for step, s in steps.items():
            if step == "cleanup":  # mostly idle by design
                continue
            b = s.get("machine_busy_sec")
            if b and s.get("client_cpu_sec") is not None and s.get("server_cpu_sec") is not None:
                other = b - s["client_cpu_sec"] - s["server_cpu_sec"]
                if other > 0.25 * b and other > 1:
                    busy.append("%s %s %.0f%%" % (who, step, 100 * other / b))
    if busy:
        out.append("other work on the machine (share of its busy CPU that was neither client nor "
                   "server): " + ", ".join(busy))
    if res.get("error"):
        out.append("ERROR: " + res["error"])
    return out


# --------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Run dbperf and iibench.py side by side on one managed server per engine "
                    "and print their client CPU per operation, the ratios and the round-trip "
                    "floor. Needs bin/dbperf (make build), gcc, and iibench.py's drivers "
                    "(Debian: apt-get install python3-psycopg2 python3-mysqldb; pip: "
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
    p.add_argument("--time", type=float, default=60,
                   help="seconds per read-write step; iibench inserts time x rate rows (default 60)")
    p.add_argument("--steps", default="l.i0,l.x,l.i1,qr100,qp100",
                   help="steps, run in the spec's order: %s (default l.i0,l.x,l.i1,qr100,qp100)"
                        % " ".join(KNOWN_STEPS))
    p.add_argument("--cleanup-wait", type=float, default=10,
                   help="seconds the cleanup step lasts, when --steps has it (default 10)")
    p.add_argument("--floor-secs", type=float, default=2, help="seconds per floor run (default 2)")
    p.add_argument("--floor-rounds", type=int, default=5,
                   help="floor runs per step and transport, interleaved; the median counts (default 5)")
    p.add_argument("--out", metavar="FILE",
                   help="also write FILE.md (the tables) and FILE.json (all raw numbers)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (iibench outputs, dbperf's results store, logs)")
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
    if "l.x" not in a.steps and any(s not in ("l.i0", "cleanup") for s in a.steps):
        raise BadInput("--steps: l.i1, l.i2 and the read-write steps need l.x (the secondary indexes)")
    if a.rows < 100 or a.rows2 < 10 or a.time <= 0:
        raise BadInput("--rows must be >= 100, --rows2 >= 10 and --time > 0")
    if a.floor_secs <= 0 or a.floor_rounds < 1:
        raise BadInput("--floor-secs must be > 0 and --floor-rounds >= 1")
    if a.cleanup_wait < 0:
        raise BadInput("--cleanup-wait must be >= 0")
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
    # Load steps (and l.x) may take long at large --rows; read-write steps are bounded by --time.
    a.load_timeout = 900 + (a.rows + a.rows2) / 500
    check_drivers(a)
    h = subprocess.run([a.python, a.iibench, "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=60)
    if "--secondary_at_end" not in h.stdout or "--query_pk_only" not in h.stdout:
        raise BadInput("--iibench %s does not look like iibench.py (its --help lacks "
                       "--secondary_at_end/--query_pk_only): %s"
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


def main(argv):
    try:
        a = parse_args(argv)
    except BadInput as e:
        print("sidebyside: %s" % e, file=sys.stderr)
        return 2
    # Explicit, so that Ctrl-C also works when the shell started us with SIGINT ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    tmp = tempfile.mkdtemp(prefix="sidebyside-")
    os.chmod(tmp, 0o755)  # as root, PostgreSQL runs as user postgres and must reach its data dir
    report = {"script": "scripts/sidebyside.py", "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "params": {k: getattr(a, k) for k in ("engines", "steps", "rows", "rows2", "time",
                                                    "cleanup_wait", "floor_secs", "floor_rounds",
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
                measure_engine(name, a, {"floor": floor}, tmp, res)
            except EngineFailed as e:
                res["error"] = str(e)
                log("[%s] FAILED: %s" % (name, e))
                status = 1
            except subprocess.TimeoutExpired as e:
                res["error"] = "timed out: %s" % e
                log("[%s] FAILED: %s" % (name, res["error"]))
                status = 1
            res["rows"] = build_rows(res, a.steps) if res.get("dbperf") else []
            if any(r["dbperf_status"] not in (None, "ok") or r["iibench_failed"] for r in res["rows"]):
                status = 1
            print("\n" + engine_title(name, res))
            if res["rows"]:
                print(text_table(res["rows"]))
            for n in notes(name, res):
                print("  " + n)
            sys.stdout.flush()
    except (KeyboardInterrupt, Interrupted):
        log("interrupted: servers stopped")
        status = 130
    finally:
        if floor:
            floor.close()
        report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        report["host"]["loadavg_end"] = os.getloadavg()
        if a.out:
            write_out(a, report)
        if a.keep:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if status == 130:
        return status
    print("\nOp: inserted row (l.i0, l.i1, l.i2), indexed row (l.x), query (qr*, qp*). µs/op = "
          "client CPU (user+system) per op; server µs/op from the server's process tree; client "
          "share = dbperf client / (client + server) CPU in l.i0; floor = C client's CPU per round "
          "trip against an echo server burning dbperf's server CPU per query, measured right after "
          "dbperf's run.")
    return status


def write_out(a, report):
    base = a.out
    for ext in (".md", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    md = ["<!-- scripts/sidebyside.py --rows %d --rows2 %d --time %g --steps %s -->" % (
        a.rows, a.rows2, a.time, ",".join(a.steps))]
    for name, res in report["engines"].items():
        md += ["", "**%s**" % engine_title(name, res), "", md_table(res.get("rows") or [])]
        ns = notes(name, res)
        if ns:
            md += [""] + ["- " + n for n in ns]
    with open(base + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    with open(base + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
        f.write("\n")
    log("wrote %s.md and %s.json" % (base, base))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
