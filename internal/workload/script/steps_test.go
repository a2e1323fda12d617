package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// These tests run the workload's steps through the runner against real SQLite.

func openSQLite(t *testing.T) engine.SQL {
	t.Helper()
	h, err := sqlite.New().Open(context.Background(), engine.Target{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h.(engine.SQL)
}

type quiet struct{}

func (quiet) StepStarted(string, workload.Load) {}
func (quiet) Interval(string, metrics.Interval) {}

func runStepOn(h engine.SQL, s workload.Step) metrics.StepResult {
	return (&runner.Runner{Handle: h, Interval: time.Second}).Run(context.Background(), s, quiet{})
}

func mustRun(t *testing.T, h engine.SQL, s workload.Step) metrics.StepResult {
	t.Helper()
	res := runStepOn(h, s)
	if res.Status != metrics.StatusOK {
		t.Fatalf("%s: %s: %s (audit %s)", s.Name(), res.Status, res.Error, res.Audit.Detail)
	}
	return res
}

func queryOne(t *testing.T, h engine.SQL, q string) int64 {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := queryInt(context.Background(), s, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScriptSQLite runs a setup script and a script of every meta-command on SQLite:
// \gset reads a row into variables, \if/\elif/\else pick the branch from them, \sleep
// waits; what the transactions wrote shows that each took the right branch.
func TestScriptSQLite(t *testing.T) {
	dir := t.TempDir()
	setup := write(t, dir, "setup.sql", `CREATE TABLE kv (k int PRIMARY KEY, v int);
CREATE TABLE log (k int, v int, branch text, c int);
\set n 1
INSERT INTO kv VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50), (6, 60), (7, 70), (8, 80), (9, 90), (10, 100);
`)
	script := write(t, dir, "t.sql", `\set k random(1, 10)
SELECT v AS val, k * 1.5 AS half FROM kv WHERE k = :k \gset r_
\sleep 1 us
\if :r_val > 60
  INSERT INTO log VALUES (:k, :r_val, 'big', :client_id);
\elif :r_val > 20 and :r_half >= 4.5
  INSERT INTO log VALUES (:k, :r_val, 'mid', :client_id);
\else
  \set small 1
  INSERT INTO log VALUES (:k, :r_val, 'small', :client_id);
\endif
`)
	steps := workloadtest.Plan(t, New(), "--setup", setup, "-f", script, "--clients", "2", "--time", "0.3")
	if names := workloadtest.Names(steps); strings.Join(names, ",") != "init,run" {
		t.Fatalf("steps %v", names)
	}
	h := openSQLite(t)
	mustRun(t, h, steps[0])
	res := mustRun(t, h, steps[1])
	n := queryOne(t, h, "SELECT count(*) FROM log")
	if n == 0 || n != res.Labels[0].Events {
		t.Fatalf("%d rows logged for %d transactions", n, res.Labels[0].Events)
	}
	if bad := queryOne(t, h, `SELECT count(*) FROM log WHERE v != k * 10 OR branch != CASE WHEN v > 60 THEN 'big' WHEN v > 20 THEN 'mid' ELSE 'small' END`); bad != 0 {
		t.Errorf("%d transactions took the wrong branch", bad)
	}
	if c := queryOne(t, h, "SELECT count(DISTINCT c) FROM log"); c != 2 {
		t.Errorf("%d distinct :client_id, want 2", c)
	}
}

// TestTPCBSQLite builds pgbench's tables and runs the built-in TPC-B-like script with
// two clients: the balances of accounts, tellers and branches all add up to the deltas
// in the history, one row per transaction, as they must after pgbench.
func TestTPCBSQLite(t *testing.T) {
	steps := workloadtest.Plan(t, New(), "--pgbench-init", "--scale-factor", "1", "-b", "tpcb-like", "-b", "select-only@2", "--clients", "2", "--time", "0.5")
	h := openSQLite(t)
	init := mustRun(t, h, steps[0])
	if !strings.Contains(init.Audit.Detail, "pgbench_accounts 100000 rows") {
		t.Errorf("init audit: %q", init.Audit.Detail)
	}
	res := mustRun(t, h, steps[1])
	if !strings.Contains(res.Audit.Detail, "pgbench_branches.bbalance add up to the history's deltas") {
		t.Errorf("run audit: %q", res.Audit.Detail)
	}
	hist := queryOne(t, h, "SELECT count(*) FROM pgbench_history")
	if hist == 0 || hist >= res.Labels[0].Events {
		t.Errorf("%d history rows for %d transactions (a third of them select-only)", hist, res.Labels[0].Events)
	}
	sum := queryOne(t, h, "SELECT coalesce(sum(delta), 0) FROM pgbench_history")
	for _, q := range []string{"SELECT sum(abalance) FROM pgbench_accounts", "SELECT sum(tbalance) FROM pgbench_tellers", "SELECT sum(bbalance) FROM pgbench_branches"} {
		if got := queryOne(t, h, q); got != sum {
			t.Errorf("%s: %d, history's deltas add up to %d", q, got, sum)
		}
	}
	// A lost write fails the audit.
	sess, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Exec(context.Background(), "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1"); err != nil {
		t.Fatal(err)
	}
	_ = sess.Close()
	if _, err := steps[1].Verify(context.Background(), h); err == nil || !strings.Contains(err.Error(), "sum(pgbench_tellers.tbalance) is") {
		t.Errorf("audit after a changed teller: %v", err)
	}
	// Without --pgbench-init the built-in scripts read :scale from pgbench_branches.
	run := workloadtest.Plan(t, New(), "-b", "select-only", "--time", "0.2")
	if len(run) != 1 || run[0].Name() != stepRun {
		t.Fatalf("steps %v", workloadtest.Names(run))
	}
	mustRun(t, h, run[0])
	if s := run[0].(*runStep).scale; s != 1 {
		t.Errorf(":scale %d, want 1 (pgbench_branches' rows)", s)
	}
}

// TestRejectedStatement: a statement the engine rejects fails the step, naming the
// script's file and line; so does a runtime error of an expression.
func TestRejectedStatement(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ script, want string }{
		{"\\set a 1\n\nSELECT * FROM no_such_table WHERE a = :a;\n", "bad.sql:3: "},
		{"SELECT 1;\nSELECT 1 FROM (SELECT 1) AS x WHERE 1 = :b;\n\\set b 1 / 0\n", "bad.sql:2: undefined variable \"b\""},
		{"\\set b 1 / 0\n", "bad.sql:1: \\set b: division by zero"},
		{"SELECT 1 AS one \\gset\nSELECT :one;\nSELECT 1 WHERE 1 = 0 \\gset\n", "bad.sql:3: \\gset: expected one row, got 0"},
		{"BEGIN;\nSELECT 1;\n", "the script ended inside a transaction"},
	} {
		steps := workloadtest.Plan(t, New(), "-f", write(t, dir, "bad.sql", tc.script), "--time", "0.2")
		res := runStepOn(openSQLite(t), steps[0])
		if res.Status != metrics.StatusFailed || !strings.Contains(res.Error, tc.want) {
			t.Errorf("%q: %s %q, want an error with %q", tc.script, res.Status, res.Error, tc.want)
		}
	}
}

// TestParamsProblems: bad flags and scripts are refused before anything runs.
func TestParamsProblems(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.sql", "\\if 1\nSELECT 1;\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", bad}, bad + ":1: \\if without a matching \\endif"},
		{[]string{"-f", filepath.Join(dir, "none.sql")}, "-f: open "},
		{[]string{"-b", "nosuch"}, `-b: no built-in script "nosuch"`},
		{[]string{"-b", "tpcb-like@x"}, `-b: invalid weight "x"`},
		{[]string{"-b", "tpcb-like@0"}, "every script has weight 0"},
		{[]string{"--scale-factor", "0"}, "--scale-factor must be a whole number ≥ 1"},
		{[]string{"--rate", "-1"}, "--rate must be"},
		{[]string{"--steps", "load"}, `--steps: unknown step "load"`},
	} {
		_, err := workloadtest.Resolve[*Params](t, New(), workloadtest.Tiny(), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestDefines: -D NAME=VALUE sets a variable every client starts with, and overrides a
// predefined one, as pgbench's -D does.
func TestDefines(t *testing.T) {
	dir := t.TempDir()
	script := write(t, dir, "d.sql", "CREATE TABLE IF NOT EXISTS d (a int, s text, sc int);\nINSERT INTO d VALUES (:a, :s, :scale);\n")
	steps := workloadtest.Plan(t, New(), "-f", script, "-D", "a=42", "-D", "s=hello", "-D", "scale=7", "--time", "0.1")
	h := openSQLite(t)
	mustRun(t, h, steps[0])
	if n := queryOne(t, h, "SELECT count(*) FROM d WHERE a = 42 AND s = 'hello' AND sc = 7"); n == 0 || n != queryOne(t, h, "SELECT count(*) FROM d") {
		t.Errorf("%d rows with the -D values", n)
	}
	if _, err := workloadtest.Resolve[*Params](t, New(), workloadtest.Tiny(), "-f", script, "-D", "1x=2"); err == nil || !strings.Contains(err.Error(), `-D "1x=2": want NAME=VALUE`) {
		t.Errorf("-D 1x=2: %v", err)
	}
}

// TestRatePoisson: with --rate the clients' schedules are Poisson processes: the gaps
// vary (not one fixed interval) and average the rate's.
func TestRatePoisson(t *testing.T) {
	steps := workloadtest.Plan(t, New(), "-f", write(t, t.TempDir(), "s.sql", "SELECT 1;\n"), "--rate", "1000", "--clients", "2", "--time", "0.5")
	h := openSQLite(t)
	l, err := steps[0].Load(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	g := l.Groups[0]
	if g.Rate != 500 || g.Gaps == nil {
		t.Fatalf("rate %v, gaps %v", g.Rate, g.Gaps != nil)
	}
	gap := g.Gaps(1)
	var sum time.Duration
	seen := map[time.Duration]bool{}
	for range 10000 {
		d := gap()
		sum += d
		seen[d] = true
	}
	if mean := sum / 10000; mean < 1900*time.Microsecond || mean > 2100*time.Microsecond || len(seen) < 1000 {
		t.Errorf("mean gap %v (want ~2ms), %d distinct gaps", mean, len(seen))
	}
	res := mustRun(t, h, steps[0])
	if n := res.Labels[0].Events; n < 350 || n > 650 {
		t.Errorf("%d transactions in 0.5 s at 1000/s", n)
	}
	if !res.Labels[0].HasResponse {
		t.Error("no response time from the schedule")
	}
}

// TestUserSteps: --step makes timed steps of their own, each with its clients, time and
// rate, after the init step.
func TestUserSteps(t *testing.T) {
	cfg, p := workloadtest.MustResolve[*Params](t, New(), "--pgbench-init", "-b", "select-only", "--time", "0.3",
		"--step", "c1:1", "--step", "c3:3:0.2", "--step", "paced:2:0.3:400")
	if cfg.Clients != 3 {
		t.Errorf("clients %d, want the most of any step, 3", cfg.Clients)
	}
	steps, err := New().Plan(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(workloadtest.Names(steps), ","); got != "init,c1,c3,paced" {
		t.Fatalf("steps %s", got)
	}
	h := openSQLite(t)
	mustRun(t, h, steps[0])
	for i, want := range []struct {
		clients int
		secs    float64
		rate    float64
	}{{1, 0.3, 0}, {3, 0.2, 0}, {2, 0.3, 400}} {
		st := steps[i+1]
		l, err := st.Load(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if g := l.Groups[0]; len(g.Workers) != want.clients || l.Duration.Seconds() != want.secs || g.Rate*float64(want.clients) != want.rate {
			t.Errorf("%s: %d clients, %v, rate %v", st.Name(), len(g.Workers), l.Duration, g.Rate)
		}
		mustRun(t, h, st)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--step", "a"}, `--step "a": want NAME:CLIENTS[:SECONDS[:RATE]]`},
		{[]string{"--step", "a:0"}, `--step "a:0": CLIENTS must be a whole number ≥ 1`},
		{[]string{"--step", "a:1:0"}, `--step "a:1:0": SECONDS must be a number > 0`},
		{[]string{"--step", "a:1:1:-1"}, `--step "a:1:1:-1": RATE must be`},
		{[]string{"--step", "init:1"}, `init is the load step's name`},
		{[]string{"--step", "a b:1"}, `a step's name is letters`},
		{[]string{"--step", "a:1", "--step", "a:2"}, `step a is named twice`},
		{[]string{"--step", "a:1", "--clients", "2"}, `--step and --clients both given`},
		{[]string{"--step", "a:1", "--steps", "run"}, `--steps: unknown step "run"`},
	} {
		_, err := workloadtest.Resolve[*Params](t, New(), workloadtest.Tiny(), tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestPerCommand: --report-per-command reports every command's mean time, as pgbench -r.
func TestPerCommand(t *testing.T) {
	script := write(t, t.TempDir(), "p.sql", "\\set a random(1, 10)\n\\if :a > 5\nSELECT :a;\n\\else\nSELECT 2 * :a;\n\\endif\n")
	steps := workloadtest.Plan(t, New(), "-f", script, "--report-per-command", "--time", "0.2")
	res := mustRun(t, openSQLite(t), steps[0])
	note := steps[0].(*runStep).Note()
	for _, want := range []string{"mean ms per command (pgbench -r):", "p.sql:1 ", `\set a random(1, 10)`, "p.sql:3 ", "SELECT :a;", "p.sql:5 ", "SELECT 2 * :a;", "p.sql:6 "} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q: no %q", note, want)
		}
	}
	if res.Labels[0].Events == 0 {
		t.Error("no transactions")
	}
}
