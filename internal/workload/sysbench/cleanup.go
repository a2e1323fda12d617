package sysbench

import (
	"context"
	"fmt"
	"sync"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step   = (*cleanupStep)(nil)
	_ workload.Noter  = (*cleanupStep)(nil)
	_ workload.Worker = (*cleaner)(nil)
)

// cleanupStep is the writeback-debt reduction of §3.5 (run.sh's postwrite), after the
// load and after read-write: the engine's cleanup (engine.Maintainer, the Insert
// Benchmark's per engine: PostgreSQL VACUUM ANALYZE and CHECKPOINT, InnoDB's dirty-page
// flush, MyRocks' memtable flush and compaction, SQLite's checkpoint and ANALYZE) on
// every sbtest table, and the step lasts at least --cleanup-wait (the reference's
// min(1200, 60 + total rows/10⁶) s at medium and large). Its Note records what the
// engine did.
type cleanupStep struct {
	stepBase

	mu   sync.Mutex
	note string
}

// Load has a single cleanup actor; the step then idles until CleanupWait has passed.
func (s *cleanupStep) Load(_ context.Context, hh engine.Handle) (workload.Load, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return workload.Load{}, sqlErr
	}
	g := workload.Group{
		Label: labelCleanup, Role: labelCleanup, Unit: workload.UnitOps, UntilDone: true,
		Workers: []workload.Worker{&cleaner{s: s, h: h}},
	}
	return workload.Load{Kind: kindCleanup, Primary: labelCleanup, Groups: []workload.Group{g},
		MinDuration: s.p.p.CleanupWait}, nil
}

// Verify has nothing to check: a cleanup changes no row.
func (s *cleanupStep) Verify(context.Context, engine.Handle) (string, error) { return "", nil }

// Note is what the engine reported doing.
func (s *cleanupStep) Note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.note
}

func (s *cleanupStep) setNote(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note = n
}

// cleaner runs the engine's Maintainer once.
type cleaner struct {
	s    *cleanupStep
	h    engine.SQL
	done bool
}

// Init needs nothing from its session: the engine runs the cleanup on its own connections.
func (w *cleaner) Init(context.Context, engine.Session) error { return nil }

// Ready never waits.
func (w *cleaner) Ready(context.Context) error { return nil }

// Op runs the cleanup, or records that the engine has none; then ErrDone.
func (w *cleaner) Op(ctx context.Context) (int64, error) {
	if w.done {
		return 0, workload.ErrDone
	}
	w.done = true
	m, ok := w.h.(engine.Maintainer)
	if !ok {
		w.s.setNote(fmt.Sprintf("engine (%s dialect) has no writeback-debt cleanup; waited only", w.h.Dialect().Name()))
		return 0, nil
	}
	detail, err := m.ReduceDebt(ctx, w.s.p.names)
	if err != nil {
		return 0, fmt.Errorf("sysbench %s: %w", w.s.name, err)
	}
	w.s.setNote(detail)
	return 0, nil
}

// Close has nothing to release.
func (w *cleaner) Close() error { return nil }
