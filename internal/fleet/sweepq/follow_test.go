package sweepq

import (
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
)

// TestOutcomeErr: a point none of whose jobs completed is named with its jobs' states, a
// completed one without a run that finished ok with the label to look for; measured
// points are OK and left out; a fully measured sweep has no error.
func TestOutcomeErr(t *testing.T) {
	t.Parallel()
	job := func(id int64, point, state string) fleet.Job {
		return fleet.Job{ID: id, Args: fleet.JobArgs{Sweep: "s", Point: point}, State: state}
	}
	a := Measured{Point: Point{Name: "a", Jobs: []fleet.Job{job(1, "a", "completed")}}, Job: job(1, "a", "completed"), Completed: true, RunIDs: []int64{7}}
	b := Measured{Point: Point{Name: "b", Jobs: []fleet.Job{job(2, "b", "cancelled"), job(3, "b", "discarded")}}, Job: job(3, "b", "discarded")}
	c := Measured{Point: Point{Name: "c", Jobs: []fleet.Job{job(4, "c", "completed")}}, Job: job(4, "c", "completed"), Completed: true}
	if !a.OK() || b.OK() || c.OK() {
		t.Errorf("OK: a %v b %v c %v, want only a", a.OK(), b.OK(), c.OK())
	}
	err := Outcome{Label: "s", Points: []Measured{a, b, c}}.Err()
	want := "point b: job 2 cancelled, job 3 discarded\npoint c: no run finished ok (dbperf runs --label s/c)"
	if um, ok := err.(*UnmeasuredError); !ok || err.Error() != want || len(um.Points) != 2 {
		t.Errorf("Err = %v, want *UnmeasuredError:\n%s", err, want)
	}
	if err := (Outcome{Label: "s", Points: []Measured{a}}).Err(); err != nil {
		t.Errorf("every point measured: %v", err)
	}
	if got := (&StoppedError{Label: "s", Timeout: 2 * time.Minute}).Error(); got != "sweep s: not done after --timeout 2m0s (dbperf queue --sweep s)" {
		t.Errorf("timed out: %q", got)
	}
	if got := (&StoppedError{Label: "s", Interrupted: true}).Error(); got != "stopped waiting for sweep s (its jobs go on)" {
		t.Errorf("interrupted: %q", got)
	}
}
