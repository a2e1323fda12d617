package cli

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tmpfs mounts a small tmpfs of size bytes (root only) and returns its path.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file into dir until the file system has about leave bytes free.
func fill(t *testing.T, dir string, leave int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		var st syscallStatfs
		if err := statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if int64(st.Bavail)*int64(st.Bsize) <= leave {
			return
		}
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// A results store that fills up mid-run: the run exits 1 (a failed run, not bad input),
// says how much it kept, and the store stays consistent with every step finished before;
// a store that cannot even be created leaves no file behind.
func TestResultsStoreFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark into a full file system")
	}
	dir := tmpfs(t, "2m")
	results := filepath.Join(dir, "r.db")
	if code, _, stderr := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000",
		"--results", results, "--quiet"); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	fill(t, dir, 64<<10)
	spill := t.TempDir()
	code, _, stderr := runCLI(t, map[string]string{"DBPERF_SPILL_DIR": spill}, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0,l.x,qp100", "--rows", "2000",
		"--time", "5", "--report-interval", "0.05", "--results", results, "--quiet")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != ExitStepFailed || !strings.Contains(stderr, "results store failed") || !strings.Contains(stderr, "everything it measured is in "+spill) {
		t.Fatalf("run into a full store: exit %d, want %d, and a spill file in %s:\n%s", code, ExitStepFailed, spill, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(spill, "run-*.db")); len(files) != 1 {
		t.Errorf("spill files: %v", files)
	}
	t.Logf("%s", lines[len(lines)-1])
	db, err := sql.Open("sqlite3", "file:"+results+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
	var okSteps int
	if err := db.QueryRow("SELECT count(*) FROM steps WHERE run_id = 1 AND status = 'ok'").Scan(&okSteps); err != nil || okSteps != 1 {
		t.Errorf("the first run's step: %d %v", okSteps, err)
	}

	// Nothing left behind when the store cannot be created at all.
	full := tmpfs(t, "256k")
	fill(t, full, 0)
	other := filepath.Join(full, "new.db")
	code, _, stderr = runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--rows", "1000", "--results", other, "--quiet")
	if code != ExitBadInput {
		t.Errorf("a store on a full file system: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a store that could not be created was left behind: %v", err)
	}
}
