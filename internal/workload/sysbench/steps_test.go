package sysbench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

// These tests run the suite's steps through the runner against real SQLite.

func openSQLite(t *testing.T) engine.SQL {
	t.Helper()
	h, err := sqlite.New().Open(context.Background(), engine.Target{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h.(engine.SQL)
}

type quiet struct{}

func (quiet) StepStarted(string, workload.Load) {}
func (quiet) Interval(string, metrics.Interval) {}

// run runs a step through the runner and fails the test unless it is ok.
func run(t *testing.T, h engine.SQL, s workload.Step) metrics.StepResult {
	t.Helper()
	res := (&runner.Runner{Handle: h, Interval: time.Second}).Run(context.Background(), s, quiet{})
	if res.Status != metrics.StatusOK {
		t.Fatalf("%s: %s: %s (audit %s)", s.Name(), res.Status, res.Error, res.Audit.Detail)
	}
	return res
}

func label(t *testing.T, res metrics.StepResult, name string) metrics.LabelStats {
	t.Helper()
	for _, l := range res.Labels {
		if l.Label == name {
			return l
		}
	}
	t.Fatalf("%s: no label %s in %+v", res.Name, name, res.Labels)
	return metrics.LabelStats{}
}

func exec(t *testing.T, h engine.SQL, q string) {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// The load fills every table, then a write test's statements are counted exactly: the
// data check passes; a write lost or doubled behind the benchmark's back fails the step's
// Verify with the numbers.
func TestDataCheckCatchesLostAndDoubledWrites(t *testing.T) {
	h := openSQLite(t)
	steps := workloadtest.Plan(t, New(), "--tests", "update-index,write-only,delete,insert", "--tables", "2", "--table-size", "1500",
		"--read-time", "0.3", "--write-time", "0.3", "--insert-time", "0.3")
	byName := map[string]workload.Step{}
	for _, s := range steps {
		byName[s.Name()] = s
	}
	res := run(t, h, byName["load"])
	if l := label(t, res, "insert"); l.Rows != 3000 || l.Statements != 4 { // 1000 + 500 rows per table
		t.Errorf("load: %d rows in %d statements", l.Rows, l.Statements)
	}
	if l := label(t, res, "index"); l.Rows != 3000 || l.Statements != 2 {
		t.Errorf("load: %d rows indexed in %d statements", l.Rows, l.Statements)
	}
	if !strings.Contains(res.Audit.Detail, "sbtest1: 1500 rows, sum(k)=") {
		t.Errorf("load's data check: %q", res.Audit.Detail)
	}
	for _, name := range []string{"update-index", "write-only", "delete", "insert"} {
		res := run(t, h, byName[name])
		l := label(t, res, name)
		if l.Events == 0 || l.Statements != l.Events*int64(map[string]int{"write-only": 6}[name]+map[bool]int{true: 1}[name != "write-only"]) {
			t.Errorf("%s: %d statements for %d events", name, l.Statements, l.Events)
		}
		if !strings.Contains(res.Audit.Detail, "sbtest2: ") {
			t.Errorf("%s: data check %q", name, res.Audit.Detail)
		}
	}
	ins := byName["insert"]
	for _, tc := range []struct{ tamper, undo, want string }{
		{"UPDATE sbtest2 SET k=k-1 WHERE id=(SELECT min(id) FROM sbtest2)", "UPDATE sbtest2 SET k=k+1 WHERE id=(SELECT min(id) FROM sbtest2)",
			"sysbench insert: data check sbtest2: sum(k)=%d but the statements' inserts, deletes and k=k+1 updates give %d (-1)"},
		{"INSERT INTO sbtest1 (k, c, pad) VALUES (5, 'x', 'y')", "",
			"sysbench insert: data check sbtest1: count(*)=%d but the statements' inserts and deletes leave %d rows (+1); sum(k)=%d but the statements' inserts, deletes and k=k+1 updates give %d (+5)"},
	} {
		exec(t, h, tc.tamper)
		_, err := ins.Verify(context.Background(), h)
		if err == nil {
			t.Fatalf("%s: the data check passed", tc.tamper)
		}
		// The numbers depend on the run; the shape and the difference do not.
		if !sameShape(err.Error(), tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.tamper, err, tc.want)
		}
		if tc.undo != "" {
			exec(t, h, tc.undo)
		}
	}
}

// sameShape compares a message with a format whose %d stand for any integer.
func sameShape(got, format string) bool {
	parts := strings.Split(format, "%d")
	for i, p := range parts {
		j := strings.Index(got, p)
		if j < 0 || (i == 0 && j != 0) {
			return false
		}
		got = got[j+len(p):]
		if i < len(parts)-1 {
			got = strings.TrimLeft(got, "-0123456789")
		}
	}
	return got == ""
}

// QPS and transactions: a read-only event is 16 statements, read-write 20; scan counts
// the rows it scanned; the events per second are stored beside.
func TestStatementsPerEvent(t *testing.T) {
	h := openSQLite(t)
	steps := workloadtest.Plan(t, New(), "--tests", "read-only,read-write,scan,point-query", "--table-size", "1000", "--range-size", "10",
		"--read-time", "0.3")
	want := map[string]int64{"read-only.range=10": 16, "read-write.range=10": 20, "point-query": 1}
	for _, s := range steps {
		res := run(t, h, s)
		ts, ok := s.(*testStep)
		if !ok {
			continue
		}
		l := label(t, res, ts.t.name)
		if l.Events < 10 {
			t.Fatalf("%s: %d events", s.Name(), l.Events)
		}
		if ts.t.kind == kScan {
			if l.Unit != metrics.UnitRows || l.Rows != l.Events*1000 || l.Count() != l.Rows {
				t.Errorf("scan: %d rows scanned in %d scans (unit %s)", l.Rows, l.Events, l.Unit)
			}
			continue
		}
		if n := want[s.Name()]; l.Statements != n*l.Events || l.Count() != l.Statements {
			t.Errorf("%s: %d statements for %d events, want %d each", s.Name(), l.Statements, l.Events, n)
		}
	}
}

// An event aborted by a conflict is rolled back and run again; the step stays ok, its
// note counts the retries and the data check still holds. Here another connection holds
// SQLite's write lock for a while and the tester's session waits for nobody
// (busy_timeout 0), so its writes fail with SQLITE_BUSY until the lock is released.
func TestConflictsAreRetried(t *testing.T) {
	h := openSQLite(t)
	steps := workloadtest.Plan(t, New(), "--tests", "write-only", "--table-size", "1000", "--read-time", "0.3")
	run(t, h, steps[0]) // load
	ts := steps[2].(*testStep)
	if ts.Name() != "write-only" {
		t.Fatalf("step %s", ts.Name())
	}
	ctx := context.Background()
	l, err := ts.Load(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	w := l.Groups[0].Workers[0]
	s := workloadtest.InitWorker(t, h, w)
	if _, err := s.Exec(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	holder, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		_, _ = holder.Exec(ctx, "COMMIT")
	}()
	if _, err := w.Op(ctx); err != nil {
		t.Fatalf("the event failed instead of being retried: %v", err)
	}
	if ts.retries.Load() == 0 || !strings.Contains(ts.Note(), "rolled back and run again") {
		t.Errorf("retries %d, note %q", ts.retries.Load(), ts.Note())
	}
	if _, err := ts.Verify(ctx, h); err != nil {
		t.Errorf("data check after retries: %v", err)
	}
}

// The workload allocates nothing per event: an event costs the driver's allocations for
// its statement and no more.
func TestNoAllocationsPerEvent(t *testing.T) {
	h := openSQLite(t)
	ctx := context.Background()
	steps := workloadtest.Plan(t, New(), "--tests", "point-query,update-index,update-zipf,read-only-count", "--table-size", "1000")
	run(t, h, steps[0])
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bare := func(q string, write bool, args *engine.Args) float64 {
		st, err := s.Prepare(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return testing.AllocsPerRun(200, func() {
			if write {
				_, err = st.Exec(ctx, args)
			} else {
				_, err = st.Query(ctx, args)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	d := h.Dialect()
	baseline := map[string]float64{
		"point-query":                bare(pointSQL(d, "sbtest1"), false, engine.NewArgs(5)),
		"update-index":               bare(updateIndexSQL(d, "sbtest1"), true, engine.NewArgs(5)),
		"update-zipf":                bare(updateNonIndexSQL(d, "sbtest1"), true, engine.NewArgs(strings.Repeat("1", 119), 5)),
		"read-only-count.range=1000": bare(betweenSQL(d, "sbtest1", "count(c)", "id", ""), false, engine.NewArgs(5, 1004)),
	}
	for _, step := range steps[2:] {
		l, err := step.Load(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		w := l.Groups[0].Workers[0]
		ws, err := h.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Init(ctx, ws); err != nil {
			t.Fatal(err)
		}
		_, _ = w.Op(ctx) // buffers grow once
		got := testing.AllocsPerRun(200, func() {
			if _, err := w.Op(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if want, ok := baseline[step.Name()]; !ok || got > want {
			t.Errorf("%s: %v allocations per event, the bare statement %v", step.Name(), got, want)
		}
		_ = w.Close()
		_ = ws.Close()
	}
}
