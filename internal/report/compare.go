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

// Relative-throughput colour bands (reference §2.3): below LowRatio is worse, above
// HighRatio better, in between the same.
const (
	LowRatio  = 0.95
	HighRatio = 1.05
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
	ClassNone    Class = ""
	ClassBetter  Class = "better"   // relative ≥ HighRatio (for a higher-is-better figure)
	ClassWorse   Class = "worse"    // relative ≤ LowRatio
	ClassSame    Class = "same"     // relative within the band
	ClassSLAMiss Class = "sla-miss" // a background writer below 95% of its target
	ClassTarget  Class = "target"   // the target row of the background table
)

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
	// Unit of the value (for formatting): "rows/s", "q/s", "µs", "s", "GiB", "ratio", "".
	Unit string
}

// Rel is a group's figure against the base group's.
type Rel struct {
	stats.Comparison
}

// Row is one line of a table: leading header cells then one Cell per column.
type Row struct {
	Head  []string
	Cells []Cell
	// Base marks the base group's row; Target the target row of the background table.
	Base, Target bool
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

// Comparison is stored runs compared group by group.
type Comparison struct {
	Groups []GroupReport
	// Base is the index in Groups of the base.
	Base int
	// Steps is the union of the groups' step names, in run order, without cleanup steps.
	Steps []string
	// StepGroups are the step groups the runs' workloads declared (stored with each run),
	// in their order, each with its steps among Steps.
	StepGroups []StepGroupSteps
	Tables     []Table
	// NeedN is how many runs per group a significant difference needs (Mann-Whitney U,
	// α = stats.DefaultAlpha); TooFew says some comparison had fewer.
	NeedN  int
	TooFew bool
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
	return fmt.Sprintf("%s on %s, %s %s", strings.Join(workloads, "+"), strings.Join(engines, ", "),
		plural(len(g.RunIDs), "run"), strings.Join(ids, " "))
}

// Compare builds the comparison tables of rep's runs grouped as groups, against groups[base].
// Every run of every group must be in rep.
func Compare(rep Report, groups []Group, base int) Comparison {
	byID := make(map[int64]RunReport, len(rep.Runs))
	for _, r := range rep.Runs {
		byID[r.ID] = r
	}
	c := Comparison{Base: base, NeedN: stats.MinSamplesForAlpha(stats.DefaultAlpha)}
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
				// A cleanup's one "op" is the whole wait: per-op figures of it mean nothing,
				// and its duration is set by --cleanup-wait; each run's report shows it.
				if s.Kind == "cleanup" {
					continue
				}
				if !slices.Contains(c.Steps, s.Name) {
					c.Steps = append(c.Steps, s.Name)
				}
			}
		}
	}
	c.StepGroups = stepGroups(c.Groups, c.Steps)
	c.Tables = []Table{c.throughputTable()}
	// One config (one run, or the repeats of one label) has nothing to be relative to:
	// its relative tables would be all 1.00.
	if len(c.Groups) > 1 {
		c.Tables = append(c.Tables, c.relativeTable(), c.geomeanTable(), c.byGroupTable())
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
				if cell.Rel != nil && cell.Rel.TooFew {
					c.TooFew = true
				}
			}
		}
	}
	return c
}

// stepOf finds a run's step by name (only steps that ran: ok, failed or interrupted).
func stepOf(r RunReport, name string) (StepReport, bool) {
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

// relCell compares a group's values with the base's; higherBetter says which way is good.
func relCell(base, vs []float64, higherBetter bool) Cell {
	if len(vs) == 0 || len(base) == 0 {
		return Cell{Unit: "ratio"}
	}
	cmp := stats.Compare(base, vs)
	if cmp.A.Median == 0 {
		return Cell{Unit: "ratio"}
	}
	cell := Cell{Present: true, Summary: stats.Summary{N: cmp.B.N, Median: cmp.Ratio,
		Min: cmp.B.Min / cmp.A.Median, Max: cmp.B.Max / cmp.A.Median, Noisy: cmp.B.Noisy, SpreadPct: cmp.B.SpreadPct},
		Rel: &Rel{Comparison: cmp}, Unit: "ratio", Class: ClassSame}
	switch {
	case cmp.Ratio < LowRatio:
		cell.Class = ClassWorse
	case cmp.Ratio > HighRatio:
		cell.Class = ClassBetter
	}
	if !higherBetter {
		switch cell.Class {
		case ClassWorse:
			cell.Class = ClassBetter
		case ClassBetter:
			cell.Class = ClassWorse
		}
	}
	return cell
}

// throughputOf is a run's step throughput: the primary label's rate.
func throughputOf(step string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := stepOf(r, step)
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

// throughputUnit is the unit of a step's throughput in any run that has it.
func (c Comparison) throughputUnit(step string) string {
	unit := ""
	c.eachStep(step, func(s StepReport) {
		if p, ok := s.PrimaryOp(); ok && unit == "" {
			unit = unitPerSec(p.LabelStats)
		}
	})
	return unit
}

func (c Comparison) throughputTable() Table {
	t := Table{ID: "throughput", Title: "Throughput (absolute)", HeadColumns: []string{"config"}, Columns: c.Steps,
		Legend: []string{"the step's primary op per second: rows/s where it counts rows (inserted, indexed, scanned), queries/s (statements, BEGIN and COMMIT included) where it counts statements",
			"repeated runs: median [min–max] (n runs); ! marks a spread over 5% of the median (noisy)"}}
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, step := range c.Steps {
			row.Cells = append(row.Cells, cellOf(values(g, throughputOf(step)), c.throughputUnit(step)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (c Comparison) relativeTable() Table {
	base := c.Groups[c.Base]
	t := Table{ID: "relative", Title: fmt.Sprintf("Throughput relative to %s", base.Name),
		HeadColumns: []string{"config"}, Columns: c.Steps,
		Legend: []string{fmt.Sprintf("median ÷ the base's median; worse below %.2f, better above %.2f", LowRatio, HighRatio),
			c.significanceLegend()}}
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, step := range c.Steps {
			get := throughputOf(step)
			row.Cells = append(row.Cells, relCell(values(base, get), values(g, get), true))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (c Comparison) significanceLegend() string {
	return fmt.Sprintf("~ not significant: Mann-Whitney U p ≥ %.2f, or fewer than %d runs per config (--repeat %d)",
		stats.DefaultAlpha, c.NeedN, c.NeedN)
}

func (c Comparison) geomeanTable() Table {
	base := c.Groups[c.Base]
	t := Table{ID: "geomean", Title: fmt.Sprintf("Geometric mean of relative throughput vs %s", base.Name),
		HeadColumns: []string{"config"},
		Legend:      []string{"over the steps of each group (as the workload declares them) that both configs ran, and over all steps; median ratios"}}
	for _, sg := range c.StepGroups {
		t.Columns = append(t.Columns, sg.Title)
	}
	t.Columns = append(t.Columns, "all")
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		ratios := func(steps []string) []float64 {
			var out []float64
			for _, step := range steps {
				get := throughputOf(step)
				if rc := relCell(values(base, get), values(g, get), true); rc.Present {
					out = append(out, rc.Median)
				}
			}
			return out
		}
		for _, sg := range c.StepGroups {
			row.Cells = append(row.Cells, geoCell(ratios(sg.Steps)))
		}
		row.Cells = append(row.Cells, geoCell(ratios(c.Steps)))
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
		HeadColumns: []string{"group", "step"},
		Legend: []string{fmt.Sprintf("median ÷ the base's median; worse below %.2f, better above %.2f; geomean: over the group's steps", LowRatio, HighRatio),
			c.significanceLegend()}}
	for _, g := range c.Groups {
		t.Columns = append(t.Columns, g.Name)
	}
	for _, sg := range c.StepGroups {
		if len(sg.Steps) == 0 {
			continue
		}
		ratios := make([][]float64, len(c.Groups))
		for _, step := range sg.Steps {
			row := Row{Head: []string{sg.Title, step}}
			get := throughputOf(step)
			for gi, g := range c.Groups {
				rc := relCell(values(base, get), values(g, get), true)
				if gi == c.Base && rc.Present {
					rc = geoCell([]float64{1}) // the base against itself: 1, no spread
				}
				if rc.Present {
					ratios[gi] = append(ratios[gi], rc.Median)
				}
				row.Cells = append(row.Cells, rc)
			}
			t.Rows = append(t.Rows, row)
		}
		geo := Row{Head: []string{sg.Title, "geomean"}}
		for gi := range c.Groups {
			geo.Cells = append(geo.Cells, geoCell(ratios[gi]))
		}
		t.Rows = append(t.Rows, geo)
	}
	return t
}

func geoCell(ratios []float64) Cell {
	g, ok := stats.GeoMean(ratios)
	if !ok {
		return Cell{Unit: "ratio"}
	}
	cell := Cell{Present: true, Summary: stats.Summary{N: 1, Median: g, Min: g, Max: g}, Unit: "ratio", Class: ClassSame}
	switch {
	case g < LowRatio:
		cell.Class = ClassWorse
	case g > HighRatio:
		cell.Class = ClassBetter
	}
	return cell
}

// eachStep calls fn with every run's step of that name, config by config.
func (c Comparison) eachStep(step string, fn func(StepReport)) {
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			if s, ok := stepOf(r, step); ok {
				fn(s)
			}
		}
	}
}

// backgroundColumns are (step, role) pairs of the background writers, in step order.
func (c Comparison) backgroundColumns() [][2]string {
	var cols [][2]string
	for _, step := range c.Steps {
		var roles []string
		c.eachStep(step, func(s StepReport) {
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

func backgroundOf(r RunReport, step, role string) (Background, bool) {
	s, ok := stepOf(r, step)
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
	cols := c.backgroundColumns()
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
				b, ok := backgroundOf(r, col[0], col[1])
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
				if b, ok := backgroundOf(r, col[0], col[1]); ok {
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
// but kept here too).
func hwMetrics() []string {
	return []string{metrics.MetricCPUPerOp, metrics.MetricServerCPUPerOp, metrics.MetricClientCPUPerOp,
		metrics.MetricCSPerOp, metrics.MetricReadsPerOp, metrics.MetricReadKBPerOp, metrics.MetricWritesPerRow,
		metrics.MetricWriteKBPerRow, metrics.MetricDBGB, metrics.MetricRSSGB}
}

func metricOf(step, metric string) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := stepOf(r, step)
		if !ok {
			return 0, false
		}
		v, ok := s.HW.Metrics[metric]
		return v, ok
	}
}

func metricUnit(m string) string {
	switch m {
	case metrics.MetricCPUPerOp, metrics.MetricServerCPUPerOp, metrics.MetricClientCPUPerOp:
		return "µs/op"
	case metrics.MetricDBGB, metrics.MetricRSSGB:
		return "GiB"
	case metrics.MetricMaxOpSec:
		return "s"
	}
	return ""
}

func (c Comparison) hwTable(relative bool) Table {
	base := c.Groups[c.Base]
	t := Table{ID: "hw", Title: "HW efficiency (absolute)", HeadColumns: []string{"metric", "config"}, Columns: c.Steps,
		Legend: []string{"cpupq, server_cpupq, client_cpupq: CPU µs per op; cspq, rpq, rkbpq: context switches, device reads, KiB read per op;",
			"wpi, wkbpi: device writes, KiB written per inserted row; dbgb: database GiB at step end; rss_gb: server's peak GiB (README \"What is measured\")"}}
	if relative {
		t.ID, t.Title = "hw_relative", fmt.Sprintf("HW efficiency relative to %s", base.Name)
		t.Legend = []string{"median ÷ the base's median; lower is better: better below 0.95, worse above 1.05", c.significanceLegend()}
	}
	// Every HW metric: lower is better.
	t.Rows = c.metricRows(hwMetrics(), relative, metricUnit, func(string) bool { return false })
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
				get := metricOf(step, m)
				var cell Cell
				if relative {
					cell = relCell(values(base, get), values(g, get), higherBetter(m))
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

// kvHigherBetter says which key-value metrics are better higher (throughput); the others
// (amplification, stalls, compaction work, size) are better lower.
func kvHigherBetter(m string) bool { return m == metrics.MetricKVMBPerSec }

func kvUnit(m string) string {
	switch m {
	case metrics.MetricKVMBPerSec, metrics.MetricKVCompactMBPerSec:
		return "MB/s"
	case metrics.MetricKVStallPct:
		return "%"
	case metrics.MetricKVStalls:
		return "count"
	case metrics.MetricKVCompactWallSec, metrics.MetricKVCompactCPUSec:
		return "s"
	case metrics.MetricKVLSMGB, metrics.MetricKVIngestGB, metrics.MetricKVCompactWriteGB, metrics.MetricKVCompactReadGB,
		metrics.MetricKVFlushGB, metrics.MetricKVPendingCompactionGB:
		return "GiB"
	}
	return ""
}

// kvTable is the key-value engines' metrics per step (db_bench's report.tsv figures,
// reference §4.3), absolute or relative to the base; empty for SQL runs.
func (c Comparison) kvTable(relative bool) Table {
	base := c.Groups[c.Base]
	t := Table{ID: "kv", Title: "Key-value engine (absolute)", HeadColumns: []string{"metric", "config"}, Columns: c.Steps,
		Legend: []string{"mb_sec: user MB/s of the primary op; w_amp: (compaction + flush bytes written) / bytes the writers wrote; c_mbps: compaction MB written/s;",
			"c_wsecs, c_csecs: compaction wall and CPU s; stall_pct: write-stall time % of the step; nstall: stalls; lsm_gb: live SST GiB at the end (README \"Key-value metrics\")"}}
	if relative {
		t.ID, t.Title = "kv_relative", fmt.Sprintf("Key-value engine relative to %s", base.Name)
		t.Legend = []string{"median ÷ the base's median; mb_sec: higher is better, the others lower", c.significanceLegend()}
	}
	t.Rows = c.metricRows(metrics.KVMetricNames(), relative, kvUnit, kvHigherBetter)
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

func (c Comparison) connCPUTable() Table {
	t := Table{ID: "conn_cpu", Title: "Server CPU per connection role (seconds per step)", HeadColumns: []string{"role", "config"},
		Columns: c.Steps,
		Legend:  []string{"CPU of the server backends/threads serving each role's sessions; client_process: embedded engines (SQLite) run in dbperf"}}
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
		for gi, g := range c.Groups {
			row := Row{Head: []string{role, g.Name}, Base: gi == c.Base}
			for _, step := range c.Steps {
				row.Cells = append(row.Cells, cellOf(values(g, func(r RunReport) (float64, bool) {
					s, ok := stepOf(r, step)
					if !ok {
						return 0, false
					}
					for _, cc := range s.HW.ConnCPU {
						if cc.Role == role {
							return cc.CPUSec, true
						}
					}
					return 0, false
				}), "s"))
			}
			if anyPresent(row.Cells) {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t
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
	for _, step := range c.Steps {
		var labels []string
		c.eachStep(step, func(s StepReport) {
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
						s, ok := stepOf(r, step)
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
