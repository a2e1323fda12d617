package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/stats"
)

func renderBench(t *testing.T, rep report.Report, groups []report.Group, base int, ms ...string) (string, []report.BenchTable) {
	t.Helper()
	var tables []report.BenchTable
	for _, m := range ms {
		bt, err := report.CompareBench(rep, groups, base, m)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, bt)
	}
	var buf bytes.Buffer
	if err := Bench(&buf, tables); err != nil {
		t.Fatal(err)
	}
	return buf.String(), tables
}

// TestBenchTwoConfigs: six runs per config, unpaired, on throughput, p99 and server_cpupq:
// a faster load (higher, no mark), the same queries (~), a p99 too noisy for a verdict
// (?), less server CPU per query (lower); the cleanup is left out.
func TestBenchTwoConfigs(t *testing.T) {
	base := reporttest.BenchFigures{Load: 50000, Query: 5000, P99: 400, ServerCPU: 80}
	b := reporttest.BenchFigures{Load: 60000, Query: 5005, P99: 420, ServerCPU: 60}
	rep, groups := reporttest.BenchFixture([]string{"a", "b"}, [][]reporttest.BenchFigures{
		reporttest.Jittered(base, 6, 1, 0.1, 1, 1), reporttest.Jittered(b, 6, -1, -0.1, -20, 1)}, false)
	out, tables := renderBench(t, rep, groups, 0, report.MetricThroughput, report.MetricP99, metrics.MetricServerCPUPerOp)
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
	rep, groups := reporttest.BenchFixture([]string{"a", "b", "c"}, [][]reporttest.BenchFigures{
		{{Load: 50000, Query: 5000, P99: 400, ServerCPU: 80}},
		{{Load: 40000, Query: 5100, P99: 380, ServerCPU: 85}},
		{{Load: 52000, Query: 4000, P99: 500, ServerCPU: 90}},
	}, false)
	out, tables := renderBench(t, rep, groups, 1, report.MetricThroughput, report.MetricP99)
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
	for _, want := range []string{"(n=1)", "(+25.0%)", "(-21.6%)", "a vs b", "c vs b", fmt.Sprintf("needs %d runs per config", tables[0].NeedN)} {
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
	var a, b []reporttest.BenchFigures
	for i, d := range drift {
		e := 1 + 0.002*float64(i%3-1)
		a = append(a, reporttest.BenchFigures{Load: 50000 * d, Query: 5000 * d, P99: 400 / d, ServerCPU: 80})
		b = append(b, reporttest.BenchFigures{Load: 51500 * d * e, Query: 5000 * d / e, P99: 400 / d, ServerCPU: 80})
	}
	rep, groups := reporttest.BenchFixture([]string{"a", "b"}, [][]reporttest.BenchFigures{a, b}, true)
	out, tables := renderBench(t, rep, groups, 0, report.MetricThroughput)
	golden(t, "bench-paired.txt.golden", []byte(out))
	r := tables[0].Rows[0].Ratios[1]
	if tables[0].Rows[0].Step != "l.i0" || !r.Paired || r.Pairs != 6 || r.Verdict != stats.VerdictHigher {
		t.Errorf("paired l.i0: %+v", r)
	}
	if !strings.Contains(out, "paired by block") {
		t.Errorf("no pairing said:\n%s", out)
	}
	unpaired, _ := reporttest.BenchFixture([]string{"a", "b"}, [][]reporttest.BenchFigures{a, b}, false)
	_, ut := renderBench(t, unpaired, groups, 0, report.MetricThroughput)
	if u := ut[0].Rows[0].Ratios[1]; u.Paired || u.Verdict != stats.VerdictUnstable {
		t.Errorf("unpaired l.i0: %+v, want unstable", u)
	}
}
