package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestExplainCPUProfilePostgres: two runs with --cpu-profile on a managed PostgreSQL store
// their profiles with their steps (and still write the files), and dbperf explain between
// them names the step, its roles and PostgreSQL's functions, as text and as JSON.
func TestExplainCPUProfilePostgres(t *testing.T) {
	needPerfPostgres(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	profDir := filepath.Join(dir, "prof")
	env := map[string]string{"DBPERF_CPU_PROFILE_HZ": "999"}
	for _, label := range []string{"base", "new"} {
		code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "postgres", "--managed",
			"--scale", "tiny", "--steps", "l.i0", "--time", "1", "--quiet", "--label", label,
			"--results", results, "--cpu-profile", profDir)
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", label, code, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(profDir, "run-2", "l.i0.insert.folded")); err != nil {
		t.Errorf("the profile's file: %v", err)
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Results(context.Background(), []int64{1, 2})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		var roles []string
		for _, p := range r.Steps[0].Profiles {
			roles = append(roles, p.Role)
			if p.Hz != 999 || p.Samples <= 0 || p.Stacks <= 0 || p.Event == "" {
				t.Errorf("run %d: stored profile %s: hz %d, %d samples, %d stacks, event %q", r.ID, p.Role, p.Hz, p.Samples, p.Stacks, p.Event)
			}
		}
		if !strings.Contains(strings.Join(roles, " "), "insert") {
			t.Errorf("run %d: stored roles %v, no insert", r.ID, roles)
		}
	}

	code, out, errOut := runCLI(t, nil, "explain", "base", "new", "--results", results, "--top", "30")
	if code != 0 {
		t.Fatalf("explain: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("dbperf explain base new:\n%s", out)
	for _, want := range []string{"step l.i0", "insert", "client"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain does not name %q:\n%s", want, out)
		}
	}
	pg := false
	for _, fn := range []string{"PostgresMain", "standard_ExecutorRun", "PortalRun", "ExecInsertIndexTuples", "XLogInsertRecord", "heap_insert", "btinsert"} {
		pg = pg || strings.Contains(out, fn)
	}
	if !pg {
		t.Errorf("explain names no PostgreSQL function:\n%s", out)
	}

	code, out, errOut = runCLI(t, nil, "explain", "1", "2", "--results", results, "--role", "insert", "--format", "json")
	if code != 0 {
		t.Fatalf("explain --format json: exit %d\n%s\n%s", code, out, errOut)
	}
	var j struct {
		Steps []struct {
			Step  string `json:"step"`
			Roles []struct {
				Role string `json:"role"`
				Self []struct {
					Function string `json:"function"`
				} `json:"self"`
			} `json:"roles"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(j.Steps) != 1 || j.Steps[0].Step != "l.i0" || len(j.Steps[0].Roles) != 1 || j.Steps[0].Roles[0].Role != "insert" || len(j.Steps[0].Roles[0].Self) == 0 {
		t.Errorf("json: %+v", j)
	}
	if code, _, errOut := runCLI(t, nil, "explain", "base", "new", "--results", results, "--step", "qp100"); code != ExitBadInput || !strings.Contains(errOut, "qp100") {
		t.Errorf("--step qp100: exit %d, %s", code, errOut)
	}
}
