package record

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// transient: which store errors a write retries until --store-timeout.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"sqlite busy", sqlite3.Error{Code: sqlite3.ErrBusy}, true},
		{"sqlite locked, wrapped", fmt.Errorf("store: append intervals: %w", sqlite3.Error{Code: sqlite3.ErrLocked}), true},
		{"sqlite full", sqlite3.Error{Code: sqlite3.ErrFull}, false},
		{"sqlite constraint", sqlite3.Error{Code: sqlite3.ErrConstraint}, false},
		{"postgres admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"postgres cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"postgres connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"postgres serialization", &pgconn.PgError{Code: "40001"}, true},
		{"postgres disk full", &pgconn.PgError{Code: "53100"}, true},
		{"postgres unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"postgres undefined table", &pgconn.PgError{Code: "42P01"}, false},
		{"connection closed", io.ErrUnexpectedEOF, true},
		{"deadline", context.DeadlineExceeded, true},
		{"connection refused", fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"connection reset", fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{"a bad connection", fmt.Errorf("store: %w", driver.ErrBadConn), true},
		{"a store's own error", errors.New("store: finish run 3: no such run"), false},
		{"permission", fmt.Errorf("open: %w", syscall.EACCES), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("%s: transient %v, want %v", c.name, got, c.want)
		}
	}
}

// call returns at its context's deadline even when fn does not.
func TestCallDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	err := call(ctx, func(context.Context) error { <-release; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("call of a function that ignores its context: %v after %v", err, time.Since(start))
	}
	if err := call(context.Background(), func(context.Context) error { return io.EOF }); err != io.EOF {
		t.Errorf("call: %v, want fn's error", err)
	}
}
