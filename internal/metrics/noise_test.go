package metrics

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/hwstat"
)

// TestNoise computes the noise metrics from synthetic step HW: other processes' CPU is
// every process's less dbperf's and the server's (dbperf's alone for an embedded engine),
// over the CPUs' time, never more than the CPUs' time less theirs; steal likewise; what
// was not measured, or not finely enough, is absent.
func TestNoise(t *testing.T) {
	cpu := func(tasks, steal, elapsed float64) hwstat.CPUTimes {
		return hwstat.CPUTimes{UserSec: 1, IdleSec: 2, StealSec: steal, TasksSec: tasks, ElapsedSec: elapsed}
	}
	client := func(sec float64) ProcHW { return ProcHW{Known: true, Processes: 1, CPUSec: sec} }
	server := func(sec float64) ProcHW { return ProcHW{Known: true, Processes: 5, CPUSec: sec} }
	slack := func(c hwstat.CPUTimes, sec float64) hwstat.CPUTimes { c.TasksSlackSec = sec; return c }
	for _, tc := range []struct {
		name string
		hw   *HW
		want map[string]float64
	}{
		{"not sampled", nil, map[string]float64{}},
		{"embedded: the server is dbperf", &HW{CPU: cpu(3, 0.5, 10), Client: client(1), Embedded: true},
			map[string]float64{MetricOtherCPUPct: 20, MetricStealPct: 5}},
		{"managed server", &HW{CPU: cpu(3, 0, 4), Client: client(0.5), Server: server(1.5)},
			map[string]float64{MetricOtherCPUPct: 25, MetricStealPct: 0}},
		{"kernel threads are not other processes", &HW{CPU: hwstat.CPUTimes{UserSec: 1, IdleSec: 2,
			TasksSec: 3, KernelTasksSec: 0.6, ElapsedSec: 4}, Client: client(0.5), Server: server(1.5)},
			map[string]float64{MetricOtherCPUPct: 10, MetricStealPct: 0}},
		{"below dbperf and the server: 0", &HW{CPU: cpu(1.9, 0.2, 4), Client: client(0.5), Server: server(1.5)},
			map[string]float64{MetricOtherCPUPct: 0, MetricStealPct: 5}},
		{"processes not read (only ticks)", &HW{CPU: cpu(0, 0.4, 4), Client: client(0.5), Server: server(1.5)},
			map[string]float64{MetricStealPct: 10}},
		{"local server not visible", &HW{CPU: cpu(3, 0.4, 4), Client: client(0.5)},
			map[string]float64{MetricStealPct: 10}},
		{"remote server", &HW{CPU: cpu(3, 0.4, 4), Client: client(0.5), Remote: true}, map[string]float64{}},
		// The CPUs online changed within the step: the kinds' sum (1 + 2 + 1) is the span.
		{"elapsed unknown", &HW{CPU: cpu(2, 1, 0), Client: client(1), Embedded: true},
			map[string]float64{MetricOtherCPUPct: 25, MetricStealPct: 25}},
		{"no span", &HW{CPU: hwstat.CPUTimes{TasksSec: 1}, Client: client(1), Embedded: true}, map[string]float64{}},
		// Every process's CPU is read in 10 ms units, one process after the other: it can
		// pass the CPUs' time by its reading's error, which is then all that is above it;
		// other_cpu_pct + dbperf's and the server's share is at most 100.
		{"above the span within its reading's error", &HW{CPU: slack(cpu(4.1, 0, 4), 0.2), Client: client(1), Embedded: true},
			map[string]float64{MetricOtherCPUPct: 75, MetricStealPct: 0}},
		{"above the span within its reading's error, a server", &HW{CPU: slack(cpu(4.1, 0, 4), 0.2), Client: client(0.5), Server: server(1.5)},
			map[string]float64{MetricOtherCPUPct: 50, MetricStealPct: 0}},
		// More than the CPUs had beyond any reading error (the 290% of a step whose first
		// sample missed a process that exited): a broken reading, left out, not cut to fit.
		{"above the span beyond its reading's error", &HW{CPU: slack(cpu(0.21, 0, 0.055), 0.05), Client: client(0.02), Embedded: true},
			map[string]float64{MetricStealPct: 0}},
		{"above the span, error unknown", &HW{CPU: cpu(4.1, 0.4, 4), Client: client(1), Embedded: true},
			map[string]float64{MetricStealPct: 10}},
		// A step of 27 ms on 2 CPUs: 10 ms units of a few processes could make 55% 0% or 100%.
		{"too coarse to tell noisy from quiet", &HW{CPU: slack(cpu(0.05, 0, 0.055), 0.046), Client: client(0.02), Embedded: true},
			map[string]float64{MetricStealPct: 0}},
		{"coarse, noisy either way", &HW{CPU: slack(cpu(0.5, 0, 0.6), 0.09), Client: client(0.1), Embedded: true},
			map[string]float64{MetricOtherCPUPct: 400.0 / 6, MetricStealPct: 0}},
		{"coarse, quiet either way", &HW{CPU: slack(cpu(0.62, 0, 2), 0.1), Client: client(0.6), Embedded: true},
			map[string]float64{MetricOtherCPUPct: 1, MetricStealPct: 0}},
	} {
		got := StepResult{HW: tc.hw}.Noise()
		if !maps.EqualFunc(got, tc.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if names := NoiseMetricNames(); len(names) != 2 || slices.ContainsFunc(names, func(n string) bool {
		return slices.Contains(MetricNames(), n)
	}) {
		t.Errorf("NoiseMetricNames %v must be the two noise metrics, none of MetricNames", names)
	}
}

func TestNoisy(t *testing.T) {
	for _, tc := range []struct {
		m            map[string]float64
		noisy, known bool
	}{
		{map[string]float64{}, false, false},
		{map[string]float64{MetricOtherCPUPct: 4, MetricStealPct: 5}, false, true},
		{map[string]float64{MetricOtherCPUPct: 6, MetricStealPct: 5}, true, true},
		{map[string]float64{MetricStealPct: 12}, true, true},
		{map[string]float64{MetricCPUPerOp: 50}, false, false},
	} {
		if noisy, known := Noisy(tc.m); noisy != tc.noisy || known != tc.known {
			t.Errorf("Noisy(%v) = %v, %v; want %v, %v", tc.m, noisy, known, tc.noisy, tc.known)
		}
	}
}
