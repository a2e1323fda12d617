package insertbench

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
	"golang.org/x/sys/unix"
)

// maxInsertLead is how many batches the inserter may run ahead of the deleter in the
// closed-loop steps: the reference's 8-deep statement queues (reference §1.1).
const maxInsertLead = 8

// pair couples one client's insert and delete actors within one step (spec "Deletes done
// right"): the deleter never overtakes the inserter, and in closed-loop steps the inserter
// stays at most maxInsertLead batches ahead. Each side pokes the other's signal after
// every committed statement; the waiting side re-checks the counters on every wake-up.
type pair struct {
	insRows, delRows atomic.Int64 // rows affected in this step
	insOps, delOps   atomic.Int64 // statements committed in this step

	// toDeleter and toInserter exist only with a deleter; the last of the two actors to
	// close releases them (closing counts the actors' Close calls).
	toDeleter  *signal
	toInserter *signal
	closing    atomic.Int32

	// hasDeleter: the step runs a delete actor for this client.
	hasDeleter bool
	// boundLead: the inserter waits for the deleter (closed-loop steps only; rate-limited
	// inserters never wait, their rate is the result).
	boundLead bool

	deleterGone atomic.Bool
}

func newPair(hasDeleter, boundLead bool) (*pair, error) {
	p := &pair{hasDeleter: hasDeleter, boundLead: boundLead && hasDeleter}
	if !hasDeleter {
		return p, nil
	}
	var err error
	if p.toDeleter, err = newSignal(); err != nil {
		return nil, err
	}
	if p.toInserter, err = newSignal(); err != nil {
		p.toDeleter.close()
		return nil, err
	}
	return p, nil
}

// closePairs releases the signals of pairs whose actors will never run (a failed Load).
func closePairs(pairs []*pair) {
	for _, p := range pairs {
		p.actorClosed()
		p.actorClosed()
	}
}

// pokeDeleter and pokeInserter wake the other actor if it waits.
func (p *pair) pokeDeleter() {
	if p.toDeleter != nil {
		p.toDeleter.poke()
	}
}

func (p *pair) pokeInserter() {
	if p.toInserter != nil {
		p.toInserter.poke()
	}
}

// actorClosed is called by each actor's Close; the second releases the signals.
func (p *pair) actorClosed() {
	if p.toDeleter != nil && p.closing.Add(1) == 2 {
		p.toDeleter.close()
		p.toInserter.close()
	}
}

// signal wakes an actor waiting for the other actor's progress. The waiter sleeps in a
// blocking read of an eventfd and the other actor's write wakes its thread directly, as a
// pipe between the reference's processes does: one sleep and one wake-up per wait. (A
// channel costs the waiter's thread a futex sleep, and the poker's wake-up of a spinning
// thread that must find the woken goroutine, often in the run-next slot of the poker's P
// while the poker already blocks in its next system call, where Go's sysmon then finds
// work queued behind a system call, takes the P and polls every 20 µs from then on: 5–6
// context switches per l.i1 insert and delete, and sysmon a fifth of dbperf's CPU.)
// Linux only, as dbperf is.
type signal struct {
	fd int
	// waiting: the waiter is blocked in read, or about to be; a poke writes only then.
	waiting atomic.Bool
	// watch wakes the waiter when the step's context is cancelled; wakeFn is s.wake.
	watch  engine.ContextWatch
	wakeFn func()
}

func newSignal() (*signal, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	s := &signal{fd: fd}
	s.wakeFn = s.wake
	return s, nil
}

// wait blocks until ok() holds, re-checking whenever the signal is poked; it returns
// ctx.Err() when the step stops first. Only one actor waits on a signal.
func (s *signal) wait(ctx context.Context, ok func() bool) error {
	if ok() {
		return nil
	}
	_ = s.watch.Watch(ctx, s.wakeFn) // ctx.Err() is checked before each read
	var buf [8]byte
	for {
		s.waiting.Store(true)
		// Re-check after announcing: a poke that came before the flag was set is seen
		// here, one that comes after it writes and wakes the read.
		if ok() {
			s.waiting.Store(false)
			return nil
		}
		if err := ctx.Err(); err != nil {
			s.waiting.Store(false)
			return err
		}
		_, err := unix.Read(s.fd, buf[:])
		s.waiting.Store(false)
		if err != nil && err != unix.EINTR {
			return fmt.Errorf("wait for the other actor: %w", err)
		}
	}
}

// poke wakes the actor waiting on the signal, if any, without ever blocking.
func (s *signal) poke() {
	if s.waiting.Load() {
		s.wake()
	}
}

func (s *signal) wake() {
	one := [8]byte{1}
	_, _ = unix.Write(s.fd, one[:]) // adds 1 to the counter: cannot fail short of 2⁶⁴ pokes
}

// close releases the eventfd; neither actor may use the signal afterwards.
func (s *signal) close() {
	s.watch.Stop()
	_ = unix.Close(s.fd)
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
	return w.pair.toInserter.wait(ctx, w.ready)
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
	w.pair.pokeDeleter()
	return rows, nil
}

// Close releases the statements (the session belongs to the runner).
func (w *inserter) Close() error {
	w.pair.actorClosed()
	return workload.CloseStmts(w.full, w.tail)
}

func (w *inserter) fail(what string, err error) error {
	return fmt.Errorf("insertbench %s client %d: %s: %w", w.step, w.c.id, what, err)
}
