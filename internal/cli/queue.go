package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/sweep"
)

// queueFlags are --queue and --class, shared by run and sweep.
type queueFlags struct {
	queue bool
	class string
}

func addQueueFlags(fl *pflag.FlagSet, q *queueFlags) {
	fl.BoolVar(&q.queue, "queue", false, "do not run: enqueue as a job (a sweep: a job per point) in the PostgreSQL results store, for the agents (dbperf agent) to run; the same job twice is added once")
	fl.StringVar(&q.class, "class", "", "with --queue (or run --agents): the host class whose agents run it (dbperf agent --class), e.g. c8r32; default: agents without a class")
}

// notQueued are the flags a queued command does not carry: the queue's own, the store
// (the agent's), output (the agent's log) and a sweep's order (each point is a job).
var notQueued = map[string]bool{"queue": true, "class": true, "results": true, "quiet": true, "resume": true, "design": true, "wait": true}

// commandArgs is the command line of cmd as given: its path below the root, then every
// flag set, in name order (pflag's Visit), so the same command is the same job.
// Flags named in skip are left out (the caller adds its own values after).
func commandArgs(cmd *cobra.Command, skip ...string) []string {
	args := strings.Fields(cmd.CommandPath())[1:]
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if notQueued[fl.Name] || slices.Contains(skip, fl.Name) {
			return
		}
		if fl.Value.Type() == "stringArray" {
			for _, v := range fl.Value.(pflag.SliceValue).GetSlice() {
				args = append(args, "--"+fl.Name+"="+v)
			}
			return
		}
		v := fl.Value.String()
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		args = append(args, "--"+fl.Name+"="+v)
	})
	return args
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// checkQueue refuses what cannot be queued: a store that is not PostgreSQL (the queue
// lives in it), a bad class, a --dsn that would store its password in the queue.
func checkQueue(results string, q *queueFlags, dsn string) error {
	var errs []error
	if !store.IsPostgres(results) {
		errs = append(errs, errors.New("--queue: the queue lives in a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)"))
	}
	if err := fleet.CheckClass(q.class); err != nil {
		errs = append(errs, fmt.Errorf("--class: %w", err))
	}
	if dsn != "" && !strings.HasPrefix(dsn, "@") && RedactDSN(dsn) != dsn {
		errs = append(errs, errors.New("--dsn: a queued job would store its password; give --dsn @FILE (a file on each agent's host whose first line is the DSN)"))
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	return nil
}

// enqueue adds the jobs and says what it added.
func enqueue(ctx context.Context, env Env, results string, jobs []fleet.JobArgs) error {
	f, st, err := openQueue(ctx, results)
	if err != nil {
		return err
	}
	defer st.Close()
	defer f.Close()
	got, err := f.Enqueue(ctx, jobs)
	if err != nil {
		return err
	}
	added := 0
	for _, e := range got {
		what := "dbperf " + fleet.ShortArgv(e.Args.Argv, 120)
		if e.Args.Point != "" {
			what = "point " + e.Args.Point
		}
		if e.Added {
			added++
			fmt.Fprintf(env.Out, "queued job %d (%s): %s\n", e.ID, className(e.Args.Class), what)
		} else {
			fmt.Fprintf(env.Out, "job %d is already queued or done (%s): %s; nothing added\n", e.ID, className(e.Args.Class), what)
		}
	}
	fmt.Fprintf(env.Out, "%d of %d jobs added; dbperf queue lists them, dbperf agent --results … --class … runs them\n", added, len(got))
	return nil
}

func className(c string) string {
	if c == "" {
		return "agents without a class"
	}
	return "class " + c
}

// newQueueCmd is `dbperf queue`: the jobs with their state, host, start and runs; --cancel.
func newQueueCmd(env Env) *cobra.Command {
	var results, sweep string
	var cancel []int64
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List the queued jobs (state, agent's host, start, stored runs) and the agents; cancel jobs",
		Long: `List the jobs of the queue in a PostgreSQL results store (dbperf run … --queue, dbperf
sweep … --queue): each with its state (available, running, completed, retryable,
cancelled, discarded), attempt, the host of the agent that runs or ran it, its start
and the runs it stored; then the agents with their class, job and last heartbeat.
--cancel ID stops a job: one not started never runs, a running one's agent stops its
command cleanly (its run is kept, marked interrupted).`,
		Example: `  dbperf queue --results postgres://dbperf@lab-db/results
  dbperf queue --sweep nightly-2026-11-26
  dbperf queue --cancel 42`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := queueResults(results, env)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			f, st, err := openQueue(ctx, path)
			if err != nil {
				return err
			}
			defer st.Close()
			defer f.Close()
			for _, id := range cancel {
				j, err := f.Cancel(ctx, id)
				if err != nil {
					return badInput(err)
				}
				fmt.Fprintf(env.Out, "job %d: %s\n", j.ID, j.State)
			}
			if len(cancel) > 0 {
				return nil
			}
			v, err := f.Load(ctx, st, sweep)
			if err != nil {
				return err
			}
			return render.Queue(env.Out, v)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringVar(&sweep, "sweep", "", "only the jobs of this sweep (its --label)")
	cmd.Flags().Int64SliceVar(&cancel, "cancel", nil, "cancel these jobs (ids), e.g. --cancel 42,43")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// waitFlags are `dbperf sweep --label L --wait`'s.
type waitFlags struct {
	wait           bool
	label, results string
	timeout        time.Duration
}

// waitSweep waits until every point of the queued sweep w.label is done (sweepq's
// Follow), then prints the sweep's relative report, the first point the base, and which
// class and hosts ran it. Exit status 1 when a point was not measured
// (sweepq.UnmeasuredError) or --timeout ran out, 130 when interrupted (StoppedError).
func waitSweep(ctx context.Context, env Env, w waitFlags) error {
	if w.label == "" {
		return badInput(errors.New("--wait needs the --label of a queued sweep (dbperf queue lists the sweeps)"))
	}
	path, err := queueResults(w.results, env)
	if err != nil {
		return err
	}
	q, err := sweepq.Open(ctx, path)
	if err != nil {
		return badInput(err)
	}
	defer q.Close()
	o := sweepq.FollowOptions{WaitOptions: sweepq.WaitOptions{Label: w.label}, Timeout: w.timeout}
	if env.IsTerminal {
		o.Progress = func(done, total int) {
			fmt.Fprintf(env.Out, "sweep %s: %d of %d points done\n", w.label, done, total)
		}
	}
	out, err := q.Follow(ctx, o)
	if errors.Is(err, sweepq.ErrNoSweep) {
		return badInput(fmt.Errorf("--label %s: no queued sweep has this label (dbperf queue lists the jobs)", w.label))
	}
	if err != nil {
		return err
	}
	return reportWaited(ctx, env, q, out)
}

// reportWaited prints a waited sweep's classes, hosts and relative report; its error
// names each point that was not measured (Outcome.Err).
func reportWaited(ctx context.Context, env Env, q *sweepq.Queue, out sweepq.Outcome) error {
	groups := sweep.MeasuredGroups(out)
	var classes, hs []string
	for _, c := range out.Classes {
		classes = append(classes, className(c))
	}
	for _, h := range sortedKeys(out.Hosts) {
		hs = append(hs, fmt.Sprintf("%s (%s)", h, plural(out.Hosts[h], "point")))
	}
	fmt.Fprintf(env.Out, "sweep %s: %d points on %s, hosts %s\n", out.Label, len(out.Points), strings.Join(classes, ", "), strings.Join(hs, ", "))
	if len(groups) > 0 {
		cmp, err := sweep.Compare(ctx, q.Store, groups)
		if err != nil {
			return err
		}
		if err := render.CompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == ""); err != nil {
			return err
		}
	}
	return out.Err()
}

// queueResults is the results store of --results (resultsPath), refused unless it is a
// PostgreSQL one: the queue lives there.
func queueResults(flag string, env Env) (string, error) {
	path, err := resultsPath(flag, env)
	if err != nil {
		return "", badInput(err)
	}
	if !store.IsPostgres(path) {
		return "", badInput(errors.New("--results: the queue lives in a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)"))
	}
	return path, nil
}

// openQueue opens the results store at path and its queue (sweepq.Open).
func openQueue(ctx context.Context, path string) (*fleet.Fleet, *store.Store, error) {
	q, err := sweepq.Open(ctx, path)
	if err != nil {
		return nil, nil, badInput(err)
	}
	return q.Fleet, q.Store, nil
}
