package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
)

// The kind and the label of a cleanup step's load (Load.Kind, Group.Label).
const (
	KindCleanup  = "cleanup"
	LabelCleanup = "cleanup"
)

// Cleanup is the writeback-debt reduction that the Insert Benchmark runs between l.i2 and
// qr100 and the sysbench suite after its load and its read-write tests: one actor asks the
// engine to do its cleanup (engine.Maintainer: PostgreSQL VACUUM ANALYZE and CHECKPOINT,
// InnoDB's dirty-page flush, MyRocks' memtable flush and compaction, SQLite's checkpoint
// and ANALYZE) on the workload's tables, and the step lasts at least a wait. It is the
// Load and the Note (Noter) of a workload's CleanupStep.
type Cleanup struct {
	// Tables are the tables to clean up.
	Tables []string
	// Wait is how long the step lasts at least.
	Wait time.Duration
	// Who names the workload and step in an engine's error ("insertbench cleanup").
	Who string

	mu   sync.Mutex
	note string
}

// StepCore is what a workload's own step base gives each of its steps: Name, Group and
// Prepare (a workload's step base embeds StepBase and adds its Prepare).
type StepCore interface {
	Name() string
	Group() string
	Prepare(ctx context.Context, h engine.Handle) error
}

// CleanupStep is a workload's writeback-debt cleanup step, whole: its name, group and
// Prepare are the workload's step base's (StepCore), its Load and Note the Cleanup's, and
// its Verify the workload's Audit, if any.
type CleanupStep struct {
	StepCore
	Cleanup
	// Audit, when not nil, is the step's Verify (the workload's audit after every step);
	// nil: a cleanup changes no row, and there is nothing to check.
	Audit func(ctx context.Context, h engine.Handle) (string, error)
}

var (
	_ Step  = (*CleanupStep)(nil)
	_ Noter = (*CleanupStep)(nil)
)

// Verify is the Audit, or nothing to check.
func (s *CleanupStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	if s.Audit == nil {
		return "", nil
	}
	return s.Audit(ctx, h)
}

// Load is the cleanup's load: a single cleanup actor; the step then idles until Wait has
// passed.
func (c *Cleanup) Load(_ context.Context, hh engine.Handle) (Load, error) {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return Load{}, err
	}
	g := Group{
		Label: LabelCleanup, Role: LabelCleanup, Unit: UnitOps, UntilDone: true,
		Workers: []Worker{&cleaner{c: c, h: h}},
	}
	return Load{Kind: KindCleanup, Primary: LabelCleanup, Groups: []Group{g}, MinDuration: c.Wait}, nil
}

// Note is what the engine reported doing (Noter).
func (c *Cleanup) Note() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.note
}

func (c *Cleanup) setNote(n string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.note = n
}

// cleaner runs the engine's Maintainer once.
type cleaner struct {
	c    *Cleanup
	h    engine.SQL
	done bool
}

var _ Worker = (*cleaner)(nil)

// Init needs nothing from its session: the engine runs the cleanup on its own connections.
func (w *cleaner) Init(context.Context, engine.Session) error { return nil }

// Ready never waits.
func (w *cleaner) Ready(context.Context) error { return nil }

// Op runs the cleanup, or records that the engine has none; then ErrDone.
func (w *cleaner) Op(ctx context.Context) (int64, error) {
	if w.done {
		return 0, ErrDone
	}
	w.done = true
	m, ok := w.h.(engine.Maintainer)
	if !ok {
		w.c.setNote(fmt.Sprintf("engine (%s dialect) has no writeback-debt cleanup; waited only", w.h.Dialect().Name()))
		return 0, nil
	}
	detail, err := m.ReduceDebt(ctx, w.c.Tables)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", w.c.Who, err)
	}
	w.c.setNote(detail)
	return 0, nil
}

// Close has nothing to release.
func (w *cleaner) Close() error { return nil }
