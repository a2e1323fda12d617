package sysbench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
)

// measure reads a table's row count and sum(k).
func measure(ctx context.Context, s engine.Session, table string) (count, sumK int64, err error) {
	if count, err = queryInt(ctx, s, countSQL(table)); err != nil {
		return 0, 0, err
	}
	if sumK, err = queryInt(ctx, s, sumKSQL(table)); err != nil {
		return 0, 0, err
	}
	return count, sumK, nil
}

// checkTable compares a table with what the run's statements reported: count(*) with
// the rows inserted less the rows deleted, sum(k) with the k of the rows inserted, less
// the k the deletes returned, plus one per row k = k+1 changed (non-index updates change
// neither). It returns a one-line summary, or an error naming the table and the numbers.
func checkTable(ctx context.Context, s engine.Session, table string, wantCount, wantSum int64) (string, error) {
	count, sum, err := measure(ctx, s, table)
	if err != nil {
		return "", fmt.Errorf("data check %s: %w", table, err)
	}
	var problems []string
	if count != wantCount {
		problems = append(problems, fmt.Sprintf("count(*)=%d but the statements' inserts and deletes leave %d rows (%+d)",
			count, wantCount, count-wantCount))
	}
	if sum != wantSum {
		problems = append(problems, fmt.Sprintf("sum(k)=%d but the statements' inserts, deletes and k=k+1 updates give %d (%+d)",
			sum, wantSum, sum-wantSum))
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("data check %s: %s", table, strings.Join(problems, "; "))
	}
	return fmt.Sprintf("%s: %d rows, sum(k)=%d", table, count, sum), nil
}

// checkAll is the data check of every table after a step that wrote (reference §3.3's
// statements as counted by the workers, spec: "a lost or doubled write fails the test").
func (p *plan) checkAll(ctx context.Context, h engine.SQL, step string) (string, error) {
	s, err := h.NewSession(ctx)
	if err != nil {
		return "", fmt.Errorf("sysbench %s data check: %w", step, err)
	}
	defer s.Close()
	var (
		sums []string
		errs []error
	)
	for _, t := range p.tables {
		sum, err := checkTable(ctx, s, t.name, t.count.Load(), t.sumK.Load())
		if err != nil {
			errs = append(errs, fmt.Errorf("sysbench %s: %w", step, err))
			continue
		}
		sums = append(sums, sum)
	}
	return strings.Join(sums, "; "), errors.Join(errs...)
}
