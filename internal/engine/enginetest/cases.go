package enginetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

// Names of the checks an engine's Options.Known may list.
const (
	// CheckEmptyText: an empty string bound as the only text of a new engine.Args is ''.
	CheckEmptyText = "EmptyText"
	// CheckDDLRowsAffected: Session.Exec of DDL reports 0 rows affected, also right after
	// a statement that changed rows.
	CheckDDLRowsAffected = "DDLRowsAffected"
)

// checks are the names above.
var checks = map[string]bool{CheckEmptyText: true, CheckDDLRowsAffected: true}

// cases is the suite: every engine runs every case.
var cases = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"OpenInfoSize", testOpenInfoSize},
	{"Sessions", testSessions},
	{"Stmt", testStmt},
	{"StmtReuse", testStmtReuse},
	{"QueryRow", testQueryRow},
	{"StmtErrors", testStmtErrors},
	{"SessionExec", testSessionExec},
	{"Cancel", testCancel},
	{"CancelIdle", testCancelIdle},
	{"Placeholder", testPlaceholder},
	{"AutoIncrementPK", testAutoIncrementPK},
	{"AutoIncrementPK32", testAutoIncrementPK32},
	{"DateTimeType", testDateTimeType},
	{"CreateDropTable", testCreateDropTable},
	{"CreateIndexes", testCreateIndexes},
	{"FromIndex", testFromIndex},
}

// createTable (re)creates table with the dialect's statements and drops it when the test
// ends (on s, whose own cleanup runs later).
func createTable(t *testing.T, s engine.Session, d engine.Dialect, table string, cols ...string) {
	t.Helper()
	MustExec(t, s, d.DropTable(table))
	for _, q := range d.CreateTable(table, cols) {
		MustExec(t, s, q)
	}
	t.Cleanup(func() {
		if _, err := s.Exec(context.Background(), d.DropTable(table)); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
}

// values renders the VALUES list of a multi-row INSERT of rows rows of cols columns, with
// the dialect's placeholders numbered from first: "(?,?),(?,?)" or "($1,$2),($3,$4)".
func values(d engine.Dialect, first, rows, cols int) string {
	var b strings.Builder
	n := first
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.Placeholder(n))
			n++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// exec runs a prepared statement that must affect want rows.
func exec(t *testing.T, st engine.Stmt, args *engine.Args, want int64) {
	t.Helper()
	n, err := st.Exec(context.Background(), args)
	if err != nil {
		t.Fatalf("exec %s: %v", args, err)
	}
	if n != want {
		t.Errorf("exec %s: %d rows affected, want %d", args, n, want)
	}
}

// query runs a prepared statement that must return want rows.
func query(t *testing.T, st engine.Stmt, args *engine.Args, want int64) {
	t.Helper()
	n, err := st.Query(context.Background(), args)
	if err != nil {
		t.Fatalf("query %s: %v", args, err)
	}
	if n != want {
		t.Errorf("query %s: %d rows, want %d", args, n, want)
	}
}

// wantInt checks QueryInt of q with args.
func wantInt(t *testing.T, s engine.Session, want int64, q string, args ...any) {
	t.Helper()
	if v, ok := QueryInt(t, s, q, args...); !ok || v != want {
		t.Errorf("%s %s = %d (valid %v), want %d", q, engine.NewArgs(args...), v, ok, want)
	}
}

// testOpenInfoSize: the handle describes its engine and measures its data.
func testOpenInfoSize(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	if h.Dialect() == nil || h.Dialect().Name() == "" {
		t.Fatalf("Dialect() = %v", h.Dialect())
	}
	info, err := h.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Version == "" || !strings.ContainsAny(info.Version[:1], "0123456789") {
		t.Errorf("Version = %q, want a version number", info.Version)
	}
	if info.Settings["driver"] == "" || len(info.Settings) < 5 {
		t.Errorf("Settings has %d entries, driver %q: want the effective settings and the driver", len(info.Settings), info.Settings["driver"])
	}
	if st, err := os.Stat(info.DataDir); !filepath.IsAbs(info.DataDir) || err != nil || !st.IsDir() {
		t.Errorf("DataDir = %q (%v): want the data's directory on this machine", info.DataDir, err)
	}

	before, err := h.Size(ctx)
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	if before <= 0 {
		t.Errorf("Size = %d of a database that exists", before)
	}
	s := NewSession(t, h)
	d := h.Dialect()
	createTable(t, s, d, "ct_size", "id int PRIMARY KEY", "data varchar(2000)")
	const rows, batch, width = 1000, 20, 1000
	ins := Prepare(t, s, "INSERT INTO ct_size (id, data) VALUES "+values(d, 1, batch, 2))
	args := &engine.Args{}
	for i := 0; i < rows; i += batch {
		args.Reset()
		for j := range batch {
			args.Int(int64(i + j))
			args.Text(payload(i+j, width))
		}
		exec(t, ins, args, batch)
	}
	after, err := h.Size(ctx)
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	// The rows are written somewhere (table, WAL, log): at least half of them shows.
	if after-before < rows*width/2 {
		t.Errorf("Size grew by %d bytes (%d → %d) after %d bytes of rows", after-before, before, after, rows*width)
	}
	t.Logf("Size %d → %d after %d bytes of rows", before, after, rows*width)
}

// payload is n bytes of text that compresses poorly, different for every i.
func payload(i, n int) string {
	b := make([]byte, n)
	x := uint64(i)*0x9e3779b97f4a7c15 + 1
	for k := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[k] = 'A' + byte(x%58)
		if b[k] == '\\' || b[k] == '`' {
			b[k] = 'z'
		}
	}
	return string(b)
}

// testSessions: sessions are separate connections that work at the same time and see each
// other's committed rows, not uncommitted ones.
func testSessions(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	d := h.Dialect()

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if s, err := h.NewSession(cctx); err == nil {
		_ = s.Close()
		t.Error("NewSession under a cancelled context succeeded")
	}

	setup := NewSession(t, h)
	createTable(t, setup, d, "ct_sessions", "owner int NOT NULL", "seq int NOT NULL", "PRIMARY KEY (owner, seq)")

	// The handle opens sessions concurrently; each works on its own at the same time.
	const workers, each = 4, 25
	sessions := make([]engine.Session, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			s, err := h.NewSession(ctx)
			if err != nil {
				errs[w] = fmt.Errorf("session %d: %w", w, err)
				return
			}
			sessions[w] = s
			errs[w] = work(ctx, d, s, w, each)
		})
	}
	wg.Wait()
	for w, s := range sessions {
		if s != nil {
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close session %d: %v", w, err)
				}
			})
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	wantInt(t, setup, workers*each, "SELECT count(*) FROM ct_sessions")
	wantInt(t, setup, workers, "SELECT count(DISTINCT owner) FROM ct_sessions")

	// Transactions are the session's own.
	a, b := sessions[0], sessions[1]
	count := "SELECT count(*) FROM ct_sessions WHERE owner = " + d.Placeholder(1)
	MustExec(t, a, "BEGIN")
	MustExec(t, a, "INSERT INTO ct_sessions (owner, seq) VALUES (100, 1)")
	wantInt(t, a, 1, count, 100)
	wantInt(t, b, 0, count, 100) // not committed
	MustExec(t, a, "ROLLBACK")
	wantInt(t, a, 0, count, 100)
	MustExec(t, a, "BEGIN")
	MustExec(t, a, "INSERT INTO ct_sessions (owner, seq) VALUES (101, 1)")
	MustExec(t, a, "COMMIT")
	wantInt(t, b, 1, count, 101)
}

// work is one session's part of testSessions: each rows of its own, each insert followed
// by a count of them.
func work(ctx context.Context, d engine.Dialect, s engine.Session, owner, each int) error {
	ins, err := s.Prepare(ctx, "INSERT INTO ct_sessions (owner, seq) VALUES ("+d.Placeholder(1)+", "+d.Placeholder(2)+")")
	if err != nil {
		return fmt.Errorf("session %d: %w", owner, err)
	}
	defer ins.Close()
	cnt, err := s.Prepare(ctx, "SELECT count(*) FROM ct_sessions WHERE owner = "+d.Placeholder(1))
	if err != nil {
		return fmt.Errorf("session %d: %w", owner, err)
	}
	defer cnt.Close()
	args := &engine.Args{}
	for i := range each {
		args.Reset()
		args.Int(int64(owner))
		args.Int(int64(i))
		n, err := ins.Exec(ctx, args)
		if err != nil {
			return fmt.Errorf("session %d: insert %d: %w", owner, i, err)
		}
		if n != 1 {
			return fmt.Errorf("session %d: insert %d: %d rows affected, want 1", owner, i, n)
		}
		args.Reset()
		args.Int(int64(owner))
		v, ok, err := cnt.QueryInt(ctx, args)
		if err != nil {
			return fmt.Errorf("session %d: count after insert %d: %w", owner, i, err)
		}
		if !ok || v != int64(i+1) {
			return fmt.Errorf("session %d: count after insert %d = %d (valid %v), want %d", owner, i, v, ok, i+1)
		}
	}
	return nil
}

// testStmt: prepared statements' Exec, Query and QueryInt with integer, text and NULL
// arguments.
func testStmt(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_stmt", "id int PRIMARY KEY", "a bigint", "b varchar(100)")

	const odd = "it's \"ünïcode\" \\ ; --"
	ins := Prepare(t, s, "INSERT INTO ct_stmt (id, a, b) VALUES "+values(d, 1, 3, 3))
	exec(t, ins, engine.NewArgs(1, 10, "x", 2, nil, odd, 3, 30, nil), 3)
	exec(t, ins, engine.NewArgs(4, int64(1)<<62+1, "", 5, -(int64(1)<<40), "y", 6, 0, "x"), 3)

	// Text, empty text and NULL are told apart.
	byB := "SELECT count(*) FROM ct_stmt WHERE b = " + p(1)
	wantInt(t, s, 2, byB, "x")
	wantInt(t, s, 1, byB, odd)
	// An empty string is not NULL, whether or not the Args holds other text.
	n, _ := QueryInt(t, s, byB, "")
	e.check(t, CheckEmptyText, n == 1, "b = '' with '' the Args' only text: %d rows, want 1", n)
	reused := engine.NewArgs("x")
	reused.Reset()
	reused.Text("")
	if n, _, err := Prepare(t, s, byB).QueryInt(context.Background(), reused); err != nil || n != 1 {
		t.Errorf("b = '' with a reused Args: %d rows, %v; want 1", n, err)
	}
	wantInt(t, s, 1, "SELECT count(*) FROM ct_stmt WHERE b IS NULL")
	wantInt(t, s, 2, "SELECT id FROM ct_stmt WHERE b = "+p(1), odd)

	// QueryInt: 64-bit values both ways; 0 is valid; NULL and no row are not.
	a := "SELECT a FROM ct_stmt WHERE id = " + p(1)
	for id, want := range map[int]int64{1: 10, 4: 1<<62 + 1, 5: -(1 << 40), 6: 0} {
		wantInt(t, s, want, a, id)
	}
	wantInt(t, s, 4, "SELECT id FROM ct_stmt WHERE a = "+p(1), int64(1)<<62+1)
	if v, ok := QueryInt(t, s, a, 2); ok {
		t.Errorf("QueryInt of NULL = %d, valid", v)
	}
	if v, ok := QueryInt(t, s, a, 99); ok {
		t.Errorf("QueryInt of no row = %d, valid", v)
	}
	if v, ok := QueryInt(t, s, "SELECT min(a) FROM ct_stmt WHERE id > 100"); ok {
		t.Errorf("QueryInt of min over no rows = %d, valid", v)
	}
	wantInt(t, s, 0, "SELECT count(*) FROM ct_stmt WHERE id > 100")
	wantInt(t, s, 40, "SELECT sum(a) FROM ct_stmt WHERE id < 4") // numeric/decimal on the servers
	wantInt(t, s, 10, "SELECT a FROM ct_stmt WHERE a IS NOT NULL ORDER BY id")

	// Query counts every row; Exec counts the rows changed.
	q := Prepare(t, s, "SELECT id, a, b FROM ct_stmt WHERE id >= "+p(1)+" ORDER BY id")
	for _, tc := range []struct{ from, want int64 }{{1, 6}, {3, 4}, {7, 0}, {1, 6}} {
		query(t, q, engine.NewArgs(tc.from), tc.want)
	}
	upd := Prepare(t, s, "UPDATE ct_stmt SET b = "+p(1)+" WHERE id >= "+p(2))
	exec(t, upd, engine.NewArgs("changed", 4), 3)
	exec(t, upd, engine.NewArgs("changed", 99), 0)
	wantInt(t, s, 3, byB, "changed")
	del := Prepare(t, s, "DELETE FROM ct_stmt WHERE id > "+p(1))
	exec(t, del, engine.NewArgs(5), 1)
	exec(t, del, engine.NewArgs(5), 0)
	query(t, q, engine.NewArgs(1), 5)

	// A result larger than the drivers' read buffers is read to the end.
	createTable(t, s, d, "ct_big", "id int PRIMARY KEY", "data varchar(500)")
	bi := Prepare(t, s, "INSERT INTO ct_big (id, data) VALUES "+values(d, 1, 100, 2))
	args := &engine.Args{}
	for i := 0; i < 1000; i += 100 {
		args.Reset()
		for j := range 100 {
			args.Int(int64(i + j))
			args.Text(payload(i+j, 400))
		}
		exec(t, bi, args, 100)
	}
	all := Prepare(t, s, "SELECT id, data FROM ct_big WHERE id >= "+p(1))
	query(t, all, engine.NewArgs(0), 1000)
	query(t, all, engine.NewArgs(990), 10)
}

// testStmtReuse: a statement and a reused Args stay correct over many executions.
// testQueryRow: a prepared statement returns its first row's columns as text with their
// names (engine.RowQuerier), NULL as NULL, and the number of rows.
func testQueryRow(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	createTable(t, s, d, "ct_row", "id int PRIMARY KEY", "a bigint", "b varchar(100)")
	MustExec(t, s, "INSERT INTO ct_row (id, a, b) VALUES (1, -42, 'x y'), (2, NULL, NULL), (3, 7, '')")
	st := Prepare(t, s, "SELECT a AS aa, b AS bb FROM ct_row WHERE id >= "+d.Placeholder(1)+" ORDER BY id")
	rq, ok := st.(engine.RowQuerier)
	if !ok {
		t.Fatalf("%T is not an engine.RowQuerier", st)
	}
	var row engine.Row
	for _, c := range []struct {
		from, rows int64
		want       string
	}{{1, 3, "aa=-42 bb=x y"}, {2, 2, "aa=NULL bb=NULL"}, {3, 1, "aa=7 bb="}, {4, 0, ""}} {
		n, err := rq.QueryRow(context.Background(), engine.NewArgs(c.from), &row)
		if err != nil {
			t.Fatalf("id >= %d: %v", c.from, err)
		}
		var got []string
		for i := range row.Values {
			if n == 0 {
				break
			}
			v := string(row.Values[i])
			if row.Null[i] {
				v = "NULL"
			}
			got = append(got, row.Names[i]+"="+v)
		}
		if n != c.rows || strings.Join(got, " ") != c.want || strings.Join(row.Names, ",") != "aa,bb" {
			t.Errorf("id >= %d: %d rows, %q (names %v); want %d rows, %q", c.from, n, got, row.Names, c.rows, c.want)
		}
	}
}

func testStmtReuse(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_reuse", "id int PRIMARY KEY", "v bigint NOT NULL", "b varchar(100) NOT NULL")

	ins := Prepare(t, s, "INSERT INTO ct_reuse (id, v, b) VALUES ("+p(1)+", "+p(2)+", "+p(3)+")")
	args := &engine.Args{}
	const rows = 100
	for i := range rows {
		args.Reset()
		args.Int(int64(i))
		args.Int(int64(i) * 1_000_003)
		args.Text2("row-", strconv.Itoa(i)+strings.Repeat("+", i%50))
		exec(t, ins, args, 1)
	}
	wantInt(t, s, rows, "SELECT count(*) FROM ct_reuse")
	wantInt(t, s, rows*(rows-1)/2, "SELECT sum(id) FROM ct_reuse")

	pt := Prepare(t, s, "SELECT v FROM ct_reuse WHERE id = "+p(1)+" AND b = "+p(2))
	ctx := context.Background()
	for i := range 1000 {
		id := (i * 7) % (rows + 10) // the last 10 ids do not exist
		args.Reset()
		args.Int(int64(id))
		args.Text2("row-", strconv.Itoa(id)+strings.Repeat("+", id%50))
		v, ok, err := pt.QueryInt(ctx, args)
		if err != nil {
			t.Fatalf("execution %d: %v", i, err)
		}
		if want := id < rows; ok != want || (ok && v != int64(id)*1_000_003) {
			t.Fatalf("execution %d: id %d: %d (valid %v)", i, id, v, ok)
		}
	}
}

// testStmtErrors: a failed statement returns an error and leaves the session and its other
// statements usable.
func testStmtErrors(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_err", "id int PRIMARY KEY", "v int NOT NULL")
	ins := Prepare(t, s, "INSERT INTO ct_err (id, v) VALUES ("+p(1)+", "+p(2)+")")
	exec(t, ins, engine.NewArgs(1, 1), 1)
	q := Prepare(t, s, "SELECT id FROM ct_err WHERE id >= "+p(1))

	if st, err := s.Prepare(ctx, "SELEC id FROM ct_err"); err == nil {
		_ = st.Close()
		t.Error("Prepare of invalid SQL succeeded")
	}
	if _, err := s.Exec(ctx, "INSERT INTO ct_nosuch_table VALUES (1)"); err == nil {
		t.Error("Session.Exec on a missing table succeeded")
	}
	if _, err := ins.Exec(ctx, engine.NewArgs(1, 2)); err == nil {
		t.Error("duplicate primary key accepted")
	}
	if _, err := ins.Exec(ctx, engine.NewArgs(2, nil)); err == nil {
		t.Error("NULL accepted in a NOT NULL column")
	}
	if _, err := q.Query(ctx, engine.NewArgs(1, 2)); err == nil {
		t.Error("Query with too many arguments succeeded")
	}
	if _, err := q.Query(ctx, nil); err == nil {
		t.Error("Query without its argument succeeded")
	}
	exec(t, ins, engine.NewArgs(2, 2), 1)
	query(t, q, engine.NewArgs(1), 2)
	wantInt(t, s, 3, "SELECT sum(v) FROM ct_err")

	if err := q.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// testSessionExec: Session.Exec runs statements with and without arguments and returns the
// rows they changed.
func testSessionExec(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_exec", "id int PRIMARY KEY", "v int", "b varchar(20)")
	for _, tc := range []struct {
		q    string
		args []any
		want int64
	}{
		{"INSERT INTO ct_exec (id, v, b) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')", nil, 3},
		{"INSERT INTO ct_exec (id, v, b) VALUES (" + p(1) + ", " + p(2) + ", " + p(3) + ")", []any{4, nil, "d"}, 1},
		{"INSERT INTO ct_exec (id, v, b) VALUES (" + p(1) + ", " + p(2) + ", " + p(3) + ")", []any{int64(5), int64(5), "e"}, 1},
		{"UPDATE ct_exec SET v = v + 10 WHERE id <= " + p(1), []any{2}, 2},
		{"UPDATE ct_exec SET b = " + p(1) + " WHERE id > 100", []any{"x"}, 0},
		{"DELETE FROM ct_exec WHERE v IS NULL", nil, 1},
		{"DELETE FROM ct_exec WHERE id >= " + p(1), []any{3}, 2},
		{"DELETE FROM ct_exec", nil, 2},
	} {
		if n := MustExec(t, s, tc.q, tc.args...); n != tc.want {
			t.Errorf("%s %v: %d rows affected, want %d", tc.q, tc.args, n, tc.want)
		}
	}
	wantInt(t, s, 0, "SELECT count(*) FROM ct_exec")

	// DDL changes no row, even right after a statement that did.
	MustExec(t, s, "INSERT INTO ct_exec (id, v, b) VALUES (1, 1, 'a'), (2, 2, 'b')")
	ddl := append(d.CreateTable("ct_exec_ddl", []string{"id int PRIMARY KEY"}), d.DropTable("ct_exec_ddl"), d.DropTable("ct_exec_ddl"))
	MustExec(t, s, d.DropTable("ct_exec_ddl"))
	for _, q := range ddl {
		n := MustExec(t, s, q)
		e.check(t, CheckDDLRowsAffected, n == 0, "%s after an INSERT of 2 rows: %d rows affected, want 0", q, n)
	}
}

// testCancel: a cancelled context, or one past its deadline, interrupts a long statement
// promptly, through Session.Exec and through a prepared statement. The context is watched
// once per session, not per call: a statement that ran under it before finishes normally.
// Closing the statement and the session afterwards is not an error.
func testCancel(t *testing.T, e *env) {
	const after = 100 * time.Millisecond
	for _, via := range []string{"SessionExec", "Stmt"} {
		for _, end := range []error{context.Canceled, context.DeadlineExceeded} {
			t.Run(via+"/"+map[error]string{context.Canceled: "cancel", context.DeadlineExceeded: "deadline"}[end], func(t *testing.T) {
				if via == "Stmt" && e.opts.StmtNotInterrupted {
					t.Skip("the engine runs prepared statements to completion (Options.StmtNotInterrupted)")
				}
				h := e.open(t)
				s, err := h.NewSession(context.Background())
				if err != nil {
					t.Fatalf("new session: %v", err)
				}
				var st engine.Stmt
				if via == "Stmt" {
					if st, err = s.Prepare(context.Background(), e.opts.Slow); err != nil {
						t.Fatalf("prepare: %v", err)
					}
				}
				run := func(ctx context.Context, seconds int) error {
					if st == nil {
						_, err := s.Exec(ctx, e.opts.Slow, seconds)
						return err
					}
					n, err := st.Query(ctx, engine.NewArgs(seconds))
					if err == nil && n != 1 {
						return fmt.Errorf("%d rows, want 1", n)
					}
					return err
				}
				var ctx context.Context
				var cancel context.CancelFunc
				if end == context.Canceled {
					ctx, cancel = context.WithCancel(context.Background())
					if err := run(ctx, 0); err != nil {
						t.Fatalf("the slow statement for 0 s under a live context: %v", err)
					}
					time.AfterFunc(after, cancel)
				} else {
					ctx, cancel = context.WithTimeout(context.Background(), after)
				}
				defer cancel()
				start := time.Now()
				err = run(ctx, 30)
				took := time.Since(start)
				if !errors.Is(err, end) {
					t.Errorf("30 s statement, context ended after %s: %v, want %v", after, err, end)
				}
				if took < after/2 || took > after+5*time.Second {
					t.Errorf("the interrupted statement returned after %s, want soon after %s", took, after)
				}
				if st != nil {
					if err := st.Close(); err != nil {
						t.Errorf("statement Close after the interruption: %v", err)
					}
				}
				if err := s.Close(); err != nil {
					t.Errorf("session Close after the interruption: %v", err)
				}
				// The handle is unharmed.
				wantInt(t, NewSession(t, h), 1, "SELECT 1")
				if e.opts.AfterCancel != nil {
					e.opts.AfterCancel(t, h)
				}
			})
		}
	}
}

// testCancelIdle: a context that ends after its statements finished (a step's context
// cancelled, or past its deadline, while the session waits) interrupts nothing: the
// session's next statement, under another context, runs. Before, a prepared statement's
// watch shut an idle PostgreSQL connection down, and the next statement found it closed.
func testCancelIdle(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	st := Prepare(t, s, "SELECT 1")
	for _, end := range []string{"cancel", "deadline"} {
		var ctx context.Context
		var cancel context.CancelFunc
		if end == "cancel" {
			ctx, cancel = context.WithCancel(context.Background())
		} else {
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
		if n, err := st.Query(ctx, engine.NewArgs()); err != nil || n != 1 {
			t.Fatalf("%s: SELECT 1 under a live context: %d rows, %v", end, n, err)
		}
		if end == "cancel" {
			cancel()
		} else {
			<-ctx.Done()
		}
		time.Sleep(50 * time.Millisecond) // the watch's function runs on a goroutine of its own
		if n, err := st.Query(context.Background(), engine.NewArgs()); err != nil || n != 1 {
			t.Errorf("%s while idle: the next statement: %d rows, %v", end, n, err)
		}
		if _, err := st.Query(ctx, engine.NewArgs()); err == nil {
			t.Errorf("%s: a statement under the ended context ran", end)
		}
		cancel()
	}
}

// testPlaceholder: Placeholder(n) binds the n-th argument, past 9 too, in every clause.
func testPlaceholder(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_ph", "k int PRIMARY KEY", "c1 int NOT NULL", "c2 varchar(20) NOT NULL", "c3 int NOT NULL", "c4 varchar(20) NOT NULL")
	ins := Prepare(t, s, "INSERT INTO ct_ph (k, c1, c2, c3, c4) VALUES "+values(d, 1, 3, 5))
	var vals []any
	for r := 1; r <= 3; r++ {
		vals = append(vals, r, r*10+1, fmt.Sprintf("r%d.c2", r), r*10+3, fmt.Sprintf("r%d.c4", r))
	}
	exec(t, ins, engine.NewArgs(vals...), 3)
	if _, err := ins.Exec(context.Background(), engine.NewArgs(vals[:14]...)); err == nil {
		t.Error("14 arguments for 15 placeholders accepted")
	}
	for r := 1; r <= 3; r++ {
		wantInt(t, s, int64(r*10+1), "SELECT c1 FROM ct_ph WHERE k = "+p(1), r)
		wantInt(t, s, int64(r*10+3), "SELECT c3 FROM ct_ph WHERE k = "+p(1), r)
		wantInt(t, s, int64(r), "SELECT k FROM ct_ph WHERE c2 = "+p(1)+" AND c4 = "+p(2),
			fmt.Sprintf("r%d.c2", r), fmt.Sprintf("r%d.c4", r))
	}
	// Numbered in order across SET and WHERE.
	upd := Prepare(t, s, "UPDATE ct_ph SET c1 = "+p(1)+", c2 = "+p(2)+" WHERE k = "+p(3)+" AND c4 = "+p(4))
	exec(t, upd, engine.NewArgs(99, "new", 2, "r2.c4"), 1)
	wantInt(t, s, 99, "SELECT c1 FROM ct_ph WHERE c2 = "+p(1), "new")
	wantInt(t, s, 2, "SELECT k FROM ct_ph WHERE c1 = "+p(1), 99)
}

// testAutoIncrementPK: the key column assigns distinct ids in insertion order, holds 64-bit
// values and is the primary key.
func testAutoIncrementPK(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_ai", "k "+d.AutoIncrementPK(), "v int NOT NULL")
	one := Prepare(t, s, "INSERT INTO ct_ai (v) VALUES ("+p(1)+")")
	for v := 1; v <= 5; v++ {
		exec(t, one, engine.NewArgs(v), 1)
	}
	exec(t, Prepare(t, s, "INSERT INTO ct_ai (v) VALUES "+values(d, 1, 5, 1)), engine.NewArgs(6, 7, 8, 9, 10), 5)
	wantInt(t, s, 10, "SELECT count(DISTINCT k) FROM ct_ai")
	wantInt(t, s, 0, "SELECT count(*) FROM ct_ai WHERE k IS NULL OR k < 1")
	// Later rows have higher ids.
	wantInt(t, s, 0, "SELECT count(*) FROM ct_ai x JOIN ct_ai y ON x.k < y.k AND x.v > y.v")

	first, _ := QueryInt(t, s, "SELECT min(k) FROM ct_ai")
	if _, err := s.Exec(ctx, "INSERT INTO ct_ai (k, v) VALUES ("+p(1)+", 0)", first); err == nil {
		t.Errorf("a second row with key %d accepted", first)
	}
	const big = int64(1)<<40 + 7
	MustExec(t, s, "INSERT INTO ct_ai (k, v) VALUES ("+p(1)+", 11)", big)
	wantInt(t, s, 11, "SELECT v FROM ct_ai WHERE k = "+p(1), big)
	wantInt(t, s, big, "SELECT max(k) FROM ct_ai")
	exec(t, one, engine.NewArgs(12), 1)
	wantInt(t, s, 12, "SELECT count(DISTINCT k) FROM ct_ai")
}

// testAutoIncrementPK32: the 32-bit key assigns distinct ids in insertion order, holds
// 2^31-1, refuses 2^31 except on SQLite (whose key is the 64-bit rowid), and the engine
// keeps feeding it after an explicit id (sysbench's delete-insert writes ids itself).
func testAutoIncrementPK32(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_ai32", "id "+d.AutoIncrementPK32(), "k int NOT NULL")
	one := Prepare(t, s, "INSERT INTO ct_ai32 (k) VALUES ("+p(1)+")")
	for v := 1; v <= 5; v++ {
		exec(t, one, engine.NewArgs(v), 1)
	}
	wantInt(t, s, 5, "SELECT count(DISTINCT id) FROM ct_ai32")
	wantInt(t, s, 0, "SELECT count(*) FROM ct_ai32 x JOIN ct_ai32 y ON x.id < y.id AND x.k > y.k")
	first, _ := QueryInt(t, s, "SELECT min(id) FROM ct_ai32")
	if _, err := s.Exec(ctx, "INSERT INTO ct_ai32 (id, k) VALUES ("+p(1)+", 0)", first); err == nil {
		t.Errorf("a second row with key %d accepted", first)
	}
	MustExec(t, s, "INSERT INTO ct_ai32 (id, k) VALUES ("+p(1)+", 6)", int64(100))
	exec(t, one, engine.NewArgs(7), 1)
	wantInt(t, s, 7, "SELECT count(DISTINCT id) FROM ct_ai32")
	const max32 = int64(1)<<31 - 1
	MustExec(t, s, "INSERT INTO ct_ai32 (id, k) VALUES ("+p(1)+", 8)", max32)
	wantInt(t, s, 8, "SELECT k FROM ct_ai32 WHERE id = "+p(1), max32)
	_, err := s.Exec(ctx, "INSERT INTO ct_ai32 (id, k) VALUES ("+p(1)+", 9)", max32+1)
	if wide := d.Name() == "sqlite"; wide != (err == nil) {
		t.Errorf("a key of 2^31 on %s: error %v (SQLite's rowid holds it, the others' 32-bit keys must not)", d.Name(), err)
	}
}

// testDateTimeType: the date-time column stores timestamps bound as text
// ('YYYY-MM-DD HH:MM:SS', as the workloads bind them) to the second, compares and orders
// them chronologically, and holds NULL.
func testDateTimeType(t *testing.T, e *env) {
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	p := d.Placeholder
	createTable(t, s, d, "ct_dt", "k int PRIMARY KEY", "at "+d.DateTimeType())
	ins := Prepare(t, s, "INSERT INTO ct_dt (k, at) VALUES "+values(d, 1, 4, 2))
	exec(t, ins, engine.NewArgs(1, "2026-01-01 00:00:00", 2, "2026-01-02 03:04:05", 3, "2025-12-31 23:59:59", 4, nil), 4)

	wantInt(t, s, 2, "SELECT k FROM ct_dt WHERE at = "+p(1), "2026-01-02 03:04:05")
	cnt := Prepare(t, s, "SELECT k FROM ct_dt WHERE at > "+p(1))
	query(t, cnt, engine.NewArgs("2026-01-02 03:04:04"), 1)
	query(t, cnt, engine.NewArgs("2026-01-02 03:04:05"), 0)
	query(t, cnt, engine.NewArgs("2025-12-31 23:59:58"), 3)
	between := Prepare(t, s, "SELECT k FROM ct_dt WHERE at >= "+p(1)+" AND at < "+p(2))
	query(t, between, engine.NewArgs("2026-01-01 00:00:00", "2026-01-02 00:00:00"), 1)
	query(t, between, engine.NewArgs("2025-12-31 00:00:00", "2026-01-03 00:00:00"), 3)
	wantInt(t, s, 3, "SELECT k FROM ct_dt WHERE at IS NOT NULL ORDER BY at LIMIT 1")
	wantInt(t, s, 2, "SELECT k FROM ct_dt WHERE at IS NOT NULL ORDER BY at DESC LIMIT 1")
	wantInt(t, s, 4, "SELECT k FROM ct_dt WHERE at IS NULL")
	upd := Prepare(t, s, "UPDATE ct_dt SET at = "+p(1)+" WHERE k = "+p(2))
	exec(t, upd, engine.NewArgs("2030-06-15 12:30:45", 4), 1)
	wantInt(t, s, 4, "SELECT k FROM ct_dt WHERE at = "+p(1), "2030-06-15 12:30:45")
}

// testCreateDropTable: CreateTable's statements create a usable table; DropTable drops it
// and may be run when the table does not exist.
func testCreateDropTable(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	MustExec(t, s, d.DropTable("ct_nosuch"))
	MustExec(t, s, d.DropTable("ct_nosuch"))

	cols := []string{"k " + d.AutoIncrementPK(), "v int NOT NULL", "data varchar(100)"}
	create := d.CreateTable("ct_tab", cols)
	if len(create) == 0 {
		t.Fatal("CreateTable returned no statement")
	}
	createTable(t, s, d, "ct_tab", cols...)
	ins := "INSERT INTO ct_tab (v, data) VALUES (1, 'a'), (2, NULL), (3, 'c')"
	if n := MustExec(t, s, ins); n != 3 {
		t.Errorf("insert: %d rows", n)
	}
	first, _ := QueryInt(t, s, "SELECT min(k) FROM ct_tab")
	if _, err := s.Exec(ctx, create[0]); err == nil {
		t.Errorf("%s succeeded on an existing table", create[0])
	}

	MustExec(t, s, d.DropTable("ct_tab"))
	if st, err := s.Prepare(ctx, "SELECT k FROM ct_tab"); err == nil {
		if _, err := st.Query(ctx, nil); err == nil {
			t.Error("the dropped table can be read")
		}
		_ = st.Close()
	}
	MustExec(t, s, d.DropTable("ct_tab"))

	// Nothing of the dropped table remains: created again, it is empty and numbers from the start.
	for _, q := range create {
		MustExec(t, s, q)
	}
	wantInt(t, s, 0, "SELECT count(*) FROM ct_tab")
	MustExec(t, s, ins)
	wantInt(t, s, first, "SELECT min(k) FROM ct_tab")

	// A table without an auto-assigned key.
	createTable(t, s, d, "ct_plain", "id int PRIMARY KEY", "v int")
	if n := MustExec(t, s, "INSERT INTO ct_plain (id, v) VALUES (1, 1), (2, 2)"); n != 2 {
		t.Errorf("insert into ct_plain: %d rows", n)
	}
}

// indexedTable creates ct_ix with rows rows for the index cases: price is (i*7)%rows, so
// every price from 0 to rows-1 occurs once.
func indexedTable(t *testing.T, s engine.Session, d engine.Dialect, rows int) {
	t.Helper()
	createTable(t, s, d, "ct_ix", "k "+d.AutoIncrementPK(), "price int NOT NULL", "dateandtime "+d.DateTimeType(),
		"customerid int NOT NULL", "productid int NOT NULL", "data varchar(100)")
	const batch = 100
	ins := Prepare(t, s, "INSERT INTO ct_ix (price, dateandtime, customerid, productid, data) VALUES "+values(d, 1, batch, 5))
	args := &engine.Args{}
	for i := 0; i < rows; i += batch {
		args.Reset()
		for j := i; j < i+batch; j++ {
			args.Int(int64(j * 7 % rows))
			args.Text(fmt.Sprintf("2026-01-01 %02d:%02d:%02d", j/3600%24, j/60%60, j%60))
			args.Int(int64(j % 37))
			args.Int(int64(j % 11))
			args.Text(payload(j, 50))
		}
		exec(t, ins, args, batch)
	}
}

var testIndexes = []engine.Index{
	{Name: "ct_ix_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	{Name: "ct_ix_cust", Columns: []string{"customerid", "productid"}},
}

// createIndexes runs CreateIndexes' statements for testIndexes.
func createIndexes(t *testing.T, s engine.Session, d engine.Dialect) []string {
	t.Helper()
	stmts := d.CreateIndexes("ct_ix", testIndexes)
	if len(stmts) == 0 {
		t.Fatal("CreateIndexes returned no statement")
	}
	for _, q := range stmts {
		MustExec(t, s, q)
	}
	return stmts
}

// testCreateIndexes: CreateIndexes' statements create every index, under its name.
func testCreateIndexes(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	s := NewSession(t, h)
	d := h.Dialect()
	if got := d.CreateIndexes("ct_ix", nil); len(got) != 0 {
		t.Errorf("CreateIndexes of no index = %q, want no statement", got)
	}
	indexedTable(t, s, d, 300)
	exists := func(index string) int64 {
		v, _ := QueryInt(t, s, e.opts.IndexExists, "ct_ix", index)
		return v
	}
	for _, ix := range testIndexes {
		if n := exists(ix.Name); n != 0 {
			t.Fatalf("IndexExists(%s) = %d before CreateIndexes", ix.Name, n)
		}
	}
	stmts := createIndexes(t, s, d)
	for _, ix := range testIndexes {
		if n := exists(ix.Name); n != 1 {
			t.Errorf("IndexExists(%s) = %d after CreateIndexes %q", ix.Name, n, stmts)
		}
	}
	if n := exists("ct_ix_nosuch"); n != 0 {
		t.Errorf("IndexExists(ct_ix_nosuch) = %d", n)
	}
	if _, err := s.Exec(ctx, stmts[0]); err == nil {
		t.Errorf("%s succeeded again: the index did not exist?", stmts[0])
	}
	// The table is still usable through its indexed columns.
	wantInt(t, s, 50, "SELECT count(*) FROM ct_ix WHERE price >= "+d.Placeholder(1), 250)
	wantInt(t, s, 1, "SELECT count(*) FROM ct_ix WHERE customerid = "+d.Placeholder(1)+" AND productid = "+d.Placeholder(2), 5, 5)
}

// testFromIndex: the engine accepts FromIndex's hint, reads the table through the named
// index, and refuses a hint naming no index (so the hint is not ignored).
func testFromIndex(t *testing.T, e *env) {
	ctx := context.Background()
	h := e.open(t)
	d := h.Dialect()
	from, ok := d.FromIndex("ct_ix", "ct_ix_pdc")
	if !ok {
		t.Skipf("the %s dialect has no index hint (FromIndex ok = false)", d.Name())
	}
	if !strings.Contains(from, "ct_ix") || !strings.Contains(from, "ct_ix_pdc") {
		t.Errorf("FromIndex = %q: want the table and the index", from)
	}
	s := NewSession(t, h)
	indexedTable(t, s, d, 300)
	createIndexes(t, s, d)

	const cols = "SELECT price, dateandtime, customerid FROM "
	const rest = " ORDER BY price, dateandtime, customerid LIMIT 10"
	q := Prepare(t, s, cols+from+" WHERE price >= "+d.Placeholder(1)+rest)
	for range 2 {
		query(t, q, engine.NewArgs(250), 10)
	}
	query(t, q, engine.NewArgs(295), 5)
	wantInt(t, s, 250, cols+from+" WHERE price >= "+d.Placeholder(1)+rest, 250)
	if e.opts.PlanIndex != nil {
		if got := e.opts.PlanIndex(t, s, cols+from+" WHERE price >= 250"+rest); got != "ct_ix_pdc" {
			t.Errorf("the hinted query reads through index %q, want ct_ix_pdc", got)
		}
	}

	bad, _ := d.FromIndex("ct_ix", "ct_ix_nosuch")
	st, err := s.Prepare(ctx, cols+bad+" WHERE price >= "+d.Placeholder(1)+rest)
	if err == nil {
		_, err = st.Query(ctx, engine.NewArgs(250))
		_ = st.Close()
	}
	if err == nil {
		t.Errorf("a hint naming a missing index was accepted: %s", bad)
	}
}
