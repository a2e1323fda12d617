package report

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/dbperf/dbperf/internal/stats"
)

// ConcurrencyPoint places a compared config on a sweep's concurrency axis (dbperf sweep
// --clients 1,2,4): the config it is one count of (its version and profile) and its
// count of clients.
type ConcurrencyPoint struct {
	Config  string
	Clients int
}

// concEntry is one cell's source in the concurrency tables: the runs of group g, their
// step figure, shown in row (step, config) and column count.
type concEntry struct {
	step, config, figure string
	count                int
	g                    GroupReport
}

// ConcurrencyTables are the tables of a concurrency sweep, as the Insert Benchmark's
// posts print them: per step (one-op steps left out: they have no rate) one row per
// config, one column per count of clients, the step's rate (the median of the point's
// runs); then each config relative to its own first count (how it scales), then, with
// more than one config, each count relative to the first config. The relative cells are
// the relative table's: ratios with their intervals and verdicts (relCell). points[i]
// places c.Groups[i]; nil when the points have fewer than two counts or do not match the
// groups.
func (c Comparison) ConcurrencyTables(points []ConcurrencyPoint) []Table {
	if len(points) != len(c.Groups) {
		return nil
	}
	var es []concEntry
	for _, step := range c.Steps {
		if c.oneOps[step] {
			continue
		}
		for i, p := range points {
			es = append(es, concEntry{step: step, config: p.Config, figure: step, count: p.Clients, g: c.Groups[i]})
		}
	}
	return c.concurrencyTables(es, "clients")
}

// threadStep is a sysbench step run at one of several thread counts: "point-query.t4".
var threadStep = regexp.MustCompile(`^(.+)\.t([0-9]+)$`)

// ThreadTables are the concurrency tables of steps a run repeats at several thread
// counts (sysbench --threads 1,4: point-query.t1, point-query.t4): per test and config,
// one column per thread count, as ConcurrencyTables shows a sweep's --clients. Nil when
// no test ran at two counts.
func (c Comparison) ThreadTables() []Table {
	var es []concEntry
	for _, step := range c.Steps {
		m := threadStep.FindStringSubmatch(step)
		if m == nil || c.oneOps[step] {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		for _, g := range c.Groups {
			es = append(es, concEntry{step: m[1], config: g.Name, figure: step, count: n, g: g})
		}
	}
	return c.concurrencyTables(es, "threads")
}

// concurrencyTables builds the three tables from their cells' sources; what names the
// columns' unit ("clients", "threads").
func (c Comparison) concurrencyTables(es []concEntry, what string) []Table {
	var steps, configs []string
	var counts []int
	type key struct {
		step, config string
		count        int
	}
	at := map[key]concEntry{}
	for _, e := range es {
		if !slices.Contains(steps, e.step) {
			steps = append(steps, e.step)
		}
		if !slices.Contains(configs, e.config) {
			configs = append(configs, e.config)
		}
		if !slices.Contains(counts, e.count) {
			counts = append(counts, e.count)
		}
		at[key{e.step, e.config, e.count}] = e
	}
	if len(counts) < 2 {
		return nil
	}
	slices.Sort(counts)
	cols := make([]string, len(counts))
	for i, n := range counts {
		cols[i] = fmt.Sprintf("%d %s", n, what)
		if n == 1 {
			cols[i] = "1 " + what[:len(what)-1]
		}
	}
	head := []string{"step", "config"}
	abs := Table{ID: "concurrency", Title: "Throughput by " + what, HeadColumns: head, Columns: cols,
		Legend: []string{"each step's rate (its primary op per second), the median of each point's runs; one-op steps left out (no rate)"}}
	scale := Table{ID: "concurrency_scaling", Title: fmt.Sprintf("Throughput by %s relative to %s", what, cols[0]), HeadColumns: head, Columns: cols,
		Legend: c.ratioLegend("higher is better", false)}
	base := Table{ID: "concurrency_relative", Title: fmt.Sprintf("Throughput by %s relative to %s", what, configs[0]), HeadColumns: head, Columns: cols,
		Legend: c.ratioLegend("higher is better", false)}
	for _, step := range steps {
		for ci, cfg := range configs {
			h := []string{step, cfg}
			if ci > 0 {
				h[0] = ""
			}
			ra, rs, rb := Row{Head: h}, Row{Head: h}, Row{Head: h, Base: ci == 0}
			for i, n := range counts {
				e, ok := at[key{step, cfg, n}]
				if !ok {
					ra.Cells, rs.Cells, rb.Cells = append(ra.Cells, Cell{}), append(rs.Cells, Cell{Unit: "ratio"}), append(rb.Cells, Cell{Unit: "ratio"})
					continue
				}
				get, unit, higherBetter := c.StepFigure(e.figure)
				opt := c.ratioOptions(e.figure)
				ra.Cells = append(ra.Cells, cellOf(values(e.g, get), unit))
				// Two figures of one group (sysbench's steps at two thread counts) are
				// ratios of two steps' figures: get reads each side's own step.
				rel := func(b concEntry, isBase bool) Cell {
					if b.figure == e.figure {
						return relCell(b.g, e.g, isBase, get, opt, higherBetter)
					}
					if isBase {
						return baseCell(values(b.g, get))
					}
					bget, _, _ := c.StepFigure(b.figure)
					r, ok := stepRatio(b.g, bget, e.g, get, opt)
					if !ok {
						return Cell{Unit: "ratio"}
					}
					return ratioCell(r, higherBetter)
				}
				if first, ok := at[key{step, cfg, counts[0]}]; ok {
					rs.Cells = append(rs.Cells, rel(first, i == 0))
				} else {
					rs.Cells = append(rs.Cells, Cell{Unit: "ratio"})
				}
				if b, ok := at[key{step, configs[0], n}]; ok {
					rb.Cells = append(rb.Cells, rel(b, ci == 0))
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

// stepRatio is the ratio of g's figure (get) to b's (bget): two steps of the same runs or
// of others, never paired (the two figures are not one trial's).
func stepRatio(b GroupReport, bget func(RunReport) (float64, bool), g GroupReport, get func(RunReport) (float64, bool), opt stats.RatioOptions) (stats.Ratio, bool) {
	x, y := values(b, bget), values(g, get)
	if len(x) == 0 || len(y) == 0 {
		return stats.Ratio{}, false
	}
	return stats.RatioOf(x, y, opt), true
}
