package cli

import (
	"context"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/probe"
)

// cpuOptions are a run's --cpu-profile settings for the probe package (prepareCPUProfile
// read them).
func cpuOptions(cfg *config.Run) probe.CPUOptions {
	return probe.CPUOptions{Dir: cfg.CPUProfileDir, Hz: cfg.CPUProfileHz, CallGraph: cfg.CPUProfileCallGraph,
		Engine: cfg.Engine, Off: cfg.CPUProfileOff}
}

// openDiag opens the target's statement and wait collector for `dbperf run --explain`
// and records in the run's env what it gives (nil without --explain or where the engine
// has none; the reason is said once on stderr and kept in env).
func openDiag(ctx context.Context, env Env, cfg *config.Run, ot *runTarget) *probe.Explain {
	if !cfg.Explain {
		return nil
	}
	dc, note := probe.OpenExplain(ctx, ot.h, ot.eng.Meta().Name, probe.ExplainOptions{Enable: cfg.Managed, Warn: env.Err})
	ot.env[probe.EnvExplain] = note
	return dc
}
