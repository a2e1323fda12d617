package engine

import (
	"context"
	"sync/atomic"
)

// ContextWatch runs a function when the context of a session's operation in flight is
// cancelled, with one context.AfterFunc per distinct context rather than one per call:
// the runner passes the same context to every operation of a step, so watching it costs
// one pointer comparison and two atomic stores per operation. Engines use it to
// interrupt a statement in flight by their own mechanism (a cancel request, shutting the
// socket down). Watch and Done bracket each operation; Stop ends the watch. Not safe for
// concurrent use: the session's own goroutine calls Watch, Done and Stop (the function
// runs on a goroutine of its own).
//
// The function runs only while an operation is in flight under the context that was
// cancelled. A context that ends while the session is idle (a step's context cancelled
// or past its deadline after its last statement), or one the session has moved on from,
// interrupts nothing: interrupting would end an idle connection that a later operation,
// under another context, then finds closed (a duet sweep's audit session failed with
// "conn closed" so, on a loaded machine).
type ContextWatch struct {
	ctx  context.Context
	stop func() bool
	f    func()
	fire func() // w.onCancel, built once
	// cur is the context watched now, busy whether an operation is in flight under it:
	// what onCancel, on another goroutine, checks.
	cur  atomic.Pointer[context.Context]
	busy atomic.Bool
}

// Watch marks an operation in flight under ctx and arranges for f to run, on a goroutine
// of its own, should ctx be cancelled before Done, unless ctx is the context watched
// already (then f is the function given then). It stops watching the previous context
// and reports whether ctx is already done (ctx.Err()): then the operation must not start
// (and needs no Done). Pass the same f every time (a func value stored once: a method
// value or closure built per call would allocate).
func (w *ContextWatch) Watch(ctx context.Context, f func()) error {
	if ctx != w.ctx {
		w.Stop()
		w.ctx = ctx
		if w.f == nil { // f is the same every time; set once, before any AfterFunc reads it
			w.f = f
		}
		c := ctx // a copy: taking the parameter's address would move it to the heap on every call
		w.cur.Store(&c)
		if ctx.Done() != nil {
			if w.fire == nil {
				w.fire = w.onCancel
			}
			w.stop = context.AfterFunc(ctx, w.fire)
		}
	}
	w.busy.Store(true)
	// Checked after busy is set: a cancellation from now on sees the operation in flight.
	if err := ctx.Err(); err != nil {
		w.busy.Store(false)
		return err
	}
	return nil
}

// Done marks the operation Watch began as finished: a later cancellation of its context
// interrupts nothing.
func (w *ContextWatch) Done() { w.busy.Store(false) }

// onCancel runs f when the cancelled context is the one watched now and an operation is
// in flight under it.
func (w *ContextWatch) onCancel() {
	c := w.cur.Load()
	if c == nil || (*c).Err() == nil || !w.busy.Load() {
		return
	}
	w.f()
}

// Stop stops watching: a later cancellation of the watched context runs nothing.
func (w *ContextWatch) Stop() {
	if w.stop != nil {
		w.stop()
	}
	w.cur.Store(nil)
	w.busy.Store(false)
	w.ctx, w.stop = nil, nil
}
