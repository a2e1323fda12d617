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

// NoteVariance: which source dominates the noise of a config's ratios, and what would
// shrink it (one note per config and figure).
const NoteVariance = "variance"

// varianceFigure is a figure whose ratio's noise is decomposed: the step's throughput (or
// duration) and the server's CPU per operation.
type varianceFigure struct {
	name string
	get  func(RunReport) (float64, bool)
	// interval is the figure over one interval of a run's step (false: not measured then).
	interval func(StepReport, IntervalReport) (float64, bool)
}

// varianceFigures are the figures decomposed for step.
func (c Comparison) varianceFigures(step string) []varianceFigure {
	get, _, _ := c.StepFigure(step)
	tp := varianceFigure{name: "throughput", get: get}
	if !c.oneOps[step] {
		tp.interval = func(s StepReport, iv IntervalReport) (float64, bool) {
			for _, o := range iv.Ops {
				if o.Label == s.Primary && o.Count > 0 {
					return o.PerSec, true
				}
			}
			return 0, false
		}
	}
	out := []varianceFigure{tp}
	if !c.oneOps[step] {
		out = append(out, varianceFigure{name: metrics.MetricServerCPUPerOp, get: metricOf(step, metrics.MetricServerCPUPerOp),
			interval: func(s StepReport, iv IntervalReport) (float64, bool) {
				if iv.HW == nil || !iv.HW.ServerKnown || !(iv.HW.ServerCPUSec > 0) {
					return 0, false
				}
				for _, o := range iv.Ops {
					if o.Label == s.Primary && o.Count > 0 {
						return iv.HW.ServerCPUSec * 1e6 / float64(o.Count), true
					}
				}
				return 0, false
			}})
	}
	return out
}

// decompose is the variance decomposition of g's figure against the base's (stats.Decompose*).
func decompose(base, g GroupReport, step string, f varianceFigure) stats.Decomposition {
	na, nb := secondNoise(base, step, f), secondNoise(g, step, f)
	if blocks, ok := pairBlocks(base, g, f.get); ok {
		white := stats.Independent(na, nb)
		if simultaneous(base, g) {
			// A duet: both points ran in the same seconds, whose common noise cancels out
			// of the ratio: its white noise is the per-second ratio's own.
			white = stats.Joint(ratioSecondNoise(base, g, step, f))
		}
		vb := make([]stats.VarianceBlock, len(blocks))
		for i, bl := range blocks {
			vb[i].Factor, vb[i].Instance = bl.factor, bl.instance
			for j := range bl.a {
				if bl.a[j] > 0 && bl.b[j] > 0 {
					vb[i].LogRatios = append(vb[i].LogRatios, math.Log(bl.b[j])-math.Log(bl.a[j]))
				}
			}
		}
		return stats.DecomposePaired(vb, white, stats.DefaultConfidence)
	}
	return stats.DecomposeUnpaired(logs(values(base, f.get)), logs(values(g, f.get)), na, nb, stats.DefaultConfidence)
}

func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// secondNoise is the white noise of a group's figure from second to second: the variance
// of the log of each full interval's figure, from its successive differences within each
// run (slice), pooled over every run of the group that finished the step. Intervals
// shorter than 3/4 of the median (a step's last, partial one) are left out. Zero when the
// figure has no intervals.
func secondNoise(g GroupReport, step string, f varianceFigure) stats.SecondNoise {
	if f.interval == nil {
		return stats.SecondNoise{}
	}
	var lengths []float64
	var steps []StepReport
	for _, r := range g.Runs {
		s, ok := r.Step(step)
		if !ok || s.Status != metrics.StatusOK {
			continue
		}
		if _, ok := f.get(r); !ok {
			continue
		}
		steps = append(steps, s)
		for _, iv := range s.Intervals {
			lengths = append(lengths, iv.EndSec-iv.StartSec)
		}
	}
	nominal := medianLength(lengths)
	if !(nominal > 0) {
		return stats.SecondNoise{}
	}
	var ss, secs float64
	df := 0
	for _, s := range steps {
		secs += s.Seconds
		var ls []float64
		for _, iv := range s.Intervals {
			if iv.EndSec-iv.StartSec < 0.75*nominal {
				continue
			}
			if v, ok := f.interval(s, iv); ok && v > 0 {
				ls = append(ls, math.Log(v))
			}
		}
		s, n := halfSquaredDiffs(ls)
		ss, df = ss+s, df+n
	}
	if df < 2 || len(steps) == 0 {
		return stats.SecondNoise{}
	}
	return stats.SecondNoise{Var: ss / float64(df), IntervalSec: nominal,
		SliceSec: secs / float64(len(steps)), TotalSec: secs}
}

// medianLength is the median of interval lengths (sorted in place), 0 for none: the
// nominal interval, against which a short one (a step's last) is left out.
func medianLength(lengths []float64) float64 {
	if len(lengths) == 0 {
		return 0
	}
	slices.Sort(lengths)
	return lengths[len(lengths)/2]
}

// halfSquaredDiffs sums half the squared successive differences of ls, with their count:
// the mean is the variance of white noise (J. von Neumann, "Distribution of the ratio of
// the mean square successive difference to the variance", Ann. Math. Statist. 12 (1941)
// 367–395), without the slow trend a load step's rate has as its table grows, which the
// variance around the mean would count as noise.
func halfSquaredDiffs(ls []float64) (sum float64, n int) {
	for k := 1; k < len(ls); k++ {
		d := ls[k] - ls[k-1]
		sum += d * d / 2
		n++
	}
	return sum, n
}

// simultaneous says the two groups' trials ran at the same time (a duet's runs).
func simultaneous(a, b GroupReport) bool {
	for _, g := range []GroupReport{a, b} {
		for _, r := range g.Runs {
			if paramString(r.Params, store.ParamDesign) != store.DesignDuet {
				return false
			}
		}
	}
	return len(a.Runs) > 0 && len(b.Runs) > 0
}

// ratioSecondNoise is the white noise of the per-second log ratio of two groups whose
// trials ran at once (a duet): in each trial both ran, interval k of the candidate's run
// over interval k of the base's (both full), its variance from successive differences
// (secondNoise's estimator), pooled over the trials; SliceSec and TotalSec are the
// candidate's seconds per trial and in all.
func ratioSecondNoise(base, g GroupReport, step string, f varianceFigure) stats.SecondNoise {
	if f.interval == nil {
		return stats.SecondNoise{}
	}
	byTrial := func(gr GroupReport) map[string]StepReport {
		out := map[string]StepReport{}
		for _, r := range gr.Runs {
			s, ok := r.Step(step)
			if _, has := f.get(r); !ok || !has || s.Status != metrics.StatusOK {
				continue
			}
			if _, tr := runTrial(r); tr != "" {
				out[tr] = s
			}
		}
		return out
	}
	ta, tb := byTrial(base), byTrial(g)
	var lengths []float64
	for tr, sb := range tb {
		if _, ok := ta[tr]; ok {
			for _, iv := range sb.Intervals {
				lengths = append(lengths, iv.EndSec-iv.StartSec)
			}
		}
	}
	nominal := medianLength(lengths)
	if !(nominal > 0) {
		return stats.SecondNoise{}
	}
	full := func(iv IntervalReport) bool { return iv.EndSec-iv.StartSec >= 0.75*nominal }
	var ss, secs float64
	df, trials := 0, 0
	for tr, sb := range tb {
		sa, ok := ta[tr]
		if !ok {
			continue
		}
		trials++
		secs += sb.Seconds
		var ls []float64
		for k := 0; k < min(len(sa.Intervals), len(sb.Intervals)); k++ {
			ia, ib := sa.Intervals[k], sb.Intervals[k]
			if !full(ia) || !full(ib) {
				continue
			}
			va, okA := f.interval(sa, ia)
			vb, okB := f.interval(sb, ib)
			if okA && okB && va > 0 && vb > 0 {
				ls = append(ls, math.Log(vb)-math.Log(va))
			}
		}
		s, n := halfSquaredDiffs(ls)
		ss, df = ss+s, df+n
	}
	if df < 2 || trials == 0 {
		return stats.SecondNoise{}
	}
	return stats.SecondNoise{Var: ss / float64(df), IntervalSec: nominal, SliceSec: secs / float64(trials), TotalSec: secs}
}

// varianceColumns are the variance table's columns; instances only for a table with a row
// whose servers were renewed (--instances).
func varianceColumns(instances bool) []string {
	if instances {
		return []string{"blocks", "instances", "slices/block", "seconds", "slices", "blocks", "servers", "CPU", "block sd", "MDE", "limit", "MDE/limit"}
	}
	return []string{"blocks", "slices/block", "seconds", "slices", "blocks", "CPU", "block sd", "MDE", "limit", "MDE/limit"}
}

// varianceRow is one config's figure of one step, decomposed.
type varianceRow struct {
	config, step, figure string
	d                    stats.Decomposition
	r                    stats.Ratio
	hasRatio             bool
}

// variances decomposes every config's ratio of every step and figure against the base
// (rows with fewer than 2 blocks or no variance are left out).
func (c Comparison) variances() []varianceRow {
	var out []varianceRow
	base := c.Groups[c.Base]
	for gi, g := range c.Groups {
		if gi == c.Base {
			continue
		}
		for _, step := range c.Steps {
			for _, f := range c.varianceFigures(step) {
				d := decompose(base, g, step, f)
				if d.Units < 2 || !(d.Total > 0) {
					continue
				}
				r, ok := figureRatio(base, g, f.get, c.metricRatioOptions(step, f.name))
				out = append(out, varianceRow{config: g.Name, step: step, figure: f.name, d: d, r: r, hasRatio: ok})
			}
		}
	}
	return out
}

// varianceTable says, per config, step and figure, where the noise of its ratio comes from
// (stats.Decomposition): each source's share of the ratio's variance, the SD of one
// block's ratio, the MDE of the ratio and the white-noise limit.
func varianceTable(rows []varianceRow) Table {
	instances := slices.ContainsFunc(rows, func(v varianceRow) bool { return v.d.Instances > 0 })
	t := Table{ID: "variance", Title: "Where each ratio's noise comes from (share of its variance)",
		HeadColumns: []string{"config", "step", "figure"}, Columns: varianceColumns(instances),
		Legend: []string{
			"blocks: the pairs of a paired design (interleaved, duet), the runs of a sequential one (of the config with fewer); instances (--instances): the servers of each config the blocks ran on in turn, each instance's blocks one unit of the interval; slices/block: the slices both configs ran in a block",
			"seconds: white noise from one second to the next (only more measuring time shrinks it); slices: drift between a block's slices beyond it (shorter slices, or --design duet); " +
				"blocks: differences between blocks or runs, their tables and minutes (more blocks, or --load-once); servers: between the server instances of a sweep with --instances, which two servers of one configuration can differ by for their whole life (more instances; with one server per point it is in no column and no interval); CPU: a duet's CPU assignment (taken out of the ratio's interval)",
			"block sd: of one block's ratio; MDE: the smallest change the ratio's trials can detect (80% power), from the variance above (the relative table's, from a robust spread of the blocks, is smaller where a few blocks stray); limit: the MDE if only the seconds' white noise remained, for the seconds measured per config (a duet: of the per-second ratio, both configs measured in the same seconds); MDE/limit: how far from it the design is " +
				"(under 1 where a load's rate moves as its table grows: its seconds are not white noise)",
		}}
	for _, v := range rows {
		t.Rows = append(t.Rows, Row{Head: []string{v.config, v.step, v.figure}, Cells: varianceCells(v.d, v.r, v.hasRatio, instances)})
	}
	return t
}

// varianceCells are one row of the variance table.
func varianceCells(d stats.Decomposition, r stats.Ratio, hasRatio, instances bool) []Cell {
	num := func(v float64, unit string) Cell {
		return Cell{Present: true, Summary: stats.Summary{Median: v, Min: v, Max: v, N: 1}, Unit: unit}
	}
	share := func(s stats.Source) Cell {
		if _, ok := d.Var[s]; !ok {
			return Cell{}
		}
		return num(d.Share(s), "%")
	}
	cells := []Cell{num(float64(d.Units), "count")}
	if instances {
		n := Cell{}
		if d.Instances > 0 {
			n = num(float64(d.Instances), "count")
		}
		cells = append(cells, n)
	}
	cells = append(cells, num(d.SlicesPerUnit, "ratio"), share(stats.SourceSeconds), share(stats.SourceSlices), share(stats.SourceBlocks))
	if instances {
		cells = append(cells, share(stats.SourceInstances))
	}
	cells = append(cells, share(stats.SourceCPU), num(d.UnitSDPct, "%"))
	mde := Cell{}
	if hasRatio && d.HasMDE {
		mde = num(d.MDEPct, "%")
	}
	limit, times := Cell{}, Cell{}
	if d.HasLimit {
		limit = num(d.LimitMDEPct, "%")
		if mde.Present && d.LimitMDEPct > 0 {
			times = num(d.MDEPct/d.LimitMDEPct, "ratio")
		}
	}
	return append(cells, mde, limit, times)
}

// varianceAdvice is what would shrink a source's share, for a paired or sequential design.
func varianceAdvice(s stats.Source, paired bool) string {
	switch s {
	case stats.SourceSeconds:
		return "white noise, at its limit for the seconds measured: only more measuring time shrinks it (more blocks, or longer steps)"
	case stats.SourceSlices:
		return "drift within blocks: shorter slices (--slice), or --design duet for a CPU-bound step"
	case stats.SourceBlocks:
		if paired {
			return "differences between blocks: more, shorter blocks in the same minutes (--repeat up, --time down: a block's own difference is then averaged over more blocks, while the seconds' share stays), " +
				"or keep each point's loaded tables across blocks (--load-once) so the steady steps stop drawing a new layout and cache each block"
		}
		return "differences between runs: the interleaved or duet design (dbperf sweep --design), which pairs the configs in time"
	case stats.SourceInstances:
		return "differences between server instances, which last each server's life: more instances (dbperf sweep --instances, up to one per block, the blocks then short, e.g. --time 0.5 --slice 0.5, so that more servers fit in the same minutes), each instance's blocks being one unit of the interval; " +
			"for PostgreSQL, servers whose shared memory is in huge pages (profile huge) differ far less"
	case stats.SourceCPU:
		return "the duet's CPU assignment: it is taken out of the ratios' intervals (each assignment weighs equally); more blocks balance it further"
	}
	return ""
}

// varianceNotes say, per config and figure, which source dominates which steps and what
// would shrink it: one line each, the variance table holding the figures.
func varianceNotes(rows []varianceRow, base string) []Note {
	type key struct{ config, figure string }
	type entry struct {
		steps               []string
		shares, mdes, limit []float64
		paired              bool
	}
	var order []key
	by := map[key]map[stats.Source]*entry{}
	sources := map[key][]stats.Source{}
	for _, v := range rows {
		d := v.d
		if d.Dominant == "" || len(d.Var) < 2 {
			continue // one source estimated: nothing to weigh it against
		}
		k := key{v.config, v.figure}
		if by[k] == nil {
			by[k] = map[stats.Source]*entry{}
			order = append(order, k)
		}
		e := by[k][d.Dominant]
		if e == nil {
			e = &entry{paired: d.Paired}
			by[k][d.Dominant] = e
			sources[k] = append(sources[k], d.Dominant)
		}
		e.steps = append(e.steps, v.step)
		e.shares = append(e.shares, d.Share(d.Dominant))
		if v.hasRatio && d.HasMDE {
			e.mdes = append(e.mdes, d.MDEPct)
			if d.HasLimit {
				e.limit = append(e.limit, d.LimitMDEPct)
			}
		}
	}
	out := make([]Note, 0, len(order)+1)
	for _, k := range order {
		var parts, steps []string
		for _, s := range sources[k] {
			e := by[k][s]
			steps = append(steps, e.steps...)
			p := fmt.Sprintf("%s dominate in %s (%s of the variance", sourceName(s, e.paired), strings.Join(e.steps, ", "), pctSpan(e.shares))
			if len(e.mdes) > 0 {
				p += "; MDE " + pctSpan(e.mdes)
				if len(e.limit) > 0 {
					p += " against a white-noise limit of " + pctSpan(e.limit)
				}
			}
			parts = append(parts, p+"): "+varianceAdvice(s, e.paired))
		}
		out = append(out, Note{Kind: NoteVariance, Steps: steps, Label: k.figure,
			Text: fmt.Sprintf("noise of %s vs %s, %s: %s", k.config, base, k.figure, strings.Join(parts, "; "))})
	}
	return append(out, driftNotes(rows, base)...)
}

// DriftP is the level below which consecutive blocks' ratios are called correlated
// (stats.Decomposition.BlockLag1P): strict, as a report tests every config, step and
// figure.
const DriftP = 0.01

// driftNotes say, per config and figure, in which steps consecutive blocks' ratios are
// correlated (stats.Decomposition.BlockLag1): the ratio moves over minutes longer than a
// block, so the blocks are not the independent units the interval takes them for.
func driftNotes(rows []varianceRow, base string) []Note {
	type key struct{ config, figure string }
	var order []key
	parts := map[key][]string{}
	steps := map[key][]string{}
	for _, v := range rows {
		if !(v.d.BlockLag1P < DriftP) {
			continue
		}
		k := key{v.config, v.figure}
		if parts[k] == nil {
			order = append(order, k)
		}
		p := "p < 0.001"
		if v.d.BlockLag1P >= 0.001 {
			p = fmt.Sprintf("p %.3f", v.d.BlockLag1P)
		}
		parts[k] = append(parts[k], fmt.Sprintf("%s (lag-1 r %.2f over %d blocks, %s)", v.step, v.d.BlockLag1, v.d.Units, p))
		steps[k] = append(steps[k], v.step)
	}
	out := make([]Note, 0, len(order))
	for _, k := range order {
		out = append(out, Note{Kind: NoteVariance, Steps: steps[k], Label: k.figure,
			Text: fmt.Sprintf("blocks of %s vs %s, %s, drift together in %s: the ratio moves over minutes longer than a block, "+
				"so neighbouring blocks are alike and the interval, which takes them as independent, is narrower than it should be; "+
				"trust it less, and give the sweep more minutes (more blocks) or find what drifts (a server's vacuum or checkpoint: --settle)",
				k.config, base, k.figure, strings.Join(parts[k], ", "))})
	}
	return out
}

// sourceName names a source in words: a sequential design's units are runs.
func sourceName(s stats.Source, paired bool) string {
	switch s {
	case stats.SourceBlocks:
		if !paired {
			return "runs"
		}
		return "blocks"
	case stats.SourceCPU:
		return "CPU assignments"
	case stats.SourceInstances:
		return "server instances"
	}
	return string(s)
}

// pctSpan is "72%" or "61–80%" for the values' range.
func pctSpan(xs []float64) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if FormatPct(lo) == FormatPct(hi) {
		return FormatPct(lo)
	}
	return strings.TrimSuffix(FormatPct(lo), "%") + "–" + FormatPct(hi)
}
