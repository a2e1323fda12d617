package store

import (
	"context"
	"errors"
	"fmt"
	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
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

// storeLocations are the two kinds of results store as a fresh location (a file path or a
// DSN), for tests that open one store more than once.
func storeLocations() []struct {
	name string
	loc  func(t *testing.T) string
} {
	return []struct {
		name string
		loc  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "results.db") }},
		{"postgres", func(t *testing.T) string { return pgDSN(t) }},
	}
}

func openAt(t *testing.T, loc string) *Store {
	t.Helper()
	s, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// writeRun writes a finished run of two steps of two intervals each into s.
func writeRun(t *testing.T, s *Store, meta RunMeta, status string) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.BeginRun(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	for seq, name := range []string{"l.i0", "qp100"} {
		start := meta.StartedAt.Add(time.Duration(seq) * 10 * time.Second)
		sid, err := s.BeginStep(ctx, id, seq+1, name, "", start)
		if err != nil {
			t.Fatal(err)
		}
		ivs := []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 100+int64(seq), false, 0)), iv(1, lbl("insert", metrics.UnitRows, 200, false, 0))}
		ivs[1].Metrics = map[string]float64{metrics.MetricKVL0Files: float64(seq)}
		if err := s.AppendIntervals(ctx, sid, ivs); err != nil {
			t.Fatal(err)
		}
		// The step's totals carry their histogram (schema 11), read back and copied whole.
		h := hdr.New(1, int64(time.Hour/time.Microsecond), 3)
		_ = h.RecordValue(100 + int64(seq))
		enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		total := lbl("insert", metrics.UnitRows, 300+int64(seq), false, 0)
		total.Hist = &metrics.LabelHist{Service: enc}
		res := metrics.StepResult{Name: name, Status: metrics.StatusOK, StartedAt: start, Seconds: 2, Kind: "load", Primary: "insert",
			Labels: []metrics.LabelStats{total}, ClientCPUSec: 0.5,
			Metrics: map[string]float64{"cpupq": 12.5}, ConnCPU: []metrics.ConnCPU{{Role: "insert", Sessions: 1, CPUSec: 0.25}}}
		if err := s.FinishStep(ctx, sid, res); err != nil {
			t.Fatal(err)
		}
	}
	if status != RunRunning {
		if err := s.FinishRun(ctx, id, status, meta.StartedAt.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// importWrites is how many writes Import makes for a run of writeRun: the run, three per
// step, the finish.
const importWrites = 1 + 2*3 + 1

// sourceRuns writes n finished runs labelled src-1… into a new SQLite store and reads them back.
func sourceRuns(t *testing.T, n int) []Run {
	t.Helper()
	src, _ := openTemp(t)
	var ids []int64
	for i := range n {
		meta := testMeta(fmt.Sprintf("src-%d", i+1))
		meta.StartedAt = t0.Add(time.Duration(i) * time.Hour)
		ids = append(ids, writeRun(t, src, meta, RunOK))
	}
	runs, err := src.Results(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// setImportHook sets importHook for the test.
func setImportHook(t *testing.T, hook func(ctx context.Context, writes int) error) {
	t.Helper()
	importHook = hook
	t.Cleanup(func() { importHook = nil })
}

// checkHolds checks that s holds exactly the runs want, once each, and that they read back
// as the source's.
func checkHolds(t *testing.T, s *Store, want []Run) {
	t.Helper()
	ctx := context.Background()
	sums, err := s.Runs(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(want) {
		t.Fatalf("the store holds %d runs %+v, want the source's %d", len(sums), sums, len(want))
	}
	var ids []int64
	for _, r := range want {
		got, err := s.ResolveRuns(ctx, []string{r.Label})
		if err != nil || len(got) != 1 {
			t.Fatalf("runs labelled %s: %v (%v), want exactly one", r.Label, got, err)
		}
		ids = append(ids, got[0])
	}
	got, err := s.Results(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	checkSameRuns(t, got, want)
}

// checkNoPartialRun checks that none of the readers of s sees a run labelled label, or more
// runs than n.
func checkNoPartialRun(ctx context.Context, s *Store, label string, n int) error {
	sums, err := s.Runs(ctx, RunFilter{})
	if err != nil {
		return err
	}
	if len(sums) != n {
		return fmt.Errorf("Runs lists %d runs, want %d: %+v", len(sums), n, sums)
	}
	if _, total, err := s.Browse(ctx, BrowseFilter{}); err != nil || total != n {
		return fmt.Errorf("Browse counts %d runs (%v), want %d", total, err, n)
	}
	if ids, err := s.ResolveRuns(ctx, []string{label}); err == nil {
		return fmt.Errorf("label %s resolves to %v mid-copy", label, ids)
	}
	labels, err := s.Distinct(ctx, "label")
	if err != nil {
		return err
	}
	if slices.Contains(labels, label) {
		return fmt.Errorf("the runs page offers label %s mid-copy", label)
	}
	return nil
}

// TestImportInterrupted: a copy that stops after k writes of a run (an error, or its
// context cancelled, as a killed copy stops) leaves nothing of that run, and copying
// again yields exactly the source's runs, reading back the same.
func TestImportInterrupted(t *testing.T) {
	src := sourceRuns(t, 3)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for k := 1; k <= importWrites; k++ {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				dst := b.open(t)
				if _, _, err := dst.Import(ctx, src[0]); err != nil {
					t.Fatal(err)
				}
				setImportHook(t, func(hctx context.Context, writes int) error {
					if writes < k {
						return nil
					}
					if k%2 == 0 {
						cancel() // the next statement fails
						return nil
					}
					return errors.New("killed")
				})
				if _, added, err := dst.Import(ctx, src[1]); err == nil || added {
					t.Fatalf("k=%d: import stopped after %d writes: added %v, %v; want an error", k, k, added, err)
				}
				importHook = nil
				if err := checkNoPartialRun(context.Background(), dst, src[1].Label, 1); err != nil {
					t.Fatalf("k=%d: after a copy stopped after %d writes: %v", k, k, err)
				}
				added := 0
				for _, r := range src {
					if _, ok, err := dst.Import(context.Background(), r); err != nil {
						t.Fatalf("k=%d: copy again: %v", k, err)
					} else if ok {
						added++
					}
				}
				if added != 2 {
					t.Errorf("k=%d: copying again added %d runs, want the 2 missing", k, added)
				}
				checkHolds(t, dst, src)
			}
		})
	}
}

// TestImportReadersSeeNoPartialRun: while a run is being copied, after each of its
// writes, readers of the store (the copying handle and another one) do not see it.
func TestImportReadersSeeNoPartialRun(t *testing.T) {
	src := sourceRuns(t, 2)
	for _, b := range storeLocations() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			loc := b.loc(t)
			dst := openAt(t, loc)
			if _, _, err := dst.Import(ctx, src[0]); err != nil {
				t.Fatal(err)
			}
			other, err := OpenExisting(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			seen := 0
			setImportHook(t, func(hctx context.Context, writes int) error {
				seen = writes
				for _, s := range []*Store{dst, other} {
					if err := checkNoPartialRun(hctx, s, src[1].Label, 1); err != nil {
						t.Errorf("after write %d of the copy: %v", writes, err)
					}
				}
				return nil
			})
			if _, added, err := dst.Import(ctx, src[1]); err != nil || !added {
				t.Fatalf("import: added %v, %v", added, err)
			}
			if seen != importWrites {
				t.Errorf("the hook saw %d writes, want %d", seen, importWrites)
			}
			checkHolds(t, other, src)
		})
	}
}

// TestImportConcurrent: copies of the same runs at once, through one store handle and
// through two, add each run exactly once.
func TestImportConcurrent(t *testing.T) {
	src := sourceRuns(t, 4)
	for _, b := range storeLocations() {
		t.Run(b.name, func(t *testing.T) {
			loc := b.loc(t)
			h1, h2 := openAt(t, loc), openAt(t, loc)
			handles := []*Store{h1, h1, h2, h2}
			var wg sync.WaitGroup
			start := make(chan struct{})
			added := make([]int, len(handles))
			errs := make([]error, len(handles))
			for i, h := range handles {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					runs := slices.Clone(src)
					if i%2 == 1 {
						slices.Reverse(runs)
					}
					for _, r := range runs {
						_, ok, err := h.Import(context.Background(), r)
						if err != nil {
							errs[i] = err
							return
						}
						if ok {
							added[i]++
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			total := 0
			for i := range handles {
				if errs[i] != nil {
					t.Fatalf("copy %d: %v", i+1, errs[i])
				}
				total += added[i]
			}
			if total != len(src) {
				t.Errorf("%d concurrent copies added %d runs in all (%v), want %d", len(handles), total, added, len(src))
			}
			checkHolds(t, h2, src)
		})
	}
}

// TestMigrateDuplicateOrigins: a store of schema 7 holding what copies made before schema 8
// (a half-copied run "pending:<origin>" and two complete copies of one run) migrates: the
// half run and the newer copy are deleted with everything under them, the oldest copy and
// every other run are kept, and the store holds one run per origin from then on.
func TestMigrateDuplicateOrigins(t *testing.T) {
	for _, b := range storeLocations() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			loc := b.loc(t)
			s := openAt(t, loc)
			// Schema 7's index, which let the same origin in twice.
			if _, err := s.db.ExecContext(ctx, `DROP INDEX runs_origin`); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, `CREATE INDEX runs_origin ON runs (origin)`); err != nil {
				t.Fatal(err)
			}
			meta := func(label, origin string) RunMeta {
				m := testMeta(label)
				m.Origin = origin
				return m
			}
			kept := writeRun(t, s, meta("copied", "o-1"), RunOK)
			writeRun(t, s, meta("copied", "pending:o-1"), RunRunning) // a copy killed half-way
			writeRun(t, s, meta("copied", "o-1"), RunOK)              // the copy made again
			writeRun(t, s, meta("copied", "o-1"), RunOK)              // and once more
			other := writeRun(t, s, meta("other", "o-2"), RunOK)
			want, err := s.Results(ctx, []int64{kept, other})
			if err != nil {
				t.Fatal(err)
			}
			withoutHists(want) // an older schema kept no histograms
			setVersion := `PRAGMA user_version = 7`
			if s.db.d == postgresDialect {
				setVersion = `UPDATE dbperf_schema SET version = 7`
			}
			// And schema 7 had none of the tables later versions added.
			for _, q := range []string{`DROP TABLE step_label_hists`, `DROP TABLE step_statements`, `DROP TABLE step_waits`, `DROP TABLE step_profiles`, setVersion} {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Close()

			m := openAt(t, loc)
			sums, err := m.Runs(ctx, RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != 2 || sums[0].ID != kept || sums[1].ID != other {
				t.Fatalf("after migration the store lists %+v, want runs %d and %d", sums, kept, other)
			}
			got, err := m.Results(ctx, []int64{kept, other})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the kept runs changed in migration\n got: %+v\nwant: %+v", got, want)
			}
			for _, orphans := range []string{
				`SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT id FROM runs)`,
				`SELECT count(*) FROM intervals WHERE step_id NOT IN (SELECT id FROM steps)`,
				`SELECT count(*) FROM interval_labels WHERE step_id NOT IN (SELECT id FROM steps)`,
				`SELECT count(*) FROM interval_metrics WHERE step_id NOT IN (SELECT id FROM steps)`,
				`SELECT count(*) FROM step_labels WHERE step_id NOT IN (SELECT id FROM steps)`,
				`SELECT count(*) FROM step_metrics WHERE step_id NOT IN (SELECT id FROM steps)`,
				`SELECT count(*) FROM step_conn_cpu WHERE step_id NOT IN (SELECT id FROM steps)`,
			} {
				var n int
				if err := m.db.QueryRowContext(ctx, orphans).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %d (%v), want 0", orphans, n, err)
				}
			}
			if _, err := m.BeginRun(ctx, meta("again", "o-1")); err == nil {
				t.Error("a second run of origin o-1 was stored after migration")
			}
		})
	}
}

// withoutHists clears the steps' label histograms (schema 11): how runs read back from a
// store migrated from an older schema, which kept none.
func withoutHists(runs []Run) {
	for i := range runs {
		for j := range runs[i].Steps {
			for k := range runs[i].Steps[j].Result.Labels {
				runs[i].Steps[j].Result.Labels[k].Hist = nil
			}
		}
	}
}
