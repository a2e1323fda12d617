#!/usr/bin/env python3
"""Issue 37's A/A and known effect in one series of duet sweeps by role.

Each sweep runs three managed PostgreSQL points at once with --design duet
--duet-placement role --load-once: a and b identical (b against a is an A/A) and c on a
profile of known cost, by default logsample8 in scripts/profiles (every statement's
duration and text logged for a random 8% of them; c against a is the known effect), or
pausing THINK after every operation with --think. Every point's
clients share one CPU and every server the other, so one sweep gives one A/A and one
known-effect comparison in the same minutes. Per sweep it prints, for b and c and every
checked step, the verdicts of throughput and server CPU per query (▲ higher, ▼ lower,
= the same, ? unstable) and MDE/limit, and at the end the counts: the A/A's figures called
changed, and per step the known effect's throughput called lower and its server CPU per
query called higher.

Usage, after `make build`:
  scripts/role_series.py [--n 10] [--repeat 40] [--time 6] [--same-data] [--instances N] [--dir DIR]
      [--base-profile P] [--known-profile Q] [--profiles-dir DIR] [--think 3us] [--report-interval S]
--base-profile runs a and b on profile P; --known-profile runs c on profile Q (found in
--profiles-dir, default scripts/profiles); --think makes c's effect a client pause instead
(whose relative cost moves with the machine's speed: docs/regression-hunting.md).
The defaults are the design that came nearest the white-noise limit on the project's 2-core VM
(docs/measurements/2026-11-28-shorter-blocks.md): 40 blocks of 6-second steps, about nine
minutes for the three points; logsample8 cost qp100 and qr100 2.3-4.3% there
(docs/measurements/2026-11-29-known-setting.md).
On that VM's later host (Intel Xeon), the design nearest the limit was short blocks, each
on servers of its own, with the shared memory in huge pages
(docs/measurements/2026-11-29-short-blocks.md, then -aligned-starts.md): 120 blocks of
0.5-s steps, one slice each, in under eight minutes a sweep:
  scripts/role_series.py --repeat 120 --instances 120 --same-data --time 0.5 --slice 0.5
      --base-profile huge --known-profile logsample8-huge
(dbperf measures a 0.5-s slice in 0.1-s intervals by itself; --report-interval 0.1 is the
same.)
The sweeps, their stores and JSON reports stay in DIR (default a fresh temporary dir);
the summary goes to DIR/summary.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import comparisons as cmp  # noqa: E402  (the report readers)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = {"higher": "▲", "lower": "▼", "same": "=", "unstable": "?", "": "·"}


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def cell(rep, label, step, metric=None):
    """The relative cell of label's step: throughput (metric None) or an HW metric."""
    if metric is None:
        return cmp.rel_cells(rep, label).get(step) or {}
    return cmp.hw_rel_cells(rep, metric, label).get(step) or {}


def fmt(c):
    if not c or c.get("value") is None:
        return "-"
    v = "%.3f" % c["value"]
    if c.get("ci_lo") is not None:
        v += " [%.3f–%.3f]" % (c["ci_lo"], c["ci_hi"])
    return v + " " + MARK.get(c.get("verdict") or "", "·")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dbperf", default=os.path.join(REPO, "bin", "dbperf"))
    p.add_argument("--n", type=int, default=10, help="sweeps")
    p.add_argument("--think", help="c pauses this long after every operation, on a's profile, instead of running --known-profile")
    p.add_argument("--known-profile", default="logsample8",
                   help="c's server profile: a setting with a measured cost (docs/measurements/2026-11-29-known-setting.md)")
    p.add_argument("--base-profile", default="default", help="a's and b's server profile")
    p.add_argument("--profiles-dir", default=os.path.join(REPO, "scripts", "profiles"),
                   help="sweep --profiles-dir, where --known-profile is found")
    p.add_argument("--repeat", type=int, default=40, help="blocks per sweep")
    p.add_argument("--steps", default="l.i0,l.x,qp100,qr100")
    p.add_argument("--check", default="qp100,qr100", help="steps whose verdicts are counted")
    p.add_argument("--rows", type=int, default=200000)
    p.add_argument("--time", type=float, default=6, help="seconds per steady step and block")
    p.add_argument("--slice", type=float, default=2)
    p.add_argument("--report-interval", type=float,
                   help="seconds per measurement interval (dbperf's default: 1); below the slice, so the white-noise limit can be measured in every slice")
    p.add_argument("--seed", type=int, default=37000)
    p.add_argument("--dir")
    p.add_argument("--same-data", action="store_true",
                   help="sweep --same-data: after the first block every point runs on a copy of a's data")
    p.add_argument("--instances", type=int, default=1,
                   help="sweep --instances: the blocks run on this many servers of each point in turn")
    p.add_argument("--report-only", action="store_true",
                   help="run no sweep: report the stores already in --dir again (with this --dbperf's report)")
    a = p.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="role-series-")
    os.makedirs(d, exist_ok=True)
    steps = a.check.split(",")
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if a.think:
        a.known_profile = None  # a pause on a's profile, not a setting
    known = ("profile " + a.known_profile) if a.known_profile else ("--think c=" + a.think)
    cprof = a.known_profile or a.base_profile
    lines = ["# duet by role%s%s, profile %s: A/A (b) and known effect (c: %s), %d sweeps of %d blocks, %s, into %s" %
             (" --same-data" if a.same_data else "", " --instances %d" % a.instances if a.instances > 1 else "", a.base_profile, known, a.n, a.repeat, commit or "?", d)]
    print(lines[0], flush=True)
    aa_called, aa_figures = 0, 0
    kcount = {}  # (step, figure) -> [called in the right direction, the wrong one, sweeps]
    worst = {}
    drift = {}  # drift notes' cells (step and figure) by comparison
    for k in range(1, a.n + 1):
        label = "s%d" % k
        store = os.path.join(d, label + ".db")
        t0, l0 = time.strftime("%H:%M:%S", time.gmtime()), loadavg()
        cmd = [a.dbperf, "sweep", "insertbench", "--engine", "postgres", "--profiles", "a=%s,b=%s,c=%s" % (a.base_profile, a.base_profile, cprof),
               "--design", "duet", "--duet-placement", "role", "--load-once",
               "--repeat", str(a.repeat), "--steps", a.steps, "--scale", "tiny", "--rows", str(a.rows),
               "--time", str(a.time), "--slice", str(a.slice), "--seed", str(a.seed + k), "--label", label,
               "--results", store, "--quiet"]
        if a.report_interval:
            cmd += ["--report-interval", str(a.report_interval)]
        if a.same_data:
            cmd.append("--same-data")
        if a.instances > 1:
            cmd += ["--instances", str(a.instances)]
        if not a.known_profile:
            cmd += ["--think", "c=" + a.think]
        if a.profiles_dir:
            cmd += ["--profiles-dir", a.profiles_dir]
        if a.report_only:
            if not os.path.exists(store):
                continue
            rc = 0
        else:
            with open(os.path.join(d, label + ".txt"), "w") as out:
                rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode
        js = os.path.join(d, label + ".json")
        labels = ["%s/default/%s" % (label, x) for x in "abc"]  # label/version/point
        rr = subprocess.run([a.dbperf, "report"] + labels + ["--results", store, "--format", "json", "-o", js],
                            capture_output=True, text=True).returncode
        t1, l1 = time.strftime("%H:%M:%S", time.gmtime()), loadavg()
        head = "sweep %d: %s–%s load %s→%s rc %d" % (k, t0, t1, l0, l1, rc)
        if a.report_only:
            head = "sweep %d (reported again)" % k
        if rr != 0:
            lines.append(head + " report failed")
            print(lines[-1], flush=True)
            continue
        with open(js) as f:
            rep = json.load(f)
        parts = []
        for who, lab in (("A/A", labels[1]), ("known", labels[2])):
            for st in steps:
                tp, cpu = cell(rep, lab, st), cell(rep, lab, st, "server_cpupq")
                vt = cmp.variance_row(rep, lab, st, "throughput") or {}
                vc = cmp.variance_row(rep, lab, st, "server_cpupq") or {}
                srv = lambda v: "" if v.get("servers") is None else " servers %s" % pct(v.get("servers"))
                parts.append("%s %s q/s %s mde %s /lim %s%s; cpu/q %s mde %s /lim %s%s" % (
                    who, st, fmt(tp), pct(vt.get("mde")), ratio(vt.get("mde_over_limit")), srv(vt),
                    fmt(cpu), pct(vc.get("mde")), ratio(vc.get("mde_over_limit")), srv(vc)))
                for fig, v in (("q/s", vt), ("cpu/q", vc)):
                    key = (who, st, fig)
                    if v.get("mde_over_limit") is not None:
                        worst[key] = max(worst.get(key, 0), v["mde_over_limit"])
                        worst[key + ("mde",)] = max(worst.get(key + ("mde",), 0), v.get("mde") or 0)
                if who == "A/A":
                    for c in (tp, cpu):
                        aa_figures += 1
                        aa_called += c.get("verdict") in ("higher", "lower")
                else:  # the known effect costs: throughput lower, server CPU per query higher
                    for fig, c, right, wrong in (("q/s", tp, "lower", "higher"), ("cpu/q", cpu, "higher", "lower")):
                        k3 = kcount.setdefault((st, fig), [0, 0, 0])
                        k3[0] += c.get("verdict") == right
                        k3[1] += c.get("verdict") == wrong
                        k3[2] += 1
        # The report's drift notes: steps whose consecutive blocks' ratios correlate.
        for n in rep.get("comparison", {}).get("notes") or []:
            text = n.get("text", "")
            if n.get("kind") != "variance" or "drift together" not in text:
                continue
            parts.append("drift: " + text.split(": the ratio moves")[0])
            who = "A/A" if text.startswith("blocks of " + labels[1] + " ") else "known"
            drift[who] = drift.get(who, 0) + len(n.get("steps") or [])
        lines.append(head + "\n  " + "\n  ".join(parts))
        print(lines[-1], flush=True)
    lines.append("A/A: %d of %d figures called changed (throughput and server CPU per query of %s)" %
                 (aa_called, aa_figures, ", ".join(steps)))
    for (st, fig), (right, wrong, n) in sorted(kcount.items()):
        lines.append("known effect (%s) %s %s: called %s in %d of %d sweeps, %s in %d" % (
            known, st, fig, "lower" if fig == "q/s" else "higher", right, n, "higher" if fig == "q/s" else "lower", wrong))
    lines.append("cells whose blocks drift together (the report's lag-1 note): A/A %d of %d, known effect %d" %
                 (drift.get("A/A", 0), aa_figures, drift.get("known", 0)))
    for key in sorted(k for k in worst if len(k) == 3):
        lines.append("worst over the sweeps, %s %s %s: MDE %s, MDE/limit %s" % (key + (pct(worst[key + ("mde",)]), ratio(worst[key]))))
    print("\n".join(lines[-(2 + len(kcount) + len([k for k in worst if len(k) == 3])):]), flush=True)
    with open(os.path.join(d, "summary-again.md" if a.report_only else "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def pct(v):
    return "-" if v is None else "%.1f%%" % v


def ratio(v):
    return "-" if v is None else "%.2f" % v


if __name__ == "__main__":
    main()
