package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
	if !strings.Contains(buf.String(), "<svg") || strings.Count(buf.String(), "<svg") != 4 {
		t.Errorf("the HTML page has %d charts, want 4 (2 series × 2 metrics)", strings.Count(buf.String(), "<svg"))
	}
}
