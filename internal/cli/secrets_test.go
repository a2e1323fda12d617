package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/store"
)

// storeWithRuns writes a SQLite results store holding one finished run per label (no
// workload runs: the store's writer only).
func storeWithRuns(t *testing.T, path string, labels ...string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, l := range labels {
		id, err := st.BeginRun(ctx, store.RunMeta{Workload: "insertbench", WorkloadVersion: 3, Engine: "sqlite", EngineVersion: "3.45",
			EngineSettings: map[string]string{}, Label: l, Seed: 1, Params: map[string]any{"scale": "tiny"},
			Env: map[string]string{}, StartedAt: start})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, store.RunOK, start.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResultsFromFile (issue 23): --results @FILE and DBPERF_RESULTS=@FILE read the store
// from FILE's first line, as --dsn @FILE does, and so do results copy's --from and --to.
func TestResultsFromFile(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "team.db")
	storeWithRuns(t, results, "from-a-file")
	ref := filepath.Join(dir, "results.dsn")
	if err := os.WriteFile(ref, []byte(results+"\n# the rest is ignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"runs", "--results", "@" + ref}},
		{map[string]string{"DBPERF_RESULTS": "@" + ref}, []string{"runs"}},
		{map[string]string{"DBPERF_RESULTS": "@" + ref}, []string{"report", "from-a-file"}},
	} {
		code, out, stderr := runCLI(t, c.env, c.args...)
		if code != 0 || !strings.Contains(out, "from-a-file") {
			t.Errorf("%v %v: exit %d\n%s%s", c.env, c.args, code, out, stderr)
		}
	}
	copyTo := filepath.Join(dir, "copy.db")
	toRef := filepath.Join(dir, "copy.dsn")
	if err := os.WriteFile(toRef, []byte(copyTo+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, nil, "results", "copy", "--from", "@"+ref, "--to", "@"+toRef); code != 0 || !strings.Contains(out, "copied 1 runs") {
		t.Errorf("results copy --from @FILE --to @FILE: exit %d %s%s", code, out, stderr)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"runs", "--results", "@" + filepath.Join(dir, "missing")}, "--results @" + filepath.Join(dir, "missing") + ": open"},
		{nil, []string{"runs", "--results", "@"}, "--results @FILE: name the file"},
		{map[string]string{"DBPERF_RESULTS": "@" + filepath.Join(dir, "missing")}, []string{"runs"}, "DBPERF_RESULTS @"},
		{nil, []string{"run", "insertbench", "--scale", "tiny", "--results", "@" + filepath.Join(dir, "missing")}, "--results @"},
		{nil, []string{"serve", "--results", "@" + filepath.Join(dir, "missing")}, "--results @"},
		{nil, []string{"results", "copy", "--from", "@" + filepath.Join(dir, "missing"), "--to", copyTo}, "--from @"},
	} {
		code, _, stderr := runCLI(t, c.env, c.args...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v %v: exit %d, want 2 and one line with %q: %s", c.env, c.args, code, c.want, stderr)
		}
	}
	code, out, _ := runCLI(t, nil, "runs", "--help")
	if code != 0 || !strings.Contains(out, "@FILE to read either from FILE's first line") {
		t.Errorf("runs --help does not say --results @FILE:\n%s", out)
	}
}

// TestStoreDSNPasswordNeverPrinted (issue 23): a PostgreSQL store's password, in the URL's
// userinfo or in its query string (password=, sslpassword=), given on the command line,
// in DBPERF_RESULTS or through @FILE, is in no output of the commands that read a store
// when the store cannot be reached.
func TestStoreDSNPasswordNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	dsns := []string{
		"postgres://127.0.0.1:1/db?user=u&password=SECRETPW&connect_timeout=5",
		"postgres://u:SECRETPW@127.0.0.1:1/db?connect_timeout=5",
		"postgres://127.0.0.1:1/db?user=u&sslpassword=SECRETPW&sslmode=disable&connect_timeout=5",
		"postgres://127.0.0.1:1/db?user=u&password=SECRETPW&sslmode=bogus",
	}
	ref := filepath.Join(dir, "team.dsn")
	if err := os.WriteFile(ref, []byte(dsns[0]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local.db")
	storeWithRuns(t, local, "a")
	var cases [][]string
	for _, dsn := range append(dsns, "@"+ref) {
		cases = append(cases,
			[]string{"runs", "--results", dsn},
			[]string{"report", "--results", dsn},
			[]string{"history", "--results", dsn},
			[]string{"serve", "--results", dsn, "--listen", "127.0.0.1:0"},
			[]string{"results", "copy", "--from", dsn, "--to", filepath.Join(dir, "x.db")},
			[]string{"results", "copy", "--from", local, "--to", dsn},
		)
	}
	for _, args := range cases {
		code, out, stderr := runCLI(t, nil, args...)
		if code != ExitBadInput || strings.Contains(out+stderr, "SECRETPW") || !strings.Contains(stderr, "127.0.0.1:1/db") {
			t.Errorf("%v: exit %d (want 2), the store named without its password:\n%s%s", args, code, out, stderr)
		}
	}
	code, _, stderr := runCLI(t, map[string]string{"DBPERF_RESULTS": dsns[0]}, "runs")
	if code != ExitBadInput || strings.Contains(stderr, "SECRETPW") {
		t.Errorf("DBPERF_RESULTS: exit %d %s", code, stderr)
	}
}

// TestReadersLeaveAnEmptyFile (issue 23): runs, report, history and serve on an existing
// empty file say it holds no store and leave it empty.
func TestReadersLeaveAnEmptyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"runs"}, {"report"}, {"history"}, {"serve", "--listen", "127.0.0.1:0"}} {
		code, _, stderr := runCLI(t, nil, append(args, "--results", empty)...)
		if code != ExitBadInput || !strings.Contains(stderr, "the file is empty") {
			t.Errorf("%s on an empty file: exit %d %s", args[0], code, stderr)
		}
		if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
			t.Fatalf("%s wrote into the empty file (%v)", args[0], err)
		}
	}
}

// TestRunsListHostileLabel (issue 23): a label with a newline cannot forge a line of
// `dbperf runs`, nor an escape sequence reach the terminal, and a 100 KB label does not
// widen every line.
func TestRunsListHostileLabel(t *testing.T) {
	results := filepath.Join(t.TempDir(), "r.db")
	storeWithRuns(t, results, "ok-label", "x\n99  2026-01-01 00:00:00  insertbench  sqlite  3.45  FAKE  ok  1", "\x1b[2J\x1b]0;pwned\x07",
		strings.Repeat("L", 100_000))
	code, out, stderr := runCLI(t, nil, "runs", "--results", results)
	if code != 0 {
		t.Fatalf("runs: exit %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Fatalf("runs of 4 runs:\n%q", out)
	}
	for _, l := range lines {
		if len(l) > 200 {
			t.Errorf("a line of %d bytes: %.100q…", len(l), l)
		}
	}
	if !strings.Contains(out, `x\n99`) || !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("labels not shown escaped:\n%s", out)
	}
	// The whole label still names its runs.
	if code, out, stderr := runCLI(t, nil, "report", "--results", results, strings.Repeat("L", 100_000)); code != 0 || !strings.Contains(out, "run 4") {
		t.Errorf("report LABEL of the long label: exit %d %.300s %s", code, out, stderr)
	}
}
