package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/stats"
)

// benchFigures are one run's figures: l.i0's rows/s, qp100's queries/s, its p99 (µs) and
// server CPU µs per query.
type benchFigures struct {
	load, query, p99, serverCPU float64
}

// benchRun is a finished run of config label with an l.i0 load, a cleanup and a qp100
// read-write step; trial "" stores no sweep trial, else the run is that trial of sweep s.
func benchRun(id int64, label, trial string, f benchFigures) RunReport {
	params := map[string]any{"scale": "tiny", "clients": json.Number("1")}
	if trial != "" {
		params["sweep"], params["trial"] = "s", trial
	}
	op := func(label, role string, unit metrics.Unit, rate float64, p99 int64) Op {
		n := int64(rate * 10)
		return Op{LabelStats: metrics.LabelStats{Label: label, Role: role, Unit: unit, Statements: n, Events: n, Rows: n,
			Service: metrics.Latency{P50: p99 / 2, P90: p99 * 3 / 4, P99: p99, P999: p99 * 2, Max: p99 * 3}}, Count: n, PerSec: rate}
	}
	return RunReport{ID: id, Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", Label: label, Status: "ok",
		Params: params, StepGroups: ibGroups(),
		Steps: []StepReport{
			{Seq: 1, Name: "l.i0", Group: "write", Status: metrics.StatusOK, Seconds: 10, Kind: "load", Primary: "insert",
				Ops: []Op{op("insert", "insert", metrics.UnitRows, f.load, 900)},
				HW:  HWReport{Metrics: map[string]float64{metrics.MetricServerCPUPerOp: 12}}},
			{Seq: 2, Name: "cleanup", Status: metrics.StatusOK, Seconds: 1, Kind: "cleanup", Primary: "cleanup",
				Ops: []Op{op("cleanup", "cleanup", metrics.UnitOps, 1, 1_000_000)}},
			{Seq: 3, Name: "qp100", Group: "point", Status: metrics.StatusOK, Seconds: 10, Kind: "read-write", Primary: "point-query",
				Ops: []Op{op("point-query", "query", metrics.UnitOps, f.query, int64(f.p99))},
				HW:  HWReport{Metrics: map[string]float64{metrics.MetricServerCPUPerOp: f.serverCPU}}},
		}}
}

// benchFixture is configs of runs built from figures: configs[i] holds each run's
// figures; paired stores them as trials b1/s1, b2/s1, … of one sweep.
func benchFixture(names []string, configs [][]benchFigures, paired bool) (Report, []Group) {
	var rep Report
	var groups []Group
	id := int64(1)
	for ci, runs := range configs {
		g := Group{Name: names[ci]}
		for i, f := range runs {
			trial := ""
			if paired {
				trial = fmt.Sprintf("b%d/s1", i+1)
			}
			rep.Runs = append(rep.Runs, benchRun(id, names[ci], trial, f))
			g.RunIDs = append(g.RunIDs, id)
			id++
		}
		groups = append(groups, g)
	}
	return rep, groups
}

// jittered is n runs' figures around f: every figure × (1 + j·jit[i]) for its own j.
func jittered(f benchFigures, n int, load, query, p99, cpu float64) []benchFigures {
	jit := []float64{-0.01, 0.004, 0.012, -0.006, 0, 0.008, -0.003, 0.002}
	out := make([]benchFigures, n)
	for i := range n {
		j := jit[i%len(jit)]
		out[i] = benchFigures{load: f.load * (1 + load*j), query: f.query * (1 + query*j),
			p99: f.p99 * (1 + p99*j), serverCPU: f.serverCPU * (1 + cpu*j)}
	}
	return out
}

func renderBench(t *testing.T, rep Report, groups []Group, base int, ms ...string) (string, []BenchTable) {
	t.Helper()
	var tables []BenchTable
	for _, m := range ms {
		bt, err := CompareBench(rep, groups, base, m)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, bt)
	}
	var buf bytes.Buffer
	if err := RenderBench(&buf, tables); err != nil {
		t.Fatal(err)
	}
	return buf.String(), tables
}

// TestBenchTwoConfigs: six runs per config, unpaired, on throughput, p99 and server_cpupq:
// a faster load (higher, no mark), the same queries (~), a p99 too noisy for a verdict
// (?), less server CPU per query (lower); the cleanup is left out.
func TestBenchTwoConfigs(t *testing.T) {
	base := benchFigures{load: 50000, query: 5000, p99: 400, serverCPU: 80}
	b := benchFigures{load: 60000, query: 5005, p99: 420, serverCPU: 60}
	rep, groups := benchFixture([]string{"a", "b"}, [][]benchFigures{
		jittered(base, 6, 1, 0.1, 1, 1), jittered(b, 6, -1, -0.1, -20, 1)}, false)
	out, tables := renderBench(t, rep, groups, 0, MetricThroughput, MetricP99, metrics.MetricServerCPUPerOp)
	golden(t, "bench-two.txt.golden", []byte(out))
	verdicts := map[string]stats.Verdict{}
	for _, bt := range tables {
		for _, r := range bt.Rows {
			if r.Ratios[0] != nil || r.Ratios[1] == nil || r.Ratios[1].Paired {
				t.Errorf("%s %s: ratios %+v: want none for the base and an unpaired one for b", bt.Metric, r.Step, r.Ratios)
				continue
			}
			verdicts[bt.Metric+" "+r.Step] = r.Ratios[1].Verdict
		}
	}
	want := map[string]stats.Verdict{"throughput l.i0": stats.VerdictHigher, "throughput qp100": stats.VerdictSame,
		"p99 l.i0": stats.VerdictSame, "p99 qp100": stats.VerdictUnstable,
		"server_cpupq l.i0": stats.VerdictSame, "server_cpupq qp100": stats.VerdictLower}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("%s: verdict %q, want %q", k, verdicts[k], v)
		}
	}
	if strings.Contains(out, "cleanup") {
		t.Errorf("the cleanup step is compared:\n%s", out)
	}
	for _, unwanted := range []string{"▲", "▼", "\x1b["} {
		if strings.Contains(out, unwanted) {
			t.Errorf("%q in the output:\n%s", unwanted, out)
		}
	}
}

// TestBenchThreeConfigsOneRun: one run per config, the second the base: values alone (no
// ±), ratios in parentheses without an interval or a verdict, and the footer says how many
// runs a verdict needs.
func TestBenchThreeConfigsOneRun(t *testing.T) {
	rep, groups := benchFixture([]string{"a", "b", "c"}, [][]benchFigures{
		{{load: 50000, query: 5000, p99: 400, serverCPU: 80}},
		{{load: 40000, query: 5100, p99: 380, serverCPU: 85}},
		{{load: 52000, query: 4000, p99: 500, serverCPU: 90}},
	}, false)
	out, tables := renderBench(t, rep, groups, 1, MetricThroughput, MetricP99)
	golden(t, "bench-three-n1.txt.golden", []byte(out))
	for _, bt := range tables {
		for _, r := range bt.Rows {
			for ci, rp := range r.Ratios {
				if (ci == 1) != (rp == nil) || rp != nil && (rp.HasCI || rp.Verdict != stats.VerdictNone) {
					t.Errorf("%s %s config %d: ratio %+v", bt.Metric, r.Step, ci, rp)
				}
			}
		}
	}
	for _, want := range []string{"(n=1)", "(+25.0%)", "(-21.6%)", "a vs b", "c vs b", fmt.Sprintf("needs %d runs per config", needTrials(false))} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "l.i0") || strings.HasPrefix(line, "qp100") {
			if strings.Contains(line, "±") || strings.Contains(line, "~") || strings.Contains(line, "?") || strings.Contains(line, "[") {
				t.Errorf("a verdict, an interval or a ± with one run: %s", line)
			}
		}
	}
}

// TestBenchPaired: six trials of one sweep whose speed drifts by ±10% from trial to trial,
// the candidate 3% faster in each: paired by trial the ratio is higher with a narrow
// interval; the same figures unpaired cannot tell.
func TestBenchPaired(t *testing.T) {
	drift := []float64{1, 0.9, 1.1, 0.95, 1.05, 0.92}
	var a, b []benchFigures
	for i, d := range drift {
		e := 1 + 0.002*float64(i%3-1)
		a = append(a, benchFigures{load: 50000 * d, query: 5000 * d, p99: 400 / d, serverCPU: 80})
		b = append(b, benchFigures{load: 51500 * d * e, query: 5000 * d / e, p99: 400 / d, serverCPU: 80})
	}
	rep, groups := benchFixture([]string{"a", "b"}, [][]benchFigures{a, b}, true)
	out, tables := renderBench(t, rep, groups, 0, MetricThroughput)
	golden(t, "bench-paired.txt.golden", []byte(out))
	r := tables[0].Rows[0].Ratios[1]
	if tables[0].Rows[0].Step != "l.i0" || !r.Paired || r.Pairs != 6 || r.Verdict != stats.VerdictHigher {
		t.Errorf("paired l.i0: %+v", r)
	}
	if !strings.Contains(out, "paired by block") {
		t.Errorf("no pairing said:\n%s", out)
	}
	unpaired, _ := benchFixture([]string{"a", "b"}, [][]benchFigures{a, b}, false)
	_, ut := renderBench(t, unpaired, groups, 0, MetricThroughput)
	if u := ut[0].Rows[0].Ratios[1]; u.Paired || u.Verdict != stats.VerdictUnstable {
		t.Errorf("unpaired l.i0: %+v, want unstable", u)
	}
}

// TestCompareBenchErrors: an unknown metric is refused naming the known ones.
func TestCompareBenchErrors(t *testing.T) {
	rep, groups := benchFixture([]string{"a", "b"}, [][]benchFigures{{{load: 1, query: 1, p99: 1}}, {{load: 1, query: 1, p99: 1}}}, false)
	if _, err := CompareBench(rep, groups, 0, "speed"); err == nil || !strings.Contains(err.Error(), "throughput, p99, cpupq") {
		t.Errorf("metric speed: %v", err)
	}
	if _, err := CompareBench(rep, groups, 2, MetricThroughput); err == nil {
		t.Error("base 2 of 2 configs: no error")
	}
}
