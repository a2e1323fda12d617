package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/web"
)

// syncBuffer is an agent's log, written by its process and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFleet is issue 27's test: one managed PostgreSQL results store and three agents as
// separate processes. A six-point sweep enqueued (twice: the second adds nothing) is
// completed exactly once per point and `sweep --wait` prints its report with the class;
// an agent killed with its command (kill -9 of its process group: the host gone) mid-job
// has its job completed by another agent, once, and the run it left is marked failed;
// SIGTERM stops the idle agents, each recorded stopped.
func TestFleet(t *testing.T) {
	t.Parallel()
	in := startStorePostgres(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The store's DSN reaches every command through DBPERF_RESULTS=@FILE, never argv.
	dsnFile := filepath.Join(dir, "store.dsn")
	if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cliEnv := map[string]string{"DBPERF_RESULTS": "@" + dsnFile}
	bin := buildBinary(t)

	type agentProc struct {
		cmd *exec.Cmd
		log *syncBuffer
	}
	agents := map[int]*agentProc{}
	// Three agents of class tiny for the sweep and the killed job, two of class pair for
	// the run over two agents.
	for _, class := range []string{"tiny", "tiny", "tiny", "pair", "pair"} {
		a := &agentProc{log: &syncBuffer{}}
		a.cmd = exec.Command(bin, "agent", "--class", class, "--lease", "4s", "--heartbeat", "500ms")
		a.cmd.Env = append(os.Environ(), "DBPERF_RESULTS=@"+dsnFile, "TMPDIR="+dir)
		a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
		a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group: kill -9 takes its command too
		if err := a.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		agents[a.cmd.Process.Pid] = a
	}
	defer func() {
		for _, a := range agents {
			_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		}
	}()

	// The store first (dbperf's schema, then the queue's), then every agent registered.
	t0 := time.Now()
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
		if len(as) == len(agents) {
			break
		}
		for pid, a := range agents {
			// An agent that ended (a zombie, not yet waited for) never registers.
			if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(st), ") Z ") {
				t.Fatalf("agent %d ended before it registered:\n%s", pid, a.log.String())
			}
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("%d of %d agents registered after a minute", len(as), len(agents))
		}
		time.Sleep(100 * time.Millisecond)
	}

	sweep := []string{"sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default,c=default",
		"--clients", "1,2", "--steps", "l.i0,qp100", "--time", "1", "--scale", "tiny", "--label", "fleet6",
		"--queue", "--class", "tiny"}
	if code, out, errs := runCLI(t, cliEnv, sweep...); code != 0 || !strings.Contains(out, "6 of 6 jobs added") {
		t.Fatalf("enqueue the sweep: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, cliEnv, sweep...); code != 0 || !strings.Contains(out, "0 of 6 jobs added") {
		t.Fatalf("the same sweep enqueued again should add nothing: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := runCLI(t, cliEnv, "sweep", "--label", "fleet6", "--wait", "--timeout", "3m")
	if code != 0 || !strings.Contains(out, "6 points on class tiny") || !strings.Contains(out, "Throughput relative to a/c1") ||
		!strings.Contains(flat(out), "1 run 1, by agents of class tiny on ") {
		t.Fatalf("sweep --wait: exit %d\n%s%s", code, out, errs)
	}

	jobs, err := f.Jobs(ctx, "fleet6")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	runs, err := st.JobRuns(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	took := map[string]bool{}
	for _, j := range jobs {
		if j.State != "completed" || j.Attempt != 1 || len(runs[j.ID]) != 1 || runs[j.ID][0].Status != store.RunOK ||
			runs[j.ID][0].Label != "fleet6/"+j.Args.Point {
			t.Errorf("job %d (point %s): %s after %d attempts, runs %+v: want completed once with one ok run labelled fleet6/%s",
				j.ID, j.Args.Point, j.State, j.Attempt, runs[j.ID], j.Args.Point)
		}
		took[j.Agents[0]] = true
	}
	if len(jobs) != 6 {
		t.Fatalf("%d jobs in sweep fleet6, want 6", len(jobs))
	}
	t.Logf("the six points ran on %d agents", len(took))

	// An agent killed mid-job, with its command: another takes the job after the lease.
	if code, out, errs := runCLI(t, cliEnv, "run", "insertbench", "--engine", "sqlite", "--scale", "tiny",
		"--steps", "l.i0,qp100", "--time", "5", "--label", "fleet-kill", "--queue", "--class", "tiny"); code != 0 {
		t.Fatalf("enqueue the run: exit %d\n%s%s", code, out, errs)
	}
	var killed fleet.AgentInfo
	var jobID int64
	for killed.ID == "" {
		if ctx.Err() != nil {
			t.Fatal("no agent took the run's job")
		}
		as, err := f.Agents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.State == "running" && a.JobID != nil {
				killed, jobID = a, *a.JobID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Its run is stored (running) before the kill: wait for it.
	for {
		rs, err := st.JobRuns(ctx, []int64{jobID})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs[jobID]) > 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(-killed.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = agents[killed.PID].cmd.Wait()
	delete(agents, killed.PID)
	// While river's rescuer waits out the killed agent's lease (up to 30 s more), the two
	// agents of class pair run one run over both: their parts' ops add up to the merged
	// run's, whose p99 comes from the merged histograms.
	code, out, errs = runCLI(t, cliEnv, "run", "insertbench", "--engine", "postgres", "--managed", "--scale", "tiny",
		"--steps", "l.i0,qp100", "--time", "2", "--clients", "2", "--agents", "2", "--class", "pair")
	m := regexp.MustCompile(`run (\d+): the 2 parts' runs \((\d+), (\d+)\) merged`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("run --agents 2: exit %d\n%s%s", code, out, errs)
	}
	var runIDs []int64
	for _, v := range m[1:] {
		id, _ := strconv.ParseInt(v, 10, 64)
		runIDs = append(runIDs, id)
	}
	got, err := st.Results(ctx, runIDs)
	if err != nil {
		t.Fatal(err)
	}
	merged, p1, p2 := got[0], got[1], got[2]
	if merged.Env[parts.EnvAgents] == "" || p1.Env[parts.EnvPart] != "1/2" || p2.Env[parts.EnvPart] != "2/2" || p1.Env["hostname"] == "" {
		t.Errorf("merged env %v, parts' %v %v: want the parts named", merged.Env, p1.Env, p2.Env)
	}
	for s, step := range merged.Steps {
		for _, l := range step.Result.Labels {
			var sum int64
			var p99s []int64
			for _, p := range []store.Run{p1, p2} {
				for _, pl := range p.Steps[s].Result.Labels {
					if pl.Label == l.Label {
						sum += pl.Count()
						p99s = append(p99s, pl.Service.P99)
					}
				}
			}
			if l.Count() != sum || l.Count() == 0 || len(p99s) != 2 || l.Service.P99 < min(p99s[0], p99s[1]) || l.Service.P99 > max(p99s[0], p99s[1]) {
				t.Errorf("merged %s %s: %d ops, p99 %d µs; parts: %d ops in all, p99s %v: want their sum and a p99 between theirs",
					step.Result.Name, l.Label, l.Count(), l.Service.P99, sum, p99s)
			}
		}
	}
	t.Logf("run --agents 2: merged run %d of parts %d and %d", runIDs[0], runIDs[1], runIDs[2])

	var job fleet.Job
	for {
		js, err := f.Jobs(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.ID == jobID {
				job = j
			}
		}
		if job.Done() {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("job %d not completed by another agent after its agent was killed: %+v", jobID, job)
		}
		time.Sleep(500 * time.Millisecond)
	}
	rs, err := st.JobRuns(ctx, []int64{jobID})
	if err != nil {
		t.Fatal(err)
	}
	var ok, failed int
	for _, r := range rs[jobID] {
		switch r.Status {
		case store.RunOK:
			ok++
		case store.RunFailed:
			failed++
		}
	}
	if job.State != "completed" || job.Attempt != 2 || len(job.Agents) != 2 || job.Agents[1] == killed.ID || ok != 1 || failed != 1 || len(rs[jobID]) != 2 {
		t.Fatalf("job %d after its agent %s was killed: %s, attempt %d by %v, runs %+v: want completed on the second attempt by another agent, one ok run and the dead one's failed",
			jobID, killed.ID, job.State, job.Attempt, job.Agents, rs[jobID])
	}
	code, out, _ = runCLI(t, cliEnv, "queue")
	if code != 0 || !strings.Contains(out, "lost") || !strings.Contains(out, "fleet6 point a/c1") {
		t.Errorf("dbperf queue should list the sweep's jobs and the killed agent as lost: exit %d\n%s", code, out)
	}

	// dbperf serve's queue page: the agents and the jobs.
	q, err := fleet.OpenReadOnly(ctx, in.DSN)
	if err != nil || q == nil {
		t.Fatalf("open the queue read-only: %v", err)
	}
	defer q.Close()
	srv, err := web.New(st)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetQueue(q)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/queue", nil))
	if page := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(page, "fleet6 · a/c1") ||
		!strings.Contains(page, `<td class="state">lost</td>`) || !strings.Contains(page, killed.Host) {
		t.Errorf("serve's /queue: %d, want the sweep's jobs, the agents' host and the killed agent lost:\n%s", rec.Code, page)
	}

	// SIGTERM: the idle agents stop and say so.
	for pid, a := range agents {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		if err := a.cmd.Wait(); err != nil {
			t.Errorf("agent %d after SIGTERM: %v\n%s", pid, err, a.log.String())
		}
		if !strings.Contains(a.log.String(), "stopped") {
			t.Errorf("agent %d's log should say it stopped:\n%s", pid, a.log.String())
		}
	}
	agents = nil
	as, err := f.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.ID != killed.ID && a.State != "stopped" {
			t.Errorf("agent %s is %s after SIGTERM, want stopped", a.ID, a.State)
		}
	}
}
