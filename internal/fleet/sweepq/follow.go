package sweepq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// FollowOptions say which sweep Follow waits for, how, and how long.
type FollowOptions struct {
	WaitOptions
	// Timeout, when above 0, is the longest Follow waits.
	Timeout time.Duration
}

// A StoppedError is a Follow that stopped before the sweep was done, whose jobs go on:
// after its Timeout, or Interrupted (its context ended).
type StoppedError struct {
	Label       string
	Timeout     time.Duration
	Interrupted bool
}

func (e *StoppedError) Error() string {
	if e.Interrupted {
		return fmt.Sprintf("stopped waiting for sweep %s (its jobs go on)", e.Label)
	}
	return fmt.Sprintf("sweep %s: not done after --timeout %s (dbperf queue --sweep %s)", e.Label, e.Timeout, e.Label)
}

// An UnmeasuredError names the points of a waited sweep that were not measured, a line
// each.
type UnmeasuredError struct{ Points []string }

func (e *UnmeasuredError) Error() string { return strings.Join(e.Points, "\n") }

// Follow waits until every point of the sweep o.Label is done (Wait), at most o.Timeout,
// then reads what each measured (Outcome). It fails with ErrNoSweep when the sweep has
// no jobs, and with a *StoppedError when the timeout or ctx ended the wait.
func (q *Queue) Follow(ctx context.Context, o FollowOptions) (Outcome, error) {
	wctx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	points, err := q.Wait(wctx, o.WaitOptions)
	switch {
	case err == nil:
		return q.Outcome(wctx, o.Label, points)
	case errors.Is(err, ErrNoSweep):
		return Outcome{}, err
	case errors.Is(wctx.Err(), context.DeadlineExceeded) && o.Timeout > 0:
		return Outcome{}, &StoppedError{Label: o.Label, Timeout: o.Timeout}
	case wctx.Err() != nil:
		return Outcome{}, &StoppedError{Label: o.Label, Interrupted: true}
	}
	return Outcome{}, err
}

// OK says whether the point was measured: one of its jobs completed, and a run of it
// finished ok.
func (m Measured) OK() bool { return m.Completed && len(m.RunIDs) > 0 }

// Err is an *UnmeasuredError naming each point the sweep did not measure: its jobs with
// their states when none completed, else that no run of it finished ok; nil when every
// point was measured.
func (o Outcome) Err() error {
	var problems []string
	for _, m := range o.Points {
		switch {
		case !m.Completed:
			var states []string
			for _, j := range m.Jobs {
				states = append(states, fmt.Sprintf("job %d %s%s", j.ID, j.State, j.SpillNote()))
			}
			problems = append(problems, fmt.Sprintf("point %s: %s", m.Name, strings.Join(states, ", ")))
		case len(m.RunIDs) == 0:
			problems = append(problems, fmt.Sprintf("point %s: no run finished ok (dbperf runs --label %s)%s", m.Job.Args.Point, PointLabel(o.Label, m.Job.Args.Point), m.Job.SpillNote()))
		case m.Job.SpillNote() != "":
			// Measured, but a run the job began was left in a spill file.
			problems = append(problems, fmt.Sprintf("point %s: job %d left a run unstored%s", m.Job.Args.Point, m.Job.ID, m.Job.SpillNote()))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &UnmeasuredError{Points: problems}
}
