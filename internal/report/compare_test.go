package report_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

func TestCompareTables(t *testing.T) {
	_, c := reporttest.Compared()
	if strings.Join(c.Steps, ",") != "l.i0,qp100,point-select,cleanup" {
		t.Errorf("steps = %v, want the union in run order", c.Steps)
	}
	if !c.IsOneOp("cleanup") || c.IsOneOp("qp100") {
		t.Errorf("one-op steps: %v", c.OneOpSteps())
	}
	// Absolute: medians of the repeats, min and max, n.
	abs := reporttest.CellAt(t, c, "throughput", []string{"a"}, "l.i0")
	if abs.N != 4 || math.Abs(abs.Median-50000*1.002) > 1 || abs.Min >= abs.Max || abs.Noisy {
		t.Errorf("a l.i0 = %+v", abs.Summary)
	}
	// Relative: b is 1.2× a, significant with 4 vs 4 separated runs; better.
	rel := reporttest.CellAt(t, c, "relative", []string{"b"}, "qp100")
	if rel.Rel == nil || math.Abs(rel.Median-1.2) > 0.02 || rel.Rel.Verdict != stats.VerdictHigher || rel.Class != report.ClassBetter {
		t.Errorf("b qp100 relative = %+v %+v", rel.Summary, rel.Rel)
	}
	// A single run against 4: a ratio without a verdict, and no mark; said so in a note.
	one := reporttest.CellAt(t, c, "relative", []string{"run 21"}, "l.i0")
	if one.Rel == nil || one.Rel.Verdict != stats.VerdictNone || one.Rel.HasCI || one.Class != report.ClassNone || !c.TooFew ||
		math.Abs(one.Median-0.9) > 0.01 {
		t.Errorf("run 21 relative = %+v %+v", one.Summary, one.Rel)
	}
	if cell := reporttest.CellAt(t, c, "relative", []string{"a"}, "point-select"); cell.Present {
		t.Errorf("a has no point-select step but a relative cell %+v", cell)
	}
	// Geomean of write steps (l.i0 only) = its ratio.
	if g := reporttest.CellAt(t, c, "geomean", []string{"b"}, "write (l.*)"); math.Abs(g.Median-1.2) > 0.02 {
		t.Errorf("b write geomean = %v", g.Median)
	}
	// Background: b's delete misses its SLA, the target row holds 100.
	if bg := reporttest.CellAt(t, c, "background", []string{"b"}, "qp100 delete"); bg.Class != report.ClassSLAMiss || bg.Median != 90 {
		t.Errorf("b delete = %+v class %s", bg.Summary, bg.Class)
	}
	if tg := reporttest.CellAt(t, c, "background", []string{"target"}, "qp100 insert"); tg.Median != 100 || tg.Class != report.ClassTarget {
		t.Errorf("target = %+v", tg)
	}
	// HW relative: lower is better, so b's smaller cpupq in l.i0 is better.
	if hw := reporttest.CellAt(t, c, "hw_relative", []string{"cpupq", "b"}, "l.i0"); hw.Class != report.ClassBetter || hw.Median >= 0.9 {
		t.Errorf("b cpupq relative = %+v class %s", hw.Summary, hw.Class)
	}
	// Per-connection CPU: per query of the query role (3.1 s over ~25,000 queries), the
	// seconds kept beside.
	if cc := reporttest.CellAt(t, c, "conn_cpu", []string{"query", "a"}, "qp100"); cc.Unit != "µs/query" ||
		math.Abs(cc.Median-3.1e6/25000) > 2 || cc.CPUSec == nil || cc.CPUSec.Median != 3.1 || cc.Ops == nil || !cc.ShowUnit {
		t.Errorf("conn cpu = %s %+v, seconds %+v, ops %+v", cc.Unit, cc.Summary, cc.CPUSec, cc.Ops)
	}
	if lat := reporttest.CellAt(t, c, "latency", []string{"qp100", "point-query", "a"}, "p99"); lat.Median != 410 {
		t.Errorf("latency = %+v", lat.Summary)
	}
}

// The by-group table lists each group's steps under the group's title in the order the
// runs stored the groups, then the group's geomean; steps of no group are left out.
func TestByGroupTable(t *testing.T) {
	_, c := reporttest.Compared()
	var bg *report.Table
	for i := range c.Tables {
		if c.Tables[i].ID == "by_group" {
			bg = &c.Tables[i]
		}
	}
	if bg == nil {
		t.Fatal("no by_group table")
	}
	var heads []string
	for _, r := range bg.Rows {
		heads = append(heads, strings.Join(r.Head, "/"))
	}
	want := []string{"write (l.*)/l.i0", "write (l.*)/geomean", "point (qp*)/qp100", "point (qp*)/point-select", "point (qp*)/geomean"}
	if !slices.Equal(heads, want) {
		t.Fatalf("rows %q, want %q", heads, want)
	}
	// b is 1.2× a; the base column is exactly 1.
	if cell := bg.Rows[0].Cells[1]; !cell.Present || math.Abs(cell.Median-1.2) > 0.02 || cell.Class != report.ClassBetter {
		t.Errorf("b l.i0: %+v", cell)
	}
	if cell := bg.Rows[1].Cells[0]; !cell.Present || cell.Median != 1 {
		t.Errorf("a geomean: %+v", cell)
	}
}

// One config (the repeats of one label) gets no relative tables: they would be all 1.00.
func TestCompareOneConfigHasNoRelativeTables(t *testing.T) {
	rep, groups := reporttest.CompareFixture()
	c := report.Compare(rep, groups[:1], 0)
	for _, tb := range c.Tables {
		switch tb.ID {
		case "relative", "geomean", "by_group", "hw_relative":
			t.Errorf("one config has a %s table", tb.ID)
		}
	}
	if len(c.Tables) == 0 || c.Tables[0].ID != "throughput" {
		t.Errorf("tables: %+v", c.Tables)
	}
}

// TestCompareBenchErrors: an unknown metric is refused naming the known ones.
func TestCompareBenchErrors(t *testing.T) {
	rep, groups := reporttest.BenchFixture([]string{"a", "b"}, [][]reporttest.BenchFigures{{{Load: 1, Query: 1, P99: 1}}, {{Load: 1, Query: 1, P99: 1}}}, false)
	if _, err := report.CompareBench(rep, groups, 0, "speed"); err == nil || !strings.Contains(err.Error(), "throughput, p99, cpupq") {
		t.Errorf("metric speed: %v", err)
	}
	if _, err := report.CompareBench(rep, groups, 2, report.MetricThroughput); err == nil {
		t.Error("base 2 of 2 configs: no error")
	}
}

// Writers' targets that differ between configs (a concurrency sweep's scale with the
// clients) get a target row per config, each its own value without a range or a noise
// mark; the same target in every config keeps one row (issue 42: "200 [100–400] !").
func TestBackgroundTargetPerConfig(t *testing.T) {
	var runs []store.Run
	a, b := report.Group{Name: "c1"}, report.Group{Name: "c2"}
	for i := range 2 {
		ra := reporttest.RepeatRun(int64(1+i), "c1", 1, 0, 100)
		rb := reporttest.RepeatRun(int64(11+i), "c2", 1, 0, 100)
		for li := range rb.Steps[1].Result.Labels {
			if l := &rb.Steps[1].Result.Labels[li]; l.Background {
				l.TargetPerSec, l.Rows = 200, 2*l.Rows
			}
		}
		runs = append(runs, ra, rb)
		a.RunIDs, b.RunIDs = append(a.RunIDs, ra.ID), append(b.RunIDs, rb.ID)
	}
	c := report.Compare(report.Build(runs), []report.Group{a, b}, 0)
	for _, tc := range []struct {
		head string
		want float64
	}{{"target c1", 100}, {"target c2", 200}} {
		cell := reporttest.CellAt(t, c, "background", []string{tc.head}, "qp100 insert")
		if cell.Median != tc.want || cell.Min != cell.Max || cell.Noisy || cell.Class != report.ClassTarget {
			t.Errorf("%s: %+v class %s", tc.head, cell.Summary, cell.Class)
		}
	}
	_, same := reporttest.Compared()
	if tg := reporttest.CellAt(t, same, "background", []string{"target"}, "qp100 insert"); tg.Median != 100 {
		t.Errorf("one target for configs that share it: %+v", tg.Summary)
	}
}
