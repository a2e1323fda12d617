package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// The history renderers' output on a fixed series, golden (go test -update rewrites).
func TestHistoryGolden(t *testing.T) {
	var runs []report.RunReport
	for i := range 18 {
		rate, cpu := 1000.0+float64(i%3)*10, 20.0+float64(i%2)*0.2
		if i >= 9 {
			rate, cpu = 600+float64(i%3)*10, 30+float64(i%2)*0.2
		}
		r := reporttest.HistoryRun(int64(i+1), "h", "15.4", rate, cpu)
		r.Env["build_id"] = "b" + strings.Repeat("0", 3-len(fmt.Sprint(i))) + fmt.Sprint(i)
		runs = append(runs, r)
	}
	h, err := report.BuildHistory(runs, report.HistoryOptions{Metrics: []string{report.MetricThroughput, "cpupq"}, Detect: reporttest.Detect()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"history.txt.golden", func(b *bytes.Buffer) error { return HistoryText(b, h) }},
		{"history.md.golden", func(b *bytes.Buffer) error { return HistoryMarkdown(b, h) }},
		{"history.json.golden", func(b *bytes.Buffer) error { return HistoryJSON(b, h) }},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
	}
}

// The history renderers name the regression of reporttest.ChangeSeries; the HTML page
// lists each run's build id and start time and has a chart per series and metric.
func TestHistoryRenderersNameTheChange(t *testing.T) {
	h, err := report.BuildHistory(reporttest.ChangeSeries(), report.HistoryOptions{Metrics: []string{report.MetricThroughput, "cpupq"}, Detect: reporttest.Detect()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, render := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return HistoryText(b, h) },
		func(b *bytes.Buffer) error { return HistoryMarkdown(b, h) },
		func(b *bytes.Buffer) error { return HistoryJSON(b, h) },
		func(b *bytes.Buffer) error { return HistoryHTML(b, h, "") },
	} {
		buf.Reset()
		if err := render(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "worse") {
			t.Errorf("output does not name the regression:\n%s", buf.String())
		}
	}
	// The runs table names each run's build id and start time (run 1 started at 01:00).
	for _, want := range []string{"<th>build id</th><th>started (UTC)</th>",
		"<td>1</td><td>1</td><td></td><td>15.4</td><td>nightly-1</td><td>2026-01-01 01:00</td>"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the HTML page lacks %s", want)
		}
	}
	// Each series' two tables scroll sideways in their own box (issue 42), as the
	// report's do: a long label or build id never widens the page.
	if n := strings.Count(buf.String(), `<div class="scroll"><table>`); n != 4 {
		t.Errorf("%d tables in a scrolling box, want 4 (2 series × 2 tables)", n)
	}
	if !strings.Contains(buf.String(), "<svg") || strings.Count(buf.String(), "<svg") != 4 {
		t.Errorf("the HTML page has %d charts, want 4 (2 series × 2 metrics)", strings.Count(buf.String(), "<svg"))
	}
}

// HistoryText fits its runs line and its table to the writer's width (Fit), as the
// report's text does: no line over it, every step and metric still there.
func TestHistoryTextFits(t *testing.T) {
	h, err := report.BuildHistory(reporttest.ChangeSeries(), report.HistoryOptions{Metrics: []string{report.MetricThroughput, "cpupq"}, Detect: reporttest.Detect()})
	if err != nil {
		t.Fatal(err)
	}
	var wide, narrow bytes.Buffer
	if err := HistoryText(&wide, h); err != nil {
		t.Fatal(err)
	}
	if err := HistoryText(Fit(&narrow, 90), h); err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, l := range strings.Split(wide.String(), "\n") {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	if longest <= 90 {
		t.Fatalf("the unfitted history's longest line is %d: the test needs a wider one", longest)
	}
	for _, l := range strings.Split(narrow.String(), "\n") {
		if utf8.RuneCountInString(l) > 90 {
			t.Errorf("line of %d runes over 90: %q", utf8.RuneCountInString(l), l)
		}
	}
	for _, want := range []string{"throughput", "cpupq", "worse"} {
		if !strings.Contains(narrow.String(), want) {
			t.Errorf("fitted history lacks %q:\n%s", want, narrow.String())
		}
	}
}
