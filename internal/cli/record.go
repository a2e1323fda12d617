package cli

import (
	"fmt"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/store"
)

// newStoreOpts are the store-writing settings of one command's runs: --store-timeout
// and the spill directory by the environment.
func newStoreOpts(env Env, cfg *config.Run) record.Options {
	return record.NewOptions(cfg.StoreTimeout, record.SpillDir(env.getenv))
}

// runFailure is the exit error of a finished run with a failed step (nil otherwise).
func runFailure(rec *record.Run) error {
	if rec.Status() == store.RunFailed {
		return &exitError{code: ExitStepFailed, err: fmt.Errorf("run %d: %s", rec.ID(), rec.Steps.Err())}
	}
	return nil
}
