#!/usr/bin/env python3
"""Run dbperf and the reference client iibench.py side by side on one managed server per
engine, in paired rounds, and print the ratios of their client CPU per operation and the
ratio of dbperf's to a round-trip floor's (issue 9).

Usage (from the repository root, after `make build`):

    python3 scripts/sidebyside.py --iibench /path/to/iibench.py
    python3 scripts/sidebyside.py --iibench PATH --engines postgres --rows 100000 \\
        --rows2 50000 --time 8 --rounds 2 --out sidebyside  # writes sidebyside.md and .json

iibench.py is bench/ibench/iibench.py of https://github.com/mdcallag/mytools (this script
never copies it, it runs it from PATH). It needs, in the Python that runs it (--python,
default this interpreter, else Debian's /usr/bin/python3 when only that one has them):
psycopg2 for postgres and MySQLdb for innodb/rocksdb -- Debian:
`apt-get install python3-psycopg2 python3-mysqldb`, or pip: `pip install psycopg2-binary
mysqlclient`. The round-trip floor is two small C programs compiled at run time with gcc.

Why rounds: on a shared or virtual machine the CPU cost of the same work changes by 2-3x
within minutes, so a figure measured at one moment cannot be compared with one measured
ten minutes later. Every comparison is therefore made between measurements taken next to
each other in time, repeated in rounds, and reported as the median of the per-round
ratios with their min-max.

Per engine (postgres, innodb, rocksdb) the script starts ONE throwaway server (`dbperf
server start`, in a temporary --workdir; stopped at the end, also on an error or Ctrl-C)
and then, per step in order (l.i0, l.x, l.i1, l.i2, qr*, qp*), runs --rounds rounds of

    odd rounds:   dbperf step, floor, iibench.py step
    even rounds:  iibench.py step, dbperf step, floor

so the floor always follows dbperf's measurement it takes its server CPU from, and each
tool goes first as often as the other. l.x (the secondary indexes, ~0 client CPU for both)
runs once, dbperf's, and is reported from that one run.

 - dbperf: one process per step, `dbperf run insertbench --dsn ... --steps STEP
   --clients 1` (the steps after l.i0 work on the table an earlier step left on the
   server); the step's figures come from `dbperf report --format json`: client_cpu_sec,
   the primary op's count, hw.server.cpu_sec, conn_cpu. Its whole process is also measured
   from outside (rusage) as a cross-check.
 - iibench.py: one process per step with the reference drivers' flags (iq.sh, np.sh):
   l.i0 --setup, 0 secondary indexes, 100 rows/commit; l.i1/l.i2 --delete_per_insert with
   50/5 rows/commit; qrN/qpN --inserts_per_second=N --query_threads=1 (qp:
   --query_pk_only) until time x N rows are inserted; --data_length_min=10
   --data_length_max=20; Postgres --use_prepared_query over TCP; MySQL over the server's
   unix socket. Its client CPU is the rusage of the iibench process and all its
   descendants (it forks; this script waits for them as a child subreaper, so even orphans
   are counted); the server's CPU is read from /proc (utime+stime+cutime+cstime of the
   server's process tree, so exited PostgreSQL backends count too).
 - l.i0: before each tool's l.i0 the script drops the table itself (and on PostgreSQL runs
   CHECKPOINT), so both start from the same empty database, whichever ran before.
 - Before every measurement the script waits (up to --settle seconds) until the server's
   process tree has used less than 10% of a CPU for a second: background work left by the
   previous measurement (autovacuum, purge, flushing, compaction, a dropped table) is not
   charged to the next one.
 - The floor, right after dbperf's step: a minimal blocking C client (one request/reply at
   a time, TCP_NODELAY on TCP) against a C echo server on the same machine, over dbperf's
   transport, for --floor-secs. Per request the echo server burns (CLOCK_THREAD_CPUTIME_ID
   loop) the server CPU per statement dbperf's run of the same round just measured: the CPU
   of the server's connections (dbperf's conn_cpu, the part of the server's work a round
   trip waits for), else the whole server's (hw.server.cpu_sec).
     qr*/qp* (query floor): 16-byte request, 8-byte reply; burn = query connection CPU per
       query; floor = client CPU per round trip, in us per query.
     l.i0/l.i1/l.i2 (insert floor): the request and reply are as large as dbperf's
       statements were on the wire in that run (average over its INSERTs and, in l.i1/l.i2,
       its DELETEs: PostgreSQL over TCP: bytes_received / data_segs_in and bytes_sent /
       data_segs_out of the server's end of each of dbperf's connections, from `ss -ti`
       sampled during the step; MariaDB over its unix socket: the server's Bytes_received
       and Bytes_sent status counters over the step / dbperf's statements); burn = the
       connections' CPU per statement; floor = client CPU per round trip x statements per
       inserted row (1/100 in l.i0; 2/50 in l.i1, an INSERT and a DELETE per 50 rows), in
       us per row.

Op = inserted row (l.i0, l.i1, l.i2), indexed row (l.x), query (qr*, qp*). Targets (issue 9),
judged on the medians: l.i0 <= 0.6 us/row and a client share (client / (client + server
CPU)) under 10%; l.i1 <= 1.5 us/row; every read-write step's client CPU per query <=
iibench.py's and <= 1.15 x the round-trip floor.

Exit status: 0 all engines measured, 1 an engine or a measurement failed (the rest is still
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

# The Insert Benchmark's steps this script compares, in the order of the spec (reference
# §1.9); cleanup is not compared (neither client does much in it).
KNOWN_STEPS = ["l.i0", "l.x", "l.i1", "l.i2",
               "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"]
RW_STEP = re.compile(r"^q([rp])(\d+)$")
INSERT_STEPS = ("l.i0", "l.i1", "l.i2")

# --engines name -> (dbperf engine, MariaDB storage engine, iibench --dbms, Python module)
ENGINES = {
    "postgres": ("postgres", None, "postgres", "psycopg2"),
    "innodb": ("mariadb", "innodb", "mysql", "MySQLdb"),
    "rocksdb": ("mariadb", "rocksdb", "mysql", "MySQLdb"),
}

TABLE = "pi1"  # dbperf's table for client 1; iibench uses the same name (np.sh: pi${n})
IIBENCH_SEED = 3221223452  # iibench.py's default --seed
DBPERF_SEED = 3221223452   # dbperf's default --seed

TARGET_LI0_US = 0.6
TARGET_LI1_US = 1.5
TARGET_SHARE = 0.10
TARGET_FLOOR = 1.15

# The query floor's messages (bytes): the header the echo server needs, and a short reply.
QUERY_REQ_BYTES = 16
QUERY_REP_BYTES = 8

# settle: the server is quiet when its process tree used less than this share of one CPU
# in each of two consecutive half-second windows.
QUIET_SHARE = 0.10

# An "other work" note is printed for measurements where more than this share of the
# machine's busy CPU was neither the client's nor the server's.
BUSY_NOTE_SHARE = 0.25

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
/* sidebyside echo server. A request is a 16-byte header -- the nanoseconds of its own
   thread CPU to burn (u64), the request's total length in bytes, header included (u32),
   the reply's length in bytes (u32), all little-endian -- followed by length-16 bytes of
   payload. It reads the whole request, burns the CPU, and writes a reply of that length
   (its first 8 bytes the burn). One connection at a time; prints its port (tcp) or path
   (unix) on start. */
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

#define MAXMSG (16u << 20)

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
  char *in = malloc(MAXMSG), *out = calloc(1, MAXMSG);
  if (!in || !out) { perror("malloc"); return 1; }
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
    for (;;) {
      uint64_t burn; uint32_t len[2];
      if (full_read(c, in, 16) != 1) break;
      memcpy(&burn, in, 8); memcpy(len, in + 8, 8);
      if (len[0] < 16 || len[0] > MAXMSG || len[1] < 8 || len[1] > MAXMSG) break;
      if (len[0] > 16 && full_read(c, in + 16, len[0] - 16) != 1) break;
      if (burn) { uint64_t s = thread_ns(); while (thread_ns() - s < burn) {} }
      memcpy(out, &burn, 8);
      if (full_write(c, out, len[1]) != 1) break;
    }
    close(c);
  }
}
"""

RTT_C = r"""
/* sidebyside round-trip client: one blocking request (written with one write) and reply
   at a time for SECONDS, after 200 warm-up round trips; prints one JSON line with its own
   CPU (getrusage) per round trip. On a unix socket each read first waits in poll(2): a
   read sleeping in the kernel is also woken when the server takes the request off the
   socket (write-space wake-ups are not filtered for blocked readers), one wake-up too
   many per round trip, which dbperf avoids the same way (engine/blockconn).
   usage: rtt tcp PORT|unix PATH BURN_NS REQ_BYTES REP_BYTES SECONDS */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int use_poll;
static int full_read(int fd, void *b, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (use_poll) {
      struct pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, -1) < 0) { if (errno == EINTR) continue; return -1; }
    }
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
  if (argc != 7) { fprintf(stderr, "usage: rtt tcp PORT|unix PATH BURN_NS REQ_BYTES REP_BYTES SECONDS\n"); return 2; }
  int tcp = strcmp(argv[1], "tcp") == 0, fd;
  uint64_t burn = strtoull(argv[3], NULL, 10);
  uint32_t len[2] = {(uint32_t)strtoul(argv[4], NULL, 10), (uint32_t)strtoul(argv[5], NULL, 10)};
  double secs = atof(argv[6]);
  if (len[0] < 16) len[0] = 16;
  if (len[1] < 8) len[1] = 8;
  char *req = calloc(1, len[0]), *rep = malloc(len[1]);
  if (!req || !rep) { perror("malloc"); return 1; }
  memcpy(req, &burn, 8); memcpy(req + 8, len, 8);
  for (uint32_t i = 16; i < len[0]; i++) req[i] = (char)('a' + i % 26);
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
    use_poll = 1;
  }
  for (int i = 0; i < 200; i++)
    if (full_write(fd, req, len[0]) != 1 || full_read(fd, rep, len[1]) != 1) { perror("warm-up"); return 1; }
  struct rusage r0, r1; struct timespec w0, w1, now;
  getrusage(RUSAGE_SELF, &r0); clock_gettime(CLOCK_MONOTONIC, &w0);
  double deadline = ts(w0) + secs;
  uint64_t n = 0;
  for (;;) {
    if (full_write(fd, req, len[0]) != 1 || full_read(fd, rep, len[1]) != 1) { perror("round trip"); return 1; }
    n++;
    if ((n & 31) == 0) { clock_gettime(CLOCK_MONOTONIC, &now); if (ts(now) >= deadline) break; }
  }
  clock_gettime(CLOCK_MONOTONIC, &w1); getrusage(RUSAGE_SELF, &r1);
  double u = tv(r1.ru_utime) - tv(r0.ru_utime), s = tv(r1.ru_stime) - tv(r0.ru_stime), w = ts(w1) - ts(w0);
  printf("{\"round_trips\": %llu, \"req_bytes\": %u, \"rep_bytes\": %u, \"wall_sec\": %.6f, "
         "\"user_sec\": %.6f, \"sys_sec\": %.6f, \"cpu_us_per_rt\": %.3f, \"wall_us_per_rt\": %.3f}\n",
         (unsigned long long)n, len[0], len[1], w, u, s, (u + s) * 1e6 / n, w * 1e6 / n);
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
    """CPU seconds every process of the machine has used, kernel threads included, each
    with the children it has waited for (utime+stime+cutime+cstime), summed: its difference
    over a window is the machine's busy CPU in it, processes that exited within it
    included (they count through their parent's cutime/cstime). As dbperf's hw.cpupq, not
    /proc/stat's busy ticks, which on a tickless kernel miss work shorter than a tick."""
    return sum(v[1] for v in proc_stat_all().values()) / TICK


# --------------------------------------------------------------------------- children

_libc = None


def _set_subreaper():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def run_measured(argv, cwd, env, out_path, timeout, stop_signal=signal.SIGTERM, tick=None):
    """Run argv in its own process group under a forked subreaper that waits for it and
    every descendant (orphans included), and return the rusage of that whole tree:
    {rc, user_sec, sys_sec, wall_sec, maxrss_kb, timed_out}. stdout+stderr go to out_path.
    On timeout or Ctrl-C the group gets stop_signal, then SIGKILL after 15 s. tick(), if
    given, is called every 50 ms while it runs (in this process, after the fork)."""
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
            if tick is not None and not timed_out:
                tick()
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


def redact_argv(argv):
    """argv as recorded: the value of a --db_password= argument replaced by xxxxx."""
    return [x if not x.startswith("--db_password=") or x == "--db_password=" else "--db_password=xxxxx"
            for x in argv]


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
                p.wait()
                raise EngineFailed("the echo server (%s) did not start" % transport)
            self.servers[transport] = (p, addr)
        return self.servers[transport][1]

    def measure(self, transport, burn_us, req_bytes, rep_bytes, secs):
        """One run of the C client; its JSON plus the echo server's CPU and the machine's
        busy CPU over the run."""
        addr = self.address(transport)
        echo_pid = self.servers[transport][0].pid
        argv = [self.bin["rtt"], transport, addr, str(int(round(burn_us * 1000))),
                str(int(round(req_bytes))), str(int(round(rep_bytes))), "%g" % secs]
        e0, busy0 = tree_cpu_sec(echo_pid), machine_busy_sec()
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=secs + 30 + burn_us * 1e-6 * 300, start_new_session=True)
        e1, busy1 = tree_cpu_sec(echo_pid), machine_busy_sec()
        if p.returncode != 0:
            raise EngineFailed("round-trip client failed: %s" % p.stdout.strip())
        out = json.loads(p.stdout)
        out["server_cpu_sec"] = _delta(e0, e1)
        out["machine_busy_sec"] = busy1 - busy0
        return out

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


# --------------------------------------------------------------------------- wire sizes

class WireSampler:
    """Samples `ss -ti` for the server's end of every established TCP connection to port
    while dbperf's step runs (at 0.1, 0.2, 0.4, 0.8, 1.5, 3 s, then every 5 s), keeping each
    connection's last sample. Each of dbperf's statements is one request and one reply, one
    segment each on loopback, so bytes_received / data_segs_in is the average request and
    bytes_sent / data_segs_out the average reply, whenever the sample was taken."""

    SCHEDULE = [0.1, 0.2, 0.4, 0.8, 1.5, 3.0]
    FIELDS = ("bytes_sent", "bytes_received", "data_segs_in", "data_segs_out")

    def __init__(self, port):
        self.port = port
        self.conns = {}
        self.t0 = None
        self.k = 0
        self.samples = 0

    def tick(self):
        now = time.monotonic()
        if self.t0 is None:
            self.t0 = now
        k = self.k
        due = self.SCHEDULE[k] if k < len(self.SCHEDULE) else \
            self.SCHEDULE[-1] + 5 * (k - len(self.SCHEDULE) + 1)
        if now - self.t0 >= due:
            self.k += 1
            self.sample()

    def sample(self):
        try:
            p = subprocess.run(["ss", "-tinH", "state", "established",
                                "( sport = :%d )" % self.port],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return
        self.samples += 1
        peer = None
        for line in p.stdout.splitlines():
            if line and not line[0].isspace():
                f = line.split()
                peer = f[-1] if f else None
                continue
            if peer is None:
                continue
            vals = {}
            for k in self.FIELDS:
                m = re.search(r"\b%s:(\d+)" % k, line)
                if m:
                    vals[k] = int(m.group(1))
            if "bytes_received" in vals and "data_segs_in" in vals:
                self.conns[peer] = vals

    def result(self):
        conns = [c for c in self.conns.values() if c.get("data_segs_in")]
        if not conns:
            return None
        segs_in = sum(c["data_segs_in"] for c in conns)
        segs_out = sum(c.get("data_segs_out", 0) for c in conns)
        rep = sum(c.get("bytes_sent", 0) for c in conns) / segs_out if segs_out else None
        return {"source": "ss -ti at the server's end of dbperf's TCP connections",
                "req_bytes": sum(c["bytes_received"] for c in conns) / segs_in,
                "rep_bytes": rep, "samples": self.samples, "connections": self.conns}


MYSQL_WIRE_VARS = ("Bytes_received", "Bytes_sent", "Questions")


def mysql_wire_status(a, conn):
    rows = run_sql(a, conn, ["show global status where variable_name in (%s)"
                             % ",".join("'%s'" % v for v in MYSQL_WIRE_VARS)])[0]
    return {r[0]: int(r[1]) for r in rows}


# --------------------------------------------------------------------------- settle

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


# --------------------------------------------------------------------------- iibench

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


def run_sql(a, conn, sqls, timeout=600):
    cfg = dict(conn)
    cfg["sql"] = sqls
    p = subprocess.run([a.python, "-c", SQL_HELPER, json.dumps(cfg)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, start_new_session=True)
    if p.returncode != 0:
        raise EngineFailed("SQL %s failed: %s" % (sqls, p.stdout.strip()[-600:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- one engine

def _delta(x0, x1):
    return None if x0 is None or x1 is None else x1 - x0


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
        if not _alive(self.pid):
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
        rec.update({"argv": argv, "outside": r, "server_cpu_sec_outside": _delta(cpu0, cpu1),
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
                    "server_cpu_sec": _delta(cpu0, cpu1), "machine_busy_sec": busy1 - busy0,
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


# --------------------------------------------------------------------------- summary

def per_op(sec, ops):
    if sec is None or not ops:
        return None
    return sec * 1e6 / ops


def _ok(rec):
    return bool(rec) and not rec.get("failed") and not rec.get("skipped")


def round_figures(step, rr):
    """The per-round figures the table summarises (also stored in the JSON)."""
    d, i, f = rr.get("dbperf"), rr.get("iibench"), rr.get("floor")
    out = {"dbperf_us": None, "iibench_us": None, "dbperf_server_us": None,
           "iibench_server_us": None, "floor_us": None, "ratio": None, "vs_floor": None,
           "share": None}
    if _ok(d):
        out["dbperf_us"] = per_op(d.get("client_cpu_sec"), d.get("ops"))
        out["dbperf_server_us"] = per_op(d.get("server_cpu_sec"), d.get("ops"))
        if step == "l.i0" and d.get("client_cpu_sec") is not None and d.get("server_cpu_sec") is not None:
            tot = d["client_cpu_sec"] + d["server_cpu_sec"]
            out["share"] = d["client_cpu_sec"] / tot if tot else None
    if _ok(i):
        out["iibench_us"] = per_op(i.get("client_cpu_sec"), i.get("ops"))
        out["iibench_server_us"] = per_op(i.get("server_cpu_sec"), i.get("ops"))
    if _ok(f):
        out["floor_us"] = f.get("us_per_op")
    dc, ic, fl = out["dbperf_us"], out["iibench_us"], out["floor_us"]
    if step != "l.x" and dc is not None and ic:
        out["ratio"] = dc / ic
    if dc is not None and fl:
        out["vs_floor"] = dc / fl
    return out


def _stats(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def build_rows(res, steps):
    rows = []
    for step in steps:
        srec = (res.get("steps") or {}).get(step)
        if not srec or not srec.get("rounds"):
            continue
        figs = []
        for rr in srec["rounds"]:
            rr["figures"] = round_figures(step, rr)
            figs.append(rr["figures"])
        st = {k: _stats(f[k] for f in figs) for k in figs[0]}
        row = {"step": step,
               "op": "inserted row" if step in INSERT_STEPS else
                     "indexed row" if step == "l.x" else "query",
               "rounds": len(srec["rounds"]), **st,
               "failed": [("%s r%d: %s" % (who, rr["round"], rr[who]["failed"]))
                          for rr in srec["rounds"] for who in ("dbperf", "iibench", "floor")
                          if (rr.get(who) or {}).get("failed")]}
        # met: True, False, or None when a figure is missing; "split" when the rounds
        # disagree (some meet the target, some do not).
        checks = []

        def check(name, key, limit, strict=False):
            s = st[key]
            per = [f[key] for f in figs if f[key] is not None]
            if s["median"] is None:
                checks.append({"target": name, "met": None, "split": False})
                return
            ok = (lambda x: x < limit) if strict else (lambda x: x <= limit)
            checks.append({"target": name, "met": ok(s["median"]),
                           "split": len({ok(x) for x in per}) > 1})
        if step == "l.i0":
            check("≤%.1fµs" % TARGET_LI0_US, "dbperf_us", TARGET_LI0_US)
            check("share<%d%%" % (TARGET_SHARE * 100), "share", TARGET_SHARE, strict=True)
        elif step == "l.i1":
            check("≤%.1fµs" % TARGET_LI1_US, "dbperf_us", TARGET_LI1_US)
        elif RW_STEP.match(step):
            check("≤iibench", "ratio", 1.0)
            check("≤%.2f×floor" % TARGET_FLOOR, "vs_floor", TARGET_FLOOR)
        row["targets"] = checks
        rows.append(row)
    return rows


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


def fmt_spread(s, kind):
    if s["median"] is None:
        return "–"
    if s["n"] < 2:
        return fmt(s["median"], kind)
    return "%s (%s–%s)" % (fmt(s["median"], kind), fmt(s["min"], kind), fmt(s["max"], kind))


HEAD = ["step", "op", "rounds", "dbperf µs/op", "iibench µs/op", "dbperf/iibench (min–max)",
        "floor µs/op", "dbperf/floor (min–max)", "server µs/op dbperf", "server µs/op iibench",
        "client share", "targets"]


def row_cells(r):
    t = " ".join("%s %s%s" % (x["target"], {True: "✓", False: "✗", None: "?"}[x["met"]],
                               "*" if x["split"] else "")
                 for x in r["targets"])
    return [r["step"], r["op"], str(r["rounds"]), fmt(r["dbperf_us"]["median"]),
            fmt(r["iibench_us"]["median"]), fmt_spread(r["ratio"], "ratio"),
            fmt(r["floor_us"]["median"]), fmt_spread(r["vs_floor"], "ratio"),
            fmt(r["dbperf_server_us"]["median"]), fmt(r["iibench_server_us"]["median"]),
            fmt(r["share"]["median"], "pct"), t or "–"]


def engine_title(name, res):
    srv = res.get("server") or {}
    bits = ["%s %s" % (name, srv.get("version") or "")]
    tr = res.get("transport")
    if tr:
        bits.append("dbperf over %s, iibench.py over %s" % (tr["dbperf"], tr["iibench"]))
    if res.get("seconds") is not None:
        bits.append("%.0f min" % (res["seconds"] / 60))
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


def _other_share(busy, client, server):
    if not busy or client is None or server is None:
        return None
    return (busy - client - server) / busy


def notes(name, res, a):
    """Cross-checks and caveats printed under an engine's table."""
    out = []
    steps = res.get("steps") or {}
    # The floor's parameters.
    fl = []
    for step, srec in steps.items():
        fs = [rr["floor"] for rr in srec["rounds"] if _ok(rr.get("floor"))]
        if not fs:
            continue
        med = lambda k: statistics.median(f[k] for f in fs)
        bits = "burn %s µs" % fmt(med("burn_us"))
        if step in INSERT_STEPS:
            bits += ", request %.0f B, reply %.0f B, %.4g round trips/row" % (
                med("req_bytes"), med("rep_bytes"), med("rt_per_op"))
        bits += ", %s µs/round trip" % fmt(med("us_per_rt"))
        fl.append("%s %s" % (step, bits))
    if fl:
        out.append("floor (medians over rounds; %s, %g s per run): %s"
                   % ((res.get("transport") or {}).get("dbperf", "?"), a.floor_secs, "; ".join(fl)))
    # dbperf's whole process from outside vs its steps' own client CPU.
    xs = []
    for step, srec in steps.items():
        v = [per_op(rr["dbperf"]["outside"]["user_sec"] + rr["dbperf"]["outside"]["sys_sec"],
                    rr["dbperf"].get("ops"))
             for rr in srec["rounds"] if _ok(rr.get("dbperf"))
             and rr["dbperf"].get("outside", {}).get("user_sec") is not None]
        v = [x for x in v if x is not None]
        if v:
            xs.append("%s %s" % (step, fmt(statistics.median(v))))
    if xs:
        out.append("dbperf's whole process per op, from outside (rusage: start-up, audit and "
                   "results store included), median: " + ", ".join(xs))
    # Settling.
    waited, capped = 0.0, []
    for step, srec in steps.items():
        for rr in srec["rounds"]:
            for who in ("dbperf", "iibench", "floor"):
                s = (rr.get(who) or {}).get("settle_sec")
                if s is None:
                    continue
                waited += s
                if a.settle > 0 and s >= a.settle:
                    capped.append("%s %s r%d" % (who, step, rr["round"]))
    out.append("waited %.0f s in all for a quiet server%s" % (
        waited, "; still busy after --settle %g s before: %s" % (a.settle, ", ".join(capped))
        if capped else ""))
    # Other work on the machine.
    busy = []
    for step, srec in steps.items():
        shares = []
        for rr in srec["rounds"]:
            for who in ("dbperf", "iibench", "floor"):
                r = rr.get(who)
                if not _ok(r):
                    continue
                if who == "floor":
                    s = r["sample"]
                    b, c, sv = s.get("machine_busy_sec"), s["user_sec"] + s["sys_sec"], s.get("server_cpu_sec")
                elif who == "dbperf":  # its whole process: the same window as the others
                    o = r.get("outside") or {}
                    b, sv = r.get("machine_busy_sec_outside"), r.get("server_cpu_sec_outside")
                    c = o["user_sec"] + o["sys_sec"] if o.get("user_sec") is not None else None
                else:
                    b, c, sv = r.get("machine_busy_sec"), r.get("client_cpu_sec"), r.get("server_cpu_sec")
                sh = _other_share(b, c, sv)
                if sh is not None and b > 0.5:
                    shares.append(max(0.0, sh))
        if shares and max(shares) > BUSY_NOTE_SHARE:
            busy.append("%s %.0f%% (%.0f–%.0f%%)" % (step, 100 * statistics.median(shares),
                                                   100 * min(shares), 100 * max(shares)))
    if busy:
        out.append("other work on the machine, share of its busy CPU that was neither client nor "
                   "server, median (min–max) over the step's measurements: " + ", ".join(busy))
    for r in res.get("rows") or []:
        for f in r["failed"]:
            out.append("FAILED %s %s" % (r["step"], f))
    if res.get("error"):
        out.append("ERROR: " + res["error"])
    return out


# --------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(
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


LEGEND = ("Op: inserted row (l.i0, l.i1, l.i2), indexed row (l.x), query (qr*, qp*). Per step "
          "ROUNDS rounds of dbperf, floor, iibench.py (even rounds: iibench.py, dbperf, floor); "
          "µs/op = client CPU (user+system) per op, median over rounds; ratios = median of the "
          "per-round ratios (min–max); floor = a blocking C client's CPU per op against an echo "
          "server burning dbperf's server CPU per statement of the same round (queries: per "
          "query; inserts: per row, with requests as large as dbperf's statements); server µs/op "
          "medians; client share = dbperf client / (client + server) CPU in l.i0; targets judged "
          "on the medians, * = the rounds disagree.")


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
            print("\n" + engine_title(name, res))
            if res["rows"]:
                print(text_table(res["rows"]))
            for n in notes(name, res, a):
                print("  " + n)
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
    print("\n" + LEGEND.replace("ROUNDS", str(a.rounds)))
    log("done in %.0f min" % (report["seconds"] / 60))
    return status


def write_out(a, report):
    base = a.out
    for ext in (".md", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    md = ["<!-- scripts/sidebyside.py --engines %s --rows %d --rows2 %d --time %g --rounds %d "
          "--steps %s --floor-secs %g --settle %g; %s, %.0f min -->" % (
              ",".join(a.engines), a.rows, a.rows2, a.time, a.rounds, ",".join(a.steps),
              a.floor_secs, a.settle, report["started_at"], report.get("seconds", 0) / 60)]
    for name, res in report["engines"].items():
        md += ["", "**%s**" % engine_title(name, res), "", md_table(res.get("rows") or [])]
        ns = notes(name, res, a)
        if ns:
            md += [""] + ["- " + n for n in ns]
    md += ["", LEGEND.replace("ROUNDS", str(a.rounds))]
    with open(base + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    with open(base + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
        f.write("\n")
    log("wrote %s.md and %s.json" % (base, base))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
