"""The round-trip floor (two small C programs compiled at run time with gcc: an echo server
that burns a given CPU per request, and a blocking client that measures its own CPU per
round trip), and the measurement of the size of dbperf's statements on the wire that the
insert floor copies (`ss -ti` over TCP, the server's status counters over a unix socket)."""

import json
import os
import re
import subprocess
import time

from .common import BadInput, EngineFailed, delta
from .procfs import machine_busy_sec, tree_cpu_sec
from .servers import run_sql

# full_write, which both programs need (a write that finishes what a short write left).
FULL_WRITE_C = r"""
static int full_write(int fd, const void *b, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char *)b + put, n - put);
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    put += (size_t)r;
  }
  return 1;
}
"""

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
@FULL_WRITE@
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

ECHO_C = ECHO_C.replace("@FULL_WRITE@\n", FULL_WRITE_C.lstrip("\n"))

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
@FULL_WRITE@
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
RTT_C = RTT_C.replace("@FULL_WRITE@\n", FULL_WRITE_C.lstrip("\n"))


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
        out["server_cpu_sec"] = delta(e0, e1)
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
        self.conns.update(parse_ss_ti(p.stdout, self.FIELDS))

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


def parse_ss_ti(text, fields=WireSampler.FIELDS):
    """The output of `ss -tinH` -> peer address -> {field: int} of fields, for each
    connection whose info line has bytes_received and data_segs_in. A connection is a line
    that starts in column 0 (its last column the peer), then its indented info line."""
    conns = {}
    peer = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            f = line.split()
            peer = f[-1] if f else None
            continue
        if peer is None:
            continue
        vals = {}
        for k in fields:
            m = re.search(r"\b%s:(\d+)" % k, line)
            if m:
                vals[k] = int(m.group(1))
        if "bytes_received" in vals and "data_segs_in" in vals:
            conns[peer] = vals
    return conns


MYSQL_WIRE_VARS = ("Bytes_received", "Bytes_sent", "Questions")


def mysql_wire_status(a, conn):
    rows = run_sql(a, conn, ["show global status where variable_name in (%s)"
                             % ",".join("'%s'" % v for v in MYSQL_WIRE_VARS)])[0]
    return {r[0]: int(r[1]) for r in rows}
