package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/server"
)

// nodeDeath is a node whose server process exited during the run.
type nodeDeath struct {
	node, pid int
	role      string // "primary", "standby" or "node"
	at        time.Time
	// ended is how many of node 0's sessions waiting for the node were ended
	// (server.WaitEnder); endErr the last error ending them.
	ended  int
	endErr error
	// reported: a step's result names it already (StepFigures).
	reported bool
}

// role is node i's part in the cluster, as a death names it.
func (r *Run) role(i int) string {
	switch {
	case !r.cl.ReadOnlyStandbys:
		return "node"
	case i == 0:
		return "primary"
	default:
		return "standby"
	}
}

// watch watches every node's server process until stopWatch: one that exits is recorded
// (deaths: the step it happened in fails, naming it) and, when it is not node 0 and the
// engine's node 0 can wait for it forever (server.WaitEnder: a PostgreSQL primary's
// commits waiting for a synchronous standby), node 0's sessions waiting for it are ended
// at once and every poll after, so no session of the run waits more than DeathGrace for
// a dead node: the step fails instead of hanging.
func (r *Run) watch(ctx context.Context) {
	stop := make(chan struct{})
	r.mu.Lock()
	r.watchStop = stop
	r.mu.Unlock()
	we, _ := r.cl.Driver.(server.WaitEnder)
	for i, in := range r.cl.Nodes {
		pid := in.PID()
		r.watchWG.Add(1)
		go func() {
			defer r.watchWG.Done()
			select {
			case <-stop:
				return
			case <-in.Done():
			}
			d := &nodeDeath{node: i, pid: pid, role: r.role(i), at: time.Now()}
			r.mu.Lock()
			r.deaths = append(r.deaths, d)
			r.mu.Unlock()
			if i == 0 || we == nil {
				return
			}
			r.endWaits(ctx, we, d, stop)
		}()
	}
}

// endWaits ends node 0's sessions waiting for the dead node d at once and every poll
// after, until stop or ctx ends.
func (r *Run) endWaits(ctx context.Context, we server.WaitEnder, d *nodeDeath, stop <-chan struct{}) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		ectx, cancel := context.WithTimeout(ctx, DeathGrace)
		n, err := we.EndWaits(ectx, r.cl)
		cancel()
		r.mu.Lock()
		d.ended += n
		if err != nil {
			d.endErr = err
		}
		r.mu.Unlock()
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// stopWatch ends watch (nothing when it never started); safe to call more than once.
func (r *Run) stopWatch() {
	r.mu.Lock()
	stop := r.watchStop
	r.watchStop = nil
	r.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	r.watchWG.Wait()
}

// deadLine names the nodes that died so far, one clause each, for step (its load started
// at start: a node that died before is said to): "node 2 (standby, pid 4711) died during
// qp100: the primary's 2 sessions waiting for it (synchronous replication) were ended".
// "" when every node runs. unreported only: those no step's result named yet; mark: they
// are now. A clause already in have is left out (it named the node in the step's error).
func (r *Run) deadLine(step string, start time.Time, have string, unreported, mark bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, d := range r.deaths {
		if unreported && d.reported {
			continue
		}
		if mark {
			d.reported = true
		}
		head := fmt.Sprintf("node %d (%s, pid %d) died", d.node, d.role, d.pid)
		if strings.Contains(have, head) {
			continue
		}
		when := "during"
		if !start.IsZero() && d.at.Before(start) {
			when = "before"
		}
		line := fmt.Sprintf("%s %s %s", head, when, step)
		switch {
		case d.ended > 0:
			line += fmt.Sprintf(": the primary's %s waiting for it (synchronous replication) ended", plural(d.ended, "session"))
		case d.endErr != nil:
			line += fmt.Sprintf(" (ending the primary's sessions waiting for it: %v)", d.endErr)
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

// nameDeaths puts the nodes that died (and no earlier step named) first in a failed
// step's error (a session of theirs, or of the primary waiting for them, failed it), in
// an interrupted step's note. An ok step was measured and audited whole: a node that died
// after its audit is named by the next step.
func (r *Run) nameDeaths(step string, res *metrics.StepResult) {
	switch res.Status {
	case metrics.StatusFailed:
		if line := r.deadLine(step, res.StartedAt, res.Error, true, true); line != "" {
			res.Error = joinDetail(line, res.Error)
		}
	case metrics.StatusInterrupted:
		if line := r.deadLine(step, res.StartedAt, res.Note, true, true); line != "" {
			res.Note = joinDetail(res.Note, line)
		}
	}
}

// plural is "1 noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// joinDetail joins two parts of a detail with "; ", either of them empty.
func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
