package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// TestAgentsBadInput: what --agents cannot run is refused before anything starts, every
// problem on a line of its own, exit 2.
func TestAgentsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errs := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--agents", "3", "--clients", "2",
		"--results", dir+"/r.db", "--repeat", "2")
	for _, want := range []string{
		"--agents: the agents take their parts from the queue in a PostgreSQL results store",
		"--agents: --engine sqlite runs inside each dbperf process",
		"--agents 3: --clients 2 is fewer clients than agents",
		"--repeat: not with --agents yet",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("missing %q", want)
		}
	}
	if code != ExitBadInput || out != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing\n%s", code, out, errs)
	}
	code, _, errs = runCLI(t, nil, "run", "sysbench", "--engine", "postgres", "--dsn", "postgres://u:secret@127.0.0.1:1/db",
		"--agents", "2", "--clients", "2", "--results", "postgres://u@127.0.0.1:1/db")
	if code != ExitBadInput || !strings.Contains(errs, "sysbench's clients share tables, so its setup cannot be split yet; --agents runs insertbench\n") || !strings.Contains(errs, "give --dsn @FILE") || strings.Contains(errs, "secret") {
		t.Errorf("sysbench --agents with a password in --dsn: exit %d\n%s", code, errs)
	}
}

// TestAgentKilledMidPart (issue 40 H2): two agents run one run's two parts; kill -9 of
// the agent running part 2 during qp100. Before, part 2 was retried alone once part 1 had
// finished, passed its barriers at once (its own rows overwritten) and the merged run said
// ok with the sum of two parts that never overlapped. Now a part is tried once: the merged
// run is failed, saying which part ended how, and its audits cover both parts' tables.
func TestAgentKilledMidPart(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	agentGoneMidPart(t, syscall.SIGKILL, "discarded", time.Minute)
}

// TestAgentStoppedMidPart: SIGTERM to the agent running part 2 during qp100. Before, the
// job went back to the queue (a snooze) and ran again alone after part 1; now it is
// cancelled at once and the merged run is failed, naming it, once part 1 ends its step.
func TestAgentStoppedMidPart(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	// Part 1 runs the rest of its qp100 (8 s or less): the merge follows.
	agentGoneMidPart(t, syscall.SIGTERM, "cancelled", 30*time.Second)
}

// agentGoneMidPart runs insertbench l.i0,qp100 --time 10 over two agents, sends sig to
// the agent running part 2 two seconds into qp100 (the other part's qp100 goes on for
// most of its 10 s) and checks the merged run: failed
// within bound of the signal, agents_partial saying part 2's job ended state, l.i0's audit
// both parts', qp100 not ok and naming part 2.
func agentGoneMidPart(t *testing.T, sig syscall.Signal, state string, bound time.Duration) {
	t.Helper()
	in := startStorePostgres(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dsnFile := filepath.Join(dir, "store.dsn")
	if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	agents := map[int]*exec.Cmd{}
	logs := map[int]*syncBuffer{}
	for range 2 {
		log := &syncBuffer{}
		cmd := exec.Command(bin, "agent", "--class", "h2", "--lease", "3s", "--heartbeat", "500ms")
		cmd.Env = append(os.Environ(), "DBPERF_RESULTS=@"+dsnFile, "TMPDIR="+dir)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		agents[cmd.Process.Pid], logs[cmd.Process.Pid] = cmd, log
	}
	defer func() {
		for _, a := range agents {
			_ = a.Process.Kill()
			_ = a.Wait()
		}
	}()
	st, err := store.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := fleet.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		as, err := f.Agents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the two agents did not register")
		}
		time.Sleep(100 * time.Millisecond)
	}

	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := runCLICtx(ctx, map[string]string{"DBPERF_RESULTS": "@" + dsnFile}, "run", "insertbench", "--engine", "postgres",
			"--managed", "--scale", "tiny", "--rows", "5000", "--steps", "l.i0,qp100", "--time", "10", "--clients", "2", "--agents", "2",
			"--class", "h2", "--label", "h2", "--workdir", serverWorkdir(t), "--profiles-dir", "../../profiles")
		done <- result{code, out, stderr}
	}()
	// Once both parts run qp100, kill -9 the agent of part 2 (its command gets SIGTERM:
	// Pdeathsig).
	var victim int
	for victim == 0 {
		select {
		case r := <-done:
			t.Fatalf("the run ended before its parts ran qp100: exit %d\n%s%s", r.code, r.out, r.stderr)
		case <-ctx.Done():
			t.Fatal("the parts did not reach qp100")
		case <-time.After(200 * time.Millisecond):
		}
		as, err := f.Agents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byJob := map[int64]int{}
		var jobs []int64
		for _, a := range as {
			if a.State == "running" && a.JobID != nil {
				byJob[*a.JobID] = a.PID
				jobs = append(jobs, *a.JobID)
			}
		}
		if len(jobs) != 2 {
			continue
		}
		runs, err := st.JobRuns(ctx, jobs)
		if err != nil {
			t.Fatal(err)
		}
		inQP := 0
		var part2 int64
		for _, j := range jobs {
			for _, r := range runs[j] {
				got, err := st.Results(ctx, []int64{r.RunID})
				if err != nil || len(got) != 1 {
					continue
				}
				if got[0].Env[parts.EnvPart] == "2/2" {
					part2 = j
				}
				for _, s := range got[0].Steps {
					if s.Result.Name == "qp100" {
						inQP++
					}
				}
			}
		}
		if inQP == 2 && part2 != 0 {
			time.Sleep(2 * time.Second)
			victim = byJob[part2]
		}
	}
	if err := syscall.Kill(victim, sig); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("the coordinator did not end; agent logs:\n%s", logs[victim])
	}
	took := time.Since(killed)
	t.Logf("the coordinator ended %s after %s: exit %d\n%s%s", took.Round(100*time.Millisecond), sig, r.code, r.out, r.stderr)
	if took > bound {
		t.Errorf("the coordinator ended %s after %s to part 2's agent, want within %s", took.Round(100*time.Millisecond), sig, bound)
	}
	m := regexp.MustCompile(`run (\d+): the 2 parts' runs \((\d+), (\d+)\) merged`).FindStringSubmatch(r.out)
	if r.code != ExitStepFailed || m == nil {
		t.Fatalf("exit %d, want %d with the merged run stored:\n%s%s", r.code, ExitStepFailed, r.out, r.stderr)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	got, err := st.Results(ctx, []int64{id})
	if err != nil || len(got) != 1 {
		t.Fatalf("merged run %d: %v", id, err)
	}
	merged := got[0]
	if p := merged.Env[parts.EnvAgentsPartial]; merged.Status != store.RunFailed || !regexp.MustCompile(`^part 2 \(job \d+\) `+state+`: `).MatchString(p) || strings.HasSuffix(p, "; ") {
		t.Errorf("merged run: %s, %s %q: want failed, saying what became of part 2", merged.Status, parts.EnvAgentsPartial, merged.Env[parts.EnvAgentsPartial])
	}
	if len(merged.Steps) != 2 {
		t.Fatalf("merged run: %d steps", len(merged.Steps))
	}
	li0, qp := merged.Steps[0].Result, merged.Steps[1].Result
	if li0.Status != metrics.StatusOK || !strings.Contains(li0.Audit.Detail, "part 1: ") || !strings.Contains(li0.Audit.Detail, "part 2: ") {
		t.Errorf("merged l.i0: %s, audit %q: want ok, its audit covering both parts", li0.Status, li0.Audit.Detail)
	}
	if qp.Status == metrics.StatusOK || !strings.Contains(qp.Error, "part 2") {
		t.Errorf("merged qp100: %s, error %q: want not ok, naming part 2", qp.Status, qp.Error)
	}
}

// TestPartBarrierRetried (issue 40 H2): a part arriving again at a step whose barrier both
// parts passed (a retried attempt) fails at once, naming why, instead of passing because
// its own earlier row counts; a part arriving again before the others did still waits.
func TestPartBarrierRetried(t *testing.T) {
	t.Parallel()
	in := startStorePostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := fleet.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	errs := make(chan error, 2)
	for part := 1; part <= 2; part++ {
		go func() { errs <- f.Barrier(ctx, "k", "l.i0", part, 2, 10*time.Second) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("both parts at the barrier: %v", err)
		}
	}
	start := time.Now()
	err = f.Barrier(ctx, "k", "l.i0", 2, 2, 10*time.Second)
	if !errors.Is(err, fleet.ErrBarrierPassed) || !strings.Contains(err.Error(), "step l.i0: part 2 of 2 arrives again") || time.Since(start) > 2*time.Second {
		t.Errorf("part 2 again at l.i0 after both passed: %v after %s: want ErrBarrierPassed at once", err, time.Since(start))
	}
	// Part 1 at qp100, then again (its retry) before part 2: it waits for part 2.
	if err := f.Barrier(ctx, "k", "qp100", 1, 2, 200*time.Millisecond); err == nil || errors.Is(err, fleet.ErrBarrierPassed) {
		t.Fatalf("part 1 alone at qp100: %v, want a timeout", err)
	}
	go func() { errs <- f.Barrier(ctx, "k", "qp100", 2, 2, 10*time.Second) }()
	if err := f.Barrier(ctx, "k", "qp100", 1, 2, 10*time.Second); err != nil {
		t.Errorf("part 1 again at qp100 before part 2 passed: %v", err)
	}
	if err := <-errs; err != nil {
		t.Errorf("part 2 at qp100: %v", err)
	}

	// A part whose job ended without arriving (here cancelled; a dead agent's is
	// discarded) never will: the others stop waiting within about a second, not after
	// the barrier's timeout.
	got, err := f.Enqueue(ctx, []fleet.JobArgs{{Argv: []string{"run", "insertbench", "--part=g/1/2"}, Class: "nobody", Part: "g/1/2"},
		{Argv: []string{"run", "insertbench", "--part=g/2/2"}, Class: "nobody", Part: "g/2/2"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Cancel(ctx, got[1].ID); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	err = f.Barrier(ctx, "g", "l.i0", 1, 2, 20*time.Second)
	want := fmt.Sprintf("part 2 (job %d) is cancelled without arriving", got[1].ID)
	if !errors.Is(err, fleet.ErrPartGone) || !strings.Contains(err.Error(), want) || time.Since(start) > 5*time.Second {
		t.Errorf("part 1 at l.i0 with part 2's job cancelled: %v after %s: want ErrPartGone (%q) within seconds", err, time.Since(start), want)
	}
}

// TestPartRetriedNotRun (issue 40, What to build 4): a part that comes to a step whose
// barrier every part passed already (it ran again after the others went on) never runs
// that step alone. Before, its barrier's error was only the step's note and its load ran
// alone, stored ok; now the step fails before its load, naming the barrier, with nothing
// measured, and the run exits 1.
func TestPartRetriedNotRun(t *testing.T) {
	t.Parallel()
	in := startStorePostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := fleet.Open(ctx, in.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	errs := make(chan error, 2)
	for part := 1; part <= 2; part++ {
		go func() { errs <- f.Barrier(ctx, "again", "l.i0", part, 2, 10*time.Second) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("both parts at the barrier: %v", err)
		}
	}
	dir := t.TempDir()
	code, out, stderr := runCLICtx(ctx, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--part", "again/2/2",
		"--results", in.DSN, "--workdir", dir, "--label", "again", "--quiet")
	id, err := st.LatestRunID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Results(ctx, []int64{id})
	if err != nil || len(got) != 1 || len(got[0].Steps) != 1 {
		t.Fatalf("the part's run %d: %v (exit %d\n%s%s)", id, err, code, out, stderr)
	}
	s := got[0].Steps[0].Result
	if code != ExitStepFailed || s.Status != metrics.StatusFailed || got[0].Status != store.RunFailed ||
		!strings.Contains(s.Error, parts.BarrierName+": step l.i0: part 2 of 2 arrives again") || s.PrimaryCount() != 0 {
		t.Errorf("part 2 again at l.i0: exit %d, run %s, step %s %q, %d rows; want exit 1, failed before its load, naming the barrier, nothing measured\n%s%s",
			code, got[0].Status, s.Status, s.Error, s.PrimaryCount(), out, stderr)
	}
}
