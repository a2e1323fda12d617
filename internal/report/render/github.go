package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dbperf/dbperf/internal/report"
)

// GitHub writes a comparison as a pull-request comment (GitHub-flavoured Markdown):
// the verdicts first, a line per step and config whose throughput or HW figure is
// called better or worse by the comparison's own rule (the marks of every other format),
// or "no change" when none is; then what explains them (the explain commands the report
// prints); then the whole Markdown report folded in a <details> block.
func GitHub(w io.Writer, c report.Comparison) error {
	var buf bytes.Buffer
	var others []string
	for i, g := range c.Groups {
		if i != c.Base {
			others = append(others, mdEscape(g.Name))
		}
	}
	base := ""
	if c.Base >= 0 && c.Base < len(c.Groups) {
		base = mdEscape(c.Groups[c.Base].Name)
	}
	fmt.Fprintf(&buf, "### dbperf: %s against %s\n\n", strings.Join(others, ", "), base)
	var better, worse []string
	unstable, told := 0, 0
	for _, id := range []string{"relative", "hw_relative"} {
		t := tableByID(c, id)
		if t == nil {
			continue
		}
		for _, r := range t.Rows {
			if r.Base {
				continue
			}
			for i, cell := range r.Cells {
				if !cell.Present || cell.Rel == nil || i >= len(t.Columns) {
					continue
				}
				// The relative table's rows are configs; hw_relative's are metric and config.
				config, figure := r.Head[len(r.Head)-1], "throughput"
				if len(r.Head) > 1 {
					figure = strings.Join(r.Head[:len(r.Head)-1], " ")
				} else if c.IsOneOp(t.Columns[i]) {
					figure = "duration (lower is better)"
				}
				what := fmt.Sprintf("**%s** %s %s: %s", mdEscape(config), mdEscape(t.Columns[i]), mdEscape(figure), mdEscape(cellText(cell, r.Shown(cell), true)))
				switch r.Shown(cell) {
				case report.ClassBetter:
					better, told = append(better, what), told+1
				case report.ClassWorse:
					worse, told = append(worse, what), told+1
				case report.ClassSame:
					told++
				case report.ClassUnstable:
					unstable++
				}
			}
		}
	}
	switch {
	case len(better)+len(worse) == 0:
		fmt.Fprintf(&buf, "**No change**: no figure is called better or worse (%d the same within ±2%%, %d that the runs' noise cannot tell).\n", told, unstable)
	default:
		for _, l := range worse {
			fmt.Fprintf(&buf, "- ▼ worse: %s\n", l)
		}
		for _, l := range better {
			fmt.Fprintf(&buf, "- ▲ better: %s\n", l)
		}
		if unstable > 0 {
			fmt.Fprintf(&buf, "\n%d other figures cannot be told from the runs' noise (?).\n", unstable)
		}
	}
	if ps := c.ExplainPointers(); len(ps) > 0 {
		buf.WriteString("\nWhy:\n")
		for _, p := range ps {
			fmt.Fprintf(&buf, "- `%s`\n", strings.ReplaceAll(report.Printable(p), "`", "'"))
		}
	}
	buf.WriteString("\n<details><summary>The tables</summary>\n\n")
	if err := Markdown(&buf, c); err != nil {
		return err
	}
	buf.WriteString("\n</details>\n")
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write the GitHub comment: %w", err)
	}
	return nil
}

// bmfMetric is one measure of one benchmark in the Bencher Metric Format.
type bmfMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// BMF writes a comparison's throughput in the Bencher Metric Format (bencher.dev's JSON,
// which its `bencher run --adapter json` ingests): one benchmark per config and step,
// "CONFIG/STEP", with the measure "throughput" (the median over the config's runs, and
// its 95% interval as lower_value and upper_value when the runs give one), or "duration"
// (seconds) for a one-op step such as an index build. Bencher tracks absolute values per branch and
// tests them itself, so BMF carries each config's own figures, not ratios.
func BMF(w io.Writer, c report.Comparison) error {
	out := map[string]map[string]bmfMetric{}
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	add := func(id, measure string) { // a one-op step's figure is its duration: measure "duration"
		t := tableByID(c, id)
		if t == nil {
			return
		}
		for _, r := range t.Rows {
			for i, cell := range r.Cells {
				if !cell.Present || i >= len(t.Columns) || math.IsNaN(cell.Median) {
					continue
				}
				name := strings.Join(r.Head, "/") + "/" + t.Columns[i]
				if out[name] == nil {
					out[name] = map[string]bmfMetric{}
				}
				m := bmfMetric{Value: cell.Median}
				if cell.HasCI {
					m.Lower, m.Upper = finite(cell.Lo), finite(cell.Hi)
				}
				if c.IsOneOp(t.Columns[i]) {
					out[name]["duration"] = m
				} else {
					out[name][measure] = m
				}
			}
		}
	}
	add("throughput", "throughput")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("render: write BMF: %w", err)
	}
	return nil
}
