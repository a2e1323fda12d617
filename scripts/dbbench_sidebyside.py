#!/usr/bin/env python3
"""dbperf's rocksdb engine side by side with db_bench on the same RocksDB, in one run.

Debian's rocksdb-tools ships db_bench 7.8.3, built on the same librocksdb 7.8.3 that
dbperf's rocksdb engine links (grocksdb v1.7.14). Each round, with the same key/value
sizes, key count, LSM options, cache and bloom filter on both sides:

  fillseq     db_bench's fillseq (vector memtable, no WAL: §4.1 row 1) into a new DB of
              its own, and dbperf's fillseq_disable_wal into a new work dir;
  readrandom  db_bench's readrandom (--use_existing_db) and dbperf's readrandom (a run of
              that step alone on the work dir), both on dbperf's fill: the same tree, so
              the shape (files per level) cannot differ; 1 thread, --duration each.

Each side of a step runs in its own process, in alternating order from round to round;
with --together the two readrandoms run at the same time instead, each on a core and its
own copy of the tree, so that the VM's speed, which changes from second to second, is the
same for both. db_bench runs with --histogram=1, timing every op as dbperf does and as the
reference's benchmark.sh runs it (§4.1), unless --db-bench-histogram 0.

It prints ops/s and CPU µs per op of each side and their ratio, per round and the median.
db_bench's CPU is its process's (wait4's rusage, open and close included); dbperf's is the
client CPU it measures itself per step (/proc/self/stat over the timed load), which is all
of the engine's CPU too: both engines run inside the benchmark process.

Usage: scripts/dbbench_sidebyside.py [--num 500000] [--duration 15] [--rounds 3]
       [--together] [--db-bench-histogram 1] [--dbperf bin/dbperf] [--db-bench db_bench]
       [--workdir DIR] [--json out.json]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20


def lsm_flags(a):
    """The LSM options both sides use (db_bench flag → dbperf flag)."""
    return [
        ("key_size", "key-size", "20"),
        ("value_size", "value-size", "400"),
        ("compression_type", "compression", "lz4"),
        ("write_buffer_size", "write-buffer-size", str(a.write_buffer_mb * MIB)),
        ("max_write_buffer_number", "max-write-buffer-number", "8"),
        ("target_file_size_base", "target-file-size-base", str(a.write_buffer_mb * MIB)),
        ("max_bytes_for_level_base", "max-bytes-for-level-base", str(4 * a.write_buffer_mb * MIB)),
        ("max_bytes_for_level_multiplier", "level-multiplier", "8"),
        ("num_levels", "num-levels", "8"),
        ("level0_file_num_compaction_trigger", "l0-compaction-trigger", "4"),
        ("level0_slowdown_writes_trigger", "l0-slowdown-trigger", "20"),
        ("level0_stop_writes_trigger", "l0-stop-trigger", "30"),
        ("max_background_jobs", "max-background-jobs", "2"),
        ("cache_size", "cache-size", str(a.cache_mb * MIB)),
        ("block_size", "block-size", "8192"),
        ("bloom_bits", "bloom-bits", "10"),
    ]


class Proc:
    """A child process whose own CPU time is read with wait4 (so two can run at once)."""

    def __init__(self, argv, out):
        self.argv, self.out = argv, out
        with open(out, "w") as f:
            self.p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)

    def wait(self):
        """Waits; returns (CPU seconds, output) and exits on a failure."""
        _, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        with open(self.out) as f:
            text = f.read()
        if self.p.returncode != 0:
            sys.exit("%s failed (%d):\n%s" % (" ".join(self.argv[:3]), self.p.returncode, text[-2000:]))
        return ru.ru_utime + ru.ru_stime, text


def db_bench_start(a, db, benchmark, extra, out):
    argv = [a.db_bench, "--benchmarks=" + benchmark, "--db=" + db, "--num=%d" % a.num, "--threads=1",
            "--compression_ratio=0.5", "--statistics=1", "--histogram=%d" % a.db_bench_histogram,
            "--open_files=-1", "--level_compaction_dynamic_level_bytes=true", "--min_level_to_compress=-1",
            "--seed=1"]  # db_bench 7.8 has no --bottommost_compression: unset, as "disable"
    argv += ["--%s=%s" % (f, v) for f, _, v in lsm_flags(a)] + extra
    return Proc(argv, out)


def db_bench_result(benchmark, proc):
    """db_bench's result line: (ops/s, CPU seconds, ops or None)."""
    cpu, out = proc.wait()
    m = re.search(r"^%s\s*:\s*([\d.]+) micros/op ([\d.]+) ops/sec(?: [\d.]+ seconds)? (\d+) operations" % benchmark,
                  out, re.M)
    if m:
        return float(m.group(2)), cpu, int(m.group(3))
    m = re.search(r"^%s\s*:\s*([\d.]+) micros/op ([\d.]+) ops/sec" % benchmark, out, re.M)
    if not m:
        sys.exit("no result line for %s in db_bench's output:\n%s" % (benchmark, out[-2000:]))
    return float(m.group(2)), cpu, None


def db_bench_fill(a, workdir):
    """db_bench's fillseq (vector memtable, no WAL) into a new DB of its own."""
    db = os.path.join(workdir, "db_bench")
    shutil.rmtree(db, ignore_errors=True)
    proc = db_bench_start(a, db, "fillseq", ["--disable_wal=1", "--memtablerep=vector",
                                             "--allow_concurrent_memtable_write=false"],
                          os.path.join(workdir, "db_bench.out"))
    ops_sec, cpu, ops = db_bench_result("fillseq", proc)
    shutil.rmtree(db, ignore_errors=True)
    return {"ops_sec": ops_sec, "cpu_us_per_op": cpu * 1e6 / (ops or a.num)}


def db_bench_read_start(a, db, workdir):
    return db_bench_start(a, db, "readrandom", ["--use_existing_db=1", "--duration=%g" % a.duration],
                          os.path.join(workdir, "db_bench.out"))


def db_bench_read_result(proc):
    ops_sec, cpu, ops = db_bench_result("readrandom", proc)
    return {"ops_sec": ops_sec, "cpu_us_per_op": cpu * 1e6 / ops if ops else None}


def db_bench_read(a, workdir):
    """db_bench's readrandom on dbperf's fill (the same tree dbperf reads)."""
    return db_bench_read_result(db_bench_read_start(a, os.path.join(workdir, "dbperf-work", "db"), workdir))


def dbperf_start(a, workdir, step):
    """Starts one dbperf run of one step in the shared work dir."""
    results = os.path.join(workdir, "dbperf.db")
    if os.path.exists(results):
        os.remove(results)
    argv = [a.dbperf, "run", "dbbench", "--engine", "rocksdb", "--scale", "small",
            "--steps", step, "--num", str(a.num), "--threads", "1",
            "--duration", "%g" % a.duration, "--min-level-to-compress", "-1",
            "--bottommost-compression", "disable", "--results", results, "--quiet", "--seed", "1",
            "--workdir", os.path.join(workdir, "dbperf-work")]
    argv += ["--%s=%s" % (f, v) for _, f, v in lsm_flags(a)]
    return Proc(argv, os.path.join(workdir, "dbperf.out"))


def dbperf_result(a, workdir, proc):
    """The step's ops/s and the client CPU per op dbperf measured (the engine's included)."""
    proc.wait()
    results = os.path.join(workdir, "dbperf.db")
    rep = subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                         capture_output=True, text=True, check=True)
    s = json.loads(rep.stdout)["runs"][-1]["steps"][0]
    os.remove(results)
    return {"ops_sec": s["ops"][s["primary"]]["per_sec"], "cpu_us_per_op": s.get("client_cpu_us_per_op")}


def dbperf(a, workdir, step):
    return dbperf_result(a, workdir, dbperf_start(a, workdir, step))


def together(a, workdir):
    """readrandom of both at once, each on its own copy of dbperf's fill: the VM's speed
    changes from second to second, and this way it changes for both alike."""
    copy = os.path.join(workdir, "db_bench_copy")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(os.path.join(workdir, "dbperf-work", "db"), copy)
    d = db_bench_read_start(a, copy, workdir)
    p = dbperf_start(a, workdir, "readrandom")
    out = {"db_bench": db_bench_read_result(d), "dbperf": dbperf_result(a, workdir, p)}
    shutil.rmtree(copy, ignore_errors=True)
    return out


def dbperf_fill(a, workdir):
    """dbperf's fillseq_disable_wal into a new work dir: the tree both sides then read."""
    shutil.rmtree(os.path.join(workdir, "dbperf-work"), ignore_errors=True)
    return dbperf(a, workdir, "fillseq_disable_wal")


def dbperf_read(a, workdir):
    return dbperf(a, workdir, "readrandom")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num", type=int, default=500_000)
    ap.add_argument("--duration", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write-buffer-mb", type=int, default=16)
    ap.add_argument("--cache-mb", type=int, default=1024)
    ap.add_argument("--dbperf", default=os.path.join(os.path.dirname(__file__), "..", "bin", "dbperf"))
    ap.add_argument("--db-bench", default="db_bench")
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    ap.add_argument("--db-bench-histogram", type=int, choices=(0, 1), default=1,
                    help="db_bench --histogram: 1 (default) times every op as dbperf does and as the "
                         "reference's benchmark.sh runs it; 0 reads no clock per op")
    ap.add_argument("--together", action="store_true",
                    help="run the two readrandoms at once, each on a core and its own copy of the tree")
    a = ap.parse_args()
    if not shutil.which(a.db_bench):
        sys.exit("db_bench not found: apt-get install rocksdb-tools")
    workdir = a.workdir or tempfile.mkdtemp(prefix="dbbench-sbs-")
    os.makedirs(workdir, exist_ok=True)
    rounds = []
    for r in range(a.rounds):
        res = {"round": r + 1, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "db_bench": {}, "dbperf": {}}
        fills = [("db_bench", db_bench_fill), ("dbperf", dbperf_fill)]
        reads = [("db_bench", db_bench_read), ("dbperf", dbperf_read)]
        if r % 2:
            fills.reverse()
            reads.reverse()
        for name, f in fills:
            res[name]["fillseq"] = f(a, workdir)
        if a.together:
            both = together(a, workdir)
            for name in both:
                res[name]["readrandom"] = both[name]
        else:
            for name, f in reads:
                res[name]["readrandom"] = f(a, workdir)
        rounds.append(res)
        for step in ("fillseq", "readrandom"):
            d, p = res["db_bench"][step], res["dbperf"][step]
            print("round %d %-10s ops/s db_bench %9.0f dbperf %9.0f (%.2fx)   CPU µs/op db_bench %6.2f dbperf %6.2f (%.2fx)" % (
                r + 1, step, d["ops_sec"], p["ops_sec"], p["ops_sec"] / d["ops_sec"],
                d["cpu_us_per_op"] or float("nan"), p["cpu_us_per_op"] or float("nan"),
                (p["cpu_us_per_op"] or float("nan")) / (d["cpu_us_per_op"] or float("nan"))), flush=True)
    print("\nmedian over %d rounds (dbperf ÷ db_bench), %d keys of 20+400 bytes, 1 thread, readrandom %gs%s, "
          "db_bench --histogram=%d:" % (a.rounds, a.num, a.duration, " (together)" if a.together else "",
                                         a.db_bench_histogram))
    summary = {}
    for step in ("fillseq", "readrandom"):
        ops = statistics.median(r["dbperf"][step]["ops_sec"] / r["db_bench"][step]["ops_sec"] for r in rounds)
        cpu = statistics.median(r["dbperf"][step]["cpu_us_per_op"] / r["db_bench"][step]["cpu_us_per_op"] for r in rounds)
        med = lambda side, k: statistics.median(r[side][step][k] for r in rounds)
        summary[step] = {"ops_ratio": ops, "cpu_ratio": cpu,
                         "db_bench_ops_sec": med("db_bench", "ops_sec"), "dbperf_ops_sec": med("dbperf", "ops_sec"),
                         "db_bench_cpu_us_per_op": med("db_bench", "cpu_us_per_op"),
                         "dbperf_cpu_us_per_op": med("dbperf", "cpu_us_per_op")}
        print("  %-10s ops/s %9.0f vs %9.0f = %.2fx   CPU µs/op %6.2f vs %6.2f = %.2fx" % (
            step, summary[step]["dbperf_ops_sec"], summary[step]["db_bench_ops_sec"], ops,
            summary[step]["dbperf_cpu_us_per_op"], summary[step]["db_bench_cpu_us_per_op"], cpu))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "rounds": rounds, "summary": summary}, f, indent=1)
    if not a.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        shutil.rmtree(os.path.join(workdir, "dbperf-work"), ignore_errors=True)


if __name__ == "__main__":
    main()
