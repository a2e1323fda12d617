package workdir

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/store"
)

// A temporary dir is owned by this process unless kept; its release removes it, a kept
// one's does not.
func TestTemp(t *testing.T) {
	tmp := t.TempDir()
	dir, release, err := Temp(TempOptions{Engine: "sqlite", TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Match(filepath.Join(tmp, Pattern), dir); !m {
		t.Errorf("%s does not match %s", dir, Pattern)
	}
	var owner store.ProcessIdentity
	if b, err := os.ReadFile(filepath.Join(dir, OwnerFile)); err != nil || json.Unmarshal(b, &owner) != nil || owner.PID != os.Getpid() {
		t.Errorf("owner file: %v, pid %d", err, owner.PID)
	}
	if len(Stale(tmp)) != 0 {
		t.Error("a dir of a live process is stale")
	}
	release()
	if _, err := os.Stat(dir); err == nil {
		t.Error("release left the dir")
	}
	kept, release, err := Temp(TempOptions{Engine: "sqlite", TempDir: tmp, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(filepath.Join(kept, OwnerFile)); err == nil {
		t.Error("a kept dir has an owner file")
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("release removed a kept dir: %v", err)
	}
	var te *TempDirError
	if _, _, err := Temp(TempOptions{Engine: "sqlite", TempDir: filepath.Join(tmp, "missing")}); !errors.As(err, &te) {
		t.Errorf("a missing temporary dir: %v, want a *TempDirError", err)
	}
}

// RemoveStale removes the dirs of dead owners only, and with dryRun nothing.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
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
			if err := os.WriteFile(filepath.Join(d, OwnerFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := mk("dbperf-sqlite-111", &deadID, 3<<20)
	live := mk("dbperf-postgres-222", &self, 10)
	kept := mk("dbperf-sqlite-333", nil, 10)
	other := mk("mine-444", &deadID, 10)
	r := RemoveStale(tmp, true)
	if strings.Join(r.Paths, " ") != gone || len(r.Failed) != 0 || !exists(gone) {
		t.Fatalf("dry run: %+v, %s exists %v", r, gone, exists(gone))
	}
	r = RemoveStale(tmp, false)
	if strings.Join(r.Paths, " ") != gone || r.Bytes < 3<<20 || len(r.Failed) != 0 {
		t.Fatalf("removal: %+v", r)
	}
	if exists(gone) || !exists(live) || !exists(kept) || !exists(other) {
		t.Errorf("after removal: gone %v live %v kept %v other %v", exists(gone), exists(live), exists(kept), exists(other))
	}
	if r := RemoveStale(tmp, false); len(r.Paths) != 0 {
		t.Errorf("second removal: %+v", r)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A locked dir refuses a second lock naming the holder, until released.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Dir != dir || !strings.HasPrefix(inUse.Holder, "pid "+strconv.Itoa(os.Getpid())+" on ") {
		t.Fatalf("second lock: %v, want an *InUseError naming pid %d", err, os.Getpid())
	}
	unlock()
	again, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
	if _, err := Lock(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), ": lock it: ") {
		t.Errorf("lock of a missing dir: %v", err)
	}
}

// CheckWritable accepts a missing dir below a writable one without making it, and
// refuses a file or a path below a file.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "new", "profiles")); err != nil {
		t.Errorf("a missing dir under a writable one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the check made the missing dir")
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{file, "it is a file, not a directory: give a directory (made when missing)"},
		{filepath.Join(file, "x"), file + " is a file, not a directory: give a directory (made when missing)"},
	} {
		if err := CheckWritable(tc.dir); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.dir, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}
