// Package engine defines what dbperf needs from a database engine. It sits between the
// catalog/cli (which open engines) and the workloads (which drive sessions); engines never
// see workloads. Every engine-specific SQL idiom lives in a driver under engine/<name>,
// exposed through Dialect so that workloads compose statements without knowing the engine.
//
// The interfaces: Engine, Handle, Session, Stmt and Args (unboxed statement arguments);
// Dialect; the optional Maintainer, ScheduleResetter (a server's periodic work
// rescheduled from now), ProcessInfo, ServerAddr and SessionLimiter (how many sessions the
// engine accepts); Diagnoser (diag.go: OpenDiag, a connection of its own
// reading the server's statement statistics, plans and every session's wait for `dbperf
// run --explain`; Statement, WaitCPU and WaitIdle); ThreadNamer (threads.go: the server's
// thread ids mapped to names for the background roles of CPU profiles); ConnObserver,
// carried in an operation's context; ClientQuery (statements prepared on the client only,
// Session.PrepareClient); RowQuerier (row.go: a statement's first row as text, for
// pgbench's \gset); ErrConflict and ErrDuplicateKey, errors a workload may retry.
// A key-value engine implements KV, with KVSession and KVOptions.
//
// The dialect is about the engine: Dialect has placeholders, types, DDL forms and
// capabilities (DeleteOrderLimit, AutoIncrementGaps, FromIndex, BeginWrite). Statements
// a workload needs (the Insert Benchmark's delete of the lowest keys) are composed in the
// workload from those. An engine's storage engines are data too (Meta.StorageEngines),
// so --mysql-storage-engine is checked and stored without naming MariaDB.
//
// Engines never read /proc. The runner asks an engine (ProcessInfo) for each session's
// pid or thread id and reads /proc itself. Connections an engine opens on its own for an
// operation (the cleanup's) are reported to the ConnObserver the runner puts in each
// worker's operation context, which reads their CPU when they open and just before they
// close.
//
// Args keeps integers as int64 and text in one reused buffer: no boxing and no string
// building per row on the client's hot path.
//
// # Adding an engine
//
// An embedded engine (one that runs inside dbperf) is a package internal/engine/<name>
// implementing Engine (and KV for a key-value engine), its conformance test through
// engine/enginetest or engine/kvtest, and one line in catalog.Engines. It needs no row
// of its own in docs/architecture.md, and it may build on the existing engines' packages
// (a PostgreSQL-protocol engine on engine/postgres). A server dbperf starts (--managed,
// `dbperf server`) has its client as above (Meta().Embedded false) and its server in
// internal/server/<name> (see package server).
package engine

import "context"

// Kind tells which workloads an engine can serve.
type Kind string

// Engine kinds.
const (
	KindSQL Kind = "sql"
	KindKV  Kind = "kv"
)

// Meta names an engine.
type Meta struct {
	Name string // as on the command line: "sqlite"
	Kind Kind
	// Embedded engines run inside the dbperf process: their CPU is the client's CPU.
	Embedded bool
	// StorageEngines are the storage engines a server offers (--mysql-storage-engine), the
	// default first: MariaDB's innodb and rocksdb. Runs of an engine that has them are
	// stored as "<name>/<storage engine>" so reports never mix them up.
	StorageEngines []string
	// StackCopy is how many bytes of each sample's user stack perf copies to unwind the
	// engine's server with DWARF under --cpu-profile (perf record --call-graph
	// dwarf,StackCopy), enough for its deepest stacks; 0: frame pointers (probe's
	// DefaultCallGraph says why).
	StackCopy int
}

// Target says where the engine's data lives or how to reach it.
type Target struct {
	// Dir is a directory the engine may use for its files (embedded engines).
	Dir string
	// DSN reaches a running server (server engines). Never printed unredacted.
	DSN string
	// KV are the options a key-value engine opens with (the workload's LSM options).
	KV KVOptions
}

// Engine opens handles to one kind of database.
type Engine interface {
	Meta() Meta
	Open(ctx context.Context, t Target) (Handle, error)
}

// Handle is an open database of either kind: a SQL engine's (SQL) or a key-value
// engine's (KV). It is safe for concurrent use. Workloads get the kind they need with
// AsSQL or AsKV (the catalog has already checked that the kinds match).
type Handle interface {
	// Info reports the engine version and its effective settings, stored with every run.
	Info(ctx context.Context) (Info, error)
	// Size reports the database's size on disk in bytes.
	Size(ctx context.Context) (int64, error)
	Close() error
}

// SQL is an open SQL database. It is safe for concurrent use; sessions are not.
type SQL interface {
	Handle
	// NewSession opens one connection. Each worker gets its own session and never shares it.
	NewSession(ctx context.Context) (Session, error)
	Dialect() Dialect
}

// Info describes the engine as it runs.
type Info struct {
	Version  string
	Settings map[string]string
	// DataDir is the directory holding the data, when known (for the env's filesystem).
	DataDir string
}

// Session is one database connection. All of its methods run one statement in autocommit
// mode unless the statement itself is a transaction.
type Session interface {
	// Prepare prepares a statement on this connection; it stays valid until the session closes.
	Prepare(ctx context.Context, query string) (Stmt, error)
	// PrepareClient returns a statement prepared on the client only, as sysbench's
	// --db-ps-mode=disable sends statements: query has Prepare's placeholders, and every
	// execution sends it as one text statement with the arguments inlined as SQL literals
	// (ClientQuery), which the server parses and plans anew. Like a prepared statement's,
	// its executions start no goroutine or context watcher and reuse their buffers; rows
	// come back in the engine's text format.
	PrepareClient(ctx context.Context, query string) (Stmt, error)
	// Exec runs a statement that is not worth preparing (DDL, maintenance).
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	Close() error
}

// Stmt is a prepared statement bound to one session. args may be nil (no arguments); the
// statement reads it only during the call. A statement aborted by a conflict with another
// transaction returns an error wrapping ErrConflict (or ErrDuplicateKey), so a workload
// can tell it from a failure. A cancelled ctx interrupts the statement in flight by the
// engine's own mechanism (engines register one watcher per session and context, not one
// per call, so passing the same ctx to every call costs nothing).
type Stmt interface {
	// Exec runs the statement and returns the rows it affected.
	Exec(ctx context.Context, args *Args) (rowsAffected int64, err error)
	// Query runs the statement, reads every row it returns and discards them, and returns
	// the number of rows read (so the work of fetching is measured, as the reference does).
	Query(ctx context.Context, args *Args) (rows int64, err error)
	// QueryInt runs a query returning one row with one integer column; valid is false when
	// the value is NULL or no row came back.
	QueryInt(ctx context.Context, args *Args) (v int64, valid bool, err error)
	Close() error
}

// Pipeliner is implemented by sessions that can send several executions before reading
// any result (PostgreSQL's pipeline mode; pgbench's \startpipeline … \endpipeline): one
// write and one wait for the whole batch instead of one round trip per statement.
type Pipeliner interface {
	// Queue adds an execution of st (a statement of this session, prepared or prepared on
	// the client) with args to the pipeline; args are read before Queue returns.
	Queue(st Stmt, args *Args) error
	// Sync sends the queued executions and a Sync and reads every result: rows[i] is the
	// i-th execution's rows (read, or affected). The first execution that fails ends the
	// batch (the server skips the rest up to the Sync): failed is its index, err its
	// error (a conflict wraps ErrConflict); failed is -1 when none did.
	Sync(ctx context.Context) (rows []int64, failed int, err error)
	// Reset drops the queued executions unsent (a batch abandoned before its Sync).
	Reset()
}

// Index is a secondary index to create.
type Index struct {
	Name    string
	Columns []string
}

// Dialect holds one engine's SQL idioms. Workloads build their statements from these parts.
type Dialect interface {
	// Name of the dialect ("sqlite", "postgres", "mysql").
	Name() string
	// Placeholder returns the bind marker for the n-th (1-based) argument: "?" or "$n".
	Placeholder(n int) string
	// AutoIncrementPK is the column definition of a 64-bit auto-assigned primary key,
	// e.g. "bigint NOT NULL AUTO_INCREMENT PRIMARY KEY".
	AutoIncrementPK() string
	// AutoIncrementPK32 is the same with a 32-bit key where the engine has one (sysbench's
	// "INTEGER NOT NULL AUTO_INCREMENT", PostgreSQL's serial); SQLite's key is its 64-bit
	// rowid whatever its declared type.
	AutoIncrementPK32() string
	// DateTimeType is the column type for a date and time without time zone.
	DateTimeType() string
	// CreateTable returns the statements creating a table with the given column
	// definitions (already rendered) and any engine-specific follow-ups.
	CreateTable(table string, columns []string) []string
	// DropTable drops a table if it exists.
	DropTable(table string) string
	// CreateIndexes returns the statements creating indexes in this engine's idiom
	// (one ALTER for several, one per index, or CREATE INDEX each).
	CreateIndexes(table string, idx []Index) []string
	// FromIndex renders "table" forced to use an index when the engine has a hint
	// (" FORCE INDEX (i)", " INDEXED BY i"); ok is false when it has none.
	FromIndex(table, index string) (from string, ok bool)
	// DeleteOrderLimit says whether DELETE … ORDER BY … LIMIT n is supported (MySQL);
	// elsewhere the rows are picked in a subselect.
	DeleteOrderLimit() bool
	// AutoIncrementGaps says whether the engine's auto-increment may leave gaps in
	// committed keys (InnoDB auto-inc, Postgres sequence caches).
	AutoIncrementGaps() bool
	// BeginWrite is the statement that starts a transaction which will write: "BEGIN",
	// or where a transaction that has read cannot wait for the write lock (SQLite: it
	// fails at once with SQLITE_BUSY when another connection wrote since), the form that
	// takes the write lock first, so concurrent writers queue instead of failing.
	BeginWrite() string
}

// ScheduleResetter is implemented by server engines whose periodic background work
// (PostgreSQL's autovacuum launcher visiting each database) can be rescheduled from now
// without a restart. Servers started apart run that work on clocks as far apart;
// reset at one moment, they run it on one clock, so servers compared slice by slice
// vacuum the same table at the same moment.
type ScheduleResetter interface {
	// ResetSchedules reschedules the server's periodic work from now (PostgreSQL:
	// pg_reload_conf(), on which the launcher rebuilds its schedule).
	ResetSchedules(ctx context.Context) error
}

// Maintainer is implemented by engines that can reduce writeback debt between steps
// (spec "Cleanup (writeback-debt reduction) per engine").
type Maintainer interface {
	// ReduceDebt does the engine's cleanup for the given tables and reports what it did.
	// No tables: the engine's cleanup of the whole database (what acts on single tables,
	// such as PostgreSQL's VACUUM, then covers every table; MariaDB's ANALYZE TABLE is
	// left out).
	ReduceDebt(ctx context.Context, tables []string) (detail string, err error)
}

// ServerAddr is implemented by server handles that can say where their server listens,
// so dbperf can find a server on this machine from the socket it listens on, without
// asking the server (MariaDB names a connection's thread only with performance_schema).
type ServerAddr interface {
	// ServerAddr is "unix" and the socket's path, or "tcp" and host:port, as the handle
	// connects.
	ServerAddr() (network, address string)
}

// ConnObserver is told about the connections an engine opens on its own while it serves
// an operation — the cleanup's VACUUM connections — so that their server-side CPU can be
// measured like a session's. Engines find it with ConnObserverFrom in the operation's
// context; its methods are safe for concurrent use and return quickly.
type ConnObserver interface {
	// ConnOpened: a connection served by server process or thread id is open.
	ConnOpened(id int)
	// ConnClosing: the connection served by id is about to close; its process or thread
	// may be gone right after, so the observer reads its CPU now.
	ConnClosing(id int)
}

type connObserverKey struct{}

// WithConnObserver returns a context carrying o for the engine calls made under it.
func WithConnObserver(ctx context.Context, o ConnObserver) context.Context {
	return context.WithValue(ctx, connObserverKey{}, o)
}

// ConnObserverFrom is ctx's ConnObserver, or nil when nobody observes.
func ConnObserverFrom(ctx context.Context) ConnObserver {
	o, _ := ctx.Value(connObserverKey{}).(ConnObserver)
	return o
}

// ProcessInfo is implemented by server engines that can name the OS process or thread
// serving a session (Postgres: the backend's pid; MariaDB: the connection's thread id), so
// the runner can read per-connection CPU from /proc/PID/stat or /proc/PID/task/TID/stat.
type ProcessInfo interface {
	SessionPID(s Session) (int, error)
	// Local says the handle reaches its server through a unix socket or a loopback
	// address, so the server's processes are this machine's and SessionPID's ids are
	// this machine's /proc entries.
	Local() bool
}
