package mariadb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/dbperf/dbperf/internal/server"
)

// Tests share one managed server per storage engine, started on first use and stopped by
// TestMain. Each test uses its own tables.
var (
	serversMu sync.Mutex
	servers   = map[string]*server.Instance{}
	workDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, in := range servers {
		_ = in.Stop(context.Background())
	}
	if workDir != "" {
		_ = os.RemoveAll(workDir)
	}
	os.Exit(code)
}

// instance returns the shared server for a storage engine, starting it if needed.
func instance(t *testing.T, storage string) *server.Instance {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		t.Skipf("MariaDB not installed (%v): apt-get install mariadb-server mariadb-plugin-rocksdb", err)
	}
	serversMu.Lock()
	defer serversMu.Unlock()
	if in := servers[storage]; in != nil {
		return in
	}
	if workDir == "" {
		d, err := os.MkdirTemp("", "dbperf-mariadb-test-")
		if err != nil {
			t.Fatal(err)
		}
		workDir = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := server.StartMariaDB(ctx, server.Options{
		WorkDir: workDir, ProfilesDir: "../../../profiles", Profile: "default", StorageEngine: storage,
	})
	if err != nil {
		t.Fatal(err)
	}
	servers[storage] = in
	return in
}

func open(t *testing.T, storage string) engine.Handle {
	t.Helper()
	in := instance(t, storage)
	h, err := New(storage).Open(context.Background(), engine.Target{DSN: in.DSN})
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

func queryString(t *testing.T, s engine.Session, q string) string {
	t.Helper()
	rows, err := s.(*drvconn.Session).QueryStrings(context.Background(), q)
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		t.Fatalf("%s: %v (%d rows)", q, err, len(rows))
	}
	return rows[0][0]
}

// createPi creates an iibench-like table through the dialect, fills it with n rows in
// multi-row prepared INSERTs and creates the three secondary indexes.
func createPi(t *testing.T, h engine.Handle, s engine.Session, table string, n int) {
	t.Helper()
	ctx := context.Background()
	d := h.Dialect()
	mustExec(t, s, d.DropTable(table))
	t.Cleanup(func() { _, _ = s.Exec(context.Background(), d.DropTable(table)) })
	cols := []string{
		"transactionid " + d.AutoIncrementPK(),
		"dateandtime " + d.DateTimeType(),
		"cashregisterid int NOT NULL", "customerid int NOT NULL", "productid int NOT NULL",
		"price int NOT NULL", "data varchar(4000)",
	}
	for _, q := range d.CreateTable(table, cols) {
		mustExec(t, s, q)
	}
	const batch = 100
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", 6), ",") + ")"
	ins, err := s.Prepare(ctx, "INSERT INTO "+table+" (dateandtime, cashregisterid, customerid, productid, price, data) VALUES "+
		strings.TrimSuffix(strings.Repeat(tuple+",", batch), ","))
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	for i := 0; i < n; i += batch {
		args := make([]any, 0, 6*batch)
		for j := range batch {
			k := i + j
			args = append(args, "2024-01-02 03:04:05", k%1000, k%100000, k%10000, k%500, strings.Repeat("a", 15))
		}
		got, err := ins.Exec(ctx, engine.NewArgs(args...))
		if err != nil {
			t.Fatal(err)
		}
		if got != batch {
			t.Fatalf("insert: %d rows affected, want %d", got, batch)
		}
	}
	for _, q := range d.CreateIndexes(table, []engine.Index{
		{Name: table + "_marketsegment", Columns: []string{"productid", "customerid", "price"}},
		{Name: table + "_registersegment", Columns: []string{"cashregisterid", "customerid", "price"}},
		{Name: table + "_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	}) {
		mustExec(t, s, q)
	}
}

func TestMariaDBMeta(t *testing.T) {
	if m := New("").Meta(); m != (engine.Meta{Name: "mariadb", Kind: engine.KindSQL}) {
		t.Fatalf("Meta() = %+v", m)
	}
	if New("").StorageEngine != InnoDB || New("RocksDB").StorageEngine != RocksDB {
		t.Errorf("New: %q %q", New("").StorageEngine, New("RocksDB").StorageEngine)
	}
}

func TestMariaDBOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := New("").Open(ctx, engine.Target{}); err == nil {
		t.Error("Open without a DSN succeeded")
	}
	if _, err := New("myisam").Open(ctx, engine.Target{DSN: "mysql://root@tcp(127.0.0.1:1)/ib"}); err == nil || !strings.Contains(err.Error(), "unknown storage engine") {
		t.Errorf("unknown storage engine: %v", err)
	}
	if _, err := New("").Open(ctx, engine.Target{DSN: "mysql://root@tcp(127.0.0.1:1)/ib"}); err == nil {
		t.Error("Open of a closed port succeeded")
	}
}

// An InnoDB-only server (no plugin-load-add) refuses a MyRocks handle with a clear error.
func TestMariaDBRocksDBUnavailable(t *testing.T) {
	in := instance(t, InnoDB)
	_, err := New(RocksDB).Open(context.Background(), engine.Target{DSN: in.DSN})
	if err == nil {
		t.Fatal("Open with rocksdb on a server without MyRocks succeeded")
	}
	want := "storage engine rocksdb is not available on this server: install mariadb-plugin-rocksdb and load ha_rocksdb.so"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

// The dialect's statements run for real on both storage engines.
func TestMariaDBDialectExecuted(t *testing.T) {
	for _, storage := range []string{InnoDB, RocksDB} {
		t.Run(storage, func(t *testing.T) {
			ctx := context.Background()
			h := open(t, storage)
			s := newSession(t, h)
			const table = "pi_dialect"
			createPi(t, h, s, table, 1000)

			wantEngine := map[string]string{InnoDB: "InnoDB", RocksDB: "ROCKSDB"}[storage]
			if got := queryString(t, s, "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '"+table+"'"); got != wantEngine {
				t.Errorf("ENGINE = %q, want %q", got, wantEngine)
			}
			if n, _ := queryInt(t, s, "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table); n != 4 {
				t.Errorf("%d indexes, want 4 (PRIMARY and 3 secondary)", n)
			}

			// FORCE INDEX range query: 10 rows, through the named index.
			from, ok := h.Dialect().FromIndex(table, table+"_pdc")
			if !ok {
				t.Fatal("FromIndex ok = false")
			}
			q := "SELECT price, dateandtime, customerid FROM " + from + " WHERE (price >= ?) ORDER BY price, dateandtime, customerid LIMIT 10"
			st, err := s.Prepare(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for range 2 { // reuses its scan buffers
				if n, err := st.Query(ctx, engine.NewArgs(250)); err != nil || n != 10 {
					t.Fatalf("range query: %d rows, %v", n, err)
				}
			}
			plan, err := s.(*drvconn.Session).QueryStrings(ctx, "EXPLAIN "+strings.Replace(q, "?", "250", 1))
			if err != nil || len(plan) == 0 || len(plan[0]) < 6 {
				t.Fatalf("EXPLAIN: %v %q", err, plan)
			}
			key := plan[0][5] // id, select_type, table, type, possible_keys, key, …
			if key != table+"_pdc" {
				t.Errorf("EXPLAIN key = %q, want %s_pdc", key, table)
			}

			// On an empty result QueryInt says invalid.
			if _, ok := queryInt(t, s, "SELECT MIN(transactionid) FROM "+table+" WHERE transactionid < 0"); ok {
				t.Error("QueryInt of NULL: valid")
			}
			if _, ok := queryInt(t, s, "SELECT transactionid FROM "+table+" WHERE transactionid < 0"); ok {
				t.Error("QueryInt of no row: valid")
			}
		})
	}
}

func TestMariaDBInfoAndSize(t *testing.T) {
	for _, storage := range []string{InnoDB, RocksDB} {
		t.Run(storage, func(t *testing.T) {
			ctx := context.Background()
			in := instance(t, storage)
			h := open(t, storage)
			info, err := h.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(info.Version, "10.11.") || info.Version != in.Version {
				t.Errorf("Version = %q (instance %q)", info.Version, in.Version)
			}
			if filepath.Clean(info.DataDir) != in.DataDir {
				t.Errorf("DataDir = %q, want %q", info.DataDir, in.DataDir)
			}
			for k, want := range map[string]string{
				"innodb_buffer_pool_size": "134217728", "bind_address": "127.0.0.1",
				"dbperf_storage_engine": storage, "driver_interpolateParams": "false",
				"performance_schema": "ON",
			} {
				if got, ok := info.Settings[k]; !ok || got != want {
					t.Errorf("Settings[%s] = %q (present %v), want %q", k, got, ok, want)
				}
			}
			if storage == RocksDB {
				if _, ok := info.Settings["rocksdb_block_cache_size"]; !ok {
					t.Error("no rocksdb_block_cache_size setting")
				}
			}
			for k := range info.Settings {
				if strings.Contains(strings.ToLower(k), "password") {
					t.Errorf("setting %s is reported", k)
				}
			}

			s := newSession(t, h)
			createPi(t, h, s, "pi_size", 2000)
			n, err := h.Size(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n <= 0 {
				t.Errorf("Size = %d after inserts", n)
			}
			t.Logf("%s: Size = %d bytes", storage, n)
		})
	}
}

func TestMariaDBReduceDebtInnoDB(t *testing.T) {
	ctx := context.Background()
	h := open(t, InnoDB)
	s := newSession(t, h)
	createPi(t, h, s, "pi_debt", 5000)
	// Values to restore that differ from the defaults; raising max first keeps lwm ≤ max.
	mustExec(t, s, "SET GLOBAL innodb_max_dirty_pages_pct = 80")
	mustExec(t, s, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 5")
	t.Cleanup(func() {
		_, _ = s.Exec(context.Background(), "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0")
		_, _ = s.Exec(context.Background(), "SET GLOBAL innodb_max_dirty_pages_pct = 90")
	})
	detail, err := h.(engine.Maintainer).ReduceDebt(ctx, []string{"pi_debt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	for _, want := range []string{"innodb_max_dirty_pages_pct=1", "dirty pages", "restored", "ANALYZE TABLE pi_debt"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	for v, want := range map[string]string{"innodb_max_dirty_pages_pct": "80", "innodb_max_dirty_pages_pct_lwm": "5"} {
		if got := queryString(t, s, "SELECT @@GLOBAL."+v); got != want {
			t.Errorf("%s = %s after cleanup, want %s (restored)", v, got, want)
		}
	}
	// A cancelled cleanup restores the values too.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.(engine.Maintainer).ReduceDebt(cctx, []string{"pi_debt"}); err == nil {
		t.Error("cancelled cleanup succeeded")
	}
	if got := queryString(t, s, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct"); got != "80" {
		t.Errorf("innodb_max_dirty_pages_pct = %s after a cancelled cleanup", got)
	}
}

func TestMariaDBReduceDebtMyRocks(t *testing.T) {
	h := open(t, RocksDB)
	s := newSession(t, h)
	createPi(t, h, s, "pi_debt", 5000)
	detail, err := h.(engine.Maintainer).ReduceDebt(context.Background(), []string{"pi_debt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	for _, want := range []string{"wait for compactions", "rocksdb_force_flush_memtable_now=1", "ANALYZE TABLE pi_debt"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q: %s", want, detail)
		}
	}
	// The memtable was flushed: the table's data is in SST files now.
	if n, _ := queryInt(t, s, "SELECT COUNT(*) FROM information_schema.ROCKSDB_INDEX_FILE_MAP"); n == 0 {
		t.Error("no SST file after the forced flush")
	}
}

func TestMariaDBSessionPID(t *testing.T) {
	in := instance(t, InnoDB)
	h := open(t, InnoDB)
	s := newSession(t, h)
	tid, err := h.(*handle).SessionPID(s)
	if err != nil {
		t.Fatal(err)
	}
	task := fmt.Sprintf("/proc/%d/task/%d", in.PID(), tid)
	if _, err := os.Stat(task); err != nil {
		t.Errorf("thread %d is not a thread of mariadbd %d: %v", tid, in.PID(), err)
	}
	// Another session is served by another thread.
	tid2, err := h.(*handle).SessionPID(newSession(t, h))
	if err != nil {
		t.Fatal(err)
	}
	if tid2 == tid {
		t.Errorf("two sessions share thread %d", tid)
	}
}

// A prepared statement interrupted by its context (a step ending on Ctrl-C) returns at
// once: the session's watcher shuts the socket down, as the driver closes a connection
// whose statement was cancelled. The context is watched once per session, not per call:
// statements that ran under it before finish normally. Closing the statement and the
// session afterwards is not an error.
func TestMariaDBCancelledStatement(t *testing.T) {
	h := open(t, InnoDB)
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Prepare(context.Background(), "SELECT SLEEP(?)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if n, err := st.Query(ctx, engine.NewArgs(0)); err != nil || n != 1 {
		t.Fatalf("a statement under the live context: %d rows, %v", n, err)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	if _, err := st.Query(ctx, engine.NewArgs(30)); !errors.Is(err, context.Canceled) {
		t.Errorf("30 s sleep under a cancelled context: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if err := st.Close(); err != nil {
		t.Errorf("stmt Close after cancel: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("session Close after cancel: %v", err)
	}
}
