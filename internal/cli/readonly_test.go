package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A store that cannot be written can still be read: `dbperf runs` and `dbperf report` by
// another user (the store and its directory belong to root, mode 0755/0644) and on a
// read-only mount work, and never write to it.
func TestReadOnlyStore(t *testing.T) {
	t.Parallel() // asserts file contents and messages
	if testing.Short() {
		t.Skip("builds dbperf and runs it as another user")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run dbperf as another user and to mount a read-only file system")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	dir, err := os.MkdirTemp("", "dbperf-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := binaryIn(t, dir)
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(store, "r.db")
	if code, _, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000",
		"--results", results, "--quiet"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	// A checkpoint folds the WAL into the file, as after any finished run's last close.
	before, _ := os.ReadFile(results)
	asNobody := func(args ...string) (string, error) {
		cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		cmd.Env = append(os.Environ(), "HOME=/nonexistent")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"runs", "--results", results}, {"report", "--results", results}} {
		out, err := asNobody(args...)
		if err != nil || !strings.Contains(out, "insertbench") {
			t.Errorf("%s as another user: %v\n%s", args[0], err, out)
		}
	}
	if after, _ := os.ReadFile(results); string(after) != string(before) {
		t.Error("reading the store as another user changed it")
	}

	// A read-only mount of the same directory.
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", "-o", "ro", store, ro).CombinedOutput(); err != nil {
		t.Logf("no read-only bind mount here (%v: %s): only the other user's case is checked", err, strings.TrimSpace(string(out)))
		return
	}
	t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	if err := os.WriteFile(filepath.Join(ro, "probe"), nil, 0o644); err == nil {
		t.Fatal("the bind mount is writable")
	}
	code, out, stderr := runCLI(t, nil, "runs", "--results", filepath.Join(ro, "r.db"))
	if code != 0 || !strings.Contains(out, "insertbench") {
		t.Errorf("runs on a read-only mount: exit %d %s %s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, nil, "report", "--results", filepath.Join(ro, "r.db"))
	if code != 0 || !strings.Contains(out, "l.i0") {
		t.Errorf("report on a read-only mount: exit %d %s %s", code, out, stderr)
	}
}
