package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

var _ engine.Diagnoser = (*handle)(nil)

// diagMark begins every statement a diag sends, so its own digests are told apart from
// the workload's.
const diagMark = "/* dbperf diag */ "

// diag reads performance_schema's statement digests, statement history (for plans) and
// current waits on a pool connection of its own.
type diag struct {
	c     *sql.Conn
	off   error // why performance_schema cannot be read
	tid   int   // the connection's OS thread id (0: unknown)
	notes map[string]string
}

// OpenDiag takes a connection and checks performance_schema. With o.Enable (a server
// dbperf manages) it turns on the consumers it reads: statement digests, the statement
// history (a recent text with values per statement shape, for EXPLAIN) and current waits,
// with the IO and lock wait instruments (not the mutex ones, whose overhead is large).
func (h *handle) OpenDiag(ctx context.Context, o engine.DiagOptions) (engine.Diag, error) {
	c, err := h.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mariadb diag: %w", err)
	}
	d := &diag{c: c, notes: map[string]string{}}
	if tid, err := threadOSID(ctx, c); err == nil {
		d.tid = tid
	}
	var on sql.NullString
	if err := c.QueryRowContext(ctx, diagMark+"SELECT @@performance_schema").Scan(&on); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mariadb diag: %w", err)
	}
	if on.String != "1" && !strings.EqualFold(on.String, "ON") {
		d.off = errors.New("performance_schema is off on this server: start it with performance_schema=ON")
	} else if o.Enable {
		for _, q := range []string{
			"UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ('statements_digest', 'events_statements_current', 'events_statements_history', 'events_waits_current')",
			"UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE 'statement/%' OR NAME LIKE 'wait/io/%' OR NAME LIKE 'wait/lock/%'",
		} {
			if _, err := c.ExecContext(ctx, diagMark+q); err != nil {
				d.off = fmt.Errorf("turn performance_schema's consumers on: %w", err)
				break
			}
		}
	}
	if d.off != nil {
		for _, k := range []string{"statements", "plans", "waits"} {
			d.notes[k] = "none: " + d.off.Error()
		}
		return d, nil
	}
	d.notes["statements"] = "performance_schema.events_statements_summary_by_digest and prepared_statements_instances, per step: the difference of their counters at the step's start and end"
	d.notes["plans"] = "EXPLAIN FORMAT=JSON of each statement shape's latest text with values in performance_schema.events_statements_history, at the step's end (none for prepared statements: their executions keep no values)"
	d.notes["waits"] = "performance_schema: each connection's current wait (events_waits_current; IO and lock instruments), else Sleep as idle and anything else as CPU, sampled"
	return d, nil
}

func (d *diag) Notes() map[string]string { return d.notes }

func (d *diag) SessionID() int { return d.tid }

// preparedPrefix begins the id of a prepared statement's shape (its text's MD5).
const preparedPrefix = "prepared:"

// Statements reads the digests of this schema's statements sent as text, and the
// prepared statements' executions (performance_schema.prepared_statements_instances:
// MariaDB counts an execution of a server-side prepared statement there, not under a
// digest), summed per text over the connections that prepared it. Times are the timer's
// picoseconds in seconds; Rows are rows sent plus rows affected.
func (d *diag) Statements(ctx context.Context) ([]engine.Statement, error) {
	if d.off != nil {
		return nil, d.off
	}
	rows, err := d.c.QueryContext(ctx, diagMark+`SELECT DIGEST, DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1e12,
	SUM_ROWS_SENT + SUM_ROWS_AFFECTED, SUM_ROWS_EXAMINED
FROM performance_schema.events_statements_summary_by_digest
WHERE SCHEMA_NAME = DATABASE() AND DIGEST IS NOT NULL AND DIGEST_TEXT NOT LIKE '%performance_schema%'
UNION ALL
SELECT CONCAT('`+preparedPrefix+`', MD5(SQL_TEXT)), SQL_TEXT, SUM(COUNT_EXECUTE), SUM(SUM_TIMER_EXECUTE) / 1e12,
	SUM(SUM_ROWS_SENT + SUM_ROWS_AFFECTED), SUM(SUM_ROWS_EXAMINED)
FROM performance_schema.prepared_statements_instances
WHERE SQL_TEXT NOT LIKE '%performance_schema%'
GROUP BY SQL_TEXT`)
	if err != nil {
		return nil, fmt.Errorf("statement digests: %w", err)
	}
	defer rows.Close()
	var out []engine.Statement
	for rows.Next() {
		var s engine.Statement
		var text sql.NullString
		if err := rows.Scan(&s.ID, &text, &s.Calls, &s.ExecSec, &s.Rows, &s.RowsExamined); err != nil {
			return nil, fmt.Errorf("statement digests: %w", err)
		}
		s.Text = text.String
		out = append(out, s)
	}
	return out, rows.Err()
}

// Plan is EXPLAIN FORMAT=JSON of the shape's most recent text with its values from the
// statement history (only what the server planned for those values: MariaDB plans per
// execution). A shape without a recent text, or not a SELECT, INSERT, UPDATE, DELETE or
// REPLACE, has no plan.
func (d *diag) Plan(ctx context.Context, s engine.Statement) (string, error) {
	if d.off != nil {
		return "", d.off
	}
	first := strings.ToUpper(strings.Fields(s.Text + " x")[0])
	switch first {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH":
	default:
		return "", fmt.Errorf("%s: no plan for this statement", first)
	}
	if strings.HasPrefix(s.ID, preparedPrefix) {
		if strings.Contains(s.Text, "?") {
			return "", errors.New("a prepared statement with parameters: MariaDB keeps no values of its executions to EXPLAIN")
		}
		return d.explain(ctx, s.Text)
	}
	var text sql.NullString
	err := d.c.QueryRowContext(ctx, diagMark+`SELECT SQL_TEXT FROM performance_schema.events_statements_history
WHERE DIGEST = ? AND SQL_TEXT IS NOT NULL ORDER BY TIMER_START DESC LIMIT 1`, s.ID).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !text.Valid) {
		return "", errors.New("no recent text of this statement in events_statements_history")
	}
	if err != nil {
		return "", fmt.Errorf("statement history: %w", err)
	}
	return d.explain(ctx, text.String)
}

// explain is EXPLAIN FORMAT=JSON of a statement's text.
func (d *diag) explain(ctx context.Context, text string) (string, error) {
	var plan string
	if err := d.c.QueryRowContext(ctx, "EXPLAIN FORMAT=JSON "+text).Scan(&plan); err != nil {
		return "", fmt.Errorf("explain: %w", err)
	}
	return plan, nil
}

// Waits reads each foreground thread's current wait by its OS thread id (what SessionPID
// gives): the instrument's name when a wait is in progress, idle for a connection in
// Sleep, CPU otherwise (which includes waits no enabled instrument sees).
func (d *diag) Waits(ctx context.Context) (map[int]string, error) {
	if d.off != nil {
		return nil, d.off
	}
	rows, err := d.c.QueryContext(ctx, diagMark+`SELECT t.THREAD_OS_ID, coalesce(t.PROCESSLIST_COMMAND, ''), coalesce(w.EVENT_NAME, '')
FROM performance_schema.threads t
LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL
WHERE t.TYPE = 'FOREGROUND' AND t.THREAD_OS_ID IS NOT NULL AND t.PROCESSLIST_ID <> CONNECTION_ID()`)
	if err != nil {
		return nil, fmt.Errorf("current waits: %w", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var tid int
		var command, event string
		if err := rows.Scan(&tid, &command, &event); err != nil {
			return nil, fmt.Errorf("current waits: %w", err)
		}
		switch {
		case event == "idle": // performance_schema's idle instrument: waiting for the client
			out[tid] = engine.WaitIdle
		case event != "":
			out[tid] = strings.TrimPrefix(event, "wait/")
		case command == "Sleep":
			out[tid] = engine.WaitIdle
		default:
			out[tid] = engine.WaitCPU
		}
	}
	return out, rows.Err()
}

func (d *diag) Close() error { return d.c.Close() }
