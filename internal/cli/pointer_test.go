package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/profile"
)

// TestSweepPointerRuns is issue 38's acceptance of the pointer line: a sweep of two points
// (c pauses 200 µs between operations, so qp100 is much slower) recorded with --cpu-profile
// ends its report with "why: dbperf explain …"; that command, run as printed, exits 0. The
// sweep names its points "a" and "c" while it stores their runs as "sw/a" and "sw/c": the
// pointer must name the stored labels. Embedded SQLite, four repeats (the least that gives
// a verdict), about 20 s (40 s when measured again).
func TestSweepPointerRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep of eight runs")
	}
	if err := profile.Available(context.Background()); err != nil {
		t.Skipf("perf unavailable: %v", err)
	}
	// Its assertions are on what the runs store and print, not on rates: beside the other
	// parallel tests (docs/development.md).
	t.Parallel()
	tmp := t.TempDir()
	results := filepath.Join(tmp, "r.db")
	// sweep returns the qp100 pointer's command, "" when a run recorded no profile of the
	// step (a second of it at perf's 99 Hz on a loaded machine may get no sample).
	sweep := func(label string) string {
		code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--design", "sequential",
			"--profiles", "a=default,c=default", "--think", "c=200us", "--scale", "tiny", "--rows", "5000", "--steps", "l.i0,qp100",
			"--time", "1", "--repeat", "4", "--cpu-profile", filepath.Join(tmp, label), "--label", label, "--results", results)
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if _, c, ok := strings.Cut(l, "why: dbperf "); ok && strings.HasPrefix(l, "qp100 ") {
				return c
			}
		}
		t.Logf("no pointer line for qp100 with a recording in sweep %s's report:\n%s", label, out)
		return ""
	}
	cmd := sweep("sw")
	if cmd == "" {
		if cmd = sweep("sw2"); cmd == "" {
			t.Fatal("twice no pointer line for qp100 with a recording")
		}
	}
	args := append(strings.Fields(cmd), "--results", results)
	code, got, stderr := runCLI(t, nil, args...)
	if code != 0 || !strings.Contains(got, "step qp100") {
		t.Errorf("dbperf %s: exit %d: %s\n%s", cmd, code, stderr, got)
	}
	t.Logf("why: dbperf %s → exit %d", cmd, code)
}
