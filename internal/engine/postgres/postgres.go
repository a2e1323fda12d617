// Package postgres is dbperf's PostgreSQL engine, on pgx's native API (not database/sql).
// In the flow it is one of the drivers under engine: the catalog lists it, the cli opens
// it on a server's DSN (a managed one from internal/server, or any reachable server), and
// the runner gives each worker a Session: its own connection, with statements prepared on
// the server as the reference does (reference §1.8). All PostgreSQL-specific SQL lives
// here, exposed to workloads through Dialect; session settings are listed in Settings.
//
// A session is one *pgx.Conn over engine/blockconn. Prepared statements are executed on
// pgconn with their own argument encoding. maintain.go is the cleanup (VACUUM, then
// CHECKPOINT). diag.go is `dbperf run --explain`: pg_stat_statements (its tracking turned
// on by ALTER SYSTEM on a managed server), generic plans (PREPARE and EXPLAIN (FORMAT
// JSON, COSTS OFF) EXECUTE under force_generic_plan), custom plans (force_custom_plan,
// EXECUTE with sampled parameters: engine.CustomPlanner), and pg_stat_activity's waits.
// samples.go keeps one sample of each prepared statement's arguments per step (copied
// when the diag's epoch moved: one atomic load per operation), matched to
// pg_stat_statements' normalized text.
//
// The client's hot path: no pgtype.Map lookup per argument, since engine.Args is encoded
// straight into the Bind message's values; Bind, Execute and Sync are encoded with
// pgproto3 into the statement's own buffer and written to the socket directly
// (pgproto3's Frontend shrinks its buffer to 1 KiB after every flush: 34 KB of garbage
// per 100-row INSERT); the results are read through pgconn. No pgx AfterFunc per call:
// cancellation is one context.AfterFunc per session and context (engine.ContextWatch),
// which shuts the socket down and sends a cancel request.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/blockconn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// Engine opens PostgreSQL databases on running servers.
type Engine struct{}

// New returns the PostgreSQL engine.
func New() *Engine { return &Engine{} }

var (
	_ engine.Engine      = (*Engine)(nil)
	_ engine.Handle      = (*handle)(nil)
	_ engine.Maintainer  = (*handle)(nil)
	_ engine.ProcessInfo = (*handle)(nil)
	_ engine.ServerAddr  = (*handle)(nil)
)

// Meta names the engine. The server is a separate process.
func (*Engine) Meta() engine.Meta {
	// 16 KiB reaches main from the query role's stacks; 8 KiB (perf's default) left the
	// postmaster's frames (ServerLoop's is large) out of a fifth of them
	// (docs/measurements/2026-11-28-unwinding.md).
	return engine.Meta{Name: "postgres", Kind: engine.KindSQL, Embedded: false, StackCopy: 16384}
}

// Open parses t.DSN (a postgres:// URL or key=value string) and connects once to check it.
// The handle keeps the configuration; every session opens its own connection.
func (*Engine) Open(ctx context.Context, t engine.Target) (engine.Handle, error) {
	if t.DSN == "" {
		return nil, errors.New("postgres open: a DSN is required (target DSN is empty)")
	}
	cfg, err := connConfig(t.DSN)
	if err != nil {
		// pgx's parse errors redact the password.
		return nil, fmt.Errorf("postgres open: invalid DSN: %w", err)
	}
	h := &handle{cfg: cfg}
	c, err := h.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres open: %w", err)
	}
	if err := c.Close(ctx); err != nil {
		return nil, fmt.Errorf("postgres open: %w", err)
	}
	return h, nil
}

// handle is a reachable PostgreSQL database: a connection configuration. It holds no
// connection of its own, so it is safe for concurrent use.
type handle struct {
	cfg *pgx.ConnConfig
	// samples are the sessions' samples of their statements' arguments, for the diag.
	samples paramSamples
}

// where says which server and database a connection goes to, without the password.
func (h *handle) where() string {
	return fmt.Sprintf("%s@%s:%d/%s", h.cfg.User, h.cfg.Host, h.cfg.Port, h.cfg.Database)
}

// connect opens one connection with the session settings.
func (h *handle) connect(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, h.cfg.Copy())
	if err != nil {
		// pgx lists every address it tried on a line of its own: one line reads better.
		return nil, fmt.Errorf("cannot connect to %s: %s", h.where(), strings.Join(strings.Fields(err.Error()), " "))
	}
	return c, nil
}

// NewSession opens one connection for the caller's exclusive use. It connects through
// blockconn and switches the socket to blocking reads once the session is established
// (see package blockconn for why), and interrupts a cancelled statement by shutting the
// socket down and sending a cancel request (session.interrupt).
func (h *handle) NewSession(ctx context.Context) (engine.Session, error) {
	cfg := h.cfg.Copy()
	// Every connection of the session's config dials through blockconn: the session's
	// own, and the ones pgconn opens to send cancel requests (which stay in poller mode).
	cfg.DialFunc = (&blockconn.Dialer{}).DialContext
	s := &session{samples: &h.samples}
	s.interruptFn = s.interrupt
	cfg.BuildContextWatcherHandler = func(*pgconn.PgConn) ctxwatch.Handler { return (*sessionWatcher)(s) }
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres new session: cannot connect to %s: %s", h.where(), strings.Join(strings.Fields(err.Error()), " "))
	}
	bc, ok := c.PgConn().Conn().(*blockconn.Conn)
	if !ok {
		_ = c.Close(ctx)
		return nil, errors.New("postgres new session: the connection was not made by dbperf's dialer")
	}
	// pgconn may have left its background reader waiting on the socket (started by a
	// slow write of the startup on a loaded machine): SyncConn ends it, as pgx asks before
	// the net.Conn is used directly, so that Block does not close the socket under it.
	if err := c.PgConn().SyncConn(ctx); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("postgres new session: %w", err)
	}
	if err := bc.Block(); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("postgres new session: %w", err)
	}
	s.conn, s.bc = c, bc
	s.target.Store(&interruptTarget{bc: bc, pc: c.PgConn()})
	return s, nil
}

// sessionWatcher is pgx's context watcher for a session's calls that take a context
// (Prepare, Exec, QueryInt): a cancelled context interrupts the session as a prepared
// statement's does. (pgx's default sets a deadline on the socket, which does not wake a
// blocking read already in progress.)
type sessionWatcher session

func (w *sessionWatcher) HandleCancel(context.Context) { (*session)(w).interrupt() }
func (w *sessionWatcher) HandleUnwatchAfterCancel()    {}

// Dialect returns PostgreSQL's SQL idioms.
func (h *handle) Dialect() engine.Dialect { return Dialect{} }

// Info reports the server's version (as it reports it, e.g. "15.10 (Debian 15.10-0+deb12u1)")
// and every setting of pg_settings (what SHOW ALL shows), plus server_version_num.
// DataDir is empty when the user may not read data_directory (not a superuser or
// pg_read_all_settings member).
func (h *handle) Info(ctx context.Context) (engine.Info, error) {
	c, err := h.connect(ctx)
	if err != nil {
		return engine.Info{}, fmt.Errorf("postgres info: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	info := engine.Info{Settings: map[string]string{}}
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&info.Version); err != nil {
		return engine.Info{}, fmt.Errorf("postgres info: server_version: %w", err)
	}
	rows, err := c.Query(ctx, "SELECT name, setting FROM pg_settings")
	if err != nil {
		return engine.Info{}, fmt.Errorf("postgres info: pg_settings: %w", err)
	}
	var name string
	var setting *string
	_, err = pgx.ForEachRow(rows, []any{&name, &setting}, func() error {
		if setting != nil && !secret(name) {
			info.Settings[name] = *setting
		}
		return nil
	})
	if err != nil {
		return engine.Info{}, fmt.Errorf("postgres info: pg_settings: %w", err)
	}
	if info.Settings["server_version_num"] == "" {
		var num string
		if err := c.QueryRow(ctx, "SHOW server_version_num").Scan(&num); err == nil {
			info.Settings["server_version_num"] = num
		}
	}
	var dir string
	if err := c.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err == nil {
		info.DataDir = dir
	}
	info.Settings["driver"] = "jackc/pgx/v5"
	return info, nil
}

// secret says whether a setting may hold a password or key: never stored with a run.
// (pg_settings has none in stock PostgreSQL; extensions may add some.)
func secret(name string) bool {
	for _, w := range []string{"password", "passphrase", "secret"} {
		if strings.Contains(strings.ToLower(name), w) {
			return true
		}
	}
	return false
}

// Size is pg_database_size(current_database()): every relation of the database, including
// indexes, TOAST and free space maps, but not the server's WAL.
func (h *handle) Size(ctx context.Context) (int64, error) {
	c, err := h.connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres size: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var n int64
	if err := c.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres size: %w", err)
	}
	return n, nil
}

// Close releases nothing: sessions own their connections.
func (h *handle) Close() error { return nil }

// Local says whether the server runs on this machine: the DSN's host is a unix-socket
// directory or a loopback address (fallback hosts are not considered).
func (h *handle) Local() bool {
	host := h.cfg.Host
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServerAddr is where the handle connects: a unix socket (host is its directory, the
// socket is .s.PGSQL.<port> in it) or host:port over TCP.
func (h *handle) ServerAddr() (network, address string) {
	if strings.HasPrefix(h.cfg.Host, "/") {
		return "unix", filepath.Join(h.cfg.Host, fmt.Sprintf(".s.PGSQL.%d", h.cfg.Port))
	}
	return "tcp", net.JoinHostPort(h.cfg.Host, strconv.Itoa(int(h.cfg.Port)))
}

// SessionPID is the process id of the server backend serving s, for per-connection CPU
// accounting (the reference records `select pg_backend_pid()` for perf, §1.8). It is the
// pid the server sent when the connection started (BackendKeyData): the same number as
// pg_backend_pid(), without a round trip.
func (h *handle) SessionPID(s engine.Session) (int, error) {
	ps, ok := s.(*session)
	if !ok || ps.conn == nil {
		return 0, fmt.Errorf("postgres session pid: %T is not an open postgres session", s)
	}
	return int(ps.conn.PgConn().PID()), nil
}

var _ engine.SQL = (*handle)(nil)
