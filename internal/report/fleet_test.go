package report

import (
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestDescribeFleet: a config whose runs agents took from the queue names their class and
// hosts; runs started by hand say nothing of it.
func TestDescribeFleet(t *testing.T) {
	t.Parallel()
	queued := func(class, host string) RunReport {
		return RunReport{Workload: "insertbench", Engine: "sqlite", Env: map[string]string{
			store.EnvQueueJob: "7", store.EnvAgentClass: class, "hostname": host}}
	}
	for _, tc := range []struct {
		runs []RunReport
		want string
	}{
		{[]RunReport{{Workload: "insertbench", Engine: "sqlite"}}, "insertbench on sqlite, 1 run 1"},
		{[]RunReport{queued("c8r32", "a"), queued("c8r32", "b")}, "insertbench on sqlite, 2 runs 1 2, by agents of class c8r32 on a, b"},
		{[]RunReport{queued("", "a")}, "insertbench on sqlite, 1 run 1, by agents of class (none) on a"},
		// An agent started with --host names its host so (the machine's hostname was "vm").
		{[]RunReport{{Workload: "insertbench", Engine: "sqlite", Env: map[string]string{
			store.EnvQueueJob: "7", store.EnvAgentClass: "c", "hostname": "vm", store.EnvAgentHost: "db-7"}}},
			"insertbench on sqlite, 1 run 1, by agents of class c on db-7"},
	} {
		g := GroupReport{Group: Group{Name: "g"}, Runs: tc.runs}
		for i := range tc.runs {
			g.RunIDs = append(g.RunIDs, int64(i+1))
		}
		if got := g.Describe(); got != tc.want {
			t.Errorf("Describe() = %q, want %q", got, tc.want)
		}
	}
}
