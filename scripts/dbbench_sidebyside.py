#!/usr/bin/env python3
"""dbperf's rocksdb engine side by side with db_bench on the same RocksDB, in one run.

Debian's rocksdb-tools ships db_bench 7.8.3, built on the same librocksdb 7.8.3 that
dbperf's rocksdb engine links (grocksdb v1.7.14). For each round this script runs, in
alternating order:

  db_bench  fillseq (vector memtable, no WAL: §4.1 row 1) in a new DB, then readrandom
            in a second process on that DB (--use_existing_db), 1 thread, --duration;
  dbperf    run dbbench --engine rocksdb --steps fillseq_disable_wal,readrandom with the
            same key/value sizes, key count, LSM options, cache and bloom filter.

and prints ops/s and CPU µs per op of each side and their ratio, per round and the median.
db_bench's CPU is its process's (rusage of the child, open and close included); dbperf's
is the client CPU it measures itself per step (/proc/self/stat over the timed load), which
is all of the engine's CPU too: both engines run inside the benchmark process.

Usage: scripts/dbbench_sidebyside.py [--num 500000] [--duration 15] [--rounds 3]
       [--dbperf bin/dbperf] [--db-bench db_bench] [--workdir DIR] [--json out.json]
"""

import argparse
import json
import os
import re
import resource
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


def rusage_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def db_bench(a, db, benchmark, extra):
    """Runs one db_bench process; returns (ops/s, CPU seconds, ops, output)."""
    argv = [a.db_bench, "--benchmarks=" + benchmark, "--db=" + db, "--num=%d" % a.num, "--threads=1",
            "--compression_ratio=0.5", "--statistics=1", "--histogram=0", "--open_files=-1",
            "--level_compaction_dynamic_level_bytes=true", "--min_level_to_compress=-1",
            "--seed=1"]  # db_bench 7.8 has no --bottommost_compression: unset, as "disable"
    argv += ["--%s=%s" % (f, v) for f, _, v in lsm_flags(a)] + extra
    c0 = rusage_children()
    p = subprocess.run(argv, capture_output=True, text=True)
    cpu = rusage_children() - c0
    if p.returncode != 0:
        sys.exit("db_bench %s failed (%d):\n%s" % (benchmark, p.returncode, p.stderr[-2000:]))
    m = re.search(r"^%s\s*:\s*([\d.]+) micros/op ([\d.]+) ops/sec(?: [\d.]+ seconds)? (\d+) operations" % benchmark,
                  p.stdout, re.M)
    if not m:
        m = re.search(r"^%s\s*:\s*([\d.]+) micros/op ([\d.]+) ops/sec" % benchmark, p.stdout, re.M)
        if not m:
            sys.exit("no result line for %s in db_bench's output:\n%s" % (benchmark, p.stdout[-2000:]))
        ops_sec = float(m.group(2))
        ops = None
    else:
        ops_sec, ops = float(m.group(2)), int(m.group(3))
    return ops_sec, cpu, ops, p.stdout


def run_db_bench(a, workdir):
    db = os.path.join(workdir, "db_bench")
    shutil.rmtree(db, ignore_errors=True)
    fill = db_bench(a, db, "fillseq", ["--disable_wal=1", "--memtablerep=vector",
                                        "--allow_concurrent_memtable_write=false"])
    read = db_bench(a, db, "readrandom", ["--use_existing_db=1", "--duration=%g" % a.duration])
    shutil.rmtree(db, ignore_errors=True)
    out = {}
    for name, (ops_sec, cpu, ops, _) in (("fillseq", fill), ("readrandom", read)):
        if ops is None:  # fillseq writes every key once
            ops = a.num if name == "fillseq" else None
        out[name] = {"ops_sec": ops_sec, "cpu_us_per_op": cpu * 1e6 / ops if ops else None}
    return out


def run_dbperf(a, workdir):
    results = os.path.join(workdir, "dbperf.db")
    if os.path.exists(results):
        os.remove(results)
    argv = [a.dbperf, "run", "dbbench", "--engine", "rocksdb", "--scale", "small",
            "--steps", "fillseq_disable_wal,readrandom", "--num", str(a.num), "--threads", "1",
            "--duration", "%g" % a.duration, "--min-level-to-compress", "-1",
            "--bottommost-compression", "disable", "--results", results, "--quiet", "--seed", "1",
            "--workdir", os.path.join(workdir, "dbperf-work")]
    argv += ["--%s=%s" % (f, v) for _, f, v in lsm_flags(a)]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("dbperf failed (%d):\n%s" % (p.returncode, p.stderr[-2000:]))
    rep = subprocess.run([a.dbperf, "report", "--results", results, "--format", "json"],
                         capture_output=True, text=True, check=True)
    run = json.loads(rep.stdout)["runs"][-1]
    shutil.rmtree(os.path.join(workdir, "dbperf-work"), ignore_errors=True)
    os.remove(results)
    out = {}
    for s in run["steps"]:
        name = {"fillseq_disable_wal": "fillseq"}.get(s["name"], s["name"])
        ops = s["ops"][s["primary"]]
        out[name] = {"ops_sec": ops["per_sec"], "cpu_us_per_op": s.get("client_cpu_us_per_op")}
    return out


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
    a = ap.parse_args()
    if not shutil.which(a.db_bench):
        sys.exit("db_bench not found: apt-get install rocksdb-tools")
    workdir = a.workdir or tempfile.mkdtemp(prefix="dbbench-sbs-")
    os.makedirs(workdir, exist_ok=True)
    rounds = []
    for r in range(a.rounds):
        order = [("db_bench", run_db_bench), ("dbperf", run_dbperf)]
        if r % 2:
            order.reverse()
        res = {"round": r + 1, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        for name, f in order:
            res[name] = f(a, workdir)
        rounds.append(res)
        for step in ("fillseq", "readrandom"):
            d, p = res["db_bench"][step], res["dbperf"][step]
            print("round %d %-10s ops/s db_bench %9.0f dbperf %9.0f (%.2fx)   CPU µs/op db_bench %6.2f dbperf %6.2f (%.2fx)" % (
                r + 1, step, d["ops_sec"], p["ops_sec"], p["ops_sec"] / d["ops_sec"],
                d["cpu_us_per_op"] or float("nan"), p["cpu_us_per_op"] or float("nan"),
                (p["cpu_us_per_op"] or float("nan")) / (d["cpu_us_per_op"] or float("nan"))), flush=True)
    print("\nmedian over %d rounds (dbperf ÷ db_bench), %d keys of 20+400 bytes, 1 thread, readrandom %gs:" % (
        a.rounds, a.num, a.duration))
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


if __name__ == "__main__":
    main()
