package parts

import (
	"context"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/runner"
)

// BarrierName is the name a part's run gives its Barrier among its profilers: a step
// whose barrier failed has "agents barrier: …" in its note, which the merge reads.
const BarrierName = "agents barrier"

// barrierTimeout is how long a part waits at a step for the others.
const barrierTimeout = 5 * time.Minute

// Barrier is a part's runner.Profiler: each step's load starts once every part of the
// run has reached it, at one instant of the store's clock.
type Barrier struct {
	fl      *fleet.Fleet
	part    Spec
	timeout time.Duration
}

var _ runner.Profiler = (*Barrier)(nil)

// OpenBarrier opens the queue of the PostgreSQL results store at resultsPath for part's
// barrier; Close closes it.
func OpenBarrier(ctx context.Context, resultsPath string, part Spec) (*Barrier, error) {
	fl, err := fleet.Open(ctx, resultsPath)
	if err != nil {
		return nil, err
	}
	return &Barrier{fl: fl, part: part, timeout: barrierTimeout}, nil
}

// Start waits until every part has reached step. A barrier not passed (timed out, passed
// by the others already, another part gone) keeps the step from running
// (runner.NoStart): a part's load alone is no measurement of the run, and a part that
// came again after the others went on must never run its step alone.
func (b *Barrier) Start(ctx context.Context, step string, _ []runner.ProfiledSession) error {
	// Its error is the step's error as "agents barrier: …" (BarrierName, the profiler's
	// name), which the merge reads (apartWhy).
	if err := b.fl.Barrier(ctx, b.part.Key, step, b.part.I, b.part.N, b.timeout); err != nil {
		return runner.NoStart(err)
	}
	return nil
}

// Stop does nothing: the barrier is at a step's start only.
func (b *Barrier) Stop(context.Context, string) error { return nil }

// Close closes the barrier's queue.
func (b *Barrier) Close() { b.fl.Close() }
