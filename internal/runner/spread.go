package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Spread places a step's sessions on the nodes of a managed cluster (dbperf run --cluster
// N --spread) instead of all on Runner.Handle's server, node 0. The step's own Prepare,
// Load, Verify and the engine's own connections (the cleanup's) stay on Runner.Handle.
type Spread struct {
	// Nodes are an open handle on each node, node 0 (Runner.Handle's server) first.
	Nodes []engine.SQL
	// PIDs are the nodes' main server processes, node 0's first (HWTargets.ServerPID): a
	// session on node i has its CPU read from node i's processes. 0: not sampled.
	PIDs []int
	// ReadOnlyStandbys: only node 0 takes writes (PostgreSQL's hot standbys), so only the
	// sessions of read-only groups (workload.Group.ReadOnly) go to nodes 1…N-1, in turn,
	// and every other session stays on node 0. Otherwise (Galera: every node takes
	// writes) session k of the step goes to node k mod N.
	ReadOnlyStandbys bool
}

// Place says on which node each worker of groups opens its session, indexed as groups and
// their workers. Sessions are numbered in a stable order — the groups in the load's order,
// each group's workers in order — so one client's actors (the Insert Benchmark's query,
// insert and delete actors) land on different nodes, and a run's placement is the same
// every time.
func (s *Spread) Place(groups []workload.Group) [][]int {
	out := make([][]int, len(groups))
	n := len(s.Nodes)
	k := 0
	for gi, g := range groups {
		out[gi] = make([]int, len(g.Workers))
		for wi := range g.Workers {
			switch {
			case n < 2:
			case !s.ReadOnlyStandbys:
				out[gi][wi] = k % n
				k++
			case g.ReadOnly:
				out[gi][wi] = 1 + k%(n-1)
				k++
			}
		}
	}
	return out
}

// placementNote says where a step's sessions went, for the step's note: "sessions by
// node (--spread): node 0: insert #1, delete #1; node 1: range-query #1; node 2: none".
// A step of a cluster with read-only standbys whose sessions all write says so.
func (s *Spread) placementNote(groups []workload.Group, nodes [][]int) string {
	byNode := make([][]string, len(s.Nodes))
	sessions, reads := 0, 0
	for gi, g := range groups {
		// The workers of one label on one node: "#1,#4" (or "×12" for many).
		ids := make([][]string, len(s.Nodes))
		for wi, node := range nodes[gi] {
			ids[node] = append(ids[node], fmt.Sprintf("#%d", wi+1))
			sessions++
			if g.ReadOnly {
				reads++
			}
		}
		for node, l := range ids {
			switch {
			case len(l) == 0:
			case len(l) > 8:
				byNode[node] = append(byNode[node], fmt.Sprintf("%s ×%d", g.Label, len(l)))
			default:
				byNode[node] = append(byNode[node], g.Label+" "+strings.Join(l, ","))
			}
		}
	}
	if sessions == 0 {
		return ""
	}
	parts := make([]string, len(byNode))
	for i, l := range byNode {
		what := "none"
		if len(l) > 0 {
			what = strings.Join(l, ", ")
		}
		parts[i] = fmt.Sprintf("node %d: %s", i, what)
	}
	note := "sessions by node (--spread): " + strings.Join(parts, "; ")
	if s.ReadOnlyStandbys && reads == 0 {
		note += "; this step has no read-only sessions, and the standbys take only reads: every session on node 0"
	}
	return note
}

// session opens worker wi's session of group gi on its node (place: Spread.Place's
// answer; nil: Runner.Handle's server).
func (r *Runner) session(ctx context.Context, sh engine.SQL, place [][]int, gi, wi int) (engine.Session, int, error) {
	node := 0
	if place != nil {
		node = place[gi][wi]
		sh = r.Spread.Nodes[node]
	}
	s, err := sh.NewSession(ctx)
	if err != nil && node != 0 {
		err = fmt.Errorf("node %d: %w", node, err)
	}
	return s, node, err
}

// nodeHandle is the handle of the node serving w's session: Runner.Handle (node 0) without
// Spread.
func (r *Runner) nodeHandle(w *worker) engine.Handle {
	if r.Spread == nil || w.node == 0 {
		return r.Handle
	}
	return r.Spread.Nodes[w.node]
}

// nodePID is the main server process of the node serving w's session (HWTargets.ServerPID
// for node 0).
func (r *Runner) nodePID(w *worker) int {
	if r.Spread == nil || w.node == 0 || w.node >= len(r.Spread.PIDs) {
		return r.HW.ServerPID
	}
	return r.Spread.PIDs[w.node]
}
