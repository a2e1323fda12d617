package runner

import (
	"context"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// mixWorker inserts a row per op like insertWorker, its ops alternating between two
// kinds (workload.Mixer): every third op is "odd", the others "even".
type mixWorker struct {
	insertWorker
}

func (w *mixWorker) OpLabels() []string { return []string{"even", "odd"} }
func (w *mixWorker) LastLabel() int {
	if w.done%3 == 0 {
		return 1
	}
	return 0
}

// A Mixer's ops are recorded under the label of their kind, the group's label getting
// none; the primary may be one of the kinds.
func TestMixerRecordsEachKind(t *testing.T) {
	r := newRunner(t)
	step := &testStep{load: workload.Load{Kind: "write", Primary: "even", Groups: []workload.Group{
		{Label: "even", Role: "insert", Unit: workload.UnitOps, UntilDone: true,
			Workers: []workload.Worker{&mixWorker{insertWorker{quota: 30}}, &mixWorker{insertWorker{quota: 9}}}},
	}}}
	res := r.Run(context.Background(), step, &collector{})
	if res.Status != metrics.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	even, odd := label(res, "even"), label(res, "odd")
	if even.Events != 20+6 || odd.Events != 10+3 || odd.Role != "insert" {
		t.Fatalf("even %d ops, odd %d ops (role %q); want 26 and 13", even.Events, odd.Events, odd.Role)
	}
}
