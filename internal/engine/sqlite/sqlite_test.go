package sqlite

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/dbperf/dbperf/internal/engine/enginetest"
)

func open(t *testing.T) engine.SQL {
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
	return h.(engine.SQL)
}

func TestMeta(t *testing.T) {
	m := New().Meta()
	if !reflect.DeepEqual(m, engine.Meta{Name: "sqlite", Kind: engine.KindSQL, Embedded: true}) {
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
		s := enginetest.NewSession(t, h)
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
			if v, _ := enginetest.QueryInt(t, s, "PRAGMA "+pragma); v != want {
				t.Errorf("session %d: %s = %d, want %d", i, pragma, v, want)
			}
		}
	}
}

// Info reports SQLite's version, dbperf's settings as in effect and the file's path
// (the suite checks what every engine reports).
func TestInfo(t *testing.T) {
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
}

func TestReduceDebt(t *testing.T) {
	h := open(t)
	s := enginetest.NewSession(t, h)
	enginetest.MustExec(t, s, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	enginetest.MustExec(t, s, "INSERT INTO t (v) VALUES ('a'), ('b')")
	detail, err := h.(engine.Maintainer).ReduceDebt(context.Background(), []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(detail, "wal_checkpoint(TRUNCATE): busy=0 log=0 checkpointed=0 in ") ||
		!strings.Contains(detail, "; ANALYZE in ") {
		t.Errorf("detail = %q", detail)
	}
	if v, _ := enginetest.QueryInt(t, s, "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 't'"); v != 1 {
		t.Errorf("ANALYZE left %d sqlite_stat1 rows for t", v)
	}
}
