package probe

import (
	"context"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/runner"
)

// BarrierOptions are one part's place in a run shared by several agents (dbperf run
// --part KEY/I/N, set by dbperf run --agents).
type BarrierOptions struct {
	// DSN is the PostgreSQL results store whose queue holds the barriers.
	DSN string
	// Key names the run the parts share; Part is this part's number (from 1) of Parts.
	Key         string
	Part, Parts int
	// Timeout bounds the wait at each step for the other parts.
	Timeout time.Duration
}

// Barrier is a part's runner.Profiler (OpenBarrier): each step's load starts once every
// part of the run has reached it, at one instant of the store's clock
// (fleet.Fleet.Barrier). Added first to a Set, it is waited at before any other
// profiler starts.
type Barrier struct {
	fl   *fleet.Fleet
	opts BarrierOptions
}

var _ runner.Profiler = (*Barrier)(nil)

// OpenBarrier opens the queue of the store opts.DSN for a part's barrier; Close closes it.
func OpenBarrier(ctx context.Context, opts BarrierOptions) (*Barrier, error) {
	fl, err := fleet.Open(ctx, opts.DSN)
	if err != nil {
		return nil, err
	}
	return &Barrier{fl: fl, opts: opts}, nil
}

// Start waits at the step's barrier for the other parts. Its error is the step's note as
// "agents barrier: …" (the profiler's name in the run's Set), which the merge of the
// parts reads.
func (b *Barrier) Start(ctx context.Context, step string, _ []runner.ProfiledSession) error {
	return b.fl.Barrier(ctx, b.opts.Key, step, b.opts.Part, b.opts.Parts, b.opts.Timeout)
}

// Stop does nothing: the barrier is at a step's start only.
func (b *Barrier) Stop(context.Context, string) error { return nil }

// Close closes the barrier's queue.
func (b *Barrier) Close() { b.fl.Close() }
