#!/usr/bin/env python3
"""How much two PostgreSQL servers started alike differ for their whole life (issue 37),
outside dbperf: pgbench -S against copies of one data directory.

N copies of one freshly initialised pgbench database (scale 4, VACUUM ANALYZE'd, shut
down, copied with cp -a) run at once. Each life: every copy is started (postmaster pinned
to CPU 1), warmed by a 2-s pgbench, then ROUNDS rounds run pgbench -S -M prepared -c 1
for T seconds against each copy in turn (pgbench pinned to CPU 0; the order reversed every
other round). After LIVES lives, each a restart of every copy in place, the figures are
each run's throughput and the server's CPU per transaction (the postmaster's cutime +
cstime, which gains each backend's CPU when it exits, over the transactions).

The unit is one server life (a copy between a start and a stop). After taking out each
round's mean (the machine's drift), the spread of the units' means beyond what their runs'
own spread explains (one-way random effects) is the server-life component; the runs'
spread around their unit's mean is the within-life noise.

Run as root on an otherwise idle machine (the servers run as the postgres user):
  scripts/server_lives.py --dir /tmp/lives --out 4k.json
  sysctl -w vm.nr_hugepages=700; scripts/server_lives.py --huge on --out hp.json; sysctl -w vm.nr_hugepages=0
  scripts/server_lives.py --report 4k.json hp.json
Figures: docs/measurements/2026-11-29-huge-pages.md.
"""
import argparse, json, math, os, shutil, statistics as st, subprocess, time

BIN = "/usr/lib/postgresql/15/bin"


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def asp(cmd):
    return run(["runuser", "-u", "postgres", "--"] + cmd)


def ticks(pid):
    s = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(s[13]) + int(s[14])  # cutime, cstime: the reaped children's CPU, in 10 ms ticks


def measure(a):
    base = a.dir
    os.makedirs(base, exist_ok=True)
    shutil.chown(base, "postgres")
    src = os.path.join(base, "src")
    if not os.path.exists(src):
        asp([BIN + "/initdb", "-D", src, "-A", "trust", "-U", "postgres"])
        with open(src + "/postgresql.conf", "a") as f:
            f.write("shared_buffers=256MB\nlisten_addresses=''\nautovacuum=off\nmax_connections=20\n")
        asp([BIN + "/pg_ctl", "-D", src, "-o", "-k %s -p 5500" % base, "-l", base + "/src.log", "-w", "start"])
        asp([BIN + "/pgbench", "-h", base, "-p", "5500", "-U", "postgres", "-i", "-s", "4", "postgres"])
        asp([BIN + "/psql", "-h", base, "-p", "5500", "-U", "postgres", "-c", "VACUUM ANALYZE", "postgres"])
        asp([BIN + "/pg_ctl", "-D", src, "-w", "-m", "fast", "stop"])
    for i in range(a.n):
        d = "%s/d%d" % (base, i)
        if os.path.exists(d):
            shutil.rmtree(d)
        run(["cp", "-a", src, d])
        with open(d + "/postgresql.conf", "a") as f:
            f.write("huge_pages=%s\n" % a.huge)
    res = []
    for life in range(a.lives):
        pids = []
        for i in range(a.n):
            d = "%s/d%d" % (base, i)
            run(["taskset", "-c", "1", "runuser", "-u", "postgres", "--", BIN + "/pg_ctl", "-D", d,
                 "-o", "-k %s -p %d" % (base, 5501 + i), "-l", d + ".log", "-w", "start"])
            pids.append(int(open(d + "/postmaster.pid").readline()))
        bench = lambda i, t: asp(["taskset", "-c", "0", BIN + "/pgbench", "-h", base, "-p", str(5501 + i), "-U", "postgres",
                                  "-S", "-M", "prepared", "-T", str(t), "postgres"]).stdout
        for i in range(a.n):
            bench(i, 2)  # warm the shared buffers
        for r in range(a.rounds):
            for i in (range(a.n) if r % 2 == 0 else reversed(range(a.n))):
                t0 = ticks(pids[i])
                out = bench(i, a.t)
                time.sleep(0.05)
                t1 = ticks(pids[i])
                tx = int([l for l in out.splitlines() if "number of transactions actually processed" in l][0].split(":")[1].split("/")[0])
                rec = dict(life=life, srv=i, round=r, tps=tx / a.t, cpu_us=(t1 - t0) * 10000 / tx)
                res.append(rec)
                print(json.dumps(rec), flush=True)
        for i in range(a.n):
            asp([BIN + "/pg_ctl", "-D", "%s/d%d" % (base, i), "-w", "-m", "fast", "stop"])
    json.dump(res, open(a.out, "w"))


def report(path):
    res = json.load(open(path))
    for fig in ("tps", "cpu_us"):
        rounds = {}
        for r in res:
            rounds.setdefault((r["life"], r["round"]), []).append(math.log(r[fig]))
        rm = {k: st.mean(v) for k, v in rounds.items()}
        units = {}
        for r in res:
            units.setdefault((r["life"], r["srv"]), []).append(math.log(r[fig]) - rm[(r["life"], r["round"])])
        means = {k: st.mean(v) for k, v in units.items()}
        k = len(next(iter(units.values())))
        within = st.mean([st.variance(v) for v in units.values()])
        between = st.variance(list(means.values()))
        life = max(0, between - within / k)
        mean = st.mean(r[fig] for r in res)
        print("%s %s: mean %.1f; %d lives x %d runs; within-life sd %.2f%%; server-life sd %.2f%%; lives' means (%%): %s" % (
            path, fig, mean, len(units), k, 100 * math.sqrt(within), 100 * math.sqrt(life),
            " ".join("%+.1f" % (100 * v) for _, v in sorted(means.items()))))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="/tmp/lives")
    p.add_argument("--out", default="lives.json")
    p.add_argument("--n", type=int, default=4, help="copies running at once")
    p.add_argument("--lives", type=int, default=3, help="restarts of every copy")
    p.add_argument("--rounds", type=int, default=5, help="runs per copy and life")
    p.add_argument("--t", type=int, default=3, help="seconds per run")
    p.add_argument("--huge", default="off", help="huge_pages: off, or on (reserve vm.nr_hugepages first)")
    p.add_argument("--report", nargs="*", help="report these result files; run nothing")
    a = p.parse_args()
    if a.report:
        for path in a.report:
            report(path)
        return
    measure(a)
    report(a.out)


if __name__ == "__main__":
    main()
