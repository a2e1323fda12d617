package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// Note kinds (Note.Kind, JSON "kind", the CSV notes rows' "row").
const (
	// NoteOneOp: steps of one operation per client, shown as duration and CPU seconds.
	NoteOneOp = "one_op"
	// NoteNoOpWrites: a write label most of whose operations affected no row.
	NoteNoOpWrites = "no_op_writes"
	// NoteBusy: a step some run measured on a busy machine (other processes and steal over
	// metrics.NoisyOtherCPUPct); its ratios' intervals are widened.
	NoteBusy = "busy"
	// NoteTooFew: some relative cell has too few trials for a verdict.
	NoteTooFew = "too_few"
	// NoteDuet: runs of the duet design are compared: what that design can and cannot
	// measure.
	NoteDuet = "duet"
	// NoteDistance: the configs ran on managed clusters whose nodes were apart by
	// different delays (dbperf run --cluster --node-latency): why their commits differ.
	NoteDistance = "distance"
)

// Note is a line a comparison adds under its tables: what the numbers cannot say alone.
type Note struct {
	Kind string
	// Steps are the steps it is about (none for NoteTooFew).
	Steps []string
	// Label is the op label of a NoteNoOpWrites.
	Label string
	// SharePct is the share the note is about: of the operations that affected no row
	// (NoteNoOpWrites), of the CPU other processes and steal took (NoteBusy); else 0.
	SharePct float64
	Text     string
}

// oneOp says whether a run's step is one operation per client: a cleanup, l.x's index
// build (one CREATE INDEX op per client), db_bench's flush/compact/shape commands (one op
// each). Its per-op figures are the whole step's, its percentiles all that one op.
func oneOp(r RunReport, s StepReport) bool {
	if s.Kind == "cleanup" {
		return true
	}
	if s.Status != metrics.StatusOK {
		return false // a step cut short says nothing of its design
	}
	p, ok := s.PrimaryOp()
	if !ok || p.Events <= 0 {
		return false
	}
	return p.Events <= int64(max(1, runClients(r)))
}

// runClients is the clients a run's workload ran with (its stored "clients", else
// "threads", the largest of a list); 0 when it stored neither.
func runClients(r RunReport) int {
	for _, k := range []string{"clients", "threads"} {
		if n := paramInt(r.Params[k]); n > 0 {
			return n
		}
	}
	return 0
}

// paramInt reads a stored number (JSON number, float64, int, numeric string, or the
// largest of a list of them); 0 when it is none.
func paramInt(v any) int {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return int(f)
		}
	case float64:
		return int(x)
	case int:
		return x
	case int64:
		return int(x)
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	case []any:
		best := 0
		for _, e := range x {
			best = max(best, paramInt(e))
		}
		return best
	}
	return 0
}

// busyShare is how busy the machine was with other work during a run's step: its
// other_cpu_pct + steal_pct, ok false when neither was measured.
func busyShare(r RunReport, step string) (pct float64, ok bool) {
	s, found := r.Step(step)
	if !found {
		return 0, false
	}
	other, okO := s.HW.Metrics[metrics.MetricOtherCPUPct]
	steal, okS := s.HW.Metrics[metrics.MetricStealPct]
	if !okO && !okS {
		return 0, false
	}
	return other + steal, true
}

// busyListed is how many of a step's busy runs its note names (the busiest); above
// busyStepsApart busy steps, one note covers them all.
const (
	busyListed     = 3
	busyStepsApart = 3
)

// busyRun is a run of a step measured on a busy machine.
type busyRun struct {
	group string
	id    int64
	pct   float64
}

// busyRuns are the compared runs whose step had more than metrics.NoisyOtherCPUPct of the
// CPU taken by other processes and steal, busiest first.
func (c Comparison) busyRuns(step string) []busyRun {
	var out []busyRun
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			if pct, ok := busyShare(r, step); ok && pct > metrics.NoisyOtherCPUPct {
				out = append(out, busyRun{group: g.Name, id: r.ID, pct: pct})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b busyRun) int {
		switch {
		case a.pct > b.pct:
			return -1
		case a.pct < b.pct:
			return 1
		}
		return 0
	})
	return out
}

// noiseWiden is how much a step's ratio intervals are widened (RatioOptions.Widen) when
// some compared run of the step was measured on a busy machine (busyRuns): the largest
// difference, over the configs, between the mean share of the CPU that other processes
// and steal took during the config's runs of the step and during the base's, as a
// fraction (at most 1). Work that took the same share from both configs' trials — as
// interleaved trials, which share their minutes — moves both alike, and what it does to
// their ratio is already in the trials' spread, hence in the interval; what it took from
// one config's trials and not the other's could move their ratio by about that share.
// Where one side's share was not measured, the other side's largest is taken.
func (c Comparison) noiseWiden(step string) float64 {
	if len(c.busyRuns(step)) == 0 {
		return 0
	}
	share := func(g GroupReport) (mean, top float64, ok bool) {
		n := 0
		for _, r := range g.Runs {
			if pct, found := busyShare(r, step); found {
				mean += pct
				top = max(top, pct)
				n++
			}
		}
		if n == 0 {
			return 0, 0, false
		}
		return mean / float64(n), top, true
	}
	base, baseTop, baseOK := share(c.Groups[c.Base])
	w := 0.0
	for gi, g := range c.Groups {
		if gi == c.Base {
			continue
		}
		m, top, ok := share(g)
		switch {
		case ok && baseOK:
			w = max(w, math.Abs(m-base)/100)
		case ok:
			w = max(w, top/100)
		case baseOK:
			w = max(w, baseTop/100)
		}
	}
	return min(w, 1)
}

// notes are the comparison's notes: one-op steps, write labels whose operations mostly
// did nothing, steps measured on a busy machine, too few trials for a verdict.
func (c Comparison) notes() []Note {
	var out []Note
	if steps := c.OneOpSteps(); len(steps) > 0 {
		what := "one operation each"
		if len(steps) == 1 {
			what = "one operation per client"
		}
		out = append(out, Note{Kind: NoteOneOp, Steps: steps,
			Text: fmt.Sprintf("%s: %s; shown as duration and CPU seconds, left out of geomeans and the latency table",
				strings.Join(steps, ", "), what)})
	}
	for _, step := range c.Steps {
		out = append(out, c.noOpWriteNotes(step)...)
	}
	out = append(out, c.busyNotes()...)
	if c.duet() {
		out = append(out, Note{Kind: NoteDuet, Text: "duet: the configs ran at the same time, each on CPUs of its own (dbperf sweep --design duet; their CPUs change each block), compared block by block; " +
			"valid for CPU-bound steps: steps that read or write the disk share it, as they share the memory bandwidth and caches, so their ratios mix both configs' IO; " +
			"the machine-wide figures (cpupq, cspq, device IO per op, other_cpu_pct) describe both and are left out"})
	}
	if n, ok := c.distanceNote(); ok {
		out = append(out, n)
	}
	if c.TooFew {
		out = append(out, Note{Kind: NoteTooFew,
			Text: fmt.Sprintf("no verdict (no mark, no colour) where a config has fewer than %d trials, or %d pairs of interleaved trials: those cells show the ratio only; repeat runs (--repeat %d, or the same --label) for one",
				c.NeedN, c.NeedPairs, c.NeedN)})
	}
	return out
}

// busyNotes say which steps some run measured on a busy machine, and how much their
// intervals are widened: a note per step, or one for all when more than busyStepsApart
// steps were.
func (c Comparison) busyNotes() []Note {
	var steps []string
	runs := map[string][]busyRun{}
	for _, step := range c.Steps {
		if rs := c.busyRuns(step); len(rs) > 0 {
			steps = append(steps, step)
			runs[step] = rs
		}
	}
	if len(steps) == 0 {
		return nil
	}
	if len(steps) > busyStepsApart {
		top, topStep := busyRun{}, ""
		var widened []string
		for _, step := range steps {
			if r := runs[step][0]; r.pct > top.pct {
				top, topStep = r, step
			}
			if c.widened(step) {
				widened = append(widened, fmt.Sprintf("%s %s", step, FormatPct(100*c.widen[step])))
			}
		}
		text := fmt.Sprintf("other processes and steal took over %.0f%% of the CPU in %d of %d steps, up to %s (%s, run %d (%s))",
			metrics.NoisyOtherCPUPct, len(steps), len(c.Steps), FormatPct(top.pct), topStep, top.id, top.group)
		if len(widened) > 0 {
			text += "; the intervals of their throughput and CPU ratios are widened by how much more of it one config's runs lost than the base's (the difference of the mean shares), and their verdicts with them: " + strings.Join(widened, ", ")
		} else if len(c.Groups) > 1 {
			text += "; intervals not widened: the configs' runs lost about as much of it as the base's"
		}
		return []Note{{Kind: NoteBusy, Steps: steps, SharePct: top.pct, Text: text}}
	}
	var out []Note
	for _, step := range steps {
		rs := runs[step]
		var parts []string
		for i, r := range rs {
			if i == busyListed && len(rs) > busyListed+1 {
				parts = append(parts, fmt.Sprintf("%d more runs over %.0f%%", len(rs)-i, metrics.NoisyOtherCPUPct))
				break
			}
			parts = append(parts, fmt.Sprintf("%s in run %d (%s)", FormatPct(r.pct), r.id, r.group))
		}
		text := fmt.Sprintf("%s: other processes and steal took over %.0f%% of the CPU: %s", step, metrics.NoisyOtherCPUPct, strings.Join(parts, ", "))
		if c.widened(step) {
			text += fmt.Sprintf("; the intervals of its throughput and CPU ratios are widened by %s (how much more of the CPU one config's runs lost than the base's: the difference of their mean shares), and their verdicts with them", FormatPct(100*c.widen[step]))
		} else if len(c.Groups) > 1 {
			text += "; its intervals are not widened: the configs' runs lost about as much of it as the base's"
		}
		out = append(out, Note{Kind: NoteBusy, Steps: []string{step}, SharePct: rs[0].pct, Text: text})
	}
	return out
}

// widened says whether step's ratio intervals were widened for a busy machine by a
// share that shows (0.05% or more); a single config has no ratio to widen (issue 42: a
// single-run report listed "widened by 0.0%" for 41 steps).
func (c Comparison) widened(step string) bool {
	return len(c.Groups) > 1 && c.widen[step] >= 0.0005
}

// noOpWriteNotes are a step's write labels fewer than half of whose operations affected a
// row (sysbench's delete test at a tiny scale: 86,662 DELETEs deleted 9,997 rows), over
// every compared run of the step: their rate is mostly of statements that did nothing.
func (c Comparison) noOpWriteNotes(step string) []Note {
	type sum struct {
		rows, events int64
		stmtsOnly    bool
		runs         int
	}
	var labels []string
	sums := map[string]*sum{}
	c.EachStep(step, func(s StepReport) {
		for _, o := range s.Ops {
			if !writeLabel(s, o) || o.Events <= 0 {
				continue
			}
			sm := sums[o.Label]
			if sm == nil {
				sm = &sum{stmtsOnly: true}
				sums[o.Label] = sm
				labels = append(labels, o.Label)
			}
			sm.rows += o.Rows
			sm.events += o.Events
			sm.stmtsOnly = sm.stmtsOnly && o.Events == o.Statements
			sm.runs++
		}
	})

	var out []Note
	for _, l := range labels {
		sm := sums[l]
		if 2*sm.rows >= sm.events {
			continue
		}
		share := 100 * float64(sm.events-sm.rows) / float64(sm.events)
		noun, ops := statementNoun(l), "statements"
		if !sm.stmtsOnly {
			noun, ops = noun+" transactions", "transactions"
		}
		over := ""
		if sm.runs > 1 {
			over = fmt.Sprintf(" over %d runs", sm.runs)
		}
		out = append(out, Note{Kind: NoteNoOpWrites, Steps: []string{step}, Label: l, SharePct: share,
			Text: fmt.Sprintf("%s: at least %s of the %s (label %s) affected no row (%s rows for %s %s%s); its rate is mostly no-op statements",
				step, FormatPct(share), noun, l, thousands(sm.rows), thousands(sm.events), ops, over)})
	}
	return out
}

// writeLabel says whether a label's operations are writes whose rows tell whether they
// did anything: the delete and update roles, and statement-counted labels of a step that
// writes (sysbench's write tests, whose role is "query") or named as a write.
func writeLabel(s StepReport, o Op) bool {
	switch o.Role {
	case "delete", "update":
		return true
	case "read", "shape", "cleanup", "index":
		return false
	}
	if o.Unit != metrics.UnitOps || o.Rows >= o.Events {
		return false
	}
	name := strings.ToLower(o.Label)
	return s.Kind == "write" || o.Role == "write" ||
		strings.Contains(name, "delete") || strings.Contains(name, "update") || strings.Contains(name, "insert")
}

// statementNoun names a write label's statements: "DELETEs", "UPDATEs", "INSERTs", else
// "operations".
func statementNoun(label string) string {
	name := strings.ToLower(label)
	for _, w := range []string{"delete", "update", "insert"} {
		if strings.Contains(name, w) {
			return strings.ToUpper(w) + "s"
		}
	}
	return "operations"
}

// thousands prints n with commas between thousands: 86662 → "86,662".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// duet says whether some compared run is of the duet design (params design = "duet").
func (c Comparison) duet() bool {
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			if paramString(r.Params, store.ParamDesign) == store.DesignDuet {
				return true
			}
		}
	}
	return false
}

// distanceNote says, when the configs ran on clusters (or one server and a cluster) whose
// nodes were apart by different delays, what each was and why that changes every commit.
func (c Comparison) distanceNote() (Note, bool) {
	var parts []string
	seen := map[string]bool{}
	for _, g := range c.Groups {
		d := "one server"
		for _, r := range g.Runs {
			if r.Env["cluster"] != "" {
				d = "cluster, no delay added"
				if v := r.Env["node_latency"]; v != "" && !strings.HasPrefix(v, "0 ") {
					d = "cluster, " + strings.SplitN(v, " on every", 2)[0] + " between nodes"
				}
			}
		}
		seen[d] = true
		parts = append(parts, g.Name+": "+d)
	}
	if len(seen) < 2 {
		return Note{}, false
	}
	return Note{Kind: NoteDistance, Text: "distance: " + strings.Join(parts, "; ") +
		". A synchronous cluster's commit returns once the other nodes have the transaction (a PostgreSQL standby's write, flush or apply; a Galera write set delivered to every node), " +
		"so each commit waits for at least one round trip between the nodes: commit latency rises by the added round trip, and a writer that commits one transaction at a time slows down accordingly (docs/clusters.md)"}, true
}
