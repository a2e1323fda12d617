package report_test

import (
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// TestConcurrencyTables: configs a and b at 1 and 2 clients, 4 runs each; b at 2 clients
// is 1.8× b at 1, a scales 1.2×. The tables: rates by clients, each config relative to
// its 1-client point, each count relative to a; the one-op step is left out; the marks
// are the ratios' verdicts.
func TestConcurrencyTables(t *testing.T) {
	factor := map[[2]int]float64{{0, 1}: 1, {0, 2}: 1.2, {1, 1}: 1, {1, 2}: 1.8}
	jit := []float64{-0.01, 0, 0.012, 0.004}
	var runs []store.Run
	var groups []report.Group
	var points []report.ConcurrencyPoint
	id := int64(1)
	for ci, cfg := range []string{"a", "b"} {
		for _, n := range []int{1, 2} {
			g := report.Group{Name: cfg + "/c" + string(rune('0'+n))}
			for _, j := range jit {
				r := reporttest.RepeatRun(id, g.Name, factor[[2]int{ci, n}], j, 100)
				runs = append(runs, r)
				g.RunIDs = append(g.RunIDs, id)
				id++
			}
			groups = append(groups, g)
			points = append(points, report.ConcurrencyPoint{Config: cfg, Clients: n})
		}
	}
	c := report.Compare(report.Build(runs), groups, 0)
	ts := c.ConcurrencyTables(points)
	if len(ts) != 3 || ts[0].ID != "concurrency" || ts[1].ID != "concurrency_scaling" || ts[2].ID != "concurrency_relative" {
		t.Fatalf("tables %+v", ts)
	}
	cell := func(tb report.Table, step, cfg, col string) report.Cell {
		t.Helper()
		ci := -1
		for i, c := range tb.Columns {
			if c == col {
				ci = i
			}
		}
		cur := ""
		for _, r := range tb.Rows {
			if r.Head[0] != "" {
				cur = r.Head[0]
			}
			if cur == step && r.Head[1] == cfg && ci >= 0 {
				return r.Cells[ci]
			}
		}
		t.Fatalf("%s: no cell %s %s %s", tb.ID, step, cfg, col)
		return report.Cell{}
	}
	for _, tb := range ts {
		for _, r := range tb.Rows {
			if r.Head[0] == "l.x" {
				t.Errorf("%s: the one-op step l.x has a row", tb.ID)
			}
		}
	}
	if v := cell(ts[0], "qp100", "b", "2 clients"); !v.Present || math.Abs(v.Median/cell(ts[0], "qp100", "b", "1 client").Median-1.8) > 0.05 {
		t.Errorf("b's qp100 at 2 clients %+v", v.Summary)
	}
	s := cell(ts[1], "qp100", "b", "2 clients")
	if s.Rel == nil || math.Abs(s.Rel.Estimate-1.8) > 0.05 || s.Rel.Verdict != stats.VerdictHigher || s.Class != report.ClassBetter {
		t.Errorf("b scaling %+v %+v", s.Summary, s.Rel)
	}
	if one := cell(ts[1], "qp100", "a", "1 client"); one.Rel != nil || one.Median != 1 {
		t.Errorf("a's first count is not the base 1: %+v", one)
	}
	r := cell(ts[2], "qp100", "b", "2 clients")
	if r.Rel == nil || math.Abs(r.Rel.Estimate-1.5) > 0.05 || r.Class != report.ClassBetter {
		t.Errorf("b relative to a at 2 clients %+v %+v", r.Summary, r.Rel)
	}
	if same := cell(ts[2], "qp100", "b", "1 client"); same.Rel == nil || same.Rel.Verdict == stats.VerdictHigher || same.Rel.Verdict == stats.VerdictLower {
		t.Errorf("b relative to a at 1 client %+v", same.Rel)
	}
	if ts := c.ConcurrencyTables(points[:2]); ts != nil {
		t.Errorf("points not matching the groups: %d tables", len(ts))
	}
}

// TestThreadTables: a test run at two thread counts (steps x.t1 and x.t2, as sysbench
// --threads 1,2 names them) is shown by thread count, and relative to 1 thread within each
// config; steps without the suffix are not.
func TestThreadTables(t *testing.T) {
	rep, groups := reporttest.ThreadFixture()
	c := report.Compare(rep, groups, 0)
	var ts []report.Table
	for _, tb := range c.Tables {
		if tb.ID == "concurrency" || tb.ID == "concurrency_scaling" || tb.ID == "concurrency_relative" {
			ts = append(ts, tb)
		}
	}
	if len(ts) != 3 || ts[0].Title != "Throughput by threads" || len(ts[0].Rows) != 2 || ts[0].Rows[0].Head[0] != "x" ||
		len(ts[0].Columns) != 2 || ts[0].Columns[0] != "1 thread" || ts[0].Columns[1] != "2 threads" {
		t.Fatalf("tables %+v", ts)
	}
	abs, scale := ts[0].Rows[0].Cells, ts[1].Rows[0].Cells
	want := abs[1].Median / abs[0].Median
	if scale[1].Rel == nil || math.Abs(scale[1].Rel.Estimate/want-1) > 0.02 || scale[0].Rel != nil {
		t.Errorf("a's 2 threads relative to 1: %+v, want about %.3f", scale[1].Rel, want)
	}
	if rel := ts[2].Rows[1].Cells[0]; rel.Rel == nil || math.Abs(rel.Rel.Estimate-2) > 0.05 || rel.Class != report.ClassBetter {
		t.Errorf("b relative to a at 1 thread: %+v", rel.Rel)
	}
}
