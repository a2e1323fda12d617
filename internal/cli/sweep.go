package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/sweep"
	"github.com/dbperf/dbperf/internal/workload"
)

// sweepFlags are `dbperf sweep`'s own flags.
type sweepFlags struct {
	versions []string
	profiles []string
	resume   bool
	design   string
	slice    float64
	// loadOnce: the interleaved and duet designs run the data-changing steps in their
	// first block only and repeat the steady steps on the tables it left.
	loadOnce bool
	// settle: with loadOnce, each later block begins with the points' engine cleanup.
	settle bool
	// sameData: with loadOnce, the later blocks run on copies of the first point's data.
	sameData bool
	// instances: with loadOnce, the blocks run on this many servers of each point in turn.
	instances int
	// placement: the duet's --duet-placement (sweep.Placements).
	placement string
	think     []string
	// clients are the counts of --clients, the concurrency axis (one count: no axis).
	clients []int
	// vary are --vary FLAG=V1,V2,…: axes over the workload's own parameters.
	vary []string
	// point runs only the point of this name (an agent's job of a queued sweep).
	point string
}

// newSweepCmd is `dbperf sweep`, with one subcommand per workload: the workload over
// several versions and/or config profiles of a managed engine.
func newSweepCmd(env Env) *cobra.Command {
	var wait waitFlags
	names := catalog.WorkloadNames(nil)
	cmd := &cobra.Command{
		Use:   "sweep WORKLOAD",
		Short: "Run a workload over several versions and/or config profiles of a managed engine, then compare them",
		Long: `Run one workload over several versions (--versions) and/or config profiles (--profiles)
of a managed engine, counts of clients (--clients 1,2,4,8) and values of the workload's
own parameters (--vary rows=100000,200000): the cross product, versions outer, then
profiles, then clients, then the --vary axes. Each point runs on its own throwaway server,
--repeat times, stored with the label SWEEP/VERSION/PROFILE (SWEEP/VERSION/PROFILE/cN with
a concurrency axis; SWEEP: --label, by default sweep-WORKLOAD-ENGINE-TIME), and the sweep
ends with the relative report, the first point being the base; with a concurrency axis
also the rate of each step by clients, one row per version and profile, and the same
relative to the first count and to the first row. One profile is applied to every version; a setting a version lacks is
left out and said so in the run's env. A key-value engine (rocksdb, pebble) is swept over
its --profiles (LSM options), each point on a fresh database: VERSION is "default".

--resume with the --label of an interrupted sweep skips the points already stored with
--repeat finished (status ok) runs and completes the others.

Exit status: 0 every run ok, 1 a step failed in some run (the sweep goes on), 2 bad
input, 130 interrupted (every run measured so far is kept; resume with --resume).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && wait.wait {
				return nil
			}
			if len(args) == 0 {
				return badInput(fmt.Errorf("sweep needs one workload, e.g. \"dbperf sweep insertbench --engine postgres --versions 13,15\": use one of %s", strings.Join(names, ", ")))
			}
			if _, err := catalog.Workload(args[0]); err != nil {
				return badInput(err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && wait.wait {
				return waitSweep(cmd.Context(), env, wait)
			}
			return badInput(fmt.Errorf("unknown workload %q", args[0]))
		},
		// As dbperf run: an unknown workload's flags are not what to report.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
	}
	cmd.Flags().BoolVar(&wait.wait, "wait", false, "with --label of a queued sweep (dbperf sweep WORKLOAD … --queue): wait until every point's job is done, then print the sweep's report")
	cmd.Flags().StringVar(&wait.label, "label", "", "with --wait: the queued sweep's label")
	cmd.Flags().StringVar(&wait.results, "results", "", resultsUsage)
	cmd.Flags().DurationVar(&wait.timeout, "timeout", 0, "with --wait: give up after this long (exit 1), e.g. 12h; default: wait as long as it takes")
	var ex []string
	for _, w := range catalog.Workloads() {
		cmd.AddCommand(newSweepWorkloadCmd(env, w))
		if sx := w.Meta().SweepExamples; len(sx) > 0 {
			ex = append(ex, "  dbperf sweep "+w.Meta().Name+" "+sx[0])
		}
	}
	cmd.Example = strings.Join(ex, "\n")
	return cmd
}

func newSweepWorkloadCmd(env Env, wl workload.Workload) *cobra.Command {
	var sw sweepFlags
	cmd, f, params := newWorkloadCmd(env, wl)
	name := wl.Meta().Name
	cmd.Short = "Sweep " + name + " over versions and/or profiles of a managed engine"
	over := "several versions and/or config profiles of a managed engine"
	if _, servers := kindEngines(wl.Meta().Kind); !servers {
		over = "config profiles (LSM options) of a key-value engine"
	}
	cmd.Long = fmt.Sprintf(`Run %s over %s (see
dbperf sweep --help), then print the relative report of the points, the first the base.`, name, over)
	var ex []string
	for _, e := range wl.Meta().SweepExamples {
		ex = append(ex, "  dbperf sweep "+name+" "+e)
	}
	cmd.Example = strings.Join(ex, "\n")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runSweep(cmd.Context(), env, cmd, wl, params, f, &sw)
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&sw.versions, "versions", nil, "engine versions, e.g. 13,15 (PostgreSQL: Debian's 15 or installed from Maven Central; MariaDB: 10.11, 11.4); default: the default version")
	if _, servers := kindEngines(wl.Meta().Kind); !servers {
		_ = fl.MarkHidden("versions") // runSweep says why a key-value engine has none
	}
	fl.StringSliceVar(&sw.profiles, "profiles", nil, "config profiles (built in, or in --profiles-dir), e.g. default,cached; default: --profile")
	fl.BoolVar(&sw.resume, "resume", false, "resume the sweep with this --label: skip the points (sequential) or blocks (interleaved) already stored finished")
	fl.StringVar(&sw.design, "design", sweep.Interleaved, "order of the trials: interleaved (randomized blocks, each step measured on every point close together in time; steady steps in alternating slices), duet (every step and slice on all points at the same time, each point's server and clients on CPUs of their own, or apart by role with --duet-placement role: for CPU-bound steps) or sequential (each point's repeats in turn)")
	fl.BoolVar(&sw.loadOnce, "load-once", false, "interleaved and duet designs: run the steps that change the data (loads, index builds, writes, cleanups) in the first block only, and repeat only the steady steps in every block, on the tables the first block left (each point keeps its server and data); their ratios then no longer vary with each block's freshly loaded tables")
	fl.BoolVar(&sw.settle, "settle", false, "with --load-once: before every later block each point's engine reduces its writeback debt, unmeasured (PostgreSQL VACUUM ANALYZE of the database and CHECKPOINT, InnoDB's dirty-page flush, MyRocks' flush and compaction, SQLite's checkpoint), so every block starts both points from the same state")
	fl.BoolVar(&sw.sameData, "same-data", false, "with --load-once, managed servers of one version whose engine can copy a server's data (docs/regression-hunting.md): once the first block has loaded the data, every point's server is replaced by one started from a physical copy of the first point's data (its own profile kept), so later blocks compare the same pages, on servers reloaded at one moment")
	fl.IntVar(&sw.instances, "instances", 1, "with --load-once, managed servers whose engine can copy a server's data (docs/regression-hunting.md): split the blocks into N runs, and between two replace every point's server by one started from a copy of its data (of the first point's with --same-data), so that the difference two servers of one configuration can have for their whole life is measured and in the interval (each instance's blocks are one unit of the pair: 6 or more for an interval at 95%)")
	fl.StringVar(&sw.placement, "duet-placement", sweep.PlacementPoint, "duet design: point (each point's clients and server on CPUs of their own) or role (every point's clients on one CPU set, every server on the other, swapped between blocks: a CPU's own slow seconds then slow every point alike; server engines)")
	fl.Float64Var(&sw.slice, "slice", 5, fmt.Sprintf("interleaved design: seconds per slice of a steady step (query steps, sysbench tests, timed db_bench reads), %g to %g; 0 = whole steps; a slice shorter than two --report-interval is measured in intervals of a fifth of it", sweep.MinSlice, sweep.MaxSlice))
	// --clients takes a list here: the concurrency axis.
	cl := fl.Lookup("clients")
	cl.Value = &clientsValue{n: &f.clients, list: &sw.clients, cmd: "dbperf sweep " + name}
	cl.Usage = "concurrent clients, or counts to sweep over (the concurrency axis), e.g. 1,2,4,8: each point runs at each count"
	fl.StringArrayVar(&sw.vary, "vary", nil, "FLAG=V1,V2,…: sweep one of the workload's own parameters over these values, e.g. --vary rows=100000,200000 (repeatable: the cross product, after --clients)")
	fl.StringVar(&sw.point, "point", "", "run only the point of this name (how an agent runs a point of a queued sweep)")
	_ = fl.MarkHidden("point")
	fl.StringArrayVar(&sw.think, "think", nil, "NAME=DURATION: the closed-loop workers of point NAME pause this long after every operation (a known effect, to check a comparison), e.g. --think b=200us")
	return cmd
}

// sweepPlan is a sweep checked and expanded: its config, engine, points and how one
// point's config is resolved.
type sweepPlan struct {
	sweep.Kind
	cfg      *config.Run
	eng      engine.Engine
	versions []string
	prefix   string
	points   []sweep.Point
	resolve  func(sweep.Point) (*config.Run, error)
	// queuedArgv is a queued sweep's command line, taken before the points' --vary
	// values are set on the flags: each point's job is it with the point's name.
	queuedArgv []string
}

// runSweep is `dbperf sweep WORKLOAD`: the flags checked and the points expanded
// (planSweep), then either queued (--queue) or run in the design asked for, and the
// relative report printed.
func runSweep(ctx context.Context, env Env, cmd *cobra.Command, wl workload.Workload, params workload.Params, f *runFlags, sw *sweepFlags) error {
	sp, err := planSweep(env, cmd, wl, params, f, sw)
	if err != nil {
		return err
	}
	if f.q.queue {
		return queueSweep(ctx, env, sp, f)
	}
	if sw.resume {
		// Before anything is installed or measured: a sweep to resume is stored, with
		// the settings given now.
		o := sweep.Options{Session: session.Options{Config: sp.cfg, Params: params}, Points: sp.points, Resolve: sp.resolve, Prefix: sp.prefix}
		if err := sweep.CheckResume(ctx, o, func(k string) string { return paramFlag(cmd, k) }); err != nil {
			return err
		}
	}
	if sp.Managed() {
		// Every version is installed (or found installed) before the first point runs, so
		// a version that cannot be had is refused before anything is measured or stored.
		var perr []error
		for _, v := range sp.versions {
			if err := managed.Ensure(ctx, managed.Options{Engine: sp.cfg.Engine, Version: v, CacheDir: sp.cfg.CacheDir, MavenURL: sp.cfg.MavenURL}); err != nil {
				perr = append(perr, fmt.Errorf("--versions %s: %w", v, err))
			}
		}
		if len(perr) > 0 {
			return badInput(errors.Join(perr...))
		}
	}
	if err := prepareCPUProfile(ctx, env, sp.cfg); err != nil {
		return err
	}
	if f.noDeepIdle {
		release, err := holdShallowIdle()
		if err != nil {
			return err
		}
		defer release()
	}
	return executeSweep(ctx, env, wl, params, sp, sw)
}

// planSweep checks a sweep's flags (every problem at once: exit 2) and expands its points
// (versions, then profiles, then counts of clients, then the --vary axes), each checked
// before the first runs.
func planSweep(env Env, cmd *cobra.Command, wl workload.Workload, params workload.Params, f *runFlags, sw *sweepFlags) (*sweepPlan, error) {
	sp := &sweepPlan{}
	if f.q.queue {
		sp.queuedArgv = commandArgs(cmd, "label", "point")
	}
	named, think, lats, kind, errs := checkSweepFlags(cmd, f, sw)
	if len(errs) > 0 {
		return nil, badInput(errors.New(strings.Join(errs, "\n")))
	}
	sp.Kind = kind
	f.managed = kind.Managed()
	cfg, eng, err := checkRun(cmd, env, wl, params, f)
	if err != nil {
		return nil, err
	}
	sp.cfg, sp.eng = cfg, eng
	sp.resolve = sweepResolver(cmd, env, wl, params, f, cfg, kind)
	vary, err := parseVary(cmd, sw.vary)
	if err != nil {
		return nil, badInput(err)
	}
	sp.prefix = sweep.Label(cfg, time.Now())
	axes := sweep.Axes{Versions: sweep.Dedupe(sw.versions), Profiles: named, Think: think, Clients: sw.clients, Vary: vary,
		Latencies: lats, Embedded: kind.Embedded}.Defaults(cfg)
	sp.versions = axes.Versions
	if sp.points, err = sweep.Points(axes, sp.prefix, sp.checkPoint); err != nil {
		return nil, badInput(err)
	}
	if sw.point != "" {
		if sp.points, err = sweep.OnePoint(sp.points, sw.point); err != nil {
			return nil, badInput(err)
		}
	}
	return sp, nil
}

// checkPoint resolves a point's config and checks it as a run of it would be: its target,
// its profile (a managed server's), its clients.
func (sp *sweepPlan) checkPoint(pt sweep.Point) error {
	pc, err := sp.resolve(pt)
	if err != nil {
		return err
	}
	pc.EngineVersion = pt.Version
	var errs []error
	if err := checkTarget(pc, sp.eng.Meta()); err != nil {
		errs = append(errs, err)
	}
	if sp.Managed() {
		if _, _, err := server.ReadProfile(pc.ProfilesDir, pc.Engine, pt.Profile); err != nil {
			errs = append(errs, fmt.Errorf("--profiles: %w", err))
		}
	}
	pc.Clients = pt.Clients
	if err := pc.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkSweepFlags checks the flags a sweep adds to run's (and those it refuses), every
// problem a line: the named points, their --think, the latency axis and the engine's kind.
func checkSweepFlags(cmd *cobra.Command, f *runFlags, sw *sweepFlags) ([]sweep.NamedProfile, map[string]time.Duration, []time.Duration, sweep.Kind, []string) {
	var errs []string
	changed := cmd.Flags().Changed
	if f.q.queue {
		if sw.resume {
			errs = append(errs, "--resume: a queued sweep needs none: enqueuing it again (same --label) adds only the points not queued yet")
		}
		if changed("design") && sw.design != sweep.Sequential {
			errs = append(errs, fmt.Sprintf("--design %s: with --queue each point is a job of its own, run by whichever agent takes it: the design is sequential", sw.design))
		}
		sw.design = sweep.Sequential
	}
	if sw.point != "" {
		sw.design = sweep.Sequential
	}
	errs = append(errs, refusedSweepFlags(changed, f, sw)...)
	named, err := sweep.ParseProfiles(sw.profiles)
	if err != nil {
		errs = append(errs, err.Error())
	}
	think, err := sweep.ParseThink(sw.think)
	if err != nil {
		errs = append(errs, err.Error())
	}
	lats, err := sweepLatencies(changed("node-latency"), &f.cluster)
	if err != nil {
		errs = append(errs, err.Error())
	}
	var kind sweep.Kind
	if e, err := catalog.Engine(f.engine, catalog.EngineOptions{StorageEngine: f.storageEngine}); err == nil {
		kind = sweep.KindOf(e.Meta())
		asked := sweep.Asked{Design: sw.design, Versions: sw.versions, Profiles: named, Clients: len(sw.clients), Vary: len(sw.vary), Placement: sw.placement, SameData: sw.sameData, Instances: sw.instances}
		errs = append(errs, asked.KindProblems(kind, f.engine)...)
		if srv, err := catalog.Server(f.engine); err == nil && (sw.sameData || sw.instances > 1) {
			if err := srv.Check(server.Options{CopyOf: &server.Instance{}}); err != nil {
				errs = append(errs, err.Error()) // an engine that cannot copy, before block 1 runs
			}
		}
	}
	errs = append(errs, sweep.ThinkProblems(think, named)...)
	return named, think, lats, kind, errs
}

// refusedSweepFlags are the problems of flags a sweep refuses or whose values it bounds.
func refusedSweepFlags(changed func(string) bool, f *runFlags, sw *sweepFlags) []string {
	var errs []string
	if changed("dsn") {
		errs = append(errs, "--dsn: a sweep starts its own servers (one per version and profile); drop --dsn")
	}
	if changed("engine-version") {
		errs = append(errs, "--engine-version: a sweep takes --versions")
	}
	if changed("profile") && changed("profiles") {
		errs = append(errs, "--profile and --profiles: give --profiles only")
	}
	if sw.resume && f.label == "" {
		errs = append(errs, "--resume needs the --label of the sweep to resume (dbperf runs lists the labels)")
	}
	asked := sweep.Asked{Design: sw.design, Slice: sw.slice, LoadOnce: sw.loadOnce, Settle: sw.settle, SameData: sw.sameData, Cluster: f.cluster.nodes, ServerCPUs: f.limits.cpus,
		Instances: sw.instances, Repeat: f.repeat, Resume: sw.resume,
		Placement: sw.placement, PlacementGiven: changed("duet-placement")}
	return append(errs, asked.Problems()...)
}

// sweepResolver is the configuration of one point: a key-value engine's profile is part
// of the workload's parameters (its LSM options), so they are resolved again for it. A
// point with --vary values is resolved again too: its flags set to its values, the shared
// workload.Params resolved for it (each workload's Plan copies them, so a point planned
// keeps its own). --cpu-profile's rate, call graph and perf's availability are the
// sweep's, read once before the first point (prepareCPUProfile): a point resolved again
// takes them.
func sweepResolver(cmd *cobra.Command, env Env, wl workload.Workload, params workload.Params, f *runFlags, cfg *config.Run, kind sweep.Kind) func(sweep.Point) (*config.Run, error) {
	resolve := func(pt sweep.Point) (*config.Run, error) {
		if !kind.KV && len(pt.Vary) == 0 {
			pc := *cfg
			if !kind.Embedded {
				pc.Profile = pt.Profile
			}
			return &pc, nil
		}
		for _, v := range pt.Vary {
			if err := cmd.Flags().Set(v[0], v[1]); err != nil {
				return nil, fmt.Errorf("--vary %s=%s: %w", v[0], v[1], err)
			}
		}
		if kind.KV {
			f.profile = pt.Profile
		}
		pc, _, err := checkRun(cmd, env, wl, params, f)
		if err != nil {
			return nil, err
		}
		if kind.Managed() {
			pc.Profile = pt.Profile
		}
		return pc, nil
	}
	return sweep.Resolver(cfg, resolve)
}

// queueSweep enqueues a sweep's points, a job each (--queue): each point's job is the
// sweep's command line with the point's name, run sequentially by whichever agent takes it.
func queueSweep(ctx context.Context, env Env, sp *sweepPlan, f *runFlags) error {
	if err := checkQueue(sp.cfg.ResultsPath, &f.q, f.dsn); err != nil {
		return err
	}
	names := make([]string, len(sp.points))
	for i, pt := range sp.points {
		names[i] = pt.Name()
	}
	if err := enqueue(ctx, env, sp.cfg.ResultsPath, sweepq.Jobs(sp.queuedArgv, sp.prefix, f.q.class, names)); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "sweep %s: dbperf sweep --label %s --wait prints its report once every point is done\n", sp.prefix, sp.prefix)
	return nil
}

// executeSweep runs the planned points in the design asked for, then prints the relative
// report (with the concurrency tables first for a --clients axis); its error is the last
// failed step's (exit 1) or the environment's.
func executeSweep(ctx context.Context, env Env, wl workload.Workload, params workload.Params, sp *sweepPlan, sw *sweepFlags) error {
	cfg := sp.cfg
	st, err := store.Open(ctx, cfg.ResultsPath)
	if err != nil {
		return badInput(err)
	}
	defer st.Close()
	groups, lastFailed, err := sweep.Run(ctx, sweep.Options{Session: sessionOptions(env, cfg, wl, params, sp.eng, st),
		Points: sp.points, Resolve: sp.resolve, Prefix: sp.prefix, Design: sw.design,
		Slice: seconds(sw.slice), LoadOnce: sw.loadOnce, Settle: sw.settle, SameData: sw.sameData, Instances: sw.instances, Placement: sw.placement, Resume: sw.resume})
	if err != nil {
		return err
	}
	if cfg.Quiet || len(groups) == 0 {
		return lastFailed
	}
	cmp, err := sweep.Report(ctx, st, sp.points, groups)
	if err != nil {
		return err
	}
	again := fmt.Sprintf("dbperf report %s/… to compare them again", sp.prefix)
	if len(sw.clients) > 1 {
		again += "; points at different counts of clients need --force there, a different count changes every figure"
	}
	fmt.Fprintf(env.Out, "\nsweep %s: %d points, %s design (%s)\n", sp.prefix, len(groups), sw.design, again)
	if err := render.CompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == ""); err != nil {
		return err
	}
	return lastFailed
}

// parseVary reads --vary FLAG=V1,V2,…: FLAG a flag of the workload's own (not one the
// sweep or the run owns, sweepOwnFlag), at least one value (sweep.ParseVary).
func parseVary(cmd *cobra.Command, vs []string) ([]sweep.VaryAxis, error) {
	has := func(name string) bool { return cmd.Flags().Lookup(name) != nil }
	return sweep.ParseVary(vs, has, sweepOwnFlag)
}

// sweepOwnFlag says a flag is one a sweep sets per point or run-wide, never a --vary axis.
func sweepOwnFlag(name string) bool {
	switch name {
	case "engine", "engine-version", "versions", "profile", "profiles", "clients", "label", "results", "repeat",
		"design", "slice", "load-once", "settle", "same-data", "instances", "duet-placement", "think", "vary", "resume", "managed", "dsn", "workdir", "keep", "quiet", "seed",
		"mysql-storage-engine", "cache-dir", "profiles-dir", "steps", "store-timeout", "cpu-profile", "explain",
		"server-memory", "server-cpus", "build-id", "report-interval":
		return true
	}
	return false
}

// paramFlag names the flag a stored parameter comes from (--time for time_sec), or the
// parameter when no flag has its name.
func paramFlag(cmd *cobra.Command, key string) string {
	name := strings.ReplaceAll(key, "_", "-")
	for _, n := range []string{name, strings.TrimSuffix(name, "-sec"), strings.TrimSuffix(name, "-us")} {
		if cmd.Flags().Lookup(n) != nil {
			return "--" + n
		}
	}
	return key
}
