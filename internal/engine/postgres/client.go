package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

var _ engine.Stmt = (*clientStmt)(nil)

// PrepareClient returns a statement prepared on the client only (engine.Session): each
// execution renders the query with its arguments inlined as literals and sends it in one
// simple-protocol Query message, as libpq's PQexec (and sysbench with
// --db-ps-mode=disable) does: the server parses and plans it every time and returns rows
// as text. String literals are standard SQL (a quote is doubled; a backslash is a
// backslash under standard_conforming_strings, the default since PostgreSQL 9.1).
func (s *session) PrepareClient(_ context.Context, query string) (engine.Stmt, error) {
	q, err := engine.ParseClientQuery(query, true)
	if err != nil {
		return nil, fmt.Errorf("postgres prepare on the client %s: %w", short(query), err)
	}
	p := &clientStmt{s: s, q: q, text: short(query)}
	if q.NumArgs() == 0 {
		// Without arguments (BEGIN, COMMIT) the message is the same every time: built once.
		if p.msg, err = (&pgproto3.Query{String: query}).Encode(nil); err != nil {
			return nil, fmt.Errorf("postgres prepare on the client %s: %w", short(query), err)
		}
		p.fixed = true
	}
	return p, nil
}

// clientStmt is a statement prepared on the client. It reuses its buffers: buf holds the
// rendered SQL, msg the Query message, first QueryInt's first value. A statement without
// arguments is fixed: its message, built by PrepareClient, is sent as it is.
type clientStmt struct {
	s               *session
	q               engine.ClientQuery
	text            string
	buf, msg, first []byte
	fixed           bool
}

// roundTrip sends the statement for args as one Query message, written to the connection
// directly as prepared statements' Bind/Execute/Sync are (stmt.roundTrip), and reads the
// results.
func (p *clientStmt) roundTrip(ctx context.Context, args *engine.Args, first bool) (rows int64, firstVal []byte, affected int64, err error) {
	if err := p.s.watch.Watch(ctx, p.s.interruptFn); err != nil {
		return 0, nil, 0, err
	}
	defer p.s.watch.Done()
	if !p.fixed || args.Len() > 0 {
		if p.buf, err = p.q.Render(p.buf[:0], args, false); err != nil {
			return 0, nil, 0, err
		}
		// The message copies the SQL: a view of buf is enough.
		sql := unsafe.String(unsafe.SliceData(p.buf), len(p.buf))
		if p.msg, err = (&pgproto3.Query{String: sql}).Encode(p.msg[:0]); err != nil {
			return 0, nil, 0, err
		}
	}
	pc := p.s.conn.PgConn()
	if _, err := pc.Conn().Write(p.msg); err != nil {
		_ = p.s.conn.Close(context.Background())
		return 0, nil, 0, err
	}
	return receive(pc, first, &p.first)
}

// Exec sends the statement and returns the rows it changed.
func (p *clientStmt) Exec(ctx context.Context, args *engine.Args) (int64, error) {
	_, _, affected, err := p.roundTrip(ctx, args, false)
	if err != nil {
		return 0, fmt.Errorf("postgres exec %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	return affected, nil
}

// Query sends the statement, reads every row (as text, not decoded) and returns their number.
func (p *clientStmt) Query(ctx context.Context, args *engine.Args) (int64, error) {
	n, _, _, err := p.roundTrip(ctx, args, false)
	if err != nil {
		return n, fmt.Errorf("postgres query %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	return n, nil
}

// QueryInt sends a one-row, one-integer-column query; NULL or no row gives valid=false.
func (p *clientStmt) QueryInt(ctx context.Context, args *engine.Args) (int64, bool, error) {
	n, raw, _, err := p.roundTrip(ctx, args, true)
	if err != nil {
		return 0, false, fmt.Errorf("postgres query %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	if n == 0 || raw == nil {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(raw), len(raw)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("postgres query %s: %w", p.text, err)
	}
	return v, true, nil
}

// Close has nothing to release on the server.
func (p *clientStmt) Close() error { return nil }

// classify marks the errors a workload may retry (engine.ErrConflict,
// engine.ErrDuplicateKey): deadlock_detected (40P01), serialization_failure (40001) and
// lock_not_available (55P03) are conflicts, unique_violation (23505) a duplicate key;
// sysbench's pgsql driver treats the same as ignorable.
func classify(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "40P01", "40001", "55P03":
		return fmt.Errorf("%w (%w)", err, engine.ErrConflict)
	case "23505":
		return fmt.Errorf("%w (%w)", err, engine.ErrDuplicateKey)
	}
	return err
}
