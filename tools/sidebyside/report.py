"""The report: per engine and step the per-round figures (client CPU per op of dbperf and
iibench.py, the floor, the ratios), their medians and min-max, the targets, the notes under
each table; printed as text, written as Markdown (FILE.md) and JSON (FILE.json)."""

import json
import math
import statistics

from .common import INSERT_STEPS, RW_STEP, log

# The targets of issue 9, judged on the medians.
TARGET_LI0_US = 0.6
TARGET_LI1_US = 1.5
TARGET_SHARE = 0.10
TARGET_FLOOR = 1.15

# An "other work" note is printed for measurements where more than this share of the
# machine's busy CPU was neither the client's nor the server's.
BUSY_NOTE_SHARE = 0.25


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


LEGEND = ("Op: inserted row (l.i0, l.i1, l.i2), indexed row (l.x), query (qr*, qp*). Per step "
          "ROUNDS rounds of dbperf, floor, iibench.py (even rounds: iibench.py, dbperf, floor); "
          "µs/op = client CPU (user+system) per op, median over rounds; ratios = median of the "
          "per-round ratios (min–max); floor = a blocking C client's CPU per op against an echo "
          "server burning dbperf's server CPU per statement of the same round (queries: per "
          "query; inserts: per row, with requests as large as dbperf's statements); server µs/op "
          "medians; client share = dbperf client / (client + server) CPU in l.i0; targets judged "
          "on the medians, * = the rounds disagree.")


def legend(rounds):
    """The legend printed (and written) under the tables."""
    return LEGEND.replace("ROUNDS", str(rounds))


def engine_text(name, res, a):
    """What is printed for one engine once it is measured: a blank line, its title, its
    table (when it has rows) and its notes, indented."""
    out = ["", engine_title(name, res)]
    if res["rows"]:
        out.append(text_table(res["rows"]))
    for n in notes(name, res, a):
        out.append("  " + n)
    return "\n".join(out) + "\n"


def out_base(out):
    """--out FILE without a trailing .md or .json (either one names both files)."""
    base = out
    for ext in (".md", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base


def markdown(a, report):
    """The text of FILE.md: the command's parameters, per engine its title, table and
    notes, then the legend."""
    md = ["<!-- scripts/sidebyside.py --engines %s --rows %d --rows2 %d --time %g --rounds %d "
          "--steps %s --floor-secs %g --settle %g; %s, %.0f min -->" % (
              ",".join(a.engines), a.rows, a.rows2, a.time, a.rounds, ",".join(a.steps),
              a.floor_secs, a.settle, report["started_at"], report.get("seconds", 0) / 60)]
    for name, res in report["engines"].items():
        md += ["", "**%s**" % engine_title(name, res), "", md_table(res.get("rows") or [])]
        ns = notes(name, res, a)
        if ns:
            md += [""] + ["- " + n for n in ns]
    md += ["", legend(a.rounds)]
    return "\n".join(md) + "\n"


def write_out(a, report):
    base = out_base(a.out)
    with open(base + ".md", "w") as f:
        f.write(markdown(a, report))
    with open(base + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
        f.write("\n")
    log("wrote %s.md and %s.json" % (base, base))
