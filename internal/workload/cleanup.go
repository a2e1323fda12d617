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
// and ANALYZE) on the workload's tables, and the step lasts at least a wait. A workload's
// cleanup step holds one and returns its Load and Note; the zero value is ready to use.
type Cleanup struct {
	mu   sync.Mutex
	note string
}

// Load is the cleanup's load on tables, lasting at least wait; who names the workload and
// step in an engine's error ("insertbench cleanup").
func (c *Cleanup) Load(hh engine.Handle, tables []string, wait time.Duration, who string) (Load, error) {
	h, err := engine.AsSQL(hh)
	if err != nil {
		return Load{}, err
	}
	g := Group{
		Label: LabelCleanup, Role: LabelCleanup, Unit: UnitOps, UntilDone: true,
		Workers: []Worker{&cleaner{c: c, h: h, tables: tables, who: who}},
	}
	return Load{Kind: KindCleanup, Primary: LabelCleanup, Groups: []Group{g}, MinDuration: wait}, nil
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
	c      *Cleanup
	h      engine.SQL
	tables []string
	who    string
	done   bool
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
	detail, err := m.ReduceDebt(ctx, w.tables)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", w.who, err)
	}
	w.c.setNote(detail)
	return 0, nil
}

// Close has nothing to release.
func (w *cleaner) Close() error { return nil }
