package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// StatementChange is one statement shape in both configs of an explanation (dbperf run
// --explain): per call and per operation of the step, and whether its plan changed.
// Shapes are matched by their normalized text (PostgreSQL's queryid changes with the
// tables' oids, so it does not match across runs).
type StatementChange struct {
	Query     string
	Base, New StatementCost // the zero StatementCost when the shape ran in one config only
	// DeltaUSPerOp is the change of the shape's planning plus execution µs per operation
	// of the step: what sorts the statements, and their part of the step's change.
	DeltaUSPerOp float64
	// Share is DeltaUSPerOp as a fraction of the change of all the step's statements'
	// µs per operation (NaN when they did not change).
	Share float64
	// PlanChanged says the shape's plans differ (ComparePlans: the tree of nodes, their
	// types, relations, indexes, join types, scan directions and conditions; estimates,
	// costs and the keys a version adds or drops are left out); PlanDiff then says where
	// first, and BasePlan and NewPlan are their outlines (PlanOutline), one line per node.
	PlanChanged       bool
	PlanDiff          string
	BasePlan, NewPlan []string
	// Custom plans (EXPLAIN with the parameters of one execution; StatementCost.CustomPlan)
	// against each config's generic plan: BaseCustom and NewCustom say where the custom
	// plan differs from the generic one first ("" when the same or either is missing), and
	// BaseCustomPlan and NewCustomPlan are then its outline. A statement whose plans
	// differ ran with either, as the server's plan cache chose.
	BaseCustom, NewCustom         string
	BaseCustomPlan, NewCustomPlan []string
	// Shift is the change of µs per operation across units (blocks or runs, as a role's
	// CPU: explainpairs.go) with its 95% interval; Changed says explain calls it a change:
	// the interval at the family-wise level over the step's statements (Bonferroni: 95%
	// for all of them together) excludes 0, and the change is at least the report's
	// threshold (stats.DefaultThreshold) of all the step's statements' µs/op in the base.
	Shift   stats.Shift
	Changed bool
}

// StatementCost is a shape's cost in one config, summed over its runs' step.
type StatementCost struct {
	Calls int64
	// CallsPerOp are calls per operation of the step; the per-call figures are means.
	CallsPerOp                       float64
	PlanUSPerCall, ExecUSPerCall     float64
	USPerOp                          float64 // (planning + execution) µs per operation
	RowsPerCall, RowsExaminedPerCall float64
	HitPerCall, ReadPerCall          float64 // shared blocks
	DirtiedPerCall, WrittenPerCall   float64
	WALBytesPerCall                  float64
	JITUSPerCall                     float64
	Plan                             string // the plan's JSON (the last run's), "" when none
	// CustomPlan is the plan's JSON with the parameters of one execution (the last run's
	// that has one), CustomParams those parameters; "" when none.
	CustomPlan, CustomParams string
}

// WaitChange is one role's share of wait samples in one wait class in both configs.
type WaitChange struct {
	Role, Wait string
	// Base and New are the class's share of the role's samples (0–1); Delta New − Base.
	Base, New, Delta        float64
	BaseSamples, NewSamples int64
}

// stepDiag is one step's statements and waits over a config's runs.
type stepDiag struct {
	ops    int64
	stmts  map[string]*stmtSum
	waits  map[[2]string]int64
	roleN  map[string]int64
	hasAny bool
}

type stmtSum struct {
	s    store.StepStatement // summed counters; Plan the last run's
	runs int
}

// configDiag sums the statements and waits of a config's runs per step.
func configDiag(runs []store.Run, o ExplainOptions) map[string]*stepDiag {
	out := map[string]*stepDiag{}
	for _, r := range runs {
		for _, st := range r.Steps {
			if len(st.Statements) == 0 && len(st.Waits) == 0 || o.Step != "" && st.Result.Name != o.Step {
				continue
			}
			d := out[st.Result.Name]
			if d == nil {
				d = &stepDiag{stmts: map[string]*stmtSum{}, waits: map[[2]string]int64{}, roleN: map[string]int64{}}
				out[st.Result.Name] = d
			}
			d.hasAny = true
			d.ops += st.Result.PrimaryCount()
			for _, s := range st.Statements {
				k := strings.Join(strings.Fields(s.Query), " ")
				sum := d.stmts[k]
				if sum == nil {
					sum = &stmtSum{s: store.StepStatement{Query: k}}
					d.stmts[k] = sum
				}
				a := &sum.s
				a.Calls += s.Calls
				a.Plans += s.Plans
				a.PlanSec += s.PlanSec
				a.ExecSec += s.ExecSec
				a.Rows += s.Rows
				a.RowsExamined += s.RowsExamined
				a.BlocksHit += s.BlocksHit
				a.BlocksRead += s.BlocksRead
				a.BlocksDirtied += s.BlocksDirtied
				a.BlocksWritten += s.BlocksWritten
				a.WALBytes += s.WALBytes
				a.JITSec += s.JITSec
				if s.Plan != "" {
					a.Plan = s.Plan
				}
				if s.CustomPlan != "" {
					a.CustomPlan, a.CustomPlanNote = s.CustomPlan, s.CustomPlanNote
				}
				sum.runs++
			}
			for _, w := range st.Waits {
				if o.Role != "" && w.Role != o.Role {
					continue
				}
				d.waits[[2]string{w.Role, w.Wait}] += w.Samples
				d.roleN[w.Role] += w.Samples
			}
		}
	}
	return out
}

// cost is a summed shape's per-call and per-op figures.
func (s *stmtSum) cost(ops int64) StatementCost {
	if s == nil || s.s.Calls == 0 {
		return StatementCost{}
	}
	a, calls := s.s, float64(s.s.Calls)
	per := func(v float64) float64 { return v / calls }
	c := StatementCost{Calls: a.Calls, PlanUSPerCall: per(a.PlanSec * 1e6), ExecUSPerCall: per(a.ExecSec * 1e6),
		RowsPerCall: per(float64(a.Rows)), RowsExaminedPerCall: per(float64(a.RowsExamined)),
		HitPerCall: per(float64(a.BlocksHit)), ReadPerCall: per(float64(a.BlocksRead)),
		DirtiedPerCall: per(float64(a.BlocksDirtied)), WrittenPerCall: per(float64(a.BlocksWritten)),
		WALBytesPerCall: per(float64(a.WALBytes)), JITUSPerCall: per(a.JITSec * 1e6), Plan: a.Plan,
		CustomPlan: a.CustomPlan, CustomParams: a.CustomPlanNote}
	if ops > 0 {
		c.CallsPerOp = calls / float64(ops)
		c.USPerOp = (a.PlanSec + a.ExecSec) * 1e6 / float64(ops)
	}
	return c
}

// statementChanges are the shapes of a step in both configs, largest change of µs per
// operation first, at most top (plan changes always kept).
func statementChanges(b, n *stepDiag, bu, nu stmtUnits, top int) []StatementChange {
	keys := map[string]bool{}
	for k := range b.stmts {
		keys[k] = true
	}
	for k := range n.stmts {
		keys[k] = true
	}
	var out []StatementChange
	for k := range keys {
		c := StatementChange{Query: k, Base: b.stmts[k].cost(b.ops), New: n.stmts[k].cost(n.ops)}
		c.DeltaUSPerOp = c.New.USPerOp - c.Base.USPerOp
		if c.Base.Plan != "" && c.New.Plan != "" {
			if d, same := ComparePlans(c.Base.Plan, c.New.Plan); !same {
				c.PlanChanged, c.PlanDiff = true, "generic plan: "+d.String()
				c.BasePlan, c.NewPlan = PlanOutline(c.Base.Plan), PlanOutline(c.New.Plan)
			}
		}
		if c.Base.CustomPlan != "" && c.New.CustomPlan != "" && !c.PlanChanged {
			if d, same := ComparePlans(c.Base.CustomPlan, c.New.CustomPlan); !same {
				c.PlanChanged, c.PlanDiff = true, "custom plan: "+d.String()
				c.BasePlan, c.NewPlan = PlanOutline(c.Base.CustomPlan), PlanOutline(c.New.CustomPlan)
			}
		}
		c.BaseCustom, c.BaseCustomPlan = customDiffers(c.Base)
		c.NewCustom, c.NewCustomPlan = customDiffers(c.New)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b StatementChange) int {
		return cmp.Or(cmp.Compare(math.Abs(b.DeltaUSPerOp), math.Abs(a.DeltaUSPerOp)), strings.Compare(a.Query, b.Query))
	})
	total := 0.0
	for _, c := range out {
		total += c.DeltaUSPerOp
	}
	for i := range out {
		out[i].Share = math.NaN()
		if total != 0 {
			out[i].Share = out[i].DeltaUSPerOp / total
		}
	}
	statementShifts(out, bu, nu)
	var kept []StatementChange
	for i, c := range out {
		if i < top || c.PlanChanged {
			kept = append(kept, c)
		}
	}
	return kept
}

// customDiffers says where a config's custom plan differs from its generic plan first,
// with the custom plan's outline; "" when they are the same or either is missing.
func customDiffers(c StatementCost) (string, []string) {
	if c.Plan == "" || c.CustomPlan == "" {
		return "", nil
	}
	d, same := ComparePlans(c.Plan, c.CustomPlan)
	if same {
		return "", nil
	}
	return d.String(), PlanOutline(c.CustomPlan)
}

// waitChanges are each role's wait classes in both configs as shares of the role's
// samples, per role largest change first.
func waitChanges(b, n *stepDiag) []WaitChange {
	keys := map[[2]string]bool{}
	for k := range b.waits {
		keys[k] = true
	}
	for k := range n.waits {
		keys[k] = true
	}
	var out []WaitChange
	for k := range keys {
		w := WaitChange{Role: k[0], Wait: k[1], BaseSamples: b.waits[k], NewSamples: n.waits[k]}
		if t := b.roleN[k[0]]; t > 0 {
			w.Base = float64(w.BaseSamples) / float64(t)
		}
		if t := n.roleN[k[0]]; t > 0 {
			w.New = float64(w.NewSamples) / float64(t)
		}
		w.Delta = w.New - w.Base
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b WaitChange) int {
		return cmp.Or(strings.Compare(a.Role, b.Role), cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)), strings.Compare(a.Wait, b.Wait))
	})
	return out
}

// planKeys are the fields a plan outline shows, in this order: PostgreSQL's and
// MariaDB's names for what a node does and on what.
var planKeys = []string{"Node Type", "Operation", "Join Type", "Strategy", "Scan Direction", "Relation Name", "Index Name",
	"table_name", "access_type", "key", "index"}

// PlanOutline is a plan (EXPLAIN's JSON, PostgreSQL's or MariaDB's) as short lines, one
// per node that says what it does, indented by its depth: what a reader compares side by
// side. A plan that is not JSON is its lines.
func PlanOutline(plan string) []string {
	var v any
	if err := json.Unmarshal([]byte(plan), &v); err != nil {
		return strings.Split(strings.TrimSpace(plan), "\n")
	}
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch t := v.(type) {
		case map[string]any:
			var parts []string
			for _, k := range planKeys {
				if s, ok := t[k].(string); ok && s != "" {
					parts = append(parts, s)
				}
			}
			if ks, ok := t["Index Cond"].(string); ok {
				parts = append(parts, "("+ks+")")
			}
			next := depth
			if len(parts) > 0 {
				out = append(out, strings.Repeat("  ", depth)+strings.Join(parts, " "))
				next = depth + 1
			}
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				switch t[k].(type) {
				case map[string]any, []any:
					walk(t[k], next)
				}
			}
		case []any:
			for _, x := range t {
				walk(x, depth)
			}
		}
	}
	walk(v, 0)
	if len(out) == 0 {
		var b bytes.Buffer
		if json.Compact(&b, []byte(plan)) == nil {
			return []string{Clip(b.String(), 200)}
		}
	}
	return out
}

// stepRate is a step's primary operations per second over a config's runs.
func stepRate(runs []store.Run, step string) float64 {
	var ops int64
	var sec float64
	for _, r := range runs {
		for _, st := range r.Steps {
			if st.Result.Name == step {
				ops += st.Result.PrimaryCount()
				sec += st.Result.Seconds
			}
		}
	}
	if sec <= 0 {
		return 0
	}
	return float64(ops) / sec
}

// describeStatement is a shape's one-line summary for notes.
func describeStatement(q string) string {
	return fmt.Sprintf("%q", Clip(q, 60))
}

// stmtUnits are a config's statements of a step per unit (the units of unitsOf): each
// unit's operations and each shape's planning plus execution seconds.
type stmtUnits struct {
	stepUnits
	sec map[unitKey]map[string]float64
}

// stmtUnitsOf collects a config's statements of step per unit.
func stmtUnitsOf(runs []store.Run, step string) stmtUnits {
	steps, sweep, trials := unitStepsOf(runs, step, func(st store.Step) bool { return len(st.Statements) > 0 })
	u := stmtUnits{stepUnits: stepUnits{ops: map[unitKey]int64{}, sweep: sweep, trials: trials}, sec: map[unitKey]map[string]float64{}}
	for _, h := range steps {
		u.ops[h.key] += h.st.Result.PrimaryCount()
		m := u.sec[h.key]
		if m == nil {
			m = map[string]float64{}
			u.sec[h.key] = m
		}
		for _, s := range h.st.Statements {
			m[strings.Join(strings.Fields(s.Query), " ")] += s.PlanSec + s.ExecSec
		}
	}
	return u
}

// perOp is a shape's µs per operation per unit of keys (NaN for a unit without
// operations; 0 where the shape did not run).
func (u stmtUnits) perOp(keys []unitKey, query string) []float64 {
	out := make([]float64, 0, len(keys))
	for _, k := range keys {
		if u.ops[k] <= 0 {
			out = append(out, math.NaN())
			continue
		}
		out = append(out, u.sec[k][query]*1e6/float64(u.ops[k]))
	}
	return out
}

// statementShifts gives every statement of a step its interval across units and its
// verdict (StatementChange.Shift, Changed). The statements are many tests of one step,
// so the verdict's interval is at the family-wise level (Bonferroni), and a change too
// small to move all the statements' µs/op by the report's threshold is no finding.
func statementShifts(cs []StatementChange, bu, nu stmtUnits) {
	bk, nk, paired := unitPairs(bu.stepUnits, nu.stepUnits)
	if len(cs) == 0 || len(bk) == 0 || len(nk) == 0 {
		return
	}
	base := 0.0
	for _, c := range cs {
		base += c.Base.USPerOp
	}
	floor := stats.DefaultThreshold * base
	family := 1 - (1-stats.DefaultConfidence)/float64(len(cs))
	for i := range cs {
		c := &cs[i]
		b, n := bu.perOp(bk, c.Query), nu.perOp(nk, c.Query)
		c.Shift = shift(b, n, paired)
		var strict stats.Shift
		if paired {
			strict = stats.PairedShift(b, n, family)
		} else {
			strict = stats.UnpairedShift(b, n, family)
		}
		c.Changed = strict.Excludes0() && math.Abs(c.Shift.Estimate) >= floor
	}
}
