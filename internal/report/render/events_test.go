package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// A label whose ops are several statements (sysbench's transactions) shows its queries
// per second as the throughput and its transactions per second beside them; JSON has
// both.
func TestEventsShown(t *testing.T) {
	ro := metrics.LabelStats{Label: "read-only", Role: "query", Unit: metrics.UnitOps,
		Statements: 16000, Events: 1000, Rows: 14000, Service: reporttest.Lat(900, 1500, 2100, 4800, 9000)}
	run := store.Run{ID: 1, RunMeta: store.RunMeta{Workload: "sysbench", Engine: "sqlite", StartedAt: time.Unix(0, 0).UTC()}, Status: "ok",
		Steps: []store.Step{{Seq: 0, Group: "range-agg", Result: metrics.StepResult{Name: "read-only.range=10", Status: metrics.StatusOK,
			Seconds: 2, Kind: "read", Primary: "read-only", Labels: []metrics.LabelStats{ro}}}}}
	rep := report.Build([]store.Run{run})
	rep.Location = time.UTC
	var text bytes.Buffer
	if err := Text(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "8000 q/s") || !strings.Contains(text.String(), "read-only 8000/s (500 tx/s) p99 2.1ms") {
		t.Errorf("text:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			Steps []struct {
				Ops map[string]struct {
					Count        int64   `json:"count"`
					PerSec       float64 `json:"per_sec"`
					Statements   int64   `json:"statements"`
					Events       int64   `json:"events"`
					EventsPerSec float64 `json:"events_per_sec"`
				} `json:"ops"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if o := got.Runs[0].Steps[0].Ops["read-only"]; o.Count != 16000 || o.PerSec != 8000 || o.Statements != 16000 || o.Events != 1000 || o.EventsPerSec != 500 {
		t.Errorf("json: %+v", o)
	}
}
