// Package profile samples on-CPU call stacks with Linux perf while a step runs and folds
// them per role (Brendan Gregg's folded format, "frame;frame;frame count", root first).
//
// Why perf and not perf_event_open from Go: the system call is the easy part. Turning
// samples into stacks needs the user-space unwinding (frame pointers, or DWARF CFI over a
// copy of the stack), the tracking of every process's mappings as they change, and the
// symbolization of executables, shared libraries, the kernel (kallsyms) and JIT-less Go
// binaries; perf does all of it, is packaged by Debian (linux-perf) at the kernel's
// version, and its `perf script` output is the format FlameGraph's tools read. No
// maintained Go library does unwinding and symbolization of other processes well, so
// perf records (system-wide: a step's backends and background workers, such as
// autovacuum, start while it runs) and the caller attributes samples by pid and tid
// afterwards (Fold's Filter).
//
// Sampling: perf's default event, the hardware cycles counter, is absent in many VMs
// (this one's included); perf record then falls back to the cpu-clock software event by
// itself, which samples on-CPU time too (Recording.Event says which one ran). The rate is
// DefaultHz, 49 Hz per CPU: off any multiple of common timer frequencies, 49 samples a
// second per busy CPU (490 in a 10 s step at one busy CPU). Its cost is measured in
// docs/profiles.md: on the 0.45 s insert step of a tiny managed PostgreSQL Insert
// Benchmark, 99 Hz took 2.7% of the throughput (median of 90 paired runs), 49 Hz 1.5%
// (60 pairs), within the 2% dbperf allows itself; 999 Hz took 9%. Call
// graphs: frame pointers (fp, Options' default) cost a walk of the stack per sample;
// dwarf,N copies N bytes of each sample's user stack into the data file and perf script
// unwinds it by the objects' CFI (.eh_frame): more data and time per sample, but the
// stacks of builds without frame pointers (PostgreSQL and MariaDB from Maven Central,
// glibc) come out whole (internal/cli picks it for the servers; Unwound tells a whole
// stack; perfdata.go says why a DWARF recording is edited before its fold). Debian's
// PostgreSQL 15 keeps frame pointers (its functions disassembled begin push %rbp;
// mov %rsp,%rbp: heap_delete, standard_ExecutorRun), and its fp stacks come out whole
// (main → PostmasterMain → PostgresMain → PortalRun → standard_ExecutorRun → heap_delete
// → … → kernel), with its static functions, which the stripped binary has no symbols
// for, as "[postgres]" (docs/profiles.md). Kernel stacks and Go programs (Go keeps frame
// pointers) are whole.
//
// The API: Launch starts `perf record -a --call-graph … -k monotonic` (call graphs, as
// -g) with its events disabled, ready once perf answers on its control fifo, and Enable
// enables them through it. Now is the samples' clock, and Available says why perf cannot
// record here. ParseScript parses `perf script` output (samples with their time; FORK,
// COMM and EXIT task events). FoldWindows folds it per time window and role (one perf
// script for a run's steps), FoldScript for one window, with a cap on distinct stacks
// per role. Tasks holds the processes' parents from perf's FORK events; ProcessName and
// Tree read process titles, names and trees from /proc.
package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultHz is the sampling rate per CPU (see the package's comment).
const DefaultHz = 49

// Options configure a recording.
type Options struct {
	// Hz is the sampling frequency per CPU (DefaultHz when 0).
	Hz int
	// CallGraph is perf's --call-graph mode: "fp" (the default), "dwarf" (8 KiB of
	// stack per sample) or "dwarf,N" (N bytes: CheckCallGraph).
	CallGraph string
	// Dir is where the recording's files go (a fresh directory below os.TempDir when
	// empty); they are removed by Close.
	Dir string
	// Perf is the perf executable ("perf" in PATH when empty).
	Perf string
	// Limits bound what Fold keeps.
	Limits Limits
	// MaxSize, when over 0, bounds perf's data file (bytes; perf record --max-size):
	// perf stops recording when it is reached (SizeLimited).
	MaxSize int64
}

func (o Options) withDefaults() Options {
	if o.Hz <= 0 {
		o.Hz = DefaultHz
	}
	if o.CallGraph == "" {
		o.CallGraph = "fp"
	}
	if o.Perf == "" {
		o.Perf = "perf"
	}
	return o
}

// CheckCallGraph says whether mode is a call-graph mode Launch takes: "fp", "dwarf" or
// "dwarf,N", N the bytes of user stack copied per sample (a multiple of 8, 64 to 65528,
// perf's own bounds).
func CheckCallGraph(mode string) error {
	if mode == "fp" || mode == "dwarf" {
		return nil
	}
	if size, ok := strings.CutPrefix(mode, "dwarf,"); ok {
		if n, err := strconv.Atoi(size); err == nil && n >= 64 && n <= 65528 && n%8 == 0 {
			return nil
		}
	}
	return fmt.Errorf("perf call graph %q: fp, dwarf or dwarf,N (N a multiple of 8 from 64 to 65528 bytes)", mode)
}

// Recording is a perf record running (Start) or ended (Stop), whose samples Fold reads.
type Recording struct {
	opts    Options
	dir     string
	data    string
	cmd     *exec.Cmd
	ctl     *os.File
	ack     *os.File
	stderr  *boundedBuffer
	exited  chan struct{}
	waitErr error
	stopped bool
	// Event is the event perf sampled ("cpu-clock" when the hardware cycles counter is
	// absent), known after Stop.
	Event string
}

// ackTimeout bounds how long Start waits for perf to start sampling (perf first reads
// every running process's mappings) and Stop for it to stop.
const ackTimeout = 30 * time.Second

// Start is Launch then Enable: the recording spans from its return to Stop.
func Start(ctx context.Context, o Options) (*Recording, error) {
	r, err := Launch(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := r.Enable(ctx); err != nil {
		r.kill()
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// Launch runs `perf record -a -g` with its events disabled and returns once perf is ready
// to sample: it has read every running process's mappings (about 0.1 s of CPU here) and
// answers on its control fifo. Enable then starts the sampling in about a millisecond,
// so a caller launches perf ahead of what it measures. ctx cancelled stops perf as Stop
// would.
func Launch(ctx context.Context, o Options) (*Recording, error) {
	o = o.withDefaults()
	if err := CheckCallGraph(o.CallGraph); err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "dbperf-perf-")
		if err != nil {
			return nil, fmt.Errorf("perf record: %w", err)
		}
		dir = d
	} else {
		d, err := os.MkdirTemp(dir, "perf-")
		if err != nil {
			return nil, fmt.Errorf("perf record: %w", err)
		}
		dir = d
	}
	r := &Recording{opts: o, dir: dir, data: filepath.Join(dir, "perf.data"),
		stderr: &boundedBuffer{max: 16 << 10}, exited: make(chan struct{})}
	fail := func(err error) (*Recording, error) {
		r.kill()
		_ = r.Close()
		return nil, err
	}
	ctlPath, ackPath := filepath.Join(dir, "ctl"), filepath.Join(dir, "ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			return fail(fmt.Errorf("perf record: control fifo: %w", err))
		}
	}
	// Opened read-write so neither open blocks for perf's end; a fifo is pollable, so
	// reads take a deadline.
	var err error
	if r.ctl, err = os.OpenFile(ctlPath, os.O_RDWR, 0); err != nil {
		return fail(fmt.Errorf("perf record: %w", err))
	}
	if r.ack, err = os.OpenFile(ackPath, os.O_RDWR, 0); err != nil {
		return fail(fmt.Errorf("perf record: %w", err))
	}
	// -k monotonic: samples timed by CLOCK_MONOTONIC, the clock of Now, so a recording
	// that spans several windows (a run's steps) is split by time (FoldWindows).
	args := []string{"record", "-q", "-a", "-F", strconv.Itoa(o.Hz), "--call-graph", o.CallGraph,
		"-k", "monotonic", "-o", r.data, "--no-buildid", "--no-buildid-cache",
		"-D", "-1", "--control", "fifo:" + ctlPath + "," + ackPath}
	if o.MaxSize > 0 {
		args = append(args, "--max-size", strconv.FormatInt(max(o.MaxSize>>10, 1), 10)+"K")
	}
	r.cmd = exec.Command(o.Perf, args...)
	r.cmd.Stdout, r.cmd.Stderr = r.stderr, r.stderr
	// Its own process group: a Ctrl-C at the terminal is dbperf's to handle; perf is
	// stopped by Stop (or ctx).
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		return fail(fmt.Errorf("perf record: %w", err))
	}
	go func() {
		r.waitErr = r.cmd.Wait()
		close(r.exited)
	}()
	go func() {
		select {
		case <-ctx.Done():
			r.interrupt()
		case <-r.exited:
		}
	}()
	// perf reads its control fifo only once it has read the processes' mappings: its
	// answer to a ping says it is ready.
	if err := r.control(ctx, "ping"); err != nil {
		return fail(err)
	}
	return r, nil
}

// Enable starts the sampling of a launched recording and returns once perf acknowledged
// it: the recording spans from Enable's return to Stop. (perf's disable command would
// stop its tracking of new processes too: a recording over several windows stays enabled
// and is split by time, FoldWindows.)
func (r *Recording) Enable(ctx context.Context) error {
	return r.control(ctx, "enable")
}

// CallGraph is the recording's perf --call-graph mode.
func (r *Recording) CallGraph() string { return r.opts.CallGraph }

// SizeLimited says whether perf stopped recording at Options.MaxSize: the samples after
// that moment are missing.
func (r *Recording) SizeLimited() bool {
	return strings.Contains(r.stderr.String(), "size limit reached")
}

// MaxSize is the recording's bound on its data file (Options.MaxSize).
func (r *Recording) MaxSize() int64 { return r.opts.MaxSize }

// FreeSpace is the space free to an unprivileged user in dir's file system, in bytes
// (0 when it cannot be read).
func FreeSpace(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// Now is the time of the recording's clock (CLOCK_MONOTONIC) in ns, as Event.Time and
// Window take it.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0 // not on Linux's clocks: no window holds a sample
	}
	return ts.Nano()
}

// control sends perf a command on its control fifo and waits for its acknowledgement.
func (r *Recording) control(ctx context.Context, cmd string) error {
	if _, err := io.WriteString(r.ctl, cmd+"\n"); err != nil {
		return fmt.Errorf("perf record: %s: %w", cmd, err)
	}
	got := make(chan error, 1)
	go func() {
		_ = r.ack.SetReadDeadline(time.Now().Add(ackTimeout))
		buf := make([]byte, 16)
		n, err := r.ack.Read(buf)
		if err == nil && !strings.HasPrefix(string(buf[:n]), "ack") {
			err = fmt.Errorf("unexpected answer %q", buf[:n])
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			return fmt.Errorf("perf record: %s: %w%s", cmd, err, r.why())
		}
		return nil
	case <-r.exited:
		return fmt.Errorf("perf record exited before it would %s: %v%s", cmd, r.waitErr, r.why())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// why is perf's own last words, for an error.
func (r *Recording) why() string {
	s := strings.TrimSpace(r.stderr.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return " (perf: " + strings.TrimSpace(lines[len(lines)-1]) + ")"
}

func (r *Recording) interrupt() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(os.Interrupt)
	}
}

func (r *Recording) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// Stop ends the recording: events disabled, then perf interrupted (SIGINT) and waited
// for while it writes its data file. It may be called more than once.
func (r *Recording) Stop() error {
	if r.stopped {
		return nil
	}
	r.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	disableErr := r.control(ctx, "disable")
	r.interrupt()
	select {
	case <-r.exited:
	case <-time.After(ackTimeout):
		r.kill()
		return fmt.Errorf("perf record did not end %s after SIGINT%s", ackTimeout, r.why())
	}
	if _, err := os.Stat(r.data); err != nil {
		return fmt.Errorf("perf record wrote no data (%v)%s", r.waitErr, r.why())
	}
	// perf exits 0 or by the SIGINT it was sent; its data is whole either way once it
	// exited on its own. A failed disable leaves a few more samples, not a bad file.
	_ = disableErr
	r.Event = r.event()
	return nil
}

// event reads which event the recording sampled.
func (r *Recording) event() string {
	out, err := exec.Command(r.opts.Perf, "evlist", "-i", r.data).Output()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "dummy") && !strings.HasPrefix(l, "#") {
			name, _, _ := strings.Cut(l, ":")
			return name
		}
	}
	return ""
}

// Fold runs `perf script` on the recording and folds its samples per role (FoldScript).
// tasks, when not nil, is filled with the recording's task events as they are read, for
// the filter to consult (Tasks.Descends). It stops the recording first if need be.
func (r *Recording) Fold(ctx context.Context, filter Filter, tasks *Tasks) (*Profiles, error) {
	pss, err := r.FoldWindows(ctx, []Window{{Filter: filter}}, tasks)
	if err != nil {
		return nil, err
	}
	return pss[0], nil
}

// FoldWindows is Fold per window (FoldWindows of the package): one `perf script` over a
// recording that spans several windows, each folded on its own.
func (r *Recording) FoldWindows(ctx context.Context, windows []Window, tasks *Tasks) ([]*Profiles, error) {
	if err := r.Stop(); err != nil {
		return nil, err
	}
	if r.opts.CallGraph != "fp" {
		// DWARF: the server's libc unwound from its own table, not from that of dbperf's
		// libc, which perf's view of the server keeps from its fork (perfdata.go). A
		// failure leaves the file as it was: the stacks may then stop at libc.
		_, _ = RenameMappings(r.data, os.Getpid(), sameFileShorter)
	}
	// --no-inline: perf names the functions inlined at an address only for objects with
	// DWARF debug info (here libc, libc6-dbg installed; none of the server builds dbperf
	// runs), by running addr2line per address: a fold took 4 times as long (15.5 s
	// against 3.9 s for a 28 s run at 199 Hz), and the names varied with it (libc's send
	// was __libc_send in one recording, __send in another), which a comparison would
	// call a change.
	cmd := exec.CommandContext(ctx, r.opts.Perf, "script", "-i", r.data, "-F", ScriptFields,
		"--ns", "--show-task-events", "--no-inline")
	stderr := &boundedBuffer{max: 16 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	pss, foldErr := FoldWindows(out, windows, tasks, r.opts.Limits)
	if foldErr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	switch {
	case foldErr != nil:
		return nil, fmt.Errorf("perf script: %w", foldErr)
	case waitErr != nil:
		return nil, fmt.Errorf("perf script: %w: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	return pss, nil
}

// Close removes the recording's files (stopping perf if it still runs).
func (r *Recording) Close() error {
	if r.cmd != nil && r.cmd.Process != nil && !r.stopped {
		r.interrupt()
		select {
		case <-r.exited:
		case <-time.After(ackTimeout):
			r.kill()
		}
	}
	for _, f := range []*os.File{r.ctl, r.ack} {
		if f != nil {
			_ = f.Close()
		}
	}
	return os.RemoveAll(r.dir)
}

// Available says whether perf can record here: nil, or one line saying why not.
func Available(ctx context.Context) error {
	return available(ctx, "perf")
}

func available(ctx context.Context, perf string) error {
	if _, err := exec.LookPath(perf); err != nil {
		return errors.New("perf is not installed (apt-get install linux-perf)")
	}
	if os.Geteuid() != 0 {
		b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
		if err == nil {
			if lvl, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && lvl > 0 {
				return fmt.Errorf("perf may not sample other processes system-wide: kernel.perf_event_paranoid is %d and dbperf is not root (run as root, or sysctl kernel.perf_event_paranoid=-1)", lvl)
			}
		}
	}
	// A real recording of nothing: perf is there but may still be unable to (a container
	// without perf events, a perf for another kernel).
	dir, err := os.MkdirTemp("", "dbperf-perf-check-")
	if err != nil {
		return fmt.Errorf("perf check: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, perf, "record", "-q", "-a", "-g", "-F", "99",
		"-o", filepath.Join(dir, "check.data"), "--no-buildid", "--no-buildid-cache", "--", "true").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return fmt.Errorf("perf record fails here: %v: %s", err, msg)
	}
	return nil
}

// boundedBuffer keeps the first max bytes written to it; exec's copying goroutine writes
// while an error may read it.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
