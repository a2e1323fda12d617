package metrics

import "testing"

// A role's operations are its labels' counts in their unit: rows for the writers,
// statements for the queries; none when it has no label, a mixed unit or no work.
func TestRoleOps(t *testing.T) {
	insert := LabelStats{Label: "insert", Role: "insert", Unit: UnitRows, Statements: 10, Events: 10, Rows: 500}
	del := LabelStats{Label: "delete", Role: "delete", Unit: UnitRows, Statements: 9, Events: 9, Rows: 450}
	point := LabelStats{Label: "point-query", Role: "query", Unit: UnitOps, Statements: 26500, Events: 26500, Rows: 265000}
	rng := LabelStats{Label: "range-query", Role: "query", Unit: UnitOps, Statements: 1000, Events: 1000, Rows: 10000}
	// a sysbench read-only transaction: 16 statements per event
	ro := LabelStats{Label: "read-only", Role: "query", Unit: UnitOps, Statements: 160, Events: 10, Rows: 1400}
	index := LabelStats{Label: "index", Role: "index", Unit: UnitRows, Statements: 1, Events: 1, Rows: 100000}
	mixed := LabelStats{Label: "odd", Role: "insert", Unit: UnitOps, Statements: 7, Events: 7}
	idle := LabelStats{Label: "delete", Role: "delete", Unit: UnitRows, Statements: 5, Events: 5}
	rw := []LabelStats{point, insert, del}
	for _, tc := range []struct {
		name   string
		labels []LabelStats
		role   string
		ops    int64
		unit   Unit
		ok     bool
	}{
		{"query actor: its statements, not the rows they return", rw, "query", 26500, UnitOps, true},
		{"insert writer: its rows, not its statements", rw, "insert", 500, UnitRows, true},
		{"delete writer: its rows", rw, "delete", 450, UnitRows, true},
		{"two labels of one role add up", []LabelStats{point, rng, insert}, "query", 27500, UnitOps, true},
		{"sysbench transaction: statements", []LabelStats{ro}, "query", 160, UnitOps, true},
		{"index build: indexed rows", []LabelStats{index}, "index", 100000, UnitRows, true},
		{"embedded engine's process: no label of its own", rw, ConnCPUClientProcess, 0, "", false},
		{"a role no actor had", rw, "cleanup", 0, "", false},
		{"rows and statements do not add up", []LabelStats{insert, mixed}, "insert", 0, "", false},
		{"no work done", []LabelStats{point, idle}, "delete", 0, "", false},
		{"no labels", nil, "query", 0, "", false},
		{"empty role", []LabelStats{{Label: "x", Unit: UnitOps, Statements: 3}}, "", 0, "", false},
	} {
		ops, unit, ok := RoleOps(tc.labels, tc.role)
		if ops != tc.ops || unit != tc.unit || ok != tc.ok {
			t.Errorf("%s: RoleOps = %d %q %v, want %d %q %v", tc.name, ops, unit, ok, tc.ops, tc.unit, tc.ok)
		}
	}
}
