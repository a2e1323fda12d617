package metrics

import (
	"errors"
	"testing"
	"time"
)

// An op of several statements (a sysbench transaction) counts its statements, which are
// the label's count and throughput (queries per second as sysbench counts them), and one
// event; latency and errors are per op.
func TestStatementsPerOp(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewRegistry(t0)
	ro := g.Recorder(LabelSpec{Label: "read-only", Role: "query", Unit: UnitOps, StatementsPerOp: 16})
	pq := g.Recorder(LabelSpec{Label: "point-query", Role: "query", Unit: UnitOps})
	for i := range 10 {
		s := t0.Add(time.Duration(i) * time.Millisecond)
		ro.Record(s, s, s.Add(2*time.Millisecond), 14, nil)
		pq.Record(s, s, s.Add(time.Millisecond), 1, nil)
	}
	ro.Record(t0, t0, t0, 0, errors.New("deadlock"))
	iv := g.Tick(t0.Add(time.Second))
	p, r := iv.Labels[0], iv.Labels[1]
	if p.Label != "point-query" || p.Statements != 10 || p.Events != 10 || p.Count() != 10 {
		t.Errorf("point-query: %+v", p)
	}
	if r.Statements != 160 || r.Events != 10 || r.Count() != 160 || r.Rows != 140 || r.Errors != 1 {
		t.Errorf("read-only: %d statements, %d events, %d rows, %d errors", r.Statements, r.Events, r.Rows, r.Errors)
	}
	if r.Service.P50 < 1990 || r.Service.P50 > 2010 {
		t.Errorf("read-only latency is the transaction's: %+v", r.Service)
	}
	if tot := g.Totals(); tot[1].Statements != 160 || tot[1].Events != 10 {
		t.Errorf("totals: %+v", tot[1])
	}
	// A sysbench write test's writes are per statement (its primary count).
	res := StepResult{Kind: "write", Primary: "read-only", Labels: []LabelStats{r}}
	if n := res.InsertedRows(); n != 160 {
		t.Errorf("a write step's wpi/wkbpi denominator is %d, want its statements", n)
	}
	res.Kind = "read"
	if n := res.InsertedRows(); n != 0 {
		t.Errorf("a read step inserts %d rows", n)
	}
}
