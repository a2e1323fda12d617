package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// seqStep is a step of a sequence test: a few inserts into t on real SQLite, which ok,
// fail (its audit) or interrupt (cancel, called by its worker after its first insert)
// make end so.
type seqStep struct {
	name   string
	fail   bool
	cancel context.CancelFunc
	ran    bool
}

func (s *seqStep) Name() string  { return s.name }
func (s *seqStep) Group() string { return "g" }
func (s *seqStep) Prepare(ctx context.Context, h engine.Handle) error {
	s.ran = true
	return (&testStep{}).Prepare(ctx, h)
}
func (s *seqStep) Load(context.Context, engine.Handle) (workload.Load, error) {
	var w workload.Worker = &insertWorker{quota: 5}
	if s.cancel != nil {
		w = &cancelWorker{insertWorker: insertWorker{quota: 1000}, cancel: s.cancel}
	}
	return workload.Load{Primary: "insert", Groups: []workload.Group{
		{Label: "insert", Unit: workload.UnitRows, UntilDone: true, Workers: []workload.Worker{w}},
	}}, nil
}
func (s *seqStep) Verify(context.Context, engine.Handle) (string, error) {
	if s.fail {
		return "", errors.New("count(*)=4 but inserted 5")
	}
	return "checked", nil
}

// cancelWorker cancels the step's context after its first insert: Ctrl-C mid-step.
type cancelWorker struct {
	insertWorker
	cancel context.CancelFunc
}

func (w *cancelWorker) Op(ctx context.Context) (int64, error) {
	n, err := w.insertWorker.Op(ctx)
	w.cancel()
	return n, err
}

// sinkCall is one call of a recordingSink: "begin a", "finish a ok", "skip b: not run: …".
type sinkCall = string

// recordingSink records its calls and fails the call numbered failAt (from 1; 0: never).
type recordingSink struct {
	calls  []sinkCall
	failAt int
	obs    *collector
	// status is the sequence's status each FinishStep saw (the policy is applied first).
	seq      *Sequence
	statuses []metrics.Status
}

var errStoreDown = errors.New("store down")

func (s *recordingSink) call(c sinkCall) error {
	s.calls = append(s.calls, c)
	if len(s.calls) == s.failAt {
		return fmt.Errorf("%s: %w", c, errStoreDown)
	}
	return nil
}

func (s *recordingSink) BeginStep(seq int, step workload.Step) (Observer, error) {
	if err := s.call(fmt.Sprintf("begin %d %s", seq, step.Name())); err != nil {
		return nil, err
	}
	return s.obs, nil
}

func (s *recordingSink) FinishStep(seq int, step workload.Step, res metrics.StepResult) error {
	if s.seq != nil {
		s.statuses = append(s.statuses, s.seq.Status())
	}
	return s.call(fmt.Sprintf("finish %d %s %s", seq, res.Name, res.Status))
}

func (s *recordingSink) SkipStep(seq int, step workload.Step, res metrics.StepResult) error {
	if res.StartedAt.IsZero() {
		return fmt.Errorf("skipped step %s without a time", step.Name())
	}
	return s.call(fmt.Sprintf("skip %d %s %s: %s", seq, res.Name, res.Status, res.Error))
}

// The policy of a sequence of steps: which run, which are skipped with what message, the
// status and first error, and a sink error ending it at once.
func TestSequencePolicy(t *testing.T) {
	r := newRunner(t)
	cases := []struct {
		name      string
		fail      string // the step whose audit fails
		interrupt string // the step during which ctx is cancelled
		failAt    int    // the sink call that fails
		want      []sinkCall
		status    metrics.Status
		err       string
		ran, skip int
	}{
		{name: "all ok",
			want:   []sinkCall{"begin 0 a", "finish 0 a ok", "begin 1 b", "finish 1 b ok", "begin 2 c", "finish 2 c ok"},
			status: metrics.StatusOK, ran: 3},
		{name: "a failed step skips the later ones", fail: "a",
			want: []sinkCall{"begin 0 a", "finish 0 a failed",
				"skip 1 b skipped: not run: step a failed", "skip 2 c skipped: not run: step a failed"},
			status: metrics.StatusFailed, err: "step a failed", ran: 1, skip: 2},
		{name: "an interrupted step skips the later ones", interrupt: "b",
			want: []sinkCall{"begin 0 a", "finish 0 a ok", "begin 1 b", "finish 1 b interrupted",
				"skip 2 c skipped: not run: interrupted during b"},
			status: metrics.StatusInterrupted, err: "interrupted during b", ran: 2, skip: 1},
		{name: "a sink error at a step's start ends the sequence", failAt: 3,
			want:   []sinkCall{"begin 0 a", "finish 0 a ok", "begin 1 b"},
			status: metrics.StatusOK, ran: 1},
		{name: "a sink error at a step's end ends the sequence", failAt: 2,
			want:   []sinkCall{"begin 0 a", "finish 0 a ok"},
			status: metrics.StatusOK, ran: 1},
		{name: "a sink error recording a skipped step ends the sequence", fail: "a", failAt: 3,
			want:   []sinkCall{"begin 0 a", "finish 0 a failed", "skip 1 b skipped: not run: step a failed"},
			status: metrics.StatusFailed, err: "step a failed", ran: 1, skip: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var steps []workload.Step
			var all []*seqStep
			for _, n := range []string{"a", "b", "c"} {
				s := &seqStep{name: n, fail: n == c.fail}
				if n == c.interrupt {
					s.cancel = cancel
				}
				steps, all = append(steps, s), append(all, s)
			}
			sink := &recordingSink{failAt: c.failAt, obs: &collector{}}
			res := r.RunSteps(ctx, steps, sink)
			if !slices.Equal(sink.calls, c.want) {
				t.Errorf("sink calls:\n  %s\nwant\n  %s", strings.Join(sink.calls, "\n  "), strings.Join(c.want, "\n  "))
			}
			if res.Status != c.status || res.Err != c.err || res.Ran != c.ran || res.Skipped != c.skip {
				t.Errorf("result %+v, want status %s, error %q, %d ran, %d skipped", res, c.status, c.err, c.ran, c.skip)
			}
			if (c.failAt > 0) != errors.Is(res.SinkErr, errStoreDown) {
				t.Errorf("sink error %v, want one only when the sink fails", res.SinkErr)
			}
			for i, s := range all {
				if want := i < c.ran; s.ran != want {
					t.Errorf("step %s run: %v, want %v", s.name, s.ran, want)
				}
			}
			if sink.obs.started != c.ran {
				t.Errorf("the observer saw %d steps start, want %d", sink.obs.started, c.ran)
			}
		})
	}
}

// A step's failure is taken into account before the sink gets its result, so a sink
// that stores the run's status with the step stores the right one.
func TestSequenceStatusBeforeFinishStep(t *testing.T) {
	r := newRunner(t)
	var q Sequence
	sink := &recordingSink{obs: &collector{}, seq: &q}
	steps := []workload.Step{&seqStep{name: "a"}, &seqStep{name: "b", fail: true}}
	if res := q.Run(context.Background(), r, steps, sink); res.Status != metrics.StatusFailed || res.SinkErr != nil {
		t.Fatalf("result %+v", res)
	}
	if want := []metrics.Status{metrics.StatusOK, metrics.StatusFailed}; !slices.Equal(sink.statuses, want) {
		t.Errorf("statuses at FinishStep %v, want %v", sink.statuses, want)
	}
}

// Sequences stepped in turn keep their own state, and Stop stops one from outside (an
// interleaved comparison's point failed in another run) without replacing a first error.
func TestSequenceStepAndStop(t *testing.T) {
	r := newRunner(t)
	var one, two Sequence
	s1, s2 := &recordingSink{obs: &collector{}}, &recordingSink{obs: &collector{}}
	ctx := context.Background()
	if err := one.Step(ctx, r, 0, &seqStep{name: "a", fail: true}, s1); err != nil {
		t.Fatal(err)
	}
	if err := two.Step(ctx, r, 0, &seqStep{name: "a"}, s2); err != nil {
		t.Fatal(err)
	}
	if one.Status() != metrics.StatusFailed || two.Status() != metrics.StatusOK || two.Stopped() {
		t.Fatalf("statuses %s and %s after a failed and an ok step", one.Status(), two.Status())
	}
	two.Stop(one.Status(), one.Err())
	two.Stop(metrics.StatusInterrupted, "interrupted") // the first error stays
	b := &seqStep{name: "b"}
	if err := two.Step(ctx, r, 1, b, s2); err != nil {
		t.Fatal(err)
	}
	want := []sinkCall{"begin 0 a", "finish 0 a ok", "skip 1 b skipped: not run: step a failed"}
	if b.ran || !slices.Equal(s2.calls, want) {
		t.Errorf("stopped sequence: ran %v, calls %q, want %q", b.ran, s2.calls, want)
	}
	if got := two.Result(); got.Status != metrics.StatusFailed || got.Err != "step a failed" || got.Ran != 1 || got.Skipped != 1 {
		t.Errorf("result %+v", got)
	}
	var zero Sequence
	if zero.Status() != metrics.StatusOK || zero.Stopped() || zero.Err() != "" {
		t.Errorf("zero Sequence: %s %q", zero.Status(), zero.Err())
	}
	defer func() {
		if recover() == nil {
			t.Error("Stop with status ok did not panic")
		}
	}()
	zero.Stop(metrics.StatusOK, "")
}
