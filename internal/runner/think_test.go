package runner

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// TestThinkTime: a closed-loop step with a think time runs at the rate the think time
// predicts from the rate without it, 1/(1 + think × rate per worker), and stores the
// pauses it measured; a paced group of the same step keeps its schedule (it never thinks).
func TestThinkTime(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	const workers = 2
	perWorker := func(res metrics.StepResult) float64 {
		return float64(label(res, "point-query").Statements) / res.Seconds / workers
	}

	base := r.Run(ctx, &pointStep{load: pointLoad(workers, 500*time.Millisecond)}, &collector{})
	if base.Status != metrics.StatusOK {
		t.Fatalf("step %s: %s", base.Status, base.Error)
	}
	if _, ok := base.Metrics[metrics.MetricThinkUSPerOp]; ok {
		t.Errorf("%s without a think time: %v", metrics.MetricThinkUSPerOp, base.Metrics)
	}

	const think = 2 * time.Millisecond
	r.Think = think
	load := pointLoad(workers, time.Second)
	load.Groups = append(load.Groups, workload.Group{Label: "insert", Role: "insert", Unit: workload.UnitRows,
		Rate: 50, RowsPerOp: 1, Background: true, Workers: []workload.Worker{&insertWorker{}}})
	step := &pointStep{load: load}
	if err := (&testStep{}).Prepare(ctx, r.Handle); err != nil { // the inserter's table
		t.Fatal(err)
	}
	res := r.Run(ctx, step, &collector{})
	if res.Status != metrics.StatusOK {
		t.Fatalf("step %s: %s", res.Status, res.Error)
	}

	r0, r1 := perWorker(base), perWorker(res)
	want := 1 / (1 + think.Seconds()*r0)
	us, ok := res.Metrics[metrics.MetricThinkUSPerOp]
	t.Logf("per worker: %.0f ops/s without think, %.0f with %v (ratio %.4f, predicted %.4f); think_us_per_op %.0f",
		r0, r1, think, r1/r0, want, us)
	if math.Abs(r1/r0/want-1) > 0.15 {
		t.Errorf("throughput ratio %.4f, predicted 1/(1 + think × %.0f/s) = %.4f: more than 15%% apart", r1/r0, r0, want)
	}
	if !ok || us < float64(think.Microseconds()) || us > 3*float64(think.Microseconds()) {
		t.Errorf("%s = %v (present %v), want ≥ %d µs", metrics.MetricThinkUSPerOp, us, ok, think.Microseconds())
	}
	// The pauses measured explain the rate: one op and one pause per cycle.
	if cycle := 1e6 / r1; us > cycle {
		t.Errorf("mean pause %.0f µs longer than the cycle %.0f µs", us, cycle)
	}
	if ins := label(res, "insert"); ins.Statements != 50 {
		t.Errorf("the paced inserter ran %d statements in 1 s at 50/s: it must not think", ins.Statements)
	}
}

// TestThinkSpin: a think time up to spinThink is busy-waited: the mean pause is the think
// time within a few percent (a timer would be late by far more than 10 µs), and the
// worker's own CPU covers the pauses.
func TestThinkSpin(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	const think = 10 * time.Microsecond
	r.Think = think
	res := r.Run(ctx, &pointStep{load: pointLoad(1, 500*time.Millisecond)}, &collector{})
	if res.Status != metrics.StatusOK {
		t.Fatalf("step %s: %s", res.Status, res.Error)
	}
	us, ok := res.Metrics[metrics.MetricThinkUSPerOp]
	ops := label(res, "point-query").Statements
	t.Logf("think %v: mean pause %.2f µs over %d ops, client CPU %.1f µs/op", think, us, ops, res.ClientCPUPerOpUS())
	if !ok || us < 10 || us > 12 {
		t.Errorf("%s = %v (present %v), want 10–12 µs", metrics.MetricThinkUSPerOp, us, ok)
	}
	// The service time measured and the pause explain the cycle of the closed loop.
	svc, ok := res.Metrics[metrics.MetricServiceUSPerOp]
	cycle := res.Seconds * 1e6 / float64(ops)
	t.Logf("service %.2f µs + pause %.2f µs; cycle %.2f µs", svc, us, cycle)
	if !ok || svc <= 0 || svc+us > cycle {
		t.Errorf("%s = %v (present %v): with the pause %.2f µs longer than the cycle %.2f µs", metrics.MetricServiceUSPerOp, svc, ok, us, cycle)
	}
	// A spinning worker's CPU covers its pauses, unless other processes took the CPU it
	// spun on (a loaded machine preempts it mid-spin): then the comparison says nothing.
	other, measured := res.Metrics[metrics.MetricOtherCPUPct]
	if c := res.ClientCPUPerOpUS(); c > 0 && c < 0.8*us {
		if measured && other > metrics.NoisyOtherCPUPct {
			t.Logf("client CPU %.1f µs/op under the spun pause %.1f µs while other processes took %.0f%% of the CPU: not checked", c, us, other)
		} else {
			t.Errorf("client CPU %.1f µs/op, less than the spun pause %.1f µs (other processes %.0f%%)", c, us, other)
		}
	}
}
