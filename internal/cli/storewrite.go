package cli

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// How a run writes to its results store (issue 23): measuring never waits on it.
//
//   - Intervals go to an intervalWriter: the runner's tick hands one over under a mutex
//     held for an append, and a goroutine of the step writes them in batches. A stalled
//     store therefore neither delays a tick nor stretches an interval; the intervals wait
//     in memory (bounded by --store-timeout × the interval rate) and go in one batch when
//     the store answers again.
//   - Every write is retried (transient errors: a lock, a lost connection, a server
//     restarting) until --store-timeout (default 30 s) has passed, each attempt bounded by
//     that deadline even where the driver is not (SQLite waits up to its busy timeout for
//     another process's lock: the attempt is left to finish in the background).
//   - After Ctrl-C the store gets storeGrace more, so dbperf exits within about a second
//     whatever the store does.
//   - When the store stays unreachable, or Ctrl-C cut its writes short, everything the run
//     measured (its steps, intervals and results, which the record keeps) is written to a
//     spill file, a SQLite results store of its own, and the run stops with a message
//     naming it: `dbperf results copy --from SPILL --to STORE` publishes it later.

const (
	// defaultStoreTimeout is --store-timeout's default.
	defaultStoreTimeout = 30 * time.Second
	// storeGrace is how long store writes may still take after Ctrl-C.
	storeGrace = time.Second
	// spillTimeout bounds the writes of a spill file (a local file: normally milliseconds).
	spillTimeout = time.Minute
)

// storeOpts are a run's store-writing settings.
type storeOpts struct {
	timeout  time.Duration // --store-timeout
	spillDir string        // where spill files go (spillDir)
	// down, shared by the runs of one command (a sweep's many), is set when a write got no
	// answer within the timeout: the runs' later writes fail at once instead of waiting
	// the timeout again each.
	down *atomic.Bool
}

func newStoreOpts(env Env, cfg *config.Run) storeOpts {
	t := cfg.StoreTimeout
	if t <= 0 {
		t = defaultStoreTimeout
	}
	return storeOpts{timeout: t, spillDir: spillDir(env), down: new(atomic.Bool)}
}

// spillDir is where spill files go: $DBPERF_SPILL_DIR, else $XDG_STATE_HOME/dbperf/spill,
// else ~/.local/state/dbperf/spill (state that outlives a reboot, unlike the temp dir).
func spillDir(env Env) string {
	if d := env.getenv("DBPERF_SPILL_DIR"); d != "" {
		return d
	}
	if d := env.getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "dbperf", "spill")
	}
	if h := env.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "dbperf", "spill")
	}
	return filepath.Join(os.TempDir(), "dbperf-spill")
}

// graceContext is ctx for store writes: not cancelled by ctx itself (an interrupted run
// still stores what it measured) but storeGrace after it.
func graceContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(storeGrace, cancel) })
	return sctx, func() { stop(); cancel() }
}

// transient reports whether a store error may go away by itself: a lock another process
// holds, a connection lost or refused, a server shutting down, starting or recovering, a
// deadline. Anything else (a constraint, a full SQLite disk, a schema error, a bug) would
// fail again at once and is not retried.
func transient(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) < 2:
			return false
		case pe.Code[:2] == "08", pe.Code[:2] == "53", pe.Code[:2] == "57", pe.Code[:2] == "40":
			// connection exceptions, insufficient resources, operator intervention
			// (admin shutdown, crash shutdown, cannot connect now), transaction rollbacks
			return true
		}
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &errno): // before net.Error, which every Errno satisfies
		return errno == syscall.ECONNREFUSED || errno == syscall.ECONNRESET || errno == syscall.EPIPE ||
			errno == syscall.ETIMEDOUT
	case pgconn.SafeToRetry(err), pgconn.Timeout(err), errors.As(err, &ce), errors.As(err, &ne):
		return true
	}
	return false
}

// call runs fn and returns when it does or when ctx is done, whichever is first; fn gets
// ctx, and one that ignores it is left to finish in the background.
func call(ctx context.Context, fn func(context.Context) error) error {
	ch := make(chan error, 1)
	go func() { ch <- fn(ctx) }()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runRecord is one stored run being written. Its steps run as steps.Step or steps.Run
// (runner.Sequence: which step runs, which is skipped, the run's status), which hand
// them to the record's stepSink one at a time, possibly interleaved with other runs'
// steps; the record only writes them. It keeps what it wrote, for a spill file.
type runRecord struct {
	st *store.Store
	id int64
	// steps is the policy of the run's steps and their outcome: the run's status
	// (status) and first error.
	steps *runner.Sequence

	opts   storeOpts
	sctx   context.Context // store writes: cancelled storeGrace after Ctrl-C (graceContext)
	cancel context.CancelFunc
	meta   store.RunMeta
	kept   []*keptStep
	// diag, when set (dbperf run --explain), hands over a finished step's statements and
	// waits, stored with the step.
	diag func(step string) ([]store.StepStatement, []store.StepWait)
	// stepMetrics, when set (dbperf run --cluster), adds a finished step's figures of its
	// own (each node's) to its metrics before they are stored.
	stepMetrics func(step string, res *metrics.StepResult)
}

// keptStep is a step as written: its intervals (iw) and result, once known.
type keptStep struct {
	id          int64 // the stored step's (0 when BeginStep failed)
	seq         int
	name, group string
	started     time.Time
	iw          *intervalWriter
	res         *metrics.StepResult
	profiles    []store.StepProfile
	stmts       []store.StepStatement
	waits       []store.StepWait
}

// beginRun stores the run's start. ctx is the command's: cancelled by Ctrl-C, after which
// the run's store writes get storeGrace more.
func beginRun(ctx context.Context, st *store.Store, meta store.RunMeta, opts storeOpts) (*runRecord, error) {
	if meta.StartedAt.IsZero() {
		meta.StartedAt = time.Now()
	}
	rec := &runRecord{st: st, steps: new(runner.Sequence), opts: opts, meta: meta}
	rec.sctx, rec.cancel = graceContext(ctx)
	err := rec.write(func(c context.Context) error {
		id, err := st.BeginRun(c, meta)
		if err == nil {
			rec.id = id
		}
		return err
	})
	if err != nil {
		rec.cancel()
		return nil, err
	}
	return rec, nil
}

// write runs one store write, retried while its errors are transient, until
// opts.timeout has passed or the store's grace after Ctrl-C is over.
func (rec *runRecord) write(fn func(context.Context) error) error {
	if rec.opts.down.Load() {
		return fmt.Errorf("the results store gave no answer within --store-timeout %s earlier", rec.opts.timeout)
	}
	ctx, cancel := context.WithTimeout(rec.sctx, rec.opts.timeout)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		err := call(ctx, fn)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if rec.sctx.Err() != nil {
				return fmt.Errorf("interrupted while the results store did not answer: %w", err)
			}
			rec.opts.down.Store(true)
			return fmt.Errorf("no answer within --store-timeout %s: %w", rec.opts.timeout, err)
		}
		if !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// storeFailed is the error of a results store that failed mid-run (stalled past
// --store-timeout, a full disk, a lost server): everything the run measured goes to a spill
// file, and the run stops — exit status 1, or 130 after Ctrl-C. done says whether every
// step of the run had been run.
func (rec *runRecord) storeFailed(what string, err error, done bool) error {
	code := ExitStepFailed
	if rec.status() == store.RunInterrupted || rec.sctx.Err() != nil {
		code = ExitInterrupted
	}
	kept := "nothing measured was lost"
	path, serr := rec.spill(done)
	if serr != nil {
		kept = fmt.Sprintf("the figures of this run could not be kept either: %v", serr)
	} else {
		kept = fmt.Sprintf("everything it measured is in %s: publish it with \"dbperf results copy --from %s --to STORE\" (the store's run %d is then incomplete)", path, path, rec.id)
	}
	return &exitError{code: code, err: fmt.Errorf("results store failed %s, the run stops: %w; %s", what, err, kept)}
}

// spill writes the run as it was measured to a new SQLite results store in opts.spillDir
// and returns its path. The run gets a new origin there (its copy in the failed store is
// incomplete, so a copy of the spill must not be taken for it); its status is the run's
// when every step ran (done), else failed.
func (rec *runRecord) spill(done bool) (string, error) {
	if err := os.MkdirAll(rec.opts.spillDir, 0o700); err != nil {
		return "", fmt.Errorf("spill directory: %w (set DBPERF_SPILL_DIR)", err)
	}
	path := filepath.Join(rec.opts.spillDir, fmt.Sprintf("run-%s-%d-%d.db", time.Now().Format("20060102-150405"), os.Getpid(), rec.id))
	ctx, cancel := context.WithTimeout(context.Background(), spillTimeout)
	defer cancel()
	st, err := store.Open(ctx, path)
	if err != nil {
		return "", err
	}
	defer st.Close()
	meta := rec.meta
	meta.Origin = ""
	id, err := st.BeginRun(ctx, meta)
	if err != nil {
		return "", err
	}
	var end time.Time
	for _, k := range rec.kept {
		sid, err := st.BeginStep(ctx, id, k.seq, k.name, k.group, k.started)
		if err != nil {
			return "", err
		}
		if k.iw != nil {
			if err := st.AppendIntervals(ctx, sid, k.iw.intervals()); err != nil {
				return "", err
			}
		}
		res := metrics.StepResult{Name: k.name, Status: metrics.StatusInterrupted, StartedAt: k.started, Error: "the run stopped when its results store failed"}
		if k.res != nil {
			res = *k.res
		}
		if err := st.FinishStep(ctx, sid, res); err != nil {
			return "", err
		}
		if len(k.profiles) > 0 {
			if err := st.PutStepProfiles(ctx, sid, k.profiles); err != nil {
				return "", err
			}
		}
		if len(k.stmts) > 0 || len(k.waits) > 0 {
			if err := st.PutStepDiag(ctx, sid, k.stmts, k.waits); err != nil {
				return "", err
			}
		}
		end = res.StartedAt.Add(time.Duration(res.Seconds * float64(time.Second)))
	}
	status := rec.status()
	if !done && status == store.RunOK {
		status = store.RunFailed
	}
	if end.IsZero() {
		end = time.Now()
	}
	if err := st.FinishRun(ctx, id, status, end); err != nil {
		return "", err
	}
	return path, st.Close()
}

// status is the run's status as stored: store.RunOK until a step fails or is interrupted
// (runner.Sequence).
func (rec *runRecord) status() string {
	switch rec.steps.Status() {
	case metrics.StatusFailed:
		return store.RunFailed
	case metrics.StatusInterrupted:
		return store.RunInterrupted
	}
	return store.RunOK
}

// sink is the runner.StepSink that stores the run's steps as a runner.Sequence runs
// them: progress goes to prog, a failed step's error to errOut.
func (rec *runRecord) sink(errOut io.Writer, prog *progress.Progress) *stepSink {
	return &stepSink{rec: rec, errOut: errOut, prog: prog}
}

// stepSink stores the steps of one run (runner.StepSink). Every error it returns is the
// exit error of a failed results store (runRecord.storeFailed): the run stops.
type stepSink struct {
	rec    *runRecord
	errOut io.Writer
	prog   *progress.Progress
	cur    *keptStep // the step begun last
	stepID int64     // its row in the store
}

// BeginStep stores the step's start; its intervals go to the store (an intervalWriter)
// and to the terminal.
func (s *stepSink) BeginStep(seq int, step workload.Step) (runner.Observer, error) {
	rec := s.rec
	k := &keptStep{seq: seq, name: step.Name(), group: step.Group(), started: time.Now()}
	var stepID int64
	err := rec.write(func(c context.Context) error {
		id, err := rec.st.BeginStep(c, rec.id, seq, k.name, k.group, k.started)
		if err == nil {
			stepID = id
		}
		return err
	})
	if err != nil {
		return nil, rec.storeFailed("at the start of step "+k.name, err, false)
	}
	rec.kept = append(rec.kept, k)
	k.iw = newIntervalWriter(rec, stepID)
	s.cur, s.stepID = k, stepID
	k.id = stepID
	return &observer{iw: k.iw, prog: s.prog}, nil
}

// FinishStep shows the step's result, waits for its intervals to be written and stores
// the result, then its CPU profiles (--cpu-profile) and its statements and waits
// (--explain), all after the step's load.
func (s *stepSink) FinishStep(seq int, step workload.Step, res metrics.StepResult) error {
	rec, k := s.rec, s.cur
	if rec.stepMetrics != nil {
		rec.stepMetrics(k.name, &res)
	}
	s.prog.Finish(res)
	k.res = &res
	if res.Status == metrics.StatusFailed {
		fmt.Fprintf(s.errOut, "dbperf: step %s failed: %s\n", step.Name(), res.Error)
	}
	if err := k.iw.close(); err != nil {
		return rec.storeFailed("during step "+k.name, err, false)
	}
	stepID := s.stepID
	if err := rec.write(func(c context.Context) error { return rec.st.FinishStep(c, stepID, res) }); err != nil {
		return rec.storeFailed("at the end of step "+k.name, err, false)
	}
	if rec.diag != nil {
		if k.stmts, k.waits = rec.diag(k.name); len(k.stmts) > 0 || len(k.waits) > 0 {
			stmts, waits := k.stmts, k.waits
			if err := rec.write(func(c context.Context) error { return rec.st.PutStepDiag(c, stepID, stmts, waits) }); err != nil {
				return rec.storeFailed("storing the statements and waits of step "+k.name, err, false)
			}
		}
	}
	return nil
}

// SkipStep stores a step that was not run because of an earlier failure.
func (s *stepSink) SkipStep(seq int, step workload.Step, res metrics.StepResult) error {
	rec := s.rec
	name, group := step.Name(), step.Group()
	rec.kept = append(rec.kept, &keptStep{seq: seq, name: name, group: group, started: res.StartedAt, res: &res})
	err := rec.write(func(c context.Context) error {
		id, err := rec.st.BeginStep(c, rec.id, seq, name, group, res.StartedAt)
		if err != nil {
			return err
		}
		return rec.st.FinishStep(c, id, res)
	})
	if err != nil {
		return rec.storeFailed("recording the skipped step "+name, err, false)
	}
	return nil
}

// finish stores the run's end and status.
func (rec *runRecord) finish() error {
	defer rec.cancel()
	status := rec.status()
	if err := rec.write(func(c context.Context) error { return rec.st.FinishRun(c, rec.id, status, time.Now()) }); err != nil {
		return rec.storeFailed("at the end of the run", err, true)
	}
	return nil
}

// failure is the exit error of a finished run with a failed step (nil otherwise).
func (rec *runRecord) failure() error {
	if rec.status() == store.RunFailed {
		return &exitError{code: ExitStepFailed, err: fmt.Errorf("run %d: %s", rec.id, rec.steps.Err())}
	}
	return nil
}

// observer hands each interval to the step's intervalWriter and shows it on the terminal.
type observer struct {
	iw   *intervalWriter
	prog *progress.Progress
}

func (o *observer) StepStarted(name string, load workload.Load) {
	o.prog.Start(name, load.Duration)
}

func (o *observer) Interval(name string, iv metrics.Interval) {
	o.iw.add(iv)
	o.prog.Interval(name, iv)
}

// intervalWriter writes a step's intervals to the store off the measuring path: add never
// waits on the store, a goroutine writes what has come in, in batches.
type intervalWriter struct {
	rec    *runRecord
	stepID int64
	wake   chan struct{} // capacity 1: "there is more"
	done   chan struct{} // closed when the goroutine has ended

	mu      sync.Mutex
	pending []metrics.Interval // not yet written
	all     []metrics.Interval // every interval, for a spill
	closed  bool

	err error // the first failed write (the goroutine's; read after done)
}

func newIntervalWriter(rec *runRecord, stepID int64) *intervalWriter {
	w := &intervalWriter{rec: rec, stepID: stepID, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *intervalWriter) add(iv metrics.Interval) {
	w.mu.Lock()
	w.pending = append(w.pending, iv)
	w.all = append(w.all, iv)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *intervalWriter) loop() {
	defer close(w.done)
	for range w.wake {
		for {
			w.mu.Lock()
			batch, closed := w.pending, w.closed
			w.pending = nil
			w.mu.Unlock()
			if len(batch) > 0 && w.err == nil {
				w.err = w.rec.write(func(c context.Context) error { return w.rec.st.AppendIntervals(c, w.stepID, batch) })
			}
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
		}
	}
}

// close waits for the intervals added so far to be written (or to fail) and returns the
// first failure.
func (w *intervalWriter) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	return w.err
}

// intervals are every interval added (for a spill).
func (w *intervalWriter) intervals() []metrics.Interval {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all
}

// storeCPUProfiles folds the run's CPU profiles once its steps are done (--cpu-profile:
// cpuProfiler.finish) and stores each step's with it. An interrupted run's are not folded
// (Ctrl-C ends the run at once; perf's files are removed), said on errOut; a fold that
// fails is said there too, the results stay without profiles. Only a failing store
// write is an error.
func (rec *runRecord) storeCPUProfiles(ctx context.Context, errOut io.Writer, p *cpuProfiles) error {
	if p == nil {
		return nil
	}
	if ctx.Err() != nil {
		p.close()
		fmt.Fprintln(errOut, "dbperf: --cpu-profile: interrupted: the steps' CPU profiles were not folded")
		return nil
	}
	byStep, err := p.fold(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "dbperf: --cpu-profile: %v\n", err)
	}
	return rec.putProfiles(byStep)
}

// putProfiles stores each of the run's steps' profiles among byStep (fold's) with it; a
// failing store write is an error.
func (rec *runRecord) putProfiles(byStep map[windowKey][]store.StepProfile) error {
	for _, k := range rec.kept {
		ps := byStep[windowKey{rec.id, k.name}]
		if len(ps) == 0 || k.id == 0 || k.profiles != nil {
			continue
		}
		k.profiles = ps
		id := k.id
		if err := rec.write(func(c context.Context) error { return rec.st.PutStepProfiles(c, id, ps) }); err != nil {
			return rec.storeFailed("storing the CPU profiles of step "+k.name, err, false)
		}
	}
	return nil
}
