package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// diagRun is a run of steps (name → ops, seconds) with statements and waits on the first.
func diagRun(id int64, ops int64, secs float64, stmts []store.StepStatement, waits []store.StepWait) store.Run {
	st := store.Step{Result: metrics.StepResult{Name: "l.i1", Primary: "insert", Seconds: secs,
		Labels: []metrics.LabelStats{{Label: "insert", Unit: metrics.UnitRows, Rows: ops}}},
		Statements: stmts, Waits: waits}
	return store.Run{ID: id, Steps: []store.Step{st}}
}

const (
	pgIndexPlan = `[{"Plan": {"Node Type": "ModifyTable", "Operation": "Delete", "Relation Name": "pi1", "Startup Cost": 1.5,
		"Plans": [{"Node Type": "Index Scan", "Index Name": "pi1_pkey", "Relation Name": "pi1", "Plan Rows": 10}]}}]`
	pgIndexPlanOtherCosts = `[{"Plan": {"Node Type": "ModifyTable", "Operation": "Delete", "Relation Name": "pi1", "Startup Cost": 9,
		"Plans": [{"Node Type": "Index Scan", "Index Name": "pi1_pkey", "Relation Name": "pi1", "Plan Rows": 1000}]}}]`
	pgSeqPlan = `[{"Plan": {"Node Type": "ModifyTable", "Operation": "Delete", "Relation Name": "pi1",
		"Plans": [{"Node Type": "Seq Scan", "Relation Name": "pi1"}]}}]`
	mariaPlan = `{"query_block": {"select_id": 1, "table": {"table_name": "pi1", "access_type": "range", "key": "PRIMARY", "rows": 50}}}`
)

// TestExplainStatementsAndWaits: statements are matched by their text (ids differ between
// runs), figures are per call and per operation, sorted by the change of µs per
// operation with their share of all statements' change; a plan that differs only in
// numbers is the same plan, one with another scan is changed and outlined; waits are
// shares of each role's samples.
func TestExplainStatementsAndWaits(t *testing.T) {
	del := "DELETE FROM pi1 WHERE transactionid < $1"
	ins := "INSERT INTO pi1 VALUES ($1, $2)"
	base := []store.Run{diagRun(1, 1000, 1, []store.StepStatement{
		{QueryID: "11", Query: del, Calls: 10, ExecSec: 0.01, PlanSec: 0.001, BlocksHit: 100, Plan: pgIndexPlan},
		{QueryID: "12", Query: ins, Calls: 1000, ExecSec: 0.1, WALBytes: 100000, Plan: pgIndexPlan},
	}, []store.StepWait{{Role: "insert", Wait: "CPU", Samples: 15, Hz: 20}, {Role: "insert", Wait: "IO:WALSync", Samples: 5, Hz: 20}})}
	neu := []store.Run{diagRun(2, 2000, 1, []store.StepStatement{
		{QueryID: "21", Query: del, Calls: 20, ExecSec: 0.2, PlanSec: 0.002, BlocksHit: 400, Plan: pgSeqPlan},
		{QueryID: "22", Query: "INSERT INTO pi1   VALUES ($1, $2)", Calls: 2000, ExecSec: 0.2, WALBytes: 200000, Plan: pgIndexPlanOtherCosts},
	}, []store.StepWait{{Role: "insert", Wait: "CPU", Samples: 10, Hz: 20}, {Role: "insert", Wait: "IO:WALSync", Samples: 10, Hz: 20}})}
	e, err := BuildExplain(Group{Name: "a", RunIDs: []int64{1}}, Group{Name: "b", RunIDs: []int64{2}}, base, neu, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Steps) != 1 || len(e.Steps[0].Roles) != 0 {
		t.Fatalf("steps %+v", e.Steps)
	}
	s := e.Steps[0]
	if !near(s.BaseRate, 1000) || !near(s.NewRate, 2000) || !near(s.Change, 1) || s.BaseStatementOps != 1000 || s.NewStatementOps != 2000 {
		t.Errorf("step %+v", s)
	}
	if len(s.Statements) != 2 {
		t.Fatalf("statements %+v", s.Statements)
	}
	d, i := s.Statements[0], s.Statements[1]
	// delete: (0.01 + 0.001) s / 1000 ops = 11 µs/op → (0.2 + 0.002) / 2000 = 101 µs/op.
	if d.Query != del || !near(d.Base.USPerOp, 11) || !near(d.New.USPerOp, 101) || !near(d.DeltaUSPerOp, 90) ||
		!near(d.Base.ExecUSPerCall, 1000) || !near(d.New.ExecUSPerCall, 10000) || !near(d.New.PlanUSPerCall, 100) ||
		!near(d.Base.HitPerCall, 10) || !near(d.New.HitPerCall, 20) || !near(d.New.CallsPerOp, 0.01) {
		t.Errorf("delete %+v", d)
	}
	// insert: 100 µs/op both; all statements changed by +90, the delete explains all of it.
	if i.Query != ins || !near(i.DeltaUSPerOp, 0) || !near(d.Share, 1) || !near(i.Share, 0) || !near(i.New.WALBytesPerCall, 100) {
		t.Errorf("insert %+v (delete share %v)", i, d.Share)
	}
	if !d.PlanChanged || i.PlanChanged {
		t.Errorf("plan changed: delete %v, insert %v (costs and rows differ only)", d.PlanChanged, i.PlanChanged)
	}
	if got := strings.Join(d.BasePlan, "|"); got != "ModifyTable Delete pi1|  Index Scan pi1 pi1_pkey" {
		t.Errorf("base plan outline %q", got)
	}
	if got := strings.Join(d.NewPlan, "|"); got != "ModifyTable Delete pi1|  Seq Scan pi1" {
		t.Errorf("new plan outline %q", got)
	}
	if len(s.Waits) != 2 || s.Waits[0].Wait != "CPU" || !near(s.Waits[0].Base, 0.75) || !near(s.Waits[0].New, 0.5) ||
		!near(s.Waits[1].Delta, 0.25) || s.Waits[1].NewSamples != 10 {
		t.Errorf("waits %+v", s.Waits)
	}
}

func TestPlanShapes(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{pgIndexPlan, pgIndexPlanOtherCosts, true},
		{pgIndexPlan, pgSeqPlan, false},
		{mariaPlan, strings.Replace(mariaPlan, `"rows": 50`, `"rows": 5000`, 1), true},
		{mariaPlan, strings.Replace(mariaPlan, `"range"`, `"ALL"`, 1), false},
		{"not json", " not json\n", true},
	} {
		if got := SamePlan(tc.a, tc.b); got != tc.same {
			t.Errorf("SamePlan(%.40q, %.40q) = %v", tc.a, tc.b, got)
		}
	}
	if got := strings.Join(PlanOutline(mariaPlan), "|"); got != "pi1 range PRIMARY" {
		t.Errorf("MariaDB outline %q", got)
	}
	if got := PlanOutline("Seq Scan on t\n  Filter"); len(got) != 2 {
		t.Errorf("text outline %q", got)
	}
	if math.IsNaN(absChange(math.NaN())) || absChange(math.NaN()) >= 0 {
		t.Error("a step without a change does not sort last")
	}
}

// TestExplainCustomPlans: a config whose custom plan (with one execution's parameters)
// is not its generic plan says so, where first (real plans of PostgreSQL 15 over 200000
// rows: the generic delete hash-joins a seq scan, the custom one loops over the index);
// the same custom and generic plans say nothing; custom plans that differ between the
// configs while their generic plans do not are a plan change.
func TestExplainCustomPlans(t *testing.T) {
	generic, custom := readPlan(t, "pg15_delete_generic_200k"), readPlan(t, "pg15_delete_custom_200k")
	del := "DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid ASC LIMIT $2)"
	stmt := func(plan, customPlan string) []store.StepStatement {
		return []store.StepStatement{{QueryID: "1", Query: del, Calls: 10, ExecSec: 0.01, Plan: plan,
			CustomPlan: customPlan, CustomPlanNote: "$1 = '100', $2 = '50'"}}
	}
	for _, tc := range []struct {
		name                  string
		base, neu             []store.StepStatement
		baseCustom, newCustom string
		changed               string
	}{
		{"custom differs in new", stmt(custom, custom), stmt(generic, custom), "", "ModifyTable Delete pi1: Hash Join Semi → Nested Loop Inner",
			"generic plan: ModifyTable Delete pi1: Nested Loop Inner → Hash Join Semi"},
		{"same", stmt(custom, custom), stmt(custom, custom), "", "", ""},
		{"custom plans differ", stmt(generic, custom), stmt(generic, generic), "ModifyTable Delete pi1: Hash Join Semi → Nested Loop Inner", "",
			"custom plan: ModifyTable Delete pi1: Nested Loop Inner → Hash Join Semi"},
		{"no custom plan", stmt(generic, ""), stmt(generic, ""), "", "", ""},
	} {
		e, err := BuildExplain(Group{Name: "a"}, Group{Name: "b"}, []store.Run{diagRun(1, 1000, 1, tc.base, nil)},
			[]store.Run{diagRun(2, 1000, 1, tc.neu, nil)}, ExplainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := e.Steps[0].Statements[0]
		if c.BaseCustom != tc.baseCustom || c.NewCustom != tc.newCustom || c.PlanDiff != tc.changed || c.PlanChanged != (tc.changed != "") {
			t.Errorf("%s: base custom %q, new custom %q, changed %v %q; want %q, %q, %q", tc.name, c.BaseCustom, c.NewCustom,
				c.PlanChanged, c.PlanDiff, tc.baseCustom, tc.newCustom, tc.changed)
		}
		if (c.NewCustom != "") != (len(c.NewCustomPlan) > 0) || (c.New.CustomPlan != "") != (c.New.CustomParams == "$1 = '100', $2 = '50'") {
			t.Errorf("%s: new custom outline %q, parameters %q", tc.name, c.NewCustomPlan, c.New.CustomParams)
		}
	}
}

// Statements get intervals across blocks as functions do: in 12 blocks whose drift both
// configs share (±15%), a statement whose execution costs 10% more in every block of the
// new config is called changed, one that costs the same is not, and an A/A calls none.
func TestExplainStatementIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	drift := make([]float64, 12)
	for i := range drift {
		drift[i] = 1 + 0.15*rng.NormFloat64()
	}
	runs := func(id0 int64, insertCost float64) []store.Run {
		var out []store.Run
		for b, d := range drift {
			noise := func() float64 { return 1 + 0.01*rng.NormFloat64() }
			r := diagRun(id0+int64(b), 1000, 1, []store.StepStatement{
				{Query: "INSERT INTO pi1 VALUES ($1)", Calls: 1000, ExecSec: insertCost * d * noise() * 1e-3},
				{Query: "SELECT 1", Calls: 1000, ExecSec: 5 * d * noise() * 1e-3},
			}, nil)
			r.Params = map[string]any{"sweep": "s", "trial": fmt.Sprintf("b%d/s1", b+1)}
			out = append(out, r)
		}
		return out
	}
	base, neu, aa := runs(1, 20), runs(100, 22), runs(200, 20)
	changed := func(e Explain) map[string]bool {
		out := map[string]bool{}
		for _, c := range e.Steps[0].Statements {
			if !c.Shift.HasCI || !c.Shift.Paired || c.Shift.N != 12 {
				t.Fatalf("%s: shift %+v, want paired over 12 blocks", c.Query, c.Shift)
			}
			out[c.Query] = c.Changed
		}
		return out
	}
	e, err := BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, neu, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := changed(e); !got["INSERT INTO pi1 VALUES ($1)"] || got["SELECT 1"] {
		t.Errorf("changed %v, want the insert only", got)
	}
	if len(e.Summary) != 1 || !strings.Contains(e.Summary[0].Text, "(changed)") {
		t.Errorf("summary %+v, want the changed statement named", e.Summary)
	}
	e, err = BuildExplain(Group{Name: "a"}, Group{Name: "b"}, base, aa, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := changed(e); got["INSERT INTO pi1 VALUES ($1)"] || got["SELECT 1"] {
		t.Errorf("A/A: changed %v", got)
	}
	if len(e.Summary) != 0 {
		t.Errorf("A/A summary %+v", e.Summary)
	}
}
