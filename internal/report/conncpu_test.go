package report_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
)

// connLabel is a label of n operations in unit (rows or statements) done by role.
func connLabel(label, role string, unit metrics.Unit, n int64) report.Op {
	l := metrics.LabelStats{Label: label, Role: role, Unit: unit, Statements: n, Events: n, Rows: n * 10}
	if unit == metrics.UnitRows {
		l.Statements, l.Events, l.Rows = n/100+1, n/100+1, n
	}
	return report.Op{LabelStats: l, Count: l.Count()}
}

// connStep is a finished read-write step with labels and per-connection CPU.
func connStep(name string, ops []report.Op, conn ...metrics.ConnCPU) report.StepReport {
	return report.StepReport{Name: name, Status: metrics.StatusOK, Seconds: 10, Kind: "read-write", Primary: ops[0].Label,
		Ops: ops, HW: report.HWReport{ConnCPU: conn}}
}

// connRun is a finished run of config label, one client, with steps.
func connRun(id int64, label string, steps ...report.StepReport) report.RunReport {
	return report.RunReport{ID: id, Workload: "insertbench", WorkloadVersion: 3, Engine: "postgres", Label: label, Status: "ok",
		Params: map[string]any{"clients": json.Number("1")}, Steps: steps}
}

// The per-op figure: CPU seconds × 1e6 ÷ the role's own operations, in the unit of what
// it did; a role without operations of its own, or a one-op step, shows its seconds.
func TestRoleCPUFigure(t *testing.T) {
	rw := []report.Op{
		connLabel("point-query", "query", metrics.UnitOps, 26500),
		connLabel("insert", "insert", metrics.UnitRows, 510),
		connLabel("delete", "delete", metrics.UnitRows, 460),
	}
	s := connStep("qp100", rw,
		metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 3.1},
		metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.12},
		metrics.ConnCPU{Role: "delete", Sessions: 1, CPUSec: 0.9},
		metrics.ConnCPU{Role: "cleanup", Sessions: 1, CPUSec: 0.4})
	sysbench := connStep("read-only", []report.Op{{LabelStats: metrics.LabelStats{Label: "read-only", Role: "query", Unit: metrics.UnitOps,
		Statements: 1600, Events: 100}, Count: 1600}}, metrics.ConnCPU{Role: "query", Sessions: 2, CPUSec: 0.8})
	shape := connStep("shape", []report.Op{connLabel("get", "shape", metrics.UnitOps, 2000)},
		metrics.ConnCPU{Role: "shape", Sessions: 1, CPUSec: 0.1})
	sqlite := connStep("l.i0", []report.Op{connLabel("insert", "insert", metrics.UnitRows, 100000)},
		metrics.ConnCPU{Role: metrics.ConnCPUClientProcess, Sessions: 1, CPUSec: 2.5})
	for _, tc := range []struct {
		name  string
		step  report.StepReport
		role  string
		oneOp bool
		ops   int64
		us    float64 // µs per op; 0: none
		unit  string  // Figure's unit
		value float64 // Figure's value
	}{
		{"query role per query", s, "query", false, 26500, 3.1e6 / 26500, "µs/query", 3.1e6 / 26500},
		{"insert writer per inserted row", s, "insert", false, 510, 0.12e6 / 510, "µs/row", 0.12e6 / 510},
		{"delete writer per deleted row", s, "delete", false, 460, 0.9e6 / 460, "µs/row", 0.9e6 / 460},
		{"a role no actor had: its seconds", s, "cleanup", false, 0, 0, "s", 0.4},
		{"one-op step: its seconds, though it has ops", s, "query", true, 26500, 3.1e6 / 26500, "s", 3.1},
		{"sysbench: per statement, BEGIN and COMMIT included", sysbench, "query", false, 1600, 500, "µs/query", 500},
		{"an op that is not a query", shape, "shape", false, 2000, 50, "µs/op", 50},
		{"embedded engine's process: its seconds", sqlite, metrics.ConnCPUClientProcess, false, 0, 0, "s", 2.5},
	} {
		rc, ok := tc.step.RoleCPU(tc.role)
		if !ok {
			t.Fatalf("%s: no role %s", tc.name, tc.role)
		}
		us, hasUS := rc.USPerOp()
		if rc.Ops != tc.ops || hasUS != (tc.us > 0) || math.Abs(us-tc.us) > 1e-9 {
			t.Errorf("%s: ops %d, µs/op %v %v; want %d, %v", tc.name, rc.Ops, us, hasUS, tc.ops, tc.us)
		}
		if v, unit := rc.Figure(tc.oneOp); unit != tc.unit || math.Abs(v-tc.value) > 1e-9 {
			t.Errorf("%s: Figure = %v %s, want %v %s", tc.name, v, unit, tc.value, tc.unit)
		}
	}
	if _, ok := s.RoleCPU("index"); ok {
		t.Error("a role whose CPU was not measured has a figure")
	}
}

// The issue's shape: the candidate's query role did three times the work, so its seconds
// per step are higher (0.53 s against 0.23 s), while per query it is cheaper (117 µs
// against 159). The table shows the per-query figure, keeps the seconds beside it, and
// has no relative cell, so no mark that its statistics do not give.
func TestConnCPUPerOpIssueExample(t *testing.T) {
	var rep report.Report
	var a, b report.Group
	a.Name, b.Name = "a", "b"
	for i := range 4 {
		j := 1 + 0.002*float64(i)
		ra := connRun(int64(1+i), "a", connStep("qp100",
			[]report.Op{connLabel("point-query", "query", metrics.UnitOps, 1447), connLabel("insert", "insert", metrics.UnitRows, 1000)},
			metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 0.23 * j}, metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.05}))
		rb := connRun(int64(11+i), "b", connStep("qp100",
			[]report.Op{connLabel("point-query", "query", metrics.UnitOps, 4530), connLabel("insert", "insert", metrics.UnitRows, 1000)},
			metrics.ConnCPU{Role: "query", Sessions: 1, CPUSec: 0.53 * j}, metrics.ConnCPU{Role: "insert", Sessions: 1, CPUSec: 0.05}))
		rep.Runs = append(rep.Runs, ra, rb)
		a.RunIDs, b.RunIDs = append(a.RunIDs, ra.ID), append(b.RunIDs, rb.ID)
	}
	c := report.Compare(rep, []report.Group{a, b}, 0)
	ca := reporttest.CellAt(t, c, "conn_cpu", []string{"query", "a"}, "qp100")
	cb := reporttest.CellAt(t, c, "conn_cpu", []string{"query", "b"}, "qp100")
	if ca.Unit != "µs/query" || cb.Unit != "µs/query" || !ca.ShowUnit {
		t.Fatalf("units %q %q, want µs/query shown", ca.Unit, cb.Unit)
	}
	if math.Round(ca.Median) != 159 || math.Round(cb.Median) != 117 {
		t.Errorf("µs per query: a %.1f, b %.1f; want 159 and 117", ca.Median, cb.Median)
	}
	if !(cb.Median < ca.Median) || !(cb.CPUSec.Median > ca.CPUSec.Median) {
		t.Errorf("b did more work: more seconds (%v vs %v) but fewer µs per query (%v vs %v) — it must read as cheaper",
			cb.CPUSec.Median, ca.CPUSec.Median, cb.Median, ca.Median)
	}
	if math.Abs(ca.CPUSec.Median-0.2303) > 1e-3 || math.Abs(cb.CPUSec.Median-0.5308) > 1e-3 || ca.Ops.Median != 1447 || cb.Ops.Median != 4530 {
		t.Errorf("the seconds and ops behind the cells: a %+v %+v, b %+v %+v", ca.CPUSec, ca.Ops, cb.CPUSec, cb.Ops)
	}
	for _, tb := range c.Tables {
		if tb.ID != "conn_cpu" {
			continue
		}
		for _, r := range tb.Rows {
			for _, cell := range r.Cells {
				if cell.Rel != nil || cell.Class != report.ClassNone {
					t.Errorf("%v: a relative cell or a mark (%s) in an absolute table", r.Head, cell.Class)
				}
			}
		}
	}
}

// Every config shows one figure for a role in a step: its seconds when any run's role did
// no operation of its own there, in a one-op step, and for a role without labels.
func TestConnCPUTableFallsBackToSeconds(t *testing.T) {
	rw := func(queries int64, conn ...metrics.ConnCPU) report.StepReport {
		return connStep("qp100", []report.Op{connLabel("point-query", "query", metrics.UnitOps, queries),
			connLabel("delete", "delete", metrics.UnitRows, 0)}, conn...)
	}
	cleanup := func(sec float64) report.StepReport {
		s := connStep("cleanup", []report.Op{connLabel("cleanup", "cleanup", metrics.UnitOps, 1)},
			metrics.ConnCPU{Role: "cleanup", Sessions: 1, CPUSec: sec})
		s.Kind = "cleanup"
		return s
	}
	rep := report.Report{Runs: []report.RunReport{
		connRun(1, "a", rw(1000, metrics.ConnCPU{Role: "query", CPUSec: 0.1}, metrics.ConnCPU{Role: "delete", CPUSec: 0.02},
			metrics.ConnCPU{Role: metrics.ConnCPUClientProcess, CPUSec: 0.3}), cleanup(2)),
		connRun(2, "b", rw(0, metrics.ConnCPU{Role: "query", CPUSec: 0.1}), cleanup(3)),
	}}
	c := report.Compare(rep, []report.Group{{Name: "a", RunIDs: []int64{1}}, {Name: "b", RunIDs: []int64{2}}}, 0)
	for _, tc := range []struct {
		role, config, step string
		unit               string
		value              float64
	}{
		{"query", "a", "qp100", "s", 0.1},          // b's query role did nothing: both in seconds
		{"query", "b", "qp100", "s", 0.1},          //
		{"delete", "a", "qp100", "s", 0.02},        // 0 rows deleted
		{"client_process", "a", "qp100", "s", 0.3}, // no label of its own
		{"cleanup", "a", "cleanup", "s", 2},        // one-op step
		{"cleanup", "b", "cleanup", "s", 3},
	} {
		cell := reporttest.CellAt(t, c, "conn_cpu", []string{tc.role, tc.config}, tc.step)
		if cell.Unit != tc.unit || cell.Median != tc.value || cell.Ops != nil || cell.CPUSec == nil || cell.CPUSec.Median != tc.value {
			t.Errorf("%s %s %s: %v %s (ops %v, seconds %v), want %v %s", tc.role, tc.config, tc.step, cell.Median, cell.Unit,
				cell.Ops, cell.CPUSec, tc.value, tc.unit)
		}
	}
}
