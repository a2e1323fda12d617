package insertbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// The audit's expectations are kept in the benchmark database itself, next to the pi<N>
// tables, so that a later run on the same data (steps without l.i0 on a kept --workdir or a
// --dsn server) audits against what the run that wrote the data left, not against the
// table as it finds it. Two small tables, written by Verify and Prepare (never in measured
// time), integers only (the engines' sessions read single integers):
//
//	dbperf_audit           one row per benchmark table: the rows it must hold, how many
//	                       rows of its first segment are deleted, its highest id, and
//	                       whether a step that changes it is running (open_step)
//	dbperf_audit_segments  the table's live segments: what regenerates their rows
//
// A table whose row is missing, was written by another format or workload version, or was
// left open by a step that never finished its audit (interrupted, failed) is audited as
// before: from its row count at the run's first step, without a content check.
const (
	stateTable   = "dbperf_audit"
	segmentTable = "dbperf_audit_segments"
	// stateFormat is bumped whenever the tables' meaning changes.
	stateFormat = 1
)

var stateColumns = []string{
	"tablename varchar(64) NOT NULL PRIMARY KEY",
	"audit_format int NOT NULL",
	"workload_version int NOT NULL",
	"open_step int NOT NULL", // 1 + the step's index in stepTable; 0: none
	"rows_left bigint NOT NULL",
	"head_skip bigint NOT NULL",
	"max_id bigint NOT NULL",
	"segments int NOT NULL",
}

var segmentColumns = []string{
	"tablename varchar(64) NOT NULL",
	"seq int NOT NULL",
	"seed bigint NOT NULL",
	"step int NOT NULL", // index in stepTable
	"client int NOT NULL",
	"rpc int NOT NULL",
	"time_base bigint NOT NULL",
	"rows_inserted bigint NOT NULL",
	"data_length_min int NOT NULL",
	"data_length_max int NOT NULL",
	"data_random_pct int NOT NULL",
	"cashregisters int NOT NULL",
	"products int NOT NULL",
	"customers int NOT NULL",
	"max_price int NOT NULL",
	"PRIMARY KEY (tablename, seq)",
}

// columnNames are the names of column definitions (constraints left out).
func columnNames(defs []string) []string {
	var out []string
	for _, c := range defs {
		if name, _, _ := strings.Cut(c, " "); name != "PRIMARY" {
			out = append(out, name)
		}
	}
	return out
}

// stepNumber is a step's index in stepTable (-1 when unknown).
func stepNumber(name string) int {
	for i, st := range stepTable() {
		if st.name == name {
			return i
		}
	}
	return -1
}

// storedState is one table's row of dbperf_audit with its segments.
type storedState struct {
	model    *contentModel
	rowsLeft int64
	maxID    int64
}

// ensureStateTables creates the two tables when they do not exist.
func ensureStateTables(ctx context.Context, s engine.Session, d engine.Dialect) error {
	for _, t := range []struct {
		name string
		cols []string
	}{{stateTable, stateColumns}, {segmentTable, segmentColumns}} {
		if _, _, err := queryInt(ctx, s, "SELECT count(*) FROM "+t.name); err == nil {
			continue
		}
		for _, q := range d.CreateTable(t.name, t.cols) {
			if _, err := s.Exec(ctx, q); err != nil {
				// Another process may have created it meanwhile: the parts of a run
				// several agents share (dbperf run --agents) audit at the same time.
				if _, _, err2 := queryInt(ctx, s, "SELECT count(*) FROM "+t.name); err2 == nil {
					break
				}
				return fmt.Errorf("create %s: %w", t.name, err)
			}
		}
	}
	return nil
}

// execIn runs the statements in one transaction.
func execIn(ctx context.Context, s engine.Session, d engine.Dialect, stmts []stmtArgs) (err error) {
	if _, err := s.Exec(ctx, d.BeginWrite()); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = s.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	for _, st := range stmts {
		if _, err := s.Exec(ctx, st.q, st.args...); err != nil {
			return err
		}
	}
	_, err = s.Exec(ctx, "COMMIT")
	return err
}

type stmtArgs struct {
	q    string
	args []any
}

// insertRowSQL is an INSERT of one row into table with the named columns.
func insertRowSQL(d engine.Dialect, table string, cols []string) string {
	ph := make([]string, len(cols))
	for i := range cols {
		ph[i] = d.Placeholder(i + 1)
	}
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")"
}

// clearStates forgets the expectations of tables (l.i0 creates them anew).
func clearStates(ctx context.Context, s engine.Session, d engine.Dialect, tables []string) error {
	if err := ensureStateTables(ctx, s, d); err != nil {
		return err
	}
	var stmts []stmtArgs
	for _, t := range tables {
		for _, st := range []string{stateTable, segmentTable} {
			stmts = append(stmts, stmtArgs{"DELETE FROM " + st + " WHERE tablename = " + d.Placeholder(1), []any{t}})
		}
	}
	return execIn(ctx, s, d, stmts)
}

// markOpen records that step is about to change tables: until its audit writes their
// expectations again, a later run does not trust the stored ones.
func markOpen(ctx context.Context, s engine.Session, d engine.Dialect, step string, tables []string) error {
	var stmts []stmtArgs
	for _, t := range tables {
		stmts = append(stmts, stmtArgs{"UPDATE " + stateTable + " SET open_step = " + d.Placeholder(1) +
			" WHERE tablename = " + d.Placeholder(2), []any{stepNumber(step) + 1, t}})
	}
	return execIn(ctx, s, d, stmts)
}

// writeState stores a table's expectations after an audit that passed.
func writeState(ctx context.Context, s engine.Session, d engine.Dialect, table string, st storedState) error {
	m := st.model
	stmts := []stmtArgs{
		{"DELETE FROM " + stateTable + " WHERE tablename = " + d.Placeholder(1), []any{table}},
		{"DELETE FROM " + segmentTable + " WHERE tablename = " + d.Placeholder(1), []any{table}},
		{insertRowSQL(d, stateTable, columnNames(stateColumns)), []any{
			table, stateFormat, version, 0, st.rowsLeft, m.skip, st.maxID, len(m.segs)}},
	}
	segSQL := insertRowSQL(d, segmentTable, columnNames(segmentColumns))
	for i, g := range m.segs {
		stmts = append(stmts, stmtArgs{segSQL, []any{
			table, i + 1, g.seed, stepNumber(g.step), g.client, g.rpc, g.timeBase, g.rows,
			g.shape.lenMin, g.shape.lenMax, g.shape.pct,
			g.shape.cashregisters, g.shape.products, g.shape.customers, g.shape.maxP,
		}})
	}
	return execIn(ctx, s, d, stmts)
}

// errNoState: the table has no usable stored expectations; the error says why.
var errNoState = errors.New("no stored expectations")

// readState reads a table's stored expectations. An error wrapping errNoState says why
// there are none to use; any other error is a failed query.
func readState(ctx context.Context, s engine.Session, d engine.Dialect, table string) (storedState, error) {
	var st storedState
	for _, t := range []string{stateTable, segmentTable} {
		if _, _, err := queryInt(ctx, s, "SELECT count(*) FROM "+t); err != nil {
			return st, fmt.Errorf("%w: the database has no %s table (written by an older dbperf or another tool)", errNoState, t)
		}
	}
	// One prepared statement per column, run once per row: a table's segments grow by one
	// per step that inserts (a sweep of short slices adds hundreds), and preparing and
	// closing a statement for every value tripled the round trips of a read that a sweep's
	// every block waits for.
	var stmts []engine.Stmt
	defer func() {
		for _, st := range stmts {
			_ = st.Close()
		}
	}()
	prepare := func(from string, cols []string, bySeq bool) ([]engine.Stmt, error) {
		where := " WHERE tablename = " + d.Placeholder(1)
		if bySeq {
			where += " AND seq = " + d.Placeholder(2)
		}
		out := make([]engine.Stmt, len(cols))
		for i, col := range cols {
			st, err := s.Prepare(ctx, "SELECT "+col+" FROM "+from+where)
			if err != nil {
				return nil, fmt.Errorf("read %s.%s of %s: %w", from, col, table, err)
			}
			stmts = append(stmts, st)
			out[i] = st
		}
		return out, nil
	}
	var args engine.Args
	// get reads a row's columns (seq 0: the state table's row, by table name alone).
	get := func(from string, cols []string, sts []engine.Stmt, seq int64) (map[string]int64, bool, error) {
		vals := make(map[string]int64, len(cols))
		for i, col := range cols {
			args.Reset()
			args.Text(table)
			if seq > 0 {
				args.Int(seq)
			}
			v, ok, err := sts[i].QueryInt(ctx, &args)
			if err != nil {
				return nil, false, fmt.Errorf("read %s.%s of %s: %w", from, col, table, err)
			}
			if !ok {
				return nil, false, nil
			}
			vals[col] = v
		}
		return vals, true, nil
	}
	stateCols := columnNames(stateColumns)[1:]
	stateStmts, err := prepare(stateTable, stateCols, false)
	if err != nil {
		return st, err
	}
	vals, ok, err := get(stateTable, stateCols, stateStmts, 0)
	switch {
	case err != nil:
		return st, err
	case !ok:
		return st, fmt.Errorf("%w: %s has no row for %s (its data was not written by a run whose audit passed)", errNoState, stateTable, table)
	}
	switch {
	case vals["audit_format"] != stateFormat || vals["workload_version"] != version:
		return st, fmt.Errorf("%w: %s's row for %s is of audit format %d, workload version %d (this dbperf: %d, %d)",
			errNoState, stateTable, table, vals["audit_format"], vals["workload_version"], stateFormat, version)
	case vals["open_step"] != 0:
		step := "?"
		if i := int(vals["open_step"]) - 1; i >= 0 && i < len(stepTable()) {
			step = stepTable()[i].name
		}
		return st, fmt.Errorf("%w: step %s changed %s and never finished its audit (interrupted or failed)", errNoState, step, table)
	}
	m := &contentModel{skip: vals["head_skip"]}
	steps := stepTable()
	segCols := columnNames(segmentColumns)[2:]
	segStmts, err := prepare(segmentTable, segCols, true)
	if err != nil {
		return st, err
	}
	for i := int64(1); i <= vals["segments"]; i++ {
		g, ok, err := get(segmentTable, segCols, segStmts, i)
		if err != nil {
			return st, err
		}
		if !ok {
			return st, fmt.Errorf("%w: %s lacks segment %d of %s", errNoState, segmentTable, i, table)
		}
		if g["step"] < 0 || g["step"] >= int64(len(steps)) || g["rpc"] < 1 {
			return st, fmt.Errorf("%w: %s's segment %d of %s is invalid (step %d, rpc %d)", errNoState, segmentTable, i, table, g["step"], g["rpc"])
		}
		m.segs = append(m.segs, segment{
			seed: g["seed"], step: steps[g["step"]].name, client: int(g["client"]), rpc: int(g["rpc"]),
			timeBase: g["time_base"], rows: g["rows_inserted"],
			shape: rowShape{
				lenMin: int(g["data_length_min"]), lenMax: int(g["data_length_max"]), pct: int(g["data_random_pct"]),
				cashregisters: int(g["cashregisters"]), products: int(g["products"]),
				customers: int(g["customers"]), maxP: int(g["max_price"]),
			},
		})
	}
	st.model, st.rowsLeft, st.maxID = m, vals["rows_left"], vals["max_id"]
	if live := m.live(); live != st.rowsLeft {
		return st, fmt.Errorf("%w: %s's row for %s says %d rows but its segments hold %d", errNoState, stateTable, table, st.rowsLeft, live)
	}
	if err := validShape(m); err != nil {
		return st, fmt.Errorf("%w: %s of %s: %v", errNoState, segmentTable, table, err)
	}
	return st, nil
}

// validShape checks that stored segments can be generated again (NewRowGenerator would
// panic on bounds it cannot draw from).
func validShape(m *contentModel) error {
	for i, g := range m.segs {
		s := g.shape
		if s.cashregisters < 1 || s.products < 1 || s.customers < 1 || s.maxP < 1 ||
			s.lenMin < 0 || s.lenMax < s.lenMin || s.lenMax > maxDataLength || s.pct < 0 || s.pct > 100 || g.rows < 0 {
			return errors.New("segment " + strconv.Itoa(i+1) + " has invalid bounds")
		}
	}
	return nil
}
