#!/bin/sh
# Issue 37's known effect: N duet sweeps (--load-once) of two managed PostgreSQL points
# that differ only in b's pause after every operation (--think b=DUR, tuned to cost qp100
# about 3% on the machine), and the verdict each sweep's report gives qp100: ▼ (slower,
# the right direction), ▲ (wrong), or none. Prints one line per sweep and the count.
#
# Usage, after `make build`: scripts/known_duet.sh [N [THINK [REPEAT]]]
# (defaults 10, 2us, 24). DIR keeps the stores and reports (default a fresh temporary
# dir); FLAGS adds sweep flags.
set -eu
n=${1:-10}
think=${2:-2us}
repeat=${3:-24}
dbperf=${DBPERF:-bin/dbperf}
dir=${DIR:-$(mktemp -d)}
mkdir -p "$dir"
echo "known_duet: $n sweeps, --think b=$think, $repeat blocks, into $dir ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
i=1
right=0
while [ "$i" -le "$n" ]; do
	start=$(date -u +%H:%M:%S)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	rc=0
	"$dbperf" sweep insertbench --engine postgres --profiles a=default,b=default --think "b=$think" --design duet --load-once \
		--repeat "$repeat" --steps l.i0,l.x,qp100 --scale tiny --rows 200000 --time 10 --slice 2 \
		--seed $((30370 + i)) --label "k$i" --results "$dir/k$i.db" ${FLAGS:-} >"$dir/k$i.txt" 2>&1 || rc=$?
	cell=$(awk '/^Throughput relative to/{t=1} t && $1=="default/b"{print; exit}' "$dir/k$i.txt" | sed 's/^default\/b *//')
	qp=$(echo "$cell" | awk '{print $(NF-3), $(NF-2), $(NF-1), $NF}')
	case $qp in *▼*) right=$((right + 1)) ;; esac
	echo "sweep $i: $start–$(date -u +%H:%M:%S) load $load0→$(cut -d' ' -f1 /proc/loadavg) rc $rc qp100 $qp" | tee -a "$dir/log.txt" >&2
	i=$((i + 1))
done
echo "qp100 called slower (▼) in $right of $n sweeps" | tee -a "$dir/log.txt"
