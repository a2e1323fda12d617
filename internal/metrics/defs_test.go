package metrics

import (
	"slices"
	"testing"
)

// TestDefs: every stored step metric has one definition, with a legend; the properties
// reports act on are as the reports have always treated them.
func TestDefs(t *testing.T) {
	seen := map[string]bool{}
	var perOp, timed, charted, higher []string
	for _, d := range append(HWDefs(), KVDefs()...) {
		if d.Name == "" || d.Legend == "" || seen[d.Name] {
			t.Errorf("definition %+v: empty name or legend, or defined twice", d)
		}
		seen[d.Name] = true
		if got, ok := DefOf(d.Name); !ok || got != d {
			t.Errorf("DefOf(%s) = %+v, %v", d.Name, got, ok)
		}
		if d.PerOpFigure() {
			perOp = append(perOp, d.Name)
		}
		if d.Time {
			timed = append(timed, d.Name)
		}
		if d.Charted {
			charted = append(charted, d.Name)
		}
		if d.HigherBetter {
			higher = append(higher, d.Name)
		}
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"names", MetricNames(), []string{"cpupq", "server_cpupq", "client_cpupq", "cspq", "rpq", "rkbpq", "wpi", "wkbpi", "dbgb", "rss_gb", "maxop_s"}},
		{"kv names", KVMetricNames(), []string{"mb_sec", "w_amp", "c_mbps", "c_wsecs", "c_csecs", "stall_pct", "nstall", "lsm_gb", "ingest_gb", "c_wgb", "c_rgb", "flush_gb", "pending_compaction_gb"}},
		{"per op or row", perOp, []string{"cpupq", "server_cpupq", "client_cpupq", "cspq", "rpq", "rkbpq", "wpi", "wkbpi", "mb_sec"}},
		{"times and rates", timed, []string{"cpupq", "server_cpupq", "client_cpupq", "cspq", "maxop_s", "mb_sec", "c_mbps", "c_wsecs", "c_csecs", "stall_pct", "nstall"}},
		{"charted", charted, []string{"cpupq", "server_cpupq", "rkbpq", "wkbpi"}},
		{"higher is better", higher, []string{"mb_sec"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if _, ok := DefOf(MetricThinkUSPerOp); ok {
		t.Error("think_us_per_op is a setting's measurement, not a metric reports compare")
	}
	if d, _ := DefOf(MetricWriteKBPerRow); d.Basis != PerRow {
		t.Errorf("wkbpi basis %q, want per inserted row", d.Basis)
	}
}
