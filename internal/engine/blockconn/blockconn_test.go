package blockconn

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// echoServer accepts connections on l and echoes every line back; it stops with the test.
func echoServer(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line == "silent\n" {
						continue // no reply: the client's read blocks
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l
}

func dial(t *testing.T, network, addr string) *Conn {
	t.Helper()
	d := &Dialer{}
	c, err := d.DialContext(context.Background(), network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.(*Conn)
}

func roundTrip(t *testing.T, c *Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg)+1)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != msg+"\n" {
		t.Fatalf("echo = %q, want %q", got, msg+"\n")
	}
}

// forEachNetwork runs a test over TCP and over a unix socket (whose reads wait in poll).
func forEachNetwork(t *testing.T, f func(t *testing.T, network, addr string)) {
	sock := filepath.Join(t.TempDir(), "echo.sock")
	for _, tc := range []struct{ network, addr string }{{"tcp", "127.0.0.1:0"}, {"unix", sock}} {
		t.Run(tc.network, func(t *testing.T) { f(t, tc.network, tc.addr) })
	}
}

// The connection works the same before and after Block, over TCP and a unix socket, and
// a large write (more than a socket buffer) goes through whole.
func TestRoundTripsBothModes(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "echo.sock")
	for _, tc := range []struct{ network, addr string }{{"tcp", "127.0.0.1:0"}, {"unix", sock}} {
		t.Run(tc.network, func(t *testing.T) {
			l := echoServer(t, tc.network, tc.addr)
			c := dial(t, tc.network, l.Addr().String())
			roundTrip(t, c, "poller")
			if c.Blocking() {
				t.Fatal("blocking before Block")
			}
			if err := c.Block(); err != nil {
				t.Fatal(err)
			}
			if !c.Blocking() {
				t.Fatal("not blocking after Block")
			}
			for i := range 100 {
				roundTrip(t, c, "blocking "+strings.Repeat("x", i))
			}
			big := strings.Repeat("y", 4<<20)
			roundTrip(t, c, big)
			if c.LocalAddr() == nil || c.RemoteAddr().String() != l.Addr().String() {
				t.Errorf("addresses %v → %v, want the listener's %v", c.LocalAddr(), c.RemoteAddr(), l.Addr())
			}
		})
	}
}

// Shutdown (the engines' interrupt) wakes a read blocked in the kernel at once, and every
// later call fails; Close then releases the socket.
func TestShutdownWakesBlockedRead(t *testing.T) {
	forEachNetwork(t, testShutdownWakesBlockedRead)
}

func testShutdownWakesBlockedRead(t *testing.T, network, addr string) {
	l := echoServer(t, network, addr)
	c := dial(t, network, l.Addr().String())
	if err := c.Block(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("silent\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the read block
	start := time.Now()
	c.Shutdown()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after Shutdown: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not wake the blocked read")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("woke after %s", d)
	}
	if !c.IsShutdown() {
		t.Error("IsShutdown false after Shutdown")
	}
	if _, err := c.Write([]byte("x\n")); err == nil {
		t.Error("write after Shutdown succeeded")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after Shutdown: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close from another goroutine while a read is blocked wakes it; the descriptor is closed
// only after the read has returned.
func TestCloseWhileReading(t *testing.T) {
	l := echoServer(t, "tcp", "127.0.0.1:0")
	c := dial(t, "tcp", l.Addr().String())
	if err := c.Block(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the blocked read")
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
}

// A read deadline set before a blocking read bounds it and reports a timeout; clearing it
// makes reads wait again. A deadline already past fails at once.
func TestReadDeadline(t *testing.T) {
	forEachNetwork(t, testReadDeadline)
}

func testReadDeadline(t *testing.T, network, addr string) {
	l := echoServer(t, network, addr)
	c := dial(t, network, l.Addr().String())
	if err := c.Block(); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(150 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Errorf("timed out after %s, want about 150ms", d)
	}
	if err := c.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read with a past deadline: %v", err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, "after the deadline was cleared")
}

// Shutdown before Block (while connecting) interrupts through the poller, and Block keeps
// the connection shut.
func TestShutdownBeforeBlock(t *testing.T) {
	l := echoServer(t, "tcp", "127.0.0.1:0")
	c := dial(t, "tcp", l.Addr().String())
	c.Shutdown()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read after Shutdown in poller mode succeeded")
	}
	if err := c.Block(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read after Shutdown and Block succeeded")
	}
}

// Block while a read waits on the poller connection (pgconn's background reader, left
// behind by a slow write while connecting) refuses, and the read still gets its reply:
// closing the poller connection under it made that read fail with "use of closed
// network connection", the error a duet sweep's fresh sessions then met in their first
// statement. Once the read is over, Block switches.
func TestBlockWhileReading(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, network, addr string) {
		l := echoServer(t, network, addr)
		c := dial(t, network, l.Addr().String())
		if _, err := c.Write([]byte("silent\n")); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			buf := make([]byte, 16)
			n, err := c.Read(buf)
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- string(buf[:n])
		}()
		deadline := time.Now().Add(5 * time.Second)
		for c.pollReads.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if err := c.Block(); !errors.Is(err, ErrReadInProgress) {
			t.Fatalf("Block with a read in progress: %v, want ErrReadInProgress", err)
		}
		if _, err := c.Write([]byte("late\n")); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "late\n" {
			t.Fatalf("the read in progress got %q, want the reply", s)
		}
		if err := c.Block(); err != nil {
			t.Fatalf("Block after the read: %v", err)
		}
		roundTrip(t, c, "blocking")
	})
}
