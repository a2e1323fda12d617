package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
)

// MetricThroughput names a step's throughput in CompareTwo (the default metric).
const MetricThroughput = "throughput"

// CompareMetrics are the metrics CompareTwo accepts.
func CompareMetrics() []string {
	return append([]string{MetricThroughput}, metrics.MetricNames()...)
}

// TwoWay is benchstat's view of two configs: per step, each side's median and spread,
// the change and its p-value.
type TwoWay struct {
	A, B   string
	Metric string
	Rows   []TwoWayRow
	NeedN  int
}

// TwoWayRow is one step of a TwoWay.
type TwoWayRow struct {
	Step string
	stats.Comparison
	// Missing says which side did not measure the step ("" when both did).
	Missing string
}

// CompareTwo compares metric (MetricThroughput or a metrics.MetricNames name) of two
// configs step by step, a being the base; rep must hold both configs' runs.
func CompareTwo(rep Report, a, b Group, metric string) (TwoWay, error) {
	if !slices.Contains(CompareMetrics(), metric) {
		return TwoWay{}, fmt.Errorf("unknown metric %q", metric)
	}
	c := Compare(rep, []Group{a, b}, 0)
	tw := TwoWay{A: a.Name, B: b.Name, Metric: metric, NeedN: c.NeedN}
	for _, step := range c.Steps {
		get := throughputOf(step)
		if metric != MetricThroughput {
			get = metricOf(step, metric)
		}
		va, vb := values(c.Groups[0], get), values(c.Groups[1], get)
		row := TwoWayRow{Step: step}
		switch {
		case len(va) == 0 && len(vb) == 0:
			continue
		case len(va) == 0:
			row.Missing = a.Name
		case len(vb) == 0:
			row.Missing = b.Name
		}
		row.Comparison = stats.Compare(va, vb)
		tw.Rows = append(tw.Rows, row)
	}
	return tw, nil
}

// RenderTwoWay writes a TwoWay like benchstat: step, A median ± spread (n), B median ±
// spread (n), delta (with ~ when not significant) and the p-value.
func RenderTwoWay(w io.Writer, tw TwoWay) error {
	var buf bytes.Buffer
	unit := "rows/s" // formats like any rate
	if tw.Metric != MetricThroughput {
		unit = metricUnit(tw.Metric)
	}
	rows := [][]string{{"step", tw.A, tw.B, "delta", "p-value"}}
	tooFew := false
	for _, r := range tw.Rows {
		side := func(s stats.Summary) string {
			if s.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%s ± %.0f%% (n=%d)", formatValue(s.Median, unit), s.SpreadPct, s.N)
		}
		delta, p := "-", "-"
		if r.Missing == "" {
			delta = fmt.Sprintf("%+.2f%%", r.DeltaPct)
			if !r.Significant {
				delta += " ~"
			}
			p = fmt.Sprintf("%.3f", r.P)
			tooFew = tooFew || r.TooFew
		}
		rows = append(rows, []string{r.Step, side(r.A), side(r.B), delta, p})
	}
	fmt.Fprintf(&buf, "%s: %s vs %s (base)\n", tw.Metric, tw.B, tw.A)
	writeAligned(&buf, rows, nil, 1)
	fmt.Fprintf(&buf, "  delta = %s's median vs %s's; ~ not significant (Mann-Whitney U, p ≥ %.2f)\n", tw.B, tw.A, stats.DefaultAlpha)
	if tooFew {
		fmt.Fprintf(&buf, "  too few runs for significance: needs at least %d per config (dbperf run … --repeat %d --label NAME)\n", tw.NeedN, tw.NeedN)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}
