package record

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

const (
	// DefaultTimeout is --store-timeout's default.
	DefaultTimeout = 30 * time.Second
	// storeGrace is how long store writes may still take after Ctrl-C.
	storeGrace = time.Second
	// spillTimeout bounds the writes of a spill file (a local file: normally milliseconds).
	spillTimeout = time.Minute
)

// Options are the store-writing settings of one command's runs (NewOptions).
type Options struct {
	// Timeout is --store-timeout: how long a write may keep failing (retried).
	Timeout time.Duration
	// SpillDir is where spill files go (SpillDir).
	SpillDir string
	// down, shared by the runs of one command (a sweep's many), is set when a write got no
	// answer within the timeout: the runs' later writes fail at once instead of waiting
	// the timeout again each.
	down *atomic.Bool
}

// NewOptions are the settings of one command's runs, which share them: timeout is
// --store-timeout (DefaultTimeout when not positive), spillDir where spill files go.
func NewOptions(timeout time.Duration, spillDir string) Options {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return Options{Timeout: timeout, SpillDir: spillDir, down: new(atomic.Bool)}
}

// SpillDir is where spill files go, by the environment getenv reads: $DBPERF_SPILL_DIR,
// else $XDG_STATE_HOME/dbperf/spill, else ~/.local/state/dbperf/spill (state that
// outlives a reboot, unlike the temp dir).
func SpillDir(getenv func(string) string) string {
	if d := getenv("DBPERF_SPILL_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "dbperf", "spill")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "dbperf", "spill")
	}
	return filepath.Join(os.TempDir(), "dbperf-spill")
}
