// Package mariadb is dbperf's MariaDB engine (github.com/go-sql-driver/mysql; it works
// against MySQL too). Benchmark sessions use the driver's connection directly
// (engine/drvconn) over a socket in blocking mode (engine/blockconn); Info, Size and the
// cleanup use a database/sql pool. InnoDB and MyRocks are two configurations of
// it: the storage engine chosen with New decides the ENGINE= of created tables, the index
// DDL idiom, the size measurement and the cleanup. In the flow it is one of the drivers
// under engine: the catalog lists it, the cli opens it on a server's DSN (often a throwaway
// server from internal/server), and the runner gives each worker a Session on its own
// connection. All MySQL-family SQL lives here, exposed to workloads through Dialect; the
// driver settings and why they were chosen are listed once, in Settings.
//
// A session is a driver connection over engine/blockconn, on the managed server's unix
// socket when there is one. maintain.go holds the InnoDB and MyRocks cleanups, dialect.go
// their dialects. diag.go is `dbperf run --explain`: performance_schema's statement
// digests and prepared statements, EXPLAIN FORMAT=JSON of the statement history's
// texts, and the current waits. threads.go names the server's threads from
// performance_schema (engine.ThreadNamer). Cancellation and argument passing are
// engine/drvconn's.
package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/blockconn"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/go-sql-driver/mysql"
)

// maxIdleConns keeps closed sessions' connections for reuse: one per actor is enough for
// any realistic --clients.
const maxIdleConns = 256

// sessionPIDTimeout bounds SessionPID's two queries.
const sessionPIDTimeout = 10 * time.Second

// Engine opens handles to MariaDB (or MySQL) servers.
type Engine struct {
	// StorageEngine is InnoDB ("innodb") or RocksDB ("rocksdb", MyRocks).
	StorageEngine string
}

// New returns the MariaDB engine for a storage engine: "innodb" (also for "") or "rocksdb".
// Other names are rejected by Open.
func New(storageEngine string) *Engine {
	se := strings.ToLower(storageEngine)
	if se == "" {
		se = InnoDB
	}
	return &Engine{StorageEngine: se}
}

var (
	_ engine.Engine      = (*Engine)(nil)
	_ engine.Handle      = (*handle)(nil)
	_ engine.Maintainer  = (*handle)(nil)
	_ engine.ProcessInfo = (*handle)(nil)
	_ engine.ServerAddr  = (*handle)(nil)
)

// Meta names the engine. It is a server: its CPU is not the client's.
func (*Engine) Meta() engine.Meta {
	// The most perf copies: statements' stacks stopped at dispatch_command in 16 KiB
	// (16–20% of the query role's samples), 11.4's index build (ALTER TABLE) above
	// Sql_cmd_alter_table::execute even in 32 KiB; 65528 bytes reach the thread's start
	// (docs/measurements/2026-11-28-unwinding.md).
	return engine.Meta{Name: "mariadb", Kind: engine.KindSQL, StorageEngines: []string{InnoDB, RocksDB}, StackCopy: 65528}
}

// Open connects to the server named by t.DSN (forms: see config), checks the connection and
// that the storage engine is available, and returns a pool from which sessions are taken.
func (e *Engine) Open(ctx context.Context, t engine.Target) (engine.Handle, error) {
	se := strings.ToLower(e.StorageEngine)
	if se == "" {
		se = InnoDB
	}
	if se != InnoDB && se != RocksDB {
		return nil, fmt.Errorf("mariadb open: unknown storage engine %q (want %s or %s)", e.StorageEngine, InnoDB, RocksDB)
	}
	if t.DSN == "" {
		return nil, errors.New("mariadb open: a server DSN is required (mysql://user@tcp(host:port)/db)")
	}
	cfg, err := config(t.DSN)
	if err != nil {
		return nil, fmt.Errorf("mariadb open: %w", err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb open: %w", err)
	}
	db := sql.OpenDB(conn)
	// Unlimited open connections: every actor holds its own session for the whole step.
	db.SetMaxOpenConns(0)
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	where := cfg.Net + "(" + cfg.Addr + ")/" + cfg.DBName
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("mariadb open %s: %w", where, err)
	}
	if err := checkStorageEngine(ctx, db, se); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("mariadb open %s: %w", where, err)
	}
	return &handle{db: db, cfg: cfg, storage: se}, nil
}

// checkStorageEngine fails unless the server supports se (SUPPORT is YES or DEFAULT).
func checkStorageEngine(ctx context.Context, db *sql.DB, se string) error {
	var support string
	err := db.QueryRowContext(ctx,
		"SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = ?", strings.ToUpper(se)).Scan(&support)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check storage engine %s: %w", se, err)
	}
	if support == "YES" || support == "DEFAULT" {
		return nil
	}
	if se == RocksDB {
		return errors.New("storage engine rocksdb is not available on this server: install mariadb-plugin-rocksdb and load ha_rocksdb.so (plugin-load-add=ha_rocksdb.so)")
	}
	return fmt.Errorf("storage engine %s is not available on this server (SUPPORT=%q)", se, support)
}

// handle is an open MariaDB database: a database/sql pool over one server and schema.
type handle struct {
	db      *sql.DB
	cfg     *mysql.Config
	storage string // InnoDB or RocksDB
}

// NewSession opens a connection of its own for the caller's exclusive use: dialled through
// blockconn and switched to blocking reads once connected (see package blockconn for why).
// A cancelled context interrupts the statement in flight by closing the connection (the
// socket is shut down, so the waiting read returns), as the driver itself does.
func (h *handle) NewSession(ctx context.Context) (engine.Session, error) {
	cfg := h.cfg.Clone()
	var bc *blockconn.Conn
	d := &blockconn.Dialer{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			bc = c.(*blockconn.Conn)
		}
		return c, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb new session: %w", err)
	}
	c, err := conn.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mariadb new session: %w", err)
	}
	if bc == nil {
		_ = c.Close()
		return nil, errors.New("mariadb new session: the connection was not made by dbperf's dialer")
	}
	if err := bc.Block(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mariadb new session: %w", err)
	}
	return drvconn.New(c, drvconn.Options{Engine: "mariadb", ValueArgs: true, Interrupt: bc.Shutdown,
		Classify: classify, BackslashEscapes: true}), nil
}

// classify names the errors a workload may retry: sysbench's default ignorable errors
// (--mysql-ignore-errors=1213,1020,1205: deadlock, record changed since it was read,
// lock wait timeout; MyRocks reports snapshot conflicts as 1213 and its lock waits as
// 1205) are conflicts; 1062 is a duplicate key.
func classify(err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return nil
	}
	switch me.Number {
	case 1213, 1020, 1205:
		return engine.ErrConflict
	case 1062:
		return engine.ErrDuplicateKey
	}
	return nil
}

// Dialect returns the MySQL dialect for the handle's storage engine.
func (h *handle) Dialect() engine.Dialect { return Dialect{StorageEngine: h.storage} }

// Info reports VERSION(), every global variable (SHOW GLOBAL VARIABLES, without any whose
// name mentions a password or authentication secret) and @@datadir. dbperf's own choices are
// added under names no server variable has: dbperf_storage_engine, driver, and the driver
// Settings as driver_<param>.
func (h *handle) Info(ctx context.Context) (engine.Info, error) {
	c, err := h.db.Conn(ctx)
	if err != nil {
		return engine.Info{}, fmt.Errorf("mariadb info: %w", err)
	}
	defer c.Close()
	info := engine.Info{Settings: map[string]string{}}
	if err := c.QueryRowContext(ctx, "SELECT VERSION(), @@datadir").Scan(&info.Version, &info.DataDir); err != nil {
		return engine.Info{}, fmt.Errorf("mariadb info: version: %w", err)
	}
	rows, err := c.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return engine.Info{}, fmt.Errorf("mariadb info: SHOW GLOBAL VARIABLES: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return engine.Info{}, fmt.Errorf("mariadb info: SHOW GLOBAL VARIABLES: %w", err)
		}
		if secret(name) {
			continue
		}
		info.Settings[name] = value.String
	}
	if err := rows.Err(); err != nil {
		return engine.Info{}, fmt.Errorf("mariadb info: SHOW GLOBAL VARIABLES: %w", err)
	}
	info.Settings["dbperf_storage_engine"] = h.storage
	info.Settings["driver"] = "go-sql-driver/mysql"
	for _, s := range Settings() {
		info.Settings["driver_"+s.Param] = s.Value
	}
	return info, nil
}

// secret says whether a variable may hold a credential (wsrep_sst_auth, *password*).
func secret(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "password") || strings.HasSuffix(n, "_auth") || strings.Contains(n, "secret")
}

// Size is the bytes the benchmark's data takes on disk. When the server is local (unix
// socket or loopback TCP) and its data directory is readable here, it is the sum of file
// sizes under <datadir>/<db> for InnoDB (file-per-table .ibd files, the default; the system
// tablespace, undo and redo logs are not counted) or under <datadir>/#rocksdb for MyRocks
// (all SST files and WAL of the server: dbperf's throwaway servers hold only the benchmark's
// schema). Otherwise it is SUM(DATA_LENGTH + INDEX_LENGTH) of the schema's tables from
// information_schema.TABLES, which is estimated from statistics (approximate, and for
// MyRocks it does not count data still in memtables).
func (h *handle) Size(ctx context.Context) (int64, error) {
	if h.Local() {
		var datadir string
		if err := h.db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&datadir); err != nil {
			return 0, fmt.Errorf("mariadb size: datadir: %w", err)
		}
		dir := filepath.Join(datadir, h.cfg.DBName)
		if h.storage == RocksDB {
			dir = filepath.Join(datadir, "#rocksdb")
		}
		if n, err := engine.DirBytes(dir); err == nil {
			return n, nil
		}
		// Not readable here (another user's or another host's datadir): ask the server.
	}
	var n sql.NullInt64
	err := h.db.QueryRowContext(ctx,
		"SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("mariadb size: information_schema.TABLES: %w", err)
	}
	return n.Int64, nil
}

// Local says whether the server runs on this machine (unix socket or a loopback address).
func (h *handle) Local() bool {
	if h.cfg.Net == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(h.cfg.Addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SessionPID is the OS thread id of the server thread serving s (a session of this
// handle), from performance_schema.threads.THREAD_OS_ID: with it the per-thread CPU of one
// connection can be read from /proc/<server pid>/task/<tid>/stat. It needs
// performance_schema=ON (dbperf's profiles turn it on). It runs on the session's own
// connection, so it must not be called while the session is in use.
func (h *handle) SessionPID(s engine.Session) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionPIDTimeout)
	defer cancel()
	ss, ok := s.(*drvconn.Session)
	if !ok {
		return 0, fmt.Errorf("mariadb session pid: %T is not a mariadb session", s)
	}
	rows, err := ss.QueryStrings(ctx, "SELECT @@performance_schema")
	if err != nil {
		return 0, fmt.Errorf("mariadb session pid: @@performance_schema: %w", err)
	}
	if on := firstValue(rows); on != "1" && !strings.EqualFold(on, "ON") {
		return 0, errors.New("mariadb session pid: performance_schema is off on this server: start it with performance_schema=ON to get connection thread ids")
	}
	rows, err = ss.QueryStrings(ctx,
		"SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()")
	if err != nil {
		return 0, fmt.Errorf("mariadb session pid: %w", err)
	}
	tid, err := strconv.Atoi(firstValue(rows))
	if err != nil || tid <= 0 {
		return 0, errors.New("mariadb session pid: performance_schema.threads has no OS thread id for this connection (thread instrumentation disabled?)")
	}
	return tid, nil
}

// firstValue is the first column of the first row ("" when there is none).
func firstValue(rows [][]string) string {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return ""
	}
	return rows[0][0]
}

// threadOSID is the OS thread id of the server thread serving the pool connection c
// (the cleanup's), from performance_schema.threads.THREAD_OS_ID as SessionPID.
func threadOSID(ctx context.Context, c *sql.Conn) (int, error) {
	var on sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return 0, fmt.Errorf("mariadb session pid: @@performance_schema: %w", err)
	}
	if on.String != "1" && !strings.EqualFold(on.String, "ON") {
		return 0, errors.New("mariadb session pid: performance_schema is off on this server: start it with performance_schema=ON to get connection thread ids")
	}
	var tid sql.NullInt64
	err := c.QueryRowContext(ctx,
		"SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()").Scan(&tid)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !tid.Valid) {
		return 0, errors.New("mariadb session pid: performance_schema.threads has no OS thread id for this connection (thread instrumentation disabled?)")
	}
	if err != nil {
		return 0, fmt.Errorf("mariadb session pid: %w", err)
	}
	return int(tid.Int64), nil
}

// ServerAddr is where the handle connects: cfg's network ("tcp" or "unix") and address.
func (h *handle) ServerAddr() (network, address string) {
	return h.cfg.Net, h.cfg.Addr
}

// Close closes every connection of the pool.
func (h *handle) Close() error {
	if err := h.db.Close(); err != nil {
		return fmt.Errorf("mariadb close: %w", err)
	}
	return nil
}

// quoteIdent quotes an identifier with backticks for statements built here (ANALYZE TABLE).
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

var _ engine.SQL = (*handle)(nil)
