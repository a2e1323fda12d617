package insertbench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// The content check and the stored expectations on SQLite (TestOnEveryEngine runs the same
// on the managed servers).
func TestAuditContentOnSQLite(t *testing.T) {
	auditScenario(t, openSQLite(t, t.TempDir()))
}

// Tables written by a dbperf without stored expectations (or another tool) are audited
// from their row count at the run's first step, and the audit says the contents were not
// checked and why.
func TestAuditWithoutStoredExpectations(t *testing.T) {
	h := openSQLite(t, t.TempDir())
	cfg := testConfig(t, 1, "l.i0")
	cfg.InsertBench.Rows = 100
	runStep(t, h, mustPlan(t, cfg)[0], time.Second)
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tbl := range []string{stateTable, segmentTable} {
		if _, err := s.Exec(context.Background(), h.Dialect().DropTable(tbl)); err != nil {
			t.Fatal(err)
		}
	}
	cfg = testConfig(t, 1, "l.i2")
	cfg.InsertBench.Rows2 = 50
	r := runStep(t, h, mustPlan(t, cfg)[0], time.Second)
	if want := "pi1: 100 rows, ids 11..110, contents unchecked (no stored expectations: the database has no dbperf_audit table (written by an older dbperf or another tool))"; r.audit != want {
		t.Errorf("audit:\n got %s\nwant %s", r.audit, want)
	}
}

// auditScenario drives the audit on one engine: run A (l.i0, l.i1: the table holds the
// last 100 rows of l.i0 and the 200 of l.i1) catches every kind of tampering with the
// column, the row and the generator's numbers named; later runs on the same data (l.i2
// only) audit against what run A stored, before their first step.
func auditScenario(t *testing.T, h engine.SQL) {
	// Chunks of 16 ids: the 300 rows span many, and PostgreSQL's key gaps (up to 999 ids
	// between steps) are wider than one.
	defer func(n int) { maxChunkRows = n }(maxChunkRows)
	maxChunkRows = 16
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	val := func(q string, args ...any) int64 {
		t.Helper()
		v, _, err := queryInt(ctx, s, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	ph := h.Dialect().Placeholder
	// idAt is the id of the n-th row (1-based) in id order.
	idAt := func(n int) int64 {
		return val(fmt.Sprintf("SELECT max(transactionid) FROM (SELECT transactionid FROM pi1 ORDER BY transactionid LIMIT %d) c", n))
	}

	cfg := testConfig(t, 1, "l.i0", "l.i1")
	cfg.InsertBench.Rows, cfg.InsertBench.Rows2 = 300, 250 // l.i1: 200 rows, 50 per statement
	steps := mustPlan(t, cfg)
	for _, st := range steps {
		if r := runStep(t, h, st, time.Second); !strings.Contains(r.audit, "pi1: 300 rows") || !strings.Contains(r.audit, "contents as generated") {
			t.Fatalf("%s audit: %s", st.Name(), r.audit)
		}
	}
	li1 := steps[1]

	// tamper changes row n and returns the row's id; the row is restored afterwards.
	tamper := func(n int, stmts ...string) (int64, func()) {
		t.Helper()
		id := idAt(n)
		exec(h.Dialect().DropTable("audit_saved"))
		exec("CREATE TABLE audit_saved AS SELECT * FROM pi1 WHERE transactionid = "+ph(1), id)
		for _, q := range stmts {
			exec(q, id)
		}
		return id, func() {
			exec("DELETE FROM pi1 WHERE transactionid = "+ph(1), id)
			exec("INSERT INTO pi1 SELECT * FROM audit_saved")
			exec(h.Dialect().DropTable("audit_saved"))
		}
	}
	where := " WHERE transactionid = " + ph(1)
	price := val("SELECT price FROM pi1 WHERE transactionid = "+ph(1), idAt(150))
	for _, tc := range []struct {
		name  string
		row   int
		stmts []string
		want  func(id int64) []string
	}{
		{"price", 150, []string{"UPDATE pi1 SET price = price + 1" + where}, func(id int64) []string {
			return []string{fmt.Sprintf("audit pi1: contents: transactionid %d (row 150 of the 300 that must remain, l.i1's row 50 of 200, seed 42) is not as generated: price=%d, generated %d",
				id, price+1, price)}
		}},
		{"two columns", 50, []string{"UPDATE pi1 SET cashregisterid = cashregisterid + 1, customerid = customerid + 2" + where}, func(id int64) []string {
			return []string{fmt.Sprintf("transactionid %d (row 50 of the 300 that must remain, l.i0's row 250 of 300, seed 42) is not as generated: cashregisterid=", id),
				", customerid="}
		}},
		{"productid", 300, []string{"UPDATE pi1 SET productid = productid + 7" + where}, func(id int64) []string {
			return []string{fmt.Sprintf("transactionid %d (row 300 of the 300", id), "productid="}
		}},
		{"data, same length", 1, []string{"UPDATE pi1 SET data = upper(data)" + where}, func(id int64) []string {
			return []string{fmt.Sprintf("transactionid %d (row 1 of the 300 that must remain, l.i0's row 201 of 300, seed 42) is not as generated: data differs (length ", id), ", generated \"aaaa"}
		}},
		{"data NULL", 2, []string{"UPDATE pi1 SET data = NULL" + where}, func(int64) []string {
			return []string{"is not as generated: data differs (NULL), generated"}
		}},
		{"dateandtime", 3, []string{"UPDATE pi1 SET dateandtime = '2031-01-01 00:00:00'" + where}, func(int64) []string {
			return []string{"is not as generated: dateandtime=2031-01-01 00:00:00, generated 2026-01-01 00:00:00"}
		}},
		{"dateandtime, +1 µs (where the type keeps it)", 4, []string{"UPDATE pi1 SET dateandtime = '2026-01-01 00:00:00.000001'" + where}, func(int64) []string {
			if h.Dialect().Name() == "mysql" {
				return nil // datetime keeps whole seconds: the value does not change
			}
			if h.Dialect().Name() == "sqlite" {
				return []string{"is not as generated: dateandtime differs as text (the same second), generated 2026-01-01 00:00:00"}
			}
			return []string{"is not as generated: dateandtime=2026-01-01 00:00:00.000001, generated 2026-01-01 00:00:00"}
		}},
		{"highest row deleted", 300, []string{"DELETE FROM pi1" + where}, func(id int64) []string {
			return []string{"count(*)=299 but inserted−deleted=300",
				"contents: row 300 of the 300 that must remain is missing (l.i1's row 200 of 200, seed 42): the table ends at transactionid "}
		}},
		{"row in the middle deleted", 150, []string{"DELETE FROM pi1" + where}, func(int64) []string {
			return []string{"count(*)=299 but inserted−deleted=300",
				fmt.Sprintf("contents: row 150 of the 300 that must remain is missing (l.i1's row 50 of 200, seed 42): transactionid %d holds the row after it", idAt(150))}
		}},
	} {
		id, restore := tamper(tc.row, tc.stmts...)
		want := tc.want(id)
		_, err := li1.Verify(ctx, h)
		restore()
		t.Logf("%s: %v", tc.name, err)
		if want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: the audit passed", tc.name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: audit error\n%v\nwithout %q", tc.name, err, w)
			}
		}
	}
	if sum, err := li1.Verify(ctx, h); err != nil || !strings.Contains(sum, "contents as generated") {
		t.Fatalf("after restoring every row: %s, %v", sum, err)
	}

	// A later run on the same data: its first step audits the table against what run A
	// stored, and its own audit continues from there.
	later := func() workload.Step {
		cfg := testConfig(t, 1, "l.i2")
		cfg.InsertBench.Rows2 = 250 // l.i2: 50 rows, 5 per statement
		return mustPlan(t, cfg)[0]
	}
	b := later()
	r := runStep(t, h, b, time.Second)
	if !strings.Contains(r.audit, "pi1: 300 rows") || !strings.Contains(r.audit, "contents as generated") {
		t.Errorf("run B's audit: %s", r.audit)
	}
	if c := b.(*writeStep).p.clients[0]; c.baseline.Load() != 300 || c.model == nil {
		t.Errorf("run B: baseline %d, model %v", c.baseline.Load(), c.model)
	}

	// Tampered between runs: the next run fails before its first step.
	id, restore := tamper(150, "UPDATE pi1 SET price = price + 1"+where)
	err = later().Prepare(ctx, h)
	restore()
	t.Logf("price changed between runs: %v", err)
	if err == nil || !strings.Contains(err.Error(), "insertbench l.i2 client 1: before the run's first step, pi1 is not as the run that wrote it left it (kept in dbperf_audit): audit pi1: contents: transactionid "+fmt.Sprint(id)) ||
		!strings.Contains(err.Error(), "price=") {
		t.Errorf("price changed between runs: %v", err)
	}
	id, restore = tamper(300, "DELETE FROM pi1"+where)
	err = later().Prepare(ctx, h)
	restore()
	t.Logf("highest row deleted between runs: %v", err)
	for _, w := range []string{
		"count(*)=299 but stored+inserted−deleted=300 (stored 300: the rows the run that wrote the table left, inserted 0, deleted 0)",
		fmt.Sprintf("max(transactionid)=%d but the run that wrote the table left %d: its highest rows are missing", idAt(299), id),
		"contents: row 300 of the 300 that must remain is missing (l.i2's row 50 of 50, seed 42)",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("highest row deleted between runs: %v\nwithout %q", err, w)
		}
	}

	// A step that never finished its audit (here: prepared, never run) leaves the stored
	// expectations open; the next run audits without them and says so.
	if err := later().Prepare(ctx, h); err != nil {
		t.Fatalf("untampered: %v", err)
	}
	r = runStep(t, h, later(), time.Second)
	if !strings.Contains(r.audit, "contents unchecked (no stored expectations: step l.i2 changed pi1 and never finished its audit (interrupted or failed))") {
		t.Errorf("after an unfinished step: %s", r.audit)
	}
}

// BenchmarkAudit measures the audit of one table of 100,000 rows (the tiny scale's; set
// DBPERF_AUDIT_BENCH_ROWS=1000000 for the small scale's) with its secondary indexes on
// every engine: "checks" are the counts, ids and index entries, "content" the content
// check alone, "verify" a step's whole Verify (both, and the stored expectations).
func BenchmarkAudit(b *testing.B) {
	rows := int64(100_000)
	if v := os.Getenv("DBPERF_AUDIT_BENCH_ROWS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			b.Fatalf("DBPERF_AUDIT_BENCH_ROWS=%q", v)
		}
		rows = n
	}
	for _, e := range benchEngines() {
		b.Run(e.name, func(b *testing.B) {
			bs := e.open(b)
			p := bs.load(b, rows, true)
			ctx := context.Background()
			s, err := bs.h.NewSession(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			d := bs.h.Dialect()
			c := p.clients[0]
			b.Run("checks", func(b *testing.B) {
				e := p.expect(c, d)
				e.Content, e.NoContent = nil, "benchmark"
				for range b.N {
					if _, err := auditTable(ctx, s, d, c.table, e); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/audit")
			})
			b.Run("content", func(b *testing.B) {
				e := p.expect(c, d)
				lo, _, err := queryInt(ctx, s, minSQL(c.table))
				if err != nil {
					b.Fatal(err)
				}
				for range b.N {
					k := &contentCheck{ctx: ctx, s: s, sql: e.content, table: c.table, m: e.Content, bufs: e.bufs}
					if problem, err := k.run(lo); err != nil || problem != "" {
						b.Fatal(problem, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/audit")
			})
			b.Run("verify", func(b *testing.B) {
				st := &stepBase{StepBase: workload.NewStepBase(stepIndex, ""), p: p}
				for range b.N {
					if _, err := st.Verify(ctx, bs.h); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/audit")
			})
		})
	}
}
