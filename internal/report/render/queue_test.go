package render

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/store"
)

// TestQueue: an empty queue says so twice (jobs, agents); a job shows its state,
// attempt, class or "-", host, runs and command (a sweep's job its point), an agent its
// job and heartbeat's age.
func TestQueue(t *testing.T) {
	var b strings.Builder
	if err := Queue(&b, fleet.View{}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "no jobs queued\n\nno agents have run on this store (dbperf agent --results …)\n" {
		t.Errorf("empty queue:\n%s", got)
	}
	job := int64(7)
	v := fleet.View{
		Jobs: []fleet.Job{
			{ID: 7, State: "running", Attempt: 2, Host: "h1", Args: fleet.JobArgs{Argv: []string{"run", "insertbench"}}},
			{ID: 8, State: "available", Attempt: 0, Args: fleet.JobArgs{Sweep: "s", Point: "15/a", Class: "c8"}},
		},
		Agents: []fleet.AgentInfo{{ID: "h1-1-ab", Host: "h1", State: "running", JobID: &job, Age: 1234 * time.Millisecond}},
		Runs:   map[int64][]store.JobRun{7: {{Job: 7, RunID: 3, Status: "failed"}, {Job: 7, RunID: 4, Status: "running"}}},
	}
	b.Reset()
	if err := Queue(&b, v); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for _, want := range [][]string{
		{"7", "running", "2", "-", "h1", "-", "3 failed, 4 running", "run insertbench"},
		{"8", "available", "0", "c8", "-", "-", "-", "s point 15/a"},
		{"h1-1-ab", "h1", "-", "running", "7", "1.2s ago"},
	} {
		found := false
		for _, l := range lines {
			found = found || strings.Join(strings.Fields(l), " ") == strings.Join(want, " ")
		}
		if !found {
			t.Errorf("no line %q in:\n%s", want, b.String())
		}
	}
}
