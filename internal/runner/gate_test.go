package runner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// slowStep is testStep whose Prepare takes delay first, or fails.
type slowStep struct {
	testStep
	delay time.Duration
	fail  bool
}

func (s *slowStep) Prepare(ctx context.Context, h engine.Handle) error {
	time.Sleep(s.delay)
	if s.fail {
		return errors.New("deliberate prepare failure")
	}
	return s.testStep.Prepare(ctx, h)
}

// TestStartGateLinesUpLoads runs two real SQLite steps at once, one of them slow to
// prepare: with a gate their timed loads start together; a step that fails before its load
// lets the other go; a sequence that skips its step does too.
func TestStartGateLinesUpLoads(t *testing.T) {
	const slow = 400 * time.Millisecond
	load := func() workload.Load {
		return workload.Load{Primary: "insert", Duration: 200 * time.Millisecond, Groups: []workload.Group{
			{Label: "insert", Unit: workload.UnitRows, Rate: 100, Workers: []workload.Worker{&insertWorker{}}},
		}}
	}
	for _, tc := range []struct {
		name       string
		gate       bool
		failSlow   bool
		skipSlow   bool
		wantApart  bool           // the fast step's load starts before the slow one's
		wantStatus metrics.Status // the fast step's
	}{
		{name: "no gate", wantApart: true, wantStatus: metrics.StatusOK},
		{name: "gate", gate: true, wantStatus: metrics.StatusOK},
		{name: "gate, slow step fails", gate: true, failSlow: true, wantStatus: metrics.StatusOK},
		{name: "gate, slow step skipped", gate: true, skipSlow: true, wantStatus: metrics.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, slowR := newRunner(t), newRunner(t)
			if tc.gate {
				g := NewStartGate(2)
				fast.Start, slowR.Start = g, g
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			var slowRes metrics.StepResult
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := &slowStep{testStep: testStep{load: load()}, delay: slow, fail: tc.failSlow}
				if tc.skipSlow {
					var q Sequence
					q.Stop(metrics.StatusFailed, "an earlier step failed")
					time.Sleep(slow)
					_ = q.Step(ctx, slowR, 0, st, &recordingSink{})
					return
				}
				slowRes = slowR.Run(ctx, st, &collector{})
			}()
			began := time.Now()
			res := fast.Run(ctx, &testStep{load: load()}, &collector{})
			wg.Wait()
			if res.Status != tc.wantStatus {
				t.Fatalf("fast step: status %s (%s)", res.Status, res.Error)
			}
			waited := res.StartedAt.Sub(began)
			if waited > slow+5*time.Second {
				t.Fatalf("fast step's load waited %v: the other runner never let it go", waited)
			}
			if tc.wantApart != (waited < slow/2) {
				t.Fatalf("fast step's load started %v after the steps began (the other prepares for %v)", waited, slow)
			}
			if !tc.failSlow && !tc.skipSlow {
				if d := res.StartedAt.Sub(slowRes.StartedAt).Abs(); tc.gate && d > slow/4 {
					t.Fatalf("gated loads started %v apart", d)
				}
			}
		})
	}
}
