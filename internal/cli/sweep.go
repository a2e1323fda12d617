package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
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
	think    []string
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
	var names []string
	for _, w := range catalog.Workloads() {
		names = append(names, w.Meta().Name)
	}
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
	fl.StringVar(&sw.design, "design", designInterleaved, "order of the trials: interleaved (randomized blocks, each step measured on every point close together in time; steady steps in alternating slices), duet (every step and slice on all points at the same time, each point's server and clients on CPUs of their own: for CPU-bound steps) or sequential (each point's repeats in turn)")
	fl.BoolVar(&sw.loadOnce, "load-once", false, "interleaved and duet designs: run the steps that change the data (loads, index builds, writes, cleanups) in the first block only, and repeat only the steady steps in every block, on the tables the first block left (each point keeps its server and data); their ratios then no longer vary with each block's freshly loaded tables")
	fl.Float64Var(&sw.slice, "slice", 5, fmt.Sprintf("interleaved design: seconds per slice of a steady step (query steps, sysbench tests, timed db_bench reads), %g to %g; 0 = whole steps", minSlice, maxSlice))
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

// sweepPoint is one version and profile of a sweep. A point named in --profiles
// (NAME=PROFILE) is called by its name: two points may then share a profile (an A/A
// comparison, or a known effect with --think).
type sweepPoint struct {
	version, profile, label string
	// clients is the point's --clients; byClients says the sweep has a concurrency axis,
	// so the count is part of the point's name ("/c4").
	clients   int
	byClients bool
	// vary are the point's values of the --vary axes, in their order: FLAG, VALUE.
	vary [][2]string
	// as is the point's own name (NAME=PROFILE), "" for a profile given by itself.
	as string
	// think is the pause of its closed-loop workers after each operation (--think).
	think time.Duration
	// embedded: the engine runs inside dbperf (no version in the point's name).
	embedded bool
	// latency is the point's --node-latency, a sweep's distance axis (byLatency: the
	// sweep has one, so the latency is part of the point's name, "/lat=5ms").
	latency   time.Duration
	byLatency bool
}

func (p sweepPoint) name() string {
	prof := p.profile
	if p.as != "" {
		prof = p.as
	}
	c := ""
	if p.byClients {
		c = fmt.Sprintf("/c%d", p.clients)
	}
	for _, v := range p.vary {
		c += "/" + v[0] + "=" + v[1]
	}
	if p.byLatency {
		c += "/lat=" + p.latency.String()
	}
	if p.embedded {
		return prof + c
	}
	v := p.version
	if v == "" {
		v = "default"
	}
	return v + "/" + prof + c
}

// minSlice and maxSlice bound --slice (0 aside): a shorter slice is mostly the switch
// between points (0.0001 stored thousands of runs a minute), a longer one no longer
// alternates the points within a step.
const minSlice, maxSlice = 0.5, 3600.0

// namedProfile is one --profiles entry: PROFILE or NAME=PROFILE.
type namedProfile struct{ name, profile string }

// parseProfiles splits --profiles into named profiles, dropping a value repeated as it is
// and refusing two points of one name (a=default,a=cached; cached,cached=default).
func parseProfiles(vs []string) ([]namedProfile, error) {
	var out []namedProfile
	seen := map[string]bool{}
	for _, v := range dedupe(vs) {
		np := namedProfile{profile: v}
		if n, p, ok := strings.Cut(v, "="); ok {
			n, p = strings.TrimSpace(n), strings.TrimSpace(p)
			if n == "" || p == "" || strings.ContainsAny(n, "/=") || strings.IndexFunc(n, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				return nil, fmt.Errorf("--profiles %q: name a point NAME=PROFILE, NAME printable, without / or =, e.g. a=default,b=default", v)
			}
			np = namedProfile{name: n, profile: p}
		}
		key := np.name
		if key == "" {
			key = np.profile
		}
		if seen[key] {
			return nil, fmt.Errorf("--profiles %q: a second point named %s; give each point its own name, e.g. a=default,b=cached", v, key)
		}
		seen[key] = true
		out = append(out, np)
	}
	return out, nil
}

// parseThink reads --think NAME=DURATION values.
func parseThink(vs []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, v := range vs {
		n, d, ok := strings.Cut(v, "=")
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if !ok || strings.TrimSpace(n) == "" || err != nil || dur <= 0 {
			return nil, fmt.Errorf("--think %q: give NAME=DURATION with a point's name and a positive duration, e.g. --think b=200us", v)
		}
		if _, ok := out[strings.TrimSpace(n)]; ok {
			return nil, fmt.Errorf("--think %q: point %s has a --think already; give one per point", v, strings.TrimSpace(n))
		}
		out[strings.TrimSpace(n)] = dur
	}
	return out, nil
}

// sweepKind is what kind of engine a sweep runs: a key-value engine is swept over its
// profiles (LSM options) only, the library dbperf links being its one version; an
// embedded SQL engine has neither versions nor profiles, and is swept only over named
// points of its one configuration (an A/A comparison, a known effect with --think).
type sweepKind struct{ kv, embedded bool }

// managed says the points run on servers dbperf starts (versions and profiles).
func (k sweepKind) managed() bool { return !k.kv && !k.embedded }

// sweepPlan is a sweep checked and expanded: its config, engine, points and how one
// point's config is resolved.
type sweepPlan struct {
	sweepKind
	cfg      *config.Run
	eng      engine.Engine
	versions []string
	prefix   string
	points   []sweepPoint
	resolve  func(sweepPoint) (*config.Run, error)
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
		if err := checkResume(ctx, cmd, sp.cfg, params, sp.points, sp.resolve, sp.prefix); err != nil {
			return err
		}
	}
	if sp.managed() {
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
	sp.sweepKind = kind
	f.managed = kind.managed()
	cfg, eng, err := checkRun(cmd, env, wl, params, f)
	if err != nil {
		return nil, err
	}
	sp.cfg, sp.eng = cfg, eng
	sp.resolve = sweepResolver(cmd, env, wl, params, f, cfg, kind)
	axes, err := parseVary(cmd, sw.vary)
	if err != nil {
		return nil, badInput(err)
	}
	sp.versions = dedupe(sw.versions)
	if len(sp.versions) == 0 {
		sp.versions = []string{""}
	}
	if len(named) == 0 {
		named = []namedProfile{{profile: cfg.Profile}}
	}
	sp.prefix = cfg.Label
	if sp.prefix == "" {
		sp.prefix = "sweep-" + wl.Meta().Name + "-" + strings.ReplaceAll(engineLabel(cfg), "/", "-") + "-" + time.Now().Format("20060102-150405")
	}
	counts := sw.clients
	if len(counts) == 0 {
		counts = []int{cfg.Clients}
	}
	var perr []error
	for _, v := range sp.versions {
		for _, np := range named {
			for _, n := range counts {
				for _, vals := range crossVary(axes) {
					pt := sweepPoint{version: v, profile: np.profile, as: np.name, think: think[np.name], embedded: kind.embedded,
						clients: n, byClients: len(counts) > 1, vary: vals}
					if err := sp.checkPoint(pt); err != nil {
						perr = append(perr, fmt.Errorf("%s: %w", pt.name(), err))
					}
					pt.label = sp.prefix + "/" + pt.name()
					sp.points = append(sp.points, pt)
				}
			}
		}
	}
	if len(perr) > 0 {
		return nil, badInput(errors.Join(perr...))
	}
	sp.points = latencyPoints(sp.points, lats, sp.prefix)
	if sw.point != "" {
		var names []string
		for _, pt := range sp.points {
			names = append(names, pt.name())
			if pt.name() == sw.point {
				sp.points = []sweepPoint{pt}
				break
			}
		}
		if len(sp.points) != 1 || sp.points[0].name() != sw.point {
			return nil, badInput(fmt.Errorf("--point %q: no point of this sweep is named so; its points: %s", sw.point, strings.Join(names, ", ")))
		}
	}
	return sp, nil
}

// checkPoint resolves a point's config and checks it as a run of it would be: its target,
// its profile (a managed server's), its clients.
func (sp *sweepPlan) checkPoint(pt sweepPoint) error {
	pc, err := sp.resolve(pt)
	if err != nil {
		return err
	}
	pc.EngineVersion = pt.version
	var errs []error
	if err := checkTarget(pc, sp.eng.Meta()); err != nil {
		errs = append(errs, err)
	}
	if sp.managed() {
		if _, _, err := server.ReadProfile(pc.ProfilesDir, pc.Engine, pt.profile); err != nil {
			errs = append(errs, fmt.Errorf("--profiles: %w", err))
		}
	}
	pc.Clients = pt.clients
	if err := pc.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkSweepFlags checks the flags a sweep adds to run's (and those it refuses), every
// problem a line: the named points, their --think, the latency axis and the engine's kind.
func checkSweepFlags(cmd *cobra.Command, f *runFlags, sw *sweepFlags) ([]namedProfile, map[string]time.Duration, []time.Duration, sweepKind, []string) {
	var errs []string
	changed := cmd.Flags().Changed
	if f.q.queue {
		if sw.resume {
			errs = append(errs, "--resume: a queued sweep needs none: enqueuing it again (same --label) adds only the points not queued yet")
		}
		if changed("design") && sw.design != designSequential {
			errs = append(errs, fmt.Sprintf("--design %s: with --queue each point is a job of its own, run by whichever agent takes it: the design is sequential", sw.design))
		}
		sw.design = designSequential
	}
	if sw.point != "" {
		sw.design = designSequential
	}
	errs = append(errs, refusedSweepFlags(changed, f, sw)...)
	named, err := parseProfiles(sw.profiles)
	if err != nil {
		errs = append(errs, err.Error())
	}
	think, err := parseThink(sw.think)
	if err != nil {
		errs = append(errs, err.Error())
	}
	lats, err := sweepLatencies(changed("node-latency"), &f.cluster)
	if err != nil {
		errs = append(errs, err.Error())
	}
	var kind sweepKind
	if e, err := catalog.Engine(f.engine, catalog.EngineOptions{StorageEngine: f.storageEngine}); err == nil {
		m := e.Meta()
		kind = sweepKind{kv: m.Kind == engine.KindKV, embedded: m.Embedded && m.Kind != engine.KindKV}
		errs = append(errs, kindProblems(kind, f.engine, named, sw)...)
	}
	for n := range think {
		if !slices.ContainsFunc(named, func(np namedProfile) bool { return np.name == n }) {
			errs = append(errs, fmt.Sprintf("--think %s=…: no point is named %s; name points in --profiles NAME=PROFILE", n, n))
		}
	}
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
	if sw.loadOnce && sw.design == designSequential {
		errs = append(errs, "--load-once: only with --design interleaved or duet (a sequential design runs each repeat whole); drop --load-once")
	}
	if !slices.Contains(designs(), sw.design) {
		errs = append(errs, fmt.Sprintf("--design %q: use %s", sw.design, strings.Join(designs(), ", ")))
	}
	if sw.slice != 0 && !(sw.slice >= minSlice && sw.slice <= maxSlice) { // NaN too
		errs = append(errs, fmt.Sprintf("--slice %g: give 0 (whole steps) or the seconds of a slice, from %g to %g", sw.slice, minSlice, maxSlice))
	}
	if f.limits.cpus > 0 && sw.design == designDuet {
		errs = append(errs, "--server-cpus: the duet design pins each point's server to CPUs of its own; drop --server-cpus, or use --design interleaved or sequential")
	}
	return errs
}

// kindProblems are what a sweep of this kind of engine cannot do (sweepKind's comment).
func kindProblems(kind sweepKind, engineName string, named []namedProfile, sw *sweepFlags) []string {
	onlyDefault := len(named) > 0
	for _, np := range named {
		onlyDefault = onlyDefault && np.name != "" && np.profile == "default"
	}
	switch {
	case kind.kv && len(sw.versions) > 0:
		return []string{fmt.Sprintf("--versions: --engine %s is the library dbperf links (%s has one version); sweep it over --profiles", engineName, engineName)}
	case kind.kv && sw.design == designDuet:
		return []string{fmt.Sprintf("--design duet: --engine %s compacts and flushes on threads of its own that dbperf cannot pin to a point's CPUs; use --design interleaved", engineName)}
	case kind.embedded && (len(sw.versions) > 0 || !onlyDefault && !(len(named) == 0 && (len(sw.clients) > 1 || len(sw.vary) > 0))):
		return []string{fmt.Sprintf("--engine %s is embedded: a sweep is over versions or profiles of a managed server (postgres, mariadb), over the profiles of a key-value engine (rocksdb, pebble), or over named points of one configuration (--profiles a=default,b=default)", engineName)}
	}
	return nil
}

// sweepResolver is the configuration of one point: a key-value engine's profile is part
// of the workload's parameters (its LSM options), so they are resolved again for it. A
// point with --vary values is resolved again too: its flags set to its values, the shared
// workload.Params resolved for it (each workload's Plan copies them, so a point planned
// keeps its own). --cpu-profile's rate, call graph and perf's availability are the
// sweep's, read once before the first point (prepareCPUProfile): a point resolved again
// takes them.
func sweepResolver(cmd *cobra.Command, env Env, wl workload.Workload, params workload.Params, f *runFlags, cfg *config.Run, kind sweepKind) func(sweepPoint) (*config.Run, error) {
	resolve := func(pt sweepPoint) (*config.Run, error) {
		if !kind.kv && len(pt.vary) == 0 {
			pc := *cfg
			if !kind.embedded {
				pc.Profile = pt.profile
			}
			return &pc, nil
		}
		for _, v := range pt.vary {
			if err := cmd.Flags().Set(v[0], v[1]); err != nil {
				return nil, fmt.Errorf("--vary %s=%s: %w", v[0], v[1], err)
			}
		}
		if kind.kv {
			f.profile = pt.profile
		}
		pc, _, err := checkRun(cmd, env, wl, params, f)
		if err != nil {
			return nil, err
		}
		if kind.managed() {
			pc.Profile = pt.profile
		}
		return pc, nil
	}
	resolve = withNodeLatency(resolve)
	return func(pt sweepPoint) (*config.Run, error) {
		pc, err := resolve(pt)
		if err == nil && pc.CPUProfileDir != "" {
			pc.CPUProfileDir, pc.CPUProfileHz, pc.CPUProfileOff = cfg.CPUProfileDir, cfg.CPUProfileHz, cfg.CPUProfileOff
			pc.CPUProfileCallGraph = cfg.CPUProfileCallGraph
		}
		return pc, err
	}
}

// queueSweep enqueues a sweep's points, a job each (--queue): each point's job is the
// sweep's command line with the point's name, run sequentially by whichever agent takes it.
func queueSweep(ctx context.Context, env Env, sp *sweepPlan, f *runFlags) error {
	if err := checkQueue(sp.cfg.ResultsPath, &f.q, f.dsn); err != nil {
		return err
	}
	jobs := make([]fleet.JobArgs, len(sp.points))
	for i, pt := range sp.points {
		argv := append(append([]string(nil), sp.queuedArgv...), "--design="+designSequential, "--label="+sp.prefix, "--point="+pt.name())
		jobs[i] = fleet.JobArgs{Argv: argv, Sweep: sp.prefix, Point: pt.name(), Class: f.q.class}
	}
	if err := enqueue(ctx, env, sp.cfg.ResultsPath, jobs); err != nil {
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
	var groups []report.Group
	var lastFailed error
	if sw.design != designSequential && len(sp.points) > 1 {
		groups, lastFailed, err = sweepInterleaved(ctx, env, cfg, wl, params, sp.eng, st, sp.points, sp.resolve, sp.prefix, sw)
	} else {
		groups, lastFailed, err = sweepSequential(ctx, env, cfg, wl, params, sp.eng, st, sp.points, sp.resolve, sp.prefix, sw)
	}
	if err != nil {
		return err
	}
	if cfg.Quiet || len(groups) == 0 {
		return lastFailed
	}
	cmp, err := compareGroups(ctx, st, groups)
	if err != nil {
		return err
	}
	if len(sw.clients) > 1 {
		// The concurrency axis: its tables first, the seeds' view of such a sweep.
		cmp.Tables = append(cmp.ConcurrencyTables(concurrencyPoints(sp.points, groups)), cmp.Tables...)
	}
	again := fmt.Sprintf("dbperf report %s/… to compare them again", sp.prefix)
	if len(sw.clients) > 1 {
		again += "; points at different counts of clients need --force there, a different count changes every figure"
	}
	fmt.Fprintf(env.Out, "\nsweep %s: %d points, %s design (%s)\n", sp.prefix, len(groups), sw.design, again)
	if err := renderCompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == ""); err != nil {
		return err
	}
	return lastFailed
}

// sweepInterleaved runs the points in randomized blocks (interleaved.runBlocks), --repeat
// blocks (less those a --resume finds stored), and returns the points' finished runs.
func sweepInterleaved(ctx context.Context, env Env, cfg *config.Run, wl workload.Workload, params workload.Params, eng engine.Engine,
	st *store.Store, points []sweepPoint, resolve func(sweepPoint) (*config.Run, error), prefix string, sw *sweepFlags) ([]report.Group, error, error) {
	first, blocks := 1, cfg.Repeat
	if sw.resume {
		var labels []string
		for _, p := range points {
			labels = append(labels, p.label)
		}
		done, maxBlock, err := interleavedBlocksDone(ctx, st, labels)
		if err != nil {
			return nil, nil, err
		}
		first, blocks = maxBlock+1, cfg.Repeat-done
		if !cfg.Quiet {
			fmt.Fprintf(env.Out, "sweep %s: %d of %d blocks stored finished, %d to run\n", prefix, min(done, cfg.Repeat), cfg.Repeat, max(blocks, 0))
		}
	}
	il := &interleaved{env: env, wl: wl, params: params, eng: eng, st: st, prefix: prefix,
		slice: seconds(sw.slice), resolve: resolve, quiet: cfg.Quiet, loadOnce: sw.loadOnce, seed: cfg.Seed,
		// The blocks' orders come from --seed, so a sweep can be repeated exactly.
		rng:   rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		prog:  progress.New(env.Out, env.IsTerminal, cfg.Quiet),
		store: newStoreOpts(env, cfg)}
	for _, p := range points {
		il.points = append(il.points, &trialPoint{sweepPoint: p})
	}
	if sw.design == designDuet {
		cpus, err := duetCPUs(len(points))
		if err != nil {
			return nil, nil, badInput(err)
		}
		il.duet, il.cpus, il.procs = true, cpus, &runner.Procs{}
	}
	if !cfg.Quiet && blocks > 0 {
		var names []string
		for _, p := range points {
			names = append(names, p.name())
		}
		if il.duet {
			fmt.Fprintf(env.Out, "sweep %s: %s in a duet, %s of every step on all points at once, each point on CPUs of its own\n", prefix, strings.Join(names, ", "), plural(max(blocks, 0), "block"))
		} else {
			fmt.Fprintf(env.Out, "sweep %s: %s interleaved, %s of every step in a random order each\n", prefix, strings.Join(names, ", "), plural(max(blocks, 0), "block"))
		}
	}
	var lastFailed error
	if blocks > 0 {
		// --cpu-profile: one recording for the sweep, sampling before the points' servers
		// start (probe.Launch's reason), folded once after the last block.
		if rec, err := probe.Launch(ctx, cpuOptions(cfg)); err != nil {
			fmt.Fprintf(env.Err, "dbperf: no CPU profiles: %v\n", err)
		} else if rec != nil {
			if il.cpu, err = probe.NewCPU(cpuOptions(cfg), rec); err != nil {
				_ = rec.Close()
				return nil, nil, badInput(err)
			}
		}
		var err error
		lastFailed, err = il.runBlocks(ctx, first, blocks)
		if perr := il.foldProfiles(ctx); perr != nil && err == nil {
			err = perr
		}
		if err != nil {
			if ee, ok := asExit(err); ok && ee.code == ExitInterrupted {
				return nil, lastFailed, &exitError{code: ExitInterrupted, err: fmt.Errorf("sweep interrupted: %w; resume with --label %s --resume", ee.err, prefix)}
			}
			return nil, lastFailed, err
		}
	}
	var groups []report.Group
	for _, p := range points {
		ids, err := sweepq.FinishedRuns(ctx, st, p.label)
		if err != nil {
			return nil, lastFailed, err
		}
		if len(ids) > 0 {
			groups = append(groups, report.Group{Name: p.name(), RunIDs: ids})
		}
	}
	return groups, lastFailed, nil
}

// sweepSequential runs each point's --repeat runs in turn, points in order (--design
// sequential; also a sweep of one point).
func sweepSequential(ctx context.Context, env Env, cfg *config.Run, wl workload.Workload, params workload.Params, eng engine.Engine,
	st *store.Store, points []sweepPoint, resolve func(sweepPoint) (*config.Run, error), prefix string, sw *sweepFlags) ([]report.Group, error, error) {
	var groups []report.Group
	var lastFailed error
	for i, pt := range points {
		var ids []int64
		var err error
		if sw.resume {
			if ids, err = sweepq.FinishedRuns(ctx, st, pt.label); err != nil {
				return nil, lastFailed, err
			}
		}
		todo := cfg.Repeat - len(ids)
		if !cfg.Quiet {
			if todo <= 0 {
				fmt.Fprintf(env.Out, "sweep point %d of %d, %s: %d finished runs stored, skipped\n", i+1, len(points), pt.name(), len(ids))
			} else {
				fmt.Fprintf(env.Out, "sweep point %d of %d, %s (label %s)\n", i+1, len(points), pt.name(), pt.label)
			}
		}
		if todo > 0 {
			pc, err := resolve(pt)
			if err != nil {
				return nil, lastFailed, err // checked above for every point
			}
			pc.EngineVersion, pc.Label = pt.version, pt.label
			pc.Think, pc.Clients = pt.think, pt.clients
			got, failed, err := runRepeats(ctx, env, pc, wl, params, eng, st, todo)
			ids = append(ids, got...)
			if failed != nil {
				lastFailed = failed
			}
			if err != nil {
				if ee, ok := asExit(err); ok && ee.code == ExitInterrupted {
					// ee.err says what the run kept, and where: a spill file's path
					// when the store failed (issue 40 M3: it was dropped here).
					return nil, lastFailed, &exitError{code: ExitInterrupted, err: fmt.Errorf("sweep interrupted at %s: %w; resume with --label %s --resume", pt.name(), ee.err, prefix)}
				}
				return nil, lastFailed, fmt.Errorf("sweep point %s: %w", pt.name(), err)
			}
		}
		if len(ids) > 0 {
			groups = append(groups, report.Group{Name: pt.name(), RunIDs: ids})
		}
	}
	return groups, lastFailed, nil
}

// dedupe drops empty and repeated values, keeping the first of each.
func dedupe(vs []string) []string {
	var out []string
	for _, v := range vs {
		v = strings.TrimSpace(v)
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// concurrencyPoints places each compared group on the sweep's concurrency axis: the
// point's name without its count, and its count.
func concurrencyPoints(points []sweepPoint, groups []report.Group) []report.ConcurrencyPoint {
	out := make([]report.ConcurrencyPoint, 0, len(groups))
	for _, g := range groups {
		for _, p := range points {
			if p.name() == g.Name {
				q := p
				q.byClients = false
				out = append(out, report.ConcurrencyPoint{Config: q.name(), Clients: p.clients})
				break
			}
		}
	}
	return out
}

// varyAxis is one --vary axis: a workload flag and its values.
type varyAxis struct {
	flag   string
	values []string
}

// parseVary reads --vary FLAG=V1,V2,…: FLAG a flag of the workload's own (not one the
// sweep or the run owns), each value one the flag accepts, at least one value.
func parseVary(cmd *cobra.Command, vs []string) ([]varyAxis, error) {
	var out []varyAxis
	var errs []error
	for _, v := range vs {
		name, list, ok := strings.Cut(v, "=")
		name = strings.TrimPrefix(strings.TrimSpace(name), "--")
		fl := cmd.Flags().Lookup(name)
		switch {
		case !ok || name == "" || strings.TrimSpace(list) == "":
			errs = append(errs, fmt.Errorf("--vary %q: give FLAG=V1,V2,… with a flag of the workload, e.g. --vary rows=100000,200000", v))
			continue
		case fl == nil:
			errs = append(errs, fmt.Errorf("--vary %s: the workload has no flag --%s (see its --help)", name, name))
			continue
		case sweepOwnFlag(name):
			errs = append(errs, fmt.Errorf("--vary %s: --%s is the sweep's or the run's own; sweep versions, profiles and clients with --versions, --profiles and --clients", name, name))
			continue
		}
		ax := varyAxis{flag: name}
		for _, x := range strings.Split(list, ",") {
			x = strings.TrimSpace(x)
			if x == "" || slices.Contains(ax.values, x) {
				continue
			}
			ax.values = append(ax.values, x)
		}
		for _, o := range out {
			if o.flag == name {
				errs = append(errs, fmt.Errorf("--vary %s: given twice; list its values once", name))
			}
		}
		out = append(out, ax)
	}
	return out, errors.Join(errs...)
}

// sweepOwnFlag says a flag is one a sweep sets per point or run-wide, never a --vary axis.
func sweepOwnFlag(name string) bool {
	switch name {
	case "engine", "engine-version", "versions", "profile", "profiles", "clients", "label", "results", "repeat",
		"design", "slice", "load-once", "think", "vary", "resume", "managed", "dsn", "workdir", "keep", "quiet", "seed",
		"mysql-storage-engine", "cache-dir", "profiles-dir", "steps", "store-timeout", "cpu-profile", "explain",
		"server-memory", "server-cpus", "build-id", "report-interval":
		return true
	}
	return false
}

// crossVary is every combination of the axes' values, the last axis innermost; one empty
// combination without axes.
func crossVary(axes []varyAxis) [][][2]string {
	out := [][][2]string{nil}
	for _, ax := range axes {
		var next [][][2]string
		for _, c := range out {
			for _, v := range ax.values {
				next = append(next, append(slices.Clone(c), [2]string{ax.flag, v}))
			}
		}
		out = next
	}
	return out
}

// compareGroups is the relative comparison of a sweep's points, the first the base.
func compareGroups(ctx context.Context, st *store.Store, groups []report.Group) (report.Comparison, error) {
	var all []int64
	for _, g := range groups {
		all = append(all, g.RunIDs...)
	}
	runs, err := st.Results(context.WithoutCancel(ctx), all)
	if err != nil {
		return report.Comparison{}, err
	}
	return report.Compare(report.Build(runs), groups, 0), nil
}
