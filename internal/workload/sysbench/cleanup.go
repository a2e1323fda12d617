package sysbench

import (
	"context"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

var (
	_ workload.Step  = (*cleanupStep)(nil)
	_ workload.Noter = (*cleanupStep)(nil)
)

// cleanupStep is the writeback-debt reduction of §3.5 (run.sh's postwrite), after the
// load and after read-write: workload.Cleanup on every sbtest table, lasting at least
// --cleanup-wait (the reference's min(1200, 60 + total rows/10⁶) s at medium and large).
// Its Note records what the engine did.
type cleanupStep struct {
	stepBase
	workload.Cleanup
}

// Load has a single cleanup actor; the step then idles until CleanupWait has passed.
func (s *cleanupStep) Load(_ context.Context, h engine.Handle) (workload.Load, error) {
	return s.Cleanup.Load(h, s.p.names, s.p.p.CleanupWait, "sysbench "+s.name)
}

// Verify has nothing to check: a cleanup changes no row.
func (s *cleanupStep) Verify(context.Context, engine.Handle) (string, error) { return "", nil }
