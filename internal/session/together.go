package session

import (
	"context"
	"io"
	"os"
	"sync"
)

// OpenTogether opens the targets of opts at once, each Open in its own goroutine: an
// interleaved sweep's points. Their managed servers start at one moment: each waits, right
// before its process starts (server.Options.BeforeLaunch), until every other has come as
// far or has failed. Why: a server's timers count from its start (PostgreSQL's autovacuum
// launcher visits each database on its own clock), and servers started one after another,
// half a second apart, vacuum the same table half a second apart; a comparison that
// alternates seconds between them measures that as a change
// (docs/measurements/2026-11-29-autovacuum-clock.md).
//
// The stale work dirs are removed once, before. Each Options' Out and Err are shared
// under one lock, a line at a time. errs[k] is Open's error for opts[k]; when any is set,
// every target opened is closed again and targets is nil.
func OpenTogether(ctx context.Context, opts []Options) (targets []*Target, errs []error) {
	stale := false
	for _, o := range opts {
		stale = stale || o.Config.WorkDir == ""
	}
	if stale && len(opts) > 0 {
		out := io.Discard
		if !opts[0].Config.Quiet {
			out = opts[0].Out
		}
		RemoveStaleWorkDirs(out, os.TempDir(), false)
	}
	var mu sync.Mutex
	b := &launchBarrier{pending: len(opts), open: make(chan struct{})}
	targets, errs = make([]*Target, len(opts)), make([]error, len(opts))
	var wg sync.WaitGroup
	for k, o := range opts {
		arrive, leave := b.party(ctx)
		if o.Out != nil {
			o.Out = &lockedWriter{mu: &mu, w: o.Out}
		}
		if o.Err != nil {
			o.Err = &lockedWriter{mu: &mu, w: o.Err}
		}
		o.beforeLaunch, o.skipStale = arrive, true
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer leave() // one that fails before its launch, or has none, holds no one up
			targets[k], errs[k] = Open(ctx, o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, t := range targets {
				if t != nil {
					t.Close()
				}
			}
			return nil, errs
		}
	}
	return targets, errs
}

// launchBarrier holds its parties' launches until every party has arrived or left.
// (Written here: sync has no barrier whose parties may drop out, and no maintained
// library this project uses has one.)
type launchBarrier struct {
	mu      sync.Mutex
	pending int           // parties neither arrived nor left
	open    chan struct{} // closed when pending reaches 0
}

func (b *launchBarrier) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending--; b.pending == 0 {
		close(b.open)
	}
}

// party is one party's part: arrive counts it and waits for the others (ctx ends the
// wait), leave counts it if it never arrived.
func (b *launchBarrier) party(ctx context.Context) (arrive func() error, leave func()) {
	var once sync.Once
	arrive = func() error {
		once.Do(b.done)
		select {
		case <-b.open:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return arrive, func() { once.Do(b.done) }
}

// lockedWriter is a writer shared by goroutines: one Write at a time (fmt.Fprintln
// writes a line in one call).
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
