// Package fleet is dbperf's benchmark fleet: a job queue in the PostgreSQL results store
// and the agents that take its jobs, one at a time per host.
//
// The queue is riverqueue/river (its pgx v5 driver, its own tables migrated into the store's
// database by rivermigrate): a job is a dbperf command line (JobArgs.Argv) that an agent
// runs exactly as the CLI would, in a process of its own. Jobs are unique by their
// arguments and queue, so enqueuing the same sweep twice adds nothing. A host class is a
// queue: "class_c8r32" for agents started with --class c8r32, river's "default" for those
// without one, so a sweep enqueued for a class runs on that class only.
//
// What river does not do, and this package does by hand: liveness. River rescues a running
// job by its age (RescueStuckJobsAfter, checked every 30 s by the leader), which is right
// for short jobs and wrong for benchmarks that run for hours. Here every agent heartbeats
// into dbperf_agents and, while it runs a job, moves that job's attempted_at forward on
// each beat; RescueStuckJobsAfter is then the lease: a job whose agent stopped beating
// (kill -9, host gone) is rescued by river within the lease plus its 30 s check and taken
// by another agent, and a job whose agent lives is never rescued, however long it runs.
//
// The fleet is issue 27. River's tables are migrated under an advisory lock, beside
// dbperf's own dbperf_agents, dbperf_job_attempts and dbperf_barriers. JobArgs is a dbperf
// command line, its sweep and point, and its host class (river queue class_<class>).
// Enqueue adds jobs, unique by arguments and queue; Jobs, Cancel and Agents list and
// cancel. Barrier: a part of a run over several agents waits in dbperf_barriers until all
// parts reached the step, then all start at one store-clock instant. View and Load are
// the queue with each job's stored runs, for `dbperf queue` and `dbperf serve`. RunAgent
// (agent.go) runs one job at a time, with heartbeats that move its job's attempted_at,
// river's rescuer being given the lease as the job's timeout; SIGTERM requeues the job.
// The environment an agent gives a job's command (EnvJob, …) and what the run records of
// it (RunEnv) are in jobenv.go; RunCommand (command.go) runs a job's command, dbperf
// itself in a process of its own; Follow (follow.go) is dbperf agent: the agent on its
// store, started again on the store's new DSN when @FILE names another. A queued sweep as
// its waiter sees it is package sweepq.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/dbperf/dbperf/internal/store"
)

// Kind is the river job kind of a queued dbperf command.
const Kind = "dbperf_command"

// DefaultMaxAttempts is how often a job is tried: a job whose agent died is tried again,
// a command that fails on its own (exit status other than 0, 1 or 2) too.
const DefaultMaxAttempts = 3

// JobArgs is a queued dbperf command: what an agent runs, and what makes it unique.
type JobArgs struct {
	// Argv is dbperf's command line without the program's name, e.g. run insertbench
	// --scale tiny --label a. It never holds a password: the store's DSN is the agent's,
	// and a --dsn with a password is refused before it is queued.
	Argv []string `json:"argv"`
	// Sweep is the label of the sweep the job is a point of ("" for a run).
	Sweep string `json:"sweep,omitempty"`
	// Point is the point's name within its sweep.
	Point string `json:"point,omitempty"`
	// Class is the host class that runs it ("" for any agent without a class).
	Class string `json:"class,omitempty"`
	// Part is KEY/I/N when the job is part I of N of one run over several agents (dbperf
	// run --agents). Such a job is tried once: a retry could never run with the other
	// parts, which went on without it (their barriers passed), so its attempt that ended
	// ends the job (discarded), and the run that merges the parts says so.
	Part string `json:"part,omitempty"`
}

// Kind implements river.JobArgs.
func (JobArgs) Kind() string { return Kind }

var classRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

// CheckClass says whether class can name a host class: "" or lower-case letters, digits,
// '-' and '_' (a queue's name is made of it).
func CheckClass(class string) error {
	if class != "" && !classRE.MatchString(class) {
		return fmt.Errorf("class %q: use lower-case letters, digits, - and _, e.g. c8r32", class)
	}
	return nil
}

// Queue is the river queue of a host class.
func Queue(class string) string {
	if class == "" {
		return river.QueueDefault
	}
	return "class_" + class
}

// Fleet is the queue in one PostgreSQL results store.
type Fleet struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx] // insert-only: enqueues, lists and cancels
}

// Open connects to the store at dsn (a PostgreSQL results store), migrates river's tables
// and dbperf's agents table, and returns the queue.
func Open(ctx context.Context, dsn string) (*Fleet, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("queue: connect to the results store: %w", err)
	}
	f := &Fleet{pool: pool}
	if err := f.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	f.client, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: %w", err)
	}
	return f, nil
}

// OpenReadOnly connects to the store at dsn without creating anything (dbperf serve reads
// it): nil and no error when the store holds no queue.
func OpenReadOnly(ctx context.Context, dsn string) (*Fleet, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("queue: connect to the results store: %w", err)
	}
	var has bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('river_job') IS NOT NULL AND to_regclass('dbperf_job_attempts') IS NOT NULL`).Scan(&has); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: look for the queue's tables: %w", err)
	}
	if !has {
		pool.Close()
		return nil, nil
	}
	f := &Fleet{pool: pool}
	if f.client, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quietLogger()}); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: %w", err)
	}
	return f, nil
}

// View is the queue as `dbperf queue` and `dbperf serve` show it: the jobs, the agents and
// the runs each job stored.
type View struct {
	Jobs   []Job
	Agents []AgentInfo
	Runs   map[int64][]store.JobRun
}

// Load reads the queue (only sweep's jobs when sweep is not "") and the jobs' runs in st.
func (f *Fleet) Load(ctx context.Context, st *store.Store, sweep string) (View, error) {
	var v View
	var err error
	if v.Jobs, err = f.Jobs(ctx, sweep); err != nil {
		return v, err
	}
	if v.Agents, err = f.Agents(ctx); err != nil {
		return v, err
	}
	ids := make([]int64, len(v.Jobs))
	for i, j := range v.Jobs {
		ids[i] = j.ID
	}
	v.Runs, err = st.JobRuns(ctx, ids)
	return v, err
}

// Close closes the store's connections.
func (f *Fleet) Close() { f.pool.Close() }

// agentsDDL is dbperf's own table beside river's: the agents and their heartbeats.
const agentsDDL = `
CREATE TABLE IF NOT EXISTS dbperf_agents (
	id           TEXT PRIMARY KEY,
	host         TEXT NOT NULL,
	class        TEXT NOT NULL,
	pid          INTEGER NOT NULL,
	lease_ms     BIGINT NOT NULL,
	state        TEXT NOT NULL,       -- idle, running, stopped (lost: a lease without a heartbeat)
	job_id       BIGINT,              -- the job it runs, NULL when idle
	started_at   TIMESTAMPTZ NOT NULL,
	heartbeat_at TIMESTAMPTZ NOT NULL,
	job_started_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS dbperf_barriers (
	key        TEXT NOT NULL,
	step       TEXT NOT NULL,
	part       INTEGER NOT NULL,
	arrived_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (key, step, part)
);
CREATE TABLE IF NOT EXISTS dbperf_job_attempts (
	job_id     BIGINT NOT NULL,
	attempt    INTEGER NOT NULL,
	agent      TEXT NOT NULL,
	host       TEXT NOT NULL,
	started_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (job_id, attempt)
);
ALTER TABLE dbperf_job_attempts ADD COLUMN IF NOT EXISTS spills TEXT[] NOT NULL DEFAULT '{}'`

func (f *Fleet) migrate(ctx context.Context) error {
	// Two processes may open a new store at once (three agents started together): the
	// migrations run under one advisory lock, so they never race on CREATE TABLE.
	conn, err := f.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("queue: connect to the results store: %w", err)
	}
	defer conn.Release()
	const lock = 0x64627066 // "dbpf"
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("queue: lock for migrations: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock) //nolint:errcheck // released with the session anyway
	m, err := rivermigrate.New(riverpgxv5.New(f.pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue: migrate river's tables: %w", err)
	}
	if _, err := conn.Exec(ctx, agentsDDL); err != nil {
		return fmt.Errorf("queue: create dbperf_agents: %w", err)
	}
	return nil
}

// quietLogger drops river's own logging below warnings: the agent prints what it does.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelError + 4}))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Enqueued is one job Enqueue was given: its id and whether it was new.
type Enqueued struct {
	ID    int64
	Args  JobArgs
	Added bool // false: the same job was already queued, running or done
}

// Enqueue adds the jobs, each in its class's queue; a job already there (same arguments,
// same queue, not cancelled) is not added again.
func (f *Fleet) Enqueue(ctx context.Context, jobs []JobArgs) ([]Enqueued, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		if err := CheckClass(j.Class); err != nil {
			return nil, err
		}
		attempts := DefaultMaxAttempts
		if j.Part != "" {
			attempts = 1
		}
		params[i] = river.InsertManyParams{Args: j, InsertOpts: &river.InsertOpts{
			Queue:       Queue(j.Class),
			MaxAttempts: attempts,
			UniqueOpts:  river.UniqueOpts{ByArgs: true, ByQueue: true},
		}}
	}
	res, err := f.client.InsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("queue: enqueue: %w", err)
	}
	out := make([]Enqueued, len(res))
	for i, r := range res {
		out[i] = Enqueued{ID: r.Job.ID, Args: jobs[i], Added: !r.UniqueSkippedAsDuplicate}
	}
	return out, nil
}

// Job is a queued job as `dbperf queue` shows it.
type Job struct {
	ID        int64
	Args      JobArgs
	State     string // river's: available, running, completed, retryable, cancelled, discarded, …
	Attempt   int
	CreatedAt time.Time
	// StartedAt is its latest attempt's start (dbperf_job_attempts: river's attempted_at
	// is the lease the heartbeats move).
	StartedAt *time.Time
	// FinishedAt is when it completed, was cancelled or discarded.
	FinishedAt *time.Time
	// Agents are the agents that took it, in order (the last one runs or ran it).
	Agents []string
	// Host is the host of its latest attempt's agent ("" before any took it).
	Host string
	// Errors are its attempts' errors, oldest first.
	Errors []string
	// Spills are the spill files its latest attempt's command left on Host: its results
	// store failed, and what the run measured is only there (AgentConfig.Run's Ended).
	Spills []string
}

// SpillNote says where the job's latest attempt left what it measured when its results
// store failed ("; what it measured is in spill file P on HOST: publish it with …"), ""
// when it left no spill file.
func (j Job) SpillNote() string {
	if len(j.Spills) == 0 {
		return ""
	}
	host := j.Host
	if host == "" {
		host = "its agent's host"
	}
	what := "spill file " + j.Spills[0]
	if len(j.Spills) > 1 {
		what = "spill files " + strings.Join(j.Spills, ", ")
	}
	return fmt.Sprintf("; its results store failed and what it measured is in %s on %s: publish it with \"dbperf results copy --from %s --to STORE\"",
		what, host, j.Spills[0])
}

// Done says whether the job will not run again.
func (j Job) Done() bool {
	switch rivertype.JobState(j.State) {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return true
	}
	return false
}

// Jobs lists the queue's dbperf jobs, oldest first; sweep, when not "", only that sweep's.
func (f *Fleet) Jobs(ctx context.Context, sweep string) ([]Job, error) {
	var out []Job
	p := river.NewJobListParams().Kinds(Kind).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(10000).
		States(rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
			rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled)
	if sweep != "" {
		p = p.Where("args->>'sweep' = @sweep", river.NamedArgs{"sweep": sweep})
	}
	res, err := f.client.JobList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("queue: list jobs: %w", err)
	}
	latest, err := f.latestAttempts(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range res.Jobs {
		j, err := jobOf(r)
		if err != nil {
			return nil, err
		}
		j.StartedAt = nil
		if la, ok := latest[j.ID]; ok {
			j.StartedAt, j.Host, j.Spills = &la.started, la.host, la.spills
		}
		out = append(out, j)
	}
	return out, nil
}

func jobOf(r *rivertype.JobRow) (Job, error) {
	var a JobArgs
	if err := json.Unmarshal(r.EncodedArgs, &a); err != nil {
		return Job{}, fmt.Errorf("queue: job %d: %w", r.ID, err)
	}
	j := Job{ID: r.ID, Args: a, State: string(r.State), Attempt: r.Attempt, CreatedAt: r.CreatedAt,
		StartedAt: r.AttemptedAt, FinishedAt: r.FinalizedAt, Agents: slices.Clone(r.AttemptedBy)}
	for _, e := range r.Errors {
		j.Errors = append(j.Errors, e.Error)
	}
	return j, nil
}

// latestAttempt is a job's latest attempt as its agent recorded it.
type latestAttempt struct {
	started time.Time
	host    string
	spills  []string
}

// latestAttempts are, per job, its latest attempt's start, host and spill files
// (dbperf_job_attempts; a store read only, never migrated since spills came, has none).
func (f *Fleet) latestAttempts(ctx context.Context) (map[int64]latestAttempt, error) {
	rows, err := f.pool.Query(ctx, `SELECT DISTINCT ON (job_id) job_id, started_at, host, COALESCE(to_jsonb(a) -> 'spills', '[]') FROM dbperf_job_attempts a ORDER BY job_id, attempt DESC, started_at DESC`)
	if err != nil {
		return nil, fmt.Errorf("queue: read the jobs' attempts: %w", err)
	}
	defer rows.Close()
	out := map[int64]latestAttempt{}
	for rows.Next() {
		var id int64
		var la latestAttempt
		if err := rows.Scan(&id, &la.started, &la.host, &la.spills); err != nil {
			return nil, fmt.Errorf("queue: read the jobs' attempts: %w", err)
		}
		out[id] = la
	}
	return out, rows.Err()
}

// Cancel cancels a job: one not yet running never runs; a running one's agent is told
// (river cancels its context) and stops the command cleanly.
func (f *Fleet) Cancel(ctx context.Context, id int64) (Job, error) {
	r, err := f.client.JobCancel(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return Job{}, fmt.Errorf("queue: no job %d (dbperf queue lists them)", id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("queue: cancel job %d: %w", id, err)
	}
	if r.Kind != Kind {
		return Job{}, fmt.Errorf("queue: job %d is not a dbperf job", id)
	}
	return jobOf(r)
}

// AgentInfo is one agent's record.
type AgentInfo struct {
	// State is idle, running, stopped or lost.
	ID, Host, Class, State string
	PID                    int
	JobID                  *int64
	StartedAt, Heartbeat   time.Time
	// Age is how long ago its last heartbeat was, by the store's clock.
	Age time.Duration
}

// Agents lists the agents of this store, the live ones first: those not stopped (an agent
// whose heartbeat is older than its lease reads "lost": killed, or its host gone) and those
// stopped within the last hour.
func (f *Fleet) Agents(ctx context.Context) ([]AgentInfo, error) {
	rows, err := f.pool.Query(ctx, `SELECT id, host, class,
	CASE WHEN state <> 'stopped' AND heartbeat_at < now() - lease_ms * interval '1 millisecond' THEN 'lost' ELSE state END,
	pid, job_id, started_at, heartbeat_at, EXTRACT(EPOCH FROM now() - heartbeat_at)
FROM dbperf_agents WHERE state <> 'stopped' OR heartbeat_at > now() - interval '1 hour'
ORDER BY state = 'stopped', heartbeat_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("queue: read agents: %w", err)
	}
	defer rows.Close()
	var out []AgentInfo
	for rows.Next() {
		var a AgentInfo
		var age float64
		if err := rows.Scan(&a.ID, &a.Host, &a.Class, &a.State, &a.PID, &a.JobID, &a.StartedAt, &a.Heartbeat, &age); err != nil {
			return nil, fmt.Errorf("queue: read agents: %w", err)
		}
		a.Age = time.Duration(age * float64(time.Second))
		out = append(out, a)
	}
	return out, rows.Err()
}

// ShortArgv is a job's command for a table: its arguments joined, cut at n characters.
func ShortArgv(argv []string, n int) string {
	s := strings.Join(argv, " ")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

// barrierLead is how long after the last part's arrival the parts start: enough for each
// to see that arrival in its next poll.
const barrierLead = 300 * time.Millisecond

// ErrBarrierPassed is a part's arrival at a step whose barrier all the parts passed
// already: the part arrives again (its attempt was retried, or the same part runs twice)
// and the others started the step without it; it would run alone.
var ErrBarrierPassed = errors.New("every part passed this barrier already")

// Barrier is one part's arrival at a step of a run shared by several agents (dbperf run
// --agents): it returns once all n parts of key have arrived, at the same instant for all
// of them (the last arrival plus barrierLead, by the store's clock), or with an error
// after timeout. A part arriving at a step all n parts had arrived at before (its own
// earlier arrival among them) fails at once with ErrBarrierPassed: the others did not
// wait for it.
func (f *Fleet) Barrier(ctx context.Context, key, step string, part, n int, timeout time.Duration) error {
	var before int
	var last time.Time
	if err := f.pool.QueryRow(ctx, `SELECT count(*), COALESCE(max(arrived_at), now()) FROM dbperf_barriers WHERE key = $1 AND step = $2`,
		key, step).Scan(&before, &last); err != nil {
		return fmt.Errorf("arrive at step %s: %w", step, err)
	}
	if before >= n {
		return fmt.Errorf("step %s: part %d of %d arrives again after all %d parts passed its barrier (the last arrival %s): the others ran the step without it: %w",
			step, part, n, n, last.UTC().Format(time.RFC3339), ErrBarrierPassed)
	}
	if _, err := f.pool.Exec(ctx, `INSERT INTO dbperf_barriers (key, step, part, arrived_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (key, step, part) DO UPDATE SET arrived_at = now()`, key, step, part); err != nil {
		return fmt.Errorf("arrive at step %s: %w", step, err)
	}
	deadline := time.Now().Add(timeout)
	checked := time.Now()
	for {
		var arrived int
		var wait float64
		if err := f.pool.QueryRow(ctx, `SELECT count(*), COALESCE(EXTRACT(EPOCH FROM max(arrived_at) + $3 * interval '1 millisecond' - now()), 0)
			FROM dbperf_barriers WHERE key = $1 AND step = $2`, key, step, barrierLead.Milliseconds()).Scan(&arrived, &wait); err != nil {
			return fmt.Errorf("wait at step %s: %w", step, err)
		}
		if arrived >= n {
			if wait > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(wait * float64(time.Second))):
				}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("step %s: %d of %d parts arrived within %s; this part does not run it", step, arrived, n, timeout)
		}
		if time.Since(checked) >= time.Second {
			checked = time.Now()
			if gone, err := f.partsGone(ctx, key, step); err != nil {
				return fmt.Errorf("wait at step %s: %w", step, err)
			} else if gone != "" {
				return fmt.Errorf("step %s: %d of %d parts arrived, and %s without arriving: it never will; this part does not run it: %w",
					step, arrived, n, gone, ErrPartGone)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ErrPartGone is a barrier that can never be passed: another part's job ended before it
// arrived (its agent died and the job was discarded, it was cancelled, or its run stopped
// at a failed step).
var ErrPartGone = errors.New("a part's job ended before it arrived")

// partsGone names the parts of key whose queued job ended (completed, cancelled,
// discarded) without arriving at step: "part 2 (job 12) is discarded", "" when none did.
// A part run outside the queue (--part by hand) has no job and is never found gone.
func (f *Fleet) partsGone(ctx context.Context, key, step string) (string, error) {
	rows, err := f.pool.Query(ctx, `SELECT j.id, j.state::text, j.args->>'part' FROM river_job j
		WHERE j.kind = $1 AND split_part(j.args->>'part', '/', 1) = $2 AND j.state IN ('completed', 'cancelled', 'discarded')
		AND NOT EXISTS (SELECT 1 FROM dbperf_barriers b WHERE b.key = $2 AND b.step = $3
			AND b.part::text = split_part(j.args->>'part', '/', 2))
		ORDER BY j.id`, Kind, key, step)
	if err != nil {
		return "", fmt.Errorf("the parts' jobs: %w", err)
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var id int64
		var state, part string
		if err := rows.Scan(&id, &state, &part); err != nil {
			return "", fmt.Errorf("the parts' jobs: %w", err)
		}
		i, _, _ := strings.Cut(strings.TrimPrefix(part, key+"/"), "/")
		gone = append(gone, fmt.Sprintf("part %s (job %d) is %s", i, id, state))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("the parts' jobs: %w", err)
	}
	return strings.Join(gone, ", "), nil
}
