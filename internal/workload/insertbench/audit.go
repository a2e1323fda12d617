package insertbench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// expectation is what the audit compares one table with (spec "Audit after every step").
type expectation struct {
	// Baseline is the row count before the run's first step (0 when l.i0 created the table).
	Baseline int64
	// Inserted and Deleted are the rows the actors' statements affected, over the run.
	Inserted, Deleted int64
	// MinEstimate is the deleter's estimate: no id below it may remain.
	MinEstimate int64
	// Indexes are the secondary indexes to count through (empty: not checked).
	Indexes []engine.Index
	// Stored says the baseline is the row count the run that wrote the table left, kept in
	// dbperf_audit, and MaxID is the highest id that run left (0: not checked).
	Stored bool
	MaxID  int64
	// Content is what the rows must hold (nil: contents not checked, for the reason in
	// NoContent); content is how the engine checks them and bufs the data buffer of a seed.
	Content   *contentModel
	NoContent string
	content   *contentSQL
	bufs      func(seed int64) *DataBuffer
}

// auditTable checks one table (spec "Audit after every step"):
//   - count(*) = baseline + inserted − deleted, as counted by the actors;
//   - no duplicate transactionid (count(*) − count(DISTINCT transactionid) = 0);
//   - the rows counted through each secondary index = count(*), when the engine can force
//     an index (without a hint the count would be the same full count, so it is skipped);
//   - min(transactionid) ≥ the deleter's estimate;
//   - no missing ids between min and max when the engine's keys have no gaps
//     (Dialect.AutoIncrementGaps; SQLite: none; InnoDB auto-inc and Postgres sequence caches
//     may leave gaps, and then only max − min + 1 ≥ count(*) holds, implied by no duplicates);
//   - max(transactionid) = the highest id the run that wrote the table left, when a later
//     run starts from stored expectations;
//   - the contents: every row that must remain holds what the generator made (content.go).
//
// It returns a one-line summary, or an error naming the table and every number involved.
func auditTable(ctx context.Context, s engine.Session, d engine.Dialect, table string, e expectation) (string, error) {
	sum, _, err := auditTableMax(ctx, s, d, table, e)
	return sum, err
}

// auditTableMax is auditTable that also returns max(transactionid) (0 for no rows).
func auditTableMax(ctx context.Context, s engine.Session, d engine.Dialect, table string, e expectation) (string, int64, error) {
	sum, hi, err := auditChecks(ctx, s, d, table, e)
	if err != nil {
		return "", 0, fmt.Errorf("audit %s: %w", table, err)
	}
	return sum, hi, nil
}

func auditChecks(ctx context.Context, s engine.Session, d engine.Dialect, table string, e expectation) (string, int64, error) {
	q := func(sql string) (int64, bool, error) {
		return queryInt(ctx, s, sql)
	}
	count, _, err := q(countSQL(table))
	if err != nil {
		return "", 0, err
	}
	dups, _, err := q(duplicatesSQL(table))
	if err != nil {
		return "", 0, err
	}
	lo, hasRows, err := q(minSQL(table))
	if err != nil {
		return "", 0, err
	}
	hi, _, err := q(maxSQL(table))
	if err != nil {
		return "", 0, err
	}

	var problems []string
	if want := e.Baseline + e.Inserted - e.Deleted; count != want {
		switch {
		case e.Stored:
			problems = append(problems, fmt.Sprintf(
				"count(*)=%d but stored+inserted−deleted=%d (stored %d: the rows the run that wrote the table left, inserted %d, deleted %d)",
				count, want, e.Baseline, e.Inserted, e.Deleted))
		case e.Baseline == 0:
			problems = append(problems, fmt.Sprintf("count(*)=%d but inserted−deleted=%d (inserted %d, deleted %d)",
				count, want, e.Inserted, e.Deleted))
		default:
			problems = append(problems, fmt.Sprintf(
				"count(*)=%d but baseline+inserted−deleted=%d (baseline %d, inserted %d, deleted %d)",
				count, want, e.Baseline, e.Inserted, e.Deleted))
		}
	}
	if dups != 0 {
		problems = append(problems, fmt.Sprintf("%d duplicate transactionid values (count(*)=%d, count(DISTINCT transactionid)=%d)",
			dups, count, count-dups))
	}
	checked := 0
	for _, ix := range e.Indexes {
		if _, ok := d.FromIndex(table, ix.Name); !ok {
			continue
		}
		n, _, err := q(countThroughSQL(d, table, ix))
		if err != nil {
			return "", 0, err
		}
		checked++
		if n != count {
			problems = append(problems, fmt.Sprintf("count(%s) through %s=%d but count(*)=%d", ix.Columns[0], ix.Name, n, count))
		}
	}
	if hasRows && lo < e.MinEstimate {
		problems = append(problems, fmt.Sprintf("min(transactionid)=%d is below the deleter's estimate %d",
			lo, e.MinEstimate))
	}
	if hasRows && !d.AutoIncrementGaps() && dups == 0 && hi-lo+1 != count {
		problems = append(problems, fmt.Sprintf(
			"transactionid %d..%d spans %d ids but count(*)=%d: %d ids missing (%s keys have no gaps)",
			lo, hi, hi-lo+1, count, hi-lo+1-count, d.Name()))
	}
	if e.MaxID > 0 && hi != e.MaxID {
		what := "rows were added above it"
		if hi < e.MaxID {
			what = "its highest rows are missing"
		}
		problems = append(problems, fmt.Sprintf("max(transactionid)=%d but the run that wrote the table left %d: %s",
			hi, e.MaxID, what))
	}
	content := "contents unchecked"
	switch {
	case e.Content != nil && e.content != nil && hasRows:
		k := &contentCheck{ctx: ctx, s: s, sql: e.content, table: table, m: e.Content, bufs: e.bufs}
		problem, err := k.run(lo)
		if err != nil {
			return "", 0, fmt.Errorf("content check: %w", err)
		}
		if problem != "" {
			problems = append(problems, "contents: "+problem)
		}
		content = "contents as generated"
	case e.Content != nil && e.content == nil:
		content += " (no content check for the " + d.Name() + " dialect)"
	case e.Content == nil && e.NoContent != "":
		content += " (" + e.NoContent + ")"
	}
	if len(problems) > 0 {
		return "", 0, errors.New(strings.Join(problems, "; "))
	}

	if !hasRows {
		return table + ": empty", 0, nil
	}
	sum := fmt.Sprintf("%s: %d rows, ids %d..%d", table, count, lo, hi)
	if checked > 0 {
		sum += fmt.Sprintf(", %d indexes agree", checked)
	}
	if e.Content != nil || e.NoContent != "" {
		sum += ", " + content
	}
	return sum, hi, nil
}

// auditAll audits every client's table after a step whose insert actors (if any) inserted
// rpc rows per statement, and stores the expectations of every table that passed, for the
// next audit and for a later run on the same data.
func (p *plan) auditAll(ctx context.Context, h engine.SQL, step string, rpc int) (string, error) {
	p.baseline.Lock()
	defer p.baseline.Unlock()
	s, err := h.NewSession(ctx)
	if err != nil {
		return "", fmt.Errorf("insertbench %s audit: %w", step, err)
	}
	defer s.Close()
	d := h.Dialect()
	var (
		sums []string
		errs []error
	)
	for _, c := range p.clients {
		if c.model != nil {
			if err := c.model.advance(p, c, step, rpc); err != nil {
				c.model, c.noContent = nil, err.Error()
			}
		}
		sum, hi, err := auditTableMax(ctx, s, d, c.table, p.expect(c, d))
		if err != nil {
			errs = append(errs, fmt.Errorf("insertbench %s client %d: %w", step, c.id, err))
			continue
		}
		if c.model != nil {
			st := storedState{model: c.model, rowsLeft: c.model.live(), maxID: hi}
			if err := writeState(ctx, s, d, c.table, st); err != nil {
				errs = append(errs, fmt.Errorf("insertbench %s client %d: store the audit's expectations in %s: %w",
					step, c.id, stateTable, err))
				continue
			}
		}
		sums = append(sums, sum)
	}
	if err := errors.Join(errs...); err != nil {
		return strings.Join(sums, "; "), err
	}
	return strings.Join(sums, "; "), nil
}

// expect is what client c's table must hold now.
func (p *plan) expect(c *client, d engine.Dialect) expectation {
	e := expectation{
		Baseline:    c.baseline.Load(),
		Inserted:    c.inserted.Load(),
		Deleted:     c.deleted.Load(),
		MinEstimate: c.minEst.Load(),
	}
	if c.indexed.Load() {
		e.Indexes = secondaryIndexes(c.table)
	}
	p.expectContent(&e, c.model, c.noContent, d)
	return e
}

// expectContent sets what the content check needs.
func (p *plan) expectContent(e *expectation, m *contentModel, why string, d engine.Dialect) {
	if m == nil {
		e.NoContent = why
		return
	}
	e.Content, e.bufs = m, p.buffer
	e.content, _ = contentSQLOf(d)
}

// buffer is the data buffer of a seed (built once: a stored segment may come from a run
// with another seed).
func (p *plan) buffer(seed int64) *DataBuffer {
	if seed == p.seed {
		return p.data
	}
	if b, ok := p.buffers[seed]; ok {
		return b
	}
	if p.buffers == nil {
		p.buffers = map[int64]*DataBuffer{}
	}
	b := NewDataBuffer(seed)
	p.buffers[seed] = b
	return b
}

// checkStored audits a table before a run's first step against the expectations the run
// that wrote it stored; st is what readState returned.
func (p *plan) checkStored(ctx context.Context, s engine.Session, d engine.Dialect, c *client, st storedState) error {
	e := expectation{Baseline: st.rowsLeft, Stored: true, MaxID: st.maxID}
	if c.indexed.Load() {
		e.Indexes = secondaryIndexes(c.table)
	}
	p.expectContent(&e, st.model, "", d)
	_, err := auditTable(ctx, s, d, c.table, e)
	return err
}

// markOpen records in the database that step is about to change the tables whose
// expectations are stored (see auditstate.go).
func (p *plan) markOpen(ctx context.Context, h engine.SQL, step string) error {
	p.baseline.Lock()
	defer p.baseline.Unlock()
	var tables []string
	for _, c := range p.clients {
		if c.model != nil {
			tables = append(tables, c.table)
		}
	}
	if len(tables) == 0 {
		return nil
	}
	s, err := h.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("insertbench %s: %w", step, err)
	}
	defer s.Close()
	if err := markOpen(ctx, s, h.Dialect(), step, tables); err != nil {
		return fmt.Errorf("insertbench %s: mark the tables' expectations open in %s: %w", step, stateTable, err)
	}
	return nil
}
