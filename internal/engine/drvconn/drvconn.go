// Package drvconn adapts one database/sql/driver connection to engine.Session, for the
// engines whose Go driver speaks only the database/sql driver interfaces (mattn/go-sqlite3,
// go-sql-driver/mysql). It sits under those engines in the flow: a session is one driver
// connection owned by one worker, used directly, without database/sql.
//
// Why not database/sql: with a cancellable context it starts a goroutine per query (to
// close the rows when the context ends), and the drivers add their own per-call machinery
// (go-sql-driver/mysql hands each context to a watcher goroutine over a channel,
// mattn/go-sqlite3 runs each statement in a new goroutine): goroutine handoffs, context
// switches and allocations on every statement. Here a prepared statement runs on the
// calling goroutine with no context at all, and cancellation is one watcher per session
// (see Session.watch) that calls the engine's interrupt function.
//
// PostgreSQL does not use it: its engine uses pgx's native API.
//
// On the client's hot path this means no goroutine or channel per call: a prepared
// statement never hands the driver a context that can end, so no driver starts its
// per-call cancellation machinery (database/sql's goroutine per Rows,
// go-sql-driver/mysql's watcher handoff, mattn/go-sqlite3's goroutine per statement).
// Cancellation is one context.AfterFunc per session and context
// (engine.ContextWatch): MariaDB shuts the socket down (the driver's own behaviour on
// cancel); SQLite's prepared statements run to completion (milliseconds, in-process)
// while Session.Exec (DDL) is interrupted by the driver. Both engines convert
// engine.Args to driver.Values, text as views of the Args buffer: both drivers copy it
// during the call.
package drvconn

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unsafe"

	"github.com/dbperf/dbperf/internal/engine"
)

var (
	_ engine.Session    = (*Session)(nil)
	_ engine.Stmt       = (*stmt)(nil)
	_ engine.RowQuerier = (*stmt)(nil)
)

// Options say how a driver's connection is used.
type Options struct {
	// Engine names the engine in error messages ("sqlite", "mariadb").
	Engine string
	// ValueArgs: the driver's statements are cheapest through driver.Stmt's Exec/Query
	// with []driver.Value (go-sql-driver/mysql, whose context variants copy the arguments
	// into a new slice every call). Otherwise StmtExecContext/StmtQueryContext with
	// []driver.NamedValue and a context that is never done (mattn/go-sqlite3, whose
	// value variants make that copy).
	ValueArgs bool
	// Interrupt stops the statement in flight on the connection, from another goroutine,
	// when the context of a call is cancelled (e.g. shut the socket down). Nil: prepared
	// statements are not interrupted and run to completion (SQLite's, which run in this
	// process for milliseconds); Session.Exec and Prepare still pass their context to
	// the driver, which interrupts them its own way.
	Interrupt func()
	// Classify names the errors a workload may retry: it returns engine.ErrConflict or
	// engine.ErrDuplicateKey for a driver error that is one, else nil. Nil: none is.
	Classify func(error) error
	// BackslashEscapes: the engine reads a backslash in a string literal as an escape
	// (MySQL's default SQL mode), so client-side statements (PrepareClient) double it.
	BackslashEscapes bool
}

// Session is one driver connection reserved for one worker.
type Session struct {
	o     Options
	conn  driver.Conn
	stmts []*stmt

	// watch interrupts the session when an operation's context is cancelled; interrupt
	// is the function it runs (o.Interrupt, at most once).
	watch     engine.ContextWatch
	interrupt func()
	once      sync.Once
}

// New makes a session of conn, which it owns from now on (Close closes it).
func New(conn driver.Conn, o Options) *Session {
	s := &Session{o: o, conn: conn}
	if o.Interrupt != nil {
		s.interrupt = func() { s.once.Do(o.Interrupt) }
	}
	return s
}

// Conn is the session's driver connection, for engine-specific calls.
func (s *Session) Conn() driver.Conn { return s.conn }

// watchCtx makes ctx's cancellation interrupt the session (when the engine can) and
// reports whether ctx is already done.
func (s *Session) watchCtx(ctx context.Context) error {
	if s.interrupt == nil {
		return ctx.Err()
	}
	return s.watch.Watch(ctx, s.interrupt)
}

// Prepare prepares query on the connection.
func (s *Session) Prepare(ctx context.Context, query string) (engine.Stmt, error) {
	var st driver.Stmt
	var err error
	if pc, ok := s.conn.(driver.ConnPrepareContext); ok {
		st, err = pc.PrepareContext(ctx, query)
	} else {
		st, err = s.conn.Prepare(query)
	}
	if err != nil {
		return nil, fmt.Errorf("%s prepare %s: %w", s.o.Engine, short(query), ctxErr(ctx, err))
	}
	p := &stmt{s: s, st: st, text: short(query)}
	p.execV, _ = st.(interface {
		Exec([]driver.Value) (driver.Result, error)
	})
	p.queryV, _ = st.(interface {
		Query([]driver.Value) (driver.Rows, error)
	})
	p.execN, _ = st.(driver.StmtExecContext)
	p.queryN, _ = st.(driver.StmtQueryContext)
	s.stmts = append(s.stmts, p)
	return p, nil
}

// Exec runs one statement in autocommit mode (DDL, maintenance). With arguments the
// driver may ask for a prepared statement (driver.ErrSkip): then it is prepared, run and
// closed.
func (s *Session) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return 0, fmt.Errorf("%s exec %s: argument %d: %w", s.o.Engine, short(query), i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	var res driver.Result
	err := driver.ErrSkip
	if ec, ok := s.conn.(driver.ExecerContext); ok {
		res, err = ec.ExecContext(ctx, query, named)
	}
	if errors.Is(err, driver.ErrSkip) {
		res, err = s.execPrepared(ctx, query, named)
	}
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", s.o.Engine, short(query), ctxErr(ctx, err))
	}
	return rowsAffected(res)
}

func (s *Session) execPrepared(ctx context.Context, query string, named []driver.NamedValue) (driver.Result, error) {
	pc, ok := s.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("the driver cannot prepare with a context")
	}
	st, err := pc.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ec, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("the driver's statement cannot execute with a context")
	}
	return ec.ExecContext(ctx, named)
}

// QueryStrings runs query and returns every row with every column as text (NULL as
// ""): for engine-specific lookups (a connection's server thread, EXPLAIN) and tests.
func (s *Session) QueryStrings(ctx context.Context, query string, args ...any) ([][]string, error) {
	st, err := s.Prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	p := st.(*stmt)
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("%s query %s: argument %d: %w", s.o.Engine, p.text, i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	var rows driver.Rows
	if p.queryN != nil {
		rows, err = p.queryN.QueryContext(ctx, named)
	} else {
		vals := make([]driver.Value, len(named))
		for i := range named {
			vals[i] = named[i].Value
		}
		rows, err = p.st.Query(vals) //nolint:staticcheck // the driver has no context variant
	}
	if err != nil {
		return nil, fmt.Errorf("%s query %s: %w", s.o.Engine, p.text, ctxErr(ctx, err))
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out [][]string
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("%s query %s: %w", s.o.Engine, p.text, ctxErr(ctx, err))
		}
		row := make([]string, len(dest))
		for i, v := range dest {
			row[i] = text(v)
		}
		out = append(out, row)
	}
}

// Close closes the statements prepared on the session and the connection.
func (s *Session) Close() error {
	if s.conn == nil {
		return nil
	}
	s.watch.Stop()
	var errs []error
	for _, p := range s.stmts {
		errs = append(errs, p.Close())
	}
	s.stmts = nil
	if err := s.conn.Close(); err != nil && !errors.Is(err, driver.ErrBadConn) {
		errs = append(errs, fmt.Errorf("%s close session: %w", s.o.Engine, err))
	}
	s.conn = nil
	return errors.Join(errs...)
}

// stmt is a statement prepared on one session. Like the session, it is not safe for
// concurrent use, which lets it reuse its argument and row buffers.
type stmt struct {
	s      *Session
	st     driver.Stmt
	text   string // shortened SQL for error messages
	closed bool

	execV interface {
		Exec([]driver.Value) (driver.Result, error)
	}
	queryV interface {
		Query([]driver.Value) (driver.Rows, error)
	}
	execN  driver.StmtExecContext
	queryN driver.StmtQueryContext

	// vals and named are the arguments of the current execution; dest receives each row's
	// columns. All reused.
	vals  []driver.Value
	named []driver.NamedValue
	dest  []driver.Value
	// text1 is QueryRow's buffer for one column's text.
	text1 []byte
}

// bind converts args into the statement's reused argument slices.
func (p *stmt) bind(args *engine.Args) error {
	n := args.Len()
	if want := p.st.NumInput(); want >= 0 && want != n {
		return fmt.Errorf("%d arguments for %d parameters", n, want)
	}
	p.vals = p.vals[:0]
	for i := range n {
		var v driver.Value
		switch args.Kind(i) {
		case engine.ArgInt:
			v = args.IntAt(i)
		case engine.ArgText:
			v = textView(args.TextAt(i))
		}
		p.vals = append(p.vals, v)
	}
	if p.s.o.ValueArgs && p.execV != nil {
		return nil
	}
	p.named = p.named[:0]
	for i, v := range p.vals {
		p.named = append(p.named, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return nil
}

// classify wraps the sentinel Options.Classify finds for err, if any.
func (s *Session) classify(err error) error {
	if s.o.Classify == nil || err == nil {
		return err
	}
	if c := s.o.Classify(err); c != nil {
		return fmt.Errorf("%w (%w)", err, c)
	}
	return err
}

func (p *stmt) exec() (driver.Result, error) {
	if p.s.o.ValueArgs && p.execV != nil {
		return p.execV.Exec(p.vals)
	}
	if p.execN != nil {
		// A context that is never done: no driver starts its per-call cancellation
		// machinery; the session's watch interrupts the statement instead.
		return p.execN.ExecContext(context.Background(), p.named)
	}
	return p.st.Exec(p.vals) //nolint:staticcheck // the driver has no context variant
}

func (p *stmt) query() (driver.Rows, error) {
	if p.s.o.ValueArgs && p.queryV != nil {
		return p.queryV.Query(p.vals)
	}
	if p.queryN != nil {
		return p.queryN.QueryContext(context.Background(), p.named) // as in exec
	}
	return p.st.Query(p.vals) //nolint:staticcheck // the driver has no context variant
}

// Exec runs the statement and returns the rows it changed.
func (p *stmt) Exec(ctx context.Context, args *engine.Args) (int64, error) {
	if err := p.s.watchCtx(ctx); err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, err)
	}
	defer p.s.watch.Done()
	if err := p.bind(args); err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, err)
	}
	res, err := p.exec()
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, p.s.classify(ctxErr(ctx, err)))
	}
	n, err := rowsAffected(res)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", p.s.o.Engine, p.text, err)
	}
	return n, nil
}

// Query runs the statement, reads every column of every row into reused buffers (the
// fetch is measured, as the reference's fetchall) and returns the number of rows.
func (p *stmt) Query(ctx context.Context, args *engine.Args) (int64, error) {
	n, _, _, err := p.rows(ctx, args, false)
	return n, err
}

// QueryInt runs a one-row, one-integer-column query; NULL or no row gives valid=false.
func (p *stmt) QueryInt(ctx context.Context, args *engine.Args) (int64, bool, error) {
	_, v, ok, err := p.rows(ctx, args, true)
	return v, ok, err
}

// rows runs the statement and reads its rows; with first it also returns the first
// row's first column as an integer.
func (p *stmt) rows(ctx context.Context, args *engine.Args, first bool) (n, v int64, ok bool, err error) {
	fail := func(err error) (int64, int64, bool, error) {
		return n, 0, false, fmt.Errorf("%s query %s: %w", p.s.o.Engine, p.text, err)
	}
	if err := p.s.watchCtx(ctx); err != nil {
		return fail(err)
	}
	defer p.s.watch.Done()
	if err := p.bind(args); err != nil {
		return fail(err)
	}
	rows, err := p.query()
	if err != nil {
		return fail(p.s.classify(ctxErr(ctx, err)))
	}
	n, v, ok, err = readRows(rows, &p.dest, first)
	if err != nil {
		return fail(p.s.classify(ctxErr(ctx, err)))
	}
	return n, v, ok, nil
}

// readRows reads every row of rows into dest (grown to the column count and reused) and
// closes rows; with first it also returns the first row's first column as an integer.
func readRows(rows driver.Rows, dest *[]driver.Value, first bool) (n, v int64, ok bool, err error) {
	if cols := len(rows.Columns()); cap(*dest) < cols {
		*dest = make([]driver.Value, cols)
	} else {
		*dest = (*dest)[:cols]
	}
	d := *dest
	for {
		err := rows.Next(d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = rows.Close()
			return n, 0, false, err
		}
		if first && n == 0 && len(d) > 0 {
			if v, ok, err = intValue(d[0]); err != nil {
				_ = rows.Close()
				return n, 0, false, err
			}
		}
		n++
	}
	if err := rows.Close(); err != nil {
		return n, 0, false, err
	}
	return n, v, ok, nil
}

// QueryRow runs the statement, reads every row and keeps the first one's columns as
// text in row (engine.RowQuerier): integers and floats as the engines print them.
func (p *stmt) QueryRow(ctx context.Context, args *engine.Args, row *engine.Row) (int64, error) {
	fail := func(n int64, err error) (int64, error) {
		return n, fmt.Errorf("%s query %s: %w", p.s.o.Engine, p.text, err)
	}
	if err := p.s.watchCtx(ctx); err != nil {
		return fail(0, err)
	}
	if err := p.bind(args); err != nil {
		return fail(0, err)
	}
	rows, err := p.query()
	if err != nil {
		return fail(0, p.s.classify(ctxErr(ctx, err)))
	}
	cols := rows.Columns()
	row.Reset(len(cols))
	row.Names = append(row.Names, cols...)
	if cap(p.dest) < len(cols) {
		p.dest = make([]driver.Value, len(cols))
	}
	d := p.dest[:len(cols)]
	var n int64
	for {
		err := rows.Next(d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = rows.Close()
			return fail(n, p.s.classify(ctxErr(ctx, err)))
		}
		if n == 0 {
			for i, v := range d {
				p.text1 = appendText(p.text1[:0], v)
				row.Set(i, p.text1, v == nil)
			}
		}
		n++
	}
	if err := rows.Close(); err != nil {
		return fail(n, err)
	}
	return n, nil
}

// appendText appends a column value's text to b (nothing for NULL).
func appendText(b []byte, v driver.Value) []byte {
	switch v := v.(type) {
	case nil:
		return b
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(b, v)
	case []byte:
		return append(b, v...)
	case string:
		return append(b, v...)
	}
	return fmt.Append(b, v)
}

// Close releases the statement. It may be called more than once.
func (p *stmt) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if err := p.st.Close(); err != nil && !errors.Is(err, driver.ErrBadConn) {
		return fmt.Errorf("%s close statement %s: %w", p.s.o.Engine, p.text, err)
	}
	return nil
}

// textView is b as a string without copying it: the text of a 100-row INSERT would
// otherwise be 200 allocations per statement. It is safe here because both drivers copy a
// string argument into their own buffer during the call (go-sql-driver/mysql into the
// COM_STMT_EXECUTE packet, mattn/go-sqlite3 into its C scratch buffer or SQLite's
// SQLITE_TRANSIENT copy) and never keep it, and the Args' bytes do not change during
// the call; the views left in stmt.vals afterwards are never read.
func textView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// intValue converts a column value to an integer; NULL is not valid.
func intValue(v driver.Value) (int64, bool, error) {
	switch v := v.(type) {
	case nil:
		return 0, false, nil
	case int64:
		return v, true, nil
	case []byte:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil, err
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil, err
	case float64:
		return int64(v), true, nil
	}
	return 0, false, fmt.Errorf("column is %T, not an integer", v)
}

// text renders a column value as text (NULL as "").
func text(v driver.Value) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

func rowsAffected(res driver.Result) (int64, error) {
	if res == nil {
		return 0, nil
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// ctxErr reports a statement that failed because its context ended as the context's error.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// short shortens SQL for error messages (multi-row INSERTs run to kilobytes).
func short(query string) string {
	const maxLen = 120
	if len(query) <= maxLen {
		return fmt.Sprintf("%q", query)
	}
	return fmt.Sprintf("%q…", query[:maxLen])
}
