package store

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// TestImport: a run copied into another store reads back the same but for its ids, and
// copying it again adds nothing.
func TestImport(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			a := b.open(t)
			meta := testMeta("base")
			meta.Env["hostname"] = "elsewhere"
			meta.StepGroups = []StepGroup{{Name: "write", Title: "write"}}
			runID, err := a.BeginRun(ctx, meta)
			if err != nil {
				t.Fatal(err)
			}
			res := metrics.StepResult{Name: "l.i0", Status: metrics.StatusOK, StartedAt: t0.Add(time.Second), Seconds: 2,
				Kind: "load", Primary: "insert", Labels: []metrics.LabelStats{lbl("insert", metrics.UnitRows, 500, false, 0)},
				Audit: metrics.Audit{Status: "ok", Detail: "fine"}, ClientCPUSec: 0.75, DBSizeBytes: 4096, DBSizeKnown: true,
				Metrics: map[string]float64{"cpupq": 12.5}, ConnCPU: []metrics.ConnCPU{{Role: "insert", Sessions: 1, CPUSec: 0.5}}}
			ivs := []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 250, false, 0)), iv(1, lbl("insert", metrics.UnitRows, 250, false, 0))}
			ivs[1].Metrics = map[string]float64{metrics.MetricKVL0Files: 3}
			sid, err := a.BeginStep(ctx, runID, 1, "l.i0", "write", res.StartedAt)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.AppendIntervals(ctx, sid, ivs); err != nil {
				t.Fatal(err)
			}
			if err := a.FinishStep(ctx, sid, res); err != nil {
				t.Fatal(err)
			}
			if err := a.FinishRun(ctx, runID, RunOK, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			// A second run whose process died mid-step: no finish time, a step left running.
			died, err := a.BeginRun(ctx, testMeta("died"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.BeginStep(ctx, died, 1, "l.i0", "", t0); err != nil {
				t.Fatal(err)
			}
			if _, err := a.db.ExecContext(ctx, `UPDATE runs SET pid = 0 WHERE id = ?`, died); err != nil {
				t.Fatal(err)
			}
			src, err := a.Results(ctx, []int64{runID, died})
			if err != nil {
				t.Fatal(err)
			}

			b, err := Open(ctx, filepath.Join(t.TempDir(), "b.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := b.BeginRun(ctx, testMeta("b's own")); err != nil { // ids differ from a's
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range src {
				id, copied, err := b.Import(ctx, r)
				if err != nil || !copied {
					t.Fatalf("import run %d: id %d, copied %v, %v", r.ID, id, copied, err)
				}
				ids = append(ids, id)
			}
			got, err := b.Results(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				want := src[i]
				want.ID = got[i].ID
				for j := range want.Steps {
					want.Steps[j].ID = got[i].Steps[j].ID
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("run %d copied\n got: %+v\nwant: %+v", src[i].ID, got[i], want)
				}
			}
			for i, r := range src {
				id, copied, err := b.Import(ctx, r)
				if err != nil || copied || id != ids[i] {
					t.Errorf("import run %d again: id %d (first copy %d), copied %v, %v; want nothing added", r.ID, id, ids[i], copied, err)
				}
			}
			if sums, err := b.Runs(ctx, RunFilter{}); err != nil || len(sums) != 3 {
				t.Errorf("b has %d runs (%v), want its own and the 2 copied", len(sums), err)
			} else if sums[1].Host != "elsewhere" {
				t.Errorf("copied run's host %q, want the one it ran on", sums[1].Host)
			}
		})
	}
}

// checkSameRuns compares runs read back from two stores: the same but for their ids.
func checkSameRuns(t *testing.T, got, want []Run) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d runs, want %d", len(got), len(want))
	}
	for i := range got {
		w := want[i]
		w.ID = got[i].ID
		w.Steps = append([]Step(nil), w.Steps...)
		for j := range w.Steps {
			if j < len(got[i].Steps) {
				w.Steps[j].ID = got[i].Steps[j].ID
			}
		}
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("run %d\n got: %+v\nwant: %+v", want[i].ID, got[i], w)
		}
	}
}
