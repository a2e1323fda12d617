package postgres

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

var _ engine.Pipeliner = (*session)(nil)

// pipeline is a session's batch of queued executions (engine.Pipeliner): their messages,
// written at Sync in one write, and what each one is, for its error.
type pipeline struct {
	msg   []byte
	texts []string
	rows  []int64
}

// Queue encodes one execution of st with args into the session's pipeline: a prepared
// statement's Bind and Execute, as its own round trip sends them (stmt.roundTrip); a
// statement prepared on the client (BEGIN, COMMIT) as an unnamed Parse, Bind and Execute
// of its rendered text, the extended protocol's form of a text statement (a simple Query
// message has no place in a pipeline).
func (s *session) Queue(st engine.Stmt, args *engine.Args) error {
	var err error
	switch p := st.(type) {
	case *stmt:
		if p.s != s || p.closed {
			return fmt.Errorf("postgres pipeline: %s is not a statement of this session", p.text)
		}
		if err := p.encodeArgs(args); err != nil {
			return fmt.Errorf("postgres pipeline %s: %w", p.text, err)
		}
		bind := pgproto3.Bind{PreparedStatement: p.sd.Name, ParameterFormatCodes: p.formats,
			Parameters: p.values, ResultFormatCodes: p.resultFormats}
		if s.pipe.msg, err = bind.Encode(s.pipe.msg); err != nil {
			return fmt.Errorf("postgres pipeline %s: %w", p.text, err)
		}
		s.pipe.texts = append(s.pipe.texts, p.text)
	case *clientStmt:
		if p.s != s {
			return fmt.Errorf("postgres pipeline: %s is not a statement of this session", p.text)
		}
		if p.buf, err = p.q.Render(p.buf[:0], args, false); err != nil {
			return fmt.Errorf("postgres pipeline %s: %w", p.text, err)
		}
		// The messages copy the SQL: a view of buf is enough.
		sql := unsafe.String(unsafe.SliceData(p.buf), len(p.buf))
		if s.pipe.msg, err = (&pgproto3.Parse{Query: sql}).Encode(s.pipe.msg); err != nil {
			return fmt.Errorf("postgres pipeline %s: %w", p.text, err)
		}
		if s.pipe.msg, err = (&pgproto3.Bind{}).Encode(s.pipe.msg); err != nil {
			return fmt.Errorf("postgres pipeline %s: %w", p.text, err)
		}
		s.pipe.texts = append(s.pipe.texts, p.text)
	default:
		return fmt.Errorf("postgres pipeline: %T is not a statement of this engine", st)
	}
	s.pipe.msg, _ = (&pgproto3.Execute{}).Encode(s.pipe.msg) // cannot fail
	return nil
}

// Sync sends the queued executions and a Sync in one write and reads their results up to
// ReadyForQuery (engine.Pipeliner). An error ends the batch: the server skips what
// follows the failed execution up to the Sync. The rows are the session's buffer, valid
// until its next Sync.
func (s *session) Sync(ctx context.Context) ([]int64, int, error) {
	texts, msg := s.pipe.texts, s.pipe.msg
	n := len(texts)
	// The next batch starts empty, whatever happens to this one.
	s.pipe.msg, s.pipe.texts = msg[:0], texts[:0]
	if n == 0 {
		return nil, -1, nil
	}
	if err := s.watch.Watch(ctx, s.interruptFn); err != nil {
		return nil, 0, err
	}
	defer s.watch.Done()
	msg, _ = (&pgproto3.Sync{}).Encode(msg)
	s.pipe.msg = msg[:0]
	pc := s.conn.PgConn()
	if _, err := pc.Conn().Write(msg); err != nil {
		// The server may have part of a message: the connection is unusable.
		_ = s.conn.Close(context.Background())
		return nil, 0, fmt.Errorf("postgres pipeline of %d executions: %w", n, s.ctxErr(ctx, err))
	}
	rows := s.pipe.rows[:0]
	for range n {
		rows = append(rows, 0)
	}
	s.pipe.rows = rows
	rows, failed, err := receivePipeline(pc, rows)
	if err != nil {
		what := "a pipeline"
		if failed >= 0 && failed < n {
			what = texts[failed]
		}
		return rows, failed, fmt.Errorf("postgres pipeline %s: %w", what, classify(s.ctxErr(ctx, err)))
	}
	return rows, -1, nil
}

// receivePipeline reads the results of len(rows) executions and the Sync's
// ReadyForQuery. Each execution ends at its CommandComplete (or EmptyQueryResponse); its
// rows are the DataRows read, or else the command tag's count. An ErrorResponse fails
// the execution it answers, and the server sends nothing more for the batch but the
// ReadyForQuery.
func receivePipeline(pc *pgconn.PgConn, rows []int64) ([]int64, int, error) {
	i, failed := 0, -1
	var stmtErr error
	read := false
	for {
		m, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			return rows, i, err
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if i < len(rows) {
				rows[i]++
				read = true
			}
		case *pgproto3.CommandComplete:
			if i < len(rows) && !read {
				rows[i] = rowsAffected(m.CommandTag)
			}
			i, read = i+1, false
		case *pgproto3.EmptyQueryResponse:
			i, read = i+1, false
		case *pgproto3.ErrorResponse:
			if stmtErr == nil {
				stmtErr, failed = pgconn.ErrorResponseToPgError(m), i
			}
		case *pgproto3.ReadyForQuery:
			if stmtErr != nil {
				return rows, failed, stmtErr
			}
			if i != len(rows) {
				return rows, i, errors.New("the server answered fewer executions than were sent")
			}
			return rows, -1, nil
		}
	}
}

// Reset drops the queued executions unsent (engine.Pipeliner).
func (s *session) Reset() { s.pipe.msg, s.pipe.texts = s.pipe.msg[:0], s.pipe.texts[:0] }
