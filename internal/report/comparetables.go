package report

import (
	"fmt"
	"slices"

	"github.com/dbperf/dbperf/internal/stats"
)

// The comparison's tables of throughput: absolute, relative, geometric means by step
// group, and the background writers' rates against their targets.

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
	// The target is a setting, not a measurement: one row when every config had the same,
	// else a row per config (a concurrency sweep's writers scale with the clients; one row
	// read "200 [100–400] !", issue 42).
	targetOf := func(gs []GroupReport, head string) (Row, bool) {
		row, same := Row{Head: []string{head}, Target: true}, true
		for _, col := range cols {
			var tg []float64
			for _, g := range gs {
				tg = append(tg, values(g, func(r RunReport) (float64, bool) {
					b, ok := r.BackgroundOf(col[0], col[1])
					return b.TargetPerSec, ok
				})...)
			}
			cell := cellOf(tg, "rows/s")
			cell.Class, cell.Noisy = ClassTarget, false
			same = same && cell.Min == cell.Max
			row.Cells = append(row.Cells, cell)
		}
		return row, same
	}
	targets := []Row{}
	if all, same := targetOf(c.Groups, "target"); same {
		targets = append(targets, all)
	} else {
		for _, g := range c.Groups {
			r, _ := targetOf([]GroupReport{g}, "target "+g.Name)
			targets = append(targets, r)
		}
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
	t.Rows = append(t.Rows, targets...)
	return t
}
