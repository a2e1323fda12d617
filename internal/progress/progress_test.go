package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

func TestLine(t *testing.T) {
	iv := metrics.Interval{Start: 2 * time.Second, End: 3 * time.Second, Labels: []metrics.LabelStats{
		{Label: "insert", Unit: metrics.UnitRows, Statements: 20, Rows: 1000, Service: metrics.Latency{P99: 1500}},
		{Label: "point-query", Unit: metrics.UnitOps, Statements: 4321, Rows: 43210, Service: metrics.Latency{P99: 310}, Errors: 2},
	}}
	got := Line("qp1000", 3*time.Second, 30*time.Second, iv)
	want := "qp1000       3s/30s  insert 1000/s p99 1.5ms  point-query 4321/s p99 310µs (2 errors)"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestQuietWritesNothing(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, true, true)
	p.Start("l.i0", 0)
	p.Interval("l.i0", metrics.Interval{End: time.Second})
	p.Finish(metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK})
	if b.Len() != 0 {
		t.Fatalf("disabled progress wrote %q", b.String())
	}
}

func TestFinishEndsLine(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, true, false)
	p.Start("l.i0", 0)
	p.Finish(metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, Seconds: 2, Primary: "insert",
		Labels: []metrics.LabelStats{{Label: "insert", Unit: metrics.UnitRows, Rows: 200000}}})
	if !strings.HasSuffix(b.String(), "insert 100000 rows/s\n") {
		t.Fatalf("finish line: %q", b.String())
	}
}

// Not on a terminal: one plain line per finished step (a log shows the run is alive), no
// live line and no terminal escapes.
func TestNotTerminalPrintsFinishedSteps(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, false, false)
	p.Start("l.i0", 0)
	p.Interval("l.i0", metrics.Interval{End: time.Second})
	p.Finish(metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, Seconds: 2, Primary: "insert",
		Labels: []metrics.LabelStats{{Label: "insert", Unit: metrics.UnitRows, Rows: 200000}}})
	p.Start("l.x", 0)
	p.Finish(metrics.StepResult{Name: "l.x", Status: metrics.StatusOK, Seconds: 1})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "l.i0") || !strings.HasSuffix(lines[0], "insert 100000 rows/s") ||
		!strings.HasPrefix(lines[1], "l.x") || strings.Contains(b.String(), "\x1b") || strings.Contains(b.String(), "\r") {
		t.Fatalf("output %q", b.String())
	}
}

// TestLiveLineKeptRate (issue 42): a writer of batches of 50 rows at 100/s whose seconds
// hold 50, 150, 100, … rows shows on the live line the rate it kept (100/s within a
// tenth once 5 s are in), as the report does; a label without a target shows its second's.
func TestLiveLineKeptRate(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, true, false)
	p.Start("qp100", 10*time.Second)
	for i, n := range []int64{50, 150, 100, 50, 150, 100, 100, 50, 150, 100} {
		b.Reset()
		p.Interval("qp100", metrics.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Labels: []metrics.LabelStats{
				{Label: "insert", Unit: metrics.UnitRows, Statements: n / 50, Rows: n, TargetPerSec: 100},
				{Label: "point-query", Unit: metrics.UnitOps, Statements: 5000 + 100*int64(i%2), Rows: 50000}}})
		var rate, query float64
		out := b.String()
		if _, err := fmt.Sscanf(out[strings.Index(out, "insert "):], "insert %f/s", &rate); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if _, err := fmt.Sscanf(out[strings.Index(out, "point-query "):], "point-query %f/s", &query); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if i >= 4 && (rate < 90 || rate > 110) || query != float64(5000+100*(i%2)) {
			t.Errorf("second %d: %q: insert at %g/s, point-query %g/s", i+1, out, rate, query)
		}
	}
}
