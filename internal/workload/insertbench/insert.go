package insertbench

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// maxInsertLead is how many batches the inserter may run ahead of the deleter in the
// closed-loop steps: the reference's 8-deep statement queues (reference §1.1).
const maxInsertLead = 8

// pair couples one client's insert and delete actors within one step (spec "Deletes done
// right"): the deleter never overtakes the inserter, and in closed-loop steps the inserter
// stays at most maxInsertLead batches ahead. Each side pokes the other's signal channel
// (capacity 1, non-blocking send) after every committed statement; the waiting side
// re-checks the counters on every wake-up.
type pair struct {
	insRows, delRows atomic.Int64 // rows affected in this step
	insOps, delOps   atomic.Int64 // statements committed in this step

	toDeleter  chan struct{}
	toInserter chan struct{}

	// hasDeleter: the step runs a delete actor for this client.
	hasDeleter bool
	// boundLead: the inserter waits for the deleter (closed-loop steps only; rate-limited
	// inserters never wait, their rate is the result).
	boundLead bool

	deleterGone atomic.Bool
}

func newPair(hasDeleter, boundLead bool) *pair {
	return &pair{
		toDeleter:  make(chan struct{}, 1),
		toInserter: make(chan struct{}, 1),
		hasDeleter: hasDeleter,
		boundLead:  boundLead && hasDeleter,
	}
}

// poke wakes the actor waiting on ch, if any, without ever blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// wait blocks until ok() holds, re-checking whenever ch is poked; it returns ctx.Err() when
// the step stops first.
func wait(ctx context.Context, ch <-chan struct{}, ok func() bool) error {
	for !ok() {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

var _ workload.Worker = (*inserter)(nil)

// inserter is a client's insert actor: multi-row INSERTs of rpc rows, one per Op, until its
// quota is done (quota 0: until the step stops).
type inserter struct {
	step  string
	c     *client
	pair  *pair
	d     engine.Dialect
	rpc   int
	quota int64
	gen   *RowGenerator

	full, tail engine.Stmt // tail inserts the quota's last, smaller batch
	tailRows   int
	args       engine.Args // reused by every batch
	ready      func() bool
	done       int64 // rows inserted in this step
}

func newInserter(p *plan, step string, c *client, pr *pair, d engine.Dialect, rpc int, quota int64) *inserter {
	w := &inserter{
		step: step, c: c, pair: pr, d: d, rpc: rpc, quota: quota,
		gen: NewRowGenerator(&p.ib, p.data, stream(p.seed, step, labelInsert, c.id)),
	}
	if quota > 0 {
		w.tailRows = int(quota % int64(rpc))
	}
	w.ready = w.canInsert
	return w
}

// Init prepares the batch statement (and the smaller last one) on the actor's session.
func (w *inserter) Init(ctx context.Context, s engine.Session) error {
	var err error
	if w.full, err = s.Prepare(ctx, insertSQL(w.d, w.c.table, w.rpc)); err != nil {
		return w.fail("insert: prepare", err)
	}
	if w.tailRows > 0 {
		if w.tail, err = s.Prepare(ctx, insertSQL(w.d, w.c.table, w.tailRows)); err != nil {
			return w.fail("insert: prepare last batch", err)
		}
	}
	return nil
}

// Ready waits, in closed-loop steps with deletes, while the inserter is maxInsertLead
// batches ahead of the deleter.
func (w *inserter) Ready(ctx context.Context) error {
	if !w.pair.boundLead || w.quotaDone() {
		return nil
	}
	return wait(ctx, w.pair.toInserter, w.ready)
}

func (w *inserter) canInsert() bool {
	p := w.pair
	return p.deleterGone.Load() || p.insOps.Load() < p.delOps.Load()+maxInsertLead
}

func (w *inserter) quotaDone() bool { return w.quota > 0 && w.done >= w.quota }

// Op inserts one batch and returns the rows inserted, or ErrDone once the quota is met.
func (w *inserter) Op(ctx context.Context) (int64, error) {
	if w.quotaDone() {
		return 0, workload.ErrDone
	}
	st, n := w.full, w.rpc
	if left := w.quota - w.done; w.quota > 0 && left < int64(n) {
		if w.tail == nil || left != int64(w.tailRows) {
			return 0, w.fail("insert", fmt.Errorf("%d of %d rows left, not a last batch of %d: "+
				"the engine reported unexpected row counts", left, w.quota, w.tailRows))
		}
		st, n = w.tail, w.tailRows
	}
	w.args.Reset()
	w.gen.StartBatch(w.c.inserted.Load())
	w.gen.appendRows(&w.args, n)
	rows, err := st.Exec(ctx, &w.args)
	if err != nil {
		return 0, w.fail("insert", err)
	}
	w.done += rows
	w.c.inserted.Add(rows)
	w.pair.insRows.Add(rows)
	w.pair.insOps.Add(1)
	poke(w.pair.toDeleter)
	return rows, nil
}

// Close releases the statements (the session belongs to the runner).
func (w *inserter) Close() error {
	return closeStmts(w.full, w.tail)
}

func (w *inserter) fail(what string, err error) error {
	return fmt.Errorf("insertbench %s client %d: %s: %w", w.step, w.c.id, what, err)
}

// closeStmts closes the non-nil statements and returns the first error.
func closeStmts(stmts ...engine.Stmt) error {
	var first error
	for _, st := range stmts {
		if st == nil {
			continue
		}
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
