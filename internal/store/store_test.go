package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

func testMeta(label string) RunMeta {
	return RunMeta{
		Workload:        "insertbench",
		WorkloadVersion: 3,
		Engine:          "sqlite",
		EngineVersion:   "3.46.1",
		EngineSettings:  map[string]string{"journal_mode": "wal", "synchronous": "NORMAL"},
		Label:           label,
		Seed:            -42,
		Params:          map[string]any{"scale": "tiny", "clients": 2, "rows": 1000000, "delete": true},
		Env:             map[string]string{"cpu_model": "Test CPU", "cores": "8"},
		StartedAt:       t0,
	}
}

func lbl(name string, unit metrics.Unit, n int64, resp bool, target float64) metrics.LabelStats {
	l := metrics.LabelStats{
		Label: name, Role: strings.TrimPrefix(name, "point-"), Unit: unit,
		Statements: n, Rows: n * 10, Errors: 1, Late: 2, Missed: 3,
		Service:      metrics.Latency{P50: 100, P90: 200, P99: 300, P999: 400, P9999: 450, Max: 500 + n},
		TargetPerSec: target, Background: target > 0,
	}
	if resp {
		l.HasResponse = true
		l.Response = metrics.Latency{P50: 110, P90: 210, P99: 310, P999: 410, P9999: 460, Max: 510}
	}
	return l
}

func iv(seq int, labels ...metrics.LabelStats) metrics.Interval {
	return metrics.Interval{
		Seq: seq, Start: time.Duration(seq) * time.Second, End: time.Duration(seq+1)*time.Second + 7,
		Labels: labels, ClientCPUSec: 0.25 * float64(seq+1),
	}
}

func TestRoundTrip(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			meta := testMeta("base")
			meta.StepGroups = []StepGroup{{Name: "write", Title: "write (l.*)"}, {Name: "point", Title: "point (qp*)"}}
			runID, err := s.BeginRun(ctx, meta)
			if err != nil {
				t.Fatal(err)
			}

			load := metrics.StepResult{
				Name: "l.i0", Status: metrics.StatusOK, StartedAt: t0.Add(time.Second), Seconds: 2.000000007,
				Kind: "load", Primary: "insert",
				Labels:       []metrics.LabelStats{lbl("insert", metrics.UnitRows, 500, false, 0)},
				Audit:        metrics.Audit{Status: "ok", Detail: "rows 1000 = 1000 inserted - 0 deleted"},
				ClientCPUSec: 0.75,
			}
			loadIvs := []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 250, false, 0)), iv(1, lbl("insert", metrics.UnitRows, 250, false, 0))}
			loadIvs[1].Metrics = map[string]float64{metrics.MetricKVStallPct: 12.5, metrics.MetricKVL0Files: 0} // a 0 is kept
			// Labels deliberately not in alphabetical order: the stored order is kept.
			rw := metrics.StepResult{
				Name: "qp100", Status: metrics.StatusFailed, Error: "audit: 3 rows missing", StartedAt: t0.Add(5 * time.Second),
				Seconds: 3.5, Kind: "read-write", Primary: "point-query",
				Labels: []metrics.LabelStats{
					lbl("point-query", metrics.UnitOps, 9000, false, 0),
					lbl("insert", metrics.UnitRows, 300, true, 100),
					lbl("delete", metrics.UnitRows, 290, true, 100),
				},
				Audit:        metrics.Audit{Status: "failed", Detail: "3 rows missing"},
				ClientCPUSec: 1.5,
				Note:         "checkpoint took 0.2 s",
			}
			rwIvs := []metrics.Interval{
				iv(0, lbl("point-query", metrics.UnitOps, 3000, false, 0), lbl("insert", metrics.UnitRows, 100, true, 100), lbl("delete", metrics.UnitRows, 95, true, 100)),
				iv(1, lbl("point-query", metrics.UnitOps, 3000, false, 0), lbl("insert", metrics.UnitRows, 100, true, 100)),
				iv(2), // an interval without ops is kept too
			}

			id1, err := s.BeginStep(ctx, runID, 1, "l.i0", "write", load.StartedAt)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range loadIvs { // one call per tick, as the runner does
				if err := s.AppendIntervals(ctx, id1, []metrics.Interval{v}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.FinishStep(ctx, id1, load); err != nil {
				t.Fatal(err)
			}
			id2, err := s.BeginStep(ctx, runID, 2, "qp100", "point", rw.StartedAt)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.AppendIntervals(ctx, id2, rwIvs); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishStep(ctx, id2, rw); err != nil {
				t.Fatal(err)
			}
			finished := t0.Add(time.Minute)
			if err := s.FinishRun(ctx, runID, RunFailed, finished); err != nil {
				t.Fatal(err)
			}

			got, err := s.Results(ctx, []int64{runID})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d runs, want 1", len(got))
			}
			// Params come back from JSON with integers as json.Number; compare them as JSON.
			wantParams, _ := json.Marshal(meta.Params)
			gotParams, _ := json.Marshal(got[0].Params)
			if !bytes.Equal(wantParams, gotParams) {
				t.Errorf("params = %s, want %s", gotParams, wantParams)
			}
			if n, ok := got[0].Params["rows"].(json.Number); !ok || n.String() != "1000000" {
				t.Errorf("params[rows] = %#v, want json.Number 1000000", got[0].Params["rows"])
			}
			got[0].Params, meta.Params = nil, nil
			if len(got[0].Origin) != 32 {
				t.Errorf("origin %q, want 128 random bits in hex", got[0].Origin)
			}
			meta.Origin = got[0].Origin
			want := Run{
				ID: runID, RunMeta: meta, Status: RunFailed, FinishedAt: finished,
				Steps: []Step{
					{ID: id1, Seq: 1, Group: "write", Result: load, Intervals: loadIvs},
					{ID: id2, Seq: 2, Group: "point", Result: rw, Intervals: rwIvs},
				},
			}
			if !reflect.DeepEqual(got[0], want) {
				t.Errorf("round trip mismatch\n got: %+v\nwant: %+v", got[0], want)
			}

			sums, err := s.Runs(ctx, RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			wantSum := []RunSummary{{ID: runID, StartedAt: t0, Workload: "insertbench", Engine: "sqlite",
				EngineVersion: "3.46.1", Label: "base", Status: RunFailed, Steps: 2}}
			if !reflect.DeepEqual(sums, wantSum) {
				t.Errorf("Runs = %+v, want %+v", sums, wantSum)
			}
		})
	}
}

func TestAppendIntervalsIsAtomic(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	runID, err := s.BeginRun(ctx, testMeta(""))
	if err != nil {
		t.Fatal(err)
	}
	stepID, err := s.BeginStep(ctx, runID, 1, "l.i0", "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendIntervals(ctx, stepID, []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 1, false, 0))}); err != nil {
		t.Fatal(err)
	}
	// Interval 1 is new, interval 0 is a duplicate: the whole call must be rolled back.
	err = s.AppendIntervals(ctx, stepID, []metrics.Interval{iv(1), iv(0)})
	if err == nil || !strings.Contains(err.Error(), "append intervals for step") {
		t.Fatalf("duplicate interval: err = %v, want an append error", err)
	}
	runs, err := s.Results(ctx, []int64{runID})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(runs[0].Steps[0].Intervals); n != 1 {
		t.Errorf("%d intervals stored after a failed append, want 1", n)
	}
}

func TestWriterErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	runID, err := s.BeginRun(ctx, testMeta(""))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"finish unknown step", func() error {
			return s.FinishStep(ctx, 999, metrics.StepResult{Name: "x", Status: metrics.StatusOK})
		}, "finish step 999 (x): no such step"},
		{"finish step bad status", func() error {
			return s.FinishStep(ctx, 1, metrics.StepResult{Name: "x", Status: "running"})
		}, `status "running" is not ok`},
		{"finish unknown run", func() error { return s.FinishRun(ctx, 999, RunOK, t0) }, "finish run 999: no such run"},
		{"finish run bad status", func() error { return s.FinishRun(ctx, runID, RunRunning, t0) }, `status "running" is not ok`},
		{"step of unknown run", func() error { _, err := s.BeginStep(ctx, 999, 1, "x", "", t0); return err }, "begin step 1 (x) of run 999"},
		{"intervals of unknown step", func() error { return s.AppendIntervals(ctx, 999, []metrics.Interval{iv(0)}) }, "append intervals for step 999"},
		{"params not JSON", func() error {
			m := testMeta("")
			m.Params = map[string]any{"f": func() {}}
			_, err := s.BeginRun(ctx, m)
			return err
		}, "encode params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrationsFromEmptyFile(t *testing.T) {
	if n := len(migrations()); n != SchemaVersion {
		t.Fatalf("len(migrations()) = %d, SchemaVersion = %d", n, SchemaVersion)
	}
	ctx := context.Background()
	// An empty file (e.g. touched by a script) is an SQLite database at version 0: a run
	// writes the schema into it (a reader does not: TestOpenExistingLeavesAnEmptyFile).
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open(empty file): %v", err)
	}
	if _, err := s.BeginRun(ctx, testMeta("x")); err != nil {
		t.Errorf("BeginRun after migration: %v", err)
	}
	var journal string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&journal); err != nil || journal != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", journal, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, path); v != SchemaVersion {
		t.Errorf("user_version = %d, want %d", v, SchemaVersion)
	}
	// Opening again migrates nothing and keeps the data.
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if runs, err := s.Runs(ctx, RunFilter{}); err != nil || len(runs) != 1 {
		t.Errorf("after reopen: %d runs, err %v; want 1", len(runs), err)
	}
}

// TestOpenExistingLeavesAnEmptyFile: `dbperf runs`, `report` and `serve` (OpenExisting) on
// an existing empty file say there is no store in it and leave it empty, with no WAL
// files beside it (issue 23: they wrote the schema into it).
func TestOpenExistingLeavesAnEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenExisting(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("OpenExisting(empty file): no error")
	}
	if !strings.Contains(err.Error(), "no results store in "+path+": the file is empty") {
		t.Errorf("err = %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written: %v, %d bytes", err, fi.Size())
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%s was created", path, suffix)
		}
	}
}

func TestSchemaTooNew(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	// Leave the file in rollback-journal mode: switching it to WAL would be a change too.
	if _, err := db.Exec(`PRAGMA journal_mode = DELETE`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opens := map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenExisting": OpenExisting}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			s, err := open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("no error for a file with a newer schema")
			}
			var tooNew *SchemaTooNewError
			if !errors.As(err, &tooNew) {
				t.Fatalf("err = %v (%T), want *SchemaTooNewError", err, err)
			}
			want := SchemaTooNewError{Path: path, FileVersion: SchemaVersion + 1, KnownVersion: SchemaVersion}
			if *tooNew != want {
				t.Errorf("err = %+v, want %+v", *tooNew, want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("has schema version %d but this dbperf knows up to %d: upgrade dbperf", SchemaVersion+1, SchemaVersion)) {
				t.Errorf("message = %q", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the file was modified")
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("not a database\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	missingDir := filepath.Join(dir, "nope", "r.db")
	tests := []struct {
		name       string
		open       func(context.Context, string) (*Store, error)
		path       string
		want       string
		mustNotExi string
	}{
		{"OpenExisting missing file", OpenExisting, filepath.Join(dir, "missing.db"),
			"no results store at " + filepath.Join(dir, "missing.db") + `: run "dbperf run" first or pass --results / DBPERF_RESULTS`,
			filepath.Join(dir, "missing.db")},
		{"Open in missing directory", Open, missingDir,
			"results store " + missingDir + ": directory " + filepath.Join(dir, "nope") + " does not exist: create it or pass another --results",
			filepath.Join(dir, "nope")},
		{"Open a directory", Open, dir, "is a directory", ""},
		{"OpenExisting a directory", OpenExisting, dir, "is a directory", ""},
		{"Open foreign SQLite", Open, foreign, "is an SQLite database but not a dbperf results store", ""},
		{"Open a text file", Open, notDB, "read schema version", ""},
		{"Open empty path", Open, "", "empty path", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.open(ctx, tt.path)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if tt.mustNotExi != "" {
				if _, err := os.Stat(tt.mustNotExi); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created", tt.mustNotExi)
				}
			}
		})
	}
}

func TestOpenReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write anywhere")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), filepath.Join(dir, "r.db"))
	if err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Errorf("err = %v, want a not-writable error", err)
	}
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestLiveness(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	self := selfIdentity()
	if self.StartTicks == 0 || self.BootID == "" {
		t.Fatalf("selfIdentity() = %+v, want start ticks and boot id", self)
	}
	tests := []struct {
		name     string
		proc     procIdentity
		wantRun  string
		wantStep metrics.Status
	}{
		{"live process", self, RunRunning, stepRunning},
		{"dead pid", procIdentity{deadPID(t), self.StartTicks, self.BootID}, RunInterrupted, metrics.StatusInterrupted},
		{"pid reused by another process", procIdentity{self.PID, self.StartTicks + 1, self.BootID}, RunInterrupted, metrics.StatusInterrupted},
		{"other boot", procIdentity{self.PID, self.StartTicks, "00000000-0000-0000-0000-000000000000"}, RunInterrupted, metrics.StatusInterrupted},
		{"start time unknown, pid alive", procIdentity{self.PID, 0, ""}, RunRunning, stepRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := openTemp(t)
			runID, err := s.BeginRun(ctx, testMeta(""))
			if err != nil {
				t.Fatal(err)
			}
			stepID, err := s.BeginStep(ctx, runID, 1, "qp100", "", t0)
			if err != nil {
				t.Fatal(err)
			}
			ivs := []metrics.Interval{iv(0, lbl("insert", metrics.UnitRows, 5, true, 10)), iv(1, lbl("insert", metrics.UnitRows, 6, true, 10))}
			if err := s.AppendIntervals(ctx, stepID, ivs); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.Exec(`UPDATE runs SET pid = ?, pid_start_ticks = ?, boot_id = ? WHERE id = ?`,
				tt.proc.PID, tt.proc.StartTicks, tt.proc.BootID, runID); err != nil {
				t.Fatal(err)
			}
			sums, err := s.Runs(ctx, RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if sums[0].Status != tt.wantRun {
				t.Errorf("Runs status = %q, want %q", sums[0].Status, tt.wantRun)
			}
			runs, err := s.Results(ctx, []int64{runID})
			if err != nil {
				t.Fatal(err)
			}
			r := runs[0]
			if r.Status != tt.wantRun {
				t.Errorf("Results status = %q, want %q", r.Status, tt.wantRun)
			}
			st := r.Steps[0]
			if st.Result.Status != tt.wantStep || st.Result.Name != "qp100" {
				t.Errorf("step = %q %q, want qp100 %q", st.Result.Name, st.Result.Status, tt.wantStep)
			}
			if !reflect.DeepEqual(st.Intervals, ivs) {
				t.Errorf("intervals not kept: %+v", st.Intervals)
			}
			wantSecs := 0.0
			if tt.wantStep == metrics.StatusInterrupted {
				wantSecs = ivs[1].End.Seconds()
			}
			if st.Result.Seconds != wantSecs {
				t.Errorf("step seconds = %v, want %v", st.Result.Seconds, wantSecs)
			}
		})
	}
}

func TestFinishedRunWithUnfinishedStep(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			runID, err := s.BeginRun(ctx, testMeta(""))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.BeginStep(ctx, runID, 1, "l.i0", "", t0); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishRun(ctx, runID, RunInterrupted, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			runs, err := s.Results(ctx, []int64{runID})
			if err != nil {
				t.Fatal(err)
			}
			if got := runs[0].Steps[0].Result.Status; got != metrics.StatusInterrupted {
				t.Errorf("step status = %q, want interrupted", got)
			}
		})
	}
}

// seed stores runs with the given labels (ids 1, 2, …) and returns their ids.
func seed(t *testing.T, s *Store, labels ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, l := range labels {
		id, err := s.BeginRun(context.Background(), testMeta(l))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestResolveRuns(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			seed(t, s, "base", "new", "base", "7", "")
			tests := []struct {
				refs    []string
				want    []int64
				wantErr string
			}{
				{refs: []string{"2"}, want: []int64{2}},
				{refs: []string{"base"}, want: []int64{1, 3}},
				{refs: []string{"new", "base"}, want: []int64{2, 1, 3}},
				{refs: []string{"3", "base"}, want: []int64{3, 1}}, // no duplicates
				{refs: []string{"7"}, want: []int64{4}},            // not an id, but a label
				{refs: []string{"4"}, want: []int64{4}},
				{refs: nil, want: nil},
				{refs: []string{"42"}, wantErr: `run 42 not found: "dbperf runs" lists the stored runs`},
				{refs: []string{"1", "nightly"}, wantErr: `no run with id or label "nightly"`},
				{refs: []string{""}, wantErr: "empty run reference"},
			}
			for _, tt := range tests {
				t.Run(strings.Join(tt.refs, ","), func(t *testing.T) {
					got, err := s.ResolveRuns(context.Background(), tt.refs)
					if tt.wantErr != "" {
						if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
							t.Errorf("err = %v, want %q", err, tt.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("ResolveRuns(%q) = %v, want %v", tt.refs, got, tt.want)
					}
				})
			}
		})
	}
}

func TestRunsFilter(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			seed(t, s, "a", "b", "a", "a", "b")
			tests := []struct {
				f    RunFilter
				want []int64
			}{
				{RunFilter{}, []int64{1, 2, 3, 4, 5}},
				{RunFilter{Limit: 2}, []int64{4, 5}},
				{RunFilter{Label: "a"}, []int64{1, 3, 4}},
				{RunFilter{Label: "a", Limit: 2}, []int64{3, 4}},
				{RunFilter{Label: "zzz"}, nil},
			}
			for _, tt := range tests {
				got, err := s.Runs(context.Background(), tt.f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []int64
				for _, r := range got {
					ids = append(ids, r.ID)
				}
				if !slices.Equal(ids, tt.want) {
					t.Errorf("Runs(%+v) = %v, want %v", tt.f, ids, tt.want)
				}
			}
		})
	}
}

func TestResultsAndLatest(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			if _, err := s.LatestRunID(ctx); err == nil || !strings.Contains(err.Error(), "has no runs yet") {
				t.Errorf("LatestRunID on an empty store: err = %v", err)
			}
			seed(t, s, "a", "b", "c")
			if id, err := s.LatestRunID(ctx); err != nil || id != 3 {
				t.Errorf("LatestRunID = %d, %v; want 3", id, err)
			}
			runs, err := s.Results(ctx, []int64{3, 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 2 || runs[0].Label != "c" || runs[1].Label != "a" {
				t.Errorf("Results(3, 1) returned labels %v, want c, a in that order", []string{runs[0].Label, runs[1].Label})
			}
			_, err = s.Results(ctx, []int64{1, 42})
			if err == nil || err.Error() != `run 42 not found: "dbperf runs" lists the stored runs` {
				t.Errorf("Results(42): err = %v", err)
			}
		})
	}
}

// A second process (here: a second Store) reads while the first writes.
func TestReaderWhileWriting(t *testing.T) {
	ctx := context.Background()
	w, path := openTemp(t)
	r, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runID := seed(t, w, "x")[0]
	stepID, err := w.BeginStep(ctx, runID, 1, "l.i0", "", t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.AppendIntervals(ctx, stepID, []metrics.Interval{iv(i)}); err != nil {
			t.Fatal(err)
		}
		runs, err := r.Results(ctx, []int64{runID})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(runs[0].Steps[0].Intervals); n != i+1 {
			t.Errorf("reader sees %d intervals, want %d", n, i+1)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	rest := " 1 1 0 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 100"
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"plain", "123 (dbperf) S" + rest, procStat{'S', 987654}, false},
		{"spaces and parens in comm", "123 (a) b (c) Z" + rest, procStat{'Z', 987654}, false},
		{"no comm", "123 S" + rest, procStat{}, true},
		{"truncated", "123 (x) S 1 1", procStat{}, true},
		{"bad starttime", "123 (x) S 1 1 0 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 x", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.line))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseProcStat = %+v, %v; want %+v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestOpenNewStoreAtOnce: several processes' first use of one new results store at the
// same moment (two runs started together) all succeed: one creates the schema while the
// others wait, and none fails on the journal mode ("database is locked": SQLite does not
// wait through the busy timeout for that change, setWAL does).
func TestOpenNewStoreAtOnce(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("r%d.db", round))
		const n = 6
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(context.Background(), path)
				if err == nil {
					_, err = s.BeginRun(context.Background(), testMeta("at once"))
					s.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
