package report

import (
	"fmt"
	"slices"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
)

// The comparison's tables of efficiency: HW per operation, a key-value engine's
// figures and LSM shape, CPU per connection role, and latency percentiles.

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
