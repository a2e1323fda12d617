// Package netdelay is an in-process TCP proxy that adds a delay (and jitter) to every
// byte it forwards: the "distance" between the nodes of a managed cluster (dbperf run
// --cluster 3 --node-latency 5ms), on one machine where netem is not available.
//
// A Proxy listens on 127.0.0.1 (a free port) and forwards each accepted connection to one
// target address. Delay is a round trip: each direction holds every chunk it read for
// Delay/2 (± Jitter/2, drawn per chunk) after it was read, then writes it, in order, so
// a request and its answer through the proxy take Delay more than without it, while
// chunks in flight overlap (the link's bandwidth is not divided by the delay). The delay
// can change while connections are open (SetDelay: a cluster forms at 0, then gets its
// distance).
//
// Why not Shopify/toxiproxy (v2.5.0 is on the Go module proxy): embedding it means its
// ApiServer, metrics container and toxic collections for one latency toxic, with
// prometheus, zerolog and gorilla/mux as dependencies, and its latency toxic is one
// direction per toxic; the few hundred lines here do the one thing a cluster needs, with
// the delay changeable at run time and connection counts the cluster checks.
//
// Listen makes a Proxy to one target; Stats counts the connections open and accepted and
// the bytes. A wait uses Go timers for its coarse part and nanosleep(2) for the last
// 1.2 ms, since the netpoller waits whole milliseconds.
package netdelay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// chunkSize is the largest read forwarded as one delayed chunk.
const chunkSize = 64 << 10

// queueLen bounds the chunks in flight per direction: a reader that gets this far ahead
// of the delayed writer blocks, as a full socket buffer would block the sender.
const queueLen = 1024

// Proxy forwards TCP connections from its listen address to Target, delayed.
type Proxy struct {
	// Name says which link the proxy is ("node 1 → node 0"), for errors and reports.
	Name   string
	Target string

	ln     net.Listener
	delay  atomic.Int64 // round trip, ns
	jitter atomic.Int64 // round trip, ns
	active atomic.Int64 // connections open now
	total  atomic.Int64 // connections accepted
	bytes  atomic.Int64 // bytes forwarded, both directions

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// Listen starts a proxy on 127.0.0.1 (a free port) to target with the round-trip delay
// and jitter given (0: none). It runs until Close or until ctx is done.
func Listen(ctx context.Context, name, target string, delay, jitter time.Duration) (*Proxy, error) {
	if delay < 0 || jitter < 0 {
		return nil, fmt.Errorf("netdelay %s: negative delay %s or jitter %s", name, delay, jitter)
	}
	if jitter > delay {
		return nil, fmt.Errorf("netdelay %s: jitter %s is more than the delay %s", name, jitter, delay)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netdelay %s: listen: %w", name, err)
	}
	p := &Proxy{Name: name, Target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.delay.Store(int64(delay))
	p.jitter.Store(int64(jitter))
	p.ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Add(1)
	go p.accept()
	go func() {
		<-p.ctx.Done()
		_ = p.ln.Close()
	}()
	return p, nil
}

// Addr is the proxy's listen address, "127.0.0.1:PORT".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's listen port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// SetDelay changes the round-trip delay and jitter of every connection, open or future:
// chunks read from then on are held the new time.
func (p *Proxy) SetDelay(delay, jitter time.Duration) error {
	if delay < 0 || jitter < 0 || jitter > delay {
		return fmt.Errorf("netdelay %s: delay %s with jitter %s: want 0 <= jitter <= delay", p.Name, delay, jitter)
	}
	p.delay.Store(int64(delay))
	p.jitter.Store(int64(jitter))
	return nil
}

// Delay is the round-trip delay and jitter in force.
func (p *Proxy) Delay() (delay, jitter time.Duration) {
	return time.Duration(p.delay.Load()), time.Duration(p.jitter.Load())
}

// Stats are a proxy's counters.
type Stats struct {
	Active, Accepted int64 // connections open now, accepted in all
	Bytes            int64 // forwarded, both directions
}

// Stats reads the proxy's counters.
func (p *Proxy) Stats() Stats {
	return Stats{Active: p.active.Load(), Accepted: p.total.Load(), Bytes: p.bytes.Load()}
}

// Close stops accepting, closes every open connection and waits for their goroutines.
func (p *Proxy) Close() error {
	p.cancel()
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.ctx.Err() != nil {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve forwards one connection both ways until either side closes it.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 10 * time.Second}
	upstream, err := d.DialContext(p.ctx, "tcp", p.Target)
	if err != nil {
		_ = client.Close()
		return
	}
	for _, c := range []net.Conn{client, upstream} {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
	}
	if !p.track(client, true) || !p.track(upstream, true) {
		_ = client.Close()
		_ = upstream.Close()
		return
	}
	p.total.Add(1)
	p.active.Add(1)
	defer p.active.Add(-1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(upstream, client) }()
	go func() { defer wg.Done(); p.pipe(client, upstream) }()
	wg.Wait()
	p.track(client, false)
	p.track(upstream, false)
	_ = client.Close()
	_ = upstream.Close()
}

// chunk is bytes read at one time, to be written at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk written half the round-trip delay after it was read
// (never before the chunk read before it: order is kept whatever the jitter). When src
// ends, dst's write side is shut down after the last chunk; when dst fails, src is closed.
func (p *Proxy) pipe(dst, src net.Conn) {
	q := make(chan chunk, queueLen)
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for c := range q {
			if !p.sleepUntil(timer, c.due) {
				_ = src.Close()
				for range q {
				}
				return
			}
			if _, err := dst.Write(c.b); err != nil {
				_ = src.Close()
				for range q {
				}
				return
			}
			p.bytes.Add(int64(len(c.b)))
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}()
	var last time.Time
	buf := make([]byte, chunkSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			due := time.Now().Add(p.oneWay())
			if due.Before(last) {
				due = last
			}
			last = due
			q <- chunk{b: append([]byte(nil), buf[:n]...), due: due}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = dst.Close()
			}
			break
		}
	}
	close(q)
	<-done
}

// timerSlack is how late a Go timer may fire: the runtime's netpoller waits whole
// milliseconds (a 100µs timer fires after about 1.1 ms when the process is idle), far too
// coarse for a 1 ms round trip.
const timerSlack = 1200 * time.Microsecond

// nanosleepSlack is how late nanosleep(2) returns: the kernel's default timer slack of a
// thread (50µs); the sleep ends that much early so that the chunk is written on time.
const nanosleepSlack = 50 * time.Microsecond

// sleepUntil waits until due: on a Go timer while more than timerSlack remains, the rest
// in nanosleep(2), which is accurate to the kernel's timer slack (50µs) and holds this
// goroutine's thread (and P) for at most timerSlack. It reports false when the proxy closes.
func (p *Proxy) sleepUntil(timer *time.Timer, due time.Time) bool {
	for {
		wait := time.Until(due)
		if wait <= 0 {
			return true
		}
		if wait > timerSlack+300*time.Microsecond {
			timer.Reset(wait - timerSlack)
			select {
			case <-timer.C:
			case <-p.ctx.Done():
				return false
			}
			continue
		}
		if wait <= nanosleepSlack {
			return true
		}
		ts := syscall.NsecToTimespec(int64(wait - nanosleepSlack))
		_ = syscall.Nanosleep(&ts, nil)
	}
}

// oneWay is one direction's hold: half the round trip, with half the jitter either side.
func (p *Proxy) oneWay() time.Duration {
	d, j := p.delay.Load()/2, p.jitter.Load()/2
	if j > 0 {
		d += rand.Int64N(2*j+1) - j
	}
	return time.Duration(d)
}
