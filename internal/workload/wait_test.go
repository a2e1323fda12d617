package workload

import (
	"context"
	"testing"
	"time"
)

// The backoff doubles from 100 µs and stops at 50 ms; a hundred attempts take about
// four seconds.
func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{0, 100 * time.Microsecond}, {1, 100 * time.Microsecond}, {2, 200 * time.Microsecond}, {9, 25600 * time.Microsecond}, {10, 50 * time.Millisecond}, {30, 50 * time.Millisecond}} {
		if got := BackoffDelay(tc.attempt); got != tc.want {
			t.Errorf("attempt %d: %s, want %s", tc.attempt, got, tc.want)
		}
	}
	var total time.Duration
	for a := 1; a < 100; a++ {
		total += BackoffDelay(a)
	}
	if total < 3*time.Second || total > 5*time.Second {
		t.Errorf("99 waits add up to %s, want about four seconds", total)
	}
}

// Sleep returns at once for d ≤ 0, and with ctx's error when ctx ends first; the timer
// is reused.
func TestWaiterSleep(t *testing.T) {
	var w Waiter
	if err := w.Sleep(context.Background(), 0); err != nil || w.timer != nil {
		t.Fatalf("d = 0: %v, timer %v", err, w.timer)
	}
	if err := w.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	timer := w.timer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Sleep(ctx, time.Hour); err != context.Canceled || w.timer != timer {
		t.Errorf("cancelled: %v, timer reused %v", err, w.timer == timer)
	}
}
