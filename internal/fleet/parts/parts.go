// Package parts runs one dbperf run over several agents of the fleet (dbperf run …
// --agents N, docs/fleet.md).
//
// The coordinator (the command given --agents) splits the run's clients over N jobs of
// one host class (Coordinator.Enqueue), each a part: a dbperf run of the same workload
// with its own clients (--client-offset, so they own other tables) against the same
// server, and --part KEY/I/N. A part's steps' loads start together: Barrier is a part's
// runner.Profiler, which waits in the store (fleet.Barrier) until every part reached the
// step. Once every part's job is done, Coordinator.Finish marks the runs of parts that did
// not complete failed (a part is tried once), merges the parts' stored runs into one run
// and imports it into the store.
//
// The merge (mergeParts) sums the labels' counts per step and takes their percentiles
// from the merged histograms (metrics.MergeLabels); intervals are summed by index, client
// CPU and connection CPU summed; the machine and server figures are those of the part on
// the server's host. A step the parts did not run together fails the merged run, and the
// env key EnvAgentsPartial says why.
//
// The package takes the fleet's queue and the results store already open; the command
// line's flags, their checks and what is printed stay with the cli.
package parts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/store"
)

// The env keys of a part's run and of the merged run.
const (
	EnvPartOf = "part_of" // a part's run: the key of the run it is a part of
	EnvPart   = "part"    // a part's run: "I/N"
	EnvAgents = "agents"  // the merged run: its parts, hosts and runs
	// EnvAgentsPartial is the merged run's: why it is not whole (a part whose job did not
	// complete, a step a part ran alone), one clause per part; absent when it is.
	EnvAgentsPartial = "agents_partial"
)

// Spec is a part's --part KEY/I/N: part I of N of the run whose key is Key.
type Spec struct {
	Key  string
	I, N int
}

// Parse reads a --part value, KEY/I/N with 1 ≤ I ≤ N and N ≥ 2.
func Parse(v string) (Spec, error) {
	f := strings.Split(v, "/")
	if len(f) != 3 || f[0] == "" {
		return Spec{}, fmt.Errorf("--part %q: give KEY/I/N (set by dbperf run --agents)", v)
	}
	i, err1 := strconv.Atoi(f[1])
	n, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || n < 2 || i < 1 || i > n {
		return Spec{}, fmt.Errorf("--part %q: give KEY/I/N with 1 ≤ I ≤ N, N ≥ 2", v)
	}
	return Spec{Key: f[0], I: i, N: n}, nil
}

// SetEnv records the part in a part's run's env (EnvPartOf and EnvPart).
func (s Spec) SetEnv(env map[string]string) {
	env[EnvPartOf], env[EnvPart] = s.Key, fmt.Sprintf("%d/%d", s.I, s.N)
}

// Idle counts the idle agents of class: the parts need an agent each at once, since a
// part queued behind another on one agent would wait at the first barrier for one that
// cannot start.
func Idle(ctx context.Context, fl *fleet.Fleet, class string) (int, error) {
	agents, err := fl.Agents(ctx)
	if err != nil {
		return 0, err
	}
	idle := 0
	for _, a := range agents {
		if a.State == "idle" && a.Class == class {
			idle++
		}
	}
	return idle, nil
}

// Options are a run over several agents, as the coordinator splits it.
type Options struct {
	// Agents is the number of parts, N ≥ 2.
	Agents int
	// Clients are the run's clients, split over the parts as evenly as they go (the first
	// parts get one more).
	Clients int
	// Class is the host class whose agents take the parts ("" for agents without one).
	Class string
	// Label is the merged run's label; part I's is Label/part-I.
	Label string
	// Args is the parts' command line: the run's own, less the flags of the server and of
	// the split (--dsn, --clients, --client-offset, --part, --label), which each part gets
	// its own of.
	Args []string
	// DSN is the --dsn every part gets: the server's, or @FILE.
	DSN string
	// Settings are engine settings the merged run records beside the parts' (those of a
	// managed server the coordinator started).
	Settings map[string]string
	// Host is the coordinator's hostname: its part measures the machine when no part ran
	// on the server's host.
	Host string
}

// Coordinator queues a run's parts, waits for them and merges their runs.
type Coordinator struct {
	fl  *fleet.Fleet
	st  *store.Store
	o   Options
	ids []int64
}

// New returns the coordinator of the run o in fl's queue and st's store.
func New(fl *fleet.Fleet, st *store.Store, o Options) *Coordinator {
	return &Coordinator{fl: fl, st: st, o: o}
}

// Enqueue queues the parts' jobs under a new key and returns their ids, part 1's first.
func (c *Coordinator) Enqueue(ctx context.Context) ([]int64, error) {
	key := randomHex(8)
	per, extra := c.o.Clients/c.o.Agents, c.o.Clients%c.o.Agents
	var jobs []fleet.JobArgs
	offset := 0
	for i := 1; i <= c.o.Agents; i++ {
		n := per
		if i <= extra {
			n++
		}
		argv := append(append([]string(nil), c.o.Args...), "--dsn="+c.o.DSN, "--clients="+strconv.Itoa(n),
			"--client-offset="+strconv.Itoa(offset), fmt.Sprintf("--part=%s/%d/%d", key, i, c.o.Agents),
			fmt.Sprintf("--label=%s/part-%d", c.o.Label, i))
		offset += n
		jobs = append(jobs, fleet.JobArgs{Argv: argv, Class: c.o.Class, Part: fmt.Sprintf("%s/%d/%d", key, i, c.o.Agents)})
	}
	got, err := c.fl.Enqueue(ctx, jobs)
	if err != nil {
		return nil, err
	}
	c.ids = make([]int64, len(got))
	for i, g := range got {
		c.ids[i] = g.ID
	}
	return c.ids, nil
}

// ErrInterrupted is Finish's when it stopped waiting for the parts (ctx done, or the
// queue gone): their jobs are cancelled and nothing is merged.
var ErrInterrupted = errors.New("interrupted")

// UnmergedError is Finish's when a part left no finished run, or the parts' runs do not
// merge (not the same steps): nothing is merged.
type UnmergedError struct {
	Label string
	// Problems are the parts without a finished run, one clause each.
	Problems []string
}

func (e *UnmergedError) Error() string {
	return fmt.Sprintf("run %s: %s; nothing merged", e.Label, strings.Join(e.Problems, "; "))
}

// Result is the merged run, as Finish imported it.
type Result struct {
	// ID is the merged run's in the store.
	ID int64
	// Run is the merged run.
	Run store.Run
	// Parts are the ids of the parts' runs it merged, part 1's first.
	Parts []int64
}

// FailedError is Result.Err's: the merged run is not ok.
type FailedError struct {
	ID  int64
	Why string
}

func (e *FailedError) Error() string { return fmt.Sprintf("run %d: %s", e.ID, e.Why) }

// Err is nil when the merged run is ok, else a *FailedError saying why: a part's step
// failed, or the run is not whole (EnvAgentsPartial).
func (r Result) Err() error {
	if r.Run.Status == store.RunOK {
		return nil
	}
	why := "a part's step failed"
	if p := r.Run.Env[EnvAgentsPartial]; p != "" {
		why = "not whole: " + p
	}
	return &FailedError{ID: r.ID, Why: why}
}

// Finish waits until every part's job is done, marks the runs of the parts whose job did
// not complete failed, merges the parts' runs into one and imports it. Waiting
// interrupted, it cancels the parts' jobs and returns ErrInterrupted; a part without a
// finished run is an *UnmergedError.
func (c *Coordinator) Finish(ctx context.Context) (Result, error) {
	done, err := waitJobs(ctx, c.fl, c.ids)
	if err != nil {
		for _, id := range c.ids {
			_, _ = c.fl.Cancel(context.WithoutCancel(ctx), id)
		}
		return Result{}, fmt.Errorf("%w: the parts' jobs %s are cancelled", ErrInterrupted, joinIDs(c.ids))
	}
	partial, err := c.failIncomplete(ctx, done)
	if err != nil {
		return Result{}, err
	}
	partIDs, err := c.partRuns(ctx, done)
	if err != nil {
		return Result{}, err
	}
	runs, err := c.st.Results(ctx, partIDs)
	if err != nil {
		return Result{}, err
	}
	merged, err := mergeParts(runs, c.o.Label, c.o.Host, c.o.Settings, done)
	if err != nil {
		// Parts that did not run the same steps (one stopped before its first): nothing to
		// merge, a failed run rather than an error of the command.
		return Result{}, &UnmergedError{Label: c.o.Label, Problems: append(partial, err.Error())}
	}
	if len(partial) > 0 {
		merged.Status = store.RunFailed
		if p := merged.Env[EnvAgentsPartial]; p != "" {
			partial = append(partial, p)
		}
		merged.Env[EnvAgentsPartial] = strings.Join(partial, "; ")
	}
	id, _, err := c.st.Import(ctx, merged)
	if err != nil {
		return Result{}, err
	}
	return Result{ID: id, Run: merged, Parts: partIDs}, nil
}

// failIncomplete marks the run of each part whose job did not complete failed and says
// why, one clause per part. A part is tried once (fleet.JobArgs.Part): one whose job did
// not complete (its agent died, its command failed) has the run its attempt left marked
// failed, as a retry would have, and the merged run says so.
func (c *Coordinator) failIncomplete(ctx context.Context, done []fleet.Job) ([]string, error) {
	var partial []string
	for i, j := range done {
		if j.State == "completed" {
			continue
		}
		why := fmt.Sprintf("part %d (job %d) %s: its one attempt did not finish (its agent died or stopped, or its command failed), and a part is never retried, the others having gone on without it", i+1, j.ID, j.State)
		if len(j.Errors) > 0 {
			why += fmt.Sprintf(" (queue: %s)", strings.TrimRight(j.Errors[len(j.Errors)-1], "; "))
		}
		why += j.SpillNote()
		if _, err := c.st.FailJobRuns(ctx, j.ID, j.Attempt+1, why, time.Now()); err != nil {
			return nil, err
		}
		partial = append(partial, why)
	}
	return partial, nil
}

// partRuns returns the finished run of each part's job, in the jobs' order; an
// *UnmergedError when a part has none.
func (c *Coordinator) partRuns(ctx context.Context, done []fleet.Job) ([]int64, error) {
	runsOf, err := c.st.JobRuns(ctx, c.ids)
	if err != nil {
		return nil, err
	}
	var partIDs []int64
	var problems []string
	for i, j := range done {
		var ok int64
		for _, r := range runsOf[j.ID] {
			if r.Status == store.RunOK || r.Status == store.RunFailed {
				ok = r.RunID
			}
		}
		if ok == 0 {
			problems = append(problems, fmt.Sprintf("part %d (job %d): %s, no finished run%s", i+1, j.ID, j.State, j.SpillNote()))
			continue
		}
		partIDs = append(partIDs, ok)
	}
	if len(problems) > 0 {
		return nil, &UnmergedError{Label: c.o.Label, Problems: problems}
	}
	return partIDs, nil
}

// waitJobs waits until every job is done and returns them in ids' order.
func waitJobs(ctx context.Context, fl *fleet.Fleet, ids []int64) ([]fleet.Job, error) {
	for {
		js, err := fl.Jobs(ctx, "")
		if err != nil {
			return nil, err
		}
		byID := map[int64]fleet.Job{}
		for _, j := range js {
			byID[j.ID] = j
		}
		out := make([]fleet.Job, 0, len(ids))
		for _, id := range ids {
			if j, ok := byID[id]; ok && j.Done() {
				out = append(out, j)
			}
		}
		if len(out) == len(ids) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
