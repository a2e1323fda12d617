package insertbench

import (
	"context"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step  = (*cleanupStep)(nil)
	_ workload.Noter = (*cleanupStep)(nil)
)

// cleanupStep reduces the engine's writeback debt between l.i2 and qr100 (spec "Cleanup
// per engine", reference §1.10): workload.Cleanup on the client tables, lasting at least
// CleanupWait. Its Note records what the engine did.
type cleanupStep struct {
	stepBase
	workload.Cleanup
}

// Load has a single cleanup actor; the step then idles until CleanupWait has passed.
func (s *cleanupStep) Load(_ context.Context, h engine.Handle) (workload.Load, error) {
	return s.Cleanup.Load(h, s.p.tables, s.p.ib.CleanupWait, "insertbench "+s.name)
}
