package cluster

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
)

// spreadLine says, for the run's env, where --spread puts a step's sessions on cl.
func spreadLine(cl *server.Cluster) string {
	n := len(cl.Nodes)
	if cl.ReadOnlyStandbys {
		return fmt.Sprintf("--spread: each step's read-only sessions (queries) on the standbys in turn (nodes 1-%d), writers on the primary (node 0); each step's note says which session went where", n-1)
	}
	return fmt.Sprintf("--spread: each step's sessions on the nodes in turn (session k of a step, its actors in order, on node k mod %d); each step's note says which session went where", n)
}

// OpenSpread opens a handle on every node but node 0 (whose handle h the run opened) for
// --spread: the runner opens each session on its node through them (Spread). It returns
// the function that closes them, the last opened first; when it fails, it has closed
// those it opened.
func (r *Run) OpenSpread(ctx context.Context, eng engine.Engine, h engine.Handle) (func(), error) {
	var handles []engine.Handle
	closeAll := func() {
		for i := len(handles) - 1; i >= 0; i-- {
			_ = handles[i].Close()
		}
	}
	h0, ok := h.(engine.SQL)
	if !ok {
		return nil, fmt.Errorf("--spread: --engine %s has no sessions to spread", eng.Meta().Name)
	}
	sp := &runner.Spread{Nodes: []engine.SQL{h0}, PIDs: r.cl.PIDs(), ReadOnlyStandbys: r.cl.ReadOnlyStandbys}
	for i, in := range r.cl.Nodes[1:] {
		hi, err := eng.Open(ctx, engine.Target{DSN: in.DSN})
		if err != nil {
			closeAll()
			return nil, store.RedactError(fmt.Errorf("--spread: open %s on node %d: %w", eng.Meta().Name, i+1, err), in.DSN)
		}
		handles = append(handles, hi)
		sh, ok := hi.(engine.SQL)
		if !ok {
			closeAll()
			return nil, fmt.Errorf("--spread: --engine %s has no sessions to spread", eng.Meta().Name)
		}
		sp.Nodes = append(sp.Nodes, sh)
	}
	r.spread = sp
	return closeAll, nil
}

// Spread is where the runner places each step's sessions (runner.Runner.Spread): nil
// without OpenSpread, or on a nil Run.
func (r *Run) Spread() *runner.Spread {
	if r == nil {
		return nil
	}
	return r.spread
}
