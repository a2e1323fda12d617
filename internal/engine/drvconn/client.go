package drvconn

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.Stmt = (*clientStmt)(nil)

// PrepareClient returns a statement prepared on the client only (engine.Session): each
// execution renders the query with its arguments inlined into a reused buffer and runs it
// through the driver's connection-level Exec or Query without arguments, which sends it as
// text (go-sql-driver/mysql: COM_QUERY; mattn/go-sqlite3 compiles it anew each time).
func (s *Session) PrepareClient(_ context.Context, query string) (engine.Stmt, error) {
	q, err := engine.ParseClientQuery(query, false)
	if err != nil {
		return nil, fmt.Errorf("%s prepare on the client %s: %w", s.o.Engine, short(query), err)
	}
	ec, okE := s.conn.(driver.ExecerContext)
	qc, okQ := s.conn.(driver.QueryerContext)
	if !okE || !okQ {
		return nil, fmt.Errorf("%s prepare on the client %s: the driver's connection cannot run a query without preparing it", s.o.Engine, short(query))
	}
	return &clientStmt{s: s, q: q, text: short(query), ec: ec, qc: qc}, nil
}

// clientStmt is a statement prepared on the client. Like stmt it is not safe for
// concurrent use and reuses its buffers.
type clientStmt struct {
	s    *Session
	q    engine.ClientQuery
	text string
	ec   driver.ExecerContext
	qc   driver.QueryerContext
	// buf holds the rendered statement of the current execution; dest receives each row.
	buf  []byte
	dest []driver.Value
}

// render renders the statement for args into buf and returns it as a string viewing buf
// (the session's watch begun: the caller ends it with Done once the statement ran):
// both drivers copy the query during the call (into the COM_QUERY packet, into a C
// string) and keep no reference to it, and buf does not change until the next call.
func (p *clientStmt) render(ctx context.Context, args *engine.Args) (string, error) {
	if err := p.s.watchCtx(ctx); err != nil {
		return "", err
	}
	var err error
	if p.buf, err = p.q.Render(p.buf[:0], args, p.s.o.BackslashEscapes); err != nil {
		p.s.watch.Done()
		return "", err
	}
	return textView(p.buf), nil
}

// Exec sends the statement and returns the rows it changed. The context the driver gets
// is never done, as for prepared statements; the session's watch interrupts instead.
func (p *clientStmt) Exec(ctx context.Context, args *engine.Args) (int64, error) {
	q, err := p.render(ctx, args)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, err)
	}
	defer p.s.watch.Done()
	res, err := p.ec.ExecContext(context.Background(), q, nil)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, p.s.classify(ctxErr(ctx, err)))
	}
	n, err := rowsAffected(res)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, err)
	}
	return n, nil
}

// Query sends the statement, reads every row and returns their number.
func (p *clientStmt) Query(ctx context.Context, args *engine.Args) (int64, error) {
	n, _, _, err := p.rows(ctx, args, false)
	return n, err
}

// QueryInt sends a one-row, one-integer-column query; NULL or no row gives valid=false.
func (p *clientStmt) QueryInt(ctx context.Context, args *engine.Args) (int64, bool, error) {
	_, v, ok, err := p.rows(ctx, args, true)
	return v, ok, err
}

func (p *clientStmt) rows(ctx context.Context, args *engine.Args, first bool) (int64, int64, bool, error) {
	fail := func(n int64, err error) (int64, int64, bool, error) {
		return n, 0, false, fmt.Errorf("%s query %s: %w", p.s.o.Engine, p.text, err)
	}
	q, err := p.render(ctx, args)
	if err != nil {
		return fail(0, err)
	}
	defer p.s.watch.Done()
	rows, err := p.qc.QueryContext(context.Background(), q, nil)
	if err != nil {
		return fail(0, p.s.classify(ctxErr(ctx, err)))
	}
	n, v, ok, err := readRows(rows, &p.dest, first)
	if err != nil {
		return fail(n, p.s.classify(ctxErr(ctx, err)))
	}
	return n, v, ok, nil
}

// Close has nothing to release on the server.
func (p *clientStmt) Close() error { return nil }
