package record

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/workload"
)

var _ runner.StepSink = (*StepSink)(nil)

// Sink is the runner.StepSink that stores the run's steps as a runner.Sequence runs
// them: progress goes to prog, a failed step's error to errOut.
func (rec *Run) Sink(errOut io.Writer, prog *progress.Progress) *StepSink {
	return &StepSink{rec: rec, errOut: errOut, prog: prog}
}

// StepSink stores the steps of one run (runner.StepSink). Every error it returns is a
// *StoreFailedError: the run stops.
type StepSink struct {
	rec    *Run
	errOut io.Writer
	prog   *progress.Progress
	cur    *keptStep // the step begun last
	stepID int64     // its row in the store
}

// BeginStep stores the step's start; its intervals go to the store (an intervalWriter)
// and to the terminal.
func (s *StepSink) BeginStep(seq int, step workload.Step) (runner.Observer, error) {
	rec := s.rec
	k := &keptStep{seq: seq, name: step.Name(), group: step.Group(), started: time.Now()}
	var stepID int64
	err := rec.write(func(c context.Context) error {
		id, err := rec.st.BeginStep(c, rec.id, seq, k.name, k.group, k.started)
		if err == nil {
			stepID = id
		}
		return err
	})
	if err != nil {
		return nil, rec.storeFailed("at the start of step "+k.name, err, false)
	}
	rec.kept = append(rec.kept, k)
	k.iw = newIntervalWriter(rec, stepID)
	s.cur, s.stepID = k, stepID
	k.id = stepID
	return &observer{iw: k.iw, prog: s.prog}, nil
}

// FinishStep shows the step's result, waits for its intervals to be written and stores
// the result, then its CPU profiles (--cpu-profile) and its statements and waits
// (--explain), all after the step's load.
func (s *StepSink) FinishStep(seq int, step workload.Step, res metrics.StepResult) error {
	rec, k := s.rec, s.cur
	if rec.StepMetrics != nil {
		rec.StepMetrics(k.name, &res)
	}
	s.prog.Finish(res)
	k.res = &res
	if res.Status == metrics.StatusFailed {
		fmt.Fprintf(s.errOut, "dbperf: step %s failed: %s\n", step.Name(), res.Error)
	}
	if err := k.iw.close(); err != nil {
		return rec.storeFailed("during step "+k.name, err, false)
	}
	stepID := s.stepID
	if err := rec.write(func(c context.Context) error { return rec.st.FinishStep(c, stepID, res) }); err != nil {
		return rec.storeFailed("at the end of step "+k.name, err, false)
	}
	if rec.Diag != nil {
		if k.stmts, k.waits = rec.Diag(k.name); len(k.stmts) > 0 || len(k.waits) > 0 {
			stmts, waits := k.stmts, k.waits
			if err := rec.write(func(c context.Context) error { return rec.st.PutStepDiag(c, stepID, stmts, waits) }); err != nil {
				return rec.storeFailed("storing the statements and waits of step "+k.name, err, false)
			}
		}
	}
	return nil
}

// SkipStep stores a step that was not run because of an earlier failure.
func (s *StepSink) SkipStep(seq int, step workload.Step, res metrics.StepResult) error {
	rec := s.rec
	name, group := step.Name(), step.Group()
	rec.kept = append(rec.kept, &keptStep{seq: seq, name: name, group: group, started: res.StartedAt, res: &res})
	err := rec.write(func(c context.Context) error {
		id, err := rec.st.BeginStep(c, rec.id, seq, name, group, res.StartedAt)
		if err != nil {
			return err
		}
		return rec.st.FinishStep(c, id, res)
	})
	if err != nil {
		return rec.storeFailed("recording the skipped step "+name, err, false)
	}
	return nil
}

// observer hands each interval to the step's intervalWriter and shows it on the terminal.
type observer struct {
	iw   *intervalWriter
	prog *progress.Progress
}

func (o *observer) StepStarted(name string, load workload.Load) {
	o.prog.Start(name, load.Duration)
}

func (o *observer) Interval(name string, iv metrics.Interval) {
	o.iw.add(iv)
	o.prog.Interval(name, iv)
}

// intervalWriter writes a step's intervals to the store off the measuring path: add never
// waits on the store, a goroutine writes what has come in, in batches.
type intervalWriter struct {
	rec    *Run
	stepID int64
	wake   chan struct{} // capacity 1: "there is more"
	done   chan struct{} // closed when the goroutine has ended

	mu      sync.Mutex
	pending []metrics.Interval // not yet written
	all     []metrics.Interval // every interval, for a spill
	closed  bool

	err error // the first failed write (the goroutine's; read after done)
}

func newIntervalWriter(rec *Run, stepID int64) *intervalWriter {
	w := &intervalWriter{rec: rec, stepID: stepID, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *intervalWriter) add(iv metrics.Interval) {
	w.mu.Lock()
	w.pending = append(w.pending, iv)
	w.all = append(w.all, iv)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *intervalWriter) loop() {
	defer close(w.done)
	for range w.wake {
		for {
			w.mu.Lock()
			batch, closed := w.pending, w.closed
			w.pending = nil
			w.mu.Unlock()
			if len(batch) > 0 && w.err == nil {
				w.err = w.rec.write(func(c context.Context) error { return w.rec.st.AppendIntervals(c, w.stepID, batch) })
			}
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
		}
	}
}

// close waits for the intervals added so far to be written (or to fail) and returns the
// first failure.
func (w *intervalWriter) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	return w.err
}

// intervals are every interval added (for a spill).
func (w *intervalWriter) intervals() []metrics.Interval {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all
}
