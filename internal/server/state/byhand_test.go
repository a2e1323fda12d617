package state

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/server/postgres"
)

// TestStartInStopIn: StartIn refuses a work dir whose server still runs, naming its pid;
// Status says running, died, or died with its pid reused; StopIn leaves a pid reused by
// another process alone but removes the files, and finds nothing started after that.
func TestStartInStopIn(t *testing.T) {
	t.Parallel()
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	pid := other.Process.Pid
	ticks, ok := StartTicks(pid)
	if !ok {
		t.Fatal("no start time for", pid)
	}
	srv, wd := postgres.Engine{}, t.TempDir()
	path := Path(wd, "postgres")
	st := Server{Engine: "postgres", PID: pid, Log: "pg.log", DSN: "postgres://u:xxxxx@localhost/db", StartTicks: ticks, BootID: BootID()}
	if err := Write(path, st); err != nil {
		t.Fatal(err)
	}
	_, err := StartIn(context.Background(), srv, Options{WorkDir: wd})
	var re *RunningError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "a postgres server started here is still running (pid ") {
		t.Fatalf("StartIn over a running server: %v", err)
	}
	if got := st.Status(); got != "running" {
		t.Errorf("Status = %q, want running", got)
	}
	st.StartTicks++
	if got := st.Status(); !strings.Contains(got, "is another process now; see pg.log") {
		t.Errorf("Status with the pid reused = %q", got)
	}
	if err := Write(path, st); err != nil {
		t.Fatal(err)
	}
	got, foreign, err := StopIn(wd, srv, false)
	if err != nil || !foreign || got.PID != pid {
		t.Fatalf("StopIn: %+v, foreign %v, %v; want pid %d left alone", got, foreign, err, pid)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left: %v", err)
	}
	if _, _, err := StopIn(wd, srv, false); !errors.Is(err, ErrNotStarted) {
		t.Errorf("StopIn with nothing started: %v, want ErrNotStarted", err)
	}
	if got := (Server{PID: 1 << 30, Log: "pg.log"}).Status(); got != "not running (it died; see pg.log)" {
		t.Errorf("Status of a dead server = %q", got)
	}
}
