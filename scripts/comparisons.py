#!/usr/bin/env python3
"""Measure how well `dbperf sweep`'s comparisons tell configs apart (issue 22's acceptance
measurements), and print a Markdown table of the results with the machine they ran on.

Usage (from the repository root, after `make build`):

    python3 scripts/comparisons.py                     # the full measurements (~2 h)
    python3 scripts/comparisons.py --quick             # a short version, to try it out
    python3 scripts/comparisons.py --only resolution   # one of aa, known, resolution
    python3 scripts/comparisons.py --out /tmp/cmp/full # also writes /tmp/cmp/full.md, .json

Three measurements, each made of `dbperf sweep insertbench` runs over named points of one
configuration (--profiles a=default,b=default), every sweep into its own results store in
a temporary directory, then read back with `dbperf report A B --format json` (and --format
md, to check the marks the reader sees against the JSON verdicts):

 1. A/A: two identical points compared with the default (interleaved) design, --aa-n times
    (default 10; SQLite, --scale tiny, steps l.i0,l.x,l.i1,cleanup,qr100,qp100, --time 4,
    --repeat 6: a verdict needs 6 interleaved blocks, the unit of a pair). Per comparison:
    the steps with a verdict in the relative throughput table, how many are higher / lower /
    same / unstable, the widest 95% interval and the median smallest detectable effect
    (MDE). Acceptance: no step higher or lower (faster or slower) in at least 9 of 10
    comparisons (in general: all but a tenth, rounded down).
 2. Known effect, on PostgreSQL and on SQLite (--known-engines): points a and c, c's
    closed-loop workers pausing after every operation (`--think c=DUR`, default 5us on
    PostgreSQL, 1us on SQLite: a change of about 5-10%, the size of the regressions users
    hunt; pauses this short are busy-waited, so the CPUs stay as busy as without them),
    over l.i0,l.x,qr100,qp100 (--time 10, --repeat 6: 6 blocks of 2 slices of 5 s per query
    step). The pause c actually took is the step metric think_us_per_op (a step's "hw"
    object in the JSON). With a's rate r_a per query worker in the same trial, c's rate
    should be 1/(L_c + t + o), with L the mean service time each point measured per operation
    (the step metric service_us_per_op) and o = 1/r_a − L_a the loop's own time per
    operation besides it, so the expected ratio c/a of a trial is (L_a + o)/(L_c + t + o):
    it follows from the latencies measured, not from the counts the comparison divides.
    Acceptance: the median expected ratio over the trials lies within the report's 95%
    interval of c vs a, for qp100 and qr100. Also shown: the naive 1/(1 + t·r_a), which
    assumes the pause leaves the operations' own cost alone (on a VM it does not: an idle
    CPU between operations makes the next one dearer or cheaper).
 3. Resolution: on managed PostgreSQL, the same two identical points with --design
    sequential, with the interleaved design and with its duet, back to back, with the same
    --time (10) and --rows (200000), --steps l.i0,qp100, in about the same machine time:
    --repeat 12 for sequential and interleaved (slices of 2 s, 5 per block), 24 blocks for
    the duet (both points at once, so a block takes half the time). Per design: the width
    (hi - lo) of the 95% interval of the qp100 throughput ratio and of its server CPU per
    query (server_cpupq), their MDE, the sweep's wall time, and the noise of the step's
    1-second intervals within a run (their standard deviation and lag-1 autocorrelation,
    read from the store: white noise, autocorrelation near 0, is what no order of trials
    can remove). Acceptance: for the interleaved design or its duet, the interval at most
    half as wide as the sequential one, MDE <= 3%, each sweep within 10 minutes
    (--res-budget); the table says which design met it.

The full measurements take about an hour on a 2-core VM; --quick about 20 minutes.
Other people's builds of bin/dbperf during that time would change the binary under the
measurement: pass --dbperf with a copy built from a commit.

The report is also checked for contradictions, listed under the table: a verdict that is
not what VerdictOf gives for the cell's own estimate and interval, an estimate outside its
interval, a class or a Markdown mark that disagrees with the verdict, significant /
too_few_runs flags that disagree with it, and failed or skipped steps (with their error).

The machine should be otherwise idle: the load average before and after each sweep and the
report's "busy" notes (CPU taken by other processes) are printed with the results.

Exit status: 0 every measurement ran and its acceptance held, 1 a sweep failed or an
acceptance did not hold (everything else is still printed), 2 bad input, 130 interrupted.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MEASUREMENTS = ["aa", "known", "resolution"]
ALL_STEPS = "l.i0,l.x,l.i1,l.i2,cleanup,qr100,qp100,qr500,qp500,qr1000,qp1000"
# Verdict -> class in the relative throughput table (higher is better), and for the
# columns shown as a duration (one-op steps, lower is better) and HW tables.
CLASS_HIGHER_BETTER = {"higher": "better", "lower": "worse", "same": "same",
                       "unstable": "unstable", "": ""}
CLASS_LOWER_BETTER = {"higher": "worse", "lower": "better", "same": "same",
                      "unstable": "unstable", "": ""}
MARK_OF_CLASS = {"better": "▲", "worse": "▼", "same": "=", "unstable": "?", "": ""}
DEFAULT_THRESHOLD = 0.02
# The known effect's pause per engine: c's rate about half of a's at the query rates of a
# 2-core VM (PostgreSQL ~10,000 q/s per worker, SQLite ~30,000).
DEFAULT_THINK = {"postgres": "5us", "sqlite": "1us"}


class BadInput(Exception):
    """Bad input or a missing prerequisite: one line, exit 2."""


class Interrupted(BaseException):
    pass


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, file=sys.stderr, flush=True)


def on_signal(signum, frame):
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted()


# --------------------------------------------------------------------------- machine

def machine():
    """Date, CPUs, memory, CPU model, kernel."""
    mem_kib, model = None, None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], stdout=subprocess.PIPE, text=True).stdout.strip())
    except (OSError, ValueError):
        nproc = os.cpu_count()
    return {"date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z"),
            "nproc": nproc, "mem_gib": round(mem_kib / 2**20, 1) if mem_kib else None,
            "cpu_model": model, "kernel": platform.release(), "hostname": platform.node()}


def loadavg():
    return [round(x, 2) for x in os.getloadavg()]


def git_state():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except OSError:
        return None


# --------------------------------------------------------------------------- dbperf

class Dbperf:
    """Runs bin/dbperf and records every command line it ran."""

    def __init__(self, binary, timeout):
        self.binary, self.timeout = binary, timeout
        self.commands = []

    def cmdline(self, args):
        return shlex.join([self.binary] + args)

    def run(self, args, timeout=None, quiet_cmd=False):
        line = self.cmdline(args)
        self.commands.append(line)
        if not quiet_cmd:
            print("$ " + line, flush=True)
        t0 = time.monotonic()
        try:
            p = subprocess.run([self.binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=timeout or self.timeout)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")) + \
                "\n(timed out after %ss)" % (timeout or self.timeout)
        return rc, out, err, time.monotonic() - t0

    def sweep(self, store, label, extra):
        """One `dbperf sweep insertbench` into store; returns its record."""
        args = ["sweep", "insertbench"] + extra + ["--label", label, "--results", store, "--quiet"]
        la0 = loadavg()
        rc, out, err, wall = self.run(args)
        rec = {"cmd": self.cmdline(args), "label": label, "store": store, "rc": rc,
               "wall_sec": round(wall, 1), "loadavg_before": la0, "loadavg_after": loadavg(),
               "stderr": err.strip()[-4000:], "stdout_tail": out.strip()[-2000:]}
        if rc != 0:
            log("sweep %s: exit status %s after %.0f s; its stderr:" % (label, rc, wall))
            for line in (err.strip() or "(empty)").splitlines()[-40:]:
                print("    " + line, file=sys.stderr)
        else:
            log("sweep %s: ok in %.0f s (load average %s → %s)" % (label, wall, la0, rec["loadavg_after"]))
        return rec

    def labels(self, store, prefix):
        """The labels of store's runs under prefix/, in the order of their first run."""
        rc, out, err, _ = self.run(["runs", "--results", store], quiet_cmd=True)
        if rc != 0:
            return [], "dbperf runs: %s" % err.strip()
        labels = []
        for line in out.splitlines()[1:]:
            f = line.split()
            # id started(2) workload engine version(may hold spaces) label status steps
            if len(f) < 8 or not f[0].isdigit():
                continue
            lab = f[-3]
            if lab.startswith(prefix + "/") and lab not in labels:
                labels.append(lab)
        return labels, None

    def report(self, store, labels, outbase):
        """`dbperf report` of labels as JSON and Markdown; returns (json, md, error)."""
        js, md = outbase + ".json", outbase + ".md"
        rc, out, err, _ = self.run(["report"] + labels + ["--results", store, "--format", "json", "-o", js])
        if rc != 0:
            return None, None, "dbperf report (json) exit %s: %s" % (rc, err.strip()[-2000:])
        rc2, _, err2, _ = self.run(["report"] + labels + ["--results", store, "--format", "md", "-o", md])
        try:
            with open(js) as f:
                rep = json.load(f)
        except (OSError, ValueError) as e:
            return None, None, "report JSON %s unreadable: %s" % (js, e)
        mdtext = None
        if rc2 == 0:
            with open(md) as f:
                mdtext = f.read()
        return rep, mdtext, None


def sweep_and_report(d, a, tmp, name, label, extra, base_point):
    """Runs one sweep into its own store under tmp and reads its report back: a dict with
    the sweep record, the report (parsed), the base and candidate labels, and an error."""
    sdir = os.path.join(tmp, name)
    os.makedirs(sdir, exist_ok=True)
    os.chmod(sdir, 0o755)
    store = os.path.join(sdir, "results.db")
    rec = d.sweep(store, label, extra)
    res = {"sweep": rec, "name": name}
    if rec["rc"] not in (0, 1):  # 1: a step failed in some run, the runs are stored
        res["error"] = "sweep exit status %s: %s" % (rec["rc"], last_line(rec["stderr"]))
        if not os.path.exists(store):
            return res
    labels, err = d.labels(store, label)
    if err or len(labels) < 2:
        res["error"] = res.get("error") or err or "sweep stored %d labels under %s/ (want 2)" % (len(labels), label)
        return res
    # The base first: the point named base_point (SWEEP/a or SWEEP/default/a).
    labels.sort(key=lambda l: (l.rsplit("/", 1)[-1] != base_point, l))
    rep, md, err = d.report(store, labels, os.path.join(sdir, "report"))
    if err:
        res["error"] = err
        return res
    res.update(report=rep, md=md, base=labels[0], cand=labels[1])
    if rec["rc"] == 1:
        res["error"] = "sweep exit status 1 (a step failed): %s" % last_line(rec["stderr"])
    return res


def last_line(s):
    lines = [l for l in (s or "").splitlines() if l.strip()]
    return lines[-1][:400] if lines else ""


# --------------------------------------------------------------------------- report JSON

def comparison(rep):
    return (rep or {}).get("comparison") or {}


def table(rep, tid):
    for t in comparison(rep).get("tables") or []:
        if t.get("id") == tid:
            return t
    return None


def row_cells(t, head):
    """{column: cell} of the row whose head is head (a list), or None."""
    if not t:
        return None
    for r in t.get("rows") or []:
        if list(r.get("head") or []) == list(head):
            return dict(zip(t.get("columns") or [], r.get("cells") or []))
    return None


def rel_cells(rep, cand):
    return row_cells(table(rep, "relative"), [cand]) or {}


def hw_rel_cells(rep, metric, cand):
    return row_cells(table(rep, "hw_relative"), [metric, cand]) or {}


def one_op_steps(rep):
    out = set()
    for n in comparison(rep).get("notes") or []:
        if n.get("kind") == "one_op":
            out.update(n.get("steps") or [])
    return out


def busy_notes(rep):
    """{step: share_pct} of the report's busy notes (other work on the machine)."""
    return {s: n.get("share_pct") for n in comparison(rep).get("notes") or []
            if n.get("kind") == "busy" for s in n.get("steps") or []}


def width(c):
    if not c or c.get("ci_lo") is None or c.get("ci_hi") is None:
        return None
    return c["ci_hi"] - c["ci_lo"]


def verdict_of(est, lo, hi, has_ci, th):
    """stats.VerdictOf, for the cross-check."""
    if not has_ci:
        return ""
    if not (th > 0) or math.isinf(th):
        th = DEFAULT_THRESHOLD
    if lo > 1 and est > 1 + th:
        return "higher"
    if hi < 1 and est < 1 - th:
        return "lower"
    if lo >= 1 - th and hi <= 1 + th:
        return "same"
    return "unstable"


def md_rows(md, title):
    """{row label: [cell texts]} and the columns of the Markdown table under '## title'."""
    if not md:
        return None, None
    lines = md.splitlines()
    try:
        i = lines.index("## " + title)
    except ValueError:
        return None, None
    rows, cols = {}, None
    for line in lines[i + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols is None:
            cols = cells
            continue
        if set(cells[0]) <= set("-:"):
            continue
        key = " ".join(c.replace("*", "").replace("\\", "") for c in cells[:len(cells) - ncols(cols)])
        rows[key] = cells[len(cells) - ncols(cols):]
    return rows, cols


def ncols(cols):
    # Head columns are "config" or "metric | config": the value columns are the rest.
    heads = 0
    for c in cols:
        if c in ("config", "metric", "group", "step", "op", "role"):
            heads += 1
        else:
            break
    return len(cols) - heads


def md_mark(text):
    for m in ("▲", "▼", "=", "?", "✗"):
        if text.rstrip().endswith(" " + m):
            return m
    return ""


def check_report(rep, md, cand):
    """Contradictions in one report: a list of strings."""
    out = []
    one_op = one_op_steps(rep)
    for tid in ("relative", "hw_relative", "geomean"):
        t = table(rep, tid)
        if not t:
            if tid == "relative":
                out.append("no relative table (id \"relative\") in the report's comparison")
            continue
        mdrows, mdcols = md_rows(md, t.get("title", ""))
        for r in t.get("rows") or []:
            if r.get("base"):
                continue
            head = list(r.get("head") or [])
            mdcells = None
            if mdrows is not None:
                mdcells = mdrows.get(" ".join(head))
            for ci, (col, c) in enumerate(zip(t.get("columns") or [], r.get("cells") or [])):
                if not c or "verdict" not in c:
                    continue
                where = "%s %s %s" % (tid, "/".join(head), col)
                v = c.get("verdict")
                lo, hi, est = c.get("ci_lo"), c.get("ci_hi"), c.get("value")
                th = (c.get("threshold_pct") or 100 * DEFAULT_THRESHOLD) / 100
                want = verdict_of(est, lo, hi, lo is not None and hi is not None, th)
                if want != v:
                    out.append("%s: verdict %r, but estimate %.4f in [%s, %s] at ±%.0f%% gives %r"
                               % (where, v, est, lo, hi, 100 * th, want))
                if lo is not None and hi is not None and not (lo - 1e-9 <= est <= hi + 1e-9):
                    out.append("%s: estimate %.4f outside its interval [%.4f, %.4f]" % (where, est, lo, hi))
                if c.get("significant") is not None and c["significant"] != (v in ("higher", "lower")):
                    out.append("%s: significant=%s with verdict %r" % (where, c["significant"], v))
                if c.get("too_few_runs") is not None and c["too_few_runs"] != (v == ""):
                    out.append("%s: too_few_runs=%s with verdict %r" % (where, c["too_few_runs"], v))
                lower_better = tid == "hw_relative" or col in one_op
                wantc = (CLASS_LOWER_BETTER if lower_better else CLASS_HIGHER_BETTER).get(v)
                if wantc is not None and c.get("class", "") != wantc:
                    out.append("%s: class %r with verdict %r (%s is better)"
                               % (where, c.get("class"), v, "lower" if lower_better else "higher"))
                if mdcells is not None and ci < len(mdcells):
                    got, exp = md_mark(mdcells[ci]), MARK_OF_CLASS.get(c.get("class", ""), "")
                    if got != exp:
                        out.append("%s: Markdown cell %r has mark %r, the JSON class %r wants %r"
                                   % (where, mdcells[ci], got, c.get("class"), exp))
        if tid == "relative" and md is not None and mdrows is None:
            out.append("Markdown report has no section %r" % t.get("title"))
    for n in comparison(rep).get("notes") or []:
        if n.get("kind") == "busy" and (n.get("share_pct") or 0) > 100:
            out.append("busy note for %s: a share of the CPU over 100%%: %.0f%% (%s)"
                       % (",".join(n.get("steps") or []), n["share_pct"], n.get("text", "")[:200]))
    # Failed or skipped steps, and runs not ok.
    for run in (rep or {}).get("runs") or []:
        trial = (run.get("params") or {}).get("trial", "")
        for s in run.get("steps") or []:
            if s.get("status") not in ("ok",):
                out.append("run %s (%s %s) step %s %s%s" % (
                    run.get("id"), run.get("label"), trial, s.get("name"), s.get("status"),
                    ": " + s["error"][:300] if s.get("error") else ""))
    return out


def summarize_checks(lines, limit=12):
    """Collapses repeated check lines (same text after the run id) for the output."""
    seen, out = {}, []
    for l in lines:
        key = re.sub(r"^run \d+ \(([^ ]+) b\d+/s\d+\)", r"run (\1)", l)
        key = re.sub(r"transactionid \d+ \(row \d+", "transactionid N (row N", key)
        seen.setdefault(key, []).append(l)
    for key, ls in seen.items():
        out.append(ls[0] + ("  [×%d like it]" % len(ls) if len(ls) > 1 else ""))
    return out[:limit] + (["… %d more kinds" % (len(out) - limit)] if len(out) > limit else [])


# --------------------------------------------------------------------------- measurements

def pct(x):
    return "-" if x is None else "%.1f%%" % x


def f3(x):
    return "-" if x is None else "%.3f" % x


def f1(x):
    return "-" if x is None else "%.1f" % x


def ratio_ci(c):
    """ratio [lo–hi] of a dict with ratio/value, ci_lo, ci_hi; the ratio alone without an interval."""
    if not c:
        return "-"
    v = c.get("ratio", c.get("value"))
    if v is None:
        return "-"
    s = "%.3f" % v
    if c.get("ci_lo") is not None and c.get("ci_hi") is not None:
        s += " [%.3f–%.3f]" % (c["ci_lo"], c["ci_hi"])
    else:
        s += " (no interval)"
    return s


def interval(c):
    if not c:
        return "-"
    s = "%.3f" % c["value"]
    if c.get("ci_lo") is not None:
        s += " [%.3f–%.3f]" % (c["ci_lo"], c["ci_hi"])
    return s


def measure_aa(d, a, tmp):
    out = {"comparisons": []}
    for k in range(1, a.aa_n + 1):
        label = "aa%d" % k
        extra = ["--engine", a.aa_engine, "--profiles", "a=default,b=default", "--scale", a.aa_scale,
                 "--repeat", str(a.aa_repeat), "--seed", str(a.seed + k)]
        if a.aa_steps:
            extra += ["--steps", a.aa_steps]
        if a.aa_time:
            extra += ["--time", "%g" % a.aa_time]
        if a.aa_rows:
            extra += ["--rows", str(a.aa_rows)]
        if a.aa_slice is not None:
            extra += ["--slice", "%g" % a.aa_slice]
        log("A/A comparison %d of %d" % (k, a.aa_n))
        res = sweep_and_report(d, a, tmp, label, label, extra, "a")
        row = {"k": k, "wall_sec": res["sweep"]["wall_sec"], "rc": res["sweep"]["rc"],
               "loadavg": [res["sweep"]["loadavg_before"][0], res["sweep"]["loadavg_after"][0]],
               "error": res.get("error"), "cmd": res["sweep"]["cmd"]}
        rep = res.get("report")
        if rep:
            cells = rel_cells(rep, res["cand"])
            counts = {"higher": 0, "lower": 0, "same": 0, "unstable": 0}
            with_v, widest, mdes, diffs, pairs = 0, None, [], [], []
            for step, c in cells.items():
                if not c:
                    continue
                v = c.get("verdict") or ""
                if v:
                    with_v += 1
                    counts[v] = counts.get(v, 0) + 1
                if v in ("higher", "lower"):
                    diffs.append("%s %s %s" % (step, v, interval(c)))
                w = width(c)
                if w is not None and (widest is None or w > widest[1]):
                    widest = (step, w, c)
                if c.get("mde_pct") is not None:
                    mdes.append(c["mde_pct"])
                pairs.append(c.get("n"))
            busy = busy_notes(rep)
            row["cells"] = {st: {k: c.get(k) for k in ("value", "ci_lo", "ci_hi", "verdict", "mde_pct", "n", "paired")}
                            for st, c in cells.items() if c}
            row.update(steps=len([c for c in cells.values() if c]), with_verdict=with_v, counts=counts,
                       differences=diffs,
                       widest={"step": widest[0], "width": widest[1], "cell": interval(widest[2])} if widest else None,
                       median_mde_pct=statistics.median(mdes) if mdes else None,
                       min_pairs=min([p for p in pairs if p] or [0]),
                       busy_max_pct=max(busy.values()) if busy else 0,
                       checks=check_report(rep, res.get("md"), res["cand"]))
            row["pass"] = with_v > 0 and counts["higher"] == 0 and counts["lower"] == 0
        else:
            row["pass"] = False
        out["comparisons"].append(row)
        print_aa_row(row)
    ok = sum(1 for r in out["comparisons"] if r["pass"])
    n = len(out["comparisons"])
    need = n - n // 10
    out["passed"], out["need"] = ok, need
    out["accepted"] = n > 0 and ok >= need
    return out


def print_aa_row(r):
    if r.get("counts"):
        log("  aa%d: %d steps with a verdict: %s; widest %s; median MDE %s%s" % (
            r["k"], r["with_verdict"], ", ".join("%s %d" % kv for kv in r["counts"].items()),
            r["widest"]["cell"] + " " + r["widest"]["step"] if r.get("widest") else "-",
            pct(r.get("median_mde_pct")), "; " + r["error"] if r.get("error") else ""))
    else:
        log("  aa%d: FAILED: %s" % (r["k"], r.get("error")))


def measure_known(d, a, tmp):
    out = {"engines": []}
    for eng in a.known_engines:
        r = measure_known_engine(d, a, tmp, eng, a.think.get(eng) or DEFAULT_THINK[eng])
        out["engines"].append(r)
    out["accepted"] = bool(out["engines"]) and all(r["accepted"] for r in out["engines"])
    return out


def measure_known_engine(d, a, tmp, eng, think):
    label = "known-" + eng
    extra = ["--engine", eng, "--profiles", "a=default,c=default", "--think", "c=" + think,
             "--steps", a.known_steps, "--scale", "tiny", "--repeat", str(a.known_repeat),
             "--time", "%g" % a.known_time, "--seed", str(a.seed)]
    if a.known_rows:
        extra += ["--rows", str(a.known_rows)]
    if a.known_slice is not None:
        extra += ["--slice", "%g" % a.known_slice]
    log("known effect: think %s on %s" % (think, eng))
    res = sweep_and_report(d, a, tmp, label, label, extra, "a")
    out = {"cmd": res["sweep"]["cmd"], "wall_sec": res["sweep"]["wall_sec"], "rc": res["sweep"]["rc"],
           "loadavg": [res["sweep"]["loadavg_before"][0], res["sweep"]["loadavg_after"][0]],
           "error": res.get("error"), "think": think, "engine": eng, "steps": []}
    rep = res.get("report")
    if not rep:
        out["accepted"] = False
        return out
    cells = rel_cells(rep, res["cand"])
    runs = rep.get("runs") or []
    for step in [s for s in a.known_steps.split(",") if re.match(r"^q[rp]\d+$", s)]:
        # Per trial: a's query rate per worker, c's measured pause, their expected ratio.
        byt = {}
        for run in runs:
            who = "a" if run.get("label") == res["base"] else "c" if run.get("label") == res["cand"] else None
            if not who:
                continue
            p = run.get("params") or {}
            trial = p.get("trial") or "run%s" % run.get("id")
            clients = p.get("clients") or 1
            for s in run.get("steps") or []:
                if s.get("name") != step:
                    continue
                op = (s.get("ops") or {}).get(s.get("primary") or "") or {}
                byt.setdefault(trial, {})[who] = {
                    "per_sec": op.get("per_sec"), "per_worker": (op.get("per_sec") or 0) / clients,
                    "p50_us": op.get("p50_us"),
                    "service_us": (s.get("hw") or {}).get("service_us_per_op"),
                    "think_us": (s.get("hw") or {}).get("think_us_per_op"), "status": s.get("status")}
        trials = []
        for trial, v in sorted(byt.items()):
            if "a" not in v or "c" not in v:
                continue
            ra, rc, t = v["a"]["per_worker"], v["c"]["per_worker"], v["c"]["think_us"]
            if not ra or t is None:
                continue
            naive = 1 / (1 + t * 1e-6 * ra)
            # From the latencies measured: a's cycle is 1/r_a = L_a + o (o the loop's own
            # time per op besides the timed operation), c's should be L_c + t + o.
            la, lc = v["a"].get("service_us"), v["c"].get("service_us")
            exp = None
            if la is not None and lc is not None:
                o = 1e6 / ra - la
                exp = (1e6 / ra) / (lc + t + o)
            obs = rc / ra if rc else None
            trials.append({"trial": trial, "r_a": ra, "r_c": rc, "think_us": t, "expected": exp, "naive": naive,
                           "observed": obs, "service_us_a": la, "service_us_c": lc,
                           # time per operation besides the pause: 1/rate (- pause for c)
                           "op_us_a": 1e6 / ra, "op_us_c": 1e6 / rc - t if rc else None,
                           "p50_us_a": v["a"]["p50_us"], "p50_us_c": v["c"]["p50_us"],
                           "status": "%s/%s" % (v["a"]["status"], v["c"]["status"])})
        c = cells.get(step)
        row = {"step": step, "trials": len(trials), "per_trial": trials}

        def med(key):
            xs = [x[key] for x in trials if x.get(key) is not None]
            return statistics.median(xs) if xs else None
        for key in ("r_a", "think_us", "expected", "naive", "observed", "op_us_a", "op_us_c", "p50_us_a", "p50_us_c",
                    "service_us_a", "service_us_c"):
            row[key + "_median"] = med(key)
        row["not_ok_trials"] = [x["trial"] for x in trials if x["status"] != "ok/ok"]
        if c:
            row.update(ratio=c.get("value"), ci_lo=c.get("ci_lo"), ci_hi=c.get("ci_hi"),
                       verdict=c.get("verdict"), mde_pct=c.get("mde_pct"), pairs=c.get("n"),
                       paired=c.get("paired"))
        row["inside"] = bool(trials and c is not None and c.get("ci_lo") is not None
                             and row.get("expected_median") is not None
                             and c["ci_lo"] <= row["expected_median"] <= c["ci_hi"])
        row["naive_inside"] = bool(trials and c is not None and c.get("ci_lo") is not None
                                   and c["ci_lo"] <= row["naive_median"] <= c["ci_hi"])
        out["steps"].append(row)
        log("  %s %s: expected %s from the latencies (service a %s µs, c %s µs; pause %.1f µs; naive %s), report %s %s → %s" % (
            eng, step, f3(row.get("expected_median")), f1(row.get("service_us_a_median")), f1(row.get("service_us_c_median")),
            row.get("think_us_median") or 0, f3(row.get("naive_median")),
            interval(c), (c or {}).get("verdict"), "inside" if row["inside"] else "NOT inside"))
    out["busy_max_pct"] = max(busy_notes(rep).values() or [0])
    out["checks"] = check_report(rep, res.get("md"), res["cand"])
    out["accepted"] = bool(out["steps"]) and all(r["inside"] for r in out["steps"])
    return out


RES_DESIGNS = ["sequential", "interleaved", "duet"]
# A design variant is a design with extra sweep flags: "duet+load-once", "duet+load-once+settle".
RES_VARIANTS = {"load-once": ["--load-once"], "settle": ["--settle"],
                "role": ["--duet-placement", "role"]}


def design_flags(design):
    """The sweep flags of a design or variant ("duet+load-once")."""
    base, *extra = design.split("+")
    flags = ["--design", base]
    for x in extra:
        flags += RES_VARIANTS[x]
    return base, flags


def variance_keys(columns):
    """The variance table's columns as keys: blocks, instances (a sweep with --instances),
    slices/block, seconds, slices, blocks_share, servers, cpu, block_sd, mde, limit,
    mde_over_limit."""
    named = {"CPU": "cpu", "block sd": "block_sd", "MDE": "mde", "MDE/limit": "mde_over_limit"}
    out = []
    for c in columns:
        k = named.get(c, c)
        if k in out:  # the second "blocks" is the blocks' share of the variance
            k += "_share"
        out.append(k)
    return out


def variance_row(rep, cand, step, figure):
    """The variance table's row of a config, step and figure (internal/report/variance.go):
    each source's share of the ratio's variance, the block sd, the MDE, the white-noise
    limit and MDE/limit, as {column: value or None}."""
    t = table(rep, "variance")
    if not t:
        return None
    for r in t.get("rows") or []:
        if list(r.get("head") or []) == [cand, step, figure]:
            cols = variance_keys(t.get("columns") or [])
            return {c: (cell or {}).get("value") if cell else None for c, cell in zip(cols, r.get("cells") or [])}
    return None


def second_noise(store, step):
    """The noise of a step's 1-second intervals within each run of a store: the standard
    deviation of log(rate) around the run's own mean (the first and last interval left out)
    and the lag-1 autocorrelation of those deviations. Near-zero autocorrelation is white
    noise: it averages out only with more measuring time, whatever order the trials run in."""
    import sqlite3
    try:
        con = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
        rows = con.execute(
            "SELECT s.id, i.end_ns - i.start_ns, il.event_count FROM steps s"
            " JOIN intervals i ON i.step_id = s.id"
            " JOIN interval_labels il ON il.step_id = s.id AND il.seq = i.seq AND il.background = 0"
            " WHERE s.name = ? AND s.status = 'ok' ORDER BY s.id, i.seq", (step,)).fetchall()
        con.close()
    except Exception as e:  # the measurement is context: its absence is said, not fatal
        return {"error": str(e)}
    runs = {}
    for sid, ns, n in rows:
        if ns and n:
            runs.setdefault(sid, []).append(math.log(n * 1e9 / ns))
    dev, lag = [], []
    for v in runs.values():
        v = v[1:-1]
        if len(v) < 3:
            continue
        m = statistics.mean(v)
        r = [x - m for x in v]
        dev += r
        lag += list(zip(r[:-1], r[1:]))
    if len(dev) < 10 or len(lag) < 3:
        return {"error": "fewer than 10 inner intervals"}
    xs, ys = [p[0] for p in lag], [p[1] for p in lag]
    try:
        ac = statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        ac = None
    return {"sd_pct": 100 * statistics.pstdev(dev), "lag1": ac, "intervals": len(dev), "runs": len(runs)}


def measure_resolution(d, a, tmp):
    """The same two points with each design, back to back, in about the same machine time:
    the sequential and interleaved designs run --res-repeat blocks, the duet (both points at
    once, each on its own CPUs) twice as many, since its block takes half the time."""
    out = {"designs": {}}
    common = ["--engine", "postgres", "--profiles", "a=default,b=default", "--steps", a.res_steps,
              "--scale", "tiny", "--rows", str(a.res_rows), "--time", "%g" % a.res_time,
              "--seed", str(a.seed)]
    for design in a.res_designs:
        base, flags = design_flags(design)
        label = "res-" + design.replace("+", "-")
        repeat = a.res_repeat * (2 if base == "duet" else 1)
        extra = common + ["--repeat", str(repeat)] + flags
        if base != "sequential":
            extra += ["--slice", "%g" % a.res_slice]
        log("resolution: %s design" % design)
        res = sweep_and_report(d, a, tmp, label, label, extra, "a")
        r = {"cmd": res["sweep"]["cmd"], "wall_sec": res["sweep"]["wall_sec"], "rc": res["sweep"]["rc"],
             "loadavg": [res["sweep"]["loadavg_before"][0], res["sweep"]["loadavg_after"][0]],
             "error": res.get("error"), "repeat": repeat,
             "noise": second_noise(os.path.join(tmp, label, "results.db"), a.res_step)}
        rep = res.get("report")
        if rep:
            tp = rel_cells(rep, res["cand"]).get(a.res_step)
            cpu = hw_rel_cells(rep, "server_cpupq", res["cand"]).get(a.res_step)
            for key, c in (("throughput", tp), ("server_cpupq", cpu)):
                r[key] = None if not c else {
                    "ratio": c.get("value"), "ci_lo": c.get("ci_lo"), "ci_hi": c.get("ci_hi"),
                    "width": width(c), "mde_pct": c.get("mde_pct"), "verdict": c.get("verdict"),
                    "n": c.get("n"), "paired": c.get("paired")}
            r["variance"] = {step: {key: variance_row(rep, res["cand"], step, key) for key in ("throughput", "server_cpupq")}
                             for step in a.res_check_steps}
            r["busy_max_pct"] = max(busy_notes(rep).values() or [0])
            r["checks"] = check_report(rep, res.get("md"), res["cand"])
        out["designs"][design] = r
        for key in ("throughput", "server_cpupq"):
            c = r.get(key)
            log("  %s %s %s: %s, width %s, MDE %s, n %s" % (
                design, a.res_step, key, ratio_ci(c),
                f3((c or {}).get("width")), pct((c or {}).get("mde_pct")), (c or {}).get("n")))
        for step, v in (r.get("variance") or {}).items():
            for key, row in v.items():
                if row:
                    log("  %s %s %s: shares seconds %s slices %s blocks %s CPU %s; MDE %s, limit %s, MDE/limit %s" % (
                        design, step, key, pct(row.get("seconds")), pct(row.get("slices")), pct(row.get("blocks_share")),
                        pct(row.get("cpu")), pct(row.get("mde")), pct(row.get("limit")), f3(row.get("mde_over_limit"))))
        nz = r["noise"]
        if "sd_pct" in nz:
            log("  %s 1-second noise within a run: sd %.1f%%, lag-1 autocorrelation %s" % (
                design, nz["sd_pct"], f3(nz["lag1"])))
    seq = out["designs"].get("sequential") or {}
    out["acceptance"] = {}
    # Issue 37: the best design's MDE within 1.5x of the white-noise limit it reports, and
    # at most 4%, for every checked step and both figures.
    out["limit"] = {}
    for design in a.res_designs:
        ok = True
        for step in a.res_check_steps:
            for key in ("throughput", "server_cpupq"):
                row = (((out["designs"].get(design) or {}).get("variance") or {}).get(step) or {}).get(key)
                good = bool(row) and row.get("mde") is not None and row.get("limit") is not None \
                    and row["mde"] <= 4.0 and row["mde"] <= 1.5 * row["limit"]
                ok = ok and good
        out["limit"][design] = ok
    if not seq:
        return out
    for design in a.res_designs:
        if design == "sequential":
            continue
        dr = out["designs"].get(design) or {}
        acc = {}
        for key in ("throughput", "server_cpupq"):
            ws, wi = (seq.get(key) or {}).get("width"), (dr.get(key) or {}).get("width")
            mi = (dr.get(key) or {}).get("mde_pct")
            acc[key] = {"width_ratio": wi / ws if ws and wi is not None else None,
                        "half": ws is not None and wi is not None and wi <= ws / 2,
                        "mde_ok": mi is not None and mi <= 3.0}
        acc["time_ok"] = all((out["designs"].get(x) or {}).get("wall_sec", 1e9) <= a.res_budget
                             for x in ("sequential", design))
        acc["accepted"] = bool(dr.get("throughput")) and acc["throughput"]["half"] and acc["throughput"]["mde_ok"] \
            and acc["server_cpupq"]["half"] and acc["server_cpupq"]["mde_ok"] and acc["time_ok"] \
            and not seq.get("error") and not dr.get("error")
        out["acceptance"][design] = acc
    # The issue asks it of the interleaved family: the default design, or its duet.
    out["accepted"] = any(acc["accepted"] for acc in out["acceptance"].values())
    return out


# --------------------------------------------------------------------------- output

def yes(b):
    return "**yes**" if b else "**NO**"


def markdown(a, rep):
    m = rep["machine"]
    md = ["# dbperf comparisons (issue 22): A/A, known effect, resolution", "",
          "- date: %s; host %s; `nproc` %s; memory %s GiB; CPU %s; kernel %s" % (
              m["date"], m["hostname"], m["nproc"], m["mem_gib"], m["cpu_model"], m["kernel"]),
          "- dbperf: `%s` (tree %s, %s)" % (a.dbperf, rep.get("git"), rep.get("dbperf_version")),
          "- load average at start %s, at end %s; %s%s" % (
              rep["loadavg_start"], rep.get("loadavg_end"),
              "quick version (--quick)" if a.quick else "full measurements",
              "; %.0f min in all" % (rep["seconds"] / 60) if rep.get("seconds") else "")]
    for m_ in MEASUREMENTS:
        if (rep.get(m_) or {}).get("crashed"):
            md += ["", "## %s: the script failed: %s" % (m_, rep[m_]["crashed"])]
    if "aa" in rep and not rep["aa"].get("crashed"):
        r = rep["aa"]
        md += ["", "## 1. A/A: a=default vs b=default, interleaved (%s, --scale %s, --repeat %d%s%s)" % (
            a.aa_engine, a.aa_scale, a.aa_repeat, ", --steps " + a.aa_steps if a.aa_steps else "",
            ", --slice %g" % a.aa_slice if a.aa_slice is not None else ""), "",
            "| # | steps with a verdict | higher | lower | same | unstable | widest interval (step) | median MDE | min pairs | busy max | load avg | wall | no difference |",
            "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|"]
        for c in r["comparisons"]:
            if c.get("counts"):
                cc = c["counts"]
                w = c.get("widest")
                md.append("| aa%d | %d of %d | %d | %d | %d | %d | %s | %s | %s | %.0f%% | %.1f→%.1f | %.0f s | %s%s |" % (
                    c["k"], c["with_verdict"], c["steps"], cc["higher"], cc["lower"], cc["same"], cc["unstable"],
                    "%.3f: %s %s" % (w["width"], w["step"], w["cell"]) if w else "-",
                    pct(c.get("median_mde_pct")), c.get("min_pairs"), c.get("busy_max_pct") or 0,
                    c["loadavg"][0], c["loadavg"][1], c["wall_sec"], yes(c["pass"]),
                    " (%s)" % "; ".join(c["differences"]) if c.get("differences") else ""))
            else:
                md.append("| aa%d | FAILED: %s | | | | | | | | | %.1f→%.1f | %.0f s | **NO** |" % (
                    c["k"], (c.get("error") or "").replace("|", "\\|")[:300], c["loadavg"][0], c["loadavg"][1], c["wall_sec"]))
        md += ["", "Acceptance (no step faster or slower in at least %d of %d comparisons): %d of %d → %s" % (
            r["need"], len(r["comparisons"]), r["passed"], len(r["comparisons"]), yes(r["accepted"]))]
        errs = [c for c in r["comparisons"] if c.get("error") and c.get("counts")]
        for c in errs:
            md.append("- aa%d: %s" % (c["k"], c["error"]))
    if "known" in rep and not rep["known"].get("crashed"):
        for r in rep["known"]["engines"]:
            md += ["", "## 2. Known effect on %s: c = a + a pause of %s after every operation (--steps %s --repeat %d --time %g%s%s)" % (
                r["engine"], r["think"], a.known_steps, a.known_repeat, a.known_time,
                " --rows %d" % a.known_rows if a.known_rows else "",
                " --slice %g" % a.known_slice if a.known_slice is not None else ""), "",
                "| step | trials | a's rate per worker | c's pause (think_us_per_op) | service per op a → c (service_us_per_op) | expected c/a from the latencies | naive 1/(1+t·r_a) | per-trial c/a | report c/a [95% interval] | verdict | MDE | expected inside | naive inside | not ok trials |",
                "|---|---:|---:|---:|---|---:|---:|---:|---|---|---:|---|---|---|"]
            for s_ in r["steps"]:
                md.append("| %s | %d | %s | %s | %s → %s µs | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    s_["step"], s_["trials"], "%.0f/s" % s_["r_a_median"] if s_.get("r_a_median") else "-",
                    "%.1f µs" % s_["think_us_median"] if s_.get("think_us_median") is not None else "-",
                    f1(s_.get("service_us_a_median")), f1(s_.get("service_us_c_median")),
                    f3(s_.get("expected_median")), f3(s_.get("naive_median")), f3(s_.get("observed_median")), ratio_ci(s_),
                    s_.get("verdict") or "-", pct(s_.get("mde_pct")), yes(s_["inside"]), yes(s_.get("naive_inside")),
                    ", ".join(s_.get("not_ok_trials") or []) or "-"))
            md += ["", "medians over the trials (block/slice); wall %.0f s, load average %.1f→%.1f, busy max %.0f%%%s. Acceptance (expected inside the interval): %s" % (
                r["wall_sec"], r["loadavg"][0], r["loadavg"][1], r.get("busy_max_pct") or 0,
                "; " + r["error"] if r.get("error") else "", yes(r["accepted"]))]
    if "resolution" in rep and not rep["resolution"].get("crashed"):
        r = rep["resolution"]
        md += ["", "## 3. Resolution on managed PostgreSQL: %s, a=default vs b=default (--steps %s --rows %d --time %g; --repeat %d, the duet %d; --slice %g)" % (
            a.res_step, a.res_steps, a.res_rows, a.res_time, a.res_repeat, 2 * a.res_repeat, a.res_slice), "",
            "| design | figure | ratio [95% interval] | width hi−lo | MDE | verdict | n | wall | load avg | busy max | 1-s noise (sd, lag-1 autocorr.) |",
            "|---|---|---|---:|---:|---|---:|---:|---|---:|---|"]
        for design in a.res_designs:
            dr = r["designs"].get(design)
            if not dr:
                continue
            nz = dr.get("noise") or {}
            noise = "%.1f%%, %s" % (nz["sd_pct"], f3(nz.get("lag1"))) if "sd_pct" in nz else "-"
            for key in ("throughput", "server_cpupq"):
                c = dr.get(key)
                md.append("| %s | %s | %s | %s | %s | %s | %s | %.0f s | %.1f→%.1f | %.0f%% | %s |" % (
                    design, "q/s" if key == "throughput" else key,
                    ratio_ci(c), f3((c or {}).get("width")), pct((c or {}).get("mde_pct")), (c or {}).get("verdict") or "-",
                    "%s%s" % ((c or {}).get("n"), " pairs" if (c or {}).get("paired") else ""),
                    dr["wall_sec"], dr["loadavg"][0], dr["loadavg"][1], dr.get("busy_max_pct") or 0, noise))
            if dr.get("error"):
                md.append("| %s | FAILED | %s | | | | | | | | |" % (design, dr["error"].replace("|", "\\|")[:300]))
        md += [""]
        for design, acc in r["acceptance"].items():
            for key in ("throughput", "server_cpupq"):
                k = acc[key]
                md.append("- %s %s: width / sequential width = %s (≤ 0.5: %s); MDE ≤ 3%%: %s" % (
                    design, key, f3(k["width_ratio"]), yes(k["half"]), yes(k["mde_ok"])))
            md.append("- %s and sequential each within %.0f min: %s; %s: %s" % (
                design, a.res_budget / 60, yes(acc["time_ok"]), design, yes(acc["accepted"])))
        if "accepted" in r:
            md.append("- acceptance (the interleaved design or its duet): %s" % yes(r["accepted"]))
        md += ["", "Where the noise of each ratio comes from (the report's variance table: shares of the ratio's variance)", "",
               "| design | step | figure | seconds | slices | blocks | CPU | block sd | MDE | white-noise limit | MDE/limit | MDE ≤ 4% and ≤ 1.5×limit |",
               "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for design in a.res_designs:
            dr = r["designs"].get(design) or {}
            for step, v in (dr.get("variance") or {}).items():
                for key, row in v.items():
                    if not row:
                        md.append("| %s | %s | %s | - | | | | | | | | |" % (design, step, key))
                        continue
                    good = row.get("mde") is not None and row.get("limit") is not None and row["mde"] <= 4.0 and row["mde"] <= 1.5 * row["limit"]
                    md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        design, step, "q/s" if key == "throughput" else key, pct(row.get("seconds")), pct(row.get("slices")),
                        pct(row.get("blocks_share")), pct(row.get("cpu")), pct(row.get("block_sd")), pct(row.get("mde")),
                        pct(row.get("limit")), f3(row.get("mde_over_limit")), yes(good)))
        md.append("- issue 37 (some design's MDE ≤ 4%% and within 1.5× its white-noise limit, every checked step and figure): %s" % (
            yes(any((r.get("limit") or {}).values()))))
        md.append("- 1-s noise: the deviation of each 1-second interval's rate from its run's mean; a lag-1 "
                  "autocorrelation near 0 is white noise, which no order of the trials removes (only "
                  "more measuring time, or less noise per second, narrows the interval)")
    # Contradictions.
    checks = []
    for name, lst in (("aa", [(("aa%d" % c["k"]), c.get("checks") or []) for c in (rep.get("aa") or {}).get("comparisons", [])]),
                      ("known", [("known " + e["engine"], e.get("checks") or []) for e in (rep.get("known") or {}).get("engines", [])]),
                      ("resolution", [(d, v.get("checks") or []) for d, v in ((rep.get("resolution") or {}).get("designs") or {}).items()])):
        for who, ls in lst:
            for l in summarize_checks(ls):
                checks.append("- %s: %s" % (who, l))
    md += ["", "## Report checks (verdict rule, classes, Markdown marks, failed steps)", ""]
    md += checks or ["- none: every verdict follows its interval, every class and mark its verdict, no step failed"]
    md += ["", "## Commands", "", "```"] + ["$ " + c for c in rep["commands"]] + ["```"]
    return "\n".join(md) + "\n"


# --------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Issue 22's acceptance measurements of dbperf sweep's comparisons: A/A, a known "
                    "effect (--think), and the resolution of the interleaved vs the sequential design. "
                    "Needs bin/dbperf (make build); the known effect and the resolution start managed "
                    "PostgreSQL servers (scripts/deps.sh test installs PostgreSQL).")
    p.add_argument("--dbperf", default=os.path.join(REPO, "bin", "dbperf"), metavar="PATH",
                   help="dbperf binary (default: bin/dbperf of this repository)")
    p.add_argument("--only", action="append", metavar="WHAT",
                   help="run only these measurements: aa, known, resolution (repeatable or comma-separated)")
    p.add_argument("--quick", action="store_true",
                   help="a short version: 2 A/A comparisons of 3 steps, smaller rows and times (~20 min)")
    p.add_argument("--out", metavar="FILE",
                   help="also write FILE.md (the tables) and FILE.json (every figure); default "
                        "/tmp/cmp/comparisons-DATE")
    p.add_argument("--tmp", metavar="DIR", help="parent of the temporary directory of the stores (default $TMPDIR)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (stores, reports)")
    p.add_argument("--seed", type=int, default=20220, help="base seed of the sweeps (A/A k: seed+k)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds one dbperf command may take")
    g = p.add_argument_group("A/A")
    g.add_argument("--aa-n", type=int, help="comparisons (default 10; quick 2)")
    g.add_argument("--aa-engine", default="sqlite", choices=["sqlite", "postgres"])
    g.add_argument("--aa-scale", default="tiny")
    g.add_argument("--aa-repeat", type=int,
                   help="blocks per comparison (default 6: a verdict needs 6 interleaved pairs)")
    g.add_argument("--aa-steps", help="--steps of the A/A sweeps (default l.i0,l.x,l.i1,cleanup,qr100,qp100; "
                                      "quick l.i0,l.x,qp100)")
    g.add_argument("--aa-time", type=float, help="--time of the A/A sweeps (default 4)")
    g.add_argument("--aa-rows", type=int, help="--rows of the A/A sweeps (default the scale's)")
    g.add_argument("--aa-slice", type=float,
                   help="--slice of the A/A sweeps (default dbperf's, 5 s: one slice of a tiny "
                        "query step; 1: five, so 5x the pairs per query step)")
    g = p.add_argument_group("known effect")
    g.add_argument("--known-engines", default="postgres,sqlite",
                   help="engines, comma-separated: postgres, sqlite (default both)")
    g.add_argument("--think", action="append", metavar="[ENGINE=]DUR",
                   help="c's pause after every operation, e.g. 200us or postgres=200us "
                        "(default postgres=%s, sqlite=%s)" % (DEFAULT_THINK["postgres"], DEFAULT_THINK["sqlite"]))
    g.add_argument("--known-steps", default="l.i0,l.x,qr100,qp100")
    g.add_argument("--known-repeat", type=int,
                   help="blocks, the pairs of a verdict (default 6, of 2 slices of 5 s per query step)")
    g.add_argument("--known-time", type=float, help="--time (default 10; quick 6)")
    g.add_argument("--known-rows", type=int, help="--rows (default the tiny scale's 100000; quick 50000)")
    g.add_argument("--known-slice", type=float,
                   help="--slice (default dbperf's, 5 s; 0: whole steps, one pair per block)")
    g = p.add_argument_group("resolution")
    g.add_argument("--res-steps", default="l.i0,qp100")
    g.add_argument("--res-step", default="qp100", help="the step whose figures are compared")
    g.add_argument("--res-rows", type=int, help="--rows (default 200000; quick 50000)")
    g.add_argument("--res-time", type=float, help="--time (default 10; quick 6)")
    g.add_argument("--res-repeat", type=int, help="--repeat, the blocks (default 12; quick 6)")
    g.add_argument("--res-slice", type=float, default=2, help="interleaved and duet --slice (default 2)")
    g.add_argument("--res-designs", default=",".join(RES_DESIGNS),
                   help="designs measured, sequential first (default %s)" % ",".join(RES_DESIGNS))
    g.add_argument("--res-budget", type=float, default=600, help="seconds each design may take (default 600)")
    g.add_argument("--res-check-steps", help="steps whose variance decomposition is reported and checked (default --res-step)")
    a = p.parse_args(argv)
    only = []
    for o in a.only or MEASUREMENTS:
        only += [x.strip() for x in o.split(",") if x.strip()]
    bad = [x for x in only if x not in MEASUREMENTS]
    if bad:
        raise BadInput("--only: unknown %s (want aa, known, resolution)" % ",".join(bad))
    a.only = [m for m in MEASUREMENTS if m in only]
    q = a.quick

    def dflt(name, full, quick):
        if getattr(a, name) is None:
            setattr(a, name, quick if q else full)
    dflt("aa_n", 10, 2)
    dflt("aa_repeat", 6, 6)
    dflt("aa_steps", "l.i0,l.x,l.i1,cleanup,qr100,qp100", "l.i0,l.x,qp100")
    dflt("aa_time", 4, 4)
    dflt("known_repeat", 6, 6)
    dflt("known_time", 10, 6)
    dflt("known_rows", None, 50000)
    dflt("res_rows", 200000, 50000)
    dflt("res_time", 10, 6)
    dflt("res_repeat", 12, 6)
    a.res_designs = [x.strip() for x in a.res_designs.split(",") if x.strip()]
    def known_design(x):
        base, *extra = x.split("+")
        return base in RES_DESIGNS and all(e in RES_VARIANTS for e in extra) and not (base == "sequential" and extra)
    bad = [x for x in a.res_designs if not known_design(x)]
    if not a.res_designs or bad or ("sequential" in a.res_designs and a.res_designs[0] != "sequential"):
        raise BadInput("--res-designs: sequential (first, when given), interleaved, duet, or a variant such as "
                       "duet+load-once (%s)" % ", ".join(bad or a.res_designs))
    a.res_check_steps = [x.strip() for x in (a.res_check_steps or a.res_step).split(",") if x.strip()]
    a.known_engines = [e.strip() for e in a.known_engines.split(",") if e.strip()]
    if any(e not in DEFAULT_THINK for e in a.known_engines):
        raise BadInput("--known-engines: use postgres and/or sqlite")
    think = {}
    for t in a.think or []:
        e, _, dur = t.rpartition("=")
        if e and e not in DEFAULT_THINK:
            raise BadInput("--think %s: ENGINE is postgres or sqlite" % t)
        for x in ([e] if e else a.known_engines):
            think[x] = dur
    a.think = think
    if a.aa_n < 1 or a.aa_repeat < 1 or a.known_repeat < 1 or a.res_repeat < 1:
        raise BadInput("--aa-n, --aa-repeat, --known-repeat and --res-repeat must be >= 1")
    a.dbperf = os.path.abspath(os.path.expanduser(a.dbperf))
    if not os.access(a.dbperf, os.X_OK):
        raise BadInput("dbperf binary %s not found: run `make build` in %s, or pass --dbperf PATH" % (a.dbperf, REPO))
    if a.out is None:
        a.out = "/tmp/cmp/comparisons-" + time.strftime("%Y%m%d-%H%M%S")
    for ext in (".md", ".json"):
        if a.out.endswith(ext):
            a.out = a.out[: -len(ext)]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)) or ".", exist_ok=True)
    return a


def main(argv):
    try:
        a = parse_args(argv)
    except BadInput as e:
        print("comparisons: %s" % e, file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    d = Dbperf(a.dbperf, a.timeout)
    ver = subprocess.run([a.dbperf, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True).stdout.strip().splitlines()
    tmp = tempfile.mkdtemp(prefix="comparisons-", dir=a.tmp)
    os.chmod(tmp, 0o755)  # as root, a managed PostgreSQL runs as user postgres
    log("stores and reports under %s" % tmp)
    t0 = time.monotonic()
    rep = {"script": "scripts/comparisons.py", "argv": argv, "machine": machine(), "git": git_state(),
           "dbperf_version": ver[0] if ver else None, "loadavg_start": loadavg(), "tmp": tmp,
           "params": {k: v for k, v in vars(a).items()}}
    status = 0
    try:
        for m in a.only:
            try:
                rep[m] = {"aa": measure_aa, "known": measure_known, "resolution": measure_resolution}[m](d, a, tmp)
            except Exception as e:  # a bug here or an unexpected report: say it, go on
                import traceback
                rep[m] = {"crashed": "%s: %s" % (type(e).__name__, e), "accepted": False,
                          "traceback": traceback.format_exc()}
                log("%s: the script failed: %s" % (m, rep[m]["traceback"]))
            if not rep[m].get("accepted"):
                status = 1
    except (KeyboardInterrupt, Interrupted):
        log("interrupted")
        status = 130
    finally:
        rep["seconds"] = round(time.monotonic() - t0, 1)
        rep["loadavg_end"] = loadavg()
        rep["commands"] = d.commands
        text = markdown(a, rep) if status != 130 or any(m in rep for m in MEASUREMENTS) else ""
        if text:
            print("\n" + text)
            with open(a.out + ".md", "w") as f:
                f.write(text)
        with open(a.out + ".json", "w") as f:
            json.dump(rep, f, indent=1, default=str)
            f.write("\n")
        log("wrote %s.md and %s.json" % (a.out, a.out))
        if a.keep:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
