package insertbench

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/workloadtest"
)

func openSQLite(t *testing.T, dir string) engine.SQL {
	t.Helper()
	h, err := sqlite.New().Open(context.Background(), engine.Target{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h.(engine.SQL)
}

// stepRun is what driving one step produced.
type stepRun struct {
	ops   map[string]*atomic.Int64 // label → ops
	rows  map[string]*atomic.Int64 // label → rows
	audit string
}

// runStep drives a step roughly as the runner would: Prepare, Init every worker on its own
// session, Ready/Op until ErrDone (rate-limited groups on a simple schedule of start
// times), stop the other groups once the UntilDone groups are done (or after maxDur when
// the load has a Duration), Close, Verify.
func runStep(t *testing.T, h engine.SQL, s workload.Step, maxDur time.Duration) stepRun {
	t.Helper()
	ctx := context.Background()
	if err := s.Prepare(ctx, h); err != nil {
		t.Fatalf("%s prepare: %v", s.Name(), err)
	}
	l, err := s.Load(ctx, h)
	if err != nil {
		t.Fatalf("%s load: %v", s.Name(), err)
	}
	res := stepRun{ops: map[string]*atomic.Int64{}, rows: map[string]*atomic.Int64{}}
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	var all, untilDone sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, g := range l.Groups {
		ops, rows := &atomic.Int64{}, &atomic.Int64{}
		res.ops[g.Label], res.rows[g.Label] = ops, rows
		for _, w := range g.Workers {
			sess, err := h.NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Init(ctx, sess); err != nil {
				t.Fatalf("%s init: %v", s.Name(), err)
			}
			all.Add(1)
			if g.UntilDone {
				untilDone.Add(1)
			}
			go func() {
				defer all.Done()
				// After the worker and its session are closed: once every UntilDone worker
				// is done the step is stopped, which ends a server session at once.
				if g.UntilDone {
					defer untilDone.Done()
				}
				defer sess.Close()
				defer func() {
					if err := w.Close(); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}()
				start := time.Now()
				for i := 0; ; i++ {
					if g.Rate > 0 {
						next := start.Add(time.Duration(float64(i) / g.Rate * float64(time.Second)))
						select {
						case <-time.After(time.Until(next)):
						case <-stopCtx.Done():
							return
						}
					}
					err := w.Ready(stopCtx)
					var n int64
					if err == nil {
						n, err = w.Op(stopCtx)
					}
					switch {
					case errors.Is(err, workload.ErrDone):
						return
					case err != nil && stopCtx.Err() != nil:
						return // stopped
					case err != nil:
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					ops.Add(1)
					rows.Add(n)
				}
			}()
		}
	}
	if l.Duration > 0 {
		time.Sleep(min(l.Duration, maxDur))
	} else {
		untilDone.Wait()
	}
	stop()
	all.Wait()
	if len(errs) > 0 {
		t.Fatalf("%s: %v", s.Name(), errors.Join(errs...))
	}
	res.audit, err = s.Verify(ctx, h)
	if err != nil {
		t.Fatalf("%s audit: %v", s.Name(), err)
	}
	return res
}

func count(t *testing.T, h engine.SQL, q string) int64 {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, _, err := queryInt(context.Background(), s, q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The whole sequence on SQLite at small row counts: every step's audit passes, and the
// counts match the plan.
func TestStepsOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("drives every step on SQLite")
	}
	const clients = 2
	cfg := testConfig(t, clients)
	// l.i0: 1000 = 3×300 + a last batch of 100; l.i1: a quota that 70 does not divide.
	cfg.InsertBench.RowsPerCommit = map[string]int{"l.i0": 300, "l.i1": 70}
	cfg.InsertBench.Time = 500 * time.Millisecond
	cfg.InsertBench.CleanupWait = 0
	cfg.InsertBench.ResyncGetMin = 3
	h := openSQLite(t, t.TempDir())
	steps := mustPlan(t, cfg)
	p := steps[0].(*writeStep).p

	for _, s := range steps {
		start := time.Now()
		var before int64
		if s.Name() != "l.i0" {
			before = count(t, h, "SELECT count(*) FROM pi1")
		}
		r := runStep(t, h, s, time.Second)
		t.Logf("%s in %s: ops %v rows %v; audit: %s", s.Name(), time.Since(start).Round(time.Millisecond),
			snapshot(r.ops), snapshot(r.rows), r.audit)
		switch s.Name() {
		case "l.i0":
			if got := r.rows["insert"].Load(); got != clients*1000 {
				t.Errorf("l.i0 inserted %d rows, want %d", got, clients*1000)
			}
			if got := r.ops["insert"].Load(); got != clients*4 {
				t.Errorf("l.i0 ran %d inserts, want %d (3 of 300 rows and 1 of 100 per client)", got, clients*4)
			}
			if n := count(t, h, "SELECT count(*) FROM pi2"); n != 1000 {
				t.Errorf("pi2 has %d rows", n)
			}
		case "l.x":
			if got := r.rows["index"].Load(); got != clients*1000 {
				t.Errorf("l.x indexed %d rows, want %d", got, clients*1000)
			}
			if !strings.Contains(r.audit, "3 indexes agree") {
				t.Errorf("l.x audit did not check the indexes: %s", r.audit)
			}
			// The audit's count really scans each index, and the queries use them.
			for _, ix := range secondaryIndexes("pi1") {
				checkPlan(t, h, countThroughSQL(h.Dialect(), "pi1", ix), "USING COVERING INDEX "+ix.Name)
			}
			for k := range rangeKinds {
				checkPlan(t, h, rangeSQL(h.Dialect(), "pi1", k, 10), "USING COVERING INDEX pi1_")
			}
		case "l.i1", "l.i2":
			want := writeQuota(s.Name(), cfg.InsertBench.Rows2)
			if got := r.rows["insert"].Load(); got != clients*want {
				t.Errorf("%s inserted %d rows, want %d", s.Name(), got, clients*want)
			}
			// The table is a queue of constant size: the deleter removes what was inserted.
			if del := r.rows["delete"].Load(); del != clients*want {
				t.Errorf("%s deleted %d rows, want %d", s.Name(), del, clients*want)
			}
			if after := count(t, h, "SELECT count(*) FROM pi1"); after != before {
				t.Errorf("%s changed pi1 from %d to %d rows", s.Name(), before, after)
			}
		case "cleanup":
			note := s.(workload.Noter).Note()
			if !strings.HasPrefix(note, "wal_checkpoint(TRUNCATE): busy=0") {
				t.Errorf("cleanup note %q", note)
			}
		default:
			q := labelRangeQuery
			if strings.HasPrefix(s.Name(), "qp") {
				q = labelPointQuery
			}
			if r.ops[q].Load() == 0 || r.ops["insert"].Load() == 0 {
				t.Errorf("%s: ops %v", s.Name(), snapshot(r.ops))
			}
			// Up to 10 rows each: fewer near the top of a range (register > 999 finds none).
			if n, rows := r.ops[q].Load(), r.rows[q].Load(); q == labelRangeQuery && (rows > 10*n || rows < 9*n) {
				t.Errorf("%s: %d range queries fetched %d rows", s.Name(), n, rows)
			}
			if q == labelPointQuery && r.rows[q].Load() == 0 {
				t.Errorf("%s: point queries found nothing", s.Name())
			}
		}
	}
	for _, c := range p.clients {
		if c.inserted.Load() <= 1000 || c.deleted.Load() == 0 || c.minEst.Load() <= 1 {
			t.Errorf("client %d: inserted %d deleted %d estimate %d", c.id, c.inserted.Load(), c.deleted.Load(), c.minEst.Load())
		}
	}

	// A later run on the same database without l.i0 takes the tables as they are: the
	// baseline is counted at its first step and the indexes are found.
	cfg2 := testConfig(t, clients, "l.i2", "qp100")
	cfg2.InsertBench.Time = 200 * time.Millisecond
	steps2 := mustPlan(t, cfg2)
	for _, s := range steps2 {
		r := runStep(t, h, s, time.Second)
		if !strings.Contains(r.audit, "3 indexes agree") {
			t.Errorf("%s (second run) audit: %s", s.Name(), r.audit)
		}
	}
	p2 := steps2[0].(*writeStep).p
	if b := p2.clients[0].baseline.Load(); b != count(t, h, "SELECT count(*) FROM pi1")-p2.clients[0].inserted.Load()+p2.clients[0].deleted.Load() || b == 0 {
		t.Errorf("baseline %d", b)
	}
}

// checkPlan checks that SQLite's plan for q mentions want.
func checkPlan(t *testing.T, h engine.SQL, q, want string) {
	t.Helper()
	info, err := h.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", info.Settings["path"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if !strings.Contains(strings.Join(plan, "; "), want) {
		t.Errorf("plan of %s: %q, want %q", q, plan, want)
	}
}

func snapshot(m map[string]*atomic.Int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[k] = v.Load()
	}
	return out
}

// The deleter never overtakes the inserter, and a closed-loop inserter stays within
// maxInsertLead batches of the deleter.
func TestDeleterWaitsForInserter(t *testing.T) {
	h := openSQLite(t, t.TempDir())
	cfg := testConfig(t, 1, "l.i0", "l.i1")
	cfg.InsertBench.Rows, cfg.InsertBench.Rows2 = 10, 100_000
	steps := mustPlan(t, cfg)
	runStep(t, h, steps[0], time.Second)

	ctx := context.Background()
	l, err := steps[1].Load(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	ins, del := l.Groups[0].Workers[0].(*inserter), l.Groups[1].Workers[0].(*deleter)
	for _, w := range []workload.Worker{ins, del} {
		workloadtest.InitWorker(t, h, w)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := del.Ready(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deleter Ready before any insert: %v", err)
	}
	// One batch in: the deleter may go.
	if err := ins.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Op(ctx); err != nil {
		t.Fatal(err)
	}
	if err := del.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := del.Op(ctx); err != nil || n != 50 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	// The deleter's first delete removed the 10 rows of l.i0 plus 40 of the batch.
	if est := del.c.minEst.Load(); est != 51 {
		t.Errorf("estimate %d after deleting ids 1..50", est)
	}
	// The inserter may run maxInsertLead batches ahead, then waits.
	for range maxInsertLead {
		if err := ins.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ins.Op(ctx); err != nil {
			t.Fatal(err)
		}
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if err := ins.Ready(short2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("inserter Ready %d batches ahead: %v", maxInsertLead, err)
	}
	woke := make(chan error, 1)
	go func() { woke <- ins.Ready(ctx) }()
	if err := del.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := del.Op(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("inserter not woken by the delete")
	}
}

// auditFixture creates a table with the benchmark's columns, where transactionid is an
// ordinary column when unique is false, and inserts the given ids.
func auditFixture(t *testing.T, h engine.SQL, table string, unique bool, ids ...int64) engine.Session {
	t.Helper()
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	d := h.Dialect()
	cols := tableColumns(d)
	if !unique {
		cols[0] = "transactionid int NOT NULL"
	}
	for _, q := range d.CreateTable(table, cols) {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if _, err := s.Exec(ctx, "INSERT INTO "+table+" (transactionid, dateandtime, cashregisterid, customerid, productid, price, data)"+
			" VALUES (?, '2026-01-01 00:00:00', 1, 2, 3, 4, 'aaaaaaaxyz')", id); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// The audit catches a corrupted table, naming the table and the numbers.
func TestAuditCatchesCorruption(t *testing.T) {
	h := openSQLite(t, t.TempDir())
	ctx := context.Background()
	d := h.Dialect()
	tests := []struct {
		name   string
		unique bool
		ids    []int64
		exp    expectation
		want   string // "" = passes
	}{
		{"healthy", true, []int64{1, 2, 3}, expectation{Inserted: 3}, ""},
		{"healthy after deletes", true, []int64{5, 6, 7}, expectation{Baseline: 2, Inserted: 5, Deleted: 4, MinEstimate: 5}, ""},
		{"empty", true, nil, expectation{Inserted: 3, Deleted: 3, MinEstimate: 4}, ""},
		{"row deleted behind the benchmark's back", true, []int64{1, 2, 3}, expectation{Inserted: 4},
			"count(*)=3 but inserted−deleted=4 (inserted 4, deleted 0)"},
		{"with baseline", true, []int64{1, 2, 3}, expectation{Baseline: 10, Inserted: 4, Deleted: 10},
			"count(*)=3 but baseline+inserted−deleted=4 (baseline 10, inserted 4, deleted 10)"},
		{"duplicate id", false, []int64{1, 2, 3, 3}, expectation{Inserted: 4},
			"1 duplicate transactionid values (count(*)=4, count(DISTINCT transactionid)=3)"},
		{"gap", true, []int64{1, 2, 4}, expectation{Inserted: 3},
			"transactionid 1..4 spans 4 ids but count(*)=3: 1 ids missing (sqlite keys have no gaps)"},
		{"below the estimate", true, []int64{1, 2, 3}, expectation{Inserted: 3, MinEstimate: 2},
			"min(transactionid)=1 is below the deleter's estimate 2"},
		{"index disagrees", true, []int64{1, 2, 3}, expectation{Inserted: 3, Indexes: []engine.Index{
			{Name: "idx_missing_first", Columns: []string{"price"}},
		}}, "count(price) through idx_missing_first=2 but count(*)=3"},
	}
	for i, tc := range tests {
		table := "t" + strconv.Itoa(i)
		s := auditFixture(t, h, table, tc.unique, tc.ids...)
		sum, err := auditTable(ctx, s, lossyIndex{d}, table, tc.exp)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: audit passed: %s", tc.name, sum)
		case tc.want != "" && err.Error() != "audit "+table+": "+tc.want:
			t.Errorf("%s:\n got %q\nwant %q", tc.name, err, "audit "+table+": "+tc.want)
		}
	}
}

// A row deleted behind the benchmark's back fails the step's Verify with the numbers.
func TestVerifyFailsOnTamperedTable(t *testing.T) {
	h := openSQLite(t, t.TempDir())
	cfg := testConfig(t, 2, "l.i0")
	cfg.InsertBench.Rows = 100
	steps := mustPlan(t, cfg)
	runStep(t, h, steps[0], time.Second)
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(context.Background(), "DELETE FROM pi2 WHERE transactionid = 100"); err != nil {
		t.Fatal(err)
	}
	_, err = steps[0].Verify(context.Background(), h)
	want := "insertbench l.i0 client 2: audit pi2: count(*)=99 but inserted−deleted=100 (inserted 100, deleted 0); " +
		"contents: row 100 of the 100 that must remain is missing (l.i0's row 100 of 100, seed 42): the table ends at transactionid 99"
	if err == nil || err.Error() != want {
		t.Fatalf("Verify error:\n got %v\nwant %s", err, want)
	}
}

// Without an engine.Maintainer the cleanup step records that and succeeds.
func TestCleanupWithoutMaintainer(t *testing.T) {
	h := openSQLite(t, t.TempDir())
	cfg := testConfig(t, 1, "cleanup")
	steps := mustPlan(t, cfg)
	cs := steps[0].(*workload.CleanupStep)
	l, err := cs.Load(context.Background(), noMaintainer{h})
	if err != nil {
		t.Fatal(err)
	}
	w := l.Groups[0].Workers[0]
	if _, err := w.Op(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Op(context.Background()); !errors.Is(err, workload.ErrDone) {
		t.Fatalf("second Op: %v", err)
	}
	if !strings.Contains(cs.Note(), "has no writeback-debt cleanup") {
		t.Errorf("note %q", cs.Note())
	}
}

// lossyIndex is the SQLite dialect, except that reading "through" idx_missing_first
// misses the lowest id, as a corrupt index would (a real SQLite index cannot be made to
// disagree with its table).
type lossyIndex struct{ engine.Dialect }

func (d lossyIndex) FromIndex(table, index string) (string, bool) {
	if index == "idx_missing_first" {
		return "(SELECT * FROM " + table + " WHERE transactionid > (SELECT min(transactionid) FROM " + table + ")) lossy", true
	}
	return d.Dialect.FromIndex(table, index)
}

// noMaintainer hides the handle's Maintainer.
type noMaintainer struct{ engine.SQL }
