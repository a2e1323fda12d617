package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/chart"
)

// describeDetect is one line saying how change points were found.
func describeDetect(h report.History) string {
	d := h.Detect
	return fmt.Sprintf("change points: E-Divisive means, window %d, p ≤ %g (%d permutations), minimum change %g%%",
		d.Window, d.MaxPValue, d.Permutations, d.MinMagnitude*100)
}

// changesText is the text of a line's change points ("none" without any).
func changesText(l report.HistoryLine, s report.HistorySeries) string {
	if len(l.Changes) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range l.Changes {
		parts = append(parts, fmt.Sprintf("run %d (%s): %s → %s, %+.1f%% %s (p %.3g)", c.RunID, s.Runs[c.Pos].X,
			report.FormatNum(c.MeanBefore), report.FormatNum(c.MeanAfter), c.ChangePct, c.Verdict(), c.PValue))
	}
	return strings.Join(parts, "; ")
}

// firstLast are the line's first and last measured values.
func firstLast(l report.HistoryLine) (string, string) {
	first, last := "-", "-"
	for _, v := range l.Values {
		if !math.IsNaN(v) {
			if first == "-" {
				first = report.FormatNum(v)
			}
			last = report.FormatNum(v)
		}
	}
	return first, last
}

// points is how many of the line's runs measured it.
func points(l report.HistoryLine) int {
	n := 0
	for _, v := range l.Values {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// HistoryText writes a history as text: per series its runs, then a line per step
// and metric with its first and last value and its change points, fitted to w's width
// (Columns) as the report's tables are.
func HistoryText(w io.Writer, h report.History) error {
	width := Columns(w)
	var buf bytes.Buffer
	writeWrapped(&buf, width, "", "  ", fmt.Sprintf("%s in order of %s; %s", report.Plural(len(h.Series), "series"), h.Order, describeDetect(h)))
	if len(h.Series) == 0 {
		fmt.Fprintln(&buf, "no finished runs match")
	}
	for _, s := range h.Series {
		buf.WriteString("\n")
		writeWrapped(&buf, width, "", "  ", fmt.Sprintf("%s: %s", report.Printable(s.Title), report.Plural(len(s.Runs), "run")))
		var xs []string
		for i, r := range s.Runs {
			xs = append(xs, fmt.Sprintf("#%d run %d %s", i+1, r.ID, r.X))
		}
		writeWrapped(&buf, width, "  ", "", report.Printable(strings.Join(xs, ", ")))
		t := newTable(&buf, allLeft).fit(width).repeat(2)
		t.row("  step", "metric", "points", "first", "last", "change points")
		for _, l := range s.Lines {
			first, last := firstLast(l)
			t.row("  "+l.Step, l.Metric, fmt.Sprint(points(l)), first, last, changesText(l, s))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write history text: %w", err)
	}
	return nil
}

// HistoryMarkdown writes a history as Markdown tables.
func HistoryMarkdown(w io.Writer, h report.History) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s in order of %s; %s.\n", report.Plural(len(h.Series), "series"), h.Order, describeDetect(h))
	esc := func(s string) string { return strings.ReplaceAll(report.Printable(s), "|", "\\|") }
	for _, s := range h.Series {
		fmt.Fprintf(&buf, "\n### %s (%s)\n\n", esc(s.Title), report.Plural(len(s.Runs), "run"))
		var rows [][]string
		for _, l := range s.Lines {
			first, last := firstLast(l)
			rows = append(rows, []string{esc(l.Step), l.Metric, fmt.Sprint(points(l)), first, last, esc(changesText(l, s))})
		}
		writeMarkdownTable(&buf, []string{"step", "metric", "points", "first", "last", "change points"},
			func(i int) bool { return i >= 2 && i <= 4 }, rows)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write history Markdown: %w", err)
	}
	return nil
}

type jsonHistory struct {
	Order  string              `json:"order"`
	Detect jsonDetect          `json:"detect"`
	Series []jsonHistorySeries `json:"series"`
}

type jsonDetect struct {
	Method       string  `json:"method"`
	Window       int     `json:"window"`
	MaxPValue    float64 `json:"max_p_value"`
	Permutations int     `json:"permutations"`
	MinMagnitude float64 `json:"min_magnitude"`
}

type jsonHistorySeries struct {
	Key   string            `json:"key"`
	Title string            `json:"title"`
	Runs  []jsonHistoryRun  `json:"runs"`
	Lines []jsonHistoryLine `json:"lines"`
}

type jsonHistoryRun struct {
	ID            int64  `json:"id"`
	Label         string `json:"label"`
	StartedAt     string `json:"started_at"`
	EngineVersion string `json:"engine_version"`
	BuildID       string `json:"build_id"`
	X             string `json:"x"`
}

type jsonHistoryLine struct {
	Step         string              `json:"step"`
	Metric       string              `json:"metric"`
	HigherBetter bool                `json:"higher_is_better"`
	Values       []*float64          `json:"values"`
	Changes      []jsonHistoryChange `json:"change_points"`
}

type jsonHistoryChange struct {
	RunID      int64    `json:"run_id"`
	Position   int      `json:"position"`
	MeanBefore float64  `json:"mean_before"`
	MeanAfter  float64  `json:"mean_after"`
	ChangePct  *float64 `json:"change_pct"` // null when the mean before is 0
	PValue     float64  `json:"p_value"`
	Verdict    string   `json:"verdict"`
}

// HistoryJSON writes a history as JSON; an unmeasured value is null.
func HistoryJSON(w io.Writer, h report.History) error {
	out := jsonHistory{Order: h.Order, Series: []jsonHistorySeries{}, Detect: jsonDetect{Method: "e-divisive means",
		Window: h.Detect.Window, MaxPValue: h.Detect.MaxPValue, Permutations: h.Detect.Permutations, MinMagnitude: h.Detect.MinMagnitude}}
	for _, s := range h.Series {
		js := jsonHistorySeries{Key: s.Key, Title: s.Title, Runs: []jsonHistoryRun{}, Lines: []jsonHistoryLine{}}
		for _, r := range s.Runs {
			js.Runs = append(js.Runs, jsonHistoryRun{ID: r.ID, Label: r.Label, StartedAt: r.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
				EngineVersion: r.EngineVersion, BuildID: r.BuildID, X: r.X})
		}
		for _, l := range s.Lines {
			jl := jsonHistoryLine{Step: l.Step, Metric: l.Metric, HigherBetter: l.HigherBetter, Changes: []jsonHistoryChange{}}
			for _, v := range l.Values {
				if math.IsNaN(v) {
					jl.Values = append(jl.Values, nil)
				} else {
					v := v
					jl.Values = append(jl.Values, &v)
				}
			}
			for _, c := range l.Changes {
				jc := jsonHistoryChange{RunID: c.RunID, Position: c.Pos, MeanBefore: c.MeanBefore,
					MeanAfter: c.MeanAfter, PValue: c.PValue, Verdict: c.Verdict()}
				if !math.IsInf(c.ChangePct, 0) && !math.IsNaN(c.ChangePct) {
					pct := c.ChangePct
					jc.ChangePct = &pct
				}
				jl.Changes = append(jl.Changes, jc)
			}
			js.Lines = append(js.Lines, jl)
		}
		out.Series = append(out.Series, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("render: write history JSON: %w", err)
	}
	return nil
}

const historyTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dbperf history</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #999; padding: 4px 8px; }
td.worse { background: #FF9A9A; } td.better { background: #81FFA6; }
p.legend { font-size: 0.85em; color: #555; margin: 0.2em 0; }
figure { display: inline-block; margin: 0.5em 1em 0.5em 0; vertical-align: top; max-width: 100%; overflow-x: auto; }
div.scroll { overflow-x: auto; max-width: 100%; }
</style>
</head>
<body>
<h1>dbperf history</h1>
<p class="legend">{{.Describe}}</p>
{{- range .Series}}
<h2>{{.Title}}</h2>
<div class="scroll"><table>
<tr><th>#</th><th>run</th><th>label</th><th>engine version</th><th>build id</th><th>started (UTC)</th></tr>
{{- range .Runs}}
<tr><td>{{.Pos}}</td><td>{{if $.RunURL}}<a href="{{$.RunURL}}{{.ID}}">{{.ID}}</a>{{else}}{{.ID}}{{end}}</td><td>{{.Label}}</td><td>{{.EngineVersion}}</td><td>{{.BuildID}}</td><td>{{.Started}}</td></tr>
{{- end}}
</table></div>
<div class="scroll"><table>
<tr><th>step</th><th>metric</th><th>change point</th><th>before</th><th>after</th><th>change</th><th>p</th></tr>
{{- range .Changes}}
<tr><td>{{.Step}}</td><td>{{.Metric}}</td><td>#{{.Pos}} run {{if $.RunURL}}<a href="{{$.RunURL}}{{.RunID}}">{{.RunID}}</a>{{else}}{{.RunID}}{{end}}</td><td>{{.Before}}</td><td>{{.After}}</td><td class="{{.Verdict}}">{{.Pct}} {{.Verdict}}</td><td>{{.P}}</td></tr>
{{- else}}
<tr><td colspan="7">no change points</td></tr>
{{- end}}
</table></div>
{{- range .Charts}}
<figure>{{.}}</figure>
{{- end}}
{{- end}}
</body>
</html>
`

type htmlHistory struct {
	Describe string
	RunURL   string
	Series   []htmlHistorySeries
}

type htmlHistorySeries struct {
	Title   string
	Runs    []htmlHistoryRun
	Changes []htmlHistoryChange
	Charts  []template.HTML
}

type htmlHistoryRun struct {
	Pos                                    int
	ID                                     int64
	Label, EngineVersion, BuildID, Started string
}

type htmlHistoryChange struct {
	Step, Metric, Before, After, Pct, P, Verdict string
	Pos                                          int
	RunID                                        int64
}

// HistoryHTML writes a history as one self-contained page: per series its runs, its
// change points, and a chart per step and metric with the change points marked. Every run
// id links to runURL followed by the id (e.g. "/run/" on `dbperf serve`; "" = no links,
// as in a file).
func HistoryHTML(w io.Writer, h report.History, runURL string) error {
	page := htmlHistory{Describe: fmt.Sprintf("%s in order of %s; %s", report.Plural(len(h.Series), "series"), h.Order, describeDetect(h)),
		RunURL: runURL}
	for _, s := range h.Series {
		hs := htmlHistorySeries{Title: fmt.Sprintf("%s (%s)", s.Title, report.Plural(len(s.Runs), "run"))}
		for i, r := range s.Runs {
			hs.Runs = append(hs.Runs, htmlHistoryRun{Pos: i + 1, ID: r.ID, Label: r.Label, EngineVersion: r.EngineVersion,
				BuildID: r.BuildID, Started: r.StartedAt.UTC().Format("2006-01-02 15:04")})
		}
		for _, l := range s.Lines {
			for _, c := range l.Changes {
				hs.Changes = append(hs.Changes, htmlHistoryChange{Step: l.Step, Metric: l.Metric, Pos: c.Pos + 1, RunID: c.RunID,
					Before: report.FormatNum(c.MeanBefore), After: report.FormatNum(c.MeanAfter), Pct: fmt.Sprintf("%+.1f%%", c.ChangePct),
					P: fmt.Sprintf("%.3g", c.PValue), Verdict: c.Verdict()})
			}
			var xs, ys []float64
			for i, v := range l.Values {
				if !math.IsNaN(v) {
					xs, ys = append(xs, float64(i+1)), append(ys, v)
				}
			}
			if len(xs) == 0 {
				continue
			}
			xlabel := "run # (oldest → newest)"
			if h.Order == report.OrderVersion {
				xlabel = "run # (by engine version, oldest → newest)"
			}
			ch := chart.Line{Title: l.Step + " " + l.Metric, XLabel: xlabel, YLabel: historyAxis(l.Metric), IntegerX: true,
				Series: []chart.Series{{Name: l.Step, X: xs, Y: ys}}}
			for _, c := range l.Changes {
				ch.Marks = append(ch.Marks, chart.Mark{Label: fmt.Sprintf("#%d %+.1f%% %s", c.Pos+1, c.ChangePct, c.Verdict()), X: float64(c.Pos + 1)})
			}
			svg, err := ch.SVG()
			if err != nil {
				return fmt.Errorf("render: history chart %s %s: %w", l.Step, l.Metric, err)
			}
			hs.Charts = append(hs.Charts, template.HTML(svg)) // #nosec: our own chart package's SVG
		}
		page.Series = append(page.Series, hs)
	}
	t, err := template.New("history").Parse(historyTemplate)
	if err != nil {
		return fmt.Errorf("render: history HTML template: %w", err)
	}
	if err := t.Execute(w, page); err != nil {
		return fmt.Errorf("render: write history HTML: %w", err)
	}
	return nil
}

// historyAxis labels a metric's axis with its unit.
func historyAxis(metric string) string {
	switch metric {
	case report.MetricThroughput:
		return "throughput (primary op/s)"
	case report.MetricP99:
		return "p99 latency (µs)"
	}
	return metricAxis(metric)
}
