package runner

import (
	"context"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// StepSink is where a Sequence puts its steps as they go: a run's results store
// (internal/record). A Sequence calls it from the goroutine that runs the sequence, one
// step at a time: BeginStep then FinishStep for a step it runs, SkipStep for one it does
// not.
//
// An error of any method ends the sequence at once: no later step is run or recorded,
// and the Sequence hands the error back as the sink returned it (the sink says what
// failed; internal/record's is a *record.StoreFailedError).
type StepSink interface {
	// BeginStep is called before step (the seq-th of its run, from 0) runs; the Observer
	// returned gets the step's start and its intervals (Runner.Run).
	BeginStep(seq int, step workload.Step) (Observer, error)
	// FinishStep is called with the result of the step begun last, whatever its status.
	// The Sequence has already taken the result into account: Status and Err say
	// whether it stopped the sequence.
	FinishStep(seq int, step workload.Step, res metrics.StepResult) error
	// SkipStep records a step that is not run because the sequence stopped earlier: res
	// has its name, metrics.StatusSkipped, the time and the error "not run: <first error>".
	SkipStep(seq int, step workload.Step, res metrics.StepResult) error
}

// Sequence is the policy of a run's steps, one after another: each step runs with
// Runner.Run while every step before it ended ok (or skipped itself: workload.ErrSkip);
// the first step that fails or is interrupted stops the sequence, and every later step is
// recorded as skipped, "not run: <first error>", so a run stores all its steps whatever
// happened. Its status is then failed or interrupted, and its first error says why
// ("step X failed", "interrupted during X").
//
// The zero Sequence is ready, with status ok. A Sequence keeps its state between calls,
// so the steps of several sequences can be interleaved (an interleaved comparison runs
// each point's runs' steps in turn) and one sequence can be stopped from outside (Stop).
// It is not safe for concurrent use; distinct Sequences may run at the same time.
type Sequence struct {
	status   metrics.Status // "" or metrics.StatusOK until it stops
	firstErr string
	ran      int
	skipped  int
}

// SequenceResult is how a sequence of steps ended.
type SequenceResult struct {
	// Status is metrics.StatusOK, or metrics.StatusFailed or metrics.StatusInterrupted
	// after a step failed or was interrupted (or Stop).
	Status metrics.Status
	// Err is the first error, why the later steps were skipped ("" when ok).
	Err string
	// Ran and Skipped count the steps run (whatever their status) and the steps recorded
	// as not run.
	Ran, Skipped int
	// SinkErr is the sink's error that ended the sequence before all its steps were run
	// or recorded (nil when none did).
	SinkErr error
}

// Status is the sequence's status so far: metrics.StatusOK until a step fails or is
// interrupted, then metrics.StatusFailed or metrics.StatusInterrupted.
func (q *Sequence) Status() metrics.Status {
	if q.status == "" {
		return metrics.StatusOK
	}
	return q.status
}

// Err is the sequence's first error: why its later steps are skipped ("" while ok).
func (q *Sequence) Err() string { return q.firstErr }

// Stopped reports whether the sequence has stopped: its later steps are skipped.
func (q *Sequence) Stopped() bool { return q.Status() != metrics.StatusOK }

// Result is the sequence's status, first error and counts so far (SinkErr is nil: the
// sink's error is what Step returns).
func (q *Sequence) Result() SequenceResult {
	return SequenceResult{Status: q.Status(), Err: q.firstErr, Ran: q.ran, Skipped: q.skipped}
}

// Stop stops the sequence from outside, as a step that ended with status would have:
// its later steps are skipped, "not run: " + why. It does nothing when the sequence has
// stopped already (the first error stays first). status must be metrics.StatusFailed or
// metrics.StatusInterrupted; any other status is a programming error and panics.
func (q *Sequence) Stop(status metrics.Status, why string) {
	if status != metrics.StatusFailed && status != metrics.StatusInterrupted {
		panic("runner: Sequence.Stop with status " + string(status))
	}
	if !q.Stopped() {
		q.status, q.firstErr = status, why
	}
}

// Step runs step, the seq-th of the sequence (from 0), with r and hands it to sink — or,
// when the sequence has stopped, records it skipped. A step that fails or is interrupted
// stops the sequence before sink.FinishStep is called. The error is the sink's only (a
// failed step is a result: Status); the caller then ends the sequence.
func (q *Sequence) Step(ctx context.Context, r *Runner, seq int, step workload.Step, sink StepSink) error {
	if q.Stopped() {
		r.Start.leave()
		q.skipped++
		res := metrics.StepResult{Name: step.Name(), Status: metrics.StatusSkipped, Error: "not run: " + q.firstErr, StartedAt: time.Now()}
		return sink.SkipStep(seq, step, res)
	}
	obs, err := sink.BeginStep(seq, step)
	if err != nil {
		r.Start.leave()
		return err
	}
	res := r.Run(ctx, step, obs)
	q.ran++
	switch res.Status {
	case metrics.StatusInterrupted:
		q.Stop(metrics.StatusInterrupted, "interrupted during "+step.Name())
	case metrics.StatusFailed:
		q.Stop(metrics.StatusFailed, "step "+step.Name()+" failed")
	}
	return sink.FinishStep(seq, step, res)
}

// Run runs steps in order as the sequence's steps 0, 1, … (Step), until the last one or
// the first error of sink, and returns how the sequence ended.
func (q *Sequence) Run(ctx context.Context, r *Runner, steps []workload.Step, sink StepSink) SequenceResult {
	for i, step := range steps {
		if err := q.Step(ctx, r, i, step, sink); err != nil {
			res := q.Result()
			res.SinkErr = err
			return res
		}
	}
	return q.Result()
}

// RunSteps runs steps as a new Sequence (Sequence.Run): each step while the ones before
// it ended ok, the rest recorded skipped, everything handed to sink.
func (r *Runner) RunSteps(ctx context.Context, steps []workload.Step, sink StepSink) SequenceResult {
	var q Sequence
	return q.Run(ctx, r, steps, sink)
}
