package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverProcs lists the pids of processes whose command line mentions dir: the managed
// servers a test started under its own temporary directory.
func serverProcs(dir string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, dir) && (strings.Contains(cmd, "postgres") || strings.Contains(cmd, "mariadbd")) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
				if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
					continue
				}
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitNoServers fails the test when a server started under dir is still alive after a while.
func waitNoServers(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(serverProcs(dir)) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("server processes outlived dbperf: %v", serverProcs(dir))
}

// serverWorkdir is a work dir a managed PostgreSQL's unprivileged user can enter
// (t.TempDir's directories are private to root).
func serverWorkdir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dbperf-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func needServer(t *testing.T, engine string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts database servers")
	}
	bin := map[string]string{"postgres": "/usr/lib/postgresql/15/bin/postgres", "mariadb": "/usr/sbin/mariadbd"}[engine]
	if _, err := os.Stat(bin); err != nil {
		// make test installs the servers (scripts/deps.sh test); running the package
		// alone on a machine without them is the only way to get here.
		t.Skipf("%s is not installed (make test installs it): %v", engine, err)
	}
}

// TestConformanceManagedServers runs the Insert Benchmark at tiny scale on every managed
// server and checks the stored results and audits.
func TestConformanceManagedServers(t *testing.T) {
	t.Parallel() // asserts results and audits, not rates: beside the package's other parallel tests
	for _, tc := range []struct {
		name, engine, label string
		args                []string
	}{
		{"postgres 15", "postgres", "postgres", []string{"--engine", "postgres"}},
		{"postgres 13 from Maven Central", "postgres", "postgres", []string{"--engine", "postgres", "--engine-version", "13"}},
		{"mariadb innodb", "mariadb", "mariadb/innodb", []string{"--engine", "mariadb"}},
		{"mariadb myrocks", "mariadb", "mariadb/rocksdb", []string{"--engine", "mariadb", "--mysql-storage-engine", "rocksdb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needServer(t, tc.engine)
			// Beside the package's other parallel tests (TestMain's -parallel): these runs
			// assert results and audits, not timings.
			t.Parallel()
			tmp := serverWorkdir(t)
			results := filepath.Join(tmp, "r.db")
			// --time 0.5: every step still runs and is audited; the query steps' 5 s at tiny
			// scale would add two minutes over the four servers and assert nothing more
			// (the phase these run in keeps both CPUs busy: a flat-out step's second costs
			// the package about one).
			args := append([]string{"run", "insertbench", "--managed", "--scale", "tiny", "--time", "0.5", "--quiet", "--results", results,
				"--workdir", tmp, "--profiles-dir", "../../profiles"}, tc.args...)
			code, _, stderr := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			waitNoServers(t, tmp)
			run := reportJSON(t, results).Runs[0]
			if run.Status != "ok" || run.Engine != tc.label || run.EngineVersion == "" {
				t.Fatalf("run %s %s %q", run.Status, run.Engine, run.EngineVersion)
			}
			if tc.engine == "postgres" && !strings.HasPrefix(run.EngineVersion, map[bool]string{true: "13", false: "15"}[strings.Contains(tc.name, "13")]) {
				t.Errorf("postgres version %q", run.EngineVersion)
			}
			if run.Settings["dbperf.profile"] != "default" || run.Settings["dbperf.managed"] != "true" {
				t.Errorf("profile and managed not stored: %q %q", run.Settings["dbperf.profile"], run.Settings["dbperf.managed"])
			}
			if len(run.Steps) != len(allSteps) {
				t.Fatalf("%d steps", len(run.Steps))
			}
			code, text, _ := runCLI(t, nil, "report", "--results", results)
			if code != 0 || !strings.Contains(text, run.EngineVersion) || !strings.Contains(text, "managed server, profile default") {
				t.Errorf("the text report must show the server version and profile:\n%s", text)
			}
			for _, st := range run.Steps {
				if st.Status != "ok" || st.Audit.Status != "ok" {
					t.Errorf("%s: %s, audit %s: %s %s", st.Name, st.Status, st.Audit.Status, st.Audit.Detail, st.Error)
				}
				if strings.HasSuffix(st.Name, "1000") {
					for _, role := range []string{"insert", "delete"} {
						if bg := st.Background[role]; bg.Target != 1000 || bg.Achieved <= 0 || bg.SLA == "" {
							t.Errorf("%s %s background: %+v", st.Name, role, bg)
						}
					}
				}
			}
			checkHW(t, run.Env, run.Steps)
		})
	}
}

// checkHW is issue 4's acceptance on a managed server's run: per-connection CPU of the
// insert and delete sessions in l.i1 and of the query session in qr100; in every step the
// roles' CPU within the server's total; wkbpi > 0 in l.i0; cpupq > 0 in every step.
func checkHW(t *testing.T, env map[string]string, steps []jsonStep) {
	t.Helper()
	if !strings.HasPrefix(env["server_processes"], "managed server: pid ") || env["io_devices"] == "" && env["io_devices_note"] == "" {
		t.Errorf("env does not say what was sampled: %v", env)
	}
	num := func(st jsonStep, k string) (float64, bool) {
		v, ok := st.HW[k].(float64)
		return v, ok
	}
	for _, st := range steps {
		if v, ok := num(st, "cpupq"); !ok || v <= 0 {
			t.Errorf("%s: cpupq = %v (absent: %v)", st.Name, st.HW["cpupq"], st.HW["absent"])
		}
		for _, m := range []string{"server_cpupq", "client_cpupq", "cspq", "dbgb", "rss_gb"} {
			if _, ok := num(st, m); !ok {
				t.Errorf("%s: %s absent: %v", st.Name, m, st.HW["absent"])
			}
		}
		server, _ := st.HW["server"].(map[string]any)
		total, _ := server["cpu_sec"].(float64)
		var sum float64
		for _, v := range st.ConnCPU {
			sum += v
		}
		if len(st.ConnCPU) == 0 || sum > total+1e-6 {
			t.Errorf("%s: connections %v (sum %.3f s) vs server total %.3f s", st.Name, st.ConnCPU, sum, total)
		}
		switch st.Name {
		case "l.i0":
			if env["io_devices"] != "" {
				if v, ok := num(st, "wkbpi"); !ok || v <= 0 {
					t.Errorf("l.i0: wkbpi = %v", st.HW["wkbpi"])
				}
			}
		case "l.i1":
			if st.ConnCPU["insert"] <= 0 || st.ConnCPU["delete"] <= 0 {
				t.Errorf("l.i1: insert/delete connections' CPU %v", st.ConnCPU)
			}
			// Issue 26: per operation of the role's own work, for every role.
			if st.ConnCPUPerOp["insert"] <= 0 || st.ConnCPUPerOp["delete"] <= 0 {
				t.Errorf("l.i1: insert/delete connections' CPU per row %v", st.ConnCPUPerOp)
			}
		case "qr100":
			if st.ConnCPU["query"] <= 0 || st.ConnCPUPerOp["query"] <= 0 {
				t.Errorf("qr100: query connection's CPU %v, per query %v", st.ConnCPU, st.ConnCPUPerOp)
			}
			for _, role := range []string{"insert", "delete"} {
				if _, ok := st.ConnCPUPerOp[role]; !ok {
					t.Errorf("qr100: no per-row CPU of the %s connection: %v", role, st.ConnCPUPerOp)
				}
			}
		}
	}
}

// TestServerDiesMidStep kills the managed server during qr100: that step fails with the
// server's log tail, the earlier steps are kept, the run exits 1 and no process is left.
func TestServerDiesMidStep(t *testing.T) {
	t.Parallel() // asserts the failed step and its message; its server is its own
	needServer(t, "mariadb")
	bin, tmp := buildBinary(t), serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	cmd := exec.Command(bin, "run", "insertbench", "--engine", "mariadb", "--managed", "--scale", "tiny",
		"--steps", "l.i0,l.x,qr100,qp100", "--time", "60", "--quiet", "--results", results,
		"--workdir", tmp, "--profiles-dir", "../../profiles")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitForStep(t, results, "qr100", 2)
	pids := serverProcs(tmp)
	if len(pids) == 0 {
		t.Fatal("no server process found")
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitStepFailed {
		t.Fatalf("exit: %v, want 1; stderr: %s", err, stderr.String())
	}
	waitNoServers(t, tmp)
	run := reportJSON(t, results).Runs[0]
	got := map[string]string{}
	for _, st := range run.Steps {
		got[st.Name] = st.Status
		if st.Name == "qr100" && st.Error == "" {
			t.Error("the failed step has no error")
		}
	}
	if run.Status != "failed" || got["l.i0"] != "ok" || got["l.x"] != "ok" || got["qr100"] != "failed" || got["qp100"] != "skipped" {
		t.Errorf("run %s, steps %v", run.Status, got)
	}
}

// TestInterruptStopsManagedServer: Ctrl-C in the middle of a managed run exits 130 and
// leaves no server process.
func TestInterruptStopsManagedServer(t *testing.T) {
	t.Parallel() // asserts exit 130 and no server left: its server is its own
	needServer(t, "postgres")
	bin, tmp := buildBinary(t), serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	cmd := exec.Command(bin, "run", "insertbench", "--engine", "postgres", "--managed", "--scale", "tiny",
		"--steps", "l.i0,l.x,qr100", "--time", "60", "--quiet", "--results", results,
		"--workdir", tmp, "--profiles-dir", "../../profiles")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitForStep(t, results, "qr100", 2)
	if len(serverProcs(tmp)) == 0 {
		t.Fatal("no server process found while running")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit: %v, want 130", err)
	}
	waitNoServers(t, tmp)
	if st := reportJSON(t, results).Runs[0].Status; st != "interrupted" {
		t.Errorf("run status %s", st)
	}
}
