package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// Group is one configuration in a comparison: the runs of one label (its repeats) or a
// single run, as named on the command line.
type Group struct {
	// Name is how the user named it: a label, or "run N" for a run id.
	Name   string
	RunIDs []int64
}

// Class tells a renderer how to mark a cell.
type Class string

// Cell classes.
const (
	// ClassNone: no mark. A relative cell without a verdict (too few trials) has it.
	ClassNone Class = ""
	// ClassBetter, ClassWorse: the ratio's verdict is higher or lower (stats.VerdictOf:
	// the interval excludes 1 and the estimate is beyond the threshold), better or worse
	// as the figure's direction says.
	ClassBetter Class = "better"
	ClassWorse  Class = "worse"
	// ClassSame: the ratio's interval lies within the threshold (stats.VerdictSame).
	ClassSame Class = "same"
	// ClassUnstable: the interval is wider than the threshold allows either way
	// (stats.VerdictUnstable): the change cannot be told from the trials' noise.
	ClassUnstable Class = "unstable"
	ClassSLAMiss  Class = "sla-miss" // a background writer below 95% of its target
	ClassTarget   Class = "target"   // the target row of the background table
)

// classOf is a relative cell's class: from the ratio's verdict only, better or worse as
// higherBetter says.
func classOf(v stats.Verdict, higherBetter bool) Class {
	switch v {
	case stats.VerdictHigher:
		if higherBetter {
			return ClassBetter
		}
		return ClassWorse
	case stats.VerdictLower:
		if higherBetter {
			return ClassWorse
		}
		return ClassBetter
	case stats.VerdictSame:
		return ClassSame
	case stats.VerdictUnstable:
		return ClassUnstable
	}
	return ClassNone
}

// Cell is one figure of a comparison table over a group's runs.
type Cell struct {
	// Present: the figure was measured in at least one of the group's runs.
	Present bool
	// Summary is over the group's runs: median, min, max, N, spread, Noisy.
	stats.Summary
	// Rel is set in relative tables: the group against the base.
	Rel *Rel
	// Class marks the cell (colour in text and HTML, a marker in Markdown).
	Class Class
	// Unit of the value (for formatting): "rows/s", "q/s", "/min" (UnitPerMinute), "µs", "s", "GiB", "ratio", "",
	// and the conn_cpu table's "µs/row", "µs/query", "µs/op".
	Unit string
	// ShowUnit: renderers print Unit after the figure, in a table whose cells differ in
	// unit (conn_cpu).
	ShowUnit bool
	// CPUSec is, in the conn_cpu table, the role's CPU seconds over the step behind the
	// cell, over the group's runs, whatever figure the cell shows; Ops the role's own
	// operations behind a per-op cell (nil when the cell is in seconds). Nil elsewhere.
	// JSON keeps them beside the cell's value.
	CPUSec, Ops *stats.Summary
}

// Rel is a group's figure against the base group's: the ratio (candidate ÷ base) with its
// interval and verdict, paired by block when the runs were interleaved (pairs.go).
type Rel struct {
	stats.Ratio
	// HigherBetter is the figure's direction: whether a higher ratio is better.
	HigherBetter bool
	// Steps is, for a geometric mean, how many steps' ratios it combines (0 otherwise).
	Steps int
}

// Class is the relative cell's class: from the ratio's verdict alone, better or worse as
// HigherBetter says.
func (r Rel) Class() Class { return classOf(r.Verdict, r.HigherBetter) }

// Significant says whether the ratio's verdict is a change (higher or lower).
func (r Rel) Significant() bool {
	return r.Verdict == stats.VerdictHigher || r.Verdict == stats.VerdictLower
}

// Row is one line of a table: leading header cells then one Cell per column.
type Row struct {
	Head  []string
	Cells []Cell
	// Base marks the base group's row; Target the target row of the background table.
	Base, Target bool
}

// Shown is how a renderer marks a cell of the row (colour, marker, HTML class): as its
// Class, except a blank cell and the base's row (what the others are relative to, its
// SLA misses included), which are not marked.
func (r Row) Shown(c Cell) Class {
	if !c.Present || r.Base {
		return ClassNone
	}
	return c.Class
}

// Table is one comparison table.
type Table struct {
	// ID is stable ("throughput", "per_minute", "relative", "geomean", "by_group", "background", "hw",
	// "hw_relative", "conn_cpu", "latency"): CSV and JSON rows carry it.
	ID    string
	Title string
	// HeadColumns name the leading header cells of every row; Columns the cells.
	HeadColumns []string
	Columns     []string
	Rows        []Row
	// Legend explains units and markers.
	Legend []string
}

// MDELines say, under a relative table, the smallest change its trials can detect (80%
// power, stats.Ratio.MDEPct): per config and column for the tables whose rows are configs,
// as a range for the metric tables (each cell's is in JSON, CSV and the HTML tooltips).
func (t Table) MDELines() []string {
	const lead = "smallest change these trials can detect (80% power)"
	switch t.ID {
	case "relative", "geomean", "per_minute":
		var out []string
		for _, r := range t.Rows {
			if r.Base {
				continue
			}
			var parts []string
			for i, c := range r.Cells {
				if c.Rel != nil && c.Rel.HasMDE {
					parts = append(parts, fmt.Sprintf("%s %s", t.Columns[i], FormatPct(c.Rel.MDEPct)))
				}
			}
			if len(parts) > 0 {
				out = append(out, fmt.Sprintf("%s, %s: %s", lead, strings.Join(r.Head, " "), strings.Join(parts, ", ")))
			}
		}
		return out
	case "by_group":
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.Rel != nil && c.Rel.HasMDE {
					return []string{lead + ": per step under the relative table, per group under the geomean table"}
				}
			}
		}
	case "hw_relative", "kv_relative":
		lo, hi, any := math.Inf(1), math.Inf(-1), false
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.Rel != nil && c.Rel.HasMDE {
					lo, hi, any = math.Min(lo, c.Rel.MDEPct), math.Max(hi, c.Rel.MDEPct), true
				}
			}
		}
		if any {
			span := FormatPct(lo)
			if FormatPct(hi) != span {
				span = strings.TrimSuffix(FormatPct(lo), "%") + "–" + FormatPct(hi)
			}
			return []string{fmt.Sprintf("%s: %s across the cells (each cell's: mde_pct in JSON and CSV, the HTML page's tooltips)", lead, span)}
		}
	}
	return nil
}

// Comparison is stored runs compared group by group.
type Comparison struct {
	Groups []GroupReport
	// Base is the index in Groups of the base.
	Base int
	// Steps is the union of the groups' step names, in run order.
	Steps []string
	// StepGroups are the step groups the runs' workloads declared (stored with each run),
	// in their order, each with its steps among Steps.
	StepGroups []StepGroupSteps
	Tables     []Table
	// NeedN is how many trials per config a verdict needs when the runs are not paired
	// (the least for which stats.RatioOf has an interval at its default confidence);
	// NeedPairs is how many trial pairs it needs when they are (stats.PairedRatio).
	// TooFew says some relative cell had fewer: it shows its ratio without a verdict.
	NeedN     int
	NeedPairs int
	TooFew    bool
	// Notes say what the tables cannot: steps whose operations mostly did nothing, steps
	// measured on a busy machine, one-op steps, too few trials for a verdict (notes.go).
	Notes []Note

	// oneOps are the steps of one operation per client (oneOp): shown as their duration
	// and CPU seconds, left out of the geomeans and the latency table.
	oneOps map[string]bool
	// widen is, per step, how much its ratios' intervals are widened because some run was
	// measured on a busy machine (RatioOptions.Widen; noiseWiden).
	widen map[string]float64
}

// StepGroupSteps is a workload's step group and the compared steps in it.
type StepGroupSteps struct {
	store.StepGroup
	Steps []string
}

// stepGroups collects the step groups stored with the runs, in the order the runs declare
// them, and puts each step in the group its runs stored for it. Runs stored before groups
// were (schema 3) have none: their steps are then only in the "all" geomean.
func stepGroups(groups []GroupReport, steps []string) []StepGroupSteps {
	var out []StepGroupSteps
	index := map[string]int{}
	stepGroup := map[string]string{}
	for _, g := range groups {
		for _, r := range g.Runs {
			for _, sg := range r.StepGroups {
				if _, ok := index[sg.Name]; !ok {
					index[sg.Name] = len(out)
					out = append(out, StepGroupSteps{StepGroup: sg})
				}
			}
			for _, s := range r.Steps {
				if _, ok := stepGroup[s.Name]; !ok && s.Group != "" {
					stepGroup[s.Name] = s.Group
				}
			}
		}
	}
	for _, s := range steps {
		if i, ok := index[stepGroup[s]]; ok {
			out[i].Steps = append(out[i].Steps, s)
		}
	}
	return out
}

// GroupReport is a group with its runs' reports.
type GroupReport struct {
	Group
	Runs []RunReport
}

// Describe is a one-line description of the group: engines and versions, workload, runs.
func (g GroupReport) Describe() string {
	var engines, workloads []string
	for _, r := range g.Runs {
		e := r.Engine
		if r.EngineVersion != "" {
			e += " " + r.EngineVersion
		}
		if !slices.Contains(engines, e) {
			engines = append(engines, e)
		}
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	ids := make([]string, len(g.RunIDs))
	for i, id := range g.RunIDs {
		ids[i] = fmt.Sprint(id)
	}
	return fmt.Sprintf("%s on %s, %s %s%s", strings.Join(workloads, "+"), strings.Join(engines, ", "),
		Plural(len(g.RunIDs), "run"), strings.Join(ids, " "), g.fleet())
}

// fleet says which host class and hosts ran the group's runs when agents took them from
// the queue (dbperf agent): "" for runs started by hand.
func (g GroupReport) fleet() string {
	var classes, hosts []string
	for _, r := range g.Runs {
		if r.Env[store.EnvQueueJob] == "" {
			continue
		}
		c := r.Env[store.EnvAgentClass]
		if c == "" {
			c = "(none)"
		}
		if !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
		// The agent's own name for its host (--host), else the machine's hostname.
		h := r.Env[store.EnvAgentHost]
		if h == "" {
			h = r.Env["hostname"]
		}
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if len(classes) == 0 {
		return ""
	}
	s := ", by agents of class " + strings.Join(classes, ", ")
	if len(hosts) > 0 {
		s += " on " + strings.Join(hosts, ", ")
	}
	return s
}

// Compared is rep's comparison: rep.Comparison, or when it has none every run compared
// as its own config ("run N"), the first the base.
func (rep Report) Compared() Comparison {
	if rep.Comparison != nil {
		return *rep.Comparison
	}
	var groups []Group
	for _, r := range rep.Runs {
		groups = append(groups, Group{Name: fmt.Sprintf("run %d", r.ID), RunIDs: []int64{r.ID}})
	}
	return Compare(rep, groups, 0)
}

// Compare builds the comparison tables of rep's runs grouped as groups, against groups[base].
// Every run of every group must be in rep.
func Compare(rep Report, groups []Group, base int) Comparison {
	byID := make(map[int64]RunReport, len(rep.Runs))
	for _, r := range rep.Runs {
		byID[r.ID] = r
	}
	c := Comparison{Base: base, NeedN: needTrials(false), NeedPairs: needTrials(true),
		oneOps: map[string]bool{}, widen: map[string]float64{}}
	for _, g := range groups {
		gr := GroupReport{Group: g}
		for _, id := range g.RunIDs {
			if r, ok := byID[id]; ok {
				gr.Runs = append(gr.Runs, r)
			}
		}
		c.Groups = append(c.Groups, gr)
		for _, r := range gr.Runs {
			for _, s := range r.Steps {
				if !slices.Contains(c.Steps, s.Name) {
					c.Steps = append(c.Steps, s.Name)
				}
				if s.Status != metrics.StatusSkipped && oneOp(r, s) {
					c.oneOps[s.Name] = true
				}
			}
		}
	}
	for _, step := range c.Steps {
		if w := c.noiseWiden(step); w > 0 {
			c.widen[step] = w
		}
	}
	c.StepGroups = stepGroups(c.Groups, c.Steps)
	c.Tables = []Table{c.throughputTable()}
	// Tests repeated at several thread counts (sysbench --threads 1,4): by thread count.
	c.Tables = append(c.Tables, c.ThreadTables()...)
	// The workload's own figures per minute (TPROC-C's NOPM and TPM), absolute and relative.
	if t, ok := c.perMinuteTable(); ok {
		c.Tables = append(c.Tables, t)
	}
	// One config (one run, or the repeats of one label) has nothing to be relative to:
	// its relative tables would be all 1.00.
	var variances []varianceRow
	if len(c.Groups) > 1 {
		c.Tables = append(c.Tables, c.relativeTable(), c.geomeanTable(), c.byGroupTable())
		if variances = c.variances(); len(variances) > 0 {
			c.Tables = append(c.Tables, varianceTable(variances))
		}
	}
	c.Tables = append(c.Tables, c.backgroundTable(), c.hwTable(false))
	if len(c.Groups) > 1 {
		c.Tables = append(c.Tables, c.hwTable(true))
	}
	if kv := c.kvTable(false); len(kv.Rows) > 0 {
		c.Tables = append(c.Tables, kv)
		if len(c.Groups) > 1 {
			c.Tables = append(c.Tables, c.kvTable(true))
		}
		c.Tables = append(c.Tables, c.shapeTable())
	}
	c.Tables = append(c.Tables, c.connCPUTable(), c.latencyTable())
	for _, t := range c.Tables {
		for _, r := range t.Rows {
			for _, cell := range r.Cells {
				if cell.Rel != nil && cell.Rel.Verdict == stats.VerdictNone {
					c.TooFew = true
				}
			}
		}
	}
	c.Notes = c.notes()
	if len(variances) > 0 {
		c.Notes = append(c.Notes, varianceNotes(variances, c.Groups[c.Base].Name)...)
	}
	return c
}

// needTrials is the least number of trials per config (paired: of pairs) for which the
// ratio has an interval, so a verdict, at the default confidence.
func needTrials(paired bool) int {
	for n := 2; n <= 50; n++ {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = float64(100+i), float64(200+i)
		}
		r := stats.RatioOf(a, b, stats.RatioOptions{})
		if paired {
			r = stats.PairedRatio(a, b, stats.RatioOptions{})
		}
		if r.HasCI {
			return n
		}
	}
	return 0
}

// IsOneOp says whether the comparison shows step as a one-op step (oneOp): its duration
// and CPU seconds instead of per-op figures.
func (c Comparison) IsOneOp(step string) bool { return c.oneOps[step] }

// Widen is how much the intervals of a step's ratios are widened because some run was
// measured on a busy machine (stats.RatioOptions.Widen; 0: not widened).
func (c Comparison) Widen(step string) float64 { return c.widen[step] }

// ratioOptions are the options of a step's throughput (or duration) ratios: the defaults,
// widened when the step was measured on a busy machine (noiseWiden).
func (c Comparison) ratioOptions(step string) stats.RatioOptions {
	return stats.RatioOptions{Widen: c.widen[step]}
}

// metricRatioOptions are the options of a step's metric ratios: widened like its
// throughput for the figures other work on the machine disturbs (CPU, context switches,
// rates and times), not for counts of bytes, rows or sizes.
func (c Comparison) metricRatioOptions(step, m string) stats.RatioOptions {
	if !timeMetric(m) {
		return stats.RatioOptions{}
	}
	return c.ratioOptions(step)
}

// timeMetric says whether a metric is a time, a CPU figure or a rate: what a busy machine
// disturbs.
func timeMetric(m string) bool {
	if d, ok := metrics.DefOf(m); ok {
		return d.Time
	}
	switch m {
	case MetricP99, rowCPUSec, rowServerCPUSec, rowClientCPUSec:
		return true
	}
	return false
}

// Step finds the run's step by name (only steps that ran: ok, failed or interrupted).
func (r RunReport) Step(name string) (StepReport, bool) {
	for _, s := range r.Steps {
		if s.Name == name && s.Status != metrics.StatusSkipped {
			return s, true
		}
	}
	return StepReport{}, false
}

// values collects one figure from each of a group's runs.
func values(g GroupReport, get func(RunReport) (float64, bool)) []float64 {
	var out []float64
	for _, r := range g.Runs {
		if v, ok := get(r); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

func cellOf(vs []float64, unit string) Cell {
	if len(vs) == 0 {
		return Cell{Unit: unit}
	}
	return Cell{Present: true, Summary: stats.Summarize(vs), Unit: unit}
}

// relCell is g's figure relative to the base's (figureRatio: paired by block when the runs
// were interleaved) at opt; higherBetter says which way is better. The base's own row is
// 1 with no verdict; a side without the figure leaves the cell blank.
func relCell(base, g GroupReport, isBase bool, get func(RunReport) (float64, bool), opt stats.RatioOptions, higherBetter bool) Cell {
	if isBase {
		return baseCell(values(base, get))
	}
	r, ok := figureRatio(base, g, get, opt)
	if !ok {
		return Cell{Unit: "ratio"}
	}
	return ratioCell(r, higherBetter)
}

// baseCell is the base's row of a relative table: 1 wherever the base has the figure.
func baseCell(vs []float64) Cell {
	if len(vs) == 0 {
		return Cell{Unit: "ratio"}
	}
	return Cell{Present: true, Summary: stats.Summary{N: len(vs), Median: 1, Min: 1, Max: 1}, Unit: "ratio"}
}

// ratioCell shows a ratio: its estimate, its interval as [Min–Max] when it has one, and a
// class from its verdict alone.
func ratioCell(r stats.Ratio, higherBetter bool) Cell {
	if !(r.Estimate > 0) {
		return Cell{Unit: "ratio"}
	}
	n := r.NB
	if r.Paired {
		n = r.Pairs
	}
	cell := Cell{Present: true, Unit: "ratio", Rel: &Rel{Ratio: r, HigherBetter: higherBetter},
		Summary: stats.Summary{N: n, Median: r.Estimate, Min: r.Estimate, Max: r.Estimate},
		Class:   classOf(r.Verdict, higherBetter)}
	if r.HasCI {
		cell.Min, cell.Max = r.Lo, r.Hi
		cell.Summary.Lo, cell.Summary.Hi, cell.Summary.HasCI = r.Lo, r.Hi, true
	}
	return cell
}

// throughputOf is a run's step throughput: the primary label's rate.
func throughputOf(step string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		p, ok := s.PrimaryOp()
		if !ok || p.Count == 0 {
			return 0, false
		}
		return p.PerSec, true
	}
}

// durationOf is a run's step duration in seconds (steps that finished ok).
func durationOf(step string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok || s.Status != metrics.StatusOK || !(s.Seconds > 0) {
			return 0, false
		}
		return s.Seconds, true
	}
}

// StepFigure is the figure the throughput tables show for a step: the primary op's rate
// (higher is better), or for a one-op step its duration in seconds (lower is better).
func (c Comparison) StepFigure(step string) (get func(RunReport) (float64, bool), unit string, higherBetter bool) {
	if c.oneOps[step] {
		return durationOf(step), "s", false
	}
	return throughputOf(step), c.throughputUnit(step), true
}

// throughputUnit is the unit of a step's throughput in any run that has it.
func (c Comparison) throughputUnit(step string) string {
	unit := ""
	c.EachStep(step, func(s StepReport) {
		if p, ok := s.PrimaryOp(); ok && unit == "" {
			unit = p.RateUnit()
		}
	})

	return unit
}

// OneOpSteps are the compared steps of one operation per client (IsOneOp), in step order.
func (c Comparison) OneOpSteps() []string {
	var out []string
	for _, s := range c.Steps {
		if c.oneOps[s] {
			out = append(out, s)
		}
	}
	return out
}

// oneOpLegend says how the one-op steps are shown in a table ("" when there are none).
func (c Comparison) oneOpLegend(how string) string {
	steps := c.OneOpSteps()
	if len(steps) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: one operation per client (a per-op figure would be the whole step's): %s", strings.Join(steps, ", "), how)
}

func appendNonEmpty(legend []string, lines ...string) []string {
	for _, l := range lines {
		if l != "" {
			legend = append(legend, l)
		}
	}
	return legend
}
