package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// integrityOK runs PRAGMA integrity_check on a results store.
func integrityOK(t *testing.T, results string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+results+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("%s: integrity_check %q %v", results, check, err)
	}
}

// kill -9 of dbperf at random points of a tiny run (seeded): the store passes
// integrity_check, the run reads interrupted, and every step it finished is kept whole.
func TestKill9AtRandomPoints(t *testing.T) {
	t.Parallel() // asserts the store's integrity after kills at random moments
	if testing.Short() {
		t.Skip("starts benchmark processes")
	}
	bin := buildBinary(t)
	for _, seed := range []uint64{1, 2, 3} {
		tmp := t.TempDir()
		results := filepath.Join(tmp, "r.db")
		delay := time.Duration(300+rand.New(rand.NewPCG(seed, 7)).IntN(3500)) * time.Millisecond
		cmd := exec.Command(bin, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100,qp500",
			"--time", "2", "--results", results, "--quiet")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := os.Stat(results); err != nil {
			continue // killed before the store was made: nothing to check
		}
		integrityOK(t, results)
		code, out, stderr := runCLI(t, nil, "report", "--results", results, "--format", "json")
		if code != 0 {
			t.Fatalf("seed %d (kill after %v): report: %d %s", seed, delay, code, stderr)
		}
		var rep jsonReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Runs) != 1 {
			t.Fatalf("seed %d: %v %d runs", seed, err, len(rep.Runs))
		}
		run := rep.Runs[0]
		if run.Status != "interrupted" && run.Status != "ok" {
			t.Errorf("seed %d (kill after %v): run status %s", seed, delay, run.Status)
		}
		for _, st := range run.Steps {
			if st.Status == "ok" && (st.Audit.Status != "ok" || len(st.Intervals) == 0 || st.Ops[st.Primary].Count == 0) {
				t.Errorf("seed %d: finished step %s not whole: %+v", seed, st.Name, st)
			}
		}
		t.Logf("seed %d: killed after %v, run %s with %d steps", seed, delay, run.Status, len(run.Steps))
	}
}

// Two runs writing one results store at once both finish and keep everything.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel() // asserts two writers' runs and the store's integrity
	if testing.Short() {
		t.Skip("starts benchmark processes")
	}
	bin := buildBinary(t)
	tmp := t.TempDir()
	results := filepath.Join(tmp, "r.db")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100", "--time", "2",
				"--report-interval", "0.1", "--results", results, "--quiet")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Errorf("writer %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	integrityOK(t, results)
	rep := reportJSON(t, results, "1", "2")
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Status != "ok" || len(r.Steps) != 3 {
			t.Errorf("run %d: %s, %d steps", r.ID, r.Status, len(r.Steps))
		}
	}
}

// SIGSTOP of the server for two seconds during a read-write step: the step goes on and
// finishes, and the rate-limited writers' response-time max covers the stall. It asserts
// no rate (a response max at least the stall's length), so it runs beside other tests:
// the stall starts once the step has stored its first interval, however late that is.
func TestServerStalled(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	tmp := serverWorkdir(t)
	results := filepath.Join(tmp, "r.db")
	code, out, stderr := runCLI(t, nil, "server", "start", "postgres", "--workdir", tmp, "--profiles-dir", "../../profiles")
	if code != 0 {
		t.Fatalf("server start: %d %s %s", code, out, stderr)
	}
	t.Cleanup(func() { runCLI(t, nil, "server", "stop", "postgres", "--workdir", tmp) })
	var state struct {
		PID     int    `json:"pid"`
		DSN     string `json:"dsn"`
		DSNFile string `json:"dsn_file"`
	}
	b, err := os.ReadFile(filepath.Join(tmp, "postgres.json"))
	if err != nil || json.Unmarshal(b, &state) != nil {
		t.Fatalf("server state: %v %s", err, b)
	}
	dsn := state.DSN
	if state.DSNFile != "" {
		dsn = "@" + state.DSNFile
	}
	if code, _, stderr := runCLI(t, nil, "run", "insertbench", "--engine", "postgres", "--dsn", dsn, "--scale", "tiny",
		"--steps", "l.i0,l.x", "--rows", "20000", "--results", results, "--quiet"); code != 0 {
		t.Fatalf("load: %d %s", code, stderr)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, stderr = runCLICtx(context.Background(), nil, "run", "insertbench", "--engine", "postgres", "--dsn", dsn,
			"--steps", "qp100", "--time", "5", "--results", results, "--quiet")
	}()
	// 1 s or more into qp100 (its first interval stored), 2 s of stall, then 1.5 s or so
	// of the step left.
	waitForStoredStep(t, results, "qp100", 1, done)
	// PostgreSQL's children are process group leaders of their own (setsid): stop every
	// process of the server's tree, the backends serving dbperf's sessions too.
	tree := serverTree(state.PID)
	for _, pid := range tree {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	time.Sleep(2 * time.Second)
	for _, pid := range tree {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	<-done
	if code != 0 {
		t.Fatalf("qp100 with a stalled server: exit %d: %s", code, stderr)
	}
	code, out, stderr = runCLI(t, nil, "report", "--results", results, "--format", "json")
	if code != 0 {
		t.Fatalf("report: %d %s", code, stderr)
	}
	var rep struct {
		Runs []struct {
			Steps []struct {
				Name, Status, Error string
				Ops                 map[string]struct {
					Response *struct {
						Max int64 `json:"max_us"`
					} `json:"response"`
				} `json:"ops"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	st := rep.Runs[len(rep.Runs)-1].Steps[0]
	if st.Status != "ok" {
		t.Fatalf("%s: %s %s", st.Name, st.Status, st.Error)
	}
	if ins := st.Ops["insert"]; ins.Response == nil || ins.Response.Max < 1_500_000 {
		t.Errorf("the insert writer's response max does not cover the 2 s stall: %+v", ins.Response)
	}
}

// serverTree is root and its descendants, from /proc.
func serverTree(root int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		rest := string(b[bytes.LastIndexByte(b, ')')+2:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err == nil {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	out, todo := []int{}, []int{root}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		out = append(out, p)
		todo = append(todo, kids[p]...)
	}
	return out
}

// With as many clients as SQLite's cap allows (341: 1,023 sessions), Ctrl-C during the
// sessions' work stops the run in under 2 s.
func TestManyClientsStopPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a benchmark process")
	}
	bin, tmp := buildBinary(t), t.TempDir()
	results := filepath.Join(tmp, "r.db")
	cmd := exec.Command(bin, "run", "insertbench", "--scale", "tiny", "--clients", "341", "--rows", "100000",
		"--steps", "l.i0", "--results", results, "--quiet")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Wait until the step has stored an interval: every session is open and working.
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := sql.Open("sqlite3", "file:"+results+"?mode=ro")
		n := 0
		if err == nil {
			_ = db.QueryRow("SELECT count(*) FROM intervals").Scan(&n)
			db.Close()
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no interval stored within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if d := time.Since(sent); d > 2*time.Second {
		t.Errorf("341 clients took %v to stop after SIGINT, want under 2 s", d)
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	integrityOK(t, results)
}
