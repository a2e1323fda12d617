// Package blockconn is a net.Conn whose reads and writes are blocking system calls on the
// socket, for the database drivers' connections of the benchmark sessions. It sits under
// the server engines (engine/postgres, engine/mariadb): their sessions dial through it, so
// a worker waiting for the server's reply sleeps in the kernel's read, as a C client
// (libpq, sysbench) does, instead of parking its goroutine in Go's network poller.
//
// Why: a benchmark client is one request and one reply at a time per connection. Through
// the poller every reply costs a goroutine park and wake-up, the idle thread spinning and
// sleeping in futex/epoll, and the wake-up of another thread: measured on a 2-core VM, a
// request/reply round trip through the poller cost the client 1.4–1.5× the CPU of a
// blocking C client, and 2–3 context switches instead of one. With a blocking read the
// thread sleeps once per reply. (The runner's worker loop also yields to the scheduler every
// few milliseconds, or Go's sysmon takes the P of a thread that stays in system calls for
// 10 ms as if the goroutine were running too long, and moves the goroutine to another thread.)
//
// Written by hand because no maintained library offers a blocking-mode net.Conn; it is a
// thin layer over golang.org/x/sys/unix.
//
// A Conn starts in the poller (the standard connection) so that connecting and
// authenticating honour deadlines and cancellation as usual; Block switches it to blocking
// system calls once the session is established. In blocking mode a deadline applies to the
// system calls that start after it is set (SO_RCVTIMEO/SO_SNDTIMEO); to stop a read already
// in progress call Shutdown (the connection is then unusable, as after a cancelled
// statement a driver closes it anyway).
//
// This is the first part of the client's hot path (issue #9). dbperf competes with the
// engine for the same cores, so an operation must cost the client as little as a
// blocking C client's; BenchmarkClient in `make bench` and scripts/sidebyside.py measure
// it. On a unix socket (a managed MariaDB) a read first waits in poll(2): a blocked read
// is also woken when the server takes the request off the socket, one context switch
// too many per statement. The runtime side of it (GOMAXPROCS and the workers' yields) is
// in package runner.
package blockconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var _ net.Conn = (*Conn)(nil)

// Conn is a stream connection (TCP or unix socket) that can switch to blocking reads and
// writes. Reads and writes may run concurrently with each other (one reader, one writer);
// Close, Shutdown and the deadline setters may be called from any goroutine.
type Conn struct {
	// nc is the poller connection until Block; nil after.
	nc net.Conn
	// pollReads counts the reads in progress on nc: Block refuses while one is (closing nc
	// would end it with net.ErrClosed, an error its caller keeps for the next read).
	pollReads atomic.Int32
	// fd is the blocking socket after Block (-1 before).
	fd            int
	local, remote net.Addr
	network       string

	// mu guards refs, closing and fdClosed: the descriptor is closed only when no system
	// call uses it, so a number the kernel reuses is never read by a late call.
	mu       sync.Mutex
	refs     int
	closing  bool
	fdClosed bool
	shut     atomic.Bool

	// Deadlines in Unix nanoseconds (0: none), applied before each system call.
	rdl, wdl atomic.Int64
	// rto and wto are the SO_RCVTIMEO / SO_SNDTIMEO currently set; touched only by the
	// reader and the writer respectively.
	rto, wto time.Duration
}

// Dialer dials connections that can be switched to blocking mode.
type Dialer struct {
	net.Dialer
}

// DialContext connects to address through the standard dialer, with TCP_NODELAY for TCP
// (Go's default), and returns a *Conn in poller mode.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nc, err := d.Dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, fd: -1, local: nc.LocalAddr(), remote: nc.RemoteAddr(), network: network}, nil
}

// Blocking says whether Block has switched the connection to blocking system calls.
func (c *Conn) Blocking() bool { return c.nc == nil }

// ErrReadInProgress is Block's error when a read is in progress on the poller connection.
var ErrReadInProgress = errors.New("blockconn: a read is in progress on the connection: let it finish (a driver's background reader: sync the driver's connection first) before Block")

// Block switches the connection to blocking system calls. It must be called while no read
// or write is in progress (between statements); a read in progress makes it return
// ErrReadInProgress and leaves the connection as it was. The poller connection is closed;
// the socket lives on in a duplicate descriptor in blocking mode.
//
// pgx's pgconn may leave such a read behind after connecting: when a write of the startup
// takes over 15 ms (a loaded machine) it starts a background reader, which may read the
// server's whole reply before the write returns and then wait for more. Closing the
// poller connection under it stored "use of closed network connection" for the session's
// first statement (pgconn.SyncConn ends it first; engine/postgres calls it).
func (c *Conn) Block() error {
	if c.nc == nil {
		return nil
	}
	if c.pollReads.Load() > 0 {
		return ErrReadInProgress
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return fmt.Errorf("blockconn: %T has no file descriptor", c.nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("blockconn: %w", err)
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return fmt.Errorf("blockconn: %w", err)
	}
	if dupErr != nil {
		return fmt.Errorf("blockconn: dup: %w", dupErr)
	}
	// The duplicate shares the open file description, so this makes the original blocking
	// too; it is closed right away and never read again.
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("blockconn: set blocking: %w", err)
	}
	if err := c.nc.Close(); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("blockconn: close poller connection: %w", err)
	}
	c.fd, c.nc = fd, nil
	if c.shut.Load() {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
	}
	return nil
}

// acquire marks a system call on fd in progress; false when the connection is closing.
func (c *Conn) acquire() bool {
	c.mu.Lock()
	ok := !c.closing
	if ok {
		c.refs++
	}
	c.mu.Unlock()
	return ok
}

func (c *Conn) release() {
	c.mu.Lock()
	c.refs--
	last := c.closing && c.refs == 0 && !c.fdClosed
	if last {
		c.fdClosed = true
	}
	c.mu.Unlock()
	if last {
		_ = unix.Close(c.fd)
	}
}

// Read reads up to len(p) bytes. In blocking mode the calling thread sleeps in the kernel
// until data, the end of the stream, an error, Shutdown, or the read deadline.
func (c *Conn) Read(p []byte) (int, error) {
	if c.nc != nil {
		c.pollReads.Add(1)
		defer c.pollReads.Add(-1)
		return c.nc.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, c.opError("read", net.ErrClosed)
	}
	defer c.release()
	for {
		if err := c.applyDeadline(&c.rto, &c.rdl, unix.SO_RCVTIMEO); err != nil {
			return 0, c.opError("read", err)
		}
		if c.network == "unix" {
			if err := c.waitReadable(); err != nil {
				return 0, c.opError("read", err)
			}
		}
		n, err := unix.Read(c.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case err != nil:
			return 0, c.opError("read", c.closedOr(os.NewSyscallError("read", err)))
		case n == 0:
			if c.shut.Load() {
				return 0, c.opError("read", net.ErrClosed)
			}
			return 0, io.EOF
		}
		return n, nil
	}
}

// waitReadable sleeps in poll(2) until the socket has data, an end or an error, or the
// read deadline passes. For unix sockets only: a read sleeping in the kernel is woken
// whenever the peer takes data this side sent (the socket's write-space wake-up is not
// filtered by event for a blocked read), so after sending a request every reply cost two
// wake-ups, one too early (measured: 2 context switches per MariaDB INSERT); poll's wait
// is woken only for the events it asks for. (TCP wakes a blocked reader for data only.)
func (c *Conn) waitReadable() error {
	timeout := -1
	if ns := c.rdl.Load(); ns != 0 {
		left := time.Until(time.Unix(0, ns))
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		timeout = int((left + time.Millisecond - 1) / time.Millisecond)
	}
	fds := [1]unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds[:], timeout)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return c.closedOr(os.NewSyscallError("poll", err))
		case n == 0:
			return os.ErrDeadlineExceeded
		}
		return nil // readable, closed or failed: the read says which
	}
}

// Write writes all of p (a blocking write may take several calls).
func (c *Conn) Write(p []byte) (int, error) {
	if c.nc != nil {
		return c.nc.Write(p)
	}
	if !c.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	defer c.release()
	done := 0
	for done < len(p) {
		if err := c.applyDeadline(&c.wto, &c.wdl, unix.SO_SNDTIMEO); err != nil {
			return done, c.opError("write", err)
		}
		n, err := unix.Write(c.fd, p[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return done, c.opError("write", os.ErrDeadlineExceeded)
		case err != nil:
			return done, c.opError("write", c.closedOr(os.NewSyscallError("write", err)))
		}
		done += n
	}
	return done, nil
}

// applyDeadline sets the socket's receive or send timeout to what is left until the
// deadline (none: no timeout), only when it changes; a deadline already past fails.
func (c *Conn) applyDeadline(cur *time.Duration, dl *atomic.Int64, opt int) error {
	var want time.Duration
	if ns := dl.Load(); ns != 0 {
		want = time.Until(time.Unix(0, ns))
		if want <= 0 {
			return os.ErrDeadlineExceeded
		}
		// Round up to the kernel's resolution so a timeout never ends early.
		want = want.Truncate(time.Millisecond) + time.Millisecond
	}
	if want == *cur {
		return nil
	}
	tv := unix.NsecToTimeval(want.Nanoseconds())
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	*cur = want
	return nil
}

func (c *Conn) closedOr(err error) error {
	if c.shut.Load() {
		return net.ErrClosed
	}
	return err
}

func (c *Conn) opError(op string, err error) error {
	if errors.Is(err, io.EOF) {
		return err
	}
	return &net.OpError{Op: op, Net: c.network, Source: c.local, Addr: c.remote, Err: err}
}

// IsShutdown says whether Shutdown or Close was called.
func (c *Conn) IsShutdown() bool { return c.shut.Load() }

// Shutdown ends the connection in both directions without closing the descriptor: a read
// or write in progress in another goroutine returns at once (net.ErrClosed), and every
// later one fails. Use it to stop a statement in flight; Close still releases the socket.
func (c *Conn) Shutdown() {
	if c.shut.Swap(true) {
		return
	}
	if nc := c.nc; nc != nil {
		// Poller mode: an expired deadline wakes a read or write in progress.
		_ = nc.SetDeadline(time.Unix(1, 0))
		return
	}
	if c.acquire() {
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
		c.release()
	}
}

// Close shuts the connection down and releases the socket once no read or write uses it.
func (c *Conn) Close() error {
	if nc := c.nc; nc != nil {
		c.shut.Store(true)
		return nc.Close()
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.shut.Store(true)
	last := c.refs == 0
	if last {
		c.fdClosed = true
	} else {
		// Wake the calls in progress; the last to finish closes the descriptor.
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
	c.mu.Unlock()
	if last {
		if err := unix.Close(c.fd); err != nil {
			return c.opError("close", os.NewSyscallError("close", err))
		}
	}
	return nil
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the server's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of reads. In blocking mode it applies to reads that
// start after it is set.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if nc := c.nc; nc != nil {
		return nc.SetReadDeadline(t)
	}
	c.rdl.Store(deadlineNanos(t))
	return nil
}

// SetWriteDeadline sets the deadline of writes. In blocking mode it applies to writes that
// start after it is set.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if nc := c.nc; nc != nil {
		return nc.SetWriteDeadline(t)
	}
	c.wdl.Store(deadlineNanos(t))
	return nil
}

func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if ns := t.UnixNano(); ns > 0 {
		return ns
	}
	return 1 // a time before 1970 is a deadline long past
}
