package cli

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/dbperf/dbperf/internal/store"
)

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), Env{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv:  func(k string) string { return env[k] },
		Version: "test", Commit: "0000000",
	}, args)
	return code, out.String(), errb.String()
}

// flat is s with every run of spaces and line breaks one space: the text reports wrap
// their prose to Out's width (80 in tests), so a phrase may span two lines.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	db, err := sql.Open("sqlite3", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 999; CREATE TABLE x(a)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(newer)
	empty := filepath.Join(dir, "empty.db")
	st, err := store.Open(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	tests := []struct {
		name string
		args []string
		want string // in the single error line
	}{
		{"unknown workload", []string{"run", "tpcc"}, `unknown workload "tpcc": use one of insertbench`},
		{"unknown engine", []string{"run", "insertbench", "--engine", "oracle"}, `--engine: unknown engine "oracle": use one of sqlite, postgres, mariadb`},
		{"unknown step", []string{"run", "insertbench", "--steps", "l.i0,l.i9"}, `--steps: unknown step "l.i9"`},
		{"unknown scale", []string{"run", "insertbench", "--scale", "huge"}, `--scale: unknown scale "huge": use one of tiny, small, medium, large`},
		{"zero clients", []string{"run", "insertbench", "--clients", "0"}, "--clients must be at least 1, got 0"},
		{"negative rows", []string{"run", "insertbench", "--rows", "-5"}, "--rows must be at least 1, got -5"},
		{"zero time", []string{"run", "insertbench", "--time", "0"}, "--time must be a positive number of seconds, got 0"},
		{"negative time", []string{"run", "insertbench", "--time", "-5"}, "--time must be a positive number of seconds, got -5"},
		{"huge time", []string{"run", "insertbench", "--time", "1e12"}, "--time 1e+12: at most 1000000 seconds"},
		{"unknown workload with flags", []string{"run", "tpcc", "--scale", "tiny"}, `unknown workload "tpcc"`},
		{"sweep unknown workload with flags", []string{"sweep", "tpcc", "--scale", "tiny"}, `unknown workload "tpcc"`},
		{"zero rows per commit", []string{"run", "insertbench", "--rows-per-commit", "l.i0=0"}, "--rows-per-commit l.i0=0"},
		{"rows per commit of an unknown step", []string{"run", "insertbench", "--rows-per-commit", "l.i7=5"}, `--rows-per-commit: unknown step "l.i7"`},
		{"zero report interval", []string{"run", "insertbench", "--report-interval", "0"}, "--report-interval must be positive"},
		{"range queries without indexes", []string{"run", "insertbench", "--steps", "l.i0,qr500"}, "qr500 queries the secondary indexes that l.x creates"},
		{"server engine without a server", []string{"run", "insertbench", "--engine", "postgres"}, "--engine postgres needs a server: pass --managed"},
		{"managed and dsn", []string{"run", "insertbench", "--engine", "postgres", "--managed", "--dsn", "postgres://u:secret@127.0.0.1/ib"}, "--managed and --dsn exclude each other"},
		{"dsn for sqlite", []string{"run", "insertbench", "--dsn", "postgres://127.0.0.1/ib"}, "--engine sqlite runs inside dbperf: drop --managed and --dsn"},
		{"version without managed", []string{"run", "insertbench", "--engine", "mariadb", "--dsn", "mysql://root@tcp(127.0.0.1:1)/ib", "--engine-version", "10.6"}, "--engine-version picks the binaries of a managed server"},
		{"storage engine for postgres", []string{"run", "insertbench", "--engine", "postgres", "--managed", "--mysql-storage-engine", "rocksdb"}, "--mysql-storage-engine applies to --engine mariadb only"},
		{"unknown storage engine", []string{"run", "insertbench", "--engine", "mariadb", "--managed", "--mysql-storage-engine", "tokudb"}, `--mysql-storage-engine "tokudb": use innodb or rocksdb`},
		{"unreachable dsn", []string{"run", "insertbench", "--scale", "tiny", "--engine", "postgres", "--dsn", "postgres://bench:hunter2@127.0.0.1:1/ib", "--results", filepath.Join(dir, "dsn.db")}, "postgres://bench:xxxxx@127.0.0.1:1/ib"},
		{"unreachable dsn, passwords in its query", []string{"run", "insertbench", "--scale", "tiny", "--engine", "postgres", "--dsn", "postgres://127.0.0.1:1/ib?user=bench&sslpassword=hunter2&password=hunter2&sslmode=disable", "--results", filepath.Join(dir, "dsn.db")}, "postgres://127.0.0.1:1/ib?user=bench&sslpassword=xxxxx&password=xxxxx&sslmode=disable"},
		{"server engine unknown", []string{"server", "start", "oracle"}, `dbperf manages postgres and mariadb servers, not "oracle"`},
		{"install mariadb", []string{"server", "install", "mariadb@10.6"}, "install mariadb@10.6: only MariaDB 11 and later are installed from Maven Central"},
		{"install no version", []string{"server", "install", "postgres"}, "install takes ENGINE@VERSION, ENGINE one of postgres and mariadb"},
		{"stop what was not started", []string{"server", "stop", "postgres", "--workdir", dir}, "no server was started here"},
		{"steps without l.i0", []string{"run", "insertbench", "--steps", "qr100"}, "--steps qr100 needs the tables l.i0 creates"},
		{"not a number", []string{"run", "insertbench", "--clients", "many"}, `invalid argument "many"`},
		{"unknown flag", []string{"run", "insertbench", "--warmup"}, "unknown flag: --warmup"},
		{"no workload", []string{"run"}, "run needs one workload"},
		{"results dir missing", []string{"run", "insertbench", "--scale", "tiny", "--results", filepath.Join(dir, "nope", "r.db")}, "does not exist"},
		{"results from a newer dbperf", []string{"run", "insertbench", "--scale", "tiny", "--results", newer}, "schema version 999"},
		{"report of a missing store", []string{"report", "--results", filepath.Join(dir, "missing.db")}, "no results store at"},
		{"runs of a newer store", []string{"runs", "--results", newer}, "schema version 999"},
		{"report format", []string{"report", "--format", "xml", "--results", newer}, `--format "xml" is not supported`},
		{"report colour", []string{"report", "--color", "sometimes", "--results", newer}, `--color "sometimes": use auto, always or never`},
		{"zero repeats", []string{"run", "insertbench", "--repeat", "0"}, "--repeat must be at least 1, got 0"},
		{"compare one config", []string{"compare", "a"}, "compare needs two configs"},
		{"label a number", []string{"run", "insertbench", "--label", "1"}, "--label 1: a number names a run id in dbperf report"},
		{"label with a newline", []string{"run", "insertbench", "--label", "a\nFAKE 99 ok"}, `--label holds '\n' (at byte 1), a character that does not print`},
		{"label with an escape", []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default", "--scale", "tiny", "--label", "\x1b[2Jx"}, `--label holds '\x1b' (at byte 0)`},
		{"unknown step alone", []string{"run", "insertbench", "--steps", "l.q"}, `--steps: unknown step "l.q"`},
		{"rows per commit of a step not run", []string{"run", "insertbench", "--steps", "l.i0", "--rows-per-commit", "l.i1=10"}, "--rows-per-commit l.i1=10: l.i1 is not in --steps l.i0"},
		{"output a directory", []string{"history", "--results", empty, "-o", dir}, "is a directory: name a file in it"},
		{"history window", []string{"history", "--results", empty, "--window", "0"}, "--window must be at least 2 runs, got 0"},
		{"history p-value", []string{"history", "--results", empty, "--p-value", "2"}, "--p-value must be within (0, 1), got 2"},
		{"history permutations", []string{"history", "--results", empty, "--permutations", "-1"}, "--permutations must be at least 10, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, tt.args...)
			if code != ExitBadInput {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "dbperf: ") || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr should be one line containing %q, got:\n%s", tt.want, stderr)
			}
			if stdout != "" {
				t.Fatalf("bad input printed to stdout: %q", stdout)
			}
			if strings.Contains(stderr, "hunter2") || strings.Contains(stderr, "secret") {
				t.Fatalf("a password was printed: %s", stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !os.IsNotExist(err) {
		t.Error("a bad --results path must not be created")
	}
	if after, _ := os.ReadFile(newer); !bytes.Equal(before, after) {
		t.Error("a results store from a newer schema must not be modified")
	}
	if _, err := os.Stat(DefaultResults); err == nil {
		t.Error("bad input wrote the default results store")
	}
}

func TestSeveralProblemsAreAllReported(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "run", "insertbench", "--clients", "0", "--rows", "0", "--engine", "x")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitBadInput || len(lines) != 3 {
		t.Fatalf("exit %d, want 2 with three lines, got:\n%s", code, stderr)
	}
}

func TestResultsPathFromEnvironment(t *testing.T) {
	p := filepath.Join(t.TempDir(), "env.db")
	code, _, stderr := runCLI(t, map[string]string{"DBPERF_RESULTS": p}, "runs")
	if code != ExitBadInput || !strings.Contains(stderr, p) {
		t.Fatalf("runs should name the DBPERF_RESULTS store %s: exit %d %s", p, code, stderr)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "version")
	if code != 0 || out != "dbperf test (0000000)\n" {
		t.Fatalf("version: %d %q", code, out)
	}
}

// --help shows no "(default [])" for empty list and map flags, and no doubled default.
func TestHelpDefaults(t *testing.T) {
	for _, wl := range []string{"insertbench", "sysbench"} {
		code, out, _ := runCLI(t, nil, "run", wl, "--help")
		if code != 0 || strings.Contains(out, "(default [])") || strings.Contains(out, "(default )") || strings.Contains(out, "(default, cached) (default") {
			t.Errorf("run %s --help: exit %d:\n%s", wl, code, out)
		}
	}
}
