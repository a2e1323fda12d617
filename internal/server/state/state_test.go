package state

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunningForeignPID: a state whose pid is now another process is not running (its
// start time differs, it ran in another boot, or a state without a start time whose
// process's command line names neither its data dir nor its dir); the same process
// recorded with its own start time is.
func TestRunningForeignPID(t *testing.T) {
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
	wd := t.TempDir()
	for _, tc := range []struct {
		name string
		st   Server
		want Liveness
	}{
		{"start time differs", Server{StartTicks: ticks + 1, BootID: BootID()}, PIDReused},
		{"another boot", Server{StartTicks: ticks, BootID: "not-this-boot"}, PIDReused},
		{"legacy state, cmdline without the data dir", Server{}, PIDReused},
		{"its own start time", Server{StartTicks: ticks, BootID: BootID()}, Alive},
		{"legacy state, cmdline naming the data dir", Server{Dir: "/nowhere", DataDir: "60"}, Alive}, // sleep 60
	} {
		st := tc.st
		st.PID = pid
		if st.Dir == "" {
			st.Dir, st.DataDir = filepath.Join(wd, "pg"), filepath.Join(wd, "pg", "data")
		}
		if got := st.Liveness(); got != tc.want {
			t.Errorf("%s: liveness %d, want %d", tc.name, got, tc.want)
		}
		if got := st.Running(); got != (tc.want == Alive) {
			t.Errorf("%s: running %v", tc.name, got)
		}
	}
	if got := (Server{PID: 1 << 30}).Liveness(); got != Died {
		t.Errorf("a pid no process has: liveness %d, want Died", got)
	}
}

// TestStopLeavesForeignPIDAlone: Stop does not signal a pid that is another process now
// and says so; Remove then removes the dir, the DSN file and the state file.
func TestStopLeavesForeignPIDAlone(t *testing.T) {
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	wd := t.TempDir()
	st := Server{Engine: "postgres", PID: other.Process.Pid, Dir: filepath.Join(wd, "pg"), DSNFile: DSNPath(wd, "postgres")}
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteDSNFile(st.DSNFile, "postgres://u:pw@localhost/db"); err != nil {
		t.Fatal(err)
	}
	path := Path(wd, "postgres")
	if err := Write(path, st); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || got != st {
		t.Fatalf("read back %+v, %v; want %+v", got, err, st)
	}
	foreign, err := got.Stop(nil) // a foreign pid never reaches the engine
	if err != nil || !foreign {
		t.Fatalf("stop: foreign %v, %v; want true", foreign, err)
	}
	// Alive: sleeping, or still running its start (R); a signal would leave it a zombie
	// (Z, until waited for) or stopped (T) within this pause.
	time.Sleep(100 * time.Millisecond)
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", st.PID)); !strings.Contains(string(b), ") S ") && !strings.Contains(string(b), ") R ") {
		t.Fatalf("stop signalled the unrelated process %d: %s", st.PID, b)
	}
	if err := got.Remove(path, false); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(wd); len(ents) > 0 {
		t.Errorf("left behind: %v", ents)
	}
	if _, err := Read(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read of a missing state: %v", err)
	}
}

// TestWriteDSNFile: the DSN file is its owner's only, also when a file of another mode
// was there.
func TestWriteDSNFile(t *testing.T) {
	p := DSNPath(t.TempDir(), "mariadb")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDSNFile(p, "dsn"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "dsn\n" {
		t.Errorf("content %q", b)
	}
}
