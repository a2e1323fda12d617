package report

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/stats"
)

// pairValues pairs by block only when every run with the figure has a trial, all of one
// sweep, no trial twice in a group and at least 2 blocks with trials in common; then a
// block's matched slices are averaged, blocks in natural order.
func TestPairValues(t *testing.T) {
	run := func(id int64, sweep, trial string, v float64) RunReport {
		p := map[string]any{}
		if sweep != "" {
			p["sweep"] = sweep
		}
		if trial != "" {
			p["trial"] = trial
		}
		return RunReport{ID: id, Params: p, Env: map[string]string{"v": fmt.Sprint(v)}}
	}
	get := func(r RunReport) (float64, bool) {
		var v float64
		_, err := fmt.Sscan(r.Env["v"], &v)
		return v, err == nil && v != 0
	}
	group := func(rs ...RunReport) GroupReport { return GroupReport{Runs: rs} }
	for _, tc := range []struct {
		name   string
		a, b   GroupReport
		paired bool
		wa, wb []float64
	}{
		{"matched, natural order, unmatched left out",
			group(run(1, "s", "b10/s1", 10), run(2, "s", "b2/s1", 2), run(3, "s", "b9/s1", 9), run(4, "s", "b1/s1", 1)),
			group(run(5, "s", "b9/s1", 90), run(6, "s", "b10/s1", 100), run(7, "s", "b2/s1", 20), run(8, "s", "b3/s1", 30)),
			true, []float64{2, 9, 10}, []float64{20, 90, 100}},
		{"a run without a trial",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b2/s1", 2)),
			group(run(3, "s", "b1/s1", 10), run(4, "s", "", 20)),
			false, []float64{1, 2}, []float64{10, 20}},
		{"runs without the figure do not count",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b2/s1", 2), run(9, "", "", 0)),
			group(run(3, "s", "b1/s1", 10), run(4, "s", "b2/s1", 20)),
			true, []float64{1, 2}, []float64{10, 20}},
		{"two sweeps",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b2/s1", 2)),
			group(run(3, "t", "b1/s1", 10), run(4, "t", "b2/s1", 20)),
			false, []float64{1, 2}, []float64{10, 20}},
		{"a trial twice",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b1/s1", 2), run(5, "s", "b2/s1", 3)),
			group(run(3, "s", "b1/s1", 10), run(4, "s", "b2/s1", 20)),
			false, []float64{1, 2, 3}, []float64{10, 20}},
		{"a block's matched slices averaged, an unmatched slice left out",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b1/s2", 3), run(3, "s", "b2/s1", 5)),
			group(run(4, "s", "b1/s2", 30), run(5, "s", "b2/s2", 70), run(6, "s", "b1/s1", 10), run(7, "s", "b2/s1", 50)),
			true, []float64{2, 5}, []float64{20, 50}},
		{"slices of one block are one pair",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b1/s2", 2)),
			group(run(3, "s", "b1/s1", 10), run(4, "s", "b1/s2", 20)),
			false, []float64{1, 2}, []float64{10, 20}},
		{"one trial in common",
			group(run(1, "s", "b1/s1", 1), run(2, "s", "b2/s1", 2)),
			group(run(3, "s", "b1/s1", 10), run(4, "s", "b3/s1", 20)),
			false, []float64{1, 2}, []float64{10, 20}},
	} {
		a, b, _, _, paired := pairValues(tc.a, tc.b, get)
		if paired != tc.paired || !slices.Equal(a, tc.wa) || !slices.Equal(b, tc.wb) {
			t.Errorf("%s: %v %v paired %v, want %v %v %v", tc.name, a, b, paired, tc.wa, tc.wb, tc.paired)
		}
		r, ok := figureRatio(tc.a, tc.b, get, stats.RatioOptions{})
		if !ok || r.Paired != tc.paired {
			t.Errorf("%s: figureRatio %+v", tc.name, r)
		}
	}
	if _, ok := figureRatio(group(run(1, "s", "b1/s1", 1)), group(run(2, "", "", 0)), get, stats.RatioOptions{}); ok {
		t.Error("figureRatio with a side without values: ok")
	}
}

// A duet's blocks carry their CPU assignment: figureRatio takes a balanced assignment's
// effect out of the interval (the CPUs differ by ±6%, the configs by 2%), and a design
// without assignments (or with one level) keeps the plain paired interval.
func TestFigureRatioCPUFactor(t *testing.T) {
	run := func(id int64, block int, cpus string, v float64) RunReport {
		p := map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", block)}
		if cpus != "" {
			p["cpus"] = cpus
		}
		return RunReport{ID: id, Params: p, Env: map[string]string{"v": fmt.Sprint(v)}}
	}
	get := func(r RunReport) (float64, bool) {
		var v float64
		_, err := fmt.Sscan(r.Env["v"], &v)
		return v, err == nil && v != 0
	}
	noise := []float64{0.004, -0.003, 0.001, -0.002, 0.003, 0.000, -0.004, 0.002, -0.001, 0.003, -0.002, 0.001}
	build := func(withCPUs bool) (GroupReport, GroupReport) {
		var a, b GroupReport
		for i, e := range noise {
			ca, cb, effect := "0", "1", 1.06
			if i%2 == 1 {
				ca, cb, effect = "1", "0", 1/1.06
			}
			if !withCPUs {
				ca, cb = "", ""
			}
			a.Runs = append(a.Runs, run(int64(2*i+1), i+1, ca, 1000))
			b.Runs = append(b.Runs, run(int64(2*i+2), i+1, cb, 1000*1.02*effect*(1+e)))
		}
		return a, b
	}
	a, b := build(true)
	model, ok := figureRatio(a, b, get, stats.RatioOptions{})
	a0, b0 := build(false)
	plain, ok0 := figureRatio(a0, b0, get, stats.RatioOptions{})
	if !ok || !ok0 || !model.HasCI || !plain.HasCI {
		t.Fatalf("no interval: %+v %+v", model, plain)
	}
	if !(model.Lo < 1.02 && 1.02 < model.Hi) || model.Hi-model.Lo > 0.02 {
		t.Errorf("with the CPUs in the model: %.4f [%.4f–%.4f], want a narrow interval around 1.02", model.Estimate, model.Lo, model.Hi)
	}
	if plain.Hi-plain.Lo < 0.08 {
		t.Errorf("without assignments: [%.4f–%.4f], want the CPUs' ±6%% in the interval", plain.Lo, plain.Hi)
	}
	if model.Verdict != stats.VerdictUnstable && model.Verdict != stats.VerdictHigher {
		t.Errorf("verdict %s", model.Verdict)
	}
}

// byInstance gathers blocks by server instance (--instances): one pair per instance, the
// geometric mean of its blocks, when every block has one and there are two or more.
func TestByInstance(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a, b      []float64
		instances []string
		ok        bool
		wa, wb    []float64
	}{
		{"two instances", []float64{1, 4, 2, 8}, []float64{2, 8, 3, 12}, []string{"1|1", "1|1", "2|2", "2|2"},
			true, []float64{2, 4}, []float64{4, 6}},
		{"in order of first appearance, unequal sizes", []float64{9, 1, 4}, []float64{9, 1, 1}, []string{"2|2", "1|1", "1|1"},
			true, []float64{9, 2}, []float64{9, 1}},
		{"one instance", []float64{1, 2}, []float64{3, 4}, []string{"1|1", "1|1"}, false, []float64{1, 2}, []float64{3, 4}},
		{"a block without one", []float64{1, 2}, []float64{3, 4}, []string{"1|1", ""}, false, []float64{1, 2}, []float64{3, 4}},
		{"no instances", []float64{1, 2}, []float64{3, 4}, []string{"", ""}, false, []float64{1, 2}, []float64{3, 4}},
	} {
		ua, ub, ok := byInstance(tc.a, tc.b, tc.instances)
		near := func(x, y []float64) bool {
			return slices.EqualFunc(x, y, func(p, q float64) bool { return math.Abs(p-q) < 1e-12 })
		}
		if ok != tc.ok || !near(ua, tc.wa) || !near(ub, tc.wb) {
			t.Errorf("%s: %v %v %v, want %v %v %v", tc.name, ua, ub, ok, tc.wa, tc.wb, tc.ok)
		}
	}
}

// unitKeys: blocks, or instances when every trial has one and there are two or more.
func TestUnitKeys(t *testing.T) {
	trials := []string{"b1/s1", "b1/s2", "b2/s1", "b3/s1"}
	for _, tc := range []struct {
		name      string
		instances []string
		want      []string
	}{
		{"no instances", []string{"", "", "", ""}, []string{"b1", "b1", "b2", "b3"}},
		{"two instances", []string{"1", "1", "1", "2"}, []string{"i1", "i1", "i1", "i2"}},
		{"one instance", []string{"1", "1", "1", "1"}, []string{"b1", "b1", "b2", "b3"}},
		{"a trial without one", []string{"1", "1", "", "2"}, []string{"b1", "b1", "b2", "b3"}},
	} {
		if got := unitKeys(trials, tc.instances); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
