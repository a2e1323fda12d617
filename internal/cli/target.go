package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/cluster"
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
)

// checkTarget validates how the engine is reached: embedded engines take neither --dsn nor
// --managed; server engines need exactly one of them.
func checkTarget(cfg *config.Run, meta engine.Meta) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if meta.Embedded {
		if cfg.Managed || cfg.DSN != "" {
			add("--engine %s runs inside dbperf: drop --managed and --dsn", meta.Name)
		}
	} else {
		switch {
		case cfg.Managed && cfg.DSN != "":
			add("--managed and --dsn exclude each other: let dbperf start a server (--managed) or name yours (--dsn)")
		case !cfg.Managed && cfg.DSN == "":
			add("--engine %s needs a server: pass --managed to let dbperf start a throwaway one, or --dsn to use yours", meta.Name)
		}
	}
	if cfg.EngineVersion != "" && !cfg.Managed {
		add("--engine-version picks the binaries of a managed server: add --managed")
	}
	if err := checkServerLimits(cfg, meta.Embedded); err != nil {
		errs = append(errs, err)
	}
	if err := checkCluster(cfg, meta); err != nil {
		errs = append(errs, err)
	}
	if cfg.StorageEngine != "" {
		if len(meta.StorageEngines) == 0 {
			add("--mysql-storage-engine applies to --engine %s only", strings.Join(storageEngineOwners(), ", "))
		} else if !slices.Contains(meta.StorageEngines, cfg.StorageEngine) {
			add("--mysql-storage-engine %q: use %s", cfg.StorageEngine, strings.Join(meta.StorageEngines, " or "))
		} else if cfg.Managed {
			if srv, err := catalog.Server(meta.Name); err == nil {
				if err := srv.Check(serverOptions(cfg, "")); err != nil {
					add("--mysql-storage-engine %v; use another --engine-version or storage engine", err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// target is an opened engine with what the run stores about how it was reached.
type target struct {
	h engine.Handle
	// dir is the directory whose filesystem the env describes and whose block devices'
	// IO is counted: the work dir of an embedded engine, a managed server's data dir.
	dir string
	// serverPID is a managed server's main process (0 otherwise).
	serverPID int
	// settings are added to the engine's own settings: profile, redacted DSN, managed.
	settings map[string]string
	// env is added to the run's env: a managed server's limits (managed.Server.Env).
	env map[string]string
	// cluster is the managed cluster of --cluster (nil: one server or none).
	cluster *cluster.Run
	close   func()
}

// openTarget opens the engine: in a work directory (embedded), on a server dbperf starts
// and always stops again (--managed), or on the user's server (--dsn). A key-value engine
// opens with the LSM options of the workload's parameters (workload.KVOptioner). Every
// error is the environment's: the caller reports it with exit status 2 before any step runs.
func openTarget(ctx context.Context, cfg *config.Run, eng engine.Engine, params workload.Params, out func(string)) (*target, error) {
	meta := eng.Meta()
	t := &target{settings: map[string]string{}, close: func() {}}
	var closers []func()
	t.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*target, error) {
		t.close()
		return nil, err
	}
	var tg engine.Target
	switch {
	case meta.Embedded:
		dir, cleanup, err := workDir(cfg, meta.Name)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, cleanup)
		tg.Dir, t.dir = dir, dir
		if o, ok := params.(workload.KVOptioner); ok && meta.Kind == engine.KindKV {
			tg.KV = o.KVOptions()
			t.settings["dbperf.profile"] = cfg.Profile
			t.settings["dbperf.profile_text"] = cfg.KVProfile
		}
	case cfg.Managed && cfg.Cluster > 1:
		base, cleanup, err := workDir(cfg, meta.Name)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, cleanup)
		if err := openCluster(ctx, cfg, meta.Name, base, t, &tg, &closers, out); err != nil {
			return fail(err)
		}
	case cfg.Managed:
		base, cleanup, err := workDir(cfg, meta.Name)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, cleanup)
		if err := openManaged(ctx, cfg, meta.Name, base, t, &tg, &closers, out); err != nil {
			return fail(err)
		}
	default:
		dsn, err := readDSN(cfg.DSN)
		if err != nil {
			return fail(err)
		}
		tg.DSN = dsn
		t.settings["dbperf.managed"] = "false"
		t.settings["dbperf.dsn"] = RedactDSN(dsn)
	}
	h, err := eng.Open(ctx, tg)
	if err != nil {
		where := tg.Dir
		if tg.DSN != "" {
			where = RedactDSN(tg.DSN)
		}
		// A driver's error may quote the DSN, or parts of it: none of its passwords show.
		return fail(store.RedactError(fmt.Errorf("open %s at %s: %w", meta.Name, where, err), tg.DSN))
	}
	closers = append(closers, func() { _ = h.Close() })
	t.h = h
	if t.cluster != nil && cfg.Spread {
		closeSpread, err := t.cluster.OpenSpread(ctx, eng, h)
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
func openManaged(ctx context.Context, cfg *config.Run, name, base string, t *target, tg *engine.Target, closers *[]func(), out func(string)) error {
	s, err := managed.Start(ctx, managedOptions(cfg, name), base)
	if err != nil {
		return err
	}
	*closers = append(*closers, func() {
		for _, l := range s.Close(ctx) {
			out(l)
		}
	})
	tg.DSN, t.dir, t.serverPID = s.DSN, s.DataDir, s.PID()
	for k, v := range s.Settings() {
		t.settings[k] = v
	}
	t.env = s.Env()
	for _, n := range s.Notes() {
		out(n)
	}
	return nil
}

// storageEngineOwners names the engines that offer storage engines (MariaDB).
func storageEngineOwners() []string {
	var out []string
	for _, e := range catalog.Engines(catalog.EngineOptions{}) {
		if len(e.Meta().StorageEngines) > 0 {
			out = append(out, e.Meta().Name)
		}
	}
	return out
}

// serverOptions are the options of the managed server of cfg, under base.
func serverOptions(cfg *config.Run, base string) server.Options {
	return managedOptions(cfg, cfg.Engine).Server(base)
}

// startServer starts a managed server under base, installing its version on first use.
func startServer(ctx context.Context, cfg *config.Run, engineName, base string) (*managed.Server, error) {
	return managed.Start(ctx, managedOptions(cfg, engineName), base)
}

// readDSN is the DSN --dsn names: the value itself, or for @FILE the first line of FILE
// (as `dbperf server start` writes it), so a password need not appear on a command line,
// where every local user can read it.
func readDSN(v string) (string, error) { return readAt("--dsn", v) }

// readAt is the value an option (what names it: --dsn, --results, DBPERF_RESULTS) gives:
// the value itself, or for @FILE the first line of FILE.
func readAt(what, v string) (string, error) {
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

// defaultProfilesDir is the directory of config profiles that add to and override the
// built-in ones when --profiles-dir is not given: $DBPERF_PROFILES, or none ("": the
// built-in profiles only, wherever the binary is and whatever the working directory).
func defaultProfilesDir(env Env) string {
	return env.getenv("DBPERF_PROFILES")
}

// defaultCacheDir is where downloaded server versions go: $DBPERF_CACHE_DIR, else the
// user's cache dir.
func defaultCacheDir(env Env) string {
	if d := env.getenv("DBPERF_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "dbperf")
	}
	return filepath.Join(os.TempDir(), "dbperf-cache")
}
