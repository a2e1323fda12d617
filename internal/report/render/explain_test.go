package render

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/stats"
)

func TestExplainFormats(t *testing.T) {
	e := report.Explain{Base: "a", New: "b", BaseRuns: []int64{1}, NewRuns: []int64{2, 3}, Top: 10,
		Steps: []report.ExplainStep{{Step: "l.i0", BaseRate: 500, NewRate: 450, Change: -0.1, BaseOps: 1000, NewOps: 2000,
			BaseStatementOps: 1000, NewStatementOps: 2000,
			Statements: []report.StatementChange{{Query: "DELETE FROM t WHERE id < $1", DeltaUSPerOp: 40, Share: 0.8,
				Base: report.StatementCost{Calls: 10, CallsPerOp: 0.01, USPerOp: 10, PlanUSPerCall: 50, ExecUSPerCall: 950, Plan: "{}"},
				New: report.StatementCost{Calls: 20, CallsPerOp: 0.01, USPerOp: 50, PlanUSPerCall: 4000, ExecUSPerCall: 1000, Plan: "[]",
					CustomPlan: "[1]", CustomParams: "$1 = '5'"},
				NewCustom: "Seq Scan t → Index Scan t t_pkey", NewCustomPlan: []string{"ModifyTable", "  Index Scan t t_pkey"},
				PlanChanged: true, PlanDiff: "ModifyTable › Index Scan t t_pkey: Index Scan t t_pkey → Seq Scan t", BasePlan: []string{"ModifyTable", "  Index Scan t t_pkey"}, NewPlan: []string{"ModifyTable", "  Seq Scan t"}}},
			Waits: []report.WaitChange{{Role: "insert", Wait: "IO:WALSync", Base: 0.1, New: 0.3, Delta: 0.2, BaseSamples: 10, NewSamples: 30}},
			Roles: []report.ExplainRole{{
				Role: "insert", Base: 1500, New: 1750, Delta: 250, BaseSamples: 150, NewSamples: 700, P: 1e-9, Beyond: true,
				Self: []report.FunctionChange{{Function: "lock", Base: 0, New: 250, Delta: 250, Pct: math.NaN(), Share: 1,
					NewSamples: 100, P: 1e-20, Beyond: true,
					Shift: stats.Shift{N: 8, Paired: true, Estimate: 240, Lo: 200, Hi: 280, HasCI: true}, Changed: true}},
				Total: []report.FunctionChange{{Function: "heap", Base: 1000, New: 500, Delta: -500, Pct: -50, Share: math.NaN()},
					{Function: "pq_flush", Base: 40, New: 0, Delta: -40, Pct: math.NaN(), Share: -0.16, BaseSamples: 4,
						Build: "only in a's build: inlined or renamed?"}},
				Builds: [2]string{"postgres 13.23", "postgres 14.24"},
				Units:  8, Paired: true, Shift: stats.Shift{N: 8, Paired: true, Estimate: 260, Lo: 190, Hi: 330, HasCI: true}, Changed: true,
				Explained: 240.0 / 260, ExplainedBy: []string{"lock"},
			}}}},
		Notes: []string{"a note"}}
	var buf bytes.Buffer
	if err := ExplainText(&buf, e); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"base a (run 1) → new b (runs 2, 3)", "step l.i0: 500 → 450 ops/s (-10.0%)", "CPU: 1000 ops in a, 2000 in b",
		"DELETE FROM t WHERE id < $1  0.01 → 0.01        10.0       50.0    +40.0    80%   50.0 → 4000    950 → 1000                  –          CHANGED, custom ≠ generic\n",
		"custom plan ≠ generic plan in new: DELETE FROM t WHERE id < $1\nwith $1 = '5'; first difference (generic → custom): Seq Scan t → Index Scan t t_pkey\ngeneric  custom\n[]       ModifyTable\n           Index Scan t t_pkey\n",
		"CHANGED", "plan changed: DELETE FROM t WHERE id < $1\nfirst difference: ModifyTable › Index Scan t t_pkey: Index Scan t t_pkey → Seq Scan t\n", "  Index Scan t t_pkey    Seq Scan t\n",
		"insert  IO:WALSync   10%  30%    +20  10 → 30",
		"role    kind   function             base µs/op  new µs/op  Δ µs/op     Δ %  share   noise  Δ [95%] over blocks  change  symbols\n",
		"insert  all    (150 → 700 samples)        1500       1750     +250  +16.7%   100%  beyond    +260 [+190, +330]    more  builds differ: postgres 13.23 → postgres 14.24\n",
		"        self   lock                       0.00        250     +250     new   100%  beyond    +240 [+200, +280]    more\n",
		"        total  heap                       1000        500     -500  -50.0%      –  within                    –\n",
		"        total  pq_flush                   40.0       0.00    -40.0       –   -16%  within                    –          only in a's build: inlined or renamed?\n",
		"insert: CPU per op +260 µs [+190, +330] over 8 blocks: 92% of it explained by lock (self CPU)\n",
		"note: a note"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	buf.Reset()
	if err := ExplainJSON(&buf, e); err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	self := j["steps"].([]any)[0].(map[string]any)["roles"].([]any)[0].(map[string]any)["self"].([]any)[0].(map[string]any)
	if self["function"] != "lock" || self["delta_pct"] != nil || self["share"] != 1.0 || self["new_us_per_op"] != 250.0 ||
		self["beyond_noise"] != true || self["new_samples"] != 100.0 {
		t.Errorf("json self: %v", self)
	}
	step := j["steps"].([]any)[0].(map[string]any)
	stmt := step["statements"].([]any)[0].(map[string]any)
	if stmt["plan_changed"] != true || stmt["plan_difference"] != "ModifyTable › Index Scan t t_pkey: Index Scan t t_pkey → Seq Scan t" || stmt["new"].(map[string]any)["plan_us_per_call"] != 4000.0 || step["change"] != -0.1 {
		t.Errorf("json statement %v, change %v", stmt, step["change"])
	}
	if w := step["waits"].([]any)[0].(map[string]any); w["wait"] != "IO:WALSync" || w["delta_share"] != 0.2 {
		t.Errorf("json wait %v", w)
	}
}
