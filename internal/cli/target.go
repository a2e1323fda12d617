package cli

import (
	"os"
	"path/filepath"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/session"
)

// checkTarget validates how the engine is reached (session.CheckTarget), with the
// machine's cgroups as readCgroups reads them.
func checkTarget(cfg *config.Run, meta engine.Meta) error {
	return session.CheckTarget(cfg, meta, readCgroups)
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
