package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// Schema 5: a label's events (sysbench's transactions) are stored beside its statements,
// per step and per interval; labels stored by schema 4, which had no event count, read
// back with one event per statement.
func TestEventsAndSchema4Labels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations()[:4] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 4`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (workload, workload_version, engine, engine_version, engine_settings,
		label, seed, params, env, status, started_at, finished_at, pid, pid_start_ticks, boot_id)
		VALUES ('insertbench', 1, 'sqlite', '3', '{}', 'old', 1, '{}', '{}', 'ok', ?, ?, 1, 0, '')`,
		formatTime(t0), formatTime(t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO steps (run_id, seq, name, status, started_at, seconds, kind, primary_label, client_cpu_sec)
		VALUES (1, 0, 'qp100', 'ok', ?, 2, 'read-write', 'point-query', 0.5)`, formatTime(t0)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"step_labels (step_id, ord, ", "interval_labels (step_id, seq, ord, "} {
		vals := "1, 0, "
		if table[0] == 'i' {
			if _, err := db.Exec(`INSERT INTO intervals (step_id, seq, start_ns, end_ns, client_cpu_sec) VALUES (1, 0, 0, 1000000000, 0.1)`); err != nil {
				t.Fatal(err)
			}
			vals = "1, 0, 0, "
		}
		if _, err := db.Exec(`INSERT INTO ` + table + labelColumnsV1 + `) VALUES (` + vals +
			`'point-query', 'query', 'ops', 700, 7000, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0)`); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runID, err := s.BeginRun(ctx, testMeta("new"))
	if err != nil {
		t.Fatal(err)
	}
	ro := metrics.LabelStats{Label: "read-only", Role: "query", Unit: metrics.UnitOps, Statements: 1600, Events: 100, Rows: 1400}
	id, err := s.BeginStep(ctx, runID, 0, "read-only.range=10", "range-agg", t0)
	if err != nil {
		t.Fatal(err)
	}
	half := ro
	half.Statements, half.Events = 800, 50
	if err := s.AppendIntervals(ctx, id, []metrics.Interval{{Seq: 0, End: time.Second, Labels: []metrics.LabelStats{half}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, id, metrics.StepResult{Name: "read-only.range=10", Status: metrics.StatusOK, StartedAt: t0,
		Seconds: 2, Kind: "read", Primary: "read-only", Labels: []metrics.LabelStats{ro}}); err != nil {
		t.Fatal(err)
	}

	runs, err := s.Results(ctx, []int64{1, runID})
	if err != nil {
		t.Fatal(err)
	}
	old := runs[0].Steps[0]
	if l := old.Result.Labels[0]; l.Statements != 700 || l.Events != 700 {
		t.Errorf("a schema 4 step label reads back as %d statements, %d events", l.Statements, l.Events)
	}
	if l := old.Intervals[0].Labels[0]; l.Statements != 700 || l.Events != 700 {
		t.Errorf("a schema 4 interval label reads back as %d statements, %d events", l.Statements, l.Events)
	}
	st := runs[1].Steps[0]
	if l := st.Result.Labels[0]; l.Statements != 1600 || l.Events != 100 {
		t.Errorf("step label: %d statements, %d events", l.Statements, l.Events)
	}
	if l := st.Intervals[0].Labels[0]; l.Statements != 800 || l.Events != 50 {
		t.Errorf("interval label: %d statements, %d events", l.Statements, l.Events)
	}
}
