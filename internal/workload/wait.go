package workload

import (
	"context"
	"time"
)

// Waiter is a worker's pauses: a script's sleep and the backoff before retrying an
// operation a conflict aborted. Its timer is made once and reused (a timer per pause
// would allocate on every retry). The zero value is ready; one per worker, not safe for
// concurrent use.
type Waiter struct{ timer *time.Timer }

// Sleep waits d (nothing when d ≤ 0) or until ctx ends, then returns ctx's error.
func (w *Waiter) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return nil
	case <-ctx.Done():
		w.timer.Stop()
		return ctx.Err()
	}
}

// Stop releases the timer (a worker's Close).
func (w *Waiter) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// Backoff waits before attempt+1 of an operation (attempt from 1): 100 µs, doubling up
// to 50 ms, so an engine that refuses at once (SQLite's busy lock) is not asked again in a
// tight loop; a hundred attempts span about four seconds.
func (w *Waiter) Backoff(ctx context.Context, attempt int) error {
	return w.Sleep(ctx, BackoffDelay(attempt))
}

// BackoffDelay is Backoff's wait before attempt+1.
func BackoffDelay(attempt int) time.Duration {
	return min(100*time.Microsecond<<min(max(attempt, 1)-1, 20), 50*time.Millisecond)
}
