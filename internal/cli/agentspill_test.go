package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/store"
)

// TestAgentSpillReported (issue 40 M3, under agents): a queued sweep's job whose results
// store stops answering mid-step keeps what it measured in a spill file on the agent's
// host. Before, only the command's own line in the agent's log named it: the agent said
// "job N done" and `sweep --wait` reported the point as having no finished run. Now the
// agent logs the spill file, records it with the job's attempt, and `sweep --wait` names
// it (file and host) in the point's line, exit 1.
func TestAgentSpillReported(t *testing.T) {
	needServer(t, "postgres")
	t.Parallel()
	in := startStorePostgres(t)
	dir := t.TempDir()
	spillDir := filepath.Join(dir, "spill")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dsnFile := filepath.Join(dir, "store.dsn")
	if err := os.WriteFile(dsnFile, []byte(in.DSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cliEnv := map[string]string{"DBPERF_RESULTS": "@" + dsnFile}
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
	log := &syncBuffer{}
	agent := exec.Command(buildBinary(t), "agent", "--class", "spill", "--lease", "30s", "--heartbeat", "1s")
	agent.Env = append(os.Environ(), "DBPERF_RESULTS=@"+dsnFile, "TMPDIR="+dir, "DBPERF_SPILL_DIR="+spillDir)
	agent.Stdout, agent.Stderr = log, log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	}()
	if code, out, errs := runCLICtx(ctx, cliEnv, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
		"--steps", "l.i0,qp100", "--time", "4", "--scale", "tiny", "--rows", "2000", "--store-timeout", "2",
		"--label", "spill", "--queue", "--class", "spill"); code != 0 {
		t.Fatalf("enqueue the sweep: exit %d\n%s%s", code, out, errs)
	}
	// Once the first point's run is in qp100, stop the store until the command has
	// spilled (--store-timeout 2).
	for {
		if ctx.Err() != nil {
			t.Fatalf("no run reached qp100; agent log:\n%s", log)
		}
		id, err := st.LatestRunID(ctx)
		if err == nil && id > 0 {
			if rs, err := st.Results(ctx, []int64{id}); err == nil && len(rs) == 1 && len(rs[0].Steps) == 2 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	procs := processTree(in.PID())
	for _, p := range procs {
		_ = syscall.Kill(p, syscall.SIGSTOP)
	}
	var spills []string
	for len(spills) == 0 && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		spills, _ = filepath.Glob(filepath.Join(spillDir, "run-*.db"))
	}
	for _, p := range procs {
		_ = syscall.Kill(p, syscall.SIGCONT)
	}
	if len(spills) != 1 {
		t.Fatalf("spill files %v; agent log:\n%s", spills, log)
	}
	code, out, errs := runCLICtx(ctx, cliEnv, "sweep", "--label", "spill", "--wait", "--timeout", "2m")
	host, _ := os.Hostname()
	if code != ExitStepFailed || !strings.Contains(errs, "its results store failed and what it measured is in spill file "+spills[0]+" on "+host) {
		t.Errorf("sweep --wait: exit %d; want 1, naming the spill file %s on %s:\n%s%s", code, spills[0], host, out, errs)
	}
	if !strings.Contains(log.String(), ": its results store failed; what the run measured is in spill file "+spills[0]) {
		t.Errorf("the agent's log does not name the spill file %s in a line of its own:\n%s", spills[0], log)
	}
	t.Logf("sweep --wait: %s", strings.TrimSpace(errs))
}
