package report

import (
	"strings"

	"github.com/dbperf/dbperf/internal/metrics"
)

// RoleCPU is one connection role's server CPU in a step (metrics.ConnCPU: the backends'
// or threads' CPU seconds) with the role's own operations (metrics.RoleOps), so its CPU
// per operation of its own work: per row an insert or delete writer wrote, per query a
// query actor ran. Seconds per step would make a role that did more work look more
// expensive (0.53 s against 0.23 s while it is 117 against 159 µs per query).
type RoleCPU struct {
	metrics.ConnCPU
	// Ops is the role's own operations in the step and Unit what they count (rows or
	// statements); 0 and "" when it has none.
	Ops  int64
	Unit metrics.Unit
	// Noun is what one operation is: "row", "query" or "op" ("" when Ops is 0).
	Noun string
}

// USPerOp is the role's CPU µs per operation of its own work, CPUSec × 1e6 ÷ Ops; ok is
// false when the role has no operations of its own (then its seconds are its figure).
func (c RoleCPU) USPerOp() (float64, bool) {
	if c.Ops <= 0 {
		return 0, false
	}
	return Finite(c.CPUSec * 1e6 / float64(c.Ops)), true
}

// PerOpUnit is the unit of USPerOp: "µs/row", "µs/query" or "µs/op" ("" without ops).
func (c RoleCPU) PerOpUnit() string {
	if c.Noun == "" {
		return ""
	}
	return "µs/" + c.Noun
}

// ConnCPUSecUnit is the unit of a role's CPU seconds over a step where a report shows
// them instead of a per-op figure.
const ConnCPUSecUnit = "s"

// Figure is what a report shows for the role: its CPU µs per operation (unit PerOpUnit),
// or its CPU seconds over the step (ConnCPUSecUnit) when it has no operations of its own or
// the step is one operation per client (oneOp: a per-op figure would be the whole step's).
func (c RoleCPU) Figure(oneOp bool) (v float64, unit string) {
	if us, ok := c.USPerOp(); ok && !oneOp {
		return us, c.PerOpUnit()
	}
	return Finite(c.CPUSec), ConnCPUSecUnit
}

// RoleCPUs are the step's per-connection CPU by role, in stored order, each with the
// role's own operations in the step.
func (s StepReport) RoleCPUs() []RoleCPU {
	if len(s.HW.ConnCPU) == 0 {
		return nil
	}
	labels := make([]metrics.LabelStats, len(s.Ops))
	for i, o := range s.Ops {
		labels[i] = o.LabelStats
	}
	out := make([]RoleCPU, 0, len(s.HW.ConnCPU))
	for _, cc := range s.HW.ConnCPU {
		rc := RoleCPU{ConnCPU: cc}
		if ops, unit, ok := metrics.RoleOps(labels, cc.Role); ok {
			rc.Ops, rc.Unit, rc.Noun = ops, unit, opNoun(labels, cc.Role, unit)
		}
		out = append(out, rc)
	}
	return out
}

// RoleCPU is the role's per-connection CPU in the step, if it was measured.
func (s StepReport) RoleCPU(role string) (RoleCPU, bool) {
	for _, rc := range s.RoleCPUs() {
		if rc.Role == role {
			return rc, true
		}
	}
	return RoleCPU{}, false
}

// opNoun is what one of a role's operations is, named as the labels' rates are (Op.RateUnit):
// a row where they count rows, a query for the query role or labels named queries, else an op.
func opNoun(labels []metrics.LabelStats, role string, unit metrics.Unit) string {
	if unit == metrics.UnitRows {
		return "row"
	}
	if role == "query" {
		return "query"
	}
	for _, l := range labels {
		if l.Role == role && !strings.HasSuffix(l.Label, "query") {
			return "op"
		}
	}
	return "query"
}

// ConnCPULegend explains the per-connection CPU figures wherever a report shows them.
func ConnCPULegend() []string {
	return []string{
		"server CPU of the backends/threads serving each role's sessions per operation of the role's own work: µs/row per row it inserted, deleted or indexed, µs/query per query it ran",
		"s: the role's CPU seconds over the step where it has no per-op figure: no operations of its own (client_process: an embedded engine such as SQLite runs in dbperf), or a one-op step",
	}
}
