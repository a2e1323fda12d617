#!/bin/sh
# The overhead of dbperf's own diagnostics (issue 25): PAIRS rounds of three managed
# PostgreSQL runs of the same steps, without diagnostics, with --cpu-profile and with
# --explain, their order rotating from round to round, then `dbperf report` of the three
# labels: its relative table's ratios, intervals and verdicts are the overhead, measured
# by dbperf's own statistics (docs/profiles.md, "Overhead").
#
# Usage, after `make build`: scripts/profile_overhead.sh [PAIRS [STEPS [SECONDS]]]
# (defaults 6, l.i0,l.x,qp100 and 5). Results go to a fresh store in a temporary dir.
# FLAGS adds flags to every run, e.g. FLAGS=--no-deep-idle (docs/profiles.md, "Overhead").
set -eu
pairs=${1:-6}
steps=${2:-l.i0,l.x,qp100}
secs=${3:-5}
dbperf=${DBPERF:-bin/dbperf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { # label, extra flags
	label=$1
	shift
	"$dbperf" run insertbench --engine postgres --managed --scale tiny --steps "$steps" --time "$secs" \
		--quiet --label "$label" --results "$dir/r.db" ${FLAGS:-} "$@"
}
i=0
while [ "$i" -lt "$pairs" ]; do
	case $((i % 3)) in
	0) run none; run cpu-profile --cpu-profile "$dir/prof"; run explain --explain ;;
	1) run cpu-profile --cpu-profile "$dir/prof"; run explain --explain; run none ;;
	*) run explain --explain; run none; run cpu-profile --cpu-profile "$dir/prof" ;;
	esac
	i=$((i + 1))
done
"$dbperf" report none cpu-profile explain --results "$dir/r.db"
