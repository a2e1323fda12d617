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
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/managed"
	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/session"
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

// workDir is the engine's directory and its remover (session.WorkDir).
func workDir(cfg *config.Run, engineName string) (string, func(), error) {
	return session.WorkDir(cfg, engineName)
}

// engineLabel names the engine in the store (session.EngineLabel).
func engineLabel(cfg *config.Run) string { return session.EngineLabel(cfg) }

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
