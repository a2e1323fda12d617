// Package session runs a workload on one target and keeps the record: the target opened
// (Open: a work dir, a managed server or cluster, or the user's server; the HW targets and
// the run's env read once), the run begun in the store (record.Begin), the probes
// attached (--cpu-profile, --explain, a cluster's, a part's barrier), every step run in
// order (runner.Sequence over the record's StepSink) and the run finished. Run is one run
// of planned steps; Repeat runs --repeat of them, each planned afresh.
//
// The command line builds an Options once and maps the errors to exit statuses: a
// *BadInputError (the input or the environment refused the run), an *InterruptedError
// (Ctrl-C), a *StepFailedError (a step failed; the run is stored), and the record's
// *record.StoreFailedError.
//
// Which processes are "the server" and which disks hold the data are decided once per
// target (HWTargets) and handed to the runner as runner.HWTargets: a managed server's
// pid, or a --dsn server on this machine found from the socket its engine.ServerAddr
// names, else from one session's backend pid or thread id. What could not be seen is
// written into the run's env (server_processes, io_devices, io_devices_note).
//
// Before anything starts, CheckTarget says what keeps a configuration from reaching its
// engine, and ReadKVProfile reads a key-value engine's profile into it (check.go). StartShared starts the server the parts of a run over several agents
// share (shared.go; the parts themselves are package parts').
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// Options are what a session runs: the configuration, the workload and the engine, the
// store it records in, and where it says what it does.
type Options struct {
	Config   *config.Run
	Workload workload.Workload
	Params   workload.Params
	Engine   engine.Engine
	Store    *store.Store
	// Record is how the runs write to the store (--store-timeout, the spill dir).
	Record record.Options
	// Out is the progress and the runs' reports, Err the warnings; IsTerminal says Out is
	// a terminal (the live line).
	Out, Err   io.Writer
	IsTerminal bool
	// Version and Commit identify dbperf in every run's env; Getenv reads the
	// environment (nil: nothing).
	Version, Commit string
	Getenv          func(string) string
	// ReadCgroups reads the machine's cgroup hierarchies for a managed server's limits
	// (nil: server.ReadCgroups).
	ReadCgroups func() (*server.Cgroups, error)
	// Report prints the report of stored run id of cfg, whose engine files are in dir
	// (nil: none); called after each run unless cfg.Quiet.
	Report func(ctx context.Context, cfg *config.Run, id int64, dir string) error
	// copyOf is the managed server a managed target starts from a copy of (CopyOf).
	copyOf *server.Instance
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// With is o for another configuration (a sweep's point).
func (o Options) With(cfg *config.Run) Options {
	o.Config = cfg
	return o
}

// CopyOf is o for a managed target whose server starts from a physical copy of t's
// managed server's data (server.Options.CopyOf), running or shut down cleanly
// (Target.StopServer); Open refuses it when t has none (an embedded engine, a user's
// server, a cluster).
func (o Options) CopyOf(t *Target) (Options, error) {
	if t == nil || t.server == nil || !o.Config.Managed || o.Config.Cluster > 1 {
		return o, fmt.Errorf("a copy of the data needs one managed server per point, started by dbperf (--managed, no --cluster)")
	}
	o.copyOf = t.server
	return o, nil
}

// A BadInputError is a run refused before it began: the user's input or the environment
// (a server that does not start, more clients than the engine accepts).
type BadInputError struct{ Err error }

func (e *BadInputError) Error() string { return e.Err.Error() }
func (e *BadInputError) Unwrap() error { return e.Err }

// An InterruptedError is a run or sweep that Ctrl-C (or SIGTERM) ended; what was measured
// is kept.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// A StepFailedError is a run that failed (exit 1): it finished, stored, with a failed
// step, or what its steps need did not answer (a part's barrier store).
type StepFailedError struct{ Err error }

func (e *StepFailedError) Error() string { return e.Err.Error() }
func (e *StepFailedError) Unwrap() error { return e.Err }

// badInput marks err as a *BadInputError.
func badInput(err error) error { return &BadInputError{Err: err} }

// BadInput marks err as a *BadInputError (for the packages that build on a session).
func BadInput(err error) error { return badInput(err) }

// Interrupted is the error that says what an interruption kept, and true, when err is an
// *InterruptedError or a *record.StoreFailedError of an interrupted run.
func Interrupted(err error) (error, bool) {
	var ie *InterruptedError
	if errors.As(err, &ie) {
		return ie.Err, true
	}
	var sf *record.StoreFailedError
	if errors.As(err, &sf) && sf.Interrupted {
		return sf, true
	}
	return nil, false
}

// Failure is the error of a finished run with a failed step (nil otherwise).
func Failure(rec *record.Run) error {
	if rec.Status() == store.RunFailed {
		return &StepFailedError{Err: fmt.Errorf("run %d: %s", rec.ID(), rec.Steps.Err())}
	}
	return nil
}

// Repeat runs the workload n times, each run planned afresh (steps carry state:
// counters, estimates). It returns the stored runs' ids and the error of the last run
// with a failed step (the next repeat still runs: a failed step is a result); err is an
// interruption or a failure of the environment or the store, which ends the repeats.
func Repeat(ctx context.Context, o Options, n int) (ids []int64, lastFailed, err error) {
	cfg := o.Config
	for i := range n {
		if n > 1 && !cfg.Quiet {
			fmt.Fprintf(o.Out, "repeat %d of %d, label %s\n", i+1, n, report.Printable(cfg.Label))
		}
		steps, err := o.Workload.Plan(cfg, o.Params)
		if err != nil {
			return ids, lastFailed, badInput(err)
		}
		runID, status, err := Run(ctx, o, steps)
		if runID != 0 {
			ids = append(ids, runID)
		}
		var failed *StepFailedError
		switch {
		case status == store.RunFailed && errors.As(err, &failed):
			lastFailed = err
		case err != nil:
			return ids, lastFailed, err
		case status == store.RunInterrupted:
			return ids, lastFailed, &InterruptedError{Err: fmt.Errorf("interrupted: run %d keeps every step and interval measured so far", runID)}
		}
	}
	return ids, lastFailed, nil
}

// EngineLabel names the engine in the store: an engine's storage engines are told apart
// ("mariadb/innodb", "mariadb/rocksdb": engine.Meta.StorageEngines, the default first) so
// runs and reports never mix them up.
func EngineLabel(cfg *config.Run) string {
	e, err := catalog.Engine(cfg.Engine, catalog.EngineOptions{StorageEngine: cfg.StorageEngine})
	if err != nil || len(e.Meta().StorageEngines) == 0 {
		return cfg.Engine
	}
	se := cfg.StorageEngine
	if se == "" {
		se = e.Meta().StorageEngines[0]
	}
	return cfg.Engine + "/" + se
}

// storeGroups converts the workload's step groups for the store (which imports no workload).
func storeGroups(gs []workload.StepGroup) []store.StepGroup {
	out := make([]store.StepGroup, len(gs))
	for i, g := range gs {
		out[i] = store.StepGroup{Name: g.Name, Title: g.Title}
		for _, f := range g.PerMinute {
			out[i].PerMinute = append(out[i].PerMinute, store.PerMinute{Name: f.Name, Title: f.Title, Labels: f.Labels})
		}
	}
	return out
}

// StoredParams are the run's effective parameters, stored with it: the shared ones and
// the workload's own.
func StoredParams(cfg *config.Run, wlStored map[string]any, steps []workload.Step) map[string]any {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name()
	}
	p := make(map[string]any, len(wlStored)+10)
	maps.Copy(p, wlStored)
	maps.Copy(p, map[string]any{
		"managed":             cfg.Managed,
		"profile":             cfg.Profile,
		"storage_engine":      cfg.StorageEngine,
		"engine_version":      cfg.EngineVersion,
		"steps":               names,
		"clients":             cfg.Clients,
		"repeat":              cfg.Repeat,
		"report_interval_sec": cfg.ReportInterval.Seconds(),
	})
	if cfg.Think > 0 {
		p["think_us"] = cfg.Think.Microseconds()
	}
	if cfg.NoDeepIdle {
		p["no_deep_idle"] = true
	}
	return p
}
