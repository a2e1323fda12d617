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
}

// auditTable checks one table (spec "Audit after every step"):
//   - count(*) = baseline + inserted − deleted, as counted by the actors;
//   - no duplicate transactionid (count(*) − count(DISTINCT transactionid) = 0);
//   - the rows counted through each secondary index = count(*), when the engine can force
//     an index (without a hint the count would be the same full count, so it is skipped);
//   - min(transactionid) ≥ the deleter's estimate;
//   - no missing ids between min and max when the engine's keys have no gaps
//     (Dialect.AutoIncrementGaps; SQLite: none; InnoDB auto-inc and Postgres sequence caches
//     may leave gaps, and then only max − min + 1 ≥ count(*) holds, implied by no duplicates).
//
// It returns a one-line summary, or an error naming the table and every number involved.
func auditTable(ctx context.Context, s engine.Session, d engine.Dialect, table string, e expectation) (string, error) {
	q := func(sql string) (int64, bool, error) {
		v, ok, err := queryInt(ctx, s, sql)
		if err != nil {
			return 0, false, fmt.Errorf("audit %s: %w", table, err)
		}
		return v, ok, nil
	}
	count, _, err := q(countSQL(table))
	if err != nil {
		return "", err
	}
	dups, _, err := q(duplicatesSQL(table))
	if err != nil {
		return "", err
	}
	lo, hasRows, err := q(minSQL(table))
	if err != nil {
		return "", err
	}
	hi, _, err := q(maxSQL(table))
	if err != nil {
		return "", err
	}

	var problems []string
	if want := e.Baseline + e.Inserted - e.Deleted; count != want {
		if e.Baseline == 0 {
			problems = append(problems, fmt.Sprintf("count(*)=%d but inserted−deleted=%d (inserted %d, deleted %d)",
				count, want, e.Inserted, e.Deleted))
		} else {
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
			return "", err
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
	if len(problems) > 0 {
		return "", fmt.Errorf("audit %s: %s", table, strings.Join(problems, "; "))
	}

	if !hasRows {
		return table + ": empty", nil
	}
	sum := fmt.Sprintf("%s: %d rows, ids %d..%d", table, count, lo, hi)
	if checked > 0 {
		sum += fmt.Sprintf(", %d indexes agree", checked)
	}
	return sum, nil
}

// auditAll audits every client's table after a step.
func (p *plan) auditAll(ctx context.Context, h engine.Handle, step string) (string, error) {
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
		sum, err := auditTable(ctx, s, d, c.table, p.expect(c))
		if err != nil {
			errs = append(errs, fmt.Errorf("insertbench %s client %d: %w", step, c.id, err))
			continue
		}
		sums = append(sums, sum)
	}
	if err := errors.Join(errs...); err != nil {
		return strings.Join(sums, "; "), err
	}
	return strings.Join(sums, "; "), nil
}

// expect is what client c's table must hold now.
func (p *plan) expect(c *client) expectation {
	e := expectation{
		Baseline:    c.baseline.Load(),
		Inserted:    c.inserted.Load(),
		Deleted:     c.deleted.Load(),
		MinEstimate: c.minEst.Load(),
	}
	if c.indexed.Load() {
		e.Indexes = secondaryIndexes(c.table)
	}
	return e
}
