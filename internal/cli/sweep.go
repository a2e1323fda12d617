package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// sweepFlags are `dbperf sweep`'s own flags.
type sweepFlags struct {
	versions []string
	profiles []string
	resume   bool
}

// newSweepCmd is `dbperf sweep`, with one subcommand per workload: the workload over
// several versions and/or config profiles of a managed engine.
func newSweepCmd(env Env) *cobra.Command {
	var names []string
	for _, w := range catalog.Workloads() {
		names = append(names, w.Meta().Name)
	}
	cmd := &cobra.Command{
		Use:   "sweep WORKLOAD",
		Short: "Run a workload over several versions and/or config profiles of a managed engine, then compare them",
		Long: `Run one workload over several versions (--versions) and/or config profiles (--profiles)
of a managed engine (the cross product, versions outer), each point on its own throwaway
server, --repeat times, stored with the label SWEEP/VERSION/PROFILE (SWEEP: --label, by
default sweep-WORKLOAD-ENGINE-TIME), and end with the relative report, the first point
being the base. One profile is applied to every version; a setting a version lacks is
left out and said so in the run's env. A key-value engine (rocksdb, pebble) is swept over
its --profiles (LSM options), each point on a fresh database: VERSION is "default".

--resume with the --label of an interrupted sweep skips the points already stored with
--repeat finished (status ok) runs and completes the others.

Exit status: 0 every run ok, 1 a step failed in some run (the sweep goes on), 2 bad
input, 130 interrupted (every run measured so far is kept; resume with --resume).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput(fmt.Errorf("sweep needs one workload, e.g. \"dbperf sweep insertbench --engine postgres --versions 13,15\": use one of %s", strings.Join(names, ", ")))
			}
			if _, err := catalog.Workload(args[0]); err != nil {
				return badInput(err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return badInput(fmt.Errorf("unknown workload %q", args[0]))
		},
	}
	for _, w := range catalog.Workloads() {
		cmd.AddCommand(newSweepWorkloadCmd(env, w))
	}
	return cmd
}

func newSweepWorkloadCmd(env Env, wl workload.Workload) *cobra.Command {
	var sw sweepFlags
	cmd, f, params := newWorkloadCmd(env, wl)
	name := wl.Meta().Name
	cmd.Short = "Sweep " + name + " over versions and/or profiles of a managed engine"
	cmd.Long = fmt.Sprintf(`Run %s over several versions and/or config profiles of a managed engine (see
dbperf sweep --help), then print the relative report of the points, the first the base.`, name)
	cmd.Example = fmt.Sprintf(`  dbperf sweep %[1]s --engine postgres --versions 13,15 --scale tiny
  dbperf sweep %[1]s --engine mariadb --versions 10.11,11.4 --profiles default,cached --repeat 3
  dbperf sweep %[1]s --engine postgres --versions 12,13,14,15,16,17,18 --label pg-versions --resume`, name)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runSweep(cmd.Context(), env, cmd, wl, params, f, &sw)
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&sw.versions, "versions", nil, "engine versions, e.g. 13,15 (PostgreSQL: Debian's 15 or installed from Maven Central; MariaDB: 10.11, 11.4); default: the default version")
	fl.StringSliceVar(&sw.profiles, "profiles", nil, "config profiles (built in, or in --profiles-dir), e.g. default,cached; default: --profile")
	fl.BoolVar(&sw.resume, "resume", false, "resume the sweep with this --label: skip points already stored with --repeat finished runs")
	return cmd
}

// sweepPoint is one version and profile of a sweep.
type sweepPoint struct{ version, profile, label string }

func (p sweepPoint) name() string {
	v := p.version
	if v == "" {
		v = "default"
	}
	return v + "/" + p.profile
}

func runSweep(ctx context.Context, env Env, cmd *cobra.Command, wl workload.Workload, params workload.Params, f *runFlags, sw *sweepFlags) error {
	var errs []string
	changed := cmd.Flags().Changed
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
	// A key-value engine is swept over its profiles (LSM options) only: the library
	// dbperf links is its one version.
	kv := false
	if e, err := catalog.Engine(f.engine, catalog.EngineOptions{StorageEngine: f.storageEngine}); err == nil {
		m := e.Meta()
		kv = m.Kind == engine.KindKV
		switch {
		case kv && len(sw.versions) > 0:
			errs = append(errs, fmt.Sprintf("--versions: --engine %s is the library dbperf links (%s has one version); sweep it over --profiles", f.engine, f.engine))
		case m.Embedded && !kv:
			errs = append(errs, fmt.Sprintf("--engine %s is embedded: a sweep is over versions or profiles of a managed server (postgres, mariadb) or over the profiles of a key-value engine (rocksdb, pebble)", f.engine))
		}
	}
	if len(errs) > 0 {
		return badInput(errors.New(strings.Join(errs, "\n")))
	}
	f.managed = !kv
	cfg, eng, err := checkRun(cmd, env, wl, params, f)
	if err != nil {
		return err
	}
	// resolve is the configuration of one point: a key-value engine's profile is part of
	// the workload's parameters (its LSM options), so they are resolved again for it.
	resolve := func(p string) (*config.Run, error) {
		if !kv {
			pc := *cfg
			pc.Profile = p
			return &pc, nil
		}
		f.profile = p
		pc, _, err := checkRun(cmd, env, wl, params, f)
		return pc, err
	}
	versions, profiles := dedupe(sw.versions), dedupe(sw.profiles)
	if len(versions) == 0 {
		versions = []string{""}
	}
	if len(profiles) == 0 {
		profiles = []string{cfg.Profile}
	}
	prefix := cfg.Label
	if prefix == "" {
		prefix = "sweep-" + wl.Meta().Name + "-" + strings.ReplaceAll(engineLabel(cfg), "/", "-") + "-" + time.Now().Format("20060102-150405")
	}
	var points []sweepPoint
	var perr []error
	for _, v := range versions {
		for _, p := range profiles {
			pc, err := resolve(p)
			if err != nil {
				perr = append(perr, fmt.Errorf("%s: %w", sweepPoint{version: v, profile: p}.name(), err))
				continue
			}
			pc.EngineVersion = v
			if err := checkTarget(pc, eng.Meta()); err != nil {
				perr = append(perr, fmt.Errorf("%s/%s: %w", v, p, err))
			}
			points = append(points, sweepPoint{version: v, profile: p, label: prefix + "/" + sweepPoint{version: v, profile: p}.name()})
		}
	}
	if len(perr) > 0 {
		return badInput(errors.Join(perr...))
	}

	st, err := store.Open(ctx, cfg.ResultsPath)
	if err != nil {
		return badInput(err)
	}
	defer st.Close()
	var groups []report.Group
	var lastFailed error
	for i, pt := range points {
		var ids []int64
		if sw.resume {
			if ids, err = finishedRuns(ctx, st, pt.label); err != nil {
				return err
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
			pc, err := resolve(pt.profile)
			if err != nil {
				return err // checked above for every point
			}
			pc.EngineVersion, pc.Label = pt.version, pt.label
			got, failed, err := runRepeats(ctx, env, pc, wl, params, eng, st, todo)
			ids = append(ids, got...)
			if failed != nil {
				lastFailed = failed
			}
			if err != nil {
				var ee *exitError
				if errors.As(err, &ee) && ee.code == ExitInterrupted {
					return &exitError{code: ExitInterrupted, err: fmt.Errorf("sweep interrupted at %s: resume with --label %s --resume", pt.name(), prefix)}
				}
				return fmt.Errorf("sweep point %s: %w", pt.name(), err)
			}
		}
		if len(ids) > 0 {
			groups = append(groups, report.Group{Name: pt.name(), RunIDs: ids})
		}
	}
	if !cfg.Quiet && len(groups) > 0 {
		var all []int64
		for _, g := range groups {
			all = append(all, g.RunIDs...)
		}
		runs, err := st.Results(context.WithoutCancel(ctx), all)
		if err != nil {
			return err
		}
		cmp := report.Compare(report.Build(runs), groups, 0)
		fmt.Fprintf(env.Out, "\nsweep %s: %d points (dbperf report %s/… to compare them again)\n", prefix, len(groups), prefix)
		if err := report.RenderCompareText(env.Out, cmp, env.IsTerminal && env.getenv("NO_COLOR") == ""); err != nil {
			return err
		}
	}
	return lastFailed
}

// finishedRuns are the ids of label's runs that finished ok.
func finishedRuns(ctx context.Context, st *store.Store, label string) ([]int64, error) {
	sums, err := st.Runs(ctx, store.RunFilter{Label: label})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, s := range sums {
		if s.Status == store.RunOK {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
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
