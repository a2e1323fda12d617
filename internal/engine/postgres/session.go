package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/blockconn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

var (
	_ engine.Session    = (*session)(nil)
	_ engine.Stmt       = (*stmt)(nil)
	_ engine.RowQuerier = (*stmt)(nil)
)

// session is one connection owned by one worker. Prepared statements run on pgx's
// lower-level pgconn with arguments encoded by the statement itself (encodeArgs) and rows
// read as raw wire values; everything else (DDL, Session.Exec, QueryInt) uses pgx.Conn.
//
// Cancellation: a prepared statement runs without a per-call context watcher (pgconn's
// costs a context.AfterFunc per call); instead the session registers one AfterFunc per
// distinct context it is given (the runner passes the same one to every operation of a
// step), which shuts the socket down, so the statement in flight returns at once, and
// sends PostgreSQL's cancel request, so the backend stops working on it.
type session struct {
	conn *pgx.Conn
	bc   *blockconn.Conn
	// target is what interrupt acts on, set once the session is connected and never
	// cleared: interrupt runs on another goroutine (an AfterFunc, pgx's context watcher),
	// possibly while the session connects or closes.
	target atomic.Pointer[interruptTarget]
	seq    int // names prepared statements: dbperf_1, dbperf_2, …
	// stmts are the statements prepared on the session, closed with it.
	stmts []*stmt
	// samples keeps a sample of each statement's arguments for the diag (the handle's).
	samples *paramSamples

	// watch interrupts the session when an operation's context is cancelled;
	// interruptFn is s.interrupt, stored once (a method value built per call allocates).
	watch       engine.ContextWatch
	interruptFn func()
	// interruptOnce guards interrupt: the first cancellation ends the connection.
	interruptOnce sync.Once
	// pipe is the batch of executions queued for the next Sync (pipeline.go).
	pipe pipeline
}

// interruptTarget is a connected session's socket and protocol connection.
type interruptTarget struct {
	bc *blockconn.Conn
	pc *pgconn.PgConn
}

// interrupt stops the statement in flight: the socket is shut down (the waiting read
// returns) and the server is asked to cancel the statement. The connection is unusable
// afterwards, as pgx leaves any connection whose statement was interrupted. Before the
// session is connected there is nothing to interrupt (connecting honours its context).
func (s *session) interrupt() {
	t := s.target.Load()
	if t == nil {
		return
	}
	s.interruptOnce.Do(func() {
		t.bc.Shutdown()
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		_ = t.pc.CancelRequest(ctx)
	})
}

// Prepare prepares query as a named statement on the server (PREPARE, reference §1.8);
// executions send only its name and arguments.
func (s *session) Prepare(ctx context.Context, query string) (engine.Stmt, error) {
	s.seq++
	name := "dbperf_" + strconv.Itoa(s.seq)
	sd, err := s.conn.Prepare(ctx, name, query)
	if err != nil {
		return nil, fmt.Errorf("postgres prepare %s: %w", short(query), err)
	}
	p := &stmt{s: s, sd: sd, query: query, text: short(query), m: s.conn.TypeMap(), resultFormats: []int16{pgtype.BinaryFormatCode}}
	n := len(sd.ParamOIDs)
	p.values, p.formats, p.ends = make([][]byte, n), make([]int16, n), make([]int, n)
	s.stmts = append(s.stmts, p)
	return p, nil
}

// Exec runs one statement in autocommit mode: without arguments over the simple protocol
// (DDL, VACUUM), with arguments described first and not cached.
func (s *session) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := s.conn.Exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres exec %s: %w", short(query), s.ctxErr(ctx, err))
	}
	return tag.RowsAffected(), nil
}

// ctxErr reports a statement that failed because its context ended as the context's error.
func (s *session) ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// Close closes the connection, which drops its prepared statements on the server.
func (s *session) Close() error {
	if s.conn == nil {
		return nil
	}
	s.watch.Stop()
	for _, p := range s.stmts {
		p.closed = true
	}
	s.stmts = nil
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	err := s.conn.Close(ctx)
	s.conn = nil
	// An interrupted session's connection is shut down: saying goodbye fails, as expected.
	if err != nil && !s.bc.IsShutdown() {
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
	s     *session
	sd    *pgconn.StatementDescription
	text  string // shortened SQL for error messages
	query string // the SQL prepared
	// sampled is the epoch of the session's samples in which the statement last kept a
	// sample of its arguments (paramSamples).
	sampled uint64
	m       *pgtype.Map
	closed  bool
	// values, formats, ends and buf are the encoded arguments of the current execution
	// (encodeArgs), reused from one execution to the next.
	values  [][]byte
	formats []int16
	ends    []int // where integer argument i ends in buf; -1 for other kinds
	buf     []byte
	// msg is the Bind/Execute/Sync message sent; first holds QueryInt's first value.
	msg, first []byte
	// resultFormats asks for every result column in binary: no column is decoded, and
	// binary is what the server sends cheapest for integer and timestamp columns.
	resultFormats []int16
	// names are the result columns' names (QueryRow), set on first use.
	names []string
}

// roundTrip executes the statement with args: it writes the Bind, Execute and Sync
// messages (encoded by pgproto3 into the statement's reused buffer) to the connection
// itself and reads the results through pgconn up to ReadyForQuery: the rows (counted, not
// decoded; with first, the first row's first column is returned) and the rows the command
// tag says it affected.
//
// Why not pgconn's ExecStatement: pgproto3's Frontend appends every message to a buffer it
// shrinks back to 1 KiB after each flush, so each 100-row INSERT (~8 KB) grew it again
// through four allocations and copies: 34 KB of garbage per statement, 5–10% of dbperf's
// CPU in l.i0. Writing the connection directly is safe here: pgconn has nothing buffered
// between statements, and it still reads (and keeps its state from) every message.
//
// There is no per-call context watcher; the session's watch interrupts it.
func (p *stmt) roundTrip(ctx context.Context, args *engine.Args, first bool, row *engine.Row) (rows int64, firstVal []byte, affected int64, err error) {
	if err := p.s.watch.Watch(ctx, p.s.interruptFn); err != nil {
		return 0, nil, 0, err
	}
	defer p.s.watch.Done()
	if err := p.encodeArgs(args); err != nil {
		return 0, nil, 0, err
	}
	if ps := p.s.samples; ps != nil {
		if e := ps.epoch.Load(); e != p.sampled { // once per step at most: paramSamples
			p.sampled = e
			ps.put(p.query, p.sd.ParamOIDs, p.values, p.formats)
		}
	}
	formats := p.resultFormats
	if row != nil {
		formats = textFormats
	}
	bind := pgproto3.Bind{PreparedStatement: p.sd.Name, ParameterFormatCodes: p.formats,
		Parameters: p.values, ResultFormatCodes: formats}
	msg, err := bind.Encode(p.msg[:0])
	if err != nil {
		return 0, nil, 0, err
	}
	msg, _ = (&pgproto3.Execute{}).Encode(msg) // cannot fail
	msg, _ = (&pgproto3.Sync{}).Encode(msg)
	p.msg = msg
	pc := p.s.conn.PgConn()
	if _, err := pc.Conn().Write(msg); err != nil {
		// The server may have part of a message: the connection is unusable.
		_ = p.s.conn.Close(context.Background())
		return 0, nil, 0, err
	}
	if row != nil {
		n, affected, err := receiveRow(pc, row)
		return n, nil, affected, err
	}
	return receive(pc, first, &p.first)
}

// textFormats asks for every result column in text (QueryRow).
var textFormats = []int16{pgtype.TextFormatCode}

// receiveRow reads a statement's results up to ReadyForQuery as receive does, keeping
// the first row's values (text) in row.
func receiveRow(pc *pgconn.PgConn, row *engine.Row) (rows, affected int64, err error) {
	var stmtErr error
	for {
		m, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			return rows, affected, err
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if rows == 0 {
				for i, v := range m.Values {
					if i < len(row.Values) {
						row.Set(i, v, v == nil)
					}
				}
			}
			rows++
		case *pgproto3.CommandComplete:
			affected = rowsAffected(m.CommandTag)
		case *pgproto3.ErrorResponse:
			stmtErr = pgconn.ErrorResponseToPgError(m)
		case *pgproto3.ReadyForQuery:
			return rows, affected, stmtErr
		}
	}
}

// QueryRow runs the statement with its results in text and keeps the first row
// (engine.RowQuerier).
func (p *stmt) QueryRow(ctx context.Context, args *engine.Args, row *engine.Row) (int64, error) {
	if p.names == nil {
		p.names = make([]string, len(p.sd.Fields))
		for i, f := range p.sd.Fields {
			p.names[i] = f.Name
		}
	}
	row.Reset(len(p.names))
	row.Names = append(row.Names, p.names...)
	n, _, _, err := p.roundTrip(ctx, args, false, row)
	if err != nil {
		return n, fmt.Errorf("postgres query %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	return n, nil
}

// receive reads a statement's results up to ReadyForQuery: the rows (counted, not decoded;
// with first, the first row's first column is copied into *firstBuf and returned), the
// rows the command tag says it affected, and the statement's error.
func receive(pc *pgconn.PgConn, first bool, firstBuf *[]byte) (rows int64, firstVal []byte, affected int64, err error) {
	var stmtErr error
	for {
		m, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			return rows, nil, affected, err
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if first && rows == 0 && len(m.Values) > 0 && m.Values[0] != nil {
				firstVal = append((*firstBuf)[:0], m.Values[0]...)
				*firstBuf = firstVal
			}
			rows++
		case *pgproto3.CommandComplete:
			affected = rowsAffected(m.CommandTag)
		case *pgproto3.ErrorResponse:
			stmtErr = pgconn.ErrorResponseToPgError(m)
		case *pgproto3.ReadyForQuery:
			return rows, firstVal, affected, stmtErr
		}
	}
}

// rowsAffected is the count a command tag ends with ("UPDATE 1", "INSERT 0 5"; 0 for
// "BEGIN"), as pgconn.CommandTag.RowsAffected reads it, from the message's bytes: a
// CommandTag would copy them into a string per statement (an allocation per round trip,
// 4 of TPC-B's 7), and the bytes are only valid until the next message is read.
func rowsAffected(tag []byte) int64 {
	var n, mult int64 = 0, 1
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		n += int64(tag[i]-'0') * mult
		mult *= 10
	}
	return n
}

// Exec runs the statement and returns the rows it changed (the command tag's count).
func (p *stmt) Exec(ctx context.Context, args *engine.Args) (int64, error) {
	_, _, affected, err := p.roundTrip(ctx, args, false, nil)
	if err != nil {
		return 0, fmt.Errorf("postgres exec %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	return affected, nil
}

// Query runs the statement and reads every row it returns as raw wire values, without
// decoding them (the fetch is measured, as the reference's fetchall, without the client
// cost of building Go values), and returns the number of rows.
func (p *stmt) Query(ctx context.Context, args *engine.Args) (int64, error) {
	n, _, _, err := p.roundTrip(ctx, args, false, nil)
	if err != nil {
		return n, fmt.Errorf("postgres query %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	return n, nil
}

// QueryInt runs a one-row, one-integer-column query; NULL or no row gives valid=false.
// The value is decoded by pgx's type map from the column's type (int2/4/8, numeric, …).
func (p *stmt) QueryInt(ctx context.Context, args *engine.Args) (int64, bool, error) {
	n, raw, _, err := p.roundTrip(ctx, args, true, nil)
	if err != nil {
		return 0, false, fmt.Errorf("postgres query %s: %w", p.text, classify(p.s.ctxErr(ctx, err)))
	}
	if n == 0 || raw == nil || len(p.sd.Fields) == 0 {
		return 0, false, nil
	}
	var v int64
	if err := p.m.Scan(p.sd.Fields[0].DataTypeOID, pgtype.BinaryFormatCode, raw, &v); err != nil {
		return 0, false, fmt.Errorf("postgres query %s: %w", p.text, err)
	}
	return v, true, nil
}

// Close deallocates the statement on the server. It may be called more than once, and
// after the session or its connection closed (which dropped the statement already): a
// connection whose statement was interrupted is closed.
func (p *stmt) Close() error {
	if p.closed || p.s.conn == nil || p.s.conn.IsClosed() || p.s.bc.IsShutdown() {
		p.closed = true
		return nil
	}
	p.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := p.s.conn.Deallocate(ctx, p.sd.Name); err != nil {
		return fmt.Errorf("postgres close statement %s: %w", p.text, err)
	}
	return nil
}

// encodeArgs encodes args for the statement's parameter types into p.values/p.formats as
// pgx would (integers in binary for the integer types, text as text, which the server
// parses for its parameter's type, e.g. a timestamp), straight from the unboxed values:
// pgx's own path boxes every value and looks an encode plan up per argument (Map.Encode:
// 7–10% of dbperf's CPU in l.i0). Integer values go into p.buf; text values are not
// copied (the Bind message copies them once).
func (p *stmt) encodeArgs(args *engine.Args) error {
	oids := p.sd.ParamOIDs
	n := args.Len()
	if n != len(oids) {
		return fmt.Errorf("%d arguments for %d parameters", n, len(oids))
	}
	buf := p.buf[:0]
	for i := range n {
		p.formats[i] = pgtype.TextFormatCode
		p.ends[i] = -1
		switch args.Kind(i) {
		case engine.ArgInt:
			var err error
			if buf, p.formats[i], err = appendInt(buf, oids[i], args.IntAt(i)); err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			p.ends[i] = len(buf)
		case engine.ArgText:
			p.values[i] = args.TextAt(i)
		case engine.ArgNull:
			p.values[i] = nil
		}
	}
	// Slice the integers' bytes once buf has stopped growing.
	start := 0
	for i := range n {
		if end := p.ends[i]; end >= 0 {
			p.values[i] = buf[start:end:end]
			start = end
		}
	}
	p.buf = buf
	return nil
}

// appendInt encodes v for a parameter of type oid: binary for the integer types (checking
// the range), text for any other type (numeric, text, …), which the server parses.
func appendInt(buf []byte, oid uint32, v int64) ([]byte, int16, error) {
	switch oid {
	case pgtype.Int8OID:
		return binary.BigEndian.AppendUint64(buf, uint64(v)), pgtype.BinaryFormatCode, nil
	case pgtype.Int4OID:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return buf, 0, fmt.Errorf("%d is out of range for int4", v)
		}
		return binary.BigEndian.AppendUint32(buf, uint32(int32(v))), pgtype.BinaryFormatCode, nil
	case pgtype.Int2OID:
		if v < math.MinInt16 || v > math.MaxInt16 {
			return buf, 0, fmt.Errorf("%d is out of range for int2", v)
		}
		return binary.BigEndian.AppendUint16(buf, uint16(int16(v))), pgtype.BinaryFormatCode, nil
	}
	return strconv.AppendInt(buf, v, 10), pgtype.TextFormatCode, nil
}

// short shortens SQL for error messages (multi-row INSERTs run to kilobytes).
func short(query string) string {
	const maxLen = 120
	if len(query) <= maxLen {
		return fmt.Sprintf("%q", query)
	}
	return fmt.Sprintf("%q…", query[:maxLen])
}
