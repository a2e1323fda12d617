package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/parts"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/profile"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// DefaultSeed is the reference client's default seed (reference §1.4).
const DefaultSeed = 3221223452

// runFlags are the flags every workload shares; each workload's own are its Params'.
type runFlags struct {
	engine         string
	scale          string
	clients        int
	timeSec        float64
	steps          []string
	seed           int64
	label          string
	buildID        string
	results        string
	quiet          bool
	reportInterval float64
	workdir        string
	keep           bool
	managed        bool
	dsn            string
	engineVersion  string
	profile        string
	profilesDir    string
	cacheDir       string
	mavenURL       string
	storageEngine  string
	repeat         int
	storeTimeout   float64
	cpuProfile     string
	explain        bool
	limits         serverLimitFlags
	cluster        clusterFlags
	q              queueFlags
	// agents splits the run's clients over this many agents (--agents); part and
	// clientOffset make a run one of those parts (set by --agents, hidden).
	agents       int
	part         string
	clientOffset int
	// noDeepIdle holds the CPUs out of deep idle for the command (--no-deep-idle).
	noDeepIdle bool
}

// newRunCmd is `dbperf run`, with one subcommand per workload of the catalog: the shared
// flags (runFlags) and the workload's own (workload.Params.AddFlags).
func newRunCmd(env Env) *cobra.Command {
	var names, lines []string
	for _, w := range catalog.Workloads() {
		names = append(names, w.Meta().Name)
		lines = append(lines, fmt.Sprintf("  %-12s %s", w.Meta().Name, w.Meta().Summary))
	}
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload against an engine and store the results",
		Long: `Run a workload's steps against an engine, show progress on a terminal, store every
step and interval in the results store, and print the summary.

Workloads (dbperf run WORKLOAD --help for each one's flags):
` + strings.Join(lines, "\n") + `
Engines:   sqlite (embedded; data in --workdir, a fresh temporary directory by default),
           postgres and mariadb (--mysql-storage-engine innodb|rocksdb), each on a
           throwaway server (--managed) or on yours (--dsn); rocksdb and pebble
           (embedded key-value engines, for dbbench).

Exit status: 0 all steps ok, 1 a step failed (engine error or audit), 2 bad input,
130 interrupted (everything measured so far is kept).`,
		Example: `  dbperf run insertbench --scale tiny
  dbperf run insertbench --engine postgres --managed --engine-version 13 --profile cached
  dbperf run insertbench --engine mariadb --managed --mysql-storage-engine rocksdb
  dbperf run insertbench --engine postgres --managed --server-memory 256M --rows 4000000
  dbperf run insertbench --scale small --clients 4 --label four-clients
  dbperf run insertbench --scale tiny --steps l.i0,l.x,qp100 --repeat 5 --label a
  dbperf run insertbench --steps l.i0,l.x,qp100 --time 60 --rows-per-commit l.i0=1000`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("run needs one workload, e.g. \"dbperf run insertbench\": use one of %s", strings.Join(names, ", ")))
			}
			if _, err := catalog.Workload(args[0]); err != nil {
				return badInput(err)
			}
			return nil
		},
		// A workload's flags are its subcommand's: with an unknown workload they are unknown
		// too, and the workload is what to name (`run tpcc --scale tiny`).
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		// Reached only with a workload's name that no subcommand took: never, as Args
		// checks the name against the same catalog.
		RunE: func(cmd *cobra.Command, args []string) error {
			return badInput(fmt.Errorf("unknown workload %q", args[0]))
		},
	}
	for _, w := range catalog.Workloads() {
		c, f, _ := newWorkloadCmd(env, w)
		fl := c.Flags()
		fl.IntVar(&f.agents, "agents", 0, "split the clients over N idle agents of --class (dbperf agent), their steps' loads started together, their measurements merged into one run (needs a PostgreSQL results store; docs/fleet.md)")
		fl.StringVar(&f.part, "part", "", "KEY/I/N: this run is part I of N of a run over several agents (set by --agents)")
		fl.IntVar(&f.clientOffset, "client-offset", 0, "number this part's clients from N+1 (set by --agents)")
		_ = fl.MarkHidden("part")
		_ = fl.MarkHidden("client-offset")
		cmd.AddCommand(c)
	}
	return cmd
}

// newWorkloadCmd is `dbperf run <workload>`: the shared flags and the workload's own,
// which `dbperf sweep <workload>` reuses.
func newWorkloadCmd(env Env, wl workload.Workload) (*cobra.Command, *runFlags, workload.Params) {
	var f runFlags
	params := wl.NewParams()
	scales, defScale := params.Scales()
	name := wl.Meta().Name
	cmd := &cobra.Command{
		Use:   name,
		Short: wl.Meta().Summary,
		Long: fmt.Sprintf(`Run %s: %s.

Exit status: 0 all steps ok, 1 a step failed (engine error or audit), 2 bad input,
130 interrupted (everything measured so far is kept).`, name, wl.Meta().Summary),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return badInput(fmt.Errorf("run %s takes no arguments (got %q): every setting is a flag, see dbperf run %s --help", name, strings.Join(args, " "), name))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorkload(cmd.Context(), env, cmd, wl, params, &f)
		},
	}
	var ex []string
	for _, e := range wl.Meta().Examples {
		ex = append(ex, "  dbperf run "+name+" "+e)
	}
	cmd.Example = strings.Join(ex, "\n")
	engines, servers := kindEngines(wl.Meta().Kind)
	fl := cmd.Flags()
	fl.StringVar(&f.engine, "engine", engines[0], "engine to benchmark: "+strings.Join(engines, ", "))
	fl.StringVar(&f.scale, "scale", defScale, "size preset: "+strings.Join(scales, ", ")+" (docs/"+name+".md)")
	f.clients = 1
	fl.Var(&clientsValue{n: &f.clients, cmd: "dbperf run " + name}, "clients", "concurrent clients; each owns its tables and runs every step's actors on its own connections")
	fl.Float64Var(&f.timeSec, "time", 0, "seconds each timed step runs (default: the scale's)")
	fl.StringSliceVar(&f.steps, "steps", nil, "run only these steps, by name (default: all; see --help of the workload)")
	fl.Int64Var(&f.seed, "seed", DefaultSeed, "seed of all generated data and query parameters")
	fl.StringVar(&f.label, "label", "", "label stored with the run, to find and compare runs")
	fl.StringVar(&f.buildID, "build-id", "", "the engine's build or commit, stored with the run (env build_id): dbperf history shows it on the x-axis")
	fl.IntVar(&f.repeat, "repeat", 1, "run the workload N times (fresh database each time), stored as N runs with the same label (default label: engine and start time)")
	fl.StringVar(&f.results, "results", "", resultsUsage)
	fl.Float64Var(&f.storeTimeout, "store-timeout", record.DefaultTimeout.Seconds(), "seconds a write to the results store may keep failing (retried) before the run stops; its figures are then kept in a spill file for \"dbperf results copy\" (measuring never waits on the store)")
	fl.BoolVar(&f.quiet, "quiet", false, "print nothing but errors")
	fl.StringVar(&f.cpuProfile, "cpu-profile", "", "sample on-CPU call stacks with Linux perf during each step's timed load, folded per role: stored with the step in the results store (dbperf explain compares them) and written to DIR/run-<id>/<step>.<role>.folded (docs/profiles.md)")
	fl.BoolVar(&f.explain, "explain", false, "record per step the server's statement statistics (pg_stat_statements, performance_schema digests), each statement shape's plan and samples of every session's wait: stored with the step for dbperf explain (docs/profiles.md)")
	fl.Float64Var(&f.reportInterval, "report-interval", 0, "seconds per measurement interval (default: the scale's, 1 for tiny/small, 5 otherwise)")
	fl.StringVar(&f.workdir, "workdir", "", "directory for the engine's files, locked while the run uses it (default: a fresh temporary directory, removed after the run)")
	keepHelp := "keep the temporary work directory after the run"
	if servers {
		keepHelp = "keep the temporary work directory (and a managed server's data) after the run"
	}
	fl.BoolVar(&f.keep, "keep", false, keepHelp)
	fl.BoolVar(&f.managed, "managed", false, "start a throwaway server for --engine "+strings.ReplaceAll(serverNames(), " and ", "|")+" on 127.0.0.1, and stop it after the run")
	fl.StringVar(&f.dsn, "dsn", "", "use your running server: postgres://user[:pass]@host:port/db or mysql://user[:pass]@tcp(host:port)/db (the password is never printed or stored)")
	fl.StringVar(&f.engineVersion, "engine-version", "", "managed server version, e.g. 15 (Debian's) or 13 (after \"dbperf server install postgres@13\")")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "where installed server versions live (default $DBPERF_CACHE_DIR or the user cache dir)")
	fl.StringVar(&f.mavenURL, "maven-url", "", "the Maven repository a --engine-version not installed yet comes from (default Maven Central): a mirror, offline")
	fl.StringVar(&f.storageEngine, "mysql-storage-engine", "", "MariaDB storage engine: innodb (default) or rocksdb (MyRocks)")
	f.limits.add(fl)
	f.cluster.add(fl)
	addQueueFlags(fl, &f.q)
	fl.BoolVar(&f.noDeepIdle, "no-deep-idle", false, "keep the CPUs out of deep idle states while dbperf runs (/dev/cpu_dma_latency 0, as tuned's latency-performance profile; root only): latency-bound steps stop paying for waking a CPU and stop moving with other periodic work, such as --cpu-profile's sampling; stored with the run, so it is compared only with runs made the same way")
	if servers {
		fl.StringVar(&f.profile, "profile", "default", "config profile of a managed server: built in (default, cached, and those of the configs the Insert Benchmark posts compare: binlog, nobinlog, trx1, trx2, leveled, universal for MariaDB; fpw, nofpw, seeds for PostgreSQL) or one in --profiles-dir (see \"dbperf server list\")")
		fl.StringVar(&f.profilesDir, "profiles-dir", "", "directory of more config profiles, <engine>/<name>.conf or .cnf, overriding built-in ones of the same name (default $DBPERF_PROFILES)")
	} else {
		fl.StringVar(&f.profile, "profile", "default", "config profile of the engine (its LSM options): built in (default, zstd) or one in --profiles-dir (see \"dbperf server list\")")
		fl.StringVar(&f.profilesDir, "profiles-dir", "", "directory of more config profiles, <engine>/<name>.conf, overriding built-in ones of the same name (default $DBPERF_PROFILES)")
		// A key-value workload has no server to start or reach: the flags stay (so their
		// use gets checkTarget's one line saying why, not "unknown flag") but --help
		// does not offer them.
		for _, n := range serverOnlyFlags() {
			_ = fl.MarkHidden(n)
		}
	}
	params.AddFlags(fl)
	return cmd, &f, params
}

// serverOnlyFlags apply only to server engines: a key-value workload's --help hides them.
func serverOnlyFlags() []string {
	return []string{"managed", "dsn", "engine-version", "cache-dir", "maven-url", "mysql-storage-engine", "server-memory", "server-cpus"}
}

// kindEngines are the names of the catalog's engines of kind k, the default first, and
// whether any of them is a server: a workload's --help offers only the engines it can run
// on, and the server flags (--managed, --dsn, …) only when they apply.
func kindEngines(k engine.Kind) (names []string, servers bool) {
	for _, e := range catalog.Engines(catalog.EngineOptions{}) {
		if m := e.Meta(); m.Kind == k {
			names = append(names, m.Name)
			servers = servers || !m.Embedded
		}
	}
	return names, servers
}

// buildConfig turns the shared flags into a validated config.Run and resolves the
// workload's parameters, reporting every problem at once.
func buildConfig(cmd *cobra.Command, env Env, wl workload.Workload, params workload.Params, f *runFlags) (*config.Run, error) {
	changed := cmd.Flags().Changed
	results, resultsErr := resultsPath(f.results, env)
	cfg := &config.Run{
		Workload: wl.Meta().Name, Engine: f.engine, Steps: f.steps, Clients: f.clients, Seed: f.seed,
		Label: f.label, Repeat: f.repeat, ResultsPath: results, Quiet: f.quiet,
		WorkDir: f.workdir, Keep: f.keep,
		Managed: f.managed, DSN: f.dsn, EngineVersion: f.engineVersion, Profile: f.profile,
		ProfilesDir: f.profilesDir, CacheDir: f.cacheDir, MavenURL: f.mavenURL, StorageEngine: f.storageEngine,
		Scale: f.scale, BuildID: f.buildID, CPUProfileDir: f.cpuProfile, Explain: f.explain,
		ClientOffset: f.clientOffset, Part: f.part, NoDeepIdle: f.noDeepIdle,
	}
	if f.clientOffset < 0 {
		return nil, badInput(fmt.Errorf("--client-offset %d: give 0 or more", f.clientOffset))
	}
	if f.part != "" {
		if _, err := parts.Parse(f.part); err != nil {
			return nil, badInput(err)
		}
	}
	var errs []error
	if resultsErr != nil {
		errs = append(errs, resultsErr)
	}
	errs = append(errs, f.limits.apply(cfg, changed)...)
	errs = append(errs, f.cluster.apply(cfg, changed)...)
	if f.cpuProfile != "" {
		// Before the store is opened or anything runs: a directory that takes no file
		// (read-only, a file) gave a run without profiles.
		if err := checkWritableDir("--cpu-profile", f.cpuProfile); err != nil {
			errs = append(errs, err)
		}
	}
	if changed("time") {
		// Checked here, on the value given: as a time.Duration 0 and -5 would read back
		// as -1 ns and 1e12 s as a negative overflow.
		switch {
		case !(f.timeSec > 0):
			errs = append(errs, fmt.Errorf("--time must be a positive number of seconds, got %g", f.timeSec))
		case f.timeSec > maxTimeSec:
			errs = append(errs, fmt.Errorf("--time %g: at most %d seconds (%.1f days) per step", f.timeSec, maxTimeSec, float64(maxTimeSec)/86400))
		default:
			cfg.Time = seconds(f.timeSec)
		}
	}
	if !(f.storeTimeout > 0) || f.storeTimeout > maxTimeSec {
		errs = append(errs, fmt.Errorf("--store-timeout must be a positive number of seconds (at most %d), got %g", maxTimeSec, f.storeTimeout))
	} else {
		cfg.StoreTimeout = seconds(f.storeTimeout)
	}
	if cfg.ProfilesDir == "" {
		cfg.ProfilesDir = defaultProfilesDir(env)
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = defaultCacheDir(env)
	}
	if err := readKVProfile(cfg); err != nil {
		errs = append(errs, err)
	}
	if err := params.Resolve(cfg, changed); err != nil {
		errs = append(errs, err)
	}
	cfg.ReportInterval = params.ReportInterval()
	if changed("report-interval") {
		cfg.ReportInterval = seconds(f.reportInterval)
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	return cfg, errors.Join(errs...)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// maxTimeSec bounds --time: a timed step of more than 11.6 days is a typo, and far beyond
// it a time.Duration overflows.
const maxTimeSec = 1_000_000

// readKVProfile reads a key-value engine's profile (--profile, built in or in
// --profiles-dir) into cfg.KVProfile, for the workload's Resolve to apply: its LSM options
// are the workload's parameters, so each step's reopen keeps them.
func readKVProfile(cfg *config.Run) error {
	e, err := catalog.Engine(cfg.Engine, catalog.EngineOptions{StorageEngine: cfg.StorageEngine})
	if err != nil || e.Meta().Kind != engine.KindKV {
		return nil // an unknown engine is reported by checkRun
	}
	text, _, err := server.ReadProfile(cfg.ProfilesDir, cfg.Engine, cfg.Profile)
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	cfg.KVProfile = text
	return nil
}

// checkRun builds and validates the configuration and finds the engine: every problem of
// the command line at once, as bad input.
func checkRun(cmd *cobra.Command, env Env, wl workload.Workload, params workload.Params, f *runFlags) (*config.Run, engine.Engine, error) {
	cfg, cfgErr := buildConfig(cmd, env, wl, params, f)
	var errs []error
	if cfgErr != nil {
		errs = append(errs, cfgErr)
	}
	eng, err := catalog.Engine(cfg.Engine, catalog.EngineOptions{StorageEngine: cfg.StorageEngine})
	if err != nil {
		errs = append(errs, fmt.Errorf("--engine: %w", err))
	} else if err := checkTarget(cfg, eng.Meta()); err != nil {
		errs = append(errs, err)
	} else if m := eng.Meta(); cmd.Flags().Changed("profile") && m.Kind == engine.KindSQL && !cfg.Managed {
		errs = append(errs, fmt.Errorf("--profile %s: config profiles are for servers dbperf starts (--managed) and the key-value engines; --engine %s without --managed has none to apply", cfg.Profile, m.Name))
	}
	if eng != nil {
		if err := catalog.Check(wl, eng); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, nil, badInput(errors.Join(errs...))
	}
	if _, err := wl.Plan(cfg, params); err != nil {
		return nil, nil, badInput(err)
	}
	return cfg, eng, nil
}

func runWorkload(ctx context.Context, env Env, cmd *cobra.Command, wl workload.Workload, params workload.Params, f *runFlags) error {
	cfg, eng, err := checkRun(cmd, env, wl, params, f)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("agents") {
		return runAgents(ctx, env, cmd, cfg, wl, eng, f)
	}
	if f.noDeepIdle && !f.q.queue {
		release, err := holdShallowIdle()
		if err != nil {
			return err
		}
		defer release()
	}
	if f.q.queue {
		if err := checkQueue(cfg.ResultsPath, &f.q, f.dsn); err != nil {
			return err
		}
		return enqueue(ctx, env, cfg.ResultsPath, []fleet.JobArgs{{Argv: commandArgs(cmd), Class: f.q.class}})
	}
	_, statErr := os.Stat(cfg.ResultsPath)
	created := errors.Is(statErr, os.ErrNotExist) && !store.IsPostgres(cfg.ResultsPath)
	st, err := store.Open(ctx, cfg.ResultsPath)
	if err != nil {
		return badInput(err)
	}
	defer st.Close()
	if cfg.Repeat > 1 && cfg.Label == "" {
		cfg.Label = strings.ReplaceAll(engineLabel(cfg), "/", "-") + "-" + time.Now().Format("20060102-150405")
	}
	if err := prepareCPUProfile(ctx, env, cfg); err != nil {
		return err
	}
	runIDs, last, err := runRepeats(ctx, env, cfg, wl, params, eng, st, cfg.Repeat)
	if err != nil {
		if ee, ok := asExit(err); created && len(runIDs) == 0 && ok && (ee.code == ExitBadInput || ee.code == ExitInterrupted) {
			// Refused or interrupted before a run began (e.g. more clients than the engine
			// accepts, Ctrl-C during initdb): leave no results store behind that this
			// command created.
			st.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(cfg.ResultsPath + suffix)
			}
		}
		return err
	}
	if cfg.Repeat > 1 && !cfg.Quiet {
		if err := printRepeats(ctx, env, st, cfg.Label, runIDs); err != nil {
			return err
		}
	}
	return last
}

// runRepeats runs the workload n times with cfg, each run planned afresh (steps carry
// state: counters, estimates). It returns the stored runs' ids and the error of the last
// run with a failed step (the next repeat still runs: a failed step is a result); err is
// an interruption or a failure of the environment or the store, which ends the repeats.
func runRepeats(ctx context.Context, env Env, cfg *config.Run, wl workload.Workload, params workload.Params,
	eng engine.Engine, st *store.Store, n int) (ids []int64, lastFailed, err error) {
	for i := range n {
		if n > 1 && !cfg.Quiet {
			fmt.Fprintf(env.Out, "repeat %d of %d, label %s\n", i+1, n, report.Printable(cfg.Label))
		}
		steps, err := wl.Plan(cfg, params)
		if err != nil {
			return ids, lastFailed, badInput(err)
		}
		runID, status, err := runOnce(ctx, env, cfg, wl, params, eng, steps, st)
		if runID != 0 {
			ids = append(ids, runID)
		}
		var failed *exitError
		switch {
		case status == store.RunFailed && errors.As(err, &failed):
			lastFailed = err
		case err != nil:
			return ids, lastFailed, err
		case status == store.RunInterrupted:
			return ids, lastFailed, &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: run %d keeps every step and interval measured so far", runID)}
		}
	}
	return ids, lastFailed, nil
}

// printRepeats shows the repeated runs of one label side by side: medians, spread, noise.
func printRepeats(ctx context.Context, env Env, st *store.Store, label string, ids []int64) error {
	runs, err := st.Results(context.WithoutCancel(ctx), ids)
	if err != nil {
		return err
	}
	rep := report.Build(runs)
	cmp := report.Compare(rep, []report.Group{{Name: label, RunIDs: ids}}, 0)
	fmt.Fprintf(env.Out, "\n%d runs labelled %s (dbperf report %s; compare with another label: dbperf report %s OTHER)\n",
		len(ids), report.Printable(label), report.Printable(label), report.Printable(label))
	return renderCompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == "")
}

// runOnce runs the workload once: engine (and managed server) up, every step stored as it
// goes, the summary printed, everything shut down. It returns the run's id and status;
// an error means the environment failed (exit 2) or the store could not be written.
func runOnce(ctx context.Context, env Env, cfg *config.Run, wl workload.Workload, params workload.Params,
	eng engine.Engine, steps []workload.Step, st *store.Store) (int64, string, error) {
	// --cpu-profile: the run's perf is launched, sampling, before the server starts, so it
	// follows the server's processes from their fork (probe.CPUProfiler's comment says why).
	cpuOpts := cpuOptions(cfg)
	perfRec, perfErr := probe.Launch(ctx, cpuOpts)
	defer func() {
		if perfRec != nil {
			_ = perfRec.Close()
		}
	}()
	ot, err := openRunTarget(ctx, env, cfg, eng, params, wl)
	if err != nil {
		return 0, "", err
	}
	defer ot.close()
	// From here on everything is written, also after Ctrl-C (record.Run: the store's
	// writes survive it by storeGrace).
	opts := newStoreOpts(env, cfg)
	if note := probe.CPUNote(cpuOpts); note != "" {
		ot.env[probe.EnvCPU] = note
	}
	if ps, err := parts.Parse(cfg.Part); err == nil {
		ps.SetEnv(ot.env)
	}
	dc := openDiag(ctx, env, cfg, ot)
	if dc != nil {
		defer dc.Close()
	}
	rec, err := record.Begin(ctx, st, ot.meta(cfg, wl, params.Stored(), steps, nil), opts)
	if err != nil {
		return 0, "", badInput(err)
	}
	run := ot.runner(cfg)
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
		if cpuProf = attachCPUProfile(env, cpuOpts, perfRec, perfErr, ot, run, rec, &profs); cpuProf != nil {
			perfRec = nil // the profiles' now
			defer cpuProf.Close()
		}
	}
	attachExplain(dc, run, rec, &profs)
	attachCluster(ot.cluster, rec, &profs)
	if profs.Len() > 0 {
		run.Profiler = &profs
	}
	steps = ot.cluster.Wrap(steps)
	prog := progress.New(env.Out, env.IsTerminal, cfg.Quiet)
	// The steps in order, a failed or interrupted one's followers stored skipped
	// (runner.Sequence); a store that fails ends the run at once.
	if res := rec.Steps.Run(ctx, run, steps, rec.Sink(env.Err, prog)); res.SinkErr != nil {
		return rec.ID(), "", res.SinkErr
	}
	if err := rec.StoreCPUProfiles(ctx, env.Err, cpuProf); err != nil {
		return rec.ID(), "", err
	}
	if err := rec.Finish(); err != nil {
		return rec.ID(), "", err
	}
	if !cfg.Quiet {
		if err := printRun(ctx, env, cfg, eng, st, rec.ID(), opts.Timeout, ot.dir); err != nil {
			return rec.ID(), "", err
		}
	}
	return rec.ID(), rec.Status(), runFailure(rec)
}

// attachCPUProfile makes the run's CPU profiler from its perf recording (launched before
// the server started) and adds it to profs; nil, said once on stderr, when perf could not
// record.
func attachCPUProfile(env Env, opts probe.CPUOptions, perfRec *profile.Recording, perfErr error, ot *runTarget, run *runner.Runner,
	rec *record.Run, profs *probe.Set) *probe.CPU {
	err := perfErr
	var cpuProf *probe.CPU
	if err == nil {
		cpuProf, err = probe.NewCPU(opts, perfRec)
	}
	if err != nil {
		fmt.Fprintf(env.Err, "dbperf: no CPU profiles: %v\n", err)
		return nil
	}
	prof := cpuProf.Profiler(ot.hw.ServerPID, run.Handle)
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

// printRun prints the stored run's report (and where an embedded engine's files were kept).
func printRun(ctx context.Context, env Env, cfg *config.Run, eng engine.Engine, st *store.Store, id int64, timeout time.Duration, dir string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	runs, err := st.Results(rctx, []int64{id})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Out)
	if err := renderReportText(env.Out, report.Build(runs)); err != nil {
		return err
	}
	if cfg.Keep && eng.Meta().Embedded {
		fmt.Fprintf(env.Out, "\nkept the %s files in %s\n", cfg.Engine, dir)
	}
	return nil
}

// runTarget is an opened engine with everything a run on it stores and measures: its
// version and settings, the /proc sampler, which processes are the server, the run's env.
// A run opens one; an interleaved comparison keeps one per configuration open across its
// trials.
type runTarget struct {
	*target
	eng     engine.Engine
	info    engine.Info
	sampler *hwstat.Sampler
	hw      runner.HWTargets
	env     map[string]string
}

// openRunTarget opens the engine for cfg (openTarget) and reads what the run stores about
// it. Every error is the environment's (exit status 2).
func openRunTarget(ctx context.Context, env Env, cfg *config.Run, eng engine.Engine, params workload.Params, wl workload.Workload) (*runTarget, error) {
	if cfg.WorkDir == "" {
		out := io.Discard
		if !cfg.Quiet {
			out = env.Out
		}
		removeStaleWorkDirs(out, os.TempDir(), false)
	}
	tg, err := openTarget(ctx, cfg, eng, params, func(s string) {
		if !cfg.Quiet {
			fmt.Fprintln(env.Out, s)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			// Ctrl-C or SIGTERM while a server was starting: the server's own output (an
			// initdb cut short) is not the news.
			return nil, &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while opening %s: nothing was run", cfg.Engine)}
		}
		return nil, badInput(err)
	}
	fail := func(err error) (*runTarget, error) {
		tg.close()
		return nil, err
	}
	if err := checkSessions(ctx, cfg, wl, eng, tg.h); err != nil {
		return fail(err)
	}
	info, err := tg.h.Info(ctx)
	if err != nil {
		return fail(badInput(fmt.Errorf("%s: read version and settings: %w", cfg.Engine, err)))
	}
	sampler, err := hwstat.New()
	if err != nil {
		return fail(badInput(err))
	}
	if info.Settings == nil {
		info.Settings = map[string]string{}
	}
	for k, v := range tg.settings {
		info.Settings[k] = v
	}
	hwNotes := map[string]string{}
	hw, hwDir := hwTargets(ctx, eng.Meta(), tg, info, sampler, hwNotes)
	if tg.dir == "" {
		tg.dir = hwDir // a --dsn server's data dir, when it is on this machine
	}
	runEnvironment := runEnv(env, sampler, tg.dir)
	if cfg.BuildID != "" {
		runEnvironment["build_id"] = cfg.BuildID
	}
	if skipped := tg.settings["dbperf.profile_skipped"]; skipped != "" {
		// A profile setting this server version lacks was left out (internal/server).
		runEnvironment["profile_skipped"] = skipped
	}
	for k, v := range hwNotes {
		runEnvironment[k] = v
	}
	for k, v := range tg.env {
		runEnvironment[k] = v // a managed server's limits (cgroup.go)
	}
	return &runTarget{target: tg, eng: eng, info: info, sampler: sampler, hw: hw, env: runEnvironment}, nil
}

// meta is what a run of steps on the target stores about itself: wlStored is the
// workload's own parameters (workload.Params.Stored), to which the shared ones and extra
// parameters (an interleaved trial's) are added.
func (t *runTarget) meta(cfg *config.Run, wl workload.Workload, wlStored map[string]any, steps []workload.Step, extra map[string]any) store.RunMeta {
	p := storedParams(cfg, wlStored, steps)
	for k, v := range extra {
		p[k] = v
	}
	return store.RunMeta{
		Workload: wl.Meta().Name, WorkloadVersion: wl.Meta().Version,
		Engine: engineLabel(cfg), EngineVersion: t.info.Version, EngineSettings: t.info.Settings,
		Label: cfg.Label, Seed: cfg.Seed, Params: p,
		StepGroups: storeGroups(wl.Meta().Groups),
		Env:        t.env, StartedAt: time.Now(),
	}
}

// runner is the step runner on the target.
func (t *runTarget) runner(cfg *config.Run) *runner.Runner {
	r := &runner.Runner{Handle: t.h, Interval: cfg.ReportInterval, Sampler: t.sampler, HW: t.hw, Think: cfg.Think}
	if t.cluster != nil {
		r.Spread = t.cluster.Spread() // nil without --spread
	}
	return r
}

// engineLabel names the engine in the store: an engine's storage engines are told apart
// ("mariadb/innodb", "mariadb/rocksdb": engine.Meta.StorageEngines, the default first) so
// runs and reports never mix them up.
func engineLabel(cfg *config.Run) string {
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
	}
	return out
}

// storedParams are the run's effective parameters, stored with it: the shared ones and
// the workload's own.
func storedParams(cfg *config.Run, wlStored map[string]any, steps []workload.Step) map[string]any {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name()
	}
	p := make(map[string]any, len(wlStored)+10)
	for k, v := range wlStored {
		p[k] = v
	}
	for k, v := range map[string]any{
		"managed":             cfg.Managed,
		"profile":             cfg.Profile,
		"storage_engine":      cfg.StorageEngine,
		"engine_version":      cfg.EngineVersion,
		"steps":               names,
		"clients":             cfg.Clients,
		"repeat":              cfg.Repeat,
		"report_interval_sec": cfg.ReportInterval.Seconds(),
	} {
		p[k] = v
	}
	if cfg.Think > 0 {
		p["think_us"] = cfg.Think.Microseconds()
	}
	if cfg.NoDeepIdle {
		p["no_deep_idle"] = true
	}
	return p
}

func runEnv(env Env, s *hwstat.Sampler, dir string) map[string]string {
	e := s.Environment(dir)
	e["dbperf_version"] = env.Version
	e["git_commit"] = env.Commit
	for k, v := range fleet.RunEnv(env.getenv) {
		e[k] = v
	}
	return e
}

// checkSessions refuses a run that would open more sessions than the engine accepts,
// before it opens any, with one line naming the limit.
func checkSessions(ctx context.Context, cfg *config.Run, wl workload.Workload, eng engine.Engine, h engine.Handle) error {
	lim, ok := h.(engine.SessionLimiter)
	if !ok {
		return nil
	}
	limit, why, err := lim.MaxSessions(ctx)
	if err != nil {
		return badInput(fmt.Errorf("%s: how many sessions it accepts: %w", cfg.Engine, err))
	}
	need := wl.Meta().Sessions(cfg.Clients)
	if need <= limit {
		return nil
	}
	fit := max((limit-1)/max(wl.Meta().SessionsPerClient, 1), 0)
	return badInput(fmt.Errorf("--clients %d needs %d sessions but %s accepts %d (%s): use at most --clients %d%s",
		cfg.Clients, need, eng.Meta().Name, limit, why, fit, map[bool]string{true: "", false: ", or raise max_connections in the server's profile"}[eng.Meta().Embedded]))
}

// plural is "1 noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// holdShallowIdle holds the CPUs out of deep idle for the command (--no-deep-idle).
func holdShallowIdle() (func(), error) {
	c, err := hwstat.HoldShallowIdle()
	if err != nil {
		return nil, badInput(fmt.Errorf("--no-deep-idle: %w: run dbperf as root, or drop --no-deep-idle", err))
	}
	return func() { _ = c.Close() }, nil
}

// prepareCPUProfile readies --cpu-profile DIR for the runs of one command (run, or every
// point of a sweep): the directory made, the sampling rate read, and perf checked once.
// Without perf the runs go on without profiles, the reason said once on stderr and kept
// in every run's env (cpu_profile).
func prepareCPUProfile(ctx context.Context, env Env, cfg *config.Run) error {
	if cfg.CPUProfileDir == "" {
		return nil
	}
	if err := os.MkdirAll(cfg.CPUProfileDir, 0o755); err != nil {
		return badInput(fmt.Errorf("--cpu-profile: %w", err))
	}
	hz, err := probe.ParseHz(env.getenv("DBPERF_CPU_PROFILE_HZ"))
	if err != nil {
		return badInput(err)
	}
	cfg.CPUProfileHz = hz
	if cfg.CPUProfileCallGraph, err = probe.ParseCallGraph(env.getenv("DBPERF_CPU_PROFILE_CALLGRAPH"), cfg.Engine); err != nil {
		return badInput(err)
	}
	if err := profile.Available(ctx); err != nil {
		fmt.Fprintf(env.Err, "dbperf: --cpu-profile: no CPU profiles: %v\n", err)
		cfg.CPUProfileDir, cfg.CPUProfileOff = "", err.Error()
	}
	return nil
}
