// Package sqlconn adapts a database/sql connection to engine.Session for the engines whose
// driver only speaks database/sql (mattn/go-sqlite3, go-sql-driver/mysql): one reserved
// *sql.Conn per session, statements prepared on it, rows fetched into reused buffers.
// PostgreSQL does not use it: pgx's native API avoids database/sql's costs.
package sqlconn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
)

var (
	_ engine.Session = (*Session)(nil)
	_ engine.Stmt    = (*stmt)(nil)
)

// Session is one pooled connection reserved for one worker.
type Session struct {
	name  string // engine name, for error messages
	conn  *sql.Conn
	stmts []*stmt
}

// New reserves conn for one session of the named engine.
func New(engineName string, conn *sql.Conn) *Session {
	return &Session{name: engineName, conn: conn}
}

// Conn is the session's connection, for engine-specific queries (e.g. the server thread
// serving it).
func (s *Session) Conn() *sql.Conn { return s.conn }

// Prepare prepares query on this session's connection.
func (s *Session) Prepare(ctx context.Context, query string) (engine.Stmt, error) {
	st, err := s.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s prepare %s: %w", s.name, short(query), err)
	}
	p := &stmt{name: s.name, st: st, text: short(query)}
	s.stmts = append(s.stmts, p)
	return p, nil
}

// Exec runs one statement in autocommit mode.
func (s *Session) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.conn.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", s.name, short(query), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: rows affected: %w", s.name, short(query), err)
	}
	return n, nil
}

// Close closes the statements prepared on the session and returns the connection to the pool.
func (s *Session) Close() error {
	var errs []error
	for _, p := range s.stmts {
		errs = append(errs, p.Close())
	}
	s.stmts = nil
	if err := s.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		errs = append(errs, fmt.Errorf("%s close session: %w", s.name, err))
	}
	return errors.Join(errs...)
}

// stmt is a statement prepared on one session. Like the session, it is not safe for
// concurrent use, which lets Query reuse its scan destinations.
type stmt struct {
	name string // engine name, for error messages
	st   *sql.Stmt
	text string // shortened SQL for error messages
	// raw and dest are Query's reusable scan destinations: every column of every row is
	// fetched (so the cost of reading rows is measured) into buffers that are reused.
	raw  []sql.RawBytes
	dest []any
}

// Exec runs the statement and returns the rows it changed.
func (p *stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	res, err := p.st.ExecContext(ctx, args...)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.name, p.text, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: rows affected: %w", p.name, p.text, err)
	}
	return n, nil
}

// Query runs the statement, scans every column of every row into reused buffers and
// returns the number of rows.
func (p *stmt) Query(ctx context.Context, args ...any) (int64, error) {
	rows, err := p.st.QueryContext(ctx, args...)
	if err != nil {
		return 0, fmt.Errorf("%s query %s: %w", p.name, p.text, err)
	}
	if p.dest == nil {
		cols, err := rows.Columns()
		if err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("%s query %s: columns: %w", p.name, p.text, err)
		}
		p.raw = make([]sql.RawBytes, len(cols))
		p.dest = make([]any, len(cols))
		for i := range p.raw {
			p.dest[i] = &p.raw[i]
		}
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(p.dest...); err != nil {
			_ = rows.Close()
			return n, fmt.Errorf("%s query %s: scan: %w", p.name, p.text, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return n, fmt.Errorf("%s query %s: %w", p.name, p.text, err)
	}
	if err := rows.Close(); err != nil {
		return n, fmt.Errorf("%s query %s: close: %w", p.name, p.text, err)
	}
	return n, nil
}

// QueryInt runs a one-row, one-integer-column query; NULL or no row gives valid=false.
func (p *stmt) QueryInt(ctx context.Context, args ...any) (int64, bool, error) {
	var v sql.NullInt64
	err := p.st.QueryRowContext(ctx, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("%s query %s: %w", p.name, p.text, err)
	}
	return v.Int64, v.Valid, nil
}

// Close releases the statement. It may be called more than once.
func (p *stmt) Close() error {
	if err := p.st.Close(); err != nil {
		return fmt.Errorf("%s close statement %s: %w", p.name, p.text, err)
	}
	return nil
}

// short shortens SQL for error messages (multi-row INSERTs run to kilobytes).
func short(query string) string {
	const maxLen = 120
	if len(query) <= maxLen {
		return fmt.Sprintf("%q", query)
	}
	return fmt.Sprintf("%q…", query[:maxLen])
}
