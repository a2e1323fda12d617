package report

import (
	"fmt"
	"slices"
)

// ConcurrencyPoint places a compared config on a sweep's concurrency axis (dbperf sweep
// --clients 1,2,4): the config it is one count of (its version and profile) and its
// count of clients.
type ConcurrencyPoint struct {
	Config  string
	Clients int
}

// ConcurrencyTables are the tables of a concurrency sweep, as the Insert Benchmark's
// posts print them: per step (one-op steps left out: they have no rate) one row per
// config, one column per count of clients, the step's rate (the median of the point's
// runs); then each config relative to its own first count (how it scales), then, with
// more than one config, each count relative to the first config. The relative cells are the relative table's: ratios
// with their intervals and verdicts (relCell). points[i] places c.Groups[i]; nil when
// the points have fewer than two counts or do not match the groups.
func (c Comparison) ConcurrencyTables(points []ConcurrencyPoint) []Table {
	if len(points) != len(c.Groups) {
		return nil
	}
	var configs []string
	var counts []int
	at := map[string]map[int]GroupReport{}
	for i, p := range points {
		if !slices.Contains(configs, p.Config) {
			configs = append(configs, p.Config)
			at[p.Config] = map[int]GroupReport{}
		}
		if !slices.Contains(counts, p.Clients) {
			counts = append(counts, p.Clients)
		}
		at[p.Config][p.Clients] = c.Groups[i]
	}
	if len(counts) < 2 {
		return nil
	}
	slices.Sort(counts)
	cols := make([]string, len(counts))
	for i, n := range counts {
		cols[i] = fmt.Sprintf("%d clients", n)
		if n == 1 {
			cols[i] = "1 client"
		}
	}
	abs := Table{ID: "concurrency", Title: "Throughput by clients", HeadColumns: []string{"step", "config"}, Columns: cols,
		Legend: []string{"each step's rate (its primary op per second), the median of each point's runs; one-op steps left out (no rate)"}}
	scale := Table{ID: "concurrency_scaling", Title: fmt.Sprintf("Throughput by clients relative to %s", cols[0]), HeadColumns: []string{"step", "config"}, Columns: cols,
		Legend: c.ratioLegend("higher is better", false)}
	base := Table{ID: "concurrency_relative", Title: fmt.Sprintf("Throughput by clients relative to %s", configs[0]), HeadColumns: []string{"step", "config"}, Columns: cols,
		Legend: c.ratioLegend("higher is better", false)}
	for _, step := range c.Steps {
		if c.oneOps[step] {
			continue
		}
		get, unit, higherBetter := c.StepFigure(step)
		opt := c.ratioOptions(step)
		for ci, cfg := range configs {
			head := []string{step, cfg}
			if ci > 0 {
				head[0] = ""
			}
			ra := Row{Head: head}
			rs := Row{Head: head}
			rb := Row{Head: head, Base: ci == 0}
			for i, n := range counts {
				g, ok := at[cfg][n]
				if !ok {
					ra.Cells, rs.Cells, rb.Cells = append(ra.Cells, Cell{Unit: unit}), append(rs.Cells, Cell{Unit: "ratio"}), append(rb.Cells, Cell{Unit: "ratio"})
					continue
				}
				ra.Cells = append(ra.Cells, cellOf(values(g, get), unit))
				if first, ok := at[cfg][counts[0]]; ok {
					rs.Cells = append(rs.Cells, relCell(first, g, i == 0, get, opt, higherBetter))
				} else {
					rs.Cells = append(rs.Cells, Cell{Unit: "ratio"})
				}
				if b, ok := at[configs[0]][n]; ok {
					rb.Cells = append(rb.Cells, relCell(b, g, ci == 0, get, opt, higherBetter))
				} else {
					rb.Cells = append(rb.Cells, Cell{Unit: "ratio"})
				}
			}
			abs.Rows, scale.Rows, base.Rows = append(abs.Rows, ra), append(scale.Rows, rs), append(base.Rows, rb)
		}
	}
	out := []Table{abs, scale}
	if len(configs) > 1 {
		out = append(out, base)
	}
	return out
}
