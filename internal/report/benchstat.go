package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
)

// MetricThroughput names a step's throughput (the default metric of a comparison and a
// history).
const MetricThroughput = "throughput"

// CompareMetrics are throughput and the HW-efficiency metrics (HistoryMetrics adds p99).
func CompareMetrics() []string {
	return append([]string{MetricThroughput}, metrics.MetricNames()...)
}

// BenchTable is benchstat's view of configs for one metric: per step, each config's
// median with its 95% confidence interval and number of runs, and each other config's
// ratio to the base with its 95% interval, verdict and minimum detectable effect.
type BenchTable struct {
	// Metric is one of HistoryMetrics.
	Metric string
	// Configs are the compared configs' names; Configs[Base] is the base.
	Configs []string
	Base    int
	Rows    []BenchRow
	// NeedN is how many runs per config a verdict needs (unpaired), NeedPairs how many
	// block pairs (paired by block).
	NeedN, NeedPairs int
	// Threshold is the relative change a verdict calls higher or lower.
	Threshold float64
	// Notes are the comparison's notes about steps of the table measured on a busy
	// machine (NoteBusy): their intervals are widened.
	Notes []string
}

// BenchRow is one step of a BenchTable.
type BenchRow struct {
	Step string
	// Unit formats the values (formatValue).
	Unit string
	// Configs summarise each config's runs (N = 0: it did not measure the step).
	Configs []stats.Summary
	// Ratios are each config's figure ÷ the base's (figureRatio: paired by block when the
	// runs can be); nil for the base and where a side has no value.
	Ratios []*stats.Ratio
}

// CompareBench compares metric (one of HistoryMetrics) of the configs step by step
// against groups[base]; rep must hold their runs. Cleanup steps are left out (their one
// "op" is the whole wait), and for p99 every step of one operation per client.
func CompareBench(rep Report, groups []Group, base int, metric string) (BenchTable, error) {
	if !slices.Contains(HistoryMetrics(), metric) {
		return BenchTable{}, fmt.Errorf("unknown metric %q: use one of %s", metric, strings.Join(HistoryMetrics(), ", "))
	}
	if base < 0 || base >= len(groups) {
		return BenchTable{}, fmt.Errorf("base %d: there are %d configs", base, len(groups))
	}
	c := Compare(rep, groups, base)
	t := BenchTable{Metric: metric, Base: base, NeedN: c.NeedN, NeedPairs: c.NeedPairs, Threshold: stats.DefaultThreshold}
	for _, g := range c.Groups {
		t.Configs = append(t.Configs, g.Name)
	}
	for _, step := range c.Steps {
		// A one-op step as the report shows it: its duration instead of a rate, and no
		// per-op figure (a per-op figure of one op is the whole step's).
		oneOp := c.IsOneOp(step)
		if c.isCleanup(step) || oneOp && (metric == MetricP99 || perOpMetric(metric)) {
			continue
		}
		get := historyValue(step, metric)
		unit := benchUnit(c, step, metric)
		opt := c.ratioOptions(step)
		if metric == MetricThroughput {
			get, unit, _ = c.StepFigure(step)
		} else {
			opt = c.metricRatioOptions(step, metric)
		}
		row := BenchRow{Step: step, Unit: unit}
		measured := false
		for gi, g := range c.Groups {
			vs := values(g, get)
			measured = measured || len(vs) > 0
			row.Configs = append(row.Configs, stats.Summarize(vs))
			var rp *stats.Ratio
			if gi != base {
				if r, ok := figureRatio(c.Groups[base], g, get, opt); ok {
					rp = &r
				}
			}
			row.Ratios = append(row.Ratios, rp)
		}
		if measured {
			t.Rows = append(t.Rows, row)
		}
	}
	for _, n := range c.Notes {
		if n.Kind == NoteBusy && slices.ContainsFunc(t.Rows, func(r BenchRow) bool { return slices.Contains(n.Steps, r.Step) }) {
			t.Notes = append(t.Notes, n.Text)
		}
	}
	return t, nil
}

// isCleanup says whether some run's step of that name is a cleanup.
func (c Comparison) isCleanup(step string) bool {
	cleanup := false
	c.eachStep(step, func(s StepReport) { cleanup = cleanup || s.Kind == "cleanup" })
	return cleanup
}

// benchUnit is the unit a metric's values are formatted in.
func benchUnit(c Comparison, step, metric string) string {
	switch metric {
	case MetricThroughput:
		return c.throughputUnit(step)
	case MetricP99:
		return "µs"
	}
	return metricUnit(metric)
}

// medianCIRuns is how many values stats.Summarize needs for a confidence interval of the
// median (fewer give the range min–max instead).
var medianCIRuns = sync.OnceValue(func() int {
	for n := 2; n <= 50; n++ {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64(100 + i)
		}
		if stats.Summarize(vs).HasCI {
			return n
		}
	}
	return 0
})

// RenderBench writes BenchTables like benchstat: per metric a table of step, each
// config's "median ± x% (n=N)" (± the larger distance from the median to the ends of its
// 95% confidence interval; one run: the value alone), then per other config its ratio
// to the base as a change with the 95% interval ("+4.1% [+1.2% +7.0%]", "~" when the
// verdict is the same, "?" when unstable, the estimate in parentheses when there are too
// few runs for a verdict) and the minimum detectable effect; a legend at the end.
func RenderBench(w io.Writer, tables []BenchTable) error {
	var buf bytes.Buffer
	tooFew, noMedianCI := false, false
	var paired, notes []string
	var t0 BenchTable
	for ti, t := range tables {
		if ti > 0 {
			buf.WriteString("\n")
		}
		t0 = t
		for _, n := range t.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		var others []string
		head := []string{"step"}
		for ci, name := range t.Configs {
			head = append(head, name)
			if ci != t.Base {
				others = append(others, name)
			}
		}
		for ci, name := range t.Configs {
			if ci != t.Base {
				head = append(head, name+" vs "+t.Configs[t.Base], "mde")
			}
		}
		rows := [][]string{head}
		for _, r := range t.Rows {
			line := []string{r.Step}
			for _, s := range r.Configs {
				line = append(line, summaryText(s, r.Unit))
				noMedianCI = noMedianCI || s.N > 1 && !s.HasCI
			}
			for ci, rp := range r.Ratios {
				if ci == t.Base {
					continue
				}
				line = append(line, ratioText(rp), mdeText(rp))
				if rp != nil && rp.Estimate > 0 {
					tooFew = tooFew || rp.Verdict == stats.VerdictNone
					if name := t.Configs[ci] + " vs " + t.Configs[t.Base]; rp.Paired && !slices.Contains(paired, name) {
						paired = append(paired, name)
					}
				}
			}
			rows = append(rows, line)
		}
		var units []string
		for _, r := range t.Rows {
			if r.Unit != "" && !slices.Contains(units, r.Unit) {
				units = append(units, r.Unit)
			}
		}
		title := t.Metric
		if len(units) > 0 && t.Metric != MetricP99 { // p99's values carry their unit
			title += " (" + strings.Join(units, ", ") + ")"
		}
		fmt.Fprintf(&buf, "%s: %s vs %s (base)\n", title, Printable(strings.Join(others, ", ")), Printable(t.Configs[t.Base]))
		if len(t.Rows) == 0 {
			fmt.Fprintf(&buf, "  no step of these runs has %s\n", t.Metric)
			continue
		}
		writeAligned(&buf, rows, nil, 1)
	}
	if len(tables) > 0 {
		ci := "  median ± the larger distance to the ends of its 95% confidence interval, n runs"
		if noMedianCI {
			ci += fmt.Sprintf(" (fewer than %d runs: to the min or max instead)", medianCIRuns())
		}
		fmt.Fprintln(&buf, ci)
		fmt.Fprintln(&buf, "  X vs BASE: X's figure ÷ the base's as a change, with its 95% confidence interval (Hodges–Lehmann);"+
			" mde: the smallest change these runs would detect (80% power)")
		pct := 100 * t0.Threshold
		fmt.Fprintf(&buf, "  ~ the same: the interval lies within ±%g%%; ? unstable: the interval is wider than that yet shows"+
			" no change beyond it (more noise than the threshold at these n); no mark: higher or lower by more than %g%%\n", pct, pct)
		if len(paired) > 0 {
			fmt.Fprintf(&buf, "  paired by block (the runs of one sweep's block ran side by side): %s\n", Printable(strings.Join(paired, ", ")))
		}
		if tooFew {
			fmt.Fprintf(&buf, "  (+x%%) no verdict: too few runs for an interval; a verdict needs %d runs per config, or %d trial pairs"+
				" (dbperf run … --repeat %d --label NAME)\n", t0.NeedN, t0.NeedPairs, t0.NeedN)
		}
		for _, n := range notes {
			fmt.Fprintf(&buf, "  %s\n", Printable(n))
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}

// summaryText is a config's cell: "median ± x% (n=N)", the value alone for one run, "-"
// for none.
func summaryText(s stats.Summary, unit string) string {
	if s.N == 0 {
		return "-"
	}
	v := formatValue(s.Median, unit)
	if s.N > 1 && s.Median != 0 {
		half := math.Max(s.Hi-s.Median, s.Median-s.Lo) / math.Abs(s.Median) * 100
		v += " ± " + benchPct(half)
	}
	return fmt.Sprintf("%s (n=%d)", v, s.N)
}

// ratioText is a ratio as a change: "+4.1% [+1.2% +7.0%]", then "~" when the verdict is
// the same, "?" when unstable; "(+4.1%)" without a verdict; "-" without a ratio.
func ratioText(r *stats.Ratio) string {
	if r == nil || !(r.Estimate > 0) {
		return "-"
	}
	change := func(x float64) string { return fmt.Sprintf("%+.1f%%", (x-1)*100) }
	if r.Verdict == stats.VerdictNone || !r.HasCI {
		return "(" + change(r.Estimate) + ")"
	}
	s := fmt.Sprintf("%s [%s %s]", change(r.Estimate), change(r.Lo), change(r.Hi))
	switch r.Verdict {
	case stats.VerdictSame:
		s += " ~"
	case stats.VerdictUnstable:
		s += " ?"
	}
	return s
}

// mdeText is a ratio's minimum detectable effect, "-" when it has none.
func mdeText(r *stats.Ratio) string {
	if r == nil || !r.HasMDE || !(r.Estimate > 0) {
		return "-"
	}
	return benchPct(r.MDEPct)
}

// benchPct is a percentage with one decimal below 10, none above.
func benchPct(p float64) string {
	if p >= 10 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}
