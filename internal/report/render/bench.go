package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/stats"
)

// Bench writes BenchTables like benchstat: per metric a table of step, each
// config's "median ± x% (n=N)" (± the larger distance from the median to the ends of its
// 95% confidence interval; one run: the value alone), then per other config its ratio
// to the base as a change with the 95% interval ("+4.1% [+1.2% +7.0%]", "~" when the
// verdict is the same, "?" when unstable, the estimate in parentheses when there are too
// few runs for a verdict) and the minimum detectable effect; a legend at the end. On a
// writer with a width (Fit) a wider table goes in blocks of columns, the step repeated.
func Bench(w io.Writer, tables []report.BenchTable) error {
	width := Columns(w)
	var buf bytes.Buffer
	tooFew, noMedianCI := false, false
	var paired, notes []string
	var t0 report.BenchTable
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
		tb := newTable(&buf, 1).fit(width)
		for i, h := range head {
			if h == "mde" {
				tb.glue(i) // a change's mde stays beside it
			}
		}
		tb.row(head...)
		// Which way is better: said once in the title when every row agrees, else on the
		// rows that differ from the table's kind (a one-op step's duration among rates).
		allLower := len(t.Rows) > 0
		for _, r := range t.Rows {
			allLower = allLower && r.LowerBetter
		}
		for _, r := range t.Rows {
			line := []string{r.Step}
			if r.LowerBetter && !allLower {
				line[0] += " (time: lower is better)"
			}
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
			tb.row(line...)
		}
		var units []string
		for _, r := range t.Rows {
			if r.Unit != "" && !slices.Contains(units, r.Unit) {
				units = append(units, r.Unit)
			}
		}
		title := t.Metric
		if len(units) > 0 && t.Metric != report.MetricP99 { // p99's values carry their unit
			title += " (" + strings.Join(units, ", ") + ")"
		}
		if allLower {
			title += ", lower is better"
		}
		writeWrapped(&buf, width, "", "  ", fmt.Sprintf("%s: %s vs %s (base)", title, report.Printable(strings.Join(others, ", ")), report.Printable(t.Configs[t.Base])))
		if len(t.Rows) == 0 {
			fmt.Fprintf(&buf, "  no step of these runs has %s\n", t.Metric)
			continue
		}
		if err := tb.flush(); err != nil {
			return err
		}
	}
	if len(tables) > 0 {
		benchLegend(&buf, width, t0, noMedianCI, tooFew, paired, notes)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write comparison: %w", err)
	}
	return nil
}

// benchLegend is Bench's legend, wrapped to width: what a cell says, the marks, which
// configs were paired, what a verdict needs (tooFew) and the tables' notes.
func benchLegend(buf *bytes.Buffer, width int, t0 report.BenchTable, noMedianCI, tooFew bool, paired, notes []string) {
	line := func(format string, args ...any) { writeWrapped(buf, width, "  ", "  ", fmt.Sprintf(format, args...)) }
	ci := "median ± the larger distance to the ends of its 95% confidence interval, n runs"
	if noMedianCI {
		ci += fmt.Sprintf(" (fewer than %d runs: to the min or max instead)", t0.MedianCIRuns)
	}
	line("%s", ci)
	line("%s", "X vs BASE: X's figure ÷ the base's as a change, with its 95% confidence interval (Hodges–Lehmann);"+
		" mde: the smallest change these runs would detect (80% power)")
	pct := 100 * t0.Threshold
	line("~ the same: the interval lies within ±%g%%; ? unstable: the interval is wider than that yet shows"+
		" no change beyond it (more noise than the threshold at these n); no mark: higher or lower by more than %g%%", pct, pct)
	if len(paired) > 0 {
		line("paired by block (the runs of one sweep's block ran side by side): %s", report.Printable(strings.Join(paired, ", ")))
	}
	if tooFew {
		line("(+x%%) no verdict: too few runs for an interval; a verdict needs %d runs per config, or %d trial pairs"+
			" (dbperf run … --repeat %d --label NAME)", t0.NeedN, t0.NeedPairs, t0.NeedN)
	}
	for _, n := range notes {
		line("%s", report.Printable(n))
	}
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
