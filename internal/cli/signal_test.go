package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds dbperf for the tests that need a real process to kill, or returns
// $DBPERF_TEST_BIN: `make test` builds bin/dbperf from this tree just before the tests and
// passes it, which spares ten links of the cgo binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DBPERF_TEST_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("DBPERF_TEST_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "dbperf")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dbperf").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// binaryIn puts dbperf at dir/dbperf, a copy of $DBPERF_TEST_BIN when make test passes
// one (a copy, not a link: the tests that need a binary of their own run it from outside
// the checkout or as another user), else built there.
func binaryIn(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "dbperf")
	if src := os.Getenv("DBPERF_TEST_BIN"); src != "" {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("DBPERF_TEST_BIN: %v", err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dbperf").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startLongRun starts a run whose qr100 step lasts a minute and waits until that step has
// stored at least two intervals.
func startLongRun(t *testing.T, bin, results, tmp string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "run", "insertbench", "--scale", "tiny", "--results", results,
		"--steps", "l.i0,l.x,qr100,qp100", "--time", "60", "--quiet")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitForStep(t, results, "qr100", 2)
	return cmd
}

// waitForStep waits until the run in results has stored at least n intervals of step.
func waitForStep(t *testing.T, results, step string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		if _, err := os.Stat(results); err != nil {
			continue
		}
		code, out, _ := runCLI(t, nil, "report", "--results", results, "--format", "json")
		if code != 0 {
			continue
		}
		var rep jsonReport
		if json.Unmarshal([]byte(out), &rep) != nil || len(rep.Runs) == 0 {
			continue
		}
		for _, st := range rep.Runs[0].Steps {
			if st.Name == step && len(st.Intervals) >= n {
				return
			}
		}
	}
	t.Fatalf("%s never stored %d intervals", step, n)
}

func checkInterrupted(t *testing.T, results string) {
	t.Helper()
	rep := reportJSON(t, results)
	run := rep.Runs[0]
	if run.Status != "interrupted" {
		t.Errorf("run status %q, want interrupted", run.Status)
	}
	got := map[string]string{}
	for _, st := range run.Steps {
		got[st.Name] = st.Status
		if st.Name == "qr100" && len(st.Intervals) < 2 {
			t.Errorf("qr100 lost its intervals: %d", len(st.Intervals))
		}
		if st.Name == "l.i0" && st.Ops["insert"].Count != 100_000 {
			t.Errorf("l.i0 kept %d inserted rows, want 100000", st.Ops["insert"].Count)
		}
	}
	if got["l.i0"] != "ok" || got["l.x"] != "ok" || got["qr100"] != "interrupted" {
		t.Errorf("step statuses %v: finished steps must be kept ok and the running one interrupted", got)
	}
	code, out, _ := runCLI(t, nil, "runs", "--results", results)
	if code != 0 || !strings.Contains(out, "interrupted") {
		t.Errorf("dbperf runs should show the run as interrupted:\n%s", out)
	}
}

func TestKilledRunLeavesReadableStore(t *testing.T) {
	t.Parallel() // asserts the store's integrity after a kill
	if testing.Short() {
		t.Skip("starts a benchmark process")
	}
	bin, tmp := buildBinary(t), t.TempDir()
	results := filepath.Join(tmp, "r.db")
	cmd := startLongRun(t, bin, results, tmp)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	checkInterrupted(t, results)
}

func TestInterruptStopsCleanly(t *testing.T) {
	t.Parallel() // asserts exit 130 and what is stored (a 10 s bound)
	if testing.Short() {
		t.Skip("starts a benchmark process")
	}
	bin, tmp := buildBinary(t), t.TempDir()
	results := filepath.Join(tmp, "r.db")
	cmd := startLongRun(t, bin, results, tmp)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit after SIGINT: %v, want status 130", err)
	}
	if d := time.Since(sent); d > 10*time.Second {
		t.Errorf("took %v to stop after SIGINT", d)
	}
	checkInterrupted(t, results)
	left, _ := filepath.Glob(filepath.Join(tmp, "dbperf-sqlite-*"))
	if len(left) != 0 {
		t.Errorf("the temporary work directory was left behind: %v", left)
	}
}
