package report_test

import (
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

func TestBuildFixtureVerdicts(t *testing.T) {
	steps := report.Build(reporttest.Runs()).Runs[0].Steps
	find := func(name, role string) report.Background {
		for _, s := range steps {
			if s.Name != name {
				continue
			}
			for _, b := range s.Background {
				if b.Role == role {
					return b
				}
			}
		}
		t.Fatalf("no background %s in %s", role, name)
		return report.Background{}
	}
	for _, tt := range []struct {
		step, role string
		sla        string
		belowPct   float64
	}{
		{"qp100", "insert", report.SLAOK, 0},
		{"qp100", "delete", report.SLAFailed, 60},
		{"qp500", "insert", report.SLAFailed, 50}, // 700 rows / 1.5 s = 467/s < 475/s
		{"qp500", "delete", report.SLAFailed, 50},
	} {
		b := find(tt.step, tt.role)
		if b.SLA != tt.sla || b.IntervalsBelowTargetPct != tt.belowPct {
			t.Errorf("%s %s: sla %s, below %v%%; want %s, %v%%", tt.step, tt.role, b.SLA, b.IntervalsBelowTargetPct, tt.sla, tt.belowPct)
		}
	}
	if got := steps[0].ClientCPUPerOpUS; got != 8 {
		t.Errorf("l.i0 client_cpu_us_per_op = %v, want 8 (0.8 s / 100000 rows)", got)
	}
}

// TestBuildPerSec: Build uses Count() for the rates (rows for row labels, statements for the
// others), and an interval's rate is over its own length.
func TestBuildPerSec(t *testing.T) {
	// Build uses Count(): rows for row labels, statements for the others.
	step := report.Build(reporttest.Runs()).Runs[0].Steps[2]
	want := map[string]float64{"point-query": 26500 / 5.3, "insert": 510 / 5.3, "delete": 460 / 5.3}
	for _, o := range step.Ops {
		if o.PerSec != want[o.Label] {
			t.Errorf("%s per_sec = %v, want %v", o.Label, o.PerSec, want[o.Label])
		}
	}
	if got, want := step.Intervals[5].Ops[1].PerSec, 10/0.3; math.Abs(got-want) > 1e-9 {
		t.Errorf("tail interval insert per_sec = %v, want %v", got, want)
	}
}
