// Package sweepq is a sweep queued in the fleet (dbperf sweep … --queue: a job per point)
// as `dbperf sweep --label L --wait` follows it: the queue with the results store its
// points' runs go to (Open), the sweep's jobs grouped by point (Group), waiting until
// every point is done (Queue.Wait), and which runs measured each point (Queue.Outcome);
// Queue.Follow is both, with a timeout, and Outcome.Err names the points not measured.
// Its errors say how a wait ended: ErrNoSweep, *StoppedError, *UnmeasuredError.
//
// A point queued again after its job was cancelled or discarded has several jobs: it is
// done when each of them is (completed, cancelled or discarded), and measured by its
// latest completed job. A point's runs are those stored with its label, SWEEP/POINT
// (PointLabel), that finished ok. Rendering the sweep's report is the caller's. Jobs are
// the jobs a sweep is queued as.
package sweepq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/store"
)

// Queue is the fleet's queue in a PostgreSQL results store, with the store.
type Queue struct {
	Fleet *fleet.Fleet
	Store *store.Store
}

// Open opens the results store at path and its queue (fleet.OpenStore).
func Open(ctx context.Context, path string) (*Queue, error) {
	f, st, err := fleet.OpenStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Queue{Fleet: f, Store: st}, nil
}

// Close closes the queue, then the store.
func (q *Queue) Close() {
	q.Fleet.Close()
	q.Store.Close()
}

// ErrNoSweep is Wait's error when no job of the queue has the sweep's label.
var ErrNoSweep = errors.New("no queued sweep has this label")

// defaultEvery is how often Wait polls unless told.
const defaultEvery = 2 * time.Second

// WaitOptions say which sweep Wait waits for, and how.
type WaitOptions struct {
	// Label is the queued sweep's label (its jobs' JobArgs.Sweep).
	Label string
	// Every is how often the jobs are polled (0: every 2 s).
	Every time.Duration
	// Progress, when not nil, is told how many of the sweep's points are done whenever
	// that changes while some are not (the first poll included).
	Progress func(done, total int)
}

// Wait polls the sweep's jobs until every point is done and returns the points. It
// fails with ErrNoSweep when the sweep has no jobs, and with ctx's error when ctx ends
// first.
func (q *Queue) Wait(ctx context.Context, o WaitOptions) ([]Point, error) {
	every := o.Every
	if every <= 0 {
		every = defaultEvery
	}
	shown := -1
	for {
		jobs, err := q.Fleet.Jobs(ctx, o.Label)
		if err != nil {
			return nil, err
		}
		if len(jobs) == 0 {
			return nil, fmt.Errorf("sweep %s: %w", o.Label, ErrNoSweep)
		}
		done := 0
		points := Group(jobs)
		for _, p := range points {
			if p.Done() {
				done++
			}
		}
		if done == len(points) {
			return points, nil
		}
		if done != shown && o.Progress != nil {
			o.Progress(done, len(points))
			shown = done
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// Point is one point of a queued sweep with its jobs, oldest first: more than one when
// the point was queued again after its job was cancelled or discarded.
type Point struct {
	Name string
	Jobs []fleet.Job
}

// Group groups a sweep's jobs (oldest first) by point, the points in the order of their
// first job.
func Group(jobs []fleet.Job) []Point {
	var out []Point
	at := map[string]int{}
	for _, j := range jobs {
		i, ok := at[j.Args.Point]
		if !ok {
			i = len(out)
			at[j.Args.Point] = i
			out = append(out, Point{Name: j.Args.Point})
		}
		out[i].Jobs = append(out[i].Jobs, j)
	}
	return out
}

// Done says whether the point's jobs will not run again: each completed, cancelled or
// discarded.
func (p Point) Done() bool {
	for _, j := range p.Jobs {
		if !j.Done() {
			return false
		}
	}
	return true
}

// Completed is the point's latest completed job, if any.
func (p Point) Completed() (fleet.Job, bool) {
	for i := len(p.Jobs) - 1; i >= 0; i-- {
		if p.Jobs[i].State == "completed" {
			return p.Jobs[i], true
		}
	}
	return fleet.Job{}, false
}

// Measured is what one point of a waited sweep measured.
type Measured struct {
	Point
	// Job is the point's latest completed job when Completed, else its latest job.
	Job       fleet.Job
	Completed bool
	// RunIDs are a completed point's runs that finished ok, ascending; none when no run
	// of it did.
	RunIDs []int64
}

// Outcome is what a waited sweep measured, point by point, and where.
type Outcome struct {
	// Label is the sweep's.
	Label  string
	Points []Measured
	// Classes are the host classes of the points' jobs (Measured.Job), sorted, "" for
	// agents without a class.
	Classes []string
	// Hosts counts the points each host ran (Measured.Job's host, when it has one).
	Hosts map[string]int
}

// Outcome reads which runs measured each of the points of the sweep label (as Wait
// returned them): a point is measured when one of its jobs completed (a job cancelled or
// discarded and queued again is superseded by the one that completed), by the runs of
// its label that finished ok.
func (q *Queue) Outcome(ctx context.Context, label string, points []Point) (Outcome, error) {
	out := Outcome{Label: label, Hosts: map[string]int{}}
	for _, p := range points {
		m := Measured{Point: p}
		m.Job, m.Completed = p.Completed()
		if !m.Completed {
			m.Job = p.Jobs[len(p.Jobs)-1]
		}
		if !slices.Contains(out.Classes, m.Job.Args.Class) {
			out.Classes = append(out.Classes, m.Job.Args.Class)
		}
		if m.Job.Host != "" {
			out.Hosts[m.Job.Host]++
		}
		if m.Completed {
			ids, err := FinishedRuns(ctx, q.Store, PointLabel(label, m.Job.Args.Point))
			if err != nil {
				return Outcome{}, err
			}
			m.RunIDs = ids
		}
		out.Points = append(out.Points, m)
	}
	slices.Sort(out.Classes)
	return out, nil
}

// Jobs are the jobs of sweep label's points (dbperf sweep … --queue), a job per point
// name, for the agents of class: each is the sweep's command line argv, with its label
// and the point's name, in the sequential design (one point runs in a job).
func Jobs(argv []string, label, class string, points []string) []fleet.JobArgs {
	jobs := make([]fleet.JobArgs, len(points))
	for i, p := range points {
		a := append(append([]string(nil), argv...), "--design="+store.DesignSequential, "--label="+label, "--point="+p)
		jobs[i] = fleet.JobArgs{Argv: a, Sweep: label, Point: p, Class: class}
	}
	return jobs
}

// PointLabel is the label the runs of a sweep's point are stored with.
func PointLabel(sweep, point string) string { return sweep + "/" + point }

// FinishedRuns are the ids of the runs stored with label that finished ok, ascending.
func FinishedRuns(ctx context.Context, st *store.Store, label string) ([]int64, error) {
	sums, err := st.Runs(ctx, store.RunFilter{Label: label})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, s := range sums {
		if s.Status == store.RunOK {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
