package workload

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
)

// Indexer is a worker that builds a table's indexes in one op: it runs Stmts (the
// dialect's CreateIndexes) and counts the rows indexed (Indexed), then returns ErrDone.
// A workload's index step has one per table.
type Indexer struct {
	// Who names the workload, step and table in errors: "<Who>: create index: …".
	Who string
	// Stmts create the indexes.
	Stmts []string
	// After, when not nil, is closed once the table's rows are in: Ready waits for it
	// (not timed as the build).
	After <-chan struct{}
	// Setup, when not nil, runs in Init with the worker's session (not timed), e.g. to
	// count the rows to index; its error is the worker's, after Who.
	Setup func(ctx context.Context, s engine.Session) error
	// Indexed is called once every index exists; it returns the rows indexed (the op's
	// count).
	Indexed func() int64

	s    engine.Session
	done bool
}

var _ Worker = (*Indexer)(nil)

// Init keeps the session and runs Setup.
func (w *Indexer) Init(ctx context.Context, s engine.Session) error {
	w.s = s
	if w.Setup == nil {
		return nil
	}
	if err := w.Setup(ctx, s); err != nil {
		return fmt.Errorf("%s: %w", w.Who, err)
	}
	return nil
}

// Ready waits for After.
func (w *Indexer) Ready(ctx context.Context) error {
	if w.done || w.After == nil {
		return nil
	}
	select {
	case <-w.After:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Op creates the indexes and returns the rows indexed; then ErrDone.
func (w *Indexer) Op(ctx context.Context) (int64, error) {
	if w.done {
		return 0, ErrDone
	}
	w.done = true
	for _, q := range w.Stmts {
		if _, err := w.s.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("%s: create index: %w", w.Who, err)
		}
	}
	return w.Indexed(), nil
}

// Close has nothing to release.
func (w *Indexer) Close() error { return nil }
