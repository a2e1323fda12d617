package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/cluster"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workdir"
	"github.com/dbperf/dbperf/internal/workload"
)

// A Target is an opened engine with everything a run on it stores and measures: how it
// was reached, its version and settings, the /proc sampler, which processes are the
// server, the run's env. A run opens one; an interleaved sweep keeps one per point open
// across its trials.
type Target struct {
	Handle engine.Handle
	// Dir is the directory whose filesystem the env describes and whose block devices'
	// IO is counted: the work dir of an embedded engine, a managed server's data dir.
	Dir string
	// ServerPID is a managed server's main process (0 otherwise).
	ServerPID int
	// Cluster is the managed cluster of --cluster (nil: one server or none).
	Cluster *cluster.Run
	// Sampler samples the machine and the server's processes; HW is what it samples.
	Sampler *hwstat.Sampler
	HW      runner.HWTargets
	// Env is the run's env, stored with each run on the target.
	Env map[string]string
	// settings are added to the engine's own settings: profile, redacted DSN, managed.
	settings map[string]string
	// serverEnv is added to the run's env: a managed server's start and limits
	// (managed.Server.Env), a cluster's env.
	serverEnv map[string]string
	// server is the managed server of one (nil for a cluster, an embedded engine or a
	// user's server): Options.CopyOf copies its data.
	server *server.Instance
	eng    engine.Engine
	info   engine.Info
	close  func()
}

// StopServer shuts a managed server down cleanly and leaves its data directory, for
// Options.CopyOf to copy by its files (every page as the shutdown's checkpoint left it);
// Close still removes it. A target without a managed server of its own: nothing.
func (t *Target) StopServer(ctx context.Context) error {
	if t.server == nil {
		return nil
	}
	return t.server.Stop(ctx)
}

// Close closes the engine and stops what Open started.
func (t *Target) Close() { t.close() }

// Open opens the engine for o.Config (a managed server or cluster started, an embedded
// engine in its work dir, or the user's server) and reads what the run stores about it.
// Every error is a *BadInputError (the environment's), or an *InterruptedError after
// Ctrl-C while a server was starting.
func Open(ctx context.Context, o Options) (*Target, error) {
	cfg := o.Config
	if cfg.WorkDir == "" {
		out := io.Discard
		if !cfg.Quiet {
			out = o.Out
		}
		RemoveStaleWorkDirs(out, os.TempDir(), false)
	}
	tg, err := openTarget(ctx, o, func(s string) {
		if !cfg.Quiet {
			fmt.Fprintln(o.Out, s)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			// Ctrl-C or SIGTERM while a server was starting: the server's own output (an
			// initdb cut short) is not the news.
			return nil, &InterruptedError{Err: fmt.Errorf("interrupted while opening %s: nothing was run", cfg.Engine)}
		}
		return nil, badInput(err)
	}
	if err := tg.describe(ctx, o); err != nil {
		tg.close()
		return nil, err
	}
	return tg, nil
}

// describe reads what a run stores about the opened target: the engine's version and
// settings, the HW targets and the run's env.
func (t *Target) describe(ctx context.Context, o Options) error {
	cfg := o.Config
	if err := checkSessions(ctx, cfg, o.Workload, o.Engine, t.Handle); err != nil {
		return err
	}
	info, err := t.Handle.Info(ctx)
	if err != nil {
		return badInput(fmt.Errorf("%s: read version and settings: %w", cfg.Engine, err))
	}
	if t.Sampler, err = hwstat.New(); err != nil {
		return badInput(err)
	}
	if info.Settings == nil {
		info.Settings = map[string]string{}
	}
	maps.Copy(info.Settings, t.settings)
	hwNotes := map[string]string{}
	hw, hwDir := HWTargets(ctx, o.Engine.Meta(), t, info, t.Sampler, hwNotes)
	if t.Dir == "" {
		t.Dir = hwDir // a --dsn server's data dir, when it is on this machine
	}
	env := runEnv(o, t.Sampler, t.Dir)
	if cfg.BuildID != "" {
		env["build_id"] = cfg.BuildID
	}
	if skipped := t.settings["dbperf.profile_skipped"]; skipped != "" {
		// A profile setting this server version lacks was left out (internal/server).
		env["profile_skipped"] = skipped
	}
	maps.Copy(env, hwNotes)
	maps.Copy(env, t.serverEnv) // a managed server's start and limits
	t.eng, t.info, t.HW, t.Env = o.Engine, info, hw, env
	return nil
}

// Meta is what a run of steps on the target stores about itself: wlStored is the
// workload's own parameters (workload.Params.Stored), to which the shared ones and extra
// parameters (an interleaved trial's) are added.
func (t *Target) Meta(cfg *config.Run, wl workload.Workload, wlStored map[string]any, steps []workload.Step, extra map[string]any) store.RunMeta {
	p := StoredParams(cfg, wlStored, steps)
	maps.Copy(p, extra)
	return store.RunMeta{
		Workload: wl.Meta().Name, WorkloadVersion: wl.Meta().Version,
		Engine: EngineLabel(cfg), EngineVersion: t.info.Version, EngineSettings: t.info.Settings,
		Label: cfg.Label, Seed: cfg.Seed, Params: p,
		StepGroups: storeGroups(wl.Meta().Groups),
		Env:        t.Env, StartedAt: time.Now(),
	}
}

// Runner is the step runner on the target.
func (t *Target) Runner(cfg *config.Run) *runner.Runner {
	r := &runner.Runner{Handle: t.Handle, Interval: cfg.ReportInterval, Sampler: t.Sampler, HW: t.HW, Think: cfg.Think}
	if t.Cluster != nil {
		r.Spread = t.Cluster.Spread() // nil without --spread
	}
	return r
}

// openTarget opens the engine: in a work directory (embedded), on a server dbperf starts
// and always stops again (--managed), or on the user's server (--dsn). A key-value engine
// opens with the LSM options of the workload's parameters (workload.KVOptioner). Every
// error is the environment's: the caller reports it before any step runs.
func openTarget(ctx context.Context, o Options, out func(string)) (*Target, error) {
	cfg, eng := o.Config, o.Engine
	meta := eng.Meta()
	t := &Target{settings: map[string]string{}}
	var closers []func()
	t.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*Target, error) {
		t.close()
		return nil, err
	}
	var tg engine.Target
	switch {
	case meta.Embedded:
		dir, cleanup, err := WorkDir(cfg, meta.Name)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, cleanup)
		tg.Dir, t.Dir = dir, dir
		if kv, ok := o.Params.(workload.KVOptioner); ok && meta.Kind == engine.KindKV {
			tg.KV = kv.KVOptions()
			t.settings["dbperf.profile"] = cfg.Profile
			t.settings["dbperf.profile_text"] = cfg.KVProfile
		}
	case cfg.Managed:
		base, cleanup, err := WorkDir(cfg, meta.Name)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, cleanup)
		start := openManaged
		if cfg.Cluster > 1 {
			start = openCluster
		}
		if err := start(ctx, o, meta.Name, base, t, &tg, &closers, out); err != nil {
			return fail(err)
		}
	default:
		dsn, err := ReadAt("--dsn", cfg.DSN)
		if err != nil {
			return fail(err)
		}
		tg.DSN = dsn
		t.settings["dbperf.managed"] = "false"
		t.settings["dbperf.dsn"] = store.RedactDSN(dsn)
	}
	h, err := eng.Open(ctx, tg)
	if err != nil {
		where := tg.Dir
		if tg.DSN != "" {
			where = store.RedactDSN(tg.DSN)
		}
		// A driver's error may quote the DSN, or parts of it: none of its passwords show.
		return fail(store.RedactError(fmt.Errorf("open %s at %s: %w", meta.Name, where, err), tg.DSN))
	}
	closers = append(closers, func() { _ = h.Close() })
	t.Handle = h
	if t.Cluster != nil && cfg.Spread {
		closeSpread, err := t.Cluster.OpenSpread(ctx, eng, h)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, closeSpread)
	}
	if cfg.StorageEngine != "" {
		t.settings["dbperf.storage_engine"] = cfg.StorageEngine
	}
	return t, nil
}

// openManaged starts the run's managed server in base (managed.Start) for t: its close
// (the server stopped, its data removed unless --keep) among the closers, its DSN in tg,
// what the run stores of it recorded, and its notes said through out.
func openManaged(ctx context.Context, o Options, name, base string, t *Target, tg *engine.Target, closers *[]func(), out func(string)) error {
	mo := ManagedOptions(o.Config, name, o.ReadCgroups)
	mo.CopyOf = o.copyOf
	s, err := managed.Start(ctx, mo, base)
	if err != nil {
		return err
	}
	t.server = s.Instance
	*closers = append(*closers, func() {
		for _, l := range s.Close(ctx) {
			out(l)
		}
	})
	tg.DSN, t.Dir, t.ServerPID = s.DSN, s.DataDir, s.PID()
	maps.Copy(t.settings, s.Settings())
	t.serverEnv = s.Env()
	for _, n := range s.Notes() {
		out(n)
	}
	return nil
}

// openCluster starts the run's cluster under base (cluster.Start) and fills in the
// target: node 0's DSN and data dir, what the run stores about the cluster, and how it is
// stopped.
func openCluster(ctx context.Context, o Options, engineName, base string, t *Target, tg *engine.Target,
	closers *[]func(), out func(string)) error {
	cfg := o.Config
	srv, err := catalog.Server(engineName)
	if err != nil {
		return err
	}
	cr, err := cluster.Start(ctx, cluster.Options{
		Engine: engineName, Server: srv, Node: ManagedOptions(cfg, cfg.Engine, o.ReadCgroups).Server(base), Nodes: cfg.Cluster,
		Latency: cfg.NodeLatency, Jitter: cfg.NodeJitter, Spread: cfg.Spread, Keep: cfg.Keep, Out: out,
	})
	if err != nil {
		return err
	}
	*closers = append(*closers, cr.Close)
	n0 := cr.Node0()
	tg.DSN, t.Dir, t.ServerPID = n0.DSN, n0.DataDir, n0.PID()
	t.settings["dbperf.managed"] = "true"
	t.settings["dbperf.profile"] = n0.Profile
	t.settings["dbperf.profile_text"] = n0.Config
	t.settings["dbperf.dsn"] = store.RedactDSN(n0.DSN)
	t.settings["dbperf.cluster"] = cr.Topology()
	if t.serverEnv == nil {
		t.serverEnv = map[string]string{}
	}
	env := cr.Env()
	maps.Copy(t.serverEnv, env)
	t.Cluster = cr
	out(fmt.Sprintf("cluster: %s; %s", cr.Topology(), env[cluster.EnvNodeLatency]))
	return nil
}

// ManagedOptions are the options of cfg's managed server (engine: its name);
// readCgroups reads the machine's cgroup hierarchies (server.ReadCgroups, or a test's).
func ManagedOptions(cfg *config.Run, engine string, readCgroups func() (*server.Cgroups, error)) managed.Options {
	return managed.Options{
		Engine: engine, Version: cfg.EngineVersion, Profile: cfg.Profile,
		ProfilesDir: cfg.ProfilesDir, CacheDir: cfg.CacheDir, MavenURL: cfg.MavenURL, StorageEngine: cfg.StorageEngine,
		Limits:      server.Limits{Memory: cfg.ServerMemory, CPUs: cfg.ServerCPUs},
		ReadCgroups: readCgroups, Keep: cfg.Keep,
	}
}

// ReadAt is the value an option (what names it: --dsn, --results, DBPERF_RESULTS) gives:
// the value itself, or for @FILE the first line of FILE (as `dbperf server start` writes
// it), so a password need not appear on a command line, where every local user can read
// it.
func ReadAt(what, v string) (string, error) {
	path, ok := strings.CutPrefix(v, "@")
	if !ok {
		return v, nil
	}
	if path == "" {
		return "", fmt.Errorf("%s @FILE: name the file holding the DSN", what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s @%s: %w", what, path, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dsn := strings.TrimSpace(line)
	if dsn == "" {
		return "", fmt.Errorf("%s @%s: the file's first line is empty: it must hold the DSN", what, path)
	}
	return dsn, nil
}

// WorkDir returns the engine's directory and a function that removes it when dbperf made
// it (unless --keep).
func WorkDir(cfg *config.Run, engineName string) (string, func(), error) {
	if cfg.WorkDir != "" {
		if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
			return "", nil, fmt.Errorf("--workdir: %w", err)
		}
		unlock, err := workdir.Lock(cfg.WorkDir)
		var inUse *workdir.InUseError
		switch {
		case errors.As(err, &inUse):
			return "", nil, fmt.Errorf("--workdir %s is in use by another dbperf run (%s): wait for it to end, or give another --workdir", inUse.Dir, inUse.Holder)
		case err != nil:
			return "", nil, fmt.Errorf("--workdir %w", err)
		}
		return cfg.WorkDir, unlock, nil
	}
	dir, remove, err := workdir.Temp(workdir.TempOptions{Engine: engineName, Keep: cfg.Keep})
	var tempErr *workdir.TempDirError
	switch {
	case errors.As(err, &tempErr):
		return "", nil, fmt.Errorf("create a work directory: %w (set TMPDIR or pass --workdir)", err)
	case err != nil:
		return "", nil, fmt.Errorf("create a work directory: %w", err)
	}
	return dir, remove, nil
}

// RemoveStaleWorkDirs removes the stale work dirs of tmp (workdir.RemoveStale) and says
// what it freed on w (nothing when there were none); with dryRun it only lists them.
func RemoveStaleWorkDirs(w io.Writer, tmp string, dryRun bool) (removed int, freed int64) {
	r := workdir.RemoveStale(tmp, dryRun)
	for _, f := range r.Failed {
		fmt.Fprintf(w, "could not remove the stale work dir %s: %v\n", f.Path, f.Err)
	}
	if len(r.Paths) > 0 {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		}
		fmt.Fprintf(w, "%s %d work dirs left by dbperf processes that died, %.1f MiB: %s\n",
			verb, len(r.Paths), float64(r.Bytes)/(1<<20), strings.Join(r.Paths, " "))
	}
	return len(r.Paths), r.Bytes
}

// runEnv is the run's env as the sampler sees the machine and dir, with dbperf's build
// and the fleet's job (fleet.RunEnv).
func runEnv(o Options, s *hwstat.Sampler, dir string) map[string]string {
	e := s.Environment(dir)
	e["dbperf_version"] = o.Version
	e["git_commit"] = o.Commit
	maps.Copy(e, fleet.RunEnv(o.getenv))
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
