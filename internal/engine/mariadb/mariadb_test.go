package mariadb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/dbperf/dbperf/internal/engine/enginetest"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
)

// Tests share one managed server per storage engine. Both servers start together, in the
// background, when a test first needs one (a start takes seconds, mostly waiting for the
// server), and TestMain stops them. Each test uses its own tables.
var (
	startOnce sync.Once
	starts    = map[string]*serverStart{} // by storage engine, filled once by startServers
	workDir   string
)

// serverStart is a server starting in the background; done is closed when in or err is set.
type serverStart struct {
	done chan struct{}
	in   *server.Instance
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, st := range starts {
		<-st.done
		if st.in != nil {
			_ = st.in.Stop(context.Background())
		}
	}
	if workDir != "" {
		_ = os.RemoveAll(workDir)
	}
	os.Exit(code)
}

// rocksDBPlugin is MyRocks as Debian's mariadb-plugin-rocksdb installs it; without it the
// MyRocks tests skip.
const rocksDBPlugin = "/usr/lib/mysql/plugin/ha_rocksdb.so"

// startServers starts the InnoDB server and, when its plugin is installed, the MyRocks one.
func startServers() {
	dir, err := os.MkdirTemp("", "dbperf-mariadb-test-")
	if err == nil {
		workDir = dir
	}
	for _, storage := range []string{InnoDB, RocksDB} {
		if _, perr := os.Stat(rocksDBPlugin); storage == RocksDB && perr != nil {
			continue
		}
		st := &serverStart{done: make(chan struct{}), err: err}
		starts[storage] = st
		if err != nil {
			close(st.done)
			continue
		}
		go func() {
			defer close(st.done)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			st.in, st.err = mariadbserver.Start(ctx, server.Options{
				WorkDir: dir, ProfilesDir: "../../../profiles", Profile: "default", StorageEngine: storage,
			})
		}()
	}
}

// instance returns the shared server for a storage engine, waiting for its start.
func instance(t *testing.T, storage string) *server.Instance {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		t.Skipf("MariaDB not installed (%v): apt-get install mariadb-server mariadb-plugin-rocksdb", err)
	}
	if storage == RocksDB {
		if _, err := os.Stat(rocksDBPlugin); err != nil {
			t.Skipf("MyRocks not installed (%v): apt-get install mariadb-plugin-rocksdb", err)
		}
	}
	startOnce.Do(startServers)
	st := starts[storage]
	<-st.done
	if st.err != nil {
		t.Fatalf("start MariaDB with %s: %v", storage, st.err)
	}
	return st.in
}

func open(t *testing.T, storage string) engine.SQL {
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
	return h.(engine.SQL)
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
func createPi(t *testing.T, h engine.SQL, s engine.Session, table string, n int) {
	t.Helper()
	ctx := context.Background()
	d := h.Dialect()
	enginetest.MustExec(t, s, d.DropTable(table))
	t.Cleanup(func() { _, _ = s.Exec(context.Background(), d.DropTable(table)) })
	cols := []string{
		"transactionid " + d.AutoIncrementPK(),
		"dateandtime " + d.DateTimeType(),
		"cashregisterid int NOT NULL", "customerid int NOT NULL", "productid int NOT NULL",
		"price int NOT NULL", "data varchar(4000)",
	}
	for _, q := range d.CreateTable(table, cols) {
		enginetest.MustExec(t, s, q)
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
		enginetest.MustExec(t, s, q)
	}
}

func TestMariaDBMeta(t *testing.T) {
	if m := New("").Meta(); !reflect.DeepEqual(m, engine.Meta{Name: "mariadb", Kind: engine.KindSQL, StorageEngines: []string{"innodb", "rocksdb"}, StackCopy: 65528}) {
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

// Info reports the server's version, data directory and variables with dbperf's own
// settings, and no secret (the suite checks Size and what every engine reports).
func TestMariaDBInfo(t *testing.T) {
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
		})
	}
}

// The dialect's statements take the storage engine into account: tables are created
// with it, and indexes are built in one ALTER TABLE on InnoDB (one scan of the table) but
// one ALTER TABLE each on MyRocks (reference §1.3).
func TestMariaDBDialectStorageEngine(t *testing.T) {
	for _, tc := range []struct{ storage, engine string }{{InnoDB, "InnoDB"}, {RocksDB, "ROCKSDB"}} {
		t.Run(tc.storage, func(t *testing.T) {
			h := open(t, tc.storage)
			s := enginetest.NewSession(t, h)
			d := h.Dialect()
			const table = "pi_dialect"
			idx := []engine.Index{
				{Name: table + "_marketsegment", Columns: []string{"productid", "customerid", "price"}},
				{Name: table + "_registersegment", Columns: []string{"cashregisterid", "customerid", "price"}},
				{Name: table + "_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
			}
			stmts := d.CreateIndexes(table, idx)
			if want := map[string]int{InnoDB: 1, RocksDB: len(idx)}[tc.storage]; len(stmts) != want {
				t.Errorf("CreateIndexes: %d statements %q, want %d", len(stmts), stmts, want)
			}
			createPi(t, h, s, table, 1000) // runs CreateTable's and CreateIndexes' statements
			if got := queryString(t, s, "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '"+table+"'"); got != tc.engine {
				t.Errorf("ENGINE = %q, want %q", got, tc.engine)
			}
			if n, _ := enginetest.QueryInt(t, s, "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table); n != 4 {
				t.Errorf("%d indexes, want 4 (PRIMARY and 3 secondary)", n)
			}
		})
	}
}

func TestMariaDBReduceDebtInnoDB(t *testing.T) {
	ctx := context.Background()
	h := open(t, InnoDB)
	s := enginetest.NewSession(t, h)
	createPi(t, h, s, "pi_debt", 5000)
	// Values to restore that differ from the defaults; raising max first keeps lwm ≤ max.
	enginetest.MustExec(t, s, "SET GLOBAL innodb_max_dirty_pages_pct = 80")
	enginetest.MustExec(t, s, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 5")
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
	s := enginetest.NewSession(t, h)
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
	if n, _ := enginetest.QueryInt(t, s, "SELECT COUNT(*) FROM information_schema.ROCKSDB_INDEX_FILE_MAP"); n == 0 {
		t.Error("no SST file after the forced flush")
	}
}

func TestMariaDBSessionPID(t *testing.T) {
	in := instance(t, InnoDB)
	h := open(t, InnoDB)
	s := enginetest.NewSession(t, h)
	tid, err := h.(*handle).SessionPID(s)
	if err != nil {
		t.Fatal(err)
	}
	task := fmt.Sprintf("/proc/%d/task/%d", in.PID(), tid)
	if _, err := os.Stat(task); err != nil {
		t.Errorf("thread %d is not a thread of mariadbd %d: %v", tid, in.PID(), err)
	}
	// Another session is served by another thread.
	tid2, err := h.(*handle).SessionPID(enginetest.NewSession(t, h))
	if err != nil {
		t.Fatal(err)
	}
	if tid2 == tid {
		t.Errorf("two sessions share thread %d", tid)
	}
}
