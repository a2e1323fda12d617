package insertbench

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var _ workload.Step = (*indexStep)(nil)

// indexStep is l.x (reference §1.3, §1.9): every client creates the three secondary
// indexes on its table in the engine's idiom. Its rate is indexed rows per second (the
// reference's `(nr + nr1)/secs`), so each client's single op counts its table's rows.
// Unlike the reference, no extra rows are inserted first.
type indexStep struct {
	stepBase
}

// Load has one index actor per client (workload.Indexer), which counts its table's rows
// before the clock starts.
func (s *indexStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	d, err := workload.SQLDialect(hh)
	if err != nil {
		return workload.Load{}, err
	}
	g := workload.Group{Label: labelIndex, Role: labelIndex, Unit: workload.UnitRows, UntilDone: true}
	for _, c := range s.p.clients {
		var rows int64
		g.Workers = append(g.Workers, &workload.Indexer{
			Who:   fmt.Sprintf("%s %s client %d", Name, s.Name(), c.id),
			Stmts: d.CreateIndexes(c.table, secondaryIndexes(c.table)),
			Setup: func(ctx context.Context, sess engine.Session) (err error) {
				if rows, _, err = queryInt(ctx, sess, countSQL(c.table)); err != nil {
					return fmt.Errorf("count rows: %w", err)
				}
				return nil
			},
			Indexed: func() int64 {
				c.indexed.Store(true)
				return rows
			},
		})
	}
	return workload.Load{Kind: kindLoad, Primary: labelIndex, Groups: []workload.Group{g}}, nil
}
