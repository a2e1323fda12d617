package report_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// tpccComparison stores 6 interleaved blocks of TPROC-C's run step for configs "13" (base,
// new orders/s 300 +0..5) and "15" (1.1× its block's), through a real results store, and
// compares them.
func tpccComparison(t *testing.T) report.Comparison {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var runs []store.Run
	for b := 1; b <= 6; b++ {
		no := int64(300 + b)
		runs = append(runs, reporttest.TPCCRun(int64(2*b-1), "13", b, no), reporttest.TPCCRun(int64(2*b), "15", b, no*11/10))
	}
	ids, err := reporttest.Save(ctx, st, runs...)
	if err != nil {
		t.Fatal(err)
	}
	groups := []report.Group{{Name: "13"}, {Name: "15"}}
	for i, id := range ids {
		groups[i%2].RunIDs = append(groups[i%2].RunIDs, id)
	}
	rep, err := report.Load(ctx, st, groups)
	if err != nil {
		t.Fatal(err)
	}
	return report.Compare(rep, groups, 0)
}

// TestPerMinuteNOPM (issue 41): a comparison of TPROC-C runs has the per_minute table, its
// NOPM per config exactly 60× the run step's throughput (median, min and max), its NOPM
// ratio the relative table's ratio with the same interval, and TPM 60× the five committed
// types' rates (the rolled-back new-orders left out).
func TestPerMinuteNOPM(t *testing.T) {
	t.Parallel()
	c := tpccComparison(t)
	for _, cfg := range []string{"13", "15"} {
		tput := reporttest.CellAt(t, c, "throughput", []string{cfg}, "run")
		nopm := reporttest.CellAt(t, c, "per_minute", []string{cfg}, "run NOPM")
		if !nopm.Present || nopm.Unit != report.UnitPerMinute || nopm.N != 6 {
			t.Fatalf("%s: NOPM cell %+v", cfg, nopm)
		}
		for _, p := range [][2]float64{{nopm.Median, tput.Median}, {nopm.Min, tput.Min}, {nopm.Max, tput.Max}} {
			if math.Abs(p[0]-60*p[1]) > 1e-9*p[0] {
				t.Errorf("%s: NOPM %v, throughput %v: not × 60", cfg, p[0], p[1])
			}
		}
		tpm := reporttest.CellAt(t, c, "per_minute", []string{cfg}, "run TPM")
		// Per 10 s block: new-order n, payment n, three types n/10 each: 2.3n committed.
		if r := tpm.Median / nopm.Median; math.Abs(r-2.3) > 0.01 {
			t.Errorf("%s: TPM %v is %.3f× NOPM %v, want 2.3×", cfg, tpm.Median, r, nopm.Median)
		}
	}
	rel := reporttest.CellAt(t, c, "relative", []string{"15"}, "run")
	nopmRel := reporttest.CellAt(t, c, "per_minute", []string{"15"}, "run NOPM vs base")
	if rel.Rel == nil || nopmRel.Rel == nil || !nopmRel.Rel.HasCI {
		t.Fatalf("NOPM ratio %+v, throughput ratio %+v: want both, with an interval", nopmRel.Rel, rel.Rel)
	}
	if nopmRel.Rel.Estimate != rel.Rel.Estimate || nopmRel.Rel.Lo != rel.Rel.Lo || nopmRel.Rel.Hi != rel.Rel.Hi {
		t.Errorf("NOPM ratio %.4f [%.4f–%.4f], throughput's %.4f [%.4f–%.4f]: want the same", nopmRel.Rel.Estimate,
			nopmRel.Rel.Lo, nopmRel.Rel.Hi, rel.Rel.Estimate, rel.Rel.Lo, rel.Rel.Hi)
	}
	if math.Abs(nopmRel.Rel.Estimate-1.1) > 0.005 || nopmRel.Class != report.ClassBetter {
		t.Errorf("NOPM ratio %.4f (%s), want 1.10 better", nopmRel.Rel.Estimate, nopmRel.Class)
	}
}

// TestPerMinuteOnlyDeclared: runs whose workload declares no figure per minute (the
// Insert Benchmark's) have no per_minute table.
func TestPerMinuteOnlyDeclared(t *testing.T) {
	t.Parallel()
	_, c := reporttest.Compared()
	for _, tb := range c.Tables {
		if tb.ID == "per_minute" {
			t.Errorf("a per_minute table without a declared figure: %+v", tb)
		}
	}
}
