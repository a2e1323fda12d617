package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readPlan is a plan of testdata/plans: EXPLAIN (FORMAT JSON, COSTS OFF) as dbperf run
// --explain stored it (PostgreSQL 13.23 and 14.24 from Maven, Debian's 15.18; insertbench
// at --scale tiny), or of the same statements over 200000 rows (…_200k: a generic plan,
// PREPARE and EXECUTE with NULLs under plan_cache_mode = force_generic_plan, and a custom
// plan, EXECUTE with values under force_custom_plan).
func readPlan(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "plans", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestComparePlansVersions: the same statements' plans from PostgreSQL 13, 14 and 15 are
// the same plans (14 adds "Async Capable" to every node and makes ModifyTable's "Member"
// child its "Outer" one); plans that differ say where first: a generic plan against the
// custom plan of the same statement, a bitmap scan against an index scan.
func TestComparePlansVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		diff string // "" = the same plan
	}{
		{"pg13_delete", "pg14_delete", ""},
		{"pg13_insert", "pg14_insert", ""},
		{"pg13_min", "pg14_min", ""},
		{"pg13_pointquery", "pg14_pointquery", ""},
		{"pg13_rangequery", "pg14_rangequery", ""},
		{"pg14_delete", "pg15_delete", ""},
		{"pg13_delete", "pg15_delete", ""},
		{"pg13_min", "pg15_min", ""},
		// Parameters and values are masked: a generic plan and a custom plan of one shape.
		{"pg15_pointquery_generic_200k", "pg15_pointquery_custom_200k", ""},
		{"pg15_delete", "pg15_delete_custom_200k", ""},
		{"pg15_delete_generic_200k", "pg15_delete_custom_200k",
			"ModifyTable Delete pi1: Hash Join Semi → Nested Loop Inner"},
		{"pg15_pointquery", "pg15_pointquery_generic_200k",
			"Bitmap Heap Scan pi1 → Index Scan pi1 pi1_pkey"},
		{"pg13_rangequery", "pg13_min", "Limit → Result"},
	} {
		d, same := ComparePlans(readPlan(t, tc.a), readPlan(t, tc.b))
		if same != (tc.diff == "") || d.String() != tc.diff {
			t.Errorf("%s vs %s: same %v, first difference %q; want %q", tc.a, tc.b, same, d, tc.diff)
		}
		if _, back := ComparePlans(readPlan(t, tc.b), readPlan(t, tc.a)); back != same {
			t.Errorf("%s vs %s: not symmetric", tc.a, tc.b)
		}
	}
}

// TestComparePlansAttributes: each attribute that makes a plan is compared (an index, a
// scan direction, a condition, a join type, a child), none that does not (a key a version
// adds, costs, rows, aliases), and the first difference names the node and attribute.
func TestComparePlansAttributes(t *testing.T) {
	base := readPlan(t, "pg14_delete")
	for _, tc := range []struct {
		name, from, to string
		diff           string
	}{
		{"new key", `"Async Capable": false,`, `"Async Capable": false, "Disabled": false, "Plan Rows": 7,`, ""},
		{"alias", `"Alias": "pi1_1"`, `"Alias": "x"`, ""},
		{"index", `"Index Name": "pi1_pkey",
                          "Relation Name": "pi1",`, `"Index Name": "pi1_other",
                          "Relation Name": "pi1",`,
			`ModifyTable Delete pi1 › Nested Loop Inner › Aggregate › Subquery Scan › Limit › Index Only Scan pi1 pi1_pkey: Index Name: "pi1_pkey" → "pi1_other"`},
		{"direction", `"Scan Direction": "Forward",
                          "Index Name": "pi1_pkey",`, `"Scan Direction": "Backward",
                          "Index Name": "pi1_pkey",`,
			`ModifyTable Delete pi1 › Nested Loop Inner › Aggregate › Subquery Scan › Limit › Index Only Scan pi1 pi1_pkey: Scan Direction: "Forward" → "Backward"`},
		{"condition", `(transactionid >= $1)`, `(transactionid > $1)`,
			`ModifyTable Delete pi1 › Nested Loop Inner › Aggregate › Subquery Scan › Limit › Index Only Scan pi1 pi1_pkey: Index Cond: "(transactionid >= ?)" → "(transactionid > ?)"`},
		{"join type", `"Join Type": "Inner"`, `"Join Type": "Semi"`,
			`ModifyTable Delete pi1 › Nested Loop Inner: Join Type: "Inner" → "Semi"`},
		{"strategy", `"Strategy": "Hashed"`, `"Strategy": "Sorted"`,
			`ModifyTable Delete pi1 › Nested Loop Inner › Aggregate: Strategy: "Hashed" → "Sorted"`},
	} {
		if !strings.Contains(base, tc.from) {
			t.Fatalf("%s: no %q in the plan", tc.name, tc.from)
		}
		d, same := ComparePlans(base, strings.Replace(base, tc.from, tc.to, 1))
		if same != (tc.diff == "") || d.String() != tc.diff {
			t.Errorf("%s: same %v, first difference %q; want %q", tc.name, same, d, tc.diff)
		}
	}
	// A child less: the Limit's scan dropped.
	i := strings.Index(base, `"Plans": [
                        {
                          "Node Type": "Index Only Scan"`)
	j := strings.Index(base[i:], "]")
	cut := base[:i] + `"X": 1` + base[i+j+1:]
	if d, same := ComparePlans(base, cut); same || !strings.HasSuffix(d.String(), "Limit: a child only in the base plan: Index Only Scan pi1 pi1_pkey") {
		t.Errorf("a child less: same %v, %q", same, d)
	}
}

func TestMaskValues(t *testing.T) {
	for in, want := range map[string]string{
		"(transactionid >= $1)":                                       "(transactionid >= ?)",
		"(transactionid >= '100'::bigint)":                            "(transactionid >= ?)",
		"(transactionid = ANY (ARRAY[$1, $2, $3]))":                   "(transactionid = ANY (?))",
		"(transactionid = ANY ('{1,2,3}'::bigint[]))":                 "(transactionid = ANY (?))",
		"((d > '2024-01-01 00:00:00'::timestamp without time zone))":  "((d > ?))",
		"((name)::text = 'it''s'::text)":                              "((name)::text = ?)",
		"((pi1.transactionid = pi1_1.transactionid) AND (price > 5))": "((pi1.transactionid = pi1_1.transactionid) AND (price > ?))",
		"(t2.c1 = $0)": "(t2.c1 = ?)",
	} {
		if got := maskValues(in); got != want {
			t.Errorf("maskValues(%q) = %q, want %q", in, got, want)
		}
	}
}
