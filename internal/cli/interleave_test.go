package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepLoadOnceSQLite: with --load-once the first block runs every step on every
// point, the later blocks the steady step alone on the data it left (audited), every run
// stores load_once, the query step pairs over all blocks, and the report decomposes its
// ratio's noise.
func TestSweepLoadOnceSQLite(t *testing.T) {
	t.Parallel()
	results := filepath.Join(t.TempDir(), "r.db")
	const blocks = 3
	code, out, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
		"--scale", "tiny", "--rows", "5000", "--steps", "l.i0,qp100", "--time", "2", "--slice", "1",
		"--repeat", fmt.Sprint(blocks), "--load-once", "--settle", "--label", "lo", "--results", results)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s\n%s", code, stderr, out)
	}
	// --settle: every block on kept data (2 and 3) begins with each point's cleanup.
	if n := strings.Count(out, "settled "); n != 2*(blocks-1) || !strings.Contains(out, "settled a: wal_checkpoint(TRUNCATE)") {
		t.Errorf("%d settled lines, want %d:\n%s", n, 2*(blocks-1), out)
	}
	for _, want := range []string{"block 3 of 3", "Where each ratio's noise comes from", "noise of b vs a, throughput:"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, out)
		}
	}
	rep := reportJSON(t, results, "lo/a", "lo/b")
	loads := map[string]int{}
	queries := 0
	for _, r := range rep.Runs {
		if r.Status != "ok" || r.Params["load_once"] != true {
			t.Errorf("run %d: status %s, params %v", r.ID, r.Status, r.Params)
		}
		if settled := r.Params["settle"] == true; settled != (fmt.Sprint(r.Params["block"]) != "1") {
			t.Errorf("run %d of block %v: settle %v", r.ID, r.Params["block"], r.Params["settle"])
		}
		for _, s := range r.Steps {
			switch s.Name {
			case "l.i0":
				loads[fmt.Sprint(r.Params["trial"])]++
			case "qp100":
				queries++
				if s.Status != "ok" || s.Audit.Status != "ok" {
					t.Errorf("run %d qp100: status %s, audit %+v", r.ID, s.Status, s.Audit)
				}
			}
		}
	}
	if len(loads) != 1 || loads["b1/s1"] != 2 {
		t.Errorf("l.i0 ran in trials %v, want b1/s1 on both points only", loads)
	}
	if want := 2 * blocks * 2; queries != want {
		t.Errorf("%d qp100 slices stored, want %d (2 points × %d blocks × 2 slices)", queries, want, blocks)
	}
	if code, _, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
		"--design", "sequential", "--load-once", "--results", results); code != 2 || !strings.Contains(stderr, "--load-once") {
		t.Errorf("--load-once with --design sequential: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "sweep", "insertbench", "--engine", "sqlite", "--profiles", "a=default,b=default",
		"--settle", "--results", results); code != 2 || !strings.Contains(stderr, "--settle: only with --load-once") {
		t.Errorf("--settle without --load-once: exit %d, %s", code, stderr)
	}
}
