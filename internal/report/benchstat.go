package report

import (
	"fmt"
	"slices"
	"strings"

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
	// MedianCIRuns is how many runs a config needs for a confidence interval of its
	// median (stats.Summarize); with fewer, a config's ± is the distance to its min or max.
	MedianCIRuns int
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
	// LowerBetter says a lower figure is better: a one-op step's duration in the
	// throughput table, latencies and per-op costs.
	LowerBetter bool
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
	t := BenchTable{Metric: metric, Base: base, NeedN: c.NeedN, NeedPairs: c.NeedPairs, Threshold: stats.DefaultThreshold,
		MedianCIRuns: medianCIRuns()}
	for _, g := range c.Groups {
		t.Configs = append(t.Configs, g.Name)
	}
	for _, step := range c.Steps {
		// A one-op step as the report shows it: its duration instead of a rate, and no
		// per-op figure (a per-op figure of one op is the whole step's).
		oneOp := c.IsOneOp(step)
		if c.isCleanup(step) || oneOp && (metric == MetricP99 || PerOpMetric(metric)) {
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
		row := BenchRow{Step: step, Unit: unit, LowerBetter: metric != MetricThroughput || oneOp}
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
	c.EachStep(step, func(s StepReport) { cleanup = cleanup || s.Kind == "cleanup" })
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
func medianCIRuns() int {
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
}
