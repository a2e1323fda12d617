package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/dbperf/dbperf/internal/fleet"
	"github.com/dbperf/dbperf/internal/store"
)

// ServeOptions say what Serve serves, where, and whom it tells.
type ServeOptions struct {
	// Results is the store's path as opened: a PostgreSQL store's queue, when it holds
	// one, is served too (fleet.OpenReadOnly, SetQueue).
	Results string
	// Listen is the address, host:port (port 0: any free one).
	Listen string
	// Log is the Server's Log.
	Log io.Writer
	// Listening, when set, is told the address listened on, and whether its host is a
	// loopback one, before any request is served.
	Listening func(addr net.Addr, loopback bool)
}

// A ListenError is an address Serve could not listen on.
type ListenError struct{ Err error }

func (e *ListenError) Error() string { return e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// Serve serves st (New) at o.Listen until ctx ends, then shuts the server down, giving
// the requests under way 5 s.
func Serve(ctx context.Context, st *store.Store, o ServeOptions) error {
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return &ListenError{Err: err}
	}
	srv, err := New(st)
	if err != nil {
		return err
	}
	srv.Log = o.Log
	if store.IsPostgres(o.Results) {
		q, err := fleet.OpenReadOnly(ctx, o.Results)
		if err != nil {
			return err
		}
		if q != nil {
			defer q.Close()
			srv.SetQueue(q)
		}
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &ListenError{Err: err}
	}
	if o.Listening != nil {
		o.Listening(ln.Addr(), loopback(host))
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// loopback reports whether a listen address's host is a loopback one.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
