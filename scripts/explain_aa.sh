#!/bin/sh
# Issue 38's A/A of explain inside a design: N duet sweeps of two identical managed
# PostgreSQL points (a=default, b=default) with --cpu-profile --explain, then for each
# sweep its report and `dbperf explain a b --format json` per query step. What to look
# for: no role, function, statement or plan called changed (explain's "changed": true,
# a statement's "changed" or "plan_changed"), and no step's ratio marked ▲/▼.
#
# Usage, after `make build`: scripts/explain_aa.sh [N [REPEAT [STEPS]]]
# (defaults 10, 12, l.i0,l.x,qr100,qp100; the query steps are explained). DIR keeps the
# stores and outputs (default a fresh temporary dir, printed); FLAGS adds sweep flags,
# e.g. FLAGS=--no-deep-idle. scripts/explain_aa_count.py DIR counts the verdicts.
set -eu
n=${1:-10}
repeat=${2:-12}
steps=${3:-l.i0,l.x,qr100,qp100}
dbperf=${DBPERF:-bin/dbperf}
dir=${DIR:-$(mktemp -d)}
mkdir -p "$dir"
echo "explain_aa: $n sweeps into $dir ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
i=1
while [ "$i" -le "$n" ]; do
	db="$dir/aa$i.db"
	start=$(date -u +%H:%M:%S)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	rc=0
	"$dbperf" sweep insertbench --engine postgres --profiles a=default,b=default --design duet --load-once \
		--repeat "$repeat" --steps "$steps" --scale tiny --rows 200000 --time 10 --slice 2 \
		--seed $((20260 + i)) --cpu-profile "$dir/prof$i" --explain --label "aa$i" --results "$db" \
		${FLAGS:-} >"$dir/aa$i.sweep.txt" 2>&1 || rc=$?
	echo "sweep $i: $start–$(date -u +%H:%M:%S) load $load0→$(cut -d' ' -f1 /proc/loadavg) rc $rc" | tee -a "$dir/log.txt" >&2
	for st in $(echo "$steps" | tr ',' ' '); do
		case $st in
		q*) "$dbperf" explain "aa$i/default/a" "aa$i/default/b" --step "$st" --results "$db" --format json >"$dir/aa$i.$st.json" 2>>"$dir/aa$i.err" || true
			"$dbperf" explain "aa$i/default/a" "aa$i/default/b" --step "$st" --results "$db" >"$dir/aa$i.$st.txt" 2>>"$dir/aa$i.err" || true ;;
		esac
	done
	rm -rf "$dir/prof$i"
	i=$((i + 1))
done
echo "$dir"
