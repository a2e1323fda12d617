package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
)

// Run is one stored run being written (Begin). Its steps run as Steps.Step or Steps.Run
// (runner.Sequence: which step runs, which is skipped, the run's status), which hand
// them to the record's StepSink one at a time, possibly interleaved with other runs'
// steps; the record only writes them. It keeps what it wrote, for a spill file.
type Run struct {
	st *store.Store
	id int64
	// Steps is the policy of the run's steps and their outcome: the run's status
	// (Status) and first error.
	Steps *runner.Sequence
	// Diag, when set (dbperf run --explain: probe.Explain.Take), hands over a finished
	// step's statements and waits, stored with the step.
	Diag func(step string) ([]store.StepStatement, []store.StepWait)
	// StepMetrics, when set (dbperf run --cluster), adds a finished step's figures of its
	// own (each node's) to its metrics before they are stored.
	StepMetrics func(step string, res *metrics.StepResult)

	opts   Options
	sctx   context.Context // store writes: cancelled storeGrace after Ctrl-C (graceContext)
	cancel context.CancelFunc
	meta   store.RunMeta
	kept   []*keptStep
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

// Begin stores the run's start. ctx is the command's: cancelled by Ctrl-C, after which
// the run's store writes get storeGrace more. Its error is the store's (the run was not
// begun).
func Begin(ctx context.Context, st *store.Store, meta store.RunMeta, opts Options) (*Run, error) {
	if meta.StartedAt.IsZero() {
		meta.StartedAt = time.Now()
	}
	rec := &Run{st: st, Steps: new(runner.Sequence), opts: opts, meta: meta}
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

// ID is the stored run's id.
func (rec *Run) ID() int64 { return rec.id }

// write runs one store write, retried while its errors are transient, until
// opts.Timeout has passed or the store's grace after Ctrl-C is over.
func (rec *Run) write(fn func(context.Context) error) error {
	if rec.opts.down.Load() {
		return fmt.Errorf("the results store gave no answer within --store-timeout %s earlier", rec.opts.Timeout)
	}
	ctx, cancel := context.WithTimeout(rec.sctx, rec.opts.Timeout)
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
			return fmt.Errorf("no answer within --store-timeout %s: %w", rec.opts.Timeout, err)
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

// StoreFailedError is the error of a results store that failed mid-run (stalled past
// --store-timeout, a full disk, a lost server): everything the run measured went to a
// spill file, and the run stops (dbperf's exit status 1, or 130 when Interrupted).
type StoreFailedError struct {
	// Interrupted says the run had been interrupted (Ctrl-C) when the store failed.
	Interrupted bool
	// Spill is the spill file's path, "" when it could not be written either.
	Spill string
	err   error
}

func (e *StoreFailedError) Error() string { return e.err.Error() }
func (e *StoreFailedError) Unwrap() error { return e.err }

// storeFailed is the StoreFailedError of a failed write (what: where in the run), after
// the spill. done says whether every step of the run had been run.
func (rec *Run) storeFailed(what string, err error, done bool) error {
	interrupted := rec.Status() == store.RunInterrupted || rec.sctx.Err() != nil
	var kept string
	path, serr := rec.spill(done)
	if serr != nil {
		path, kept = "", fmt.Sprintf("the figures of this run could not be kept either: %v", serr)
	} else {
		kept = fmt.Sprintf("everything it measured is in %s: publish it with \"dbperf results copy --from %s --to STORE\" (the store's run %d is then incomplete)", path, path, rec.id)
	}
	return &StoreFailedError{Interrupted: interrupted, Spill: path,
		err: fmt.Errorf("results store failed %s, the run stops: %w; %s", what, err, kept)}
}

// spill writes the run as it was measured to a new SQLite results store in opts.SpillDir
// and returns its path. The run gets a new origin there (its copy in the failed store is
// incomplete, so a copy of the spill must not be taken for it); its status is the run's
// when every step ran (done), else failed.
func (rec *Run) spill(done bool) (string, error) {
	if err := os.MkdirAll(rec.opts.SpillDir, 0o700); err != nil {
		return "", fmt.Errorf("spill directory: %w (set DBPERF_SPILL_DIR)", err)
	}
	path := filepath.Join(rec.opts.SpillDir, fmt.Sprintf("run-%s-%d-%d.db", time.Now().Format("20060102-150405"), os.Getpid(), rec.id))
	// SpillFiles finds it by that name: keep the two together.
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
	status := rec.Status()
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

// Status is the run's status as stored: store.RunOK until a step fails or is
// interrupted (runner.Sequence).
func (rec *Run) Status() string {
	switch rec.Steps.Status() {
	case metrics.StatusFailed:
		return store.RunFailed
	case metrics.StatusInterrupted:
		return store.RunInterrupted
	}
	return store.RunOK
}

// Finish stores the run's end and status; its error is a *StoreFailedError.
func (rec *Run) Finish() error {
	defer rec.cancel()
	status := rec.Status()
	if err := rec.write(func(c context.Context) error { return rec.st.FinishRun(c, rec.id, status, time.Now()) }); err != nil {
		return rec.storeFailed("at the end of the run", err, true)
	}
	return nil
}

// StoreCPUProfiles folds the run's CPU profiles once its steps are done (--cpu-profile:
// probe.CPU.Fold) and stores each step's with it. An interrupted run's are not folded
// (Ctrl-C ends the run at once; perf's files are removed), said on errOut; a fold that
// fails is said there too, the results stay without profiles. Only a failing store
// write is an error (a *StoreFailedError).
func (rec *Run) StoreCPUProfiles(ctx context.Context, errOut io.Writer, p *probe.CPU) error {
	if p == nil {
		return nil
	}
	if ctx.Err() != nil {
		p.Close()
		fmt.Fprintln(errOut, "dbperf: --cpu-profile: interrupted: the steps' CPU profiles were not folded")
		return nil
	}
	byStep, err := p.Fold(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "dbperf: --cpu-profile: %v\n", err)
	}
	return rec.putProfiles(byStep)
}

// putProfiles stores each of the run's steps' profiles among byStep (Fold's) with it; a
// failing store write is an error.
func (rec *Run) putProfiles(byStep map[probe.WindowKey][]store.StepProfile) error {
	for _, k := range rec.kept {
		ps := byStep[probe.WindowKey{RunID: rec.id, Step: k.name}]
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

// StoreFoldedProfiles stores each of the finished run's steps' profiles among byStep
// (probe.CPU.Fold's, for the runs of a sweep, folded after its last block) with it,
// each a write of its own (the run's writes ended with it) bounded by --store-timeout.
// Its error names each write that failed.
func (rec *Run) StoreFoldedProfiles(ctx context.Context, byStep map[probe.WindowKey][]store.StepProfile) error {
	var errs []error
	for _, k := range rec.kept {
		ps := byStep[probe.WindowKey{RunID: rec.id, Step: k.name}]
		if len(ps) == 0 || k.id == 0 {
			continue
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rec.opts.Timeout)
		err := rec.st.PutStepProfiles(wctx, k.id, ps)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("storing the CPU profiles of run %d, step %s: %w", rec.id, k.name, err))
		}
	}
	return errors.Join(errs...)
}

// SpillFiles are the spill files the process pid wrote into dir (run-TIME-PID-RUN.db, as
// spill names them), sorted: an agent names those its job's command left (issue 40: the
// spill files of jobs stayed on the host unreported).
func SpillFiles(dir string, pid int) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("run-*-%d-*.db", pid)))
	if err != nil {
		return nil, fmt.Errorf("spill files in %s: %w", dir, err)
	}
	var out []string
	for _, f := range files {
		// run-DATE-TIME-PID-RUN.db: the pid is the third field from the end.
		fs := strings.Split(strings.TrimSuffix(filepath.Base(f), ".db"), "-")
		if len(fs) >= 3 && fs[len(fs)-2] == strconv.Itoa(pid) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, nil
}
