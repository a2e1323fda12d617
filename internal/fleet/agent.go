package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Outcome is how a job's command ended, which decides the job's state.
type Outcome int

const (
	// Done: the command ran (exit status 0, or 1: a failed step is a result). Completed.
	Done Outcome = iota
	// Refused: the command refused its input (exit status 2): trying again cannot help.
	// Cancelled, with the command's error.
	Refused
	// Interrupted: the command was stopped (the agent's SIGTERM, the job cancelled, its
	// lease lost); the job's state follows from why (requeued, cancelled, rescued).
	Interrupted
)

// Attempt is one attempt at a job, as the agent's Run gets it.
type Attempt struct {
	Job     Job
	AgentID string
	Class   string
	Host    string
}

// AgentConfig is what an agent is: where it runs, which jobs it takes, how it runs them.
type AgentConfig struct {
	Host  string
	Class string
	// Lease is how long a job outlives its agent's last heartbeat before river rescues it
	// for another agent (plus up to river's 30 s between checks). Heartbeat is how often
	// the agent beats: a few beats per lease.
	Lease, Heartbeat time.Duration
	// StopTimeout bounds how long SIGTERM waits for the current command to stop.
	StopTimeout time.Duration
	// Log gets one line per job taken and ended.
	Log io.Writer
	// Run runs an attempt's command; ctx ends when the agent stops, the job is cancelled
	// or the agent lost its lease. It must never run two commands at once (the agent calls
	// it once at a time).
	Run func(ctx context.Context, a Attempt) (Ended, error)
}

// Ended is how an attempt's command ended: its Outcome, and the spill files it left on
// this host (its results store failed mid-run: what it measured is only there), which the
// agent logs and records with the attempt (Job.Spills).
type Ended struct {
	Outcome Outcome
	Spills  []string
}

// errLeaseLost ends a command whose job is no longer this agent's.
var errLeaseLost = errors.New("the agent lost its lease on the job (no heartbeat within the lease, or the job was rescued for another agent)")

// errStopping ends a command because the agent stops (SIGTERM): the job is requeued.
var errStopping = errors.New("the agent is stopping")

// agent is one running agent's state: its id and the job it runs.
type agent struct {
	f   *Fleet
	cfg AgentConfig
	id  string

	mu     sync.Mutex
	jobID  int64
	cancel context.CancelCauseFunc
}

func newAgentID(host string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	if len(id) > 100 { // river's limit on a client's id
		id = id[len(id)-100:]
	}
	return id
}

// StartError is RunAgent's error when the agent could not register with the store or
// start taking jobs: a store that has just come up may refuse a connection or two, so a
// caller following a moved store tries again (Follow).
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// RunAgent runs an agent until ctx ends: it registers in dbperf_agents, takes one job at a
// time from its class's queue, heartbeats, and on ctx's end (SIGTERM) stops the current
// command and requeues its job, then records itself stopped. It returns the agent's id
// once it has stopped.
func (f *Fleet) RunAgent(ctx context.Context, cfg AgentConfig) (string, error) {
	if err := CheckClass(cfg.Class); err != nil {
		return "", err
	}
	if cfg.Lease <= 0 || cfg.Heartbeat <= 0 || cfg.Heartbeat >= cfg.Lease {
		return "", fmt.Errorf("agent: the heartbeat (%s) must be positive and shorter than the lease (%s)", cfg.Heartbeat, cfg.Lease)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	a := &agent{f: f, cfg: cfg, id: newAgentID(cfg.Host)}
	if _, err := f.pool.Exec(ctx, `INSERT INTO dbperf_agents (id, host, class, pid, lease_ms, state, started_at, heartbeat_at)
		VALUES ($1, $2, $3, $4, $5, 'idle', now(), now())`, a.id, cfg.Host, cfg.Class, os.Getpid(), cfg.Lease.Milliseconds()); err != nil {
		return "", &StartError{Err: fmt.Errorf("agent: register: %w", err)}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{a: a})
	client, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{
		ID:     a.id,
		Queues: map[string]river.QueueConfig{Queue(cfg.Class): {MaxWorkers: 1}},
		// One job at a time (MaxWorkers 1): the agent never runs two.
		Workers:              workers,
		JobTimeout:           -1, // a benchmark runs as long as it runs
		RescueStuckJobsAfter: cfg.Lease,
		MaxAttempts:          DefaultMaxAttempts,
		// Jobs are kept as the results are: `dbperf queue` shows what ran where.
		CompletedJobRetentionPeriod: -1,
		CancelledJobRetentionPeriod: -1,
		DiscardedJobRetentionPeriod: -1,
		FetchPollInterval:           time.Second,
		Logger:                      quietLogger(),
	})
	if err != nil {
		return a.id, fmt.Errorf("agent: %w", err)
	}
	// The client runs until StopAndCancel below, not until ctx: a stop must let the
	// command end cleanly and the job be requeued.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return a.id, &StartError{Err: fmt.Errorf("agent: start: %w", err)}
	}
	fmt.Fprintf(cfg.Log, "agent %s: taking jobs from queue %s\n", a.id, Queue(cfg.Class))
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		a.heartbeat(ctx)
	}()
	<-ctx.Done()
	a.stopCurrent(errStopping)
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.StopTimeout+10*time.Second)
	defer cancel()
	stopErr := client.StopAndCancel(stopCtx)
	<-beats
	if _, err := f.pool.Exec(stopCtx, `UPDATE dbperf_agents SET state = 'stopped', job_id = NULL, job_started_at = NULL, heartbeat_at = now() WHERE id = $1`, a.id); err != nil && stopErr == nil {
		stopErr = err
	}
	fmt.Fprintf(cfg.Log, "agent %s: stopped\n", a.id)
	if stopErr != nil {
		return a.id, fmt.Errorf("agent: stop: %w", stopErr)
	}
	return a.id, nil
}

// heartbeat beats until ctx ends. A beat moves the agent's heartbeat and, while it runs a
// job, that job's attempted_at (the lease river's rescuer reads; hand-written SQL on
// river's table because river keeps no liveness of its own). A job that is no longer
// running under this agent (rescued after missed beats, cancelled) or beats that fail for
// a whole lease end the command.
func (a *agent) heartbeat(ctx context.Context) {
	t := time.NewTicker(a.cfg.Heartbeat)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		job := a.current()
		err := a.beat(ctx, job)
		switch {
		case errors.Is(err, errLeaseLost):
			a.stopCurrent(errLeaseLost)
		case err != nil && ctx.Err() == nil:
			fmt.Fprintf(a.cfg.Log, "agent %s: heartbeat: %v\n", a.id, err)
			if time.Since(lastOK) > a.cfg.Lease {
				a.stopCurrent(errLeaseLost)
			}
		case err == nil:
			lastOK = time.Now()
		}
	}
}

func (a *agent) beat(ctx context.Context, job int64) error {
	bctx, cancel := context.WithTimeout(ctx, a.cfg.Heartbeat)
	defer cancel()
	if _, err := a.f.pool.Exec(bctx, `UPDATE dbperf_agents SET heartbeat_at = now() WHERE id = $1`, a.id); err != nil {
		return err
	}
	if job == 0 {
		return nil
	}
	tag, err := a.f.pool.Exec(bctx, `UPDATE river_job SET attempted_at = now()
		WHERE id = $1 AND state = 'running' AND attempted_by[array_upper(attempted_by, 1)] = $2`, job, a.id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 && a.current() == job {
		return errLeaseLost
	}
	return nil
}

func (a *agent) current() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jobID
}

func (a *agent) stopCurrent(cause error) {
	a.mu.Lock()
	c := a.cancel
	a.mu.Unlock()
	if c != nil {
		c(cause)
	}
}

// worker is the river worker of dbperf jobs: it runs each through the agent.
//
// River's rescuer leaves a running job alone while its timeout has not passed since
// attempted_at, and never rescues one without a timeout; the executor cancels a job's
// context at that same timeout. A job's timeout is therefore the lease (Timeout), which
// the rescuer compares with the attempted_at the heartbeats move, and Work runs the
// command under the job's context from before the timeout was applied (outerContext, kept
// by the worker's middleware): cancelled when the job is cancelled or the client stops,
// never by the lease's deadline.
type worker struct {
	river.WorkerDefaults[JobArgs]
	a *agent
}

// Timeout is the lease: see worker.
func (w *worker) Timeout(*river.Job[JobArgs]) time.Duration { return w.a.cfg.Lease }

// Middleware keeps the job's context from before river applies the timeout.
func (w *worker) Middleware(*rivertype.JobRow) []rivertype.WorkerMiddleware {
	return []rivertype.WorkerMiddleware{&outerContext{}}
}

type outerKey struct{}

// outerContext passes the job's context, without the timeout's deadline, down to Work.
type outerContext struct{ river.MiddlewareDefaults }

func (*outerContext) Work(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
	return doInner(context.WithValue(ctx, outerKey{}, ctx))
}

func (w *worker) Work(ctx context.Context, rj *river.Job[JobArgs]) error {
	a := w.a
	j, err := jobOf(rj.JobRow)
	if err != nil {
		return river.JobCancel(err)
	}
	if outer, ok := ctx.Value(outerKey{}).(context.Context); ok {
		ctx = outer
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a.mu.Lock()
	a.jobID, a.cancel = j.ID, cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.jobID, a.cancel = 0, nil
		a.mu.Unlock()
		_, _ = a.f.pool.Exec(context.WithoutCancel(ctx), `UPDATE dbperf_agents SET state = 'idle', job_id = NULL, job_started_at = NULL WHERE id = $1 AND state <> 'stopped'`, a.id)
	}()
	if _, err := a.f.pool.Exec(ctx, `UPDATE dbperf_agents SET state = 'running', job_id = $2, job_started_at = now(), heartbeat_at = now() WHERE id = $1`, a.id, j.ID); err != nil {
		return fmt.Errorf("agent: record job %d: %w", j.ID, err)
	}
	if _, err := a.f.pool.Exec(ctx, `INSERT INTO dbperf_job_attempts (job_id, attempt, agent, host, started_at) VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (job_id, attempt) DO UPDATE SET agent = excluded.agent, host = excluded.host, started_at = excluded.started_at`, j.ID, j.Attempt, a.id, a.cfg.Host); err != nil {
		return fmt.Errorf("agent: record job %d: %w", j.ID, err)
	}
	fmt.Fprintf(a.cfg.Log, "agent %s: job %d attempt %d: dbperf %s\n", a.id, j.ID, j.Attempt, ShortArgv(j.Args.Argv, 200))
	ended, runErr := a.cfg.Run(ctx, Attempt{Job: j, AgentID: a.id, Class: a.cfg.Class, Host: a.cfg.Host})
	out := ended.Outcome
	a.recordSpills(ctx, j, ended.Spills)
	cause := context.Cause(ctx)
	switch {
	case out == Interrupted && errors.Is(cause, errStopping) && j.Args.Part != "":
		// A part of a run over several agents is never run again (JobArgs.Part): the other
		// parts went on without it.
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d cancelled: the agent stops, and part %s of a run over several agents is never run again\n", a.id, j.ID, j.Args.Part)
		return river.JobCancel(errors.New("its agent stopped during it; a part of a run over several agents is never run again"))
	case out == Interrupted && errors.Is(cause, errStopping):
		// SIGTERM: the command stopped cleanly; the job goes back to the queue at once.
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d requeued: the agent stops\n", a.id, j.ID)
		return river.JobSnooze(0)
	case out == Interrupted && errors.Is(cause, rivertype.ErrJobCancelledRemotely):
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d cancelled\n", a.id, j.ID)
		return river.JobCancel(errors.New("cancelled (dbperf queue --cancel)"))
	case out == Interrupted && errors.Is(cause, errLeaseLost):
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d: %v\n", a.id, j.ID, errLeaseLost)
		return errLeaseLost
	case out == Refused:
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d refused: %v\n", a.id, j.ID, runErr)
		return river.JobCancel(fmt.Errorf("refused: %w", runErr))
	case runErr != nil:
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d failed: %v\n", a.id, j.ID, runErr)
		return runErr
	}
	fmt.Fprintf(a.cfg.Log, "agent %s: job %d done\n", a.id, j.ID)
	return nil
}

// spillRecordTimeout bounds how long the agent keeps trying to record an attempt's spill
// files: they are there because the store failed, which may not answer yet.
const spillRecordTimeout = time.Minute

// recordSpills logs each spill file the job's command left and records them with its
// attempt (dbperf_job_attempts.spills, Job.Spills), retried while the store does not
// answer, for spillRecordTimeout at most.
func (a *agent) recordSpills(ctx context.Context, j Job, spills []string) {
	if len(spills) == 0 {
		return
	}
	for _, p := range spills {
		fmt.Fprintf(a.cfg.Log, "agent %s: job %d: its results store failed; what the run measured is in spill file %s on %s: publish it with \"dbperf results copy --from %s --to STORE\"\n",
			a.id, j.ID, p, a.cfg.Host, p)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), spillRecordTimeout)
	defer cancel()
	for {
		_, err := a.f.pool.Exec(rctx, `UPDATE dbperf_job_attempts SET spills = $3 WHERE job_id = $1 AND attempt = $2`, j.ID, j.Attempt, spills)
		if err == nil {
			return
		}
		select {
		case <-rctx.Done():
			fmt.Fprintf(a.cfg.Log, "agent %s: job %d: could not record its spill files in the queue: %v\n", a.id, j.ID, err)
			return
		case <-time.After(time.Second):
		}
	}
}
