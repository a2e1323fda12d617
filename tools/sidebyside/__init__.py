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

# The package, by job (scripts/sidebyside.py is a launcher for cli.main):
#   common.py    steps, engines, exceptions, log
#   procfs.py    /proc: a process tree's CPU, the machine's busy CPU, whether a pid lives
#   children.py  running a measured child under a subreaper (rusage of its whole tree)
#   servers.py   dbperf server start/stop, DSNs, SQL on the server, waiting for quiet
#   floor.py     the C echo server and round-trip client; statement sizes on the wire
#   rounds.py    one engine's rounds of dbperf, floor and iibench.py
#   report.py    per-round figures, tables, notes; text, Markdown and JSON
#   cli.py       options, their checks, main
# Tests: python3 -m unittest discover -s tools -t .   (from the repository's root)
