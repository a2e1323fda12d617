package report_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// A series whose throughput drops by 35% at its 9th run (and whose CPU per row rises)
// has one change point there, a regression for both metrics; a steady series on another
// host (so another series) has none.
func TestHistoryFindsTheChange(t *testing.T) {
	runs := reporttest.ChangeSeries()
	h, err := report.BuildHistory(runs, report.HistoryOptions{Metrics: []string{report.MetricThroughput, "cpupq"}, Detect: reporttest.Detect()})
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

}

// Runs differing in what must match fall in separate series; the engine version does not
// separate them (it is the x-axis of a sweep), and --order version orders by it.
func TestHistorySeriesAndOrder(t *testing.T) {
	a := reporttest.HistoryRun(1, "h", "15.4", 1000, 20)
	b := reporttest.HistoryRun(2, "h", "9.6.24", 900, 20)
	c := reporttest.HistoryRun(3, "h", "13.1", 950, 20)
	other := reporttest.HistoryRun(4, "h", "15.4", 1000, 20)
	other.Params = map[string]any{"scale": "small", "profile": "nightly", "clients": json.Number("1")}
	failed := reporttest.HistoryRun(5, "h", "15.4", 1, 20)
	failed.Status = store.RunFailed
	h, err := report.BuildHistory([]report.RunReport{a, b, c, other, failed}, report.HistoryOptions{Order: report.OrderVersion, Detect: reporttest.Detect()})
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
	if _, err := report.BuildHistory(nil, report.HistoryOptions{Metrics: []string{"bogus"}}); err == nil {
		t.Error("unknown metric accepted")
	}
}

// Series whose headings would read the same are told apart by what differs between them
// (issue 42: three series headed alike differed in --server-memory and --rows); a heading
// that is unique already is left as it is.
func TestHistorySeriesNamedByWhatDiffers(t *testing.T) {
	run := func(id int64, params map[string]any) report.RunReport {
		r := reporttest.HistoryRun(id, "h", "15.4", 1000, 20)
		r.Params = params
		return r
	}
	h, err := report.BuildHistory([]report.RunReport{
		run(1, map[string]any{"scale": "tiny", "rows": json.Number("100000")}),
		run(2, map[string]any{"scale": "tiny", "rows": json.Number("200000")}),
		run(3, map[string]any{"scale": "tiny", "rows": json.Number("200000"), "server_memory": "128M"}),
		run(4, map[string]any{"scale": "small"}),
	}, report.HistoryOptions{Detect: reporttest.Detect()})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	seen := map[string]bool{}
	for _, s := range h.Series {
		titles = append(titles, s.Title)
		if seen[s.Title] {
			t.Errorf("two series headed %q", s.Title)
		}
		seen[s.Title] = true
	}
	want := []string{"rows 100000, server_memory –", "rows 200000, server_memory –", "rows 200000, server_memory 128M"}
	for i, w := range want {
		if i >= len(titles) || !strings.HasSuffix(titles[i], w) {
			t.Errorf("series %d: %q, want it to end in %q (all: %q)", i, titles[i], w, titles)
		}
	}
	if len(titles) == 4 && strings.Contains(titles[3], "rows") {
		t.Errorf("a unique heading grew: %q", titles[3])
	}
	if got := report.Plural(3, "series"); got != "3 series" {
		t.Errorf("Plural(3, series) = %q", got)
	}
}
