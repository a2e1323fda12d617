package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestExplainCustomPlanPostgres (issue 38): dbperf run --explain on a managed PostgreSQL
// stores, beside each statement's generic plan, its custom plan: EXPLAIN with the
// parameters of one of the step's executions, named in the note. The delete's text in
// pg_stat_statements has its LIMIT as a parameter ($2); the plans are of the text the
// workload prepared, whose LIMIT is a constant, with $1 its sampled value. A statement
// without parameters says it has one plan.
func TestExplainCustomPlanPostgres(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel() // asserts the plans stored, not rates
	dir := serverWorkdir(t)
	results := filepath.Join(dir, "r.db")
	code, out, errOut := runCLI(t, nil, "run", "insertbench", "--engine", "postgres", "--managed", "--workdir", dir,
		"--scale", "tiny", "--rows", "20000", "--steps", "l.i0,l.i1", "--time", "1", "--quiet", "--results", results, "--explain")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	waitNoServers(t, dir)
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Results(context.Background(), []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(runs[0].Env["explain"], "custom plan") {
		t.Errorf("env explain %q", runs[0].Env["explain"])
	}
	seen := map[string]bool{}
	for _, s := range runs[0].Steps {
		if s.Result.Name != "l.i1" {
			continue
		}
		for _, q := range s.Statements {
			switch {
			case strings.HasPrefix(q.Query, "DELETE"):
				seen["delete"] = true
				if q.Plan == "" || q.CustomPlan == "" || !strings.HasPrefix(q.CustomPlanNote, "$1 = '") || strings.Contains(q.CustomPlanNote, "$2") {
					t.Errorf("delete %q: plan %d bytes (%s), custom plan %d bytes, note %q", q.Query, len(q.Plan), q.PlanNote, len(q.CustomPlan), q.CustomPlanNote)
				}
			case strings.HasPrefix(q.Query, "INSERT"):
				seen["insert"] = true
				if q.CustomPlan == "" || !strings.HasPrefix(q.CustomPlanNote, "$1 = '") {
					t.Errorf("insert: custom plan %d bytes, note %q", len(q.CustomPlan), q.CustomPlanNote)
				}
			case strings.HasPrefix(q.Query, "SELECT min"):
				seen["min"] = true
				if q.CustomPlan != "" || !strings.Contains(q.CustomPlanNote, "no parameters") {
					t.Errorf("min: custom plan %d bytes, note %q", len(q.CustomPlan), q.CustomPlanNote)
				}
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("l.i1's statements: %v, want a delete, an insert and min", seen)
	}
}
