package cli

import (
	"context"
	"os"
	"path/filepath"
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
	background := false
	for _, n := range names {
		background = background || strings.Contains(n, ".background:")
	}
	if !background {
		t.Errorf("no background role in %v", names)
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
	if testing.Short() {
		t.Skip("starts a database server")
	}
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/postgres"); err != nil {
		t.Skipf("postgres not installed (make test installs it): %v", err)
	}
	if err := profile.Available(context.Background()); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
}
