package report

import (
	"fmt"
	"slices"

	"github.com/dbperf/dbperf/internal/store"
)

// UnitPerMinute is the unit of a step group's figures per minute (store.PerMinute):
// counts per minute, formatted as rates.
const UnitPerMinute = "/min"

// perMinuteColumn is one figure per minute of one step: a column of the per_minute table.
type perMinuteColumn struct {
	step string
	fig  store.PerMinute
}

// perMinuteColumns are the figures per minute the compared runs' step groups declare,
// for the steps in those groups, in step order then the group's order of figures.
func (c Comparison) perMinuteColumns() []perMinuteColumn {
	var out []perMinuteColumn
	for _, step := range c.Steps {
		if c.oneOps[step] {
			continue
		}
		for _, sg := range c.StepGroups {
			if !slices.Contains(sg.Steps, step) {
				continue
			}
			for _, f := range sg.PerMinute {
				out = append(out, perMinuteColumn{step: step, fig: f})
			}
		}
	}
	return out
}

// perMinuteOf is a run's figure per minute in a step: its labels' rates (counts per
// second over the step) summed, × 60; absent when the step ran none of the labels' ops.
// Where the figure is the primary label's alone it is the step's throughput × 60 exactly,
// so its ranges and ratio intervals are the throughput's, scaled.
func perMinuteOf(step string, f store.PerMinute) func(RunReport) (float64, bool) {
	return func(r RunReport) (float64, bool) {
		s, ok := r.Step(step)
		if !ok {
			return 0, false
		}
		var perSec float64
		var count int64
		for _, o := range s.Ops {
			if slices.Contains(f.Labels, o.Label) {
				perSec += o.PerSec
				count += o.Count
			}
		}
		if count == 0 {
			return 0, false
		}
		return 60 * perSec, true
	}
}

// perMinuteTable shows the figures per minute the workloads declare (TPROC-C's NOPM and
// TPM) per config: each as the median [min–max] of the runs, as the throughput table,
// and with several configs its ratio to the base [95% interval], as the relative table.
// ok is false when no compared step has such a figure.
func (c Comparison) perMinuteTable() (t Table, ok bool) {
	cols := c.perMinuteColumns()
	if len(cols) == 0 {
		return Table{}, false
	}
	base := c.Groups[c.Base]
	rel := len(c.Groups) > 1
	t = Table{ID: "per_minute", Title: "Per minute, as the workload's reference counts", HeadColumns: []string{"config"}}
	var named []string
	for _, col := range cols {
		t.Columns = append(t.Columns, col.step+" "+col.fig.Name)
		if rel {
			t.Columns = append(t.Columns, col.step+" "+col.fig.Name+" vs base")
		}
		if !slices.Contains(named, col.fig.Name) {
			named = append(named, col.fig.Name)
			rate := "rate of " + joinLabels(col.fig.Labels)
			if len(col.fig.Labels) > 1 {
				rate = "rates of " + joinLabels(col.fig.Labels) + " summed,"
			}
			t.Legend = append(t.Legend, fmt.Sprintf("%s: %s: the step's %s × 60", col.fig.Name, col.fig.Title, rate))
		}
	}
	t.Legend = append(t.Legend, "repeated runs: median [min–max] (n runs), as in the throughput table; ! marks a spread over 5% of the median (noisy)")
	if rel {
		t.Legend = append(t.Legend, c.ratioLegend("higher is better", false)...)
	}
	for gi, g := range c.Groups {
		row := Row{Head: []string{g.Name}, Base: gi == c.Base}
		for _, col := range cols {
			get := perMinuteOf(col.step, col.fig)
			row.Cells = append(row.Cells, cellOf(values(g, get), UnitPerMinute))
			if rel {
				row.Cells = append(row.Cells, relCell(base, g, gi == c.Base, get, c.ratioOptions(col.step), true))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}

// joinLabels names labels in a sentence: "new-order", "a and b", "a, b and c".
func joinLabels(labels []string) string {
	switch n := len(labels); n {
	case 0:
		return ""
	case 1:
		return labels[0]
	default:
		out := labels[0]
		for _, l := range labels[1 : n-1] {
			out += ", " + l
		}
		return out + " and " + labels[n-1]
	}
}
