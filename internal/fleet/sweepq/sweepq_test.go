package sweepq

import (
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/fleet"
)

// TestGroupSupersededJobs: a point queued again after its job was cancelled is one point
// with both jobs, in the order of the points' first jobs; it is done when each of its
// jobs is, and measured by its latest completed job.
func TestGroupSupersededJobs(t *testing.T) {
	t.Parallel()
	job := func(id int64, point, state string) fleet.Job {
		return fleet.Job{ID: id, Args: fleet.JobArgs{Sweep: "s", Point: point}, State: state}
	}
	points := Group([]fleet.Job{job(1, "a", "completed"), job(2, "b", "cancelled"), job(3, "c", "running"),
		job(4, "b", "completed"), job(5, "c", "discarded"), job(6, "d", "cancelled")})
	var names []string
	for _, p := range points {
		names = append(names, p.Name)
	}
	if len(points) != 4 || names[0] != "a" || names[1] != "b" || names[2] != "c" || names[3] != "d" {
		t.Fatalf("points %v, want a b c d", names)
	}
	if n := len(points[1].Jobs); n != 2 || points[1].Jobs[0].ID != 2 || points[1].Jobs[1].ID != 4 {
		t.Errorf("point b's jobs %+v, want 2 then 4", points[1].Jobs)
	}
	for i, want := range []bool{true, true, false, true} {
		if got := points[i].Done(); got != want {
			t.Errorf("point %s: done %v, want %v", points[i].Name, got, want)
		}
	}
	for i, want := range []int64{1, 4, 0, 0} {
		j, ok := points[i].Completed()
		if ok != (want != 0) || j.ID != want {
			t.Errorf("point %s: completed job %d (%v), want %d", points[i].Name, j.ID, ok, want)
		}
	}
	if got := PointLabel("s", "b"); got != "s/b" {
		t.Errorf("PointLabel = %q", got)
	}
}

// TestJobs: a queued sweep's job per point is the sweep's command line with the
// sequential design, its label and the point's name, for the class asked; the command
// line given is not changed.
func TestJobs(t *testing.T) {
	t.Parallel()
	argv := []string{"sweep", "w", "--profiles=a,b"}
	jobs := Jobs(argv[:2], "s1", "c8", []string{"15/a", "15/b"})
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	for i, p := range []string{"15/a", "15/b"} {
		j := jobs[i]
		want := []string{"sweep", "w", "--design=sequential", "--label=s1", "--point=" + p}
		if !slices.Equal(j.Argv, want) || j.Sweep != "s1" || j.Point != p || j.Class != "c8" {
			t.Errorf("job %d: %+v, want argv %q", i, j, want)
		}
	}
	if argv[2] != "--profiles=a,b" {
		t.Errorf("the sweep's command line changed: %q", argv)
	}
}
