package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
)

func open(t *testing.T) engine.Handle {
	t.Helper()
	h, err := New().Open(context.Background(), engine.Target{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

func newSession(t *testing.T, h engine.Handle) engine.Session {
	t.Helper()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func mustExec(t *testing.T, s engine.Session, q string, args ...any) int64 {
	t.Helper()
	n, err := s.Exec(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func queryInt(t *testing.T, s engine.Session, q string, args ...any) (int64, bool) {
	t.Helper()
	ctx := context.Background()
	st, err := s.Prepare(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, ok, err := st.QueryInt(ctx, engine.NewArgs(args...))
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

func TestMeta(t *testing.T) {
	m := New().Meta()
	if m != (engine.Meta{Name: "sqlite", Kind: engine.KindSQL, Embedded: true}) {
		t.Fatalf("Meta() = %+v", m)
	}
}

func TestOpenNeedsDir(t *testing.T) {
	if _, err := New().Open(context.Background(), engine.Target{}); err == nil {
		t.Fatal("Open without a directory succeeded")
	}
}

func TestDSN(t *testing.T) {
	got, err := dsn("/d/dbperf.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	want := "/d/dbperf.sqlite?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=60000" +
		"&_cache_size=-65536&_foreign_keys=0&_txlock=immediate"
	if got != want {
		t.Fatalf("dsn = %q, want %q", got, want)
	}
	if _, err := dsn("/d?x/dbperf.sqlite"); err == nil {
		t.Fatal("dsn accepted a path with '?'")
	}
	for _, s := range Settings() {
		if s.Why == "" {
			t.Errorf("setting %s has no explanation", s.Param)
		}
	}
}

// Every new session is a separate connection with the DSN's settings in effect.
func TestSettingsOnEverySession(t *testing.T) {
	h := open(t)
	ctx := context.Background()
	for i := range 2 {
		s := newSession(t, h)
		rows, err := s.(*drvconn.Session).QueryStrings(ctx, "PRAGMA journal_mode")
		if err != nil || len(rows) != 1 {
			t.Fatal(err, rows)
		}
		mode := rows[0][0]
		if mode != "wal" {
			t.Errorf("session %d: journal_mode = %q, want wal", i, mode)
		}
		for pragma, want := range map[string]int64{
			"busy_timeout": 60000, "synchronous": 1, "cache_size": -65536, "foreign_keys": 0,
		} {
			if v, _ := queryInt(t, s, "PRAGMA "+pragma); v != want {
				t.Errorf("session %d: %s = %d, want %d", i, pragma, v, want)
			}
		}
	}
}

func TestInfoAndSize(t *testing.T) {
	h := open(t)
	ctx := context.Background()
	info, err := h.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Version, "3.") {
		t.Errorf("Version = %q", info.Version)
	}
	want := map[string]string{
		"journal_mode": "WAL", "synchronous": "NORMAL", "busy_timeout": "60000",
		"cache_size": "-65536", "foreign_keys": "0", "driver": "mattn/go-sqlite3",
		"locking_mode": "NORMAL",
	}
	for k, v := range want {
		if info.Settings[k] != v {
			t.Errorf("Settings[%s] = %q, want %q", k, info.Settings[k], v)
		}
	}
	for _, k := range append(infoPragmas(), "path") {
		if info.Settings[k] == "" {
			t.Errorf("Settings[%s] missing", k)
		}
	}
	if !strings.HasSuffix(info.Settings["path"], FileName) || info.DataDir == "" {
		t.Errorf("path %q, DataDir %q", info.Settings["path"], info.DataDir)
	}

	s := newSession(t, h)
	mustExec(t, s, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	st, err := s.Prepare(ctx, "INSERT INTO t (v) VALUES (?)")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if n, err := st.Exec(ctx, engine.NewArgs(strings.Repeat("x", 1000))); err != nil || n != 1 {
			t.Fatalf("insert: %d, %v", n, err)
		}
	}
	size, err := h.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if size < 100*1000 {
		t.Errorf("Size = %d after 100 KB of inserts", size)
	}
}

func TestStmtQueryAndQueryInt(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	ctx := context.Background()
	mustExec(t, s, "CREATE TABLE t (id INTEGER PRIMARY KEY, a INT, b TEXT)")
	if n := mustExec(t, s, "INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL), (3, 'zzz')"); n != 3 {
		t.Fatalf("rows affected = %d", n)
	}
	q, err := s.Prepare(ctx, "SELECT id, a, b FROM t WHERE a >= ? ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, want int64 }{{1, 3}, {2, 2}, {4, 0}, {1, 3}} {
		n, err := q.Query(ctx, engine.NewArgs(tc.from))
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("Query(%d) = %d rows, want %d", tc.from, n, tc.want)
		}
	}
	if v, ok := queryInt(t, s, "SELECT max(a) FROM t"); !ok || v != 3 {
		t.Errorf("max = %d, %v", v, ok)
	}
	if _, ok := queryInt(t, s, "SELECT min(a) FROM t WHERE a > 100"); ok {
		t.Error("min over no rows is valid")
	}
	if _, ok := queryInt(t, s, "SELECT a FROM t WHERE a > 100"); ok {
		t.Error("no row is valid")
	}
	if _, err := q.Query(ctx, engine.NewArgs("x", "y")); err == nil {
		t.Error("Query with wrong arguments succeeded")
	}
}

// AUTOINCREMENT leaves no gaps when a multi-row insert fails (AutoIncrementGaps is false).
func TestAutoIncrementNoGaps(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	ctx := context.Background()
	d := h.Dialect()
	for _, q := range d.CreateTable("q", []string{"k " + d.AutoIncrementPK(), "v int NOT NULL"}) {
		mustExec(t, s, q)
	}
	for i := range 20 {
		mustExec(t, s, "INSERT INTO q (v) VALUES (?)", i)
	}
	// A failing multi-row insert must not consume ids.
	if _, err := s.Exec(ctx, "INSERT INTO q (v) VALUES (1), (NULL)"); err == nil {
		t.Fatal("NOT NULL violation accepted")
	}
	mustExec(t, s, "INSERT INTO q (v) VALUES (20)")
	if v, _ := queryInt(t, s, "SELECT max(k) FROM q"); v != 21 {
		t.Fatalf("max(k) = %d after a failed insert, want 21 (no gap)", v)
	}

}

func TestReduceDebt(t *testing.T) {
	h := open(t)
	s := newSession(t, h)
	mustExec(t, s, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, s, "INSERT INTO t (v) VALUES ('a'), ('b')")
	detail, err := h.(engine.Maintainer).ReduceDebt(context.Background(), []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(detail, "wal_checkpoint(TRUNCATE): busy=0 log=0 checkpointed=0 in ") ||
		!strings.Contains(detail, "; ANALYZE in ") {
		t.Errorf("detail = %q", detail)
	}
	if v, _ := queryInt(t, s, "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 't'"); v != 1 {
		t.Errorf("ANALYZE left %d sqlite_stat1 rows for t", v)
	}
}
