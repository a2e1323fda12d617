package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// TestExplainKnownCostPostgres is issue 25's acceptance of dbperf explain on a setting
// with a known CPU cost: JIT compilation forced on for every query (jit_above_cost = 0,
// and inlining and optimization too: profile "jit" below) against the default profile
// (JIT only above cost 100000, which no statement of insertbench at tiny scale reaches).
// Both runs record CPU profiles (--cpu-profile) and statements, plans and waits
// (--explain). In qr100, explain must put the range-query role first, with LLVM's
// functions (libLLVM, llvm::…) among its top changes by total CPU; pg_stat_statements
// must show the JIT time per call of the range queries (0 in base); every step stores its
// profiles, statements and waits.
func TestExplainKnownCostPostgres(t *testing.T) {
	needPerfPostgres(t)
	// Serial (no t.Parallel): it asserts changes of CPU per op, and the client role is
	// this test binary's CPU, which every test running beside it adds to; it failed in
	// CI with another test beside it.
	if _, err := os.Stat("/usr/lib/postgresql/15/lib/llvmjit.so"); err != nil {
		t.Skipf("PostgreSQL 15 without JIT (llvmjit.so): %v", err)
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	profDir := filepath.Join(dir, "prof")
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(filepath.Join(profiles, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	jit := "jit = on\njit_above_cost = 0\njit_inline_above_cost = 0\njit_optimize_above_cost = 0\n"
	if err := os.WriteFile(filepath.Join(profiles, "postgres", "jit.conf"), []byte(jit), 0o644); err != nil {
		t.Fatal(err)
	}
	// The base run also has l.i1 for checkPostgresProfiles' roles, at 999 Hz:
	// PostgreSQL's background processes and the delete use little CPU in short steps.
	hz := map[string]int{"default": 999, "jit": 499}
	for _, profile := range []string{"default", "jit"} {
		steps := "l.i0,l.x,qr100"
		if profile == "default" {
			// cleanup's CHECKPOINT gives the checkpointer (a background role) CPU to
			// sample: in 1-s steps alone the background processes may get none.
			steps = "l.i0,l.x,l.i1,cleanup,qr100"
		}
		env := map[string]string{"DBPERF_CPU_PROFILE_HZ": strconv.Itoa(hz[profile])}
		code, out, errOut := runCLI(t, env, "run", "insertbench", "--engine", "postgres", "--managed",
			"--scale", "tiny", "--rows", "20000", "--steps", steps, "--time", "1", "--quiet", "--label", profile,
			"--profiles-dir", profiles, "--profile", profile,
			"--results", results, "--cpu-profile", profDir, "--explain")
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", profile, code, out, errOut)
		}
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
		if !strings.Contains(r.Env["explain"], "pg_stat_statements") {
			t.Errorf("run %d: env explain %q", r.ID, r.Env["explain"])
		}
		for _, s := range r.Steps {
			if s.Result.Name == "cleanup" {
				continue // unmeasured work of the server's (VACUUM, CHECKPOINT): no client, no waits to expect
			}
			// A note that the machine's busy CPU fell below the processes' (short-lived
			// processes of other work, such as a compiler beside the test, exited) is
			// about the host, not about the profiles or explain.
			if s.Result.Note != "" && !strings.HasPrefix(s.Result.Note, "machine busy CPU") {
				t.Errorf("run %d step %s: note %q", r.ID, s.Result.Name, s.Result.Note)
			}
			var roles []string
			for _, p := range s.Profiles {
				roles = append(roles, p.Role)
				if p.Hz != hz[r.Label] || p.Samples <= 0 || p.Stacks <= 0 || p.Event == "" {
					t.Errorf("run %d step %s: stored profile %s: hz %d, %d samples, %d stacks, event %q", r.ID, s.Result.Name, p.Role, p.Hz, p.Samples, p.Stacks, p.Event)
				}
			}
			// Waits are sampled 10 times a second: a step of under half a second may have none.
			if !strings.Contains(strings.Join(roles, " "), "client") || len(s.Statements) == 0 || len(s.Waits) == 0 && s.Result.Seconds >= 0.5 {
				t.Errorf("run %d step %s: roles %v, %d statements, %d waits", r.ID, s.Result.Name, roles, len(s.Statements), len(s.Waits))
			}
		}
	}
	checkPostgresProfiles(t, profDir)
	if _, err := os.Stat(filepath.Join(profDir, "run-2", "qr100.query.folded")); err != nil {
		t.Errorf("the profile's file: %v", err)
	}

	s := explainOf(t, results, "default", "jit", "qr100", 10)
	// The client role is the dbperf process less its workers' threads; here that process
	// is the test binary, so it also holds every test running beside this one (the
	// MariaDB profile test's workers and store), divided by jit's few queries (72 in one
	// CI run: +13,739 µs/op). Of the server's roles the query role must come first.
	var server []string
	for _, r := range s.Roles {
		if r.Role != "client" {
			server = append(server, r.Role)
		}
	}
	if len(server) == 0 || server[0] != "query" {
		t.Errorf("the roles by their change in CPU per op, the client aside: %v, want query first", server)
	}
	for _, r := range s.Roles {
		if r.Role == "query" && r.Delta <= 0 {
			t.Errorf("the query role's CPU per op changed by %+.0f µs, want more", r.Delta)
		}
	}
	// Among the top 10: with whole stacks (DWARF call graphs, issue 38) the frames on
	// every stack of the role (main, PostgresMain, …) change by the role's whole change
	// and come first.
	llvm := false
	for _, f := range roleOf(s, "query").Total {
		llvm = llvm || (f.Delta > 0 && (strings.Contains(f.Function, "LLVM") || strings.Contains(f.Function, "llvm")))
	}
	if !llvm {
		t.Errorf("no LLVM function among the query role's top 10 changes by total CPU: %+v", roleOf(s, "query").Total)
	}
	ranges, deletes := 0, 0
	for _, st := range s.Statements {
		if strings.HasPrefix(st.Query, "DELETE") {
			deletes++
			if st.Base.Plan <= 0 {
				t.Errorf("the delete's planning µs per call %.1f: pg_stat_statements does not track planning", st.Base.Plan)
			}
		}
		if strings.HasPrefix(st.Query, "SELECT") && strings.Contains(st.Query, "ORDER BY") {
			ranges++
			if st.Base.JIT != 0 || st.New.JIT <= 0 || st.New.JIT < 0.5*st.New.Exec { // JIT is most of the time per call
				t.Errorf("range query %q: JIT µs per call %.0f → %.0f (exec %.0f)", st.Query, st.Base.JIT, st.New.JIT, st.New.Exec)
			}
		}
	}
	if ranges == 0 || deletes == 0 || len(s.Waits) == 0 {
		t.Errorf("explain shows %d range queries, %d deletes, %d waits: %+v", ranges, deletes, len(s.Waits), s)
	}
	if code, _, errOut := runCLI(t, nil, "explain", "default", "jit", "--results", results, "--step", "qp100"); code != ExitBadInput || !strings.Contains(errOut, "qp100") {
		t.Errorf("--step qp100: exit %d, %s", code, errOut)
	}
}

// TestSweepDuetProfilesPostgres: a duet of two PostgreSQL points with --cpu-profile and
// --explain records one perf for the sweep and gives every trial's run its own profiles
// (each point's server by its process tree, its workers by thread) and statements, and
// dbperf explain compares the points.
func TestSweepDuetProfilesPostgres(t *testing.T) {
	needPerfPostgres(t)
	t.Parallel()
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	profDir := filepath.Join(dir, "prof")
	env := map[string]string{"DBPERF_CPU_PROFILE_HZ": "499"}
	code, out, errOut := runCLI(t, env, "sweep", "insertbench", "--engine", "postgres", "--profiles", "a=default,b=default",
		"--design", "duet", "--scale", "tiny", "--rows", "20000", "--steps", "l.i0,qp100", "--time", "2", "--slice", "1",
		"--repeat", "2", "--label", "du", "--results", results, "--cpu-profile", profDir, "--explain", "--quiet")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Results(context.Background(), []int64{1, 2, 3, 4, 5, 6, 7, 8})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("%d runs, want 8 (2 points × 2 blocks × 2 slices)", len(runs))
	}
	clients := map[string]int{} // trial → runs with a client role
	for _, r := range runs {
		if !strings.Contains(r.Env["explain"], "pg_stat_statements") || !strings.Contains(r.Env["cpu_profile"], "perf record") {
			t.Errorf("run %d: env explain %q, cpu_profile %q", r.ID, r.Env["explain"], r.Env["cpu_profile"])
		}
		for _, s := range r.Steps {
			roles := map[string]int64{}
			for _, p := range s.Profiles {
				roles[p.Role] = p.Samples
			}
			if s.Result.Name == "qp100" && (roles["query"] == 0 || len(s.Statements) == 0) {
				t.Errorf("run %d step %s: roles %v, %d statements", r.ID, s.Result.Name, roles, len(s.Statements))
			}
			if s.Result.Name == "qp100" && roles["client"] > 0 {
				clients[fmt.Sprint(r.Params["trial"])]++
			}
		}
		if _, err := os.Stat(filepath.Join(profDir, fmt.Sprintf("run-%d", r.ID), "qp100.query.folded")); err != nil {
			t.Errorf("run %d: %v", r.ID, err)
		}
	}
	// Both points' workers ran at once in one process: each point's run of a trial has
	// its own client samples (its pinned workers' threads).
	for trial, n := range clients {
		if n != 2 {
			t.Errorf("trial %s: %d of 2 points' runs have a client role", trial, n)
		}
	}
	if len(clients) != 4 {
		t.Errorf("client roles in trials %v, want 4 trials", clients)
	}
	explainOf(t, results, "du/default/a", "du/default/b", "qp100", 5)
}
