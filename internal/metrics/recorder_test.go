package metrics

import (
	"errors"
	"testing"
	"time"
)

func TestRegistryMergesWorkersPerInterval(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewRegistry(t0)
	a := g.Recorder(LabelSpec{Label: "insert", Role: "insert", Unit: UnitRows, OpenLoop: true, TargetPerSec: 500, Background: true})
	b := g.Recorder(LabelSpec{Label: "insert", Role: "insert", Unit: UnitRows, OpenLoop: true, TargetPerSec: 500, Background: true})
	q := g.Recorder(LabelSpec{Label: "point-query", Role: "query", Unit: UnitOps})

	// Worker a: 100 ops of 1 ms, each started 2 ms late → response 3 ms.
	for i := 0; i < 100; i++ {
		s := t0.Add(time.Duration(i) * time.Millisecond)
		a.Record(s.Add(-2*time.Millisecond), s, s.Add(time.Millisecond), 50, nil)
	}
	// Worker b: one slow op of 100 ms started 20 ms late, one error.
	b.Record(t0, t0.Add(20*time.Millisecond), t0.Add(120*time.Millisecond), 50, nil)
	b.Record(t0, t0, t0, 0, errors.New("boom"))
	b.Missed(3)
	q.Record(t0, t0, t0.Add(500*time.Microsecond), 10, nil)

	iv := g.Tick(t0.Add(time.Second))
	if iv.Seq != 0 || iv.Start != 0 || iv.End != time.Second {
		t.Fatalf("interval bounds: %+v", iv)
	}
	if len(iv.Labels) != 2 || iv.Labels[0].Label != "insert" || iv.Labels[1].Label != "point-query" {
		t.Fatalf("labels: %+v", iv.Labels)
	}
	ins := iv.Labels[0]
	if ins.Statements != 101 || ins.Rows != 5050 || ins.Errors != 1 || ins.Missed != 3 || ins.Late != 1 {
		t.Fatalf("insert counters: %+v", ins)
	}
	if ins.Count() != 5050 || ins.TargetPerSec != 1000 || !ins.Background || !ins.HasResponse {
		t.Fatalf("insert meta: %+v", ins)
	}
	if ins.Service.P50 < 990 || ins.Service.P50 > 1010 || ins.Service.Max < 99_900 {
		t.Fatalf("service latency: %+v", ins.Service)
	}
	if ins.Response.P50 < 2990 || ins.Response.P50 > 3010 || ins.Response.Max < 119_900 {
		t.Fatalf("response latency: %+v", ins.Response)
	}
	if pq := iv.Labels[1]; pq.Count() != 1 || pq.Rows != 10 || pq.HasResponse {
		t.Fatalf("query: %+v", pq)
	}

	// The next interval starts empty; totals keep both.
	a.Record(t0, t0, t0.Add(2*time.Millisecond), 50, nil)
	iv2 := g.Tick(t0.Add(2 * time.Second))
	if iv2.Seq != 1 || iv2.Start != time.Second || iv2.Labels[0].Statements != 1 || iv2.Labels[1].Statements != 0 {
		t.Fatalf("second interval: %+v", iv2)
	}
	tot := g.Totals()
	if tot[0].Statements != 102 || tot[0].Rows != 5100 || tot[1].Statements != 1 {
		t.Fatalf("totals: %+v", tot)
	}
}

func TestClosedLoopHasNoResponseOrLate(t *testing.T) {
	t0 := time.Unix(0, 0)
	g := NewRegistry(t0)
	r := g.Recorder(LabelSpec{Label: "insert", Unit: UnitRows})
	r.Record(t0, t0.Add(time.Second), t0.Add(time.Second+time.Millisecond), 100, nil)
	s := g.Tick(t0.Add(2 * time.Second)).Labels[0]
	if s.HasResponse || s.Late != 0 || s.Service.Max < 999 || s.Service.Max > 1001 {
		t.Fatalf("closed loop: %+v", s)
	}
}

func TestStepResultPerOp(t *testing.T) {
	r := StepResult{Primary: "insert", ClientCPUSec: 2, Labels: []LabelStats{
		{Label: "delete", Unit: UnitRows, Rows: 10},
		{Label: "insert", Unit: UnitRows, Statements: 10, Rows: 1000},
	}}
	if got := r.ClientCPUPerOpUS(); got != 2000 {
		t.Fatalf("cpu per op = %v, want 2000", got)
	}
	if (StepResult{Primary: "x"}).ClientCPUPerOpUS() != 0 {
		t.Fatal("no ops must give 0")
	}
}

func BenchmarkRecorderRecord(b *testing.B) {
	t0 := time.Now()
	g := NewRegistry(t0)
	r := g.Recorder(LabelSpec{Label: "insert", Unit: UnitRows, OpenLoop: true})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := t0.Add(time.Duration(i) * time.Microsecond)
		r.Record(s, s, s.Add(time.Duration(i%5000)*time.Microsecond), 50, nil)
	}
}

func BenchmarkRegistryTick(b *testing.B) {
	t0 := time.Now()
	g := NewRegistry(t0)
	recs := make([]*Recorder, 3)
	for i := range recs {
		recs[i] = g.Recorder(LabelSpec{Label: []string{"insert", "delete", "point-query"}[i], Unit: UnitRows, OpenLoop: i < 2})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for _, r := range recs {
			r.Record(t0, t0, t0.Add(time.Millisecond), 1, nil)
		}
		g.Tick(t0.Add(time.Duration(i+1) * time.Second))
	}
}
