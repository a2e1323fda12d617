package sweep

import (
	"context"
	"fmt"
	"sync"

	"github.com/dbperf/dbperf/internal/engine"
)

// settlePoints is --settle: before a block that runs on the data earlier blocks left
// (--load-once), every point's engine reduces its writeback debt at once
// (engine.Maintainer with no table list: PostgreSQL's VACUUM (ANALYZE) of the database
// and a CHECKPOINT, InnoDB's dirty-page flush, MyRocks' flush and compaction, SQLite's
// checkpoint), unmeasured. Why: the steady steps' background writers insert and delete
// rows in every block, and each point's server then vacuums, checkpoints or compacts on
// its own clock, inside one point's block and not the other's; index-only scans slow down
// until a vacuum marks the pages all-visible again. Each block then starts both points
// from the same state, and those events move from between-block noise to the settling.
// The runs of a settled block store ParamSettle.
func (i *interleaved) settlePoints(ctx context.Context) error {
	i.settled = false
	if !i.settle || !i.loaded {
		return nil
	}
	details := make([]string, len(i.points))
	errs := make([]error, len(i.points))
	var wg sync.WaitGroup
	for pi, p := range i.points {
		wg.Go(func() {
			m, ok := p.target.Handle.(engine.Maintainer)
			if !ok {
				errs[pi] = fmt.Errorf("sweep point %s: --settle: engine %s has no cleanup to settle with; drop --settle", p.Name(), p.cfg.Engine)
				return
			}
			d, err := m.ReduceDebt(ctx, nil)
			if err != nil {
				errs[pi] = fmt.Errorf("sweep point %s: --settle: %w", p.Name(), err)
			}
			details[pi] = d
		})
	}
	wg.Wait()
	for pi, p := range i.points {
		if errs[pi] != nil {
			return errs[pi]
		}
		if !i.quiet {
			fmt.Fprintf(i.sess.Out, "  settled %s: %s\n", p.Name(), details[pi])
		}
	}
	i.settled = true
	return nil
}
