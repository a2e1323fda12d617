package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
)

// TestDeadLine: the clause naming a dead node says when it died relative to the step's
// load and what was done about node 0's sessions waiting for it; a step's result names
// each death once (the first failed or interrupted step after it), and a clause its error
// already holds is not repeated.
func TestDeadLine(t *testing.T) {
	start := time.Now()
	r := &Run{cl: &server.Cluster{Nodes: make([]*server.Instance, 3), ReadOnlyStandbys: true}, figures: map[string]map[string]float64{}}
	if got := r.role(0) + "," + r.role(2); got != "primary,standby" {
		t.Errorf("roles %s", got)
	}
	r.deaths = []*nodeDeath{
		{node: 1, pid: 11, role: r.role(1), at: start.Add(-time.Second), ended: 2},
		{node: 2, pid: 12, role: r.role(2), at: start.Add(time.Second), endErr: errors.New("no connection")},
	}
	want := "node 1 (standby, pid 11) died before qp100: the primary's 2 sessions waiting for it (synchronous replication) ended; " +
		"node 2 (standby, pid 12) died during qp100 (ending the primary's sessions waiting for it: no connection)"
	if got := r.deadLine("qp100", start, "", false, false); got != want {
		t.Errorf("deadLine\n got %q\nwant %q", got, want)
	}
	// The step's error already names node 2: only node 1 is put first.
	res := &metrics.StepResult{Status: metrics.StatusFailed, StartedAt: start, Error: "node 2 (standby, pid 12) died: session gone"}
	r.figures["qp100"] = map[string]float64{"node0.cpu_sec": 1.5}
	r.StepFigures("qp100", res)
	if want := "node 1 (standby, pid 11) died before qp100: the primary's 2 sessions waiting for it (synchronous replication) ended; node 2 (standby, pid 12) died: session gone"; res.Error != want {
		t.Errorf("error\n got %q\nwant %q", res.Error, want)
	}
	if res.Metrics["cluster.node0.cpu_sec"] != 1.5 || len(r.figures) != 0 {
		t.Errorf("metrics %v, figures left %v", res.Metrics, r.figures)
	}
	// Both are reported now: the next interrupted step names neither, an audit still does.
	next := &metrics.StepResult{Status: metrics.StatusInterrupted, Note: "interrupted"}
	r.StepFigures("qp200", next)
	if next.Note != "interrupted" {
		t.Errorf("note %q: the deaths were named already", next.Note)
	}
	if got := r.deadLine("qp200", time.Time{}, "", false, false); got == "" {
		t.Error("an audit after a death must still fail, naming the node")
	}
	ok := &metrics.StepResult{Status: metrics.StatusOK}
	r.deaths = append(r.deaths, &nodeDeath{node: 2, pid: 13, role: "standby", at: start})
	r.StepFigures("qp300", ok)
	if ok.Error != "" || ok.Note != "" || r.deaths[2].reported {
		t.Errorf("an ok step names no death: error %q, note %q", ok.Error, ok.Note)
	}
}

// TestSpreadLine: where --spread puts a step's sessions, as the run's env says it.
func TestSpreadLine(t *testing.T) {
	pg := spreadLine(&server.Cluster{Nodes: make([]*server.Instance, 3), ReadOnlyStandbys: true})
	if want := "--spread: each step's read-only sessions (queries) on the standbys in turn (nodes 1-2), writers on the primary (node 0); each step's note says which session went where"; pg != want {
		t.Errorf("postgres: %q", pg)
	}
	galera := spreadLine(&server.Cluster{Nodes: make([]*server.Instance, 3)})
	if want := "--spread: each step's sessions on the nodes in turn (session k of a step, its actors in order, on node k mod 3); each step's note says which session went where"; galera != want {
		t.Errorf("galera: %q", galera)
	}
}
