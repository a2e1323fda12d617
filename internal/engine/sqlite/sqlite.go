// Package sqlite is dbperf's embedded SQLite engine (mattn/go-sqlite3). In the flow it is
// one of the drivers under engine: the catalog lists it, the cli opens it on a directory
// with Open, and the runner gives each worker a Session on its own connection, used through
// the driver's interfaces directly (engine/drvconn), not database/sql; Info and Size use a
// database/sql pool. All SQLite-specific SQL lives here, exposed to workloads through Dialect;
// the connection settings and why they were chosen are listed once, in Settings.
// maintain.go is its cleanup (the writeback-debt reduction, engine.Maintainer).
// Cancellation and argument passing are engine/drvconn's.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/drvconn"
	"github.com/mattn/go-sqlite3"
)

// FileName is the database file Open creates inside Target.Dir.
const FileName = "dbperf.sqlite"

// maxIdleConns keeps closed sessions' connections for reuse: one per actor is enough for
// any realistic --clients, and a reused connection has the same DSN settings.
const maxIdleConns = 256

// Engine opens embedded SQLite databases.
type Engine struct{}

// New returns the SQLite engine.
func New() *Engine { return &Engine{} }

var (
	_ engine.Engine     = (*Engine)(nil)
	_ engine.Handle     = (*handle)(nil)
	_ engine.Maintainer = (*handle)(nil)
)

// Meta names the engine. SQLite runs inside the dbperf process, so its CPU is the client's.
func (*Engine) Meta() engine.Meta {
	return engine.Meta{Name: "sqlite", Kind: engine.KindSQL, Embedded: true}
}

// Open opens (creating it if needed) <t.Dir>/dbperf.sqlite with the connection settings of
// Settings applied to every pooled connection.
func (*Engine) Open(ctx context.Context, t engine.Target) (engine.Handle, error) {
	if t.Dir == "" {
		return nil, errors.New("sqlite open: a data directory is required (target dir is empty)")
	}
	if err := os.MkdirAll(t.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite open: %w", err)
	}
	path := filepath.Join(t.Dir, FileName)
	name, err := dsn(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite open: %w", err)
	}
	db, err := sql.Open("sqlite3", name)
	if err != nil {
		return nil, fmt.Errorf("sqlite open %s: %w", path, err)
	}
	// Unlimited open connections: every actor holds its own session for the whole step.
	db.SetMaxOpenConns(0)
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// The first connection creates the file and switches it to WAL. It is closed at once:
	// kept in the pool, a later wal_checkpoint(TRUNCATE) run on it reports busy for as long
	// as another connection has written since (observed with mattn/go-sqlite3 1.14).
	if err := ctx.Err(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite open %s: %w", path, err)
	}
	first, err := (&sqlite3.SQLiteDriver{}).Open(name)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite open %s: %w", path, err)
	}
	if err := first.Close(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite open %s: %w", path, err)
	}
	return &handle{db: db, dir: t.Dir, path: path, dsn: name}, nil
}

// handle is an open SQLite database: a database/sql pool over one file (for Info), and
// the DSN every session's own connection is opened with.
type handle struct {
	db   *sql.DB
	dir  string
	path string
	dsn  string
}

// NewSession opens a connection of its own for the caller's exclusive use, with the
// Settings applied. Its prepared statements are not interrupted by a cancelled context:
// each runs in this process for milliseconds and the step stops after it (drvconn);
// Session.Exec (DDL such as CREATE INDEX) is interrupted by the driver.
func (h *handle) NewSession(ctx context.Context) (engine.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite new session: %w", err)
	}
	c, err := (&sqlite3.SQLiteDriver{}).Open(h.dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite new session %s: %w", h.path, err)
	}
	return drvconn.New(c, drvconn.Options{Engine: "sqlite", Classify: classify}), nil
}

// classify names the errors a workload may retry: SQLITE_BUSY and SQLITE_LOCKED are
// conflicts (a transaction that read first and then writes gets SQLITE_BUSY at once, not
// after the busy timeout, when another connection wrote in between), a violated primary
// key or unique index is a duplicate key.
func classify(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch {
	case se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked:
		return engine.ErrConflict
	case se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey || se.ExtendedCode == sqlite3.ErrConstraintUnique:
		return engine.ErrDuplicateKey
	}
	return nil
}

// Dialect returns SQLite's SQL idioms.
func (h *handle) Dialect() engine.Dialect { return Dialect{} }

// Info reports the library version and the effective settings, read back on one connection.
func (h *handle) Info(ctx context.Context) (engine.Info, error) {
	c, err := h.db.Conn(ctx)
	if err != nil {
		return engine.Info{}, fmt.Errorf("sqlite info: %w", err)
	}
	defer c.Close()
	info := engine.Info{Settings: map[string]string{}, DataDir: h.dir}
	if err := c.QueryRowContext(ctx, "select sqlite_version()").Scan(&info.Version); err != nil {
		return engine.Info{}, fmt.Errorf("sqlite info: version: %w", err)
	}
	for _, p := range infoPragmas() {
		var v string
		if err := c.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			return engine.Info{}, fmt.Errorf("sqlite info: PRAGMA %s: %w", p, err)
		}
		info.Settings[p] = pragmaValue(p, v)
	}
	info.Settings["driver"] = "mattn/go-sqlite3"
	info.Settings["path"] = h.path
	return info, nil
}

// Size is the bytes of the database file and its -wal and -shm companions.
func (h *handle) Size(context.Context) (int64, error) {
	var total int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		st, err := os.Stat(h.path + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite size: %w", err)
		}
		total += st.Size()
	}
	return total, nil
}

// Close closes every connection of the pool.
func (h *handle) Close() error {
	if err := h.db.Close(); err != nil {
		return fmt.Errorf("sqlite close: %w", err)
	}
	return nil
}

var _ engine.SQL = (*handle)(nil)
