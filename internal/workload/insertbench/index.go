package insertbench

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*indexStep)(nil)
	_ workload.Worker = (*indexer)(nil)
)

// indexStep is l.x (reference §1.3, §1.9): every client creates the three secondary
// indexes on its table in the engine's idiom. Its rate is indexed rows per second (the
// reference's `(nr + nr1)/secs`), so each client's single op counts its table's rows.
// Unlike the reference, no extra rows are inserted first.
type indexStep struct {
	stepBase
}

// Load has one index actor per client.
func (s *indexStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return workload.Load{}, sqlErr
	}
	d := h.Dialect()
	g := workload.Group{Label: labelIndex, Role: labelIndex, Unit: workload.UnitRows, UntilDone: true}
	for _, c := range s.p.clients {
		g.Workers = append(g.Workers, &indexer{
			step: s.name, c: c, stmts: d.CreateIndexes(c.table, secondaryIndexes(c.table)),
		})
	}
	return workload.Load{Kind: kindLoad, Primary: labelIndex, Groups: []workload.Group{g}}, nil
}

// indexer creates one client's indexes in a single op.
type indexer struct {
	step  string
	c     *client
	stmts []string
	s     engine.Session
	rows  int64
	done  bool
}

// Init counts the rows to be indexed (not timed).
func (w *indexer) Init(ctx context.Context, s engine.Session) error {
	w.s = s
	n, _, err := queryInt(ctx, s, countSQL(w.c.table))
	if err != nil {
		return fmt.Errorf("insertbench %s client %d: count rows: %w", w.step, w.c.id, err)
	}
	w.rows = n
	return nil
}

// Ready never waits.
func (w *indexer) Ready(context.Context) error { return nil }

// Op creates the indexes and returns the rows indexed; then ErrDone.
func (w *indexer) Op(ctx context.Context) (int64, error) {
	if w.done {
		return 0, workload.ErrDone
	}
	w.done = true
	for _, q := range w.stmts {
		if _, err := w.s.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("insertbench %s client %d: create index: %w", w.step, w.c.id, err)
		}
	}
	w.c.indexed.Store(true)
	return w.rows, nil
}

// Close has nothing to release.
func (w *indexer) Close() error { return nil }
