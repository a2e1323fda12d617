package cli

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/session"
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
		fl.StringVar(&f.profile, "profile", "default", "config profile of a managed server: built in (default, cached, and those of the configs the Insert Benchmark posts compare: binlog, nobinlog, trx1, trx2, leveled, universal for MariaDB; fpw, nofpw, seeds for PostgreSQL; huge, shared memory in huge pages, for PostgreSQL) or one in --profiles-dir (see \"dbperf server list\")")
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
	if err := session.ReadKVProfile(cfg); err != nil {
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
		return runAgents(ctx, env, cmd, cfg, wl, params, eng, f)
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
		cfg.Label = strings.ReplaceAll(session.EngineLabel(cfg), "/", "-") + "-" + time.Now().Format("20060102-150405")
	}
	if err := prepareCPUProfile(ctx, env, cfg); err != nil {
		return err
	}
	runIDs, last, err := session.Repeat(ctx, sessionOptions(env, cfg, wl, params, eng, st), cfg.Repeat)
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
	return render.CompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == "")
}

// sessionOptions are the options of cfg's runs (internal/session), printing on env.
func sessionOptions(env Env, cfg *config.Run, wl workload.Workload, params workload.Params, eng engine.Engine, st *store.Store) session.Options {
	rec := newStoreOpts(env, cfg)
	return session.Options{Config: cfg, Workload: wl, Params: params, Engine: eng, Store: st,
		Record: rec, Out: env.Out, Err: env.Err, IsTerminal: env.IsTerminal,
		Version: env.Version, Commit: env.Commit, Getenv: env.getenv, ReadCgroups: readCgroups,
		Report: func(ctx context.Context, cfg *config.Run, id int64, dir string) error {
			return printRun(ctx, env, cfg, eng, st, id, rec.Timeout, dir)
		}}
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
	if err := render.Text(env.Out, report.Build(runs)); err != nil {
		return err
	}
	if cfg.Keep && eng.Meta().Embedded {
		fmt.Fprintf(env.Out, "\nkept the %s files in %s\n", cfg.Engine, dir)
	}
	return nil
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

// prepareCPUProfile readies --cpu-profile DIR for the runs of one command
// (session.PrepareCPUProfile).
func prepareCPUProfile(ctx context.Context, env Env, cfg *config.Run) error {
	return session.PrepareCPUProfile(ctx, cfg, env.getenv, env.Err)
}
