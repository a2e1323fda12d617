package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/changepoint"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// historyRun is a finished run whose l.i0 inserts at rate rows/s and costs cpupq µs/row.
func historyRun(id int64, host, version string, rate, cpupq float64) RunReport {
	st := store.Step{ID: id * 10, Seq: 0, Group: "write", Result: metrics.StepResult{
		Name: "l.i0", Status: metrics.StatusOK, Seconds: 10, Kind: "load", Primary: "insert",
		Labels:  []metrics.LabelStats{rowsLabel("insert", int64(rate*10), 0)},
		Metrics: map[string]float64{"cpupq": cpupq},
	}}
	r := store.Run{ID: id, Status: store.RunOK, Steps: []store.Step{st},
		RunMeta: store.RunMeta{Workload: "insertbench", WorkloadVersion: 1, Engine: "postgres", EngineVersion: version,
			Params:    map[string]any{"scale": "tiny", "profile": "nightly", "clients": json.Number("1"), "steps": []any{"l.i0"}},
			Env:       map[string]string{"hostname": host, "cpu_model": "cpu", "cores": "2"},
			StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Hour)}}
	return Build([]store.Run{r}).Runs[0]
}

func testDetect() changepoint.Options {
	o := changepoint.DefaultOptions()
	o.Seed = 1
	return o
}

// A series whose throughput drops by 35% at its 9th run (and whose CPU per row rises)
// has one change point there, a regression for both metrics; a steady series on another
// host (so another series) has none.
func TestHistoryFindsTheChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var runs []RunReport
	for i := range 16 {
		rate, cpu := 1000.0, 20.0
		if i >= 8 {
			rate, cpu = 650, 28
		}
		noise := 1 + (rng.Float64()-0.5)*0.04
		runs = append(runs, historyRun(int64(i+1), "a", "15.4", rate*noise, cpu*noise))
		runs = append(runs, historyRun(int64(100+i), "b", "15.4", 1000*noise, 20*noise))
	}
	runs[0].Env["build_id"] = "nightly-1"
	h, err := BuildHistory(runs, HistoryOptions{Metrics: []string{MetricThroughput, "cpupq"}, Detect: testDetect()})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 2 {
		t.Fatalf("%d series, want 2 (hosts a and b)", len(h.Series))
	}
	for _, s := range h.Series {
		if len(s.Runs) != 16 || len(s.Lines) != 2 {
			t.Fatalf("%s: %d runs, %d lines", s.Title, len(s.Runs), len(s.Lines))
		}
		steady := strings.Contains(s.Title, "host b")
		for _, l := range s.Lines {
			if steady {
				if len(l.Changes) != 0 {
					t.Errorf("steady %s %s: change points %+v", l.Step, l.Metric, l.Changes)
				}
				continue
			}
			if len(l.Changes) != 1 {
				t.Fatalf("%s %s: %d change points, want 1: %+v", l.Step, l.Metric, len(l.Changes), l.Changes)
			}
			c := l.Changes[0]
			if c.Pos != 8 || c.RunID != 9 || !c.Worse {
				t.Errorf("%s %s: change at #%d run %d worse=%v, want #8 run 9 worse", l.Step, l.Metric, c.Pos, c.RunID, c.Worse)
			}
		}
	}
	regs := h.Regressions(10, 30)
	if len(regs) != 2 {
		t.Errorf("regressions ≥30%% in the last 10 runs: %v", regs)
	}
	if regs := h.Regressions(5, 30); len(regs) != 0 {
		t.Errorf("the change is 8 runs old, not within the last 5: %v", regs)
	}
	if regs := h.Regressions(10, 50); len(regs) != 0 {
		t.Errorf("no change is 50%%: %v", regs)
	}

	var buf bytes.Buffer
	for _, render := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return RenderHistoryText(b, h) },
		func(b *bytes.Buffer) error { return RenderHistoryMarkdown(b, h) },
		func(b *bytes.Buffer) error { return RenderHistoryJSON(b, h) },
		func(b *bytes.Buffer) error { return RenderHistoryHTML(b, h) },
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

// Runs differing in what must match fall in separate series; the engine version does not
// separate them (it is the x-axis of a sweep), and --order version orders by it.
func TestHistorySeriesAndOrder(t *testing.T) {
	a := historyRun(1, "h", "15.4", 1000, 20)
	b := historyRun(2, "h", "9.6.24", 900, 20)
	c := historyRun(3, "h", "13.1", 950, 20)
	other := historyRun(4, "h", "15.4", 1000, 20)
	other.Params = map[string]any{"scale": "small", "profile": "nightly", "clients": json.Number("1")}
	failed := historyRun(5, "h", "15.4", 1, 20)
	failed.Status = store.RunFailed
	h, err := BuildHistory([]RunReport{a, b, c, other, failed}, HistoryOptions{Order: OrderVersion, Detect: testDetect()})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 2 {
		t.Fatalf("%d series, want 2 (scale tiny and small; the failed run left out)", len(h.Series))
	}
	var got []string
	for _, r := range h.Series[0].Runs {
		got = append(got, r.X)
	}
	if strings.Join(got, " ") != "9.6.24 13.1 15.4" {
		t.Errorf("x-axis by version: %q", got)
	}
	if _, err := BuildHistory(nil, HistoryOptions{Metrics: []string{"bogus"}}); err == nil {
		t.Error("unknown metric accepted")
	}
}

func TestCompareVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"9.6", "10.1", -1},
		{"10.11.2-MariaDB", "11.4.5-MariaDB", -1},
		{"15.4", "15.4", 0},
		{"15.10", "15.9", 1},
		{"16beta1", "16", 1},
		{"", "1", -1},
	} {
		if got := compareVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersion(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// The history renderers' output on a fixed series, golden (go test -update rewrites).
func TestHistoryGolden(t *testing.T) {
	var runs []RunReport
	for i := range 18 {
		rate, cpu := 1000.0+float64(i%3)*10, 20.0+float64(i%2)*0.2
		if i >= 9 {
			rate, cpu = 600+float64(i%3)*10, 30+float64(i%2)*0.2
		}
		r := historyRun(int64(i+1), "h", "15.4", rate, cpu)
		r.Env["build_id"] = "b" + strings.Repeat("0", 3-len(fmt.Sprint(i))) + fmt.Sprint(i)
		runs = append(runs, r)
	}
	h, err := BuildHistory(runs, HistoryOptions{Metrics: []string{MetricThroughput, "cpupq"}, Detect: testDetect()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"history.txt.golden", func(b *bytes.Buffer) error { return RenderHistoryText(b, h) }},
		{"history.md.golden", func(b *bytes.Buffer) error { return RenderHistoryMarkdown(b, h) }},
		{"history.json.golden", func(b *bytes.Buffer) error { return RenderHistoryJSON(b, h) }},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
	}
}
