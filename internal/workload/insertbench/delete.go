package insertbench

import (
	"context"
	"fmt"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var _ workload.Worker = (*deleter)(nil)

// deleter is a client's delete actor (reference §1.5, spec "Deletes done right"): the table
// is a queue, rows inserted at the tail are deleted at the head, rpc rows per statement.
//
//   - It keeps its own estimate of min(transactionid) as the reference does, advanced by the
//     rows each delete actually removed (rows affected), not by the rows asked for.
//   - It re-reads min(transactionid) (NULL → keep the estimate) before its first delete,
//     every ResyncGetMin deletes (0 = only at the start) and after any delete that removed
//     fewer rows than asked or failed. The re-read is done in Ready, so it is never part of a
//     delete's service time.
//   - It never overtakes the inserter: Ready waits until this step's inserted rows are at
//     least its deleted rows + rpc.
//   - It publishes the estimate to the client's query actors and to the audit.
type deleter struct {
	step   string
	c      *client
	pair   *pair
	d      engine.Dialect
	rpc    int
	resync int

	// quota > 0: delete exactly this many rows in the step, then ErrDone (l.i1/l.i2 keep
	// the table size constant, as the reference's queue does). 0: until the step stops.
	quota int64
	sess  engine.Session
	// last deletes the final partial batch (limit lastLimit) when quota is not a multiple of rpc.
	last      engine.Stmt
	lastLimit int64
	// empty counts deletes in a row that removed nothing: a table the deleter cannot
	// drain any further is an error, not a loop.
	empty int

	del, getMin engine.Stmt
	args        engine.Args
	ready       func() bool
	est         int64 // every id below est has been deleted
	batches     int   // deletes since the last re-read
	needMin     bool
}

func newDeleter(p *plan, step string, c *client, pr *pair, d engine.Dialect, rpc int, quota int64) *deleter {
	w := &deleter{step: step, c: c, pair: pr, d: d, rpc: rpc, resync: p.ib.ResyncGetMin, needMin: true, quota: quota}
	w.ready = w.canDelete
	return w
}

// Init prepares the delete and the min(transactionid) query.
func (w *deleter) Init(ctx context.Context, s engine.Session) error {
	var err error
	if w.del, err = s.Prepare(ctx, deleteSQL(w.d, w.c.table, w.rpc)); err != nil {
		return w.fail("delete: prepare", err)
	}
	if w.getMin, err = s.Prepare(ctx, minSQL(w.c.table)); err != nil {
		return w.fail("delete: prepare min", err)
	}
	w.est = w.c.minEst.Load()
	w.sess = s
	return nil
}

// next is the number of rows the next delete asks for: rpc, or what is left of the quota.
func (w *deleter) next() int64 {
	n := int64(w.rpc)
	if w.quota > 0 {
		n = min(n, w.quota-w.pair.delRows.Load())
	}
	return n
}

func (w *deleter) canDelete() bool {
	n := w.next()
	return n <= 0 || w.pair.insRows.Load() >= w.pair.delRows.Load()+n
}

// Ready waits for the inserter to be rpc rows ahead, then re-reads the minimum if due.
func (w *deleter) Ready(ctx context.Context) error {
	if err := w.pair.toDeleter.wait(ctx, w.ready); err != nil {
		return err
	}
	if n := w.next(); n > 0 && n < int64(w.rpc) && n != w.lastLimit {
		// The quota's last, partial batch: prepared here so it is not timed as a delete.
		if w.last != nil {
			_ = w.last.Close()
		}
		var err error
		if w.last, err = w.sess.Prepare(ctx, deleteSQL(w.d, w.c.table, int(n))); err != nil {
			return w.fail("delete: prepare the last batch", err)
		}
		w.lastLimit = n
	}
	if !w.needMin {
		return nil
	}
	v, ok, err := w.getMin.QueryInt(ctx, nil)
	if err != nil {
		return w.fail("delete: read min", err)
	}
	// Ids only grow, so the larger of the two is still a lower bound of the minimum.
	if ok && v > w.est {
		w.est = v
	}
	w.c.minEst.Store(w.est)
	w.needMin, w.batches = false, 0
	return nil
}

// Op deletes up to rpc rows from the estimate up and returns the rows deleted. Without a
// quota it never returns ErrDone: the step stops it when the time is up.
func (w *deleter) Op(ctx context.Context) (int64, error) {
	n := w.next()
	if n <= 0 {
		return 0, workload.ErrDone
	}
	stmt := w.del
	if n < int64(w.rpc) {
		stmt = w.last
	}
	w.args.Reset()
	w.args.Int(w.est)
	rows, err := stmt.Exec(ctx, &w.args)
	if err != nil {
		w.needMin = true
		return 0, w.fail("delete", err)
	}
	if rows == 0 {
		if w.empty++; w.empty > 2 {
			return 0, w.fail("delete", fmt.Errorf("%d deletes in a row from id %d removed nothing although the inserter is %d rows ahead",
				w.empty, w.est, w.pair.insRows.Load()-w.pair.delRows.Load()))
		}
	} else {
		w.empty = 0
	}
	// The rows removed are the lowest rows ≥ est, distinct ids: est + rows is still ≤ min.
	w.est += rows
	w.c.deleted.Add(rows)
	w.c.minEst.Store(w.est)
	w.pair.delRows.Add(rows)
	w.pair.delOps.Add(1)
	w.pair.pokeInserter()
	w.batches++
	if rows < n || (w.resync > 0 && w.batches >= w.resync) {
		w.needMin = true
	}
	return rows, nil
}

// Close releases the statements and lets a waiting inserter go on without the deleter.
func (w *deleter) Close() error {
	w.pair.deleterGone.Store(true)
	w.pair.pokeInserter()
	w.pair.actorClosed()
	return workload.CloseStmts(w.del, w.getMin, w.last)
}

func (w *deleter) fail(what string, err error) error {
	return fmt.Errorf("insertbench %s client %d: %s: %w", w.step, w.c.id, what, err)
}
