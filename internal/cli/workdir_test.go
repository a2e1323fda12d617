package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workdir"
)

// A work dir whose owner died (kill -9) is removed by `dbperf clean` (and by the next run),
// which says how much it freed; a dir whose owner lives, a kept dir (no owner file) and a
// dir of another name stay.
func TestCleanRemovesWorkDirsOfDeadProcesses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := store.SelfIdentity()
	deadID := self
	deadID.PID = dead.ProcessState.Pid()
	mk := func(name string, owner *store.ProcessIdentity, payload int) string {
		t.Helper()
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "data", "db"), make([]byte, payload), 0o644); err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			b, _ := json.Marshal(owner)
			if err := os.WriteFile(filepath.Join(d, workdir.OwnerFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := mk("dbperf-sqlite-111", &deadID, 3<<20)
	live := mk("dbperf-postgres-222", &self, 10)
	kept := mk("dbperf-sqlite-333", nil, 10)
	other := mk("mine-444", &deadID, 10)

	code, out, stderr := runCLI(t, nil, "clean", "--dry-run")
	if code != 0 || !strings.Contains(out, "would remove 1 work dirs") || !exists(gone) {
		t.Fatalf("clean --dry-run: exit %d %q %q", code, out, stderr)
	}
	code, out, stderr = runCLI(t, nil, "clean")
	if code != 0 || !strings.Contains(out, "removed 1 work dirs left by dbperf processes that died, 3.0 MiB: "+gone) {
		t.Fatalf("clean: exit %d %q %q", code, out, stderr)
	}
	if exists(gone) || !exists(live) || !exists(kept) || !exists(other) {
		t.Errorf("after clean: gone %v live %v kept %v other %v", exists(gone), exists(live), exists(kept), exists(other))
	}
	code, out, _ = runCLI(t, nil, "clean")
	if code != 0 || !strings.Contains(out, "no stale work dirs") {
		t.Errorf("second clean: exit %d %q", code, out)
	}
	// A run removes them too, before it starts, and makes its own owned dir.
	gone2 := mk("dbperf-sqlite-555", &deadID, 10)
	code, out, stderr = runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000",
		"--results", filepath.Join(tmp, "r.db"))
	if code != 0 || exists(gone2) || !strings.Contains(out, "removed 1 work dirs") {
		t.Errorf("run: exit %d, stale dir left %v: %s %s", code, exists(gone2), out, stderr)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A --workdir is locked while a run uses it: a second run on it is refused (exit 2),
// naming the holder, before it touches the first one's tables; after the first, it runs.
func TestWorkDirLocked(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(t.TempDir(), "r.db")
	unlock, err := workdir.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000", "--workdir", dir,
		"--results", results, "--quiet"}
	code, _, stderr := runCLI(t, nil, args...)
	if code != ExitBadInput || !strings.Contains(stderr, "is in use by another dbperf run (pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second run on a locked --workdir: exit %d, %q", code, stderr)
	}
	unlock()
	if code, _, stderr := runCLI(t, nil, args...); code != 0 {
		t.Errorf("run after the lock was released: exit %d, %s", code, stderr)
	}
}
