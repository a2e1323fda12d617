package record

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// graceContext is ctx for store writes: not cancelled by ctx itself (an interrupted run
// still stores what it measured) but storeGrace after it.
func graceContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(storeGrace, cancel) })
	return sctx, func() { stop(); cancel() }
}

// transient reports whether a store error may go away by itself: a lock another process
// holds, a connection lost or refused, a server shutting down, starting or recovering, a
// deadline. Anything else (a constraint, a full SQLite disk, a schema error, a bug) would
// fail again at once and is not retried.
func transient(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) < 2:
			return false
		case pe.Code[:2] == "08", pe.Code[:2] == "53", pe.Code[:2] == "57", pe.Code[:2] == "40":
			// connection exceptions, insufficient resources, operator intervention
			// (admin shutdown, crash shutdown, cannot connect now), transaction rollbacks
			return true
		}
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &errno): // before net.Error, which every Errno satisfies
		return errno == syscall.ECONNREFUSED || errno == syscall.ECONNRESET || errno == syscall.EPIPE ||
			errno == syscall.ETIMEDOUT
	case pgconn.SafeToRetry(err), pgconn.Timeout(err), errors.As(err, &ce), errors.As(err, &ne):
		return true
	}
	return false
}

// call runs fn and returns when it does or when ctx is done, whichever is first; fn gets
// ctx, and one that ignores it is left to finish in the background.
func call(ctx context.Context, fn func(context.Context) error) error {
	ch := make(chan error, 1)
	go func() { ch <- fn(ctx) }()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
