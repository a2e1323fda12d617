package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestContextWatch(t *testing.T) {
	var fired atomic.Int32
	f := func() { fired.Add(1) }
	var w ContextWatch

	// A context that is never done registers nothing.
	if err := w.Watch(context.Background(), f); err != nil {
		t.Fatal(err)
	}

	// Watching the same context again and again registers it once: one call on cancel.
	a, cancelA := context.WithCancel(context.Background())
	for range 1000 {
		if err := w.Watch(a, f); err != nil {
			t.Fatal(err)
		}
	}
	cancelA()
	waitFor(t, func() bool { return fired.Load() == 1 })
	if err := w.Watch(a, f); err == nil {
		t.Error("Watch of a cancelled context reports no error")
	}

	// Moving to another context stops watching the previous one.
	b, cancelB := context.WithCancel(context.Background())
	c, cancelC := context.WithCancel(context.Background())
	defer cancelC()
	_ = w.Watch(b, f)
	_ = w.Watch(c, f)
	cancelB()
	time.Sleep(50 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Errorf("cancelling a context no longer watched ran f: %d calls", n)
	}

	// Stop: a later cancellation runs nothing, and the same context can be watched again.
	w.Stop()
	d, cancelD := context.WithCancel(context.Background())
	_ = w.Watch(d, f)
	w.Stop()
	cancelD()
	cancelC()
	time.Sleep(50 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Errorf("after Stop, cancellations ran f: %d calls", n)
	}

	if allocs := testing.AllocsPerRun(100, func() { _ = w.Watch(context.Background(), f) }); allocs != 0 {
		t.Errorf("watching the same context allocates %.0f times", allocs)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
