package runner

import (
	"context"
	"sync"
)

// StartGate lines up the timed loads of runners whose steps run at once (a duet's
// points, each with its own Runner): a runner's load starts once every runner of the gate
// has prepared its step, opened its sessions and started its profiler, or has dropped
// out (its step failed or was skipped before that). The steps then measure the same
// seconds, which is the duet's premise. Without it, a duet's first slice of a block
// started 13–17 ms apart at the median and up to 250 ms on the project's VM (each point's
// first step of a block reads and checks its tables first, 0.46–0.56 s with the points at
// once on one server CPU), so part of a 0.5-s slice was measured by one point alone; with
// it, 0.7–1.1 ms at the median and at most 9 ms.
type StartGate struct {
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

// NewStartGate is a gate for n runners.
func NewStartGate(n int) *StartGate {
	g := &StartGate{waiting: n, open: make(chan struct{})}
	if n <= 0 {
		close(g.open)
	}
	return g
}

// arrive counts one runner in, ready or out; the last one opens the gate.
func (g *StartGate) arrive() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiting--; g.waiting == 0 {
		close(g.open)
	}
}

// wait counts a ready runner in and returns when the gate opens or ctx ends.
func (g *StartGate) wait(ctx context.Context) {
	g.arrive()
	select {
	case <-g.open:
	case <-ctx.Done():
	}
}

// leave counts in a runner whose step will not start its load.
func (g *StartGate) leave() {
	if g != nil {
		g.arrive()
	}
}
