package engine

import "context"

// ContextWatch runs a function when the context of a session's operations is cancelled,
// with one context.AfterFunc per distinct context rather than one per call: the runner
// passes the same context to every operation of a step, so watching it costs one pointer
// comparison per operation. Engines use it to interrupt a statement in flight by their
// own mechanism (a cancel request, shutting the socket down). Not safe for concurrent
// use: the session's own goroutine calls Watch and Stop.
type ContextWatch struct {
	ctx  context.Context
	stop func() bool
}

// Watch arranges for f to run, on a goroutine of its own, when ctx is cancelled, unless
// ctx is the context watched already (then f is the function given then). It stops
// watching the previous context and reports whether ctx is already done (ctx.Err()).
// Pass the same f every time (a func value stored once: a method value or closure built
// per call would allocate).
func (w *ContextWatch) Watch(ctx context.Context, f func()) error {
	if ctx == w.ctx {
		return ctx.Err()
	}
	w.Stop()
	w.ctx = ctx
	if ctx.Done() != nil {
		w.stop = context.AfterFunc(ctx, f)
	}
	return ctx.Err()
}

// Stop stops watching: a later cancellation of the watched context runs nothing.
func (w *ContextWatch) Stop() {
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = nil, nil
}
