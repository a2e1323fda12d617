package render

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/chart"
	"github.com/dbperf/dbperf/internal/stats"
)

// pageTemplate is the HTML report: one self-contained page (inline CSS, charts as inline
// SVG, no script, no external resource), so it opens offline and can be mailed around.
// Cell colours are the reference's (§2.3): red #FF9A9A worse, green #81FFA6 better, grey
// #D7D7D7 the same; a relative cell gets one only from its ratio's verdict (unstable and
// no-verdict cells have none). A relative cell's title tells its interval, pairing,
// verdict and the smallest change its trials can detect. A table wider than the window
// scrolls sideways in its own box (div.scroll), its first two head columns (the config,
// the metric and config) staying in view; so does a chart wider than the window.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.8em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #999; padding: 4px 8px; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.base th, tr.base td { font-weight: bold; }
td.better { background: #81FFA6; } td.worse, td.sla-miss { background: #FF9A9A; }
td.same, td.target { background: #D7D7D7; }
ul.notes { font-size: 0.9em; }
p.legend { font-size: 0.85em; color: #555; margin: 0.2em 0; }
figure { display: inline-block; margin: 0.5em 1em 0.5em 0; vertical-align: top; max-width: 100%; overflow-x: auto; overflow-y: hidden; }
div.scroll { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
div.scroll table { border-collapse: separate; border-spacing: 0; }
div.scroll th, div.scroll td { border-width: 0 1px 1px 0; }
div.scroll tr:first-child > * { border-top-width: 1px; } div.scroll tr > :first-child { border-left-width: 1px; }
div.scroll tr > .h0, div.scroll tr > .h1 { position: sticky; left: 0; background: #fff; z-index: 1; }
div.scroll tr > .h0.of2 { box-sizing: border-box; width: 9em; min-width: 9em; max-width: 9em; }
div.scroll tr > .h1 { left: 9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<ul>
{{- range .Groups}}
<li><b>{{.Name}}</b>{{if .Base}} (base){{end}}: {{.Describe}}</li>
{{- end}}
</ul>
{{- range .Tables}}
<h2 id="{{.ID}}">{{.Title}}</h2>
<div class="scroll">
<table>
{{- $t := .}}
<tr>{{range $i, $h := .Head}}<th{{$t.HeadClass $i}}>{{$h}}</th>{{end}}</tr>
{{- range .Rows}}
<tr{{if .Base}} class="base"{{end}}>{{range $i, $h := .Head}}<th{{$t.HeadClass $i}}>{{$h}}</th>{{end}}{{range .Cells}}<td class="num{{if .Class}} {{.Class}}{{end}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</table>
</div>
{{- range .Legend}}
<p class="legend">{{.}}</p>
{{- end}}
{{- end}}
{{- if .Notes}}
<h2 id="notes">Notes</h2>
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- range .Sections}}
<h2{{if .ID}} id="{{.ID}}"{{end}}>{{.Title}}</h2>
{{- range .Legend}}
<p class="legend">{{.}}</p>
{{- end}}
{{- range .Charts}}
<figure>{{.}}</figure>
{{- end}}
{{- end}}
</body>
</html>
`

type htmlPage struct {
	Title    string
	Groups   []htmlGroup
	Tables   []htmlTable
	Notes    []string
	Sections []htmlSection
}

type htmlGroup struct {
	Name, Describe string
	Base           bool
}

type htmlTable struct {
	ID, Title string
	Head      []string
	// Heads is how many of the first columns are the rows' heads (config, metric).
	Heads  int
	Rows   []htmlRow
	Legend []string
}

// HeadClass is the class attribute of column i's cells: the first two head columns
// stay in view while the table scrolls sideways (h0, h1; h0 of a fixed width when h1
// follows it, "of2"), the others none.
func (t htmlTable) HeadClass(i int) template.HTMLAttr {
	switch {
	case i == 0 && t.Heads > 1:
		return ` class="h0 of2"`
	case i == 0 && t.Heads == 1:
		return ` class="h0"`
	case i == 1 && t.Heads > 1:
		return ` class="h1"`
	}
	return ""
}

type htmlRow struct {
	Base  bool
	Head  []string
	Cells []htmlCell
}

type htmlCell struct {
	Text, Class, Title string
}

type htmlSection struct {
	ID, Title string
	// Legend is what to read the charts by, and notes on what is left out.
	Legend []string
	Charts []template.HTML
}

// HTML writes rep as one self-contained HTML page: the comparison's tables (rep.
// Comparison; every run its own config when nil) and charts drawn as inline SVG:
// relative throughput and HW efficiency per step, each step's throughput and p50/p99
// latency over time (one line per run and percentile), the background writers' rate with
// its target, and, when two configs are compared whose runs stored CPU profiles, the
// differential flame graphs of the steps and roles whose CPU per operation changed most
// (Comparison.FlameDiffs, FlameSVG).
func HTML(w io.Writer, rep report.Report) error {
	c := rep.Compared()
	page := htmlPage{Title: "dbperf report"}
	for _, n := range c.Notes {
		page.Notes = append(page.Notes, n.Text)
	}
	for i, g := range c.Groups {
		page.Groups = append(page.Groups, htmlGroup{Name: g.Name, Describe: g.Describe(), Base: i == c.Base})
	}
	for _, t := range c.Tables {
		if len(t.Rows) == 0 {
			continue
		}
		ht := htmlTable{ID: t.ID, Title: t.Title, Head: append(append([]string{}, t.HeadColumns...), t.Columns...), Heads: len(t.HeadColumns),
			Legend: append(t.MDELines(), t.Legend...)}
		for _, r := range t.Rows {
			hr := htmlRow{Base: r.Base, Head: r.Head}
			for _, cell := range r.Cells {
				shown := r.Shown(cell)
				hc := htmlCell{Text: cellText(cell, shown, false), Class: string(shown)}
				if cell.Rel != nil && !r.Base {
					hc.Title = relTitle(*cell.Rel)
				}
				hr.Cells = append(hr.Cells, hc)
			}
			ht.Rows = append(ht.Rows, hr)
		}
		page.Tables = append(page.Tables, ht)
	}
	sections, err := charts(rep, c)
	if err != nil {
		return err
	}
	flames, err := flameSection(c)
	if err != nil {
		return err
	}
	if flames != nil {
		sections = append(sections, *flames)
	}
	page.Sections = sections
	tmpl, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("render: HTML template: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("render: execute the HTML template: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("render: write HTML: %w", err)
	}
	return nil
}

// relTitle is a relative cell's tooltip: the ratio, its interval and how it was computed,
// the verdict, the smallest change the trials can detect (mde_pct) and their noise.
func relTitle(r report.Rel) string {
	trials := fmt.Sprintf("%d vs %d trials", r.NA, r.NB)
	switch {
	case r.Steps > 0:
		trials = fmt.Sprintf("geometric mean of %s' ratios", report.Plural(r.Steps, "step"))
	case r.Paired:
		trials = fmt.Sprintf("paired by block, %d pairs", r.Pairs)
	}
	if !r.HasCI {
		return fmt.Sprintf("ratio %.3f (%s): too few for an interval, no verdict", r.Estimate, trials)
	}
	th := report.FormatPct(100 * r.Threshold)
	verdict := ""
	switch r.Verdict {
	case stats.VerdictHigher, stats.VerdictLower:
		verdict = string(r.Verdict) + " than the base: " + string(r.Class())
	case stats.VerdictSame:
		verdict = "the same within ±" + th
	case stats.VerdictUnstable:
		verdict = "unstable: the trials' noise at this n exceeds the ±" + th + " threshold"
	}
	out := fmt.Sprintf("ratio %.3f, %.0f%% interval %.3f–%.3f (%s); %s", r.Estimate, 100*r.Confidence, r.Lo, r.Hi, trials, verdict)
	if r.HasMDE {
		out += fmt.Sprintf("; smallest detectable change %s (80%% power)", report.FormatPct(r.MDEPct))
	}
	if r.NoisePct > 0 {
		out += fmt.Sprintf("; trials' noise %s", report.FormatPct(r.NoisePct))
	}
	return out
}

// charts draws the page's charts, grouped in sections.
func charts(rep report.Report, c report.Comparison) ([]htmlSection, error) {
	var sections []htmlSection
	add := func(title string, svgs []string, legend ...string) {
		if len(svgs) == 0 {
			return
		}
		s := htmlSection{Title: title, Legend: legend}
		for _, svg := range svgs {
			s.Charts = append(s.Charts, template.HTML(svg)) // #nosec: our own chart package's SVG
		}
		sections = append(sections, s)
	}
	var svgs []string
	draw := func(svg string, err error) error {
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		svgs = append(svgs, svg)
		return nil
	}

	// Relative throughput per step: one bar per non-base config.
	if bars, ok := relativeChart(c); ok {
		if err := draw(bars.SVG()); err != nil {
			return nil, err
		}
	}
	add("Relative throughput", svgs, "Each bar is the ratio to the base with its 95% interval (the whisker) and the table's mark: "+
		markBetter+" better, "+markWorse+" worse, "+markSame+" the same, "+markUnstable+" unstable; a pale bar with a dashed edge has no verdict "+
		"(unstable, or too few trials for an interval): it shows a value, not a change.")

	// A concurrency axis (a sweep's --clients, sysbench's --threads): per step, the rate by
	// count, one line per config.
	svgs = nil
	if conc := tableByID(c, "concurrency"); conc != nil {
		for _, line := range concurrencyLines(conc) {
			if err := draw(line.SVG()); err != nil {
				return nil, err
			}
		}
	}
	add("Throughput by concurrency", svgs)

	// HW efficiency: one bar chart per metric that some config measured.
	svgs = nil
	for _, bars := range hwCharts(c) {
		if err := draw(bars.SVG()); err != nil {
			return nil, err
		}
	}
	add("HW efficiency", svgs)

	// Per step: throughput and p99 latency of the primary op over time, one line per run.
	over, shortNote, err := overTimeCharts(c)
	if err != nil {
		return nil, err
	}
	svgs = over
	if len(svgs) == 0 && len(shortNote) > 0 {
		sections = append(sections, htmlSection{Title: "Throughput and latency over time", Legend: shortNote})
	}
	add("Throughput and latency over time", svgs, shortNote...)

	// Background writers: the rate each kept per interval against the target.
	svgs = nil
	var windows []string
	for _, col := range c.BackgroundColumns() {
		if maxIntervals(c, col[0]) == 1 {
			continue // a dot: named with the steps not drawn over time
		}
		line, window := backgroundLine(c, col[0], col[1])
		if len(line.Series) > 0 {
			if err := draw(line.SVG()); err != nil {
				return nil, err
			}
			if window > 1 {
				windows = append(windows, fmt.Sprintf("%s %s: %d s", col[0], col[1], window))
			}
		}
	}
	var keptNote []string
	if len(windows) > 0 {
		keptNote = append(keptNote, "Each point is the rate the writer kept: its rows over the last seconds (up to the point) "+
			"divided by their seconds, over enough seconds that a batch more or less moves it by at most a tenth of the target. "+
			"A writer inserts or deletes a batch of rows at a time, so a single second holds one batch more or less "+
			"(50, 100 or 150 rows at 100/s in batches of 50) though it keeps its rate; the table's rate is over the whole step. "+
			"Seconds averaged: "+strings.Join(windows, ", ")+".")
	}
	add("Background writers", svgs, keptNote...)
	return sections, nil
}

// relativeChart is the bar chart of relative throughput per step, one group per
// non-base config with the table's intervals and marks (relativeBars), one-op steps left
// out; false when no bar has a value.
func relativeChart(c report.Comparison) (chart.Bars, bool) {
	rel := tableByID(c, "relative")
	if rel == nil || len(c.Groups) < 2 {
		return chart.Bars{}, false
	}
	bars := chart.Bars{Title: "Throughput relative to " + c.Groups[c.Base].Name, YLabel: "ratio to the base",
		Categories: c.Steps, Refs: []chart.Ref{{Label: "base = 1", Y: 1}}}
	for _, r := range rel.Rows {
		if r.Base {
			continue
		}
		g := relativeBars(r)
		for i, step := range c.Steps {
			if c.IsOneOp(step) && i < len(g.Values) {
				g.Values[i] = math.NaN() // a ratio of durations: not throughput
				g.Lo[i], g.Hi[i], g.Marks[i] = math.NaN(), math.NaN(), ""
			}
		}
		bars.Groups = append(bars.Groups, g)
	}
	return bars, hasValue(bars.Groups)
}

// hwCharts are a bar chart per charted HW metric that some config measured, a group
// per config.
func hwCharts(c report.Comparison) []chart.Bars {
	hw := tableByID(c, "hw")
	if hw == nil {
		return nil
	}
	var out []chart.Bars
	for _, d := range metrics.HWDefs() {
		if !d.Charted {
			continue
		}
		m := d.Name
		bars := chart.Bars{Title: m + " per step", YLabel: metricAxis(m), Categories: c.Steps}
		for _, r := range hw.Rows {
			if r.Head[0] == m {
				bars.Groups = append(bars.Groups, chart.BarGroup{Name: r.Head[1], Values: medians(r.Cells)})
			}
		}
		if hasValue(bars.Groups) {
			out = append(out, bars)
		}
	}
	return out
}

// concurrencyLines are a concurrency table's charts: per step, the rate by count of
// clients or threads, one line per config.
func concurrencyLines(conc *report.Table) []chart.Line {
	counts := make([]float64, len(conc.Columns))
	for i, col := range conc.Columns {
		n, _ := strconv.Atoi(strings.Fields(col + " x")[0])
		counts[i] = float64(n)
	}
	what := strings.TrimPrefix(conc.Title, "Throughput by ")
	var out []chart.Line
	for _, r := range conc.Rows {
		if r.Head[0] != "" {
			unit := ""
			for _, cell := range r.Cells {
				if cell.Present {
					unit = cell.Unit
				}
			}
			out = append(out, chart.Line{Title: r.Head[0] + ": throughput by " + what, XLabel: what, YLabel: "throughput (" + unit + ")", IntegerX: true})
		}
		se := chart.Series{Name: r.Head[1]}
		for i, cell := range r.Cells {
			if cell.Present && i < len(counts) {
				se.X, se.Y = append(se.X, counts[i]), append(se.Y, cell.Median)
			}
		}
		if len(out) > 0 && len(se.X) > 0 {
			out[len(out)-1].Series = append(out[len(out)-1].Series, se)
		}
	}
	return slices.DeleteFunc(out, func(l chart.Line) bool { return len(l.Series) == 0 })
}

// overTimeCharts are each step's charts over time (overTime, kvIntervalCharts) as SVG,
// and a note naming the steps no run measured over two intervals, which have no line to
// draw.
func overTimeCharts(c report.Comparison) (svgs, note []string, err error) {
	draw := func(svg string, err error) error {
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		svgs = append(svgs, svg)
		return nil
	}
	var short []string
	for _, step := range c.Steps {
		if maxIntervals(c, step) == 1 {
			short = append(short, step)
			continue
		}
		tput, lat := overTime(c, step)
		if len(tput.Series) > 0 {
			if err := draw(tput.SVG()); err != nil {
				return nil, nil, err
			}
		}
		if len(lat.Series) > 0 {
			if err := draw(lat.SVG()); err != nil {
				return nil, nil, err
			}
		}
		for _, lc := range kvIntervalCharts(c, step) {
			if err := draw(lc.SVG()); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(short) > 0 {
		note = append(note, "Not drawn over time, measured over one interval only (a step of about a second or less): "+
			strings.Join(short, ", ")+"; the tables give their figures.")
	}
	return svgs, note, nil
}

// overTime are a step's charts over time: the primary op's throughput, one line per
// run, and its p50 and p99 latency, a colour per config and a dash per percentile.
func overTime(c report.Comparison, step string) (tput, lat chart.Line) {
	tput = chart.Line{Title: step + ": throughput over time", XLabel: "time since step start (s)"}
	lat = chart.Line{Title: step + ": p50 and p99 latency over time", XLabel: "time since step start (s)",
		YLabel: "service time (ms, log scale)", LogY: true}
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			s, ok := r.Step(step)
			if !ok {
				continue
			}
			name := runName(g, r, len(c.Groups))
			ts := chart.Series{Name: name, Group: g.Name}
			p50, p99 := chart.Series{Name: name + " p50", Group: g.Name, Kind: "p50"}, chart.Series{Name: name + " p99", Group: g.Name, Kind: "p99"}
			for _, iv := range s.Intervals {
				for _, o := range iv.Ops {
					if o.Label != s.Primary {
						continue
					}
					tput.YLabel = fmt.Sprintf("%s (%s)", s.Primary, o.RateUnit())
					ts.X, ts.Y = append(ts.X, iv.EndSec), append(ts.Y, o.PerSec)
					if o.Service.P50 > 0 && o.Service.P99 > 0 { // a log axis has no 0
						p50.X, p50.Y = append(p50.X, iv.EndSec), append(p50.Y, float64(o.Service.P50)/1000)
						p99.X, p99.Y = append(p99.X, iv.EndSec), append(p99.Y, float64(o.Service.P99)/1000)
					}
				}
			}
			if len(ts.X) > 0 {
				tput.Series = append(tput.Series, ts)
			}
			if len(p99.X) > 0 {
				lat.Series = append(lat.Series, p50, p99)
			}
		}
	}
	return tput, lat
}

// backgroundLine is the chart of a background writer (role) of step against its target:
// per run, the rate it kept per interval (metrics.KeptRates over metrics.KeptWindow's
// seconds, from its batch and target), and the widest window used.
func backgroundLine(c report.Comparison, step, role string) (chart.Line, int) {
	line := chart.Line{Title: fmt.Sprintf("%s: background %s rate", step, role),
		XLabel: "time since step start (s)", YLabel: role + " (rows/s)"}
	target, widest := 0.0, 0
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			s, ok := r.Step(step)
			if !ok {
				continue
			}
			b, ok := r.BackgroundOf(step, role)
			if !ok {
				continue
			}
			target = max(target, b.TargetPerSec)
			batch := 1.0
			for _, o := range s.Ops {
				if o.Label == b.Label {
					batch = o.Batch()
				}
			}
			ser := chart.Series{Name: runName(g, r, len(c.Groups))}
			var counts, secs []float64
			for _, iv := range s.Intervals {
				for _, o := range iv.Ops {
					if o.Label == b.Label {
						ser.X = append(ser.X, iv.EndSec)
						counts, secs = append(counts, float64(o.Count)), append(secs, iv.EndSec-iv.StartSec)
					}
				}
			}
			window := metrics.KeptWindow(batch, b.TargetPerSec, slices.Max(append(secs, 0)))
			widest = max(widest, window)
			ser.Y = metrics.KeptRates(counts, secs, window)
			if len(ser.X) > 0 {
				line.Series = append(line.Series, ser)
			}
		}
	}
	if target > 0 {
		line.Refs = []chart.Ref{{Label: fmt.Sprintf("target %s/s", formatRate(target)), Y: target}}
	}
	return line, widest
}

// maxIntervals is the most intervals a run of the comparison measured step over.
func maxIntervals(c report.Comparison, step string) int {
	n := 0
	for _, g := range c.Groups {
		for _, r := range g.Runs {
			if s, ok := r.Step(step); ok {
				n = max(n, len(s.Intervals))
			}
		}
	}
	return n
}

// kvIntervalCharts are a key-value step's engine figures over time, one line per run,
// drawn under its throughput chart on the same time axis so a dip lines up with what
// the LSM tree did: the share of each interval writes were stalled, and the L0 files
// at the end of each interval. Only steps that wrote get them; a chart no run has a
// figure for is left out.
func kvIntervalCharts(c report.Comparison, step string) []chart.Line {
	specs := []struct{ metric, title, yLabel string }{
		{metrics.MetricKVStallPct, "write stalls over time", "time writes were stalled (% of interval)"},
		{metrics.MetricKVL0Files, "L0 files over time", "files in L0 at the interval's end"},
	}
	wrote := false
	c.EachStep(step, func(s report.StepReport) {
		for _, o := range s.Ops {
			wrote = wrote || o.Role == "write" && o.Statements > 0
		}
	})

	if !wrote {
		return nil // reads only: nothing stalls, and L0 changes only by compactions already owed
	}
	var out []chart.Line
	for _, sp := range specs {
		line := chart.Line{Title: step + ": " + sp.title, XLabel: "time since step start (s)", YLabel: sp.yLabel}
		for _, g := range c.Groups {
			for _, r := range g.Runs {
				s, ok := r.Step(step)
				if !ok {
					continue
				}
				ser := chart.Series{Name: runName(g, r, len(c.Groups))}
				for _, iv := range s.Intervals {
					if v, ok := iv.Metrics[sp.metric]; ok {
						ser.X, ser.Y = append(ser.X, iv.EndSec), append(ser.Y, v)
					}
				}
				if len(ser.X) > 0 {
					line.Series = append(line.Series, ser)
				}
			}
		}
		if len(line.Series) > 0 {
			out = append(out, line)
		}
	}
	return out
}

func tableByID(c report.Comparison, id string) *report.Table {
	for i := range c.Tables {
		if c.Tables[i].ID == id {
			return &c.Tables[i]
		}
	}
	return nil
}

func medians(cells []report.Cell) []float64 {
	out := make([]float64, len(cells))
	for i, c := range cells {
		out[i] = math.NaN()
		if c.Present {
			out[i] = c.Median
		}
	}
	return out
}

// relativeBars is a relative row as bars with the same marks as its cells (cellText):
// each ratio's interval as a whisker and its verdict's mark above it; a ratio without a
// verdict, or one the noise makes unstable, is a faint bar, so no bar looks surer than
// its statistics.
func relativeBars(r report.Row) chart.BarGroup {
	n := len(r.Cells)
	g := chart.BarGroup{Name: r.Head[0], Values: medians(r.Cells), Lo: make([]float64, n), Hi: make([]float64, n),
		Faint: make([]bool, n), Marks: make([]string, n)}
	for i, c := range r.Cells {
		g.Lo[i], g.Hi[i] = math.NaN(), math.NaN()
		if !c.Present || c.Rel == nil {
			continue
		}
		if c.Rel.HasCI {
			g.Lo[i], g.Hi[i] = c.Rel.Lo, c.Rel.Hi
		}
		switch r.Shown(c) {
		case report.ClassBetter:
			g.Marks[i] = markBetter
		case report.ClassWorse:
			g.Marks[i] = markWorse
		case report.ClassSame:
			g.Marks[i] = markSame
		case report.ClassUnstable:
			g.Marks[i], g.Faint[i] = markUnstable, true
		default:
			g.Faint[i] = true // no verdict: too few trials for an interval
		}
	}
	return g
}

func hasValue(groups []chart.BarGroup) bool {
	for _, g := range groups {
		for _, v := range g.Values {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

func metricAxis(m string) string {
	d, _ := metrics.DefOf(m)
	switch {
	case d.Unit == "µs/op":
		return m + " (CPU µs per op)"
	case d.Unit == "" && d.Basis == metrics.PerRow:
		return m + " (per inserted row)"
	case d.Unit == "":
		return m + " (per op)"
	default:
		return m + " (" + d.Unit + ")"
	}
}

// runName names a run in a chart legend: its config, and its id when configs have
// several runs or there is more than one config.
func runName(g report.GroupReport, r report.RunReport, groups int) string {
	if len(g.Runs) == 1 && groups == 1 {
		return g.Name
	}
	if len(g.Runs) == 1 && g.Name == fmt.Sprintf("run %d", r.ID) {
		return g.Name
	}
	return fmt.Sprintf("%s #%d", g.Name, r.ID)
}

// flameSection is the page's "CPU profile differences": a differential flame graph per
// step and role (Comparison.FlameDiffs), nil when there is none.
func flameSection(c report.Comparison) (*htmlSection, error) {
	diffs, notes := c.FlameDiffs()
	if len(diffs) == 0 && len(notes) == 0 {
		return nil, nil
	}
	sec := htmlSection{ID: "cpu-profile-differences", Title: "CPU profile differences"}
	if len(diffs) > 0 {
		sec.Legend = report.FlameLegend(diffs[0].Base, diffs[0].New)
	}
	sec.Legend = append(sec.Legend, notes...)
	for _, d := range diffs {
		var b bytes.Buffer
		if err := FlameSVG(&b, d.Root, d.Title()); err != nil {
			return nil, err
		}
		sec.Charts = append(sec.Charts, template.HTML(b.String())) // #nosec: our own SVG, every text escaped
	}
	return &sec, nil
}
