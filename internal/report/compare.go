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
	// Unit of the value (for formatting): "rows/s", "q/s", "µs", "s", "GiB", "ratio", "",
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
	// ID is stable ("throughput", "relative", "geomean", "by_group", "background", "hw",
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
	case "relative", "geomean":
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
		if h := r.Env["hostname"]; h != "" && !slices.Contains(hosts, h) {
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

func (c Comparison) throughputTable() Table {
	t := Table{ID: "throughput", Title: "Throughput (absolute)", HeadColumns: []string{"config"}, Columns: c.Steps,
		Legend: []string{"the step's primary op per second: rows/s where it counts rows (inserted, indexed, scanned), queries/s (statements, BEGIN and COMMIT included) where it counts statements",
			"repeated runs: median [min–max] (n runs); ! marks a spread over 5% of the median (noisy)"}}
	t.Legend = appendNonEmpty(t.Legend, c.oneOpLegend("shown as the step's duration in seconds (lower is better)"))
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, step := range c.Steps {
			get, unit, _ := c.StepFigure(step)
			row.Cells = append(row.Cells, cellOf(values(g, get), unit))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (c Comparison) relativeTable() Table {
	base := c.Groups[c.Base]
	t := Table{ID: "relative", Title: fmt.Sprintf("Throughput relative to %s", base.Name),
		HeadColumns: []string{"config"}, Columns: c.Steps, Legend: c.ratioLegend("higher is better", true)}
	t.Legend = appendNonEmpty(t.Legend, c.oneOpLegend("shown as the ratio of its duration (lower is better), left out of the geomeans"))
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, step := range c.Steps {
			get, _, higherBetter := c.StepFigure(step)
			row.Cells = append(row.Cells, relCell(base, g, gi == c.Base, get, c.ratioOptions(step), higherBetter))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ratioLegend explains a relative table's cells: what the number and the interval are,
// and that the marks come from the interval alone; direction says which way is better.
// The relative table has it in full, the others refer to it.
func (c Comparison) ratioLegend(direction string, full bool) []string {
	th := 100 * stats.DefaultThreshold
	conf := 100 * stats.DefaultConfidence
	if !full {
		return []string{fmt.Sprintf("ratio to the base (%s) [the %.0f%% interval of the ratio], marked as in the relative table: only from the interval (threshold ±%.0f%%)",
			direction, conf, th)}
	}
	return []string{
		fmt.Sprintf("ratio to the base (%s): the Hodges–Lehmann estimate; [lo–hi] the %.0f%% interval of the ratio, paired by block when the runs were interleaved (same sweep; a block's slices averaged), else over all runs of both configs",
			direction, conf),
		fmt.Sprintf("marked only from the interval, threshold ±%.0f%%: ▲ better (green) / ▼ worse (red): it excludes 1 and the ratio is beyond ±%.0f%%; = the same (grey): it lies within ±%.0f%%; no mark: too few trials for an interval (%d per config, or %d interleaved blocks)",
			th, th, th, c.NeedN, c.NeedPairs),
		"? unstable: the trials' noise at this n exceeds the threshold, the change cannot be told from noise; more trials or the interleaved design",
	}
}

// stepRatios are g's ratios to the base over steps, one-op steps left out (their
// duration says nothing of the per-op speed the geomean sums up).
func (c Comparison) stepRatios(g GroupReport, steps []string) []stats.Ratio {
	base := c.Groups[c.Base]
	var out []stats.Ratio
	for _, step := range steps {
		if c.oneOps[step] {
			continue
		}
		if r, ok := figureRatio(base, g, throughputOf(step), c.ratioOptions(step)); ok && r.Estimate > 0 {
			out = append(out, r)
		}
	}
	return out
}

// geoCell is the geometric mean of a group's step ratios, with its interval and verdict
// (stats.GeoMeanRatio); the base's row is 1 where it ran a step.
func (c Comparison) geoCell(gi int, steps []string) Cell {
	if gi == c.Base {
		var any []float64
		for _, step := range steps {
			if !c.oneOps[step] && len(values(c.Groups[c.Base], throughputOf(step))) > 0 {
				any = append(any, 1)
			}
		}
		return baseCell(any)
	}
	rs := c.stepRatios(c.Groups[gi], steps)
	if len(rs) == 0 {
		return Cell{Unit: "ratio"}
	}
	cell := ratioCell(stats.GeoMeanRatio(rs, stats.RatioOptions{}), true)
	cell.N = len(rs)
	if cell.Rel != nil {
		cell.Rel.Steps = len(rs)
	}
	return cell
}

func (c Comparison) geomeanTable() Table {
	base := c.Groups[c.Base]
	t := Table{ID: "geomean", Title: fmt.Sprintf("Geometric mean of relative throughput vs %s", base.Name),
		HeadColumns: []string{"config"},
		Legend: []string{"over the steps of each group (as the workload declares them) that both configs ran, and over all steps; one-op steps are left out",
			fmt.Sprintf("the geometric mean of the steps' ratios [its %.0f%% interval, from the steps' intervals taken as independent], marked as in the relative table: only from this interval",
				100*stats.DefaultConfidence)}}
	for _, sg := range c.StepGroups {
		t.Columns = append(t.Columns, sg.Title)
	}
	t.Columns = append(t.Columns, "all")
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, sg := range c.StepGroups {
			row.Cells = append(row.Cells, c.geoCell(gi, sg.Steps))
		}
		row.Cells = append(row.Cells, c.geoCell(gi, c.Steps))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// byGroupTable is the relative throughput of every step, a row each, under its group in
// the workload's order, with the group's geometric mean after its steps: the reference's
// sysbench summary (tests as rows, configs as columns), which stays readable when a
// workload has dozens of steps. Steps in no group are left out (cleanups, warm-ups).
func (c Comparison) byGroupTable() Table {
	base := c.Groups[c.Base]
	t := Table{ID: "by_group", Title: fmt.Sprintf("Throughput relative to %s, by step group", base.Name),
		HeadColumns: []string{"group", "step"}, Legend: c.ratioLegend("higher is better", false)}
	t.Legend = appendNonEmpty(t.Legend, "geomean: over the group's steps, one-op steps left out; its interval from the steps' intervals",
		c.oneOpLegend("shown as the ratio of its duration (lower is better)"))
	for _, g := range c.Groups {
		t.Columns = append(t.Columns, g.Name)
	}
	for _, sg := range c.StepGroups {
		if len(sg.Steps) == 0 {
			continue
		}
		for _, step := range sg.Steps {
			row := Row{Head: []string{sg.Title, step}}
			get, _, higherBetter := c.StepFigure(step)
			for gi, g := range c.Groups {
				row.Cells = append(row.Cells, relCell(base, g, gi == c.Base, get, c.ratioOptions(step), higherBetter))
			}
			t.Rows = append(t.Rows, row)
		}
		geo := Row{Head: []string{sg.Title, "geomean"}}
		for gi := range c.Groups {
			geo.Cells = append(geo.Cells, c.geoCell(gi, sg.Steps))
		}
		t.Rows = append(t.Rows, geo)
	}
	return t
}

// EachStep calls fn with every run's step of that name (that ran), config by config.
func (c Comparison) EachStep(step string, fn func(StepReport)) {
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			if s, ok := r.Step(step); ok {
				fn(s)
			}
		}
	}
}

// BackgroundColumns are the (step, role) pairs of the background writers, in step order:
// the columns of the background table.
func (c Comparison) BackgroundColumns() [][2]string {
	var cols [][2]string
	for _, step := range c.Steps {
		var roles []string
		c.EachStep(step, func(s StepReport) {
			for _, b := range s.Background {
				if !slices.Contains(roles, bgName(b)) {
					roles = append(roles, bgName(b))
				}
			}
		})

		for _, role := range roles {
			cols = append(cols, [2]string{step, role})
		}
	}
	return cols
}

func bgName(b Background) string {
	if b.Role != "" {
		return b.Role
	}
	return b.Label
}

// BackgroundOf is the run's background writer of that role (or label) in a step.
func (r RunReport) BackgroundOf(step, role string) (Background, bool) {
	s, ok := r.Step(step)
	if !ok {
		return Background{}, false
	}
	for _, b := range s.Background {
		if bgName(b) == role {
			return b, true
		}
	}
	return Background{}, false
}

func (c Comparison) backgroundTable() Table {
	cols := c.BackgroundColumns()
	t := Table{ID: "background", Title: "Background writers: achieved rate (rows/s)", HeadColumns: []string{"config"},
		Legend: []string{fmt.Sprintf("the SLA is met at %.0f%% of the target; below it the cell is marked (sla-miss)", 100*SLAFraction)}}
	for _, col := range cols {
		t.Columns = append(t.Columns, col[0]+" "+col[1])
	}
	if len(cols) == 0 {
		return t
	}
	target := Row{Head: []string{"target"}, Target: true}
	for _, col := range cols {
		var tg []float64
		for _, g := range c.Groups {
			tg = append(tg, values(g, func(r RunReport) (float64, bool) {
				b, ok := r.BackgroundOf(col[0], col[1])
				return b.TargetPerSec, ok
			})...)
		}
		cell := cellOf(tg, "rows/s")
		cell.Class = ClassTarget
		target.Cells = append(target.Cells, cell)
	}
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, col := range cols {
			var achieved []float64
			miss := false
			for _, r := range g.Runs {
				if b, ok := r.BackgroundOf(col[0], col[1]); ok {
					achieved = append(achieved, b.AchievedPerSec)
					miss = miss || b.SLA != SLAOK
				}
			}
			cell := cellOf(achieved, "rows/s")
			if miss {
				cell.Class = ClassSLAMiss
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Rows = append(t.Rows, target)
	return t
}

// hwMetrics are the HW-efficiency metrics compared (maxop_s is in the latency table's spirit
// but kept here too), with the CPU seconds rows of the one-op steps after the per-op CPU.
func hwMetrics() []string {
	return []string{metrics.MetricCPUPerOp, metrics.MetricServerCPUPerOp, metrics.MetricClientCPUPerOp,
		rowCPUSec, rowServerCPUSec, rowClientCPUSec,
		metrics.MetricCSPerOp, metrics.MetricReadsPerOp, metrics.MetricReadKBPerOp, metrics.MetricWritesPerRow,
		metrics.MetricWriteKBPerRow, metrics.MetricDBGB, metrics.MetricRSSGB}
}

// Rows of the HW tables that one-op steps have instead of the per-op CPU: the CPU seconds
// of the step (machine, server, client).
const (
	rowCPUSec       = "cpu_s"
	rowServerCPUSec = "server_cpu_s"
	rowClientCPUSec = "client_cpu_s"
)

// PerOpMetric says whether a metric is a rate per op or per row, which a one-op step's
// single operation makes the whole step's figure: such a step has none.
func PerOpMetric(m string) bool {
	d, ok := metrics.DefOf(m)
	return ok && d.PerOpFigure()
}

// metricHigherBetter says whether a stored metric is better higher (metrics.Def).
func metricHigherBetter(m string) bool {
	d, _ := metrics.DefOf(m)
	return d.HigherBetter
}

// MetricsLegend is a legend's lines naming each metric with what it is (metrics.Def.Legend),
// a few to a line, the last pointing to the full definitions.
func MetricsLegend(defs []metrics.Def) []string {
	var lines []string
	line := ""
	for _, d := range defs {
		item := d.Name + ": " + d.Legend
		if line != "" && len(line)+len(item) > 110 {
			lines = append(lines, line+";")
			line = ""
		}
		if line != "" {
			line += "; "
		}
		line += item
	}
	return append(lines, line+" (docs/metrics.md)")
}

func metricOf(step, metric string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		v, ok := s.HW.Metrics[metric]
		return v, ok
	}
}

// cpuSecondsOf is a step's CPU seconds: the machine's (busy; not for a remote server),
// the server's (when seen, not embedded) or dbperf's own.
func cpuSecondsOf(step, row string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		hw := s.HW.HW
		switch row {
		case rowCPUSec:
			if hw != nil && !hw.Remote {
				return hw.CPU.BusySec(), true
			}
		case rowServerCPUSec:
			if hw != nil && hw.Server.Known && !hw.Embedded {
				return hw.Server.CPUSec, true
			}
		case rowClientCPUSec:
			if hw != nil || s.ClientCPUSec > 0 {
				return s.ClientCPUSec, true
			}
		}
		return 0, false
	}
}

// figureOf is what a metric table shows for a metric and step: the stored metric, except
// that a one-op step has no per-op figures and has its CPU seconds instead.
func (c Comparison) figureOf(step, m string) func(RunReport) (float64, bool) {
	none := func(RunReport) (float64, bool) { return 0, false }
	switch {
	case m == rowCPUSec || m == rowServerCPUSec || m == rowClientCPUSec:
		if c.oneOps[step] {
			return cpuSecondsOf(step, m)
		}
		return none
	case c.oneOps[step] && PerOpMetric(m):
		return none
	}
	return metricOf(step, m)
}

// metricUnit is a metric's unit (metrics.Def.Unit); the CPU seconds rows of one-op steps
// are seconds.
func metricUnit(m string) string {
	switch m {
	case rowCPUSec, rowServerCPUSec, rowClientCPUSec:
		return "s"
	}
	d, _ := metrics.DefOf(m)
	return d.Unit
}

func (c Comparison) hwTable(relative bool) Table {
	base := c.Groups[c.Base]
	t := Table{ID: "hw", Title: "HW efficiency (absolute)", HeadColumns: []string{"metric", "config"}, Columns: c.Steps,
		Legend: MetricsLegend(metrics.HWDefs())}
	if relative {
		t.ID, t.Title = "hw_relative", fmt.Sprintf("HW efficiency relative to %s", base.Name)
		t.Legend = c.ratioLegend("every HW figure: lower is better", false)
	}
	t.Legend = appendNonEmpty(t.Legend, c.oneOpLegend("no per-op rates; cpu_s, server_cpu_s, client_cpu_s are its CPU seconds (machine, server, dbperf)"))
	t.Rows = c.metricRows(hwMetrics(), relative, metricUnit, metricHigherBetter)
	return t
}

// metricRows are a metric table's rows: per metric, a row per config with the metric's
// median per step (unit gives its unit), or relative to the base's (higherBetter says
// which way is better). A metric no run measured (e.g. server_cpupq on SQLite) is left out.
func (c Comparison) metricRows(names []string, relative bool, unit func(string) string, higherBetter func(string) bool) []Row {
	base := c.Groups[c.Base]
	var out []Row
	for _, m := range names {
		any := false
		var rows []Row
		for gi, g := range c.Groups {
			row := Row{Head: []string{m, g.Name}, Base: gi == c.Base}
			for _, step := range c.Steps {
				get := c.figureOf(step, m)
				var cell Cell
				if relative {
					cell = relCell(base, g, gi == c.Base, get, c.metricRatioOptions(step, m), higherBetter(m))
				} else {
					cell = cellOf(values(g, get), unit(m))
				}
				any = any || cell.Present
				row.Cells = append(row.Cells, cell)
			}
			rows = append(rows, row)
		}
		if any {
			out = append(out, rows...)
		}
	}
	return out
}

// kvTable is the key-value engines' metrics per step (db_bench's report.tsv figures,
// reference §4.3), absolute or relative to the base; empty for SQL runs.
func (c Comparison) kvTable(relative bool) Table {
	base := c.Groups[c.Base]
	t := Table{ID: "kv", Title: "Key-value engine (absolute)", HeadColumns: []string{"metric", "config"}, Columns: c.Steps,
		Legend: MetricsLegend(metrics.KVDefs())}
	if relative {
		t.ID, t.Title = "kv_relative", fmt.Sprintf("Key-value engine relative to %s", base.Name)
		t.Legend = c.ratioLegend("mb_sec: higher is better, the others lower", false)
	}
	t.Legend = appendNonEmpty(t.Legend, c.oneOpLegend("no mb_sec (a rate per op)"))
	t.Rows = c.metricRows(metrics.KVMetricNames(), relative, metricUnit, metricHigherBetter)
	return t
}

// shapeTable is the LSM tree after each step: files (and MiB) per level, the memtables'
// entries and the immutable memtables, per config (medians of its runs).
func (c Comparison) shapeTable() Table {
	t := Table{ID: "lsm_shape", Title: "LSM tree shape after each step", HeadColumns: []string{"level", "config"}, Columns: c.Steps,
		Legend: []string{"files per level at the end of the step (the shape before it is stored too: shape.before.* in JSON); mem_entries: entries in the memtables, imm: immutable memtables"}}
	type line struct{ head, metric, unit string }
	var lines []line
	for lvl := 0; lvl < 16; lvl++ {
		lines = append(lines, line{fmt.Sprintf("L%d files", lvl), metrics.ShapeLevelFiles("after", lvl), "count"},
			line{fmt.Sprintf("L%d MiB", lvl), metrics.ShapeLevelBytes("after", lvl), "MiB"})
	}
	lines = append(lines, line{"mem_entries", metrics.ShapeMemtableEntries("after"), "count"}, line{"imm", metrics.ShapeImmutable("after"), "count"})
	for _, l := range lines {
		nonZero := false
		var rows []Row
		for gi, g := range c.Groups {
			row := Row{Head: []string{l.head, g.Name}, Base: gi == c.Base}
			for _, step := range c.Steps {
				get := metricOf(step, l.metric)
				vals := values(g, get)
				if l.unit == "MiB" {
					for i := range vals {
						vals[i] /= 1 << 20
					}
				}
				for _, v := range vals {
					nonZero = nonZero || v != 0 || l.metric == metrics.ShapeMemtableEntries("after")
				}
				unit := l.unit
				if unit == "MiB" {
					unit = ""
				}
				row.Cells = append(row.Cells, cellOf(vals, unit))
			}
			rows = append(rows, row)
		}
		if nonZero { // empty levels are left out
			t.Rows = append(t.Rows, rows...)
		}
	}
	return t
}

// connCPUTable is the server CPU of each connection role per step: per operation of the
// role's own work (RoleCPU), or its seconds over the step where it has no per-op figure
// (connPerOpUnit), with the seconds behind every cell (Cell.CPUSec). Absolute only: it
// has no relative cells, so no marks but the noisy one, on the figure shown.
func (c Comparison) connCPUTable() Table {
	t := Table{ID: "conn_cpu", Title: "Server CPU per connection role (µs per operation of the role's own work)",
		HeadColumns: []string{"role", "config"}, Columns: c.Steps, Legend: ConnCPULegend()}
	var roles []string
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			for _, s := range r.Steps {
				for _, cc := range s.HW.ConnCPU {
					if !slices.Contains(roles, cc.Role) {
						roles = append(roles, cc.Role)
					}
				}
			}
		}
	}
	for _, role := range roles {
		units := make([]string, len(c.Steps)) // the figure every config shows per step
		for i, step := range c.Steps {
			units[i] = c.connPerOpUnit(step, role)
		}
		for gi, g := range c.Groups {
			row := Row{Head: []string{role, g.Name}, Base: gi == c.Base}
			for i, step := range c.Steps {
				perOp := units[i] != ConnCPUSecUnit
				cell := cellOf(values(g, roleCPUFigure(step, role, perOp)), units[i])
				cell.ShowUnit = true
				if secs := values(g, roleCPUFigure(step, role, false)); len(secs) > 0 {
					sum := stats.Summarize(secs)
					cell.CPUSec = &sum
				}
				if ops := values(g, roleOpsOf(step, role)); perOp && len(ops) > 0 {
					sum := stats.Summarize(ops)
					cell.Ops = &sum
				}
				row.Cells = append(row.Cells, cell)
			}
			if anyPresent(row.Cells) {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t
}

// connPerOpUnit is the unit of what every config shows for a role in a step: its per-op
// unit when the step is not one-op and every run that measured the role's CPU in it has
// a per-op figure in that same unit, else ConnCPUSecUnit (its seconds), so that the
// configs' cells are one figure.
func (c Comparison) connPerOpUnit(step, role string) string {
	if c.oneOps[step] {
		return ConnCPUSecUnit
	}
	unit := ""
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			s, ok := r.Step(step)
			if !ok {
				continue
			}
			rc, ok := s.RoleCPU(role)
			if !ok {
				continue
			}
			if _, ok := rc.USPerOp(); !ok || (unit != "" && rc.PerOpUnit() != unit) {
				return ConnCPUSecUnit
			}
			unit = rc.PerOpUnit()
		}
	}
	if unit == "" {
		return ConnCPUSecUnit
	}
	return unit
}

// roleCPUFigure is a run's CPU of a role's connections in a step: per op of the role's
// own work (perOp), else its seconds over the step.
func roleCPUFigure(step, role string, perOp bool) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		rc, ok := s.RoleCPU(role)
		if !ok {
			return 0, false
		}
		if perOp {
			return rc.USPerOp()
		}
		return rc.CPUSec, true
	}
}

// roleOpsOf is a run's count of a role's own operations in a step (when it has any).
func roleOpsOf(step, role string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		rc, ok := s.RoleCPU(role)
		if !ok || rc.Ops <= 0 {
			return 0, false
		}
		return float64(rc.Ops), true
	}
}

// anyPresent says whether a row has a measured cell (rows of configs that did not run a
// step or role are left out of the long tables).
func anyPresent(cells []Cell) bool {
	for _, c := range cells {
		if c.Present {
			return true
		}
	}
	return false
}

// latencyColumns are the percentiles of the latency table.
func latencyColumns() []string { return []string{"p50", "p99", "p99.9", "p99.99", "max"} }

func (c Comparison) latencyTable() Table {
	t := Table{ID: "latency", Title: "Latency (service time)", HeadColumns: []string{"step", "op", "config"},
		Columns: latencyColumns(),
		Legend:  []string{"per op label; rate-limited writers' response times (from the scheduled start) are in each run's report"}}
	t.Legend = appendNonEmpty(t.Legend, c.oneOpLegend("left out here (their percentiles would all be that op's time)"))
	for _, step := range c.Steps {
		if c.oneOps[step] {
			continue // one op: its percentiles would all be that op's time
		}
		var labels []string
		c.EachStep(step, func(s StepReport) {
			for _, o := range s.Ops {
				if !slices.Contains(labels, o.Label) && o.Statements > 0 {
					labels = append(labels, o.Label)
				}
			}
		})

		for _, label := range labels {
			for gi, g := range c.Groups {
				row := Row{Head: []string{step, label, g.Name}, Base: gi == c.Base}
				for _, pct := range latencyColumns() {
					row.Cells = append(row.Cells, cellOf(values(g, func(r RunReport) (float64, bool) {
						s, ok := r.Step(step)
						if !ok {
							return 0, false
						}
						for _, o := range s.Ops {
							if o.Label == label && o.Statements > 0 {
								v := pick(o.Service, pct)
								return float64(v), v > 0 || pct != "p99.99" // not kept before schema 6
							}
						}
						return 0, false
					}), "µs"))
				}
				if anyPresent(row.Cells) {
					t.Rows = append(t.Rows, row)
				}
			}
		}
	}
	return t
}

func pick(l metrics.Latency, pct string) int64 {
	switch pct {
	case "p50":
		return l.P50
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	case "p99.99":
		return l.P9999
	}
	return l.Max
}
