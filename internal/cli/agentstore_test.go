package cli

import (
	"context"
	"net/url"
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

// TestAgentFollowsStore (issue 40, LOW): an agent given --results @FILE whose store is
// stopped and another started on a new port with a new password, FILE rewritten (as
// "dbperf server start" rewrites its DSN file), registers with the new store within a
// bound and stops cleanly on SIGTERM. Before, it retried the old DSN once a second forever.
func TestAgentFollowsStore(t *testing.T) {
	t.Parallel()
	old := startStorePostgres(t)
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "store.dsn")
	writeDSN := func(dsn string) {
		t.Helper()
		tmp := dsnFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(dsn+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, dsnFile); err != nil {
			t.Fatal(err)
		}
	}
	writeDSN(old.DSN)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := buildBinary(t)
	log := &syncBuffer{}
	cmd := exec.Command(bin, "agent", "--results", "@"+dsnFile, "--class", "follow", "--lease", "2s", "--heartbeat", "500ms")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	registered := func(dsn string, within time.Duration) time.Duration {
		t.Helper()
		t0 := time.Now()
		for time.Since(t0) < within {
			select {
			case err := <-exited:
				t.Fatalf("the agent ended (%v):\n%s", err, log.String())
			case <-time.After(200 * time.Millisecond):
			}
			// dbperf's schema first, as every command opens it, then the queue's.
			st, err := store.Open(ctx, dsn)
			if err != nil {
				continue
			}
			st.Close()
			f, err := fleet.Open(ctx, dsn)
			if err != nil {
				continue
			}
			as, err := f.Agents(ctx)
			f.Close()
			for _, a := range as {
				if err == nil && a.Class == "follow" && a.State != "stopped" {
					return time.Since(t0)
				}
			}
		}
		t.Fatalf("no agent registered with the store within %v:\n%s", within, log.String())
		return 0
	}
	registered(old.DSN, time.Minute)

	if err := old.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	moved := startStorePostgres(t)
	if moved.DSN == old.DSN {
		t.Fatal("the second store has the first one's DSN")
	}
	writeDSN(moved.DSN)
	took := registered(moved.DSN, time.Minute)
	t.Logf("the agent registered with the moved store %v after its DSN file was rewritten", took.Round(time.Millisecond))
	if !strings.Contains(log.String(), "the results store moved: starting again on") {
		t.Errorf("the agent's log should say the store moved:\n%s", log.String())
	}
	if u, err := url.Parse(moved.DSN); err == nil {
		if pw, ok := u.User.Password(); ok && strings.Contains(log.String(), pw) {
			t.Errorf("the agent's log holds the store's password:\n%s", log.String())
		}
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the agent on SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent did not stop within 30 s of SIGTERM:\n%s", log.String())
	}
}
