// Package server starts and stops throwaway database servers for dbperf: it installs
// versions, initialises a fresh data directory under a work dir from a named config
// profile, starts the server listening only on 127.0.0.1 (a free port) and a unix socket
// in the data dir, and stops it — also on failure and on Ctrl-C — so no process outlives
// dbperf. It imports nothing of ours; the cli turns an Instance's DSN into an engine.Target.
package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Options say which server to start and where.
type Options struct {
	// WorkDir is the parent of the data directory (created if missing).
	WorkDir string
	// Version selects the server binaries ("" = the default for the engine, e.g. Debian's).
	Version string
	// Profile names a config profile file in ProfilesDir/<engine>/<Profile>.conf (or .cnf).
	Profile     string
	ProfilesDir string
	// CacheDir holds downloaded server versions.
	CacheDir string
	// StorageEngine is MariaDB's default storage engine: "innodb" or "rocksdb".
	StorageEngine string
	// Detached servers outlive dbperf (`dbperf server start`); others die with it.
	Detached bool
}

// Instance is a running server that this process started.
type Instance struct {
	Engine  string // "postgres" or "mariadb"
	Version string // the server's own version string
	DataDir string
	// Dir is the instance's own directory under WorkDir (data dir, socket, log).
	Dir     string
	Host    string // always 127.0.0.1
	Port    int
	Socket  string // unix socket path, when the server has one
	LogPath string
	// DSN reaches the server as its superuser over TCP on loopback. It holds no password:
	// managed servers trust local connections.
	DSN string
	// Profile is the profile's name and Config its file's text, stored with the run.
	Profile string
	Config  string
	// ProfileSkipped notes the profile lines left out because this server version does
	// not know them (MariaDB: a setting of another version, or of a plugin not loaded),
	// one per line: "innodb_change_buffering=none (line 12): not a setting of MariaDB
	// 11.4.5 (MariaDB 10.11.19 has it)". Empty when the whole profile applies.
	ProfileSkipped []string

	// detached: do not tie the server's life to dbperf's (Options.Detached).
	detached bool

	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	werr error
}

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

// start runs the server command in its own process group (so a Ctrl-C to dbperf's
// terminal does not reach it before dbperf stops it cleanly) with its output in the log.
func (in *Instance) start(cmd *exec.Cmd) error {
	logf, err := os.OpenFile(in.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open log: %w", in.Engine, err)
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
		return fmt.Errorf("%s: start %s: %w", in.Engine, cmd.Path, err)
	}
	in.cmd = cmd
	in.done = make(chan struct{})
	go func() {
		in.werr = cmd.Wait()
		logf.Close()
		close(in.done)
	}()
	return nil
}

// stop sends sig to the server, waits up to grace for it to exit, then kills its whole
// process group. It is safe to call more than once.
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

// waitReady polls ready until it succeeds, the server exits, or timeout passes.
func (in *Instance) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if !in.Alive() {
			return fmt.Errorf("%s exited while starting (%v); last lines of %s:\n%s", in.Engine, in.werr, in.LogPath, in.LogTail(20))
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
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs a helper command (initdb, mariadb-install-db) and returns its output in the
// error when it fails.
func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || out.Len() > 0 {
			return fmt.Errorf("%s: %w\n%s", name, err, strings.TrimSpace(lastLines(out.String(), 20)))
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// StopSignal is the signal that shuts an engine's server down cleanly: SIGINT is
// PostgreSQL's fast shutdown; MariaDB shuts down on SIGTERM.
func StopSignal(engine string) syscall.Signal {
	if engine == "postgres" {
		return syscall.SIGINT
	}
	return syscall.SIGTERM
}

// StopPID stops a server this process did not start (one left running by `dbperf server
// start`): the engine's shutdown signal, up to grace to exit, then SIGKILL to its process
// group (servers are started as group leaders).
func StopPID(engine string, pid int, grace time.Duration) error {
	if pid <= 0 || !pidAlive(pid) {
		return nil
	}
	if err := syscall.Kill(pid, StopSignal(engine)); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", engine, pid, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return nil
}

// pidAlive says whether a process exists and is not a zombie.
func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// newInstanceDir creates a fresh <workDir>/<engine>-<pid>-<random> directory.
func newInstanceDir(workDir, engine string) (string, error) {
	dir, err := os.MkdirTemp(workDir, fmt.Sprintf("%s-%d-", engine, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("%s: create instance dir: %w", engine, err)
	}
	// MkdirTemp makes it private; the server's (unprivileged) user must be able to enter it.
	return dir, os.Chmod(dir, 0o755)
}

// profileExts are the file extensions of config profiles.
func profileExts() []string { return []string{".conf", ".cnf"} }

// Profiles lists the config profiles available for engine: the names of the .conf (or
// .cnf) files in <profilesDir>/<engine>/, sorted.
func Profiles(profilesDir, engine string) ([]string, error) {
	dir := filepath.Join(profilesDir, engine)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s profiles: %w", engine, err)
	}
	var names []string
	for _, e := range ents {
		for _, ext := range profileExts() {
			if name, ok := strings.CutSuffix(e.Name(), ext); ok && e.Type().IsRegular() {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// readProfile returns the text of <profilesDir>/<engine>/<name>.conf (or .cnf); an unknown
// name is an error listing the available profiles. An empty profilesDir is "profiles".
func readProfile(profilesDir, engine, name string) (string, error) {
	if profilesDir == "" {
		profilesDir = "profiles"
	}
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%s: invalid profile name %q", engine, name)
	}
	for _, ext := range profileExts() {
		b, err := os.ReadFile(filepath.Join(profilesDir, engine, name+ext))
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s profile %q: %w", engine, name, err)
		}
	}
	avail, err := Profiles(profilesDir, engine)
	if err != nil {
		return "", fmt.Errorf("unknown %s profile %q: %w", engine, name, err)
	}
	return "", fmt.Errorf("unknown %s profile %q (available in %s: %s)", engine, name,
		filepath.Join(profilesDir, engine), strings.Join(avail, ", "))
}
