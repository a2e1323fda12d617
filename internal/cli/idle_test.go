package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDeepIdle: --no-deep-idle is stored with the run, and a report refuses to compare
// it with a run made without it (a latency-bound step differs by the CPUs' wake-ups).
func TestNoDeepIdle(t *testing.T) {
	if os.Geteuid() != 0 {
		code, _, errs := runCLI(t, nil, "run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--no-deep-idle",
			"--results", filepath.Join(t.TempDir(), "r.db"))
		if code != ExitBadInput || !strings.Contains(errs, "--no-deep-idle") {
			t.Fatalf("not root: exit %d\n%s", code, errs)
		}
		return
	}
	t.Parallel()
	results := filepath.Join(t.TempDir(), "r.db")
	for _, label := range []string{"held", "free"} {
		args := []string{"run", "insertbench", "--scale", "tiny", "--steps", "l.i0", "--quiet", "--label", label, "--results", results}
		if label == "held" {
			args = append(args, "--no-deep-idle")
		}
		if code, out, errs := runCLI(t, nil, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", label, code, out, errs)
		}
	}
	code, _, errs := runCLI(t, nil, "report", "held", "free", "--results", results)
	if code != ExitBadInput || !strings.Contains(errs, "no_deep_idle") {
		t.Errorf("report of runs with and without --no-deep-idle: exit %d, want 2 naming no_deep_idle\n%s", code, errs)
	}
}
