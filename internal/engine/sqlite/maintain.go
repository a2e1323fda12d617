package sqlite

import (
	"context"
	"fmt"
	"time"
)

// ReduceDebt is SQLite's writeback-debt reduction (spec/insert-benchmark.md "Cleanup per
// engine"): PRAGMA wal_checkpoint(TRUNCATE) copies every committed page of the WAL into the
// database file and truncates the log, then ANALYZE refreshes the planner statistics of the
// whole database (the benchmark's tables are all it holds). The checkpoint's answer is
// reported: busy=1 means a reader or writer kept it from completing, log and checkpointed
// are WAL frames in the log and moved to the database. Both act on the whole database, so
// the table list is not needed.
func (h *handle) ReduceDebt(ctx context.Context, _ []string) (string, error) {
	c, err := h.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("sqlite cleanup: %w", err)
	}
	defer c.Close()

	start := time.Now()
	var busy, log, done int64
	if err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
		return "", fmt.Errorf("sqlite cleanup: wal_checkpoint(TRUNCATE): %w", err)
	}
	ckpt := time.Since(start)

	start = time.Now()
	if _, err := c.ExecContext(ctx, "ANALYZE"); err != nil {
		return "", fmt.Errorf("sqlite cleanup: ANALYZE: %w", err)
	}
	analyze := time.Since(start)

	return fmt.Sprintf("wal_checkpoint(TRUNCATE): busy=%d log=%d checkpointed=%d in %s; ANALYZE in %s",
		busy, log, done, ckpt.Round(time.Millisecond), analyze.Round(time.Millisecond)), nil
}
