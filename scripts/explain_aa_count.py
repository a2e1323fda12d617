#!/usr/bin/env python3
"""Count what explain called changed in scripts/explain_aa.sh's A/A sweeps.

Usage: scripts/explain_aa_count.py DIR

Per sweep and explained step: the step's ratio from explain's summary (none: not
changed by the report's rule), the roles, functions (self and total), statements and
plans called changed, and a last line with how many sweeps called anything changed.
An A/A sweep passes when nothing is. Reads DIR/aaN.STEP.json (dbperf explain --format
json) and DIR/aaN.sweep.txt (the sweep's report: a ▲ or ▼ is a ratio called changed).
"""
import glob
import json
import os
import re
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    d = sys.argv[1]
    sweeps = sorted({int(m.group(1)) for f in os.listdir(d) for m in [re.match(r"aa(\d+)\.", f)] if m})
    flagged = 0
    for i in sweeps:
        found = []
        sweep = os.path.join(d, "aa%d.sweep.txt" % i)
        if os.path.exists(sweep):
            for line in open(sweep, encoding="utf-8"):
                if re.search(r"\]\s*[▲▼]", line):  # a cell "0.97 [0.95–0.99] ▼", not the legend
                    found.append("ratio: " + line.strip())
        for f in sorted(glob.glob(os.path.join(d, "aa%d.*.json" % i))):
            try:
                j = json.load(open(f, encoding="utf-8"))
            except (OSError, ValueError) as e:
                found.append("%s: unreadable (%s)" % (os.path.basename(f), e))
                continue
            for s in j.get("steps", []):
                step = s["step"]
                for r in s.get("roles", []):
                    iv = r.get("interval")
                    if r.get("changed"):
                        found.append("%s role %s %+.3g µs/op [%+.3g, %+.3g]" % (step, r["role"], iv["estimate"], iv["lo"], iv["hi"]))
                    for kind in ("self", "total"):
                        for fn in r.get(kind) or []:
                            if fn.get("changed"):
                                v = fn["interval"]
                                found.append("%s %s %s %s %+.3g [%+.3g, %+.3g]" % (step, r["role"], kind, fn["function"], v["estimate"], v["lo"], v["hi"]))
                for st in s.get("statements", []):
                    if st.get("changed"):
                        v = st["interval"]
                        found.append("%s statement %.50s %+.3g [%+.3g, %+.3g]" % (step, st["query"], v["estimate"], v["lo"], v["hi"]))
                    if st.get("plan_changed"):
                        found.append("%s plan %.50s: %s" % (step, st["query"], st.get("plan_difference", "")))
            for s in j.get("summary", []):
                found.append("summary: " + s["text"])
        print("sweep %d: %s" % (i, "nothing changed" if not found else "%d found" % len(found)))
        for x in found:
            print("  " + x)
        flagged += bool(found)
    print("%d of %d sweeps called something changed" % (flagged, len(sweeps)))


if __name__ == "__main__":
    main()
