package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/jackc/pgx/v5"
)

var (
	_ engine.Session = (*session)(nil)
	_ engine.Stmt    = (*stmt)(nil)
)

// session is one connection owned by one worker.
type session struct {
	conn  *pgx.Conn
	seq   int // names prepared statements: dbperf_1, dbperf_2, …
	stmts []*stmt
}

// Prepare prepares query as a named statement on the server (PREPARE, reference §1.8);
// executions send only its name and arguments. The parameter types are the server's, so
// a string argument for a timestamp parameter is sent as text and parsed by the server.
func (s *session) Prepare(ctx context.Context, query string) (engine.Stmt, error) {
	s.seq++
	name := "dbperf_" + strconv.Itoa(s.seq)
	if _, err := s.conn.Prepare(ctx, name, query); err != nil {
		return nil, fmt.Errorf("postgres prepare %s: %w", short(query), err)
	}
	p := &stmt{s: s, name: name, text: short(query)}
	s.stmts = append(s.stmts, p)
	return p, nil
}

// Exec runs one statement in autocommit mode: without arguments over the simple protocol
// (DDL, VACUUM), with arguments described first and not cached.
func (s *session) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := s.conn.Exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres exec %s: %w", short(query), err)
	}
	return tag.RowsAffected(), nil
}

// Close closes the connection, which drops its prepared statements on the server.
func (s *session) Close() error {
	if s.conn == nil {
		return nil
	}
	for _, p := range s.stmts {
		p.closed = true
	}
	s.stmts = nil
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	err := s.conn.Close(ctx)
	s.conn = nil
	if err != nil {
		return fmt.Errorf("postgres close session: %w", err)
	}
	return nil
}

// backendPID asks the server for the pid of the backend serving this session.
func (s *session) backendPID(ctx context.Context) (int, error) {
	var pid int32
	if err := s.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return 0, fmt.Errorf("postgres pg_backend_pid: %w", err)
	}
	return int(pid), nil
}

// stmt is a named statement prepared on one session's connection.
type stmt struct {
	s      *session
	name   string
	text   string // shortened SQL for error messages
	closed bool
}

// Exec runs the statement and returns the rows it changed (the command tag's count).
func (p *stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	tag, err := p.s.conn.Exec(ctx, p.name, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres exec %s: %w", p.text, err)
	}
	return tag.RowsAffected(), nil
}

// Query runs the statement and reads every row it returns as raw wire values, without
// decoding them (the fetch is measured, as the reference's fetchall, without the client
// cost of building Go values), and returns the number of rows.
func (p *stmt) Query(ctx context.Context, args ...any) (int64, error) {
	rows, err := p.s.conn.Query(ctx, p.name, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres query %s: %w", p.text, err)
	}
	var n int64
	for rows.Next() {
		_ = rows.RawValues()
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("postgres query %s: %w", p.text, err)
	}
	return n, nil
}

// QueryInt runs a one-row, one-integer-column query; NULL or no row gives valid=false.
func (p *stmt) QueryInt(ctx context.Context, args ...any) (int64, bool, error) {
	var v *int64
	err := p.s.conn.QueryRow(ctx, p.name, args...).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres query %s: %w", p.text, err)
	}
	if v == nil {
		return 0, false, nil
	}
	return *v, true, nil
}

// Close deallocates the statement on the server. It may be called more than once, and
// after the session or its connection closed (which dropped the statement already): pgx
// closes a connection whose statement was interrupted by a cancelled context, as happens
// to in-flight operations when a step ends.
func (p *stmt) Close() error {
	if p.closed || p.s.conn == nil || p.s.conn.IsClosed() {
		p.closed = true
		return nil
	}
	p.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := p.s.conn.Deallocate(ctx, p.name); err != nil {
		return fmt.Errorf("postgres close statement %s: %w", p.text, err)
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
