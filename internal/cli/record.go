package cli

import (
	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/record"
)

// newStoreOpts are the store-writing settings of one command's runs: --store-timeout
// and the spill directory by the environment.
func newStoreOpts(env Env, cfg *config.Run) record.Options {
	return record.NewOptions(cfg.StoreTimeout, record.SpillDir(env.getenv))
}
