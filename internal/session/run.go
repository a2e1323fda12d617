package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/cluster"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/profile"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// Run runs the planned steps once: engine (and managed server) up, every step stored as
// it goes, the report printed (Options.Report), everything shut down. It returns the
// run's id and status; its error is a *StepFailedError for a failed step, else the
// environment's (a *BadInputError) or the store's.
func Run(ctx context.Context, o Options, steps []workload.Step) (int64, string, error) {
	cfg := o.Config
	// --cpu-profile: the run's perf is launched, sampling, before the server starts, so it
	// follows the server's processes from their fork (probe.CPUProfiler's comment says why).
	cpuOpts := CPUOptions(cfg)
	perfRec, perfErr := probe.Launch(ctx, cpuOpts)
	defer func() {
		if perfRec != nil {
			_ = perfRec.Close()
		}
	}()
	ot, err := Open(ctx, o)
	if err != nil {
		return 0, "", err
	}
	defer ot.Close()
	// From here on everything is written, also after Ctrl-C (record.Run: the store's
	// writes survive it by storeGrace).
	if note := probe.CPUNote(cpuOpts); note != "" {
		ot.Env[probe.EnvCPU] = note
	}
	if ps, err := parts.Parse(cfg.Part); err == nil {
		ps.SetEnv(ot.Env)
	}
	dc := OpenExplain(ctx, o, ot)
	if dc != nil {
		defer dc.Close()
	}
	rec, err := record.Begin(ctx, o.Store, ot.Meta(cfg, o.Workload, o.Params.Stored(), steps, nil), o.Record)
	if err != nil {
		return 0, "", badInput(err)
	}
	run := ot.Runner(cfg)
	var profs probe.Set
	if cfg.Part != "" {
		// A part of a run over several agents: every step's load starts when all parts
		// have reached it (first, before any profile starts).
		b, err := openPartBarrier(ctx, cfg)
		if err != nil {
			return rec.ID(), "", err
		}
		defer b.Close()
		profs.Add(parts.BarrierName, b)
	}
	var cpuProf *probe.CPU
	if cfg.CPUProfileDir != "" {
		if cpuProf = attachCPUProfile(o, cpuOpts, perfRec, perfErr, ot, run, rec, &profs); cpuProf != nil {
			perfRec = nil // the profiles' now
			defer cpuProf.Close()
		}
	}
	attachExplain(dc, run, rec, &profs)
	attachCluster(ot.Cluster, rec, &profs)
	if profs.Len() > 0 {
		run.Profiler = &profs
	}
	return finish(ctx, o, ot, rec, run, ot.Cluster.Wrap(steps), cpuProf)
}

// finish runs the steps on the begun run, stores the CPU profiles and the run's end, and
// prints its report.
func finish(ctx context.Context, o Options, ot *Target, rec *record.Run, run *runner.Runner, steps []workload.Step, cpuProf *probe.CPU) (int64, string, error) {
	prog := progress.New(o.Out, o.IsTerminal, o.Config.Quiet)
	// The steps in order, a failed or interrupted one's followers stored skipped
	// (runner.Sequence); a store that fails ends the run at once.
	if res := rec.Steps.Run(ctx, run, steps, rec.Sink(o.Err, prog)); res.SinkErr != nil {
		return rec.ID(), "", res.SinkErr
	}
	if err := rec.StoreCPUProfiles(ctx, o.Err, cpuProf); err != nil {
		return rec.ID(), "", err
	}
	if err := rec.Finish(); err != nil {
		return rec.ID(), "", err
	}
	if !o.Config.Quiet && o.Report != nil {
		if err := o.Report(ctx, o.Config, rec.ID(), ot.Dir); err != nil {
			return rec.ID(), "", err
		}
	}
	return rec.ID(), rec.Status(), Failure(rec)
}

// CPUOptions are a run's --cpu-profile settings for the probe package.
func CPUOptions(cfg *config.Run) probe.CPUOptions {
	return probe.CPUOptions{Dir: cfg.CPUProfileDir, Hz: cfg.CPUProfileHz, CallGraph: cfg.CPUProfileCallGraph,
		StackCopy: stackCopy(cfg), Off: cfg.CPUProfileOff}
}

// stackCopy is cfg's engine's engine.Meta.StackCopy (0 for an engine the catalog lacks).
func stackCopy(cfg *config.Run) int {
	e, err := catalog.Engine(cfg.Engine, catalog.EngineOptions{StorageEngine: cfg.StorageEngine})
	if err != nil {
		return 0
	}
	return e.Meta().StackCopy
}

// OpenExplain opens the target's statement and wait collector for --explain and records
// in the run's env what it gives (nil without --explain or where the engine has none;
// the reason is said once on o.Err and kept in env).
func OpenExplain(ctx context.Context, o Options, ot *Target) *probe.Explain {
	if !o.Config.Explain {
		return nil
	}
	dc, note := probe.OpenExplain(ctx, ot.Handle, ot.eng.Meta().Name, probe.ExplainOptions{Enable: o.Config.Managed, Warn: o.Err})
	ot.Env[probe.EnvExplain] = note
	return dc
}

// attachCPUProfile makes the run's CPU profiler from its perf recording (launched before
// the server started) and adds it to profs; nil, said once on stderr, when perf could not
// record.
func attachCPUProfile(o Options, opts probe.CPUOptions, perfRec *profile.Recording, perfErr error, ot *Target, run *runner.Runner,
	rec *record.Run, profs *probe.Set) *probe.CPU {
	err := perfErr
	var cpuProf *probe.CPU
	if err == nil {
		cpuProf, err = probe.NewCPU(opts, perfRec)
	}
	if err != nil {
		fmt.Fprintf(o.Err, "dbperf: no CPU profiles: %v\n", err)
		return nil
	}
	prof := cpuProf.Profiler(ot.HW.ServerPID, run.Handle)
	prof.SetRun(rec.ID())
	profs.Add("cpu profile", prof)
	return cpuProf
}

// attachExplain adds --explain's collector to profs and its statements to the record;
// nothing without one.
func attachExplain(dc *probe.Explain, run *runner.Runner, rec *record.Run, profs *probe.Set) {
	if dc == nil {
		return
	}
	profs.Add("explain", dc)
	rec.Diag = dc.Take
	pi, ok := run.Handle.(engine.ProcessInfo)
	profs.Extra = append(profs.Extra, dc.Session(ok && pi.Local()))
}

// attachCluster hooks the cluster cr into a run: its sampling around every step's load
// and its figures into every step's metrics. Nothing without a cluster.
func attachCluster(cr *cluster.Run, rec *record.Run, profs *probe.Set) {
	if cr == nil {
		return
	}
	profs.Add("cluster", cr)
	rec.StepMetrics = cr.StepFigures
}

// openPartBarrier opens the queue of cfg's store for a part's barrier.
func openPartBarrier(ctx context.Context, cfg *config.Run) (*parts.Barrier, error) {
	ps, err := parts.Parse(cfg.Part)
	if err != nil {
		return nil, badInput(err)
	}
	if !store.IsPostgres(cfg.ResultsPath) {
		return nil, badInput(errors.New("--part: a part's barrier lives in a PostgreSQL results store"))
	}
	b, err := parts.OpenBarrier(ctx, cfg.ResultsPath, ps)
	if err != nil {
		// The store did not answer (down, too many clients): the part failed, its input
		// was fine; exit 1, so an agent records the job failed and retries it rather than
		// refused.
		return nil, &StepFailedError{Err: err}
	}
	return b, nil
}

// PrepareCPUProfile readies --cpu-profile DIR for the runs of one command (run, or every
// point of a sweep): the directory made, the sampling rate read (getenv:
// DBPERF_CPU_PROFILE_HZ, DBPERF_CPU_PROFILE_CALLGRAPH), and perf checked once. Without
// perf the runs go on without profiles, the reason said once on warn and kept in every
// run's env (cpu_profile). Its errors are *BadInputError.
func PrepareCPUProfile(ctx context.Context, cfg *config.Run, getenv func(string) string, warn io.Writer) error {
	if cfg.CPUProfileDir == "" {
		return nil
	}
	if err := os.MkdirAll(cfg.CPUProfileDir, 0o755); err != nil {
		return badInput(fmt.Errorf("--cpu-profile: %w", err))
	}
	hz, err := probe.ParseHz(getenv("DBPERF_CPU_PROFILE_HZ"))
	if err != nil {
		return badInput(err)
	}
	cfg.CPUProfileHz = hz
	if cfg.CPUProfileCallGraph, err = probe.ParseCallGraph(getenv("DBPERF_CPU_PROFILE_CALLGRAPH"), stackCopy(cfg)); err != nil {
		return badInput(err)
	}
	if err := profile.Available(ctx); err != nil {
		fmt.Fprintf(warn, "dbperf: --cpu-profile: no CPU profiles: %v\n", err)
		cfg.CPUProfileDir, cfg.CPUProfileOff = "", err.Error()
	}
	return nil
}
