package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/store"
)

// newAgentCmd is `dbperf agent`: a long-running process per host that takes one queued job
// at a time from the PostgreSQL results store and runs it as the CLI would.
func newAgentCmd(env Env) *cobra.Command {
	var results, class, host string
	var lease, heartbeat, stopTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Take queued jobs from the PostgreSQL results store and run them, one at a time",
		Long: `Run as this host's agent of a benchmark fleet: take one job at a time from the queue in
the PostgreSQL results store (dbperf run … --queue, dbperf sweep … --queue), run it as
the command line would (dbperf itself, in a process of its own, its results into the same
store), and heartbeat. --class routes jobs: an agent takes only its class's jobs (those
queued with the same --class; without one, those queued without one).

A job whose agent stops beating (killed, host gone) is taken by another agent once its
lease has run out (--lease, plus up to 30 s); the run the dead agent left half written is
then marked failed. SIGTERM or Ctrl-C stops the current command cleanly (its run is kept,
marked interrupted), puts its job back in the queue and exits.

The store's DSN comes from --results (or @FILE, or DBPERF_RESULTS) and reaches the
commands through their environment, never their command line. With @FILE the agent
follows the store: when the store stops answering, the agent reads FILE again, and when
it holds another DSN (a store restarted by "dbperf server start" has a new port and
password, written to the same file) the agent starts again on it.`,
		Example: `  dbperf agent --results @/etc/dbperf/store.dsn --class c8r32
  dbperf agent --results postgres://dbperf@lab-db/results --lease 1m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := resultsPath(results, env)
			if err != nil {
				return badInput(err)
			}
			var errs []error
			if !store.IsPostgres(path) {
				errs = append(errs, errors.New("--results: an agent takes jobs from a PostgreSQL results store: give --results postgres://… (or @FILE, or DBPERF_RESULTS)"))
			}
			if err := fleet.CheckClass(class); err != nil {
				errs = append(errs, fmt.Errorf("--class: %w", err))
			}
			if heartbeat == 0 {
				heartbeat = max(lease/6, 500*time.Millisecond)
			}
			if lease < 2*time.Second || heartbeat <= 0 || heartbeat >= lease {
				errs = append(errs, fmt.Errorf("--lease %s --heartbeat %s: give a lease of 2s or more and a heartbeat shorter than it, e.g. --lease 30s --heartbeat 5s", lease, heartbeat))
			}
			if host == "" {
				if host, err = os.Hostname(); err != nil {
					errs = append(errs, fmt.Errorf("--host: this machine has no name (%v): give --host", err))
				}
			}
			if len(errs) > 0 {
				return badInput(errors.Join(errs...))
			}
			from := results
			if from == "" {
				from = env.getenv("DBPERF_RESULTS")
			}
			return fleet.Follow(cmd.Context(), fleet.FollowOptions{
				Agent:   fleet.AgentConfig{Host: host, Class: class, Lease: lease, Heartbeat: heartbeat, StopTimeout: stopTimeout, Log: env.Err},
				Command: fleet.CommandOptions{ExitStepFailed: ExitStepFailed, ExitBadInput: ExitBadInput, SpillFiles: spillFiles},
				Path:    path, Reread: func() (string, error) { return resultsPath(results, env) }, Follows: strings.HasPrefix(from, "@")})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&results, "results", "", resultsUsage)
	fl.StringVar(&class, "class", "", "this host's class: take only the jobs queued with --class CLASS, e.g. c8r32 (default: jobs queued without one)")
	fl.StringVar(&host, "host", "", "this host's name in the queue (default: the machine's hostname)")
	fl.DurationVar(&lease, "lease", 30*time.Second, "how long a job outlives this agent's last heartbeat before another agent may take it (plus up to 30 s)")
	fl.DurationVar(&heartbeat, "heartbeat", 0, "how often the agent beats (default: a sixth of --lease, at least 500ms)")
	fl.DurationVar(&stopTimeout, "stop-timeout", 2*time.Minute, "on SIGTERM, how long the current command may take to stop cleanly (its servers shut down) before it is killed")
	return cmd
}

// spillFiles are the spill files the process pid left in the spill dir of the
// environment getenv reads (record.SpillDir): an agent's job's, which it reports.
func spillFiles(getenv func(string) string, pid int) []string {
	files, _ := record.SpillFiles(record.SpillDir(getenv), pid)
	return files
}
