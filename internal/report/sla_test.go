package report

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

func TestPerSec(t *testing.T) {
	tests := []struct {
		count int64
		secs  float64
		want  float64
	}{
		{100, 2, 50},
		{1, 0.25, 4},
		{0, 3, 0},
		{5, 0, 0},
		{5, -1, 0},
		{5, math.NaN(), 0},
		{5, 1e-320, 0}, // would be +Inf
	}
	for _, tt := range tests {
		if got := perSec(tt.count, tt.secs); got != tt.want {
			t.Errorf("perSec(%d, %v) = %v, want %v", tt.count, tt.secs, got, tt.want)
		}
	}

}

// sec is s seconds.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestBackgroundSLA(t *testing.T) {
	ins := func(rows int64) metrics.LabelStats {
		return metrics.LabelStats{Label: "insert", Role: "insert", Unit: metrics.UnitRows, Rows: rows, Statements: rows / 50, TargetPerSec: 100, Background: true}
	}
	span := func(start, end float64, rows int64) metrics.Interval {
		iv := metrics.Interval{Start: sec(start), End: sec(end)}
		if rows >= 0 {
			iv.Labels = []metrics.LabelStats{ins(rows)}
		}
		return iv
	}
	full := []metrics.Interval{span(0, 1, 100), span(1, 2, 100)}
	tests := []struct {
		name         string
		label        metrics.LabelStats
		secs         float64
		ivs          []metrics.Interval
		wantAchieved float64
		wantBelowPct float64
		wantSLA      string
	}{
		{"exactly 0.95 × target", ins(950), 10, nil, 95, 0, SLAOK},
		{"just below 0.95 × target", ins(949), 10, nil, 94.9, 0, SLAFailed},
		{"boundary after float rounding", ins(57), 0.6, nil, 57 / 0.6, 0, SLAOK},
		{"above target", ins(1200), 10, nil, 120, 0, SLAOK},
		{"no time", ins(10), 0, nil, 0, 0, SLAFailed},
		{"count is rows, not statements", metrics.LabelStats{Label: "insert", Unit: metrics.UnitRows, Rows: 1000, Statements: 20, TargetPerSec: 100, Background: true}, 10, nil, 100, 0, SLAOK},
		{"short tail excluded", ins(210), 2.4, append(slices.Clone(full), span(2, 2.4, 10)), 87.5, 0, SLAFailed},
		{"tail of exactly half is judged", ins(210), 2.5, append(slices.Clone(full), span(2, 2.5, 10)), 84, 100.0 / 3, SLAFailed},
		{"interval at 0.95 × target is not below", ins(195), 2, []metrics.Interval{span(0, 1, 95), span(1, 2, 100)}, 97.5, 0, SLAOK},
		{"interval just below", ins(194), 2, []metrics.Interval{span(0, 1, 94), span(1, 2, 100)}, 97, 50, SLAOK},
		{"label absent from an interval counts as 0", ins(200), 3, []metrics.Interval{span(0, 1, 100), span(1, 2, -1), span(2, 3, 100)}, 66.66666666666667, 100.0 / 3, SLAFailed},
		{"zero-length interval ignored", ins(200), 2, append(slices.Clone(full), span(2, 2, 0)), 100, 0, SLAOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := background(tt.label, tt.secs, tt.ivs)
			if math.Abs(got.AchievedPerSec-tt.wantAchieved) > 1e-9 || math.Abs(got.IntervalsBelowTargetPct-tt.wantBelowPct) > 1e-9 || got.SLA != tt.wantSLA {
				t.Errorf("background = achieved %v, below %v%%, sla %s; want %v, %v%%, %s",
					got.AchievedPerSec, got.IntervalsBelowTargetPct, got.SLA, tt.wantAchieved, tt.wantBelowPct, tt.wantSLA)
			}
			if got.TargetPerSec != 100 || got.Role != tt.label.Role {
				t.Errorf("target %v role %q", got.TargetPerSec, got.Role)
			}
		})
	}
}
