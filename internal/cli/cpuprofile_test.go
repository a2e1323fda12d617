package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/profile"
)

// checkPostgresProfiles checks the files of a managed PostgreSQL run with --cpu-profile
// over l.i0, l.x and l.i1 (TestExplainKnownCostPostgres's base run, profDir/run-1): folded
// stacks per step and role; in l.i1 the delete connection's backend is under PostgreSQL's
// executor (standard_ExecutorRun, exported: Debian's binary keeps its dynamic symbols, its
// static functions such as ExecDelete read "[postgres]") deleting heap tuples, and the
// server's other processes are background roles.
func checkPostgresProfiles(t *testing.T, profDir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(profDir, "run-1", "*.folded"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	t.Logf("profiles: %v", names)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(profDir, "run-1", name))
		if err != nil {
			t.Fatalf("%v (have %v)", err, names)
		}
		return string(b)
	}
	del := read("l.i1.delete.folded")
	for _, fn := range []string{"PostgresMain", "standard_ExecutorRun", "heap_delete"} {
		if !strings.Contains(del, fn+";") && !strings.Contains(del, fn+" ") {
			t.Errorf("l.i1 delete role: no stack with %s:\n%s", fn, del)
		}
	}
	if !strings.Contains(read("l.i1.insert.folded"), "ExecInsertIndexTuples") {
		t.Error("l.i1 insert role: no stack under ExecInsertIndexTuples")
	}
	read("l.i1.client.folded")
	// A background process may get no sample in a short step at 99 Hz, most of all when
	// other tests load the machine: any run's profile of the test will do.
	if bg, _ := filepath.Glob(filepath.Join(profDir, "run-*", "*.background:*.folded")); len(bg) == 0 {
		t.Errorf("no background role in any run's profiles (run 1: %v)", names)
	}
	for _, step := range []string{"l.i0", "l.x"} {
		if m, _ := filepath.Glob(filepath.Join(profDir, "run-1", step+".*.folded")); len(m) == 0 {
			t.Errorf("step %s: no profile", step)
		}
	}
}

// needPerfPostgres skips a test that profiles a managed PostgreSQL when it cannot run:
// -short, no PostgreSQL 15, or perf unavailable (make test installs linux-perf; a
// container may still forbid perf_event_open, and the reason is then the skip's).
func needPerfPostgres(t *testing.T) {
	t.Helper()
	needPerf(t, "/usr/lib/postgresql/15/bin/postgres", "postgres")
}

// needPerfMariaDB skips a test that profiles a managed MariaDB when it cannot run: -short,
// no MariaDB server (Debian's mariadbd), or perf unavailable.
func needPerfMariaDB(t *testing.T) {
	t.Helper()
	needPerf(t, "/usr/sbin/mariadbd", "mariadbd")
}

// needPerf skips a test that profiles a managed server whose binary is bin.
func needPerf(t *testing.T, bin, name string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a database server")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not installed (make test installs it): %v", name, err)
	}
	if err := profile.Available(context.Background()); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
}

// explainFunction, explainCost and explainStep are the parts of dbperf explain's JSON
// the tests read.
type explainFunction struct {
	Function string  `json:"function"`
	Base     float64 `json:"base_us_per_op"`
	New      float64 `json:"new_us_per_op"`
	Delta    float64 `json:"delta_us_per_op"`
}

type explainCost struct {
	Exec float64 `json:"exec_us_per_call"`
	Plan float64 `json:"plan_us_per_call"`
	JIT  float64 `json:"jit_us_per_call"`
}

type explainStep struct {
	Step       string        `json:"step"`
	Roles      []explainRole `json:"roles"`
	Statements []struct {
		Query string      `json:"query"`
		Base  explainCost `json:"base"`
		New   explainCost `json:"new"`
	} `json:"statements"`
	Waits []struct {
		Role string `json:"role"`
		Wait string `json:"wait"`
	} `json:"waits"`
}

type explainRole struct {
	Role  string            `json:"role"`
	Delta float64           `json:"delta_us_per_op"`
	Self  []explainFunction `json:"self"`
	Total []explainFunction `json:"total"`
}

// roleOf is s's role named role (zero if s has none).
func roleOf(s explainStep, role string) explainRole {
	for _, r := range s.Roles {
		if r.Role == role {
			return r
		}
	}
	return explainRole{}
}

// explainOf runs dbperf explain BASE NEW --step STEP in text (logged, top 5) and JSON
// (top N) and returns the step's JSON; the test fails unless it is the one step.
func explainOf(t *testing.T, results, base, neu, step string, top int) explainStep {
	t.Helper()
	code, out, errOut := runCLI(t, nil, "explain", base, neu, "--results", results, "--step", step, "--top", "5")
	if code != 0 {
		t.Fatalf("explain: exit %d\n%s\n%s", code, out, errOut)
	}
	// The text is long: said last, and only when the test failed, so that its errors
	// come first in an excerpt of the output.
	text := out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dbperf explain %s %s --step %s:\n%s", base, neu, step, text)
		}
	})
	code, out, errOut = runCLI(t, nil, "explain", base, neu, "--results", results, "--step", step, "--top", strconv.Itoa(top), "--format", "json")
	if code != 0 {
		t.Fatalf("explain --format json: exit %d\n%s\n%s", code, out, errOut)
	}
	var j struct {
		Steps []explainStep `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(j.Steps) != 1 || j.Steps[0].Step != step || len(j.Steps[0].Roles) == 0 {
		t.Fatalf("json: %+v", j)
	}
	return j.Steps[0]
}
