package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
			cfg := fleet.AgentConfig{Host: host, Class: class, Lease: lease, Heartbeat: heartbeat, StopTimeout: stopTimeout, Log: env.Err}
			return followStore(cmd.Context(), env, results, path, cfg)
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

// followStore runs the agent on the store at path (the DSN results names) until ctx ends.
// Where results is @FILE (or DBPERF_RESULTS is), a watcher pings the store every
// heartbeat; once it has not answered for a lease, FILE is read again, and a DSN other
// than the agent's stops the agent (its job, if any, is requeued as on SIGTERM) and
// starts it again on the new store, retried until it answers (issue 40: agents retried a
// restarted store's old DSN forever). Without @FILE, a store silent for a minute gets
// one line saying how to let the agent follow it.
func followStore(ctx context.Context, env Env, results, path string, cfg fleet.AgentConfig) error {
	first, said := true, ""
	wait := func() bool { // a lease, or false when ctx ends first
		select {
		case <-ctx.Done():
			return false
		case <-time.After(cfg.Lease):
			return true
		}
	}
	for {
		f, st, err := openQueue(ctx, path)
		if err != nil {
			if first {
				return err
			}
			// The store moved but does not answer yet: try again every lease, saying
			// each new reason once.
			if err.Error() != said {
				said = err.Error()
				fmt.Fprintf(env.Err, "agent: the results store at %s does not answer yet (tried again every %s): %v\n", RedactDSN(path), cfg.Lease, err)
			}
			if !wait() {
				return nil
			}
			if p, err := resultsPath(results, env); err == nil {
				path = p
			}
			continue
		}
		following := !first
		first = false
		actx, cancel := context.WithCancel(ctx)
		moved := make(chan string, 1)
		go watchStore(actx, env, results, path, f, cfg, func(p string) { moved <- p; cancel() })
		run := cfg
		run.Run = func(ctx context.Context, a fleet.Attempt) (fleet.Ended, error) {
			return runJob(ctx, env, path, st, a, cfg.StopTimeout)
		}
		_, err = f.RunAgent(actx, run)
		cancel()
		st.Close()
		f.Close()
		select {
		case p := <-moved:
			fmt.Fprintf(env.Err, "agent: the results store moved: starting again on %s\n", RedactDSN(p))
			path = p
			continue
		default:
		}
		// A store just moved may answer the ping of openQueue and still refuse the
		// agent's registration or start once ("connection reset by peer"): try again.
		var se *fleet.StartError
		if following && errors.As(err, &se) && ctx.Err() == nil {
			fmt.Fprintf(env.Err, "agent: the results store at %s does not take the agent yet (tried again every %s): %v\n", RedactDSN(path), cfg.Lease, err)
			if !wait() {
				return nil
			}
			continue
		}
		return err
	}
}

// watchStore pings the agent's store every heartbeat until ctx ends, and calls moved with
// the new DSN when the store has not answered for a lease and results (@FILE) now names
// another one (see followStore).
func watchStore(ctx context.Context, env Env, results, path string, f *fleet.Fleet, cfg fleet.AgentConfig, moved func(string)) {
	from := results
	if from == "" {
		from = env.getenv("DBPERF_RESULTS")
	}
	follows := strings.HasPrefix(from, "@")
	t := time.NewTicker(cfg.Heartbeat)
	defer t.Stop()
	lastOK, hinted := time.Now(), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.Heartbeat)
		err := f.Ping(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			lastOK = time.Now()
			continue
		}
		down := time.Since(lastOK)
		switch {
		case follows && down >= cfg.Lease:
			if p, err := resultsPath(results, env); err == nil && p != path {
				moved(p)
				return
			}
		case !follows && down >= time.Minute && !hinted:
			hinted = true
			fmt.Fprintf(env.Err, "agent: the results store has not answered for %s (%v): if it moved, start the agent with --results @FILE (read again while the store does not answer)\n", down.Round(time.Second), err)
		}
	}
}

// runJob runs an attempt's command: dbperf itself with the job's arguments, the store's
// DSN and the job's identity in its environment. A later attempt first marks the runs
// earlier ones left unfinished failed.
func runJob(ctx context.Context, env Env, results string, st *store.Store, a fleet.Attempt, stopTimeout time.Duration) (fleet.Ended, error) {
	if a.Job.Attempt > 1 {
		why := fmt.Sprintf("its agent stopped before it finished: job %d was taken again (attempt %d, agent %s)", a.Job.ID, a.Job.Attempt, a.AgentID)
		ids, err := st.FailJobRuns(ctx, a.Job.ID, a.Job.Attempt, why, time.Now())
		if err != nil {
			return fleet.Ended{Outcome: fleet.Interrupted}, err
		}
		for _, id := range ids {
			fmt.Fprintf(env.Err, "agent %s: run %d of job %d's earlier attempt marked failed\n", a.AgentID, id, a.Job.ID)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return fleet.Ended{Outcome: fleet.Interrupted}, fmt.Errorf("agent: find dbperf's own binary: %w", err)
	}
	cmd := exec.Command(bin, append(append([]string(nil), a.Job.Args.Argv...), "--quiet")...)
	cmd.Env = append(jobEnviron(), "DBPERF_RESULTS="+results,
		fleet.EnvJob+"="+strconv.FormatInt(a.Job.ID, 10), fleet.EnvAttempt+"="+strconv.Itoa(a.Job.Attempt),
		fleet.EnvAgent+"="+a.AgentID, fleet.EnvAgentClass+"="+a.Class, fleet.EnvAgentHost+"="+a.Host)
	cmd.Stdout, cmd.Stderr = env.Err, env.Err
	// The command dies with the agent (SIGTERM: it stops cleanly, shutting down its
	// servers); Pdeathsig is per thread, so the thread that starts it stays its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	type result struct{ err error }
	started := make(chan error, 1)
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- result{cmd.Wait()}
	}()
	if err := <-started; err != nil {
		return fleet.Ended{Outcome: fleet.Interrupted}, fmt.Errorf("agent: start dbperf: %w", err)
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case res = <-done:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			res = <-done
		}
		spills, _ := record.SpillFiles(record.SpillDir(environ(cmd.Env)), cmd.Process.Pid)
		return fleet.Ended{Outcome: fleet.Interrupted, Spills: spills}, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	// What the command measured when its store failed is only in its spill files.
	spills, _ := record.SpillFiles(record.SpillDir(environ(cmd.Env)), cmd.Process.Pid)
	var ee *exec.ExitError
	switch {
	case res.err == nil:
		return fleet.Ended{Outcome: fleet.Done, Spills: spills}, nil
	case errors.As(res.err, &ee) && ee.ExitCode() == ExitStepFailed:
		return fleet.Ended{Outcome: fleet.Done, Spills: spills}, nil // a failed step is a result: the run is stored, the job done
	case errors.As(res.err, &ee) && ee.ExitCode() == ExitBadInput:
		return fleet.Ended{Outcome: fleet.Refused}, errors.New("dbperf refused the job's arguments (exit status 2; its line is in the agent's log)")
	default:
		return fleet.Ended{Outcome: fleet.Interrupted, Spills: spills}, fmt.Errorf("dbperf %s: %w", fleet.ShortArgv(a.Job.Args.Argv, 80), res.err)
	}
}

// jobEnviron is the agent's environment for a job's command, without what the agent sets
// itself.
func jobEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DBPERF_RESULTS", fleet.EnvJob, fleet.EnvAttempt, fleet.EnvAgent, fleet.EnvAgentClass, fleet.EnvAgentHost:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// environ is the getenv of an environment list (KEY=VALUE, the last of a key winning).
func environ(kv []string) func(string) string {
	return func(k string) string {
		v := ""
		for _, e := range kv {
			if key, val, ok := strings.Cut(e, "="); ok && key == k {
				v = val
			}
		}
		return v
	}
}
