package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbperf/dbperf/internal/store"
)

// FollowOptions are an agent that follows its store (dbperf agent, Follow).
type FollowOptions struct {
	// Agent is the agent; its Run is set for each store (RunCommand with Command).
	Agent AgentConfig
	// Command is how a job's command runs; Follow sets its Results and Store for each
	// store, its StopTimeout to the Agent's, and its Out, when nil, to the Agent's Log.
	Command CommandOptions
	// Path is the store's DSN to start on.
	Path string
	// Reread reads the store's DSN again from where Path came from (@FILE, or the
	// environment); Follows says it is a file (@FILE), which may name another store once
	// the store stops answering.
	Reread  func() (string, error)
	Follows bool
}

// OpenError is Follow's error when the store could not be opened at the start: the DSN
// given is the user's to fix.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// OpenStore opens the results store at path, creating dbperf's schema first (a store
// whose database holds only river's tables would not be taken for one), then its queue.
func OpenStore(ctx context.Context, path string) (*Fleet, *store.Store, error) {
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	f, err := Open(ctx, path)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// Follow runs the agent on the store at o.Path until ctx ends. Where the DSN comes from
// @FILE (o.Follows), a watcher pings the store every heartbeat; once it has not answered
// for a lease, FILE is read again, and a DSN other than the agent's stops the agent (its
// job, if any, is requeued as on SIGTERM) and starts it again on the new store, retried
// until it answers (issue 40: agents retried a restarted store's old DSN forever).
// Without @FILE, a store silent for a minute gets one line saying how to let the agent
// follow it. A store that cannot be opened at the start is an *OpenError.
func Follow(ctx context.Context, o FollowOptions) error {
	cfg, path := o.Agent, o.Path
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
		f, st, err := OpenStore(ctx, path)
		if err != nil {
			if first {
				return &OpenError{Err: err}
			}
			// The store moved but does not answer yet: try again every lease, saying
			// each new reason once.
			if err.Error() != said {
				said = err.Error()
				fmt.Fprintf(cfg.Log, "agent: the results store at %s does not answer yet (tried again every %s): %v\n", store.RedactDSN(path), cfg.Lease, err)
			}
			if !wait() {
				return nil
			}
			if p, err := o.Reread(); err == nil {
				path = p
			}
			continue
		}
		following := !first
		first = false
		moved, err := o.runOn(ctx, path, f, st)
		if moved != "" {
			fmt.Fprintf(cfg.Log, "agent: the results store moved: starting again on %s\n", store.RedactDSN(moved))
			path = moved
			continue
		}
		// A store just moved may answer the ping of OpenStore and still refuse the
		// agent's registration or start once ("connection reset by peer"): try again.
		var se *StartError
		if following && errors.As(err, &se) && ctx.Err() == nil {
			fmt.Fprintf(cfg.Log, "agent: the results store at %s does not take the agent yet (tried again every %s): %v\n", store.RedactDSN(path), cfg.Lease, err)
			if !wait() {
				return nil
			}
			continue
		}
		return err
	}
}

// runOn runs the agent on the open store at path until ctx ends or the store moved (a
// watcher's finding, see Follow): moved is then the new DSN. It closes f and st.
func (o FollowOptions) runOn(ctx context.Context, path string, f *Fleet, st *store.Store) (moved string, err error) {
	actx, cancel := context.WithCancel(ctx)
	movedTo := make(chan string, 1)
	go o.watch(actx, path, f, func(p string) { movedTo <- p; cancel() })
	run := o.Agent
	c := o.Command
	c.Results, c.Store, c.StopTimeout = path, st, o.Agent.StopTimeout
	if c.Out == nil {
		c.Out = o.Agent.Log
	}
	run.Run = func(ctx context.Context, a Attempt) (Ended, error) { return RunCommand(ctx, c, a) }
	_, err = f.RunAgent(actx, run)
	cancel()
	st.Close()
	f.Close()
	select {
	case p := <-movedTo:
		return p, err
	default:
		return "", err
	}
}

// watch pings the agent's store every heartbeat until ctx ends, and calls moved with the
// new DSN when the store has not answered for a lease and Reread (@FILE) now names
// another one (see Follow).
func (o FollowOptions) watch(ctx context.Context, path string, f *Fleet, moved func(string)) {
	cfg := o.Agent
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
		case o.Follows && down >= cfg.Lease:
			if p, err := o.Reread(); err == nil && p != path {
				moved(p)
				return
			}
		case !o.Follows && down >= time.Minute && !hinted:
			hinted = true
			fmt.Fprintf(cfg.Log, "agent: the results store has not answered for %s (%v): if it moved, start the agent with --results @FILE (read again while the store does not answer)\n", down.Round(time.Second), err)
		}
	}
}
