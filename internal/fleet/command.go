package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbperf/dbperf/internal/store"
)

// CommandOptions are how an agent runs a job's command (RunCommand): dbperf itself, in a
// process of its own, its results into the agent's store.
type CommandOptions struct {
	// Results is the store's DSN, which the command gets as DBPERF_RESULTS (never on its
	// command line); Store is that store, open (a later attempt marks the runs earlier
	// ones left unfinished failed in it).
	Results string
	Store   *store.Store
	// StopTimeout bounds how long the command may take to stop cleanly once the agent
	// stops it (SIGINT) before it is killed.
	StopTimeout time.Duration
	// Out gets the command's output and the agent's lines about it.
	Out io.Writer
	// ExitStepFailed is dbperf's exit status of a run whose step failed (a result: the
	// job is done); ExitBadInput that of arguments it refused (the job is refused).
	ExitStepFailed, ExitBadInput int
	// SpillFiles are the spill files the command's process pid left, by the environment
	// getenv reads (the command's): what it measured when its store failed is only there.
	SpillFiles func(getenv func(string) string, pid int) []string
}

// RunCommand runs an attempt's command: dbperf itself with the job's arguments, the
// store's DSN and the job's identity in its environment. A later attempt first marks the
// runs earlier ones left unfinished failed. It is an AgentConfig.Run.
func RunCommand(ctx context.Context, o CommandOptions, a Attempt) (Ended, error) {
	if a.Job.Attempt > 1 {
		why := fmt.Sprintf("its agent stopped before it finished: job %d was taken again (attempt %d, agent %s)", a.Job.ID, a.Job.Attempt, a.AgentID)
		ids, err := o.Store.FailJobRuns(ctx, a.Job.ID, a.Job.Attempt, why, time.Now())
		if err != nil {
			return Ended{Outcome: Interrupted}, err
		}
		for _, id := range ids {
			fmt.Fprintf(o.Out, "agent %s: run %d of job %d's earlier attempt marked failed\n", a.AgentID, id, a.Job.ID)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return Ended{Outcome: Interrupted}, fmt.Errorf("agent: find dbperf's own binary: %w", err)
	}
	cmd := exec.Command(bin, append(append([]string(nil), a.Job.Args.Argv...), "--quiet")...)
	cmd.Env = append(jobEnviron(), "DBPERF_RESULTS="+o.Results,
		EnvJob+"="+strconv.FormatInt(a.Job.ID, 10), EnvAttempt+"="+strconv.Itoa(a.Job.Attempt),
		EnvAgent+"="+a.AgentID, EnvAgentClass+"="+a.Class, EnvAgentHost+"="+a.Host)
	cmd.Stdout, cmd.Stderr = o.Out, o.Out
	res, stopped, err := runStoppable(ctx, cmd, o.StopTimeout)
	if err != nil {
		return Ended{Outcome: Interrupted}, fmt.Errorf("agent: start dbperf: %w", err)
	}
	// What the command measured when its store failed is only in its spill files.
	spills := o.SpillFiles(environ(cmd.Env), cmd.Process.Pid)
	if stopped {
		return Ended{Outcome: Interrupted, Spills: spills}, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}
	var ee *exec.ExitError
	switch {
	case res == nil:
		return Ended{Outcome: Done, Spills: spills}, nil
	case errors.As(res, &ee) && ee.ExitCode() == o.ExitStepFailed:
		return Ended{Outcome: Done, Spills: spills}, nil // a failed step is a result: the run is stored, the job done
	case errors.As(res, &ee) && ee.ExitCode() == o.ExitBadInput:
		return Ended{Outcome: Refused}, errors.New("dbperf refused the job's arguments (exit status 2; its line is in the agent's log)")
	default:
		return Ended{Outcome: Interrupted, Spills: spills}, fmt.Errorf("dbperf %s: %w", ShortArgv(a.Job.Args.Argv, 80), res)
	}
}

// runStoppable starts cmd and waits for it: res is its Wait's error. When ctx ends first
// the command is interrupted (SIGINT: it stops cleanly, shutting down its servers), and
// killed after stopTimeout; stopped then says so. err is the start's error.
func runStoppable(ctx context.Context, cmd *exec.Cmd, stopTimeout time.Duration) (res error, stopped bool, err error) {
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
		return nil, false, err
	}
	select {
	case r := <-done:
		return r.err, false, nil
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case r := <-done:
			return r.err, true, nil
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			r := <-done
			return r.err, true, nil
		}
	}
}

// jobEnviron is the agent's environment for a job's command, without what the agent sets
// itself.
func jobEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DBPERF_RESULTS", EnvJob, EnvAttempt, EnvAgent, EnvAgentClass, EnvAgentHost:
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
