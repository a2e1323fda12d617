package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/server/state"
	"github.com/dbperf/dbperf/internal/sweep"
)

// TestResultsKeywordValueDSN (issue 40, M4): libpq's key=value form given to --results is
// a PostgreSQL store, as --dsn takes it: against a closed port it gives one clear error
// (exit 2) naming the store without its password, and creates no file (it was taken as
// a SQLite path: a file named with the password was made and the run exited 0).
func TestResultsKeywordValueDSN(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{
		"host=127.0.0.1 port=1 user=postgres password=SECRETPW dbname=ib connect_timeout=5",
		"dbname=ib host=127.0.0.1 port=1 user=postgres password='SECRET PW' connect_timeout=5",
	} {
		for _, args := range [][]string{
			{"run", "insertbench", "--engine", "sqlite", "--scale", "tiny", "--steps", "l.i0", "--results", dsn},
			{"runs", "--results", dsn},
			{"report", "--results", dsn},
			{"history", "--results", dsn},
		} {
			code, out, stderr := runCLI(t, nil, args...)
			if code != ExitBadInput || strings.Contains(out+stderr, "SECRET") || !strings.Contains(stderr, "127.0.0.1") ||
				strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("%v: exit %d (want 2), one line naming the store without its password:\n%s%s", args[0], code, out, stderr)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files left behind: %v", ents)
	}
	code, _, stderr := runCLI(t, map[string]string{"DBPERF_RESULTS": "host=127.0.0.1 port=1 password=SECRETPW connect_timeout=5"}, "runs")
	if code != ExitBadInput || strings.Contains(stderr, "SECRETPW") {
		t.Errorf("DBPERF_RESULTS: exit %d %s", code, stderr)
	}
}

// TestServerStateForeignPID (issue 40, M2): a server state file whose pid is now another
// process: `server status` does not call it running and `server stop` leaves the process
// (and its process group) alone, removing the stale state; the same process recorded with
// its own start time is taken as the server.
func TestServerStateForeignPID(t *testing.T) {
	other := exec.Command("sleep", "60")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	pid := other.Process.Pid
	ticks, ok := state.StartTicks(pid)
	if !ok {
		t.Fatal("no start time for", pid)
	}
	for _, tc := range []struct {
		name string
		st   state.Server
	}{
		{"start time differs", state.Server{StartTicks: ticks + 1, BootID: state.BootID()}},
		{"another boot", state.Server{StartTicks: ticks, BootID: "not-this-boot"}},
		{"legacy state, cmdline without the data dir", state.Server{}},
	} {
		wd := t.TempDir()
		st := tc.st
		st.Engine, st.PID, st.Version, st.Log = "postgres", pid, "17.2", filepath.Join(wd, "pg.log")
		st.Dir, st.DataDir = filepath.Join(wd, "pg"), filepath.Join(wd, "pg", "data")
		if err := os.MkdirAll(st.DataDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := state.Write(state.Path(wd, "postgres"), st); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, nil, "server", "status", "postgres", "--workdir", wd)
		if code != 0 || strings.Contains(out, ": running") || !strings.Contains(out, "another process") {
			t.Errorf("%s: status: exit %d, want not running, pid taken by another process:\n%s%s", tc.name, code, out, stderr)
		}
		code, out, stderr = runCLI(t, nil, "server", "stop", "postgres", "--workdir", wd)
		if code != 0 || !strings.Contains(out, "left alone") {
			t.Errorf("%s: stop: exit %d:\n%s%s", tc.name, code, out, stderr)
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(b), ") S ") {
			t.Fatalf("%s: stop signalled the unrelated process %d: %s", tc.name, pid, b)
		}
		if _, err := os.Stat(state.Path(wd, "postgres")); !os.IsNotExist(err) {
			t.Errorf("%s: the stale state file is still there: %v", tc.name, err)
		}
	}
	// The process recorded with its own start time is the server.
	wd := t.TempDir()
	if err := state.Write(state.Path(wd, "postgres"), state.Server{Engine: "postgres", PID: pid, Version: "17.2", StartTicks: ticks, BootID: state.BootID()}); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, nil, "server", "status", "postgres", "--workdir", wd); code != 0 || !strings.Contains(out, ": running") {
		t.Errorf("the recorded process: status exit %d:\n%s%s", code, out, stderr)
	}
}

// TestSweepResumeRefusesOtherSettings (issue 40, M5): --resume of a stored sweep with
// another --time and --seed is refused (exit 2) naming both and what the stored sweep
// used, before anything runs; with its own settings it resumes; --resume of a label no
// sweep has is refused without creating a store (it ran a new sweep).
func TestSweepResumeRefusesOtherSettings(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	args := []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default", "--design", "sequential",
		"--scale", "tiny", "--steps", "l.i0", "--rows", "2000", "--label", "L", "--results", results, "--quiet"}
	if code, out, stderr := runCLI(t, nil, append(args, "--time", "5")...); code != 0 {
		t.Fatalf("sweep: exit %d: %s%s", code, out, stderr)
	}
	runs := func() int {
		t.Helper()
		_, out, _ := runCLI(t, nil, "runs", "--results", results)
		return strings.Count(out, "L/")
	}
	before := runs()
	code, out, stderr := runCLI(t, nil, append(args, "--time", "7", "--seed", "3", "--resume")...)
	if code != ExitBadInput || !strings.Contains(stderr, "--time 7 (the stored sweep used 5)") || !strings.Contains(stderr, "--seed 3 (the stored sweep used ") ||
		strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("resume with another --time and --seed: exit %d, want 2 naming both:\n%s%s", code, out, stderr)
	}
	if n := runs(); n != before {
		t.Errorf("the refused resume stored runs: %d, was %d", n, before)
	}
	if code, out, stderr := runCLI(t, nil, append(args, "--time", "5", "--resume")...); code != 0 || runs() != before {
		t.Errorf("resume with the stored settings: exit %d, %d runs (was %d): %s%s", code, runs(), before, out, stderr)
	}
	nosuch := []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default", "--scale", "tiny", "--steps", "l.i0",
		"--label", "NOSUCH", "--resume", "--quiet"}
	code, out, stderr = runCLI(t, nil, append(nosuch, "--results", results)...)
	if code != ExitBadInput || !strings.Contains(stderr, "no stored sweep labelled NOSUCH") || !strings.Contains(stderr, "drop --resume to start one") {
		t.Errorf("--resume --label NOSUCH: exit %d: %s%s", code, out, stderr)
	}
	if n := runs(); n != before {
		t.Errorf("--resume --label NOSUCH stored runs")
	}
	missing := filepath.Join(dir, "missing.db")
	code, out, stderr = runCLI(t, nil, append(nosuch, "--results", missing)...)
	if _, err := os.Stat(missing); code != ExitBadInput || !strings.Contains(stderr, "no stored sweep labelled NOSUCH") || err == nil {
		t.Errorf("--resume --label NOSUCH on a missing store: exit %d (store created: %v): %s%s", code, err == nil, out, stderr)
	}
}

// TestSweepAndLimitFlagsRefused (issue 40, LOW): values that were accepted are refused
// with one line naming the flag, exit 2, before anything runs: a --slice that is not a
// finite number of seconds in range (0.0001 stored 3,243 runs in a minute), two points of
// one name in --profiles (the second was dropped), two --think for one point, and a
// --server-memory above the machine's memory.
func TestSweepAndLimitFlagsRefused(t *testing.T) {
	if hwstat.MemTotal() == 0 || hwstat.MemTotal() >= 1<<40 {
		t.Skip("needs /proc/meminfo and less than 1TiB of memory")
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	sq := []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default", "--scale", "tiny", "--results", results}
	tests := []struct {
		args []string
		want string
	}{
		{append(sq, "--slice", "NaN"), "--slice NaN: give 0 (whole steps) or the seconds of a slice, from 0.5 to 3600"},
		{append(sq, "--slice", "Inf"), "--slice +Inf: give 0"},
		{append(sq, "--slice", "1e300"), "--slice 1e+300: give 0"},
		{append(sq, "--slice", "0.0001"), "--slice 0.0001: give 0"},
		{append(sq, "--slice", "-1"), "--slice -1: give 0"},
		{[]string{"sweep", "insertbench", "--engine", "postgres", "--profiles", "a=default,a=cached", "--results", results},
			`--profiles "a=cached": a second point named a`},
		{[]string{"sweep", "insertbench", "--engine", "postgres", "--profiles", "cached,cached=default", "--results", results},
			`--profiles "cached=default": a second point named cached`},
		{append(sq, "--think", "b=1ms", "--think", "b=2ms"), `--think "b=2ms": point b has a --think already`},
		{[]string{"run", "insertbench", "--engine", "postgres", "--managed", "--server-memory", "1T", "--results", results},
			"--server-memory 1T: more than this machine's memory"},
	}
	for _, tc := range tests {
		code, out, stderr := runCLI(t, nil, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want 2 and one line with %q:\n%s%s", tc.args[len(tc.args)-2:], code, tc.want, out, stderr)
		}
	}
	if _, err := os.Stat(results); err == nil {
		t.Error("a refused command created the results store")
	}
	// What stays accepted: 0 (whole steps), the bounds, one --think per point.
	for _, s := range []string{"0", "0.5", "3600"} {
		if _, err := sweep.ParseThink([]string{"a=1ms", "b=2ms"}); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, nil, append(sq, "--slice", s, "--repeat", "0")...)
		if strings.Contains(stderr, "--slice") {
			t.Errorf("--slice %s refused (exit %d): %s", s, code, stderr)
		}
	}
}

// TestCPUProfileDirNotWritable (issue 40, LOW): --cpu-profile on an existing directory no
// file can be written in (a read-only mount: as root, permission bits refuse nothing) or
// on a file is refused up front, one line, exit 2, no store created (the run went on
// without profiles).
func TestCPUProfileDirNotWritable(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("mount", "--bind", "-o", "ro", ro, ro).CombinedOutput(); err != nil {
			t.Skipf("no read-only bind mount: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	} else if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.db")
	for _, tc := range []struct{ dir, want string }{
		{ro, "--cpu-profile " + ro + ": cannot write there: "},
		{filepath.Join(ro, "sub", "dir"), "--cpu-profile " + filepath.Join(ro, "sub", "dir") + ": cannot write there (its parent " + ro + "): "},
		{file, "--cpu-profile " + file + ": it is a file, not a directory"},
		{filepath.Join(file, "x"), "is a file, not a directory"},
	} {
		code, out, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "sqlite", "--scale", "tiny", "--steps", "l.i0",
			"--cpu-profile", tc.dir, "--results", results)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--cpu-profile %s: exit %d, want 2 and one line with %q:\n%s%s", tc.dir, code, tc.want, out, stderr)
		}
	}
	if _, err := os.Stat(results); err == nil {
		t.Error("a refused run created the results store")
	}
	if err := checkWritableDir("--cpu-profile", filepath.Join(dir, "new", "profiles")); err != nil {
		t.Errorf("a missing dir under a writable one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the check made the missing dir")
	}
}

// TestExplainWithoutPreloadedStatements (issue 40, LOW): --explain --dsn to a PostgreSQL
// server whose config sets pg_stat_statements.track but does not preload the library (a
// profile with its own shared_preload_libraries) says it is not loaded and how to load
// it (it said "loaded but not installed": CREATE EXTENSION would not have helped).
func TestExplainWithoutPreloadedStatements(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel() // asserts a message
	work := serverWorkdir(t)
	profs := filepath.Join(work, "profiles")
	if err := os.MkdirAll(filepath.Join(profs, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profs, "postgres", "nopss.conf"), []byte("shared_preload_libraries = ''\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := filepath.Join(work, "srv")
	if code, out, stderr := runCLI(t, nil, "server", "start", "postgres", "--workdir", srv, "--profiles-dir", profs, "--profile", "nopss"); code != 0 {
		t.Fatalf("server start: exit %d: %s%s", code, out, stderr)
	}
	t.Cleanup(func() { runCLI(t, nil, "server", "stop", "postgres", "--workdir", srv) })
	results := filepath.Join(work, "r.db")
	code, out, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "postgres", "--dsn", "@"+state.DSNPath(srv, "postgres"),
		"--explain", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000", "--results", results, "--quiet")
	if code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, out, stderr)
	}
	_, js, _ := runCLI(t, nil, "report", "--results", results, "--format", "json")
	want := "statements: none: pg_stat_statements is not loaded on this server (shared_preload_libraries = ''): add pg_stat_statements to shared_preload_libraries and restart the server"
	if !strings.Contains(js, want) || strings.Contains(js, "not installed") {
		t.Errorf("the run's explain note: want %q in\n%s", want, js)
	}
}

// TestSweepWaitSupersededJobs (issue 40, M1): two jobs of a 4-point queued sweep
// cancelled, the sweep queued again (their replacements added), then run by an agent:
// sweep --wait counts 4 points and exits 0 (it said "6 points" and exited 1 on the
// cancelled jobs although their replacements completed).
func TestSweepWaitSupersededJobs(t *testing.T) {
	t.Parallel() // asserts what is stored and printed; mostly waits for the agent
	in := startStorePostgres(t)
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "store.dsn")
	if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cliEnv := map[string]string{"DBPERF_RESULTS": "@" + dsnFile}
	sweep := []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default,c=default,d=default",
		"--steps", "l.i0", "--rows", "2000", "--scale", "tiny", "--label", "m1", "--queue", "--class", "m1"}
	if code, out, errs := runCLI(t, cliEnv, sweep...); code != 0 || !strings.Contains(out, "4 of 4 jobs added") {
		t.Fatalf("enqueue: exit %d\n%s%s", code, out, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f, err := fleet.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := f.Jobs(ctx, "m1")
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	ids := fmt.Sprintf("%d,%d", jobs[1].ID, jobs[2].ID)
	if code, out, errs := runCLI(t, cliEnv, "queue", "--cancel", ids); code != 0 {
		t.Fatalf("queue --cancel %s: exit %d\n%s%s", ids, code, out, errs)
	}
	if code, out, errs := runCLI(t, cliEnv, sweep...); code != 0 || !strings.Contains(out, "2 of 4 jobs added") {
		t.Fatalf("enqueue again: exit %d\n%s%s", code, out, errs)
	}
	agent := exec.Command(buildBinary(t), "agent", "--class", "m1", "--lease", "4s", "--heartbeat", "500ms")
	agent.Env = append(os.Environ(), "DBPERF_RESULTS=@"+dsnFile, "TMPDIR="+dir)
	log := &syncBuffer{}
	agent.Stdout, agent.Stderr = log, log
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); _ = agent.Wait() }()
	code, out, errs := runCLI(t, cliEnv, "sweep", "--label", "m1", "--wait", "--timeout", "2m")
	if code != 0 || !strings.Contains(out, "sweep m1: 4 points on class m1") || !strings.Contains(out, "Throughput relative to a") {
		t.Errorf("sweep --wait: exit %d, want 0 and 4 points:\n%s%s\nagent:\n%s", code, out, errs, log.String())
	}
}
