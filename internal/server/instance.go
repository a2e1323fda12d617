package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Instance is a running server that this process started.
type Instance struct {
	Engine  string // the Engine's Name: "postgres", "mariadb"
	Version string // the server's own version string
	DataDir string
	// Dir is the instance's own directory under WorkDir (data dir, socket, log).
	Dir     string
	Host    string // always 127.0.0.1
	Port    int
	Socket  string // unix socket path, when the server has one
	LogPath string
	// DSN reaches the server as its superuser, with the instance's password (never print,
	// log or store it unredacted): PostgreSQL over TCP on loopback, MariaDB through the
	// unix socket. TCPDSN reaches the same database over TCP on 127.0.0.1 (the DSN itself
	// when that is TCP already), for clients that need TCP.
	DSN    string
	TCPDSN string
	// Profile is the profile's name and Config its file's text, stored with the run;
	// ProfileSource is where the profile came from (a file, or BuiltinProfiles).
	Profile       string
	Config        string
	ProfileSource string
	// ProfileSkipped notes the profile lines left out because this server version does
	// not know them (MariaDB: a setting of another version, or of a plugin not loaded),
	// one per line: "innodb_change_buffering=none (line 12): not a setting of MariaDB
	// 11.4.5 (MariaDB 10.11.19 has it)". Empty when the whole profile applies.
	ProfileSkipped []string
	// Limits are the server's resource limits (Options.Limits), enforced while it runs by
	// Cgroup, which Launch makes and Stop removes (nil without limits). MemoryFitted notes
	// the profile settings the engine changed to fit under Limits.Memory, one per line
	// (MemoryFit.Note).
	Limits       Limits
	Cgroup       *Cgroup
	MemoryFitted []string
	// Started is when Launch started the server's process (the first launch's).
	Started time.Time

	eng Engine
	// cgroups are the machine's cgroup hierarchies, when Limits are set.
	cgroups *Cgroups
	// detached: do not tie the server's life to dbperf's (Options.Detached).
	detached bool
	// password is the superuser's password, generated for this instance: no local
	// connection is trusted without it.
	password string
	// afterStop runs once the server has stopped (AfterStop).
	afterStop []func() error

	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	werr error
}

// NewInstance makes the instance of a server e is about to start: a fresh private
// directory <o.WorkDir>/<engine>-<pid>-<random> (0700, created with the work dir when
// missing) and a password generated for it. The engine's Start fills in the rest; when it
// fails it removes Dir.
func NewInstance(e Engine, o Options) (*Instance, error) {
	name := e.Name()
	if o.WorkDir == "" {
		return nil, fmt.Errorf("%s: a work directory is required", name)
	}
	work, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("%s: work dir: %w", name, err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("%s: create work dir: %w", name, err)
	}
	var cgroups *Cgroups
	if o.Limits.Set() {
		// Refused before anything is made or started, in one line saying how to fix it.
		if o.Detached {
			return nil, fmt.Errorf("%s: memory and CPU limits are for servers dbperf stops itself, not for one that outlives it", name)
		}
		if cgroups = o.Cgroups; cgroups == nil {
			if cgroups, err = ReadCgroups(); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := errors.Join(CheckMemory(e, o), cgroups.Check(o.Limits)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	dir, err := newInstanceDir(work, name)
	if err != nil {
		return nil, err
	}
	password, err := newPassword()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Instance{eng: e, detached: o.Detached, password: password, Engine: name, Dir: dir, Host: "127.0.0.1",
		Limits: o.Limits, cgroups: cgroups}, nil
}

// Password is the superuser's password generated for the instance: the engine's Start
// hands it to the server and puts it in the DSN; nothing else may print or store it.
func (in *Instance) Password() string { return in.password }

// PID is the server's main process id (postmaster, mariadbd).
func (in *Instance) PID() int {
	if in.cmd == nil || in.cmd.Process == nil {
		return 0
	}
	return in.cmd.Process.Pid
}

// Alive says whether the server process is still running.
func (in *Instance) Alive() bool {
	if in.done == nil {
		return false
	}
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// Done is closed when the server process has exited (nil before Launch).
func (in *Instance) Done() <-chan struct{} { return in.done }

// AfterStop adds f to what Stop does once the server has stopped (an engine's socket
// directory outside the instance dir).
func (in *Instance) AfterStop(f func() error) { in.afterStop = append(in.afterStop, f) }

// Launch runs the server command in its own process group (so a Ctrl-C to dbperf's
// terminal does not reach it before dbperf stops it cleanly) with its output in LogPath.
// With Limits it runs in a cgroup of its own (Cgroup) from its first instruction: see
// gateCgroup.
func (in *Instance) Launch(cmd *exec.Cmd) error {
	logf, err := os.OpenFile(in.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open log: %w", in.Engine, err)
	}
	path := cmd.Path
	var gate *cgroupGate
	if in.Limits.Set() {
		if gate, err = in.gateCgroup(cmd); err != nil {
			logf.Close()
			return err
		}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Keep a Credential the caller set (servers that refuse to run as root).
	// Pdeathsig: if dbperf is killed outright, the kernel kills the server too.
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if in.detached {
		attr.Pdeathsig = 0
	}
	if cmd.SysProcAttr != nil {
		attr.Credential = cmd.SysProcAttr.Credential
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		logf.Close()
		gate.abort()
		return fmt.Errorf("%s: start %s: %w", in.Engine, path, err)
	}
	if in.Started.IsZero() {
		in.Started = time.Now()
	}
	in.cmd = cmd
	in.done = make(chan struct{})
	go func() {
		in.werr = cmd.Wait()
		logf.Close()
		close(in.done)
	}()
	if err := gate.open(in, cmd.Process.Pid); err != nil {
		// The server never ran: its gate exits when the pipe closes.
		<-in.done
		gate.abort()
		return fmt.Errorf("%s: %w", in.Engine, err)
	}
	return nil
}

// Stop stops the server with its engine's shutdown signal (Engine.StopSignal: PostgreSQL's
// fast shutdown, MariaDB's SIGTERM) and kills its process group when it has not exited
// within the engine's grace, then runs what AfterStop added. It is safe to call more than
// once.
func (in *Instance) Stop(ctx context.Context) error {
	sig, grace := in.eng.StopSignal()
	err := in.stop(sig, grace)
	if in.Cgroup != nil {
		err = errors.Join(err, in.Cgroup.Remove())
	}
	for _, f := range in.afterStop {
		err = errors.Join(err, f())
	}
	return err
}

// stop sends sig to the server, waits up to grace for it to exit, then kills its whole
// process group.
func (in *Instance) stop(sig syscall.Signal, grace time.Duration) error {
	if in.cmd == nil || in.cmd.Process == nil {
		return nil
	}
	if !in.Alive() {
		return nil
	}
	_ = in.cmd.Process.Signal(sig)
	select {
	case <-in.done:
	case <-time.After(grace):
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.done
	}
	// Children that outlived the main process (none expected) go with the group.
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	return nil
}

// WaitReady polls ready until it succeeds, the server exits, or timeout passes.
func (in *Instance) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if !in.Alive() {
			return fmt.Errorf("%s exited while starting (%v)%s; last lines of %s:\n%s", in.Engine, in.werr, in.oomNote(), in.LogPath, in.LogTail(20))
		}
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not accept connections within %s (%v); last lines of %s:\n%s", in.Engine, timeout, last, in.LogPath, in.LogTail(20))
}

// LogTail returns the last n lines of the server's log.
func (in *Instance) LogTail(n int) string {
	b, err := os.ReadFile(in.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return LastLines(string(b), n)
}

// Remove deletes the instance directory (data dir, log, socket). The server must be stopped.
func (in *Instance) Remove() error {
	if in.Alive() {
		return fmt.Errorf("%s: remove %s: the server is still running", in.Engine, in.Dir)
	}
	if in.Dir == "" {
		return nil
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("%s: remove %s: %w", in.Engine, in.Dir, err)
	}
	return nil
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
