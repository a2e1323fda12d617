// Package server starts and stops throwaway database servers for dbperf: it installs
// versions, initialises a fresh data directory under a work dir from a named config
// profile (built into the binary, or a file in a profiles directory), starts the server
// listening only on 127.0.0.1 (a free port) and a unix socket in the instance's private
// directory (0700), its superuser reachable only with a password generated for the
// instance, and stops it — also on failure and on Ctrl-C — so no process outlives dbperf.
// It imports nothing of ours; the cli turns an Instance's DSN into an engine.Target.
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	// Profile names a config profile: ProfilesDir/<engine>/<Profile>.conf (or .cnf) when
	// ProfilesDir is set and has it, else the built-in profile of that name.
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
	// DSN reaches the server as its superuser, with the instance's password (never print,
	// log or store it unredacted): PostgreSQL over TCP on loopback, MariaDB through the
	// unix socket.
	DSN string
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

	// detached: do not tie the server's life to dbperf's (Options.Detached).
	detached bool
	// password is the superuser's password, generated for this instance: no local
	// connection is trusted without it.
	password string

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

// FreePort finds a free TCP port on 127.0.0.1 for a server to listen on, below the
// kernel's ephemeral range (ip_local_port_range; 32768 on Linux by default). A port the
// kernel hands out for 127.0.0.1:0 is an ephemeral one: between the check and the
// server's bind, any outgoing connection on the machine (dbperf's own clients among them)
// may take it as its local port, and the server then fails with "Address already in use".
// Ports below the range are never given to outgoing connections; one is picked at random
// (so concurrent dbperf processes rarely try the same) and checked by listening on it.
// When the range starts too low to leave room, the kernel picks.
func FreePort() (int, error) {
	lo := ephemeralLow()
	const first = 10000
	if lo-first >= 1000 {
		for range 200 {
			p := first + mrand.IntN(lo-first)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
				l.Close()
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 when unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
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

// newInstanceDir creates a fresh <workDir>/<engine>-<pid>-<random> directory, private to
// its owner (0700): it holds the server's unix socket, so only the invoking user (and,
// when dbperf runs as root, the server's own unprivileged user, to whom StartPostgres
// gives it) can reach the socket; other local users cannot even enter it.
func newInstanceDir(workDir, engine string) (string, error) {
	dir, err := os.MkdirTemp(workDir, fmt.Sprintf("%s-%d-", engine, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("%s: create instance dir: %w", engine, err)
	}
	// MkdirTemp makes it 0700 already; stated, whatever the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("%s: create instance dir: %w", engine, err)
	}
	return dir, nil
}

// passwordBytes is the entropy of a managed server's password: 192 bits.
const passwordBytes = 24

// newPassword is a fresh random password for one managed instance (crypto/rand), in
// characters that need no quoting in a URL, a MySQL DSN or SQL: [A-Za-z0-9_-].
func newPassword() (string, error) {
	b := make([]byte, passwordBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writePrivateFile writes data to a new file path readable by its owner only (0600),
// replacing any file there.
func writePrivateFile(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	return f.Close()
}

// The built-in config profiles, compiled into the binary: profiles/<engine>/<name>.conf
// (PostgreSQL) and .cnf (MariaDB). The repository's top-level profiles/ is a symlink to
// this directory, so `--profiles-dir profiles` in a checkout names the same files.
//
//go:embed profiles
var builtinProfiles embed.FS

// BuiltinProfiles is how dbperf names where the built-in profiles come from.
const BuiltinProfiles = "built into dbperf"

// profileExts are the file extensions of config profiles.
func profileExts() []string { return []string{".conf", ".cnf"} }

// Profile is one config profile dbperf can start an engine's server with.
type Profile struct {
	Name string
	// Path is the file in the profiles directory, or "" for a built-in profile (or a
	// built-in one that a file of the same name overrides: then Path is that file).
	Path string
}

// Source says where the profile comes from: its file, or BuiltinProfiles.
func (p Profile) Source() string {
	if p.Path == "" {
		return BuiltinProfiles
	}
	return p.Path
}

// profileNames lists the profile names among dir entries (regular files named *.conf or
// *.cnf) and the file each name comes from (.conf before .cnf).
func profileNames(ents []fs.DirEntry) map[string]string {
	out := map[string]string{}
	for _, ext := range profileExts() {
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ext); ok && name != "" && e.Type().IsRegular() {
				if _, seen := out[name]; !seen {
					out[name] = e.Name()
				}
			}
		}
	}
	return out
}

// checkProfilesDir fails when a profiles directory was named but is not one.
func checkProfilesDir(profilesDir string) error {
	if profilesDir == "" {
		return nil
	}
	st, err := os.Stat(profilesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("profiles directory %s (--profiles-dir or $DBPERF_PROFILES) does not exist", profilesDir)
	}
	if err != nil {
		return fmt.Errorf("profiles directory (--profiles-dir or $DBPERF_PROFILES): %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("profiles directory (--profiles-dir or $DBPERF_PROFILES) %s is not a directory", profilesDir)
	}
	return nil
}

// ListProfiles lists the config profiles available for engine, sorted by name: the
// built-in ones, and those in <profilesDir>/<engine>/ (when profilesDir is not ""), a file
// there overriding the built-in profile of its name.
func ListProfiles(profilesDir, engine string) ([]Profile, error) {
	ents, err := builtinProfiles.ReadDir("profiles/" + engine)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s profiles: %w", engine, err)
	}
	byName := map[string]Profile{}
	for name := range profileNames(ents) {
		byName[name] = Profile{Name: name}
	}
	if err := checkProfilesDir(profilesDir); err != nil {
		return nil, err
	}
	if profilesDir != "" {
		dir := filepath.Join(profilesDir, engine)
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s profiles in %s: %w", engine, dir, err)
		}
		for name, file := range profileNames(ents) {
			byName[name] = Profile{Name: name, Path: filepath.Join(dir, file)}
		}
	}
	out := make([]Profile, 0, len(byName))
	for _, p := range byName {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Profiles lists the names of the config profiles available for engine (ListProfiles).
func Profiles(profilesDir, engine string) ([]string, error) {
	ps, err := ListProfiles(profilesDir, engine)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names, nil
}

// ReadProfile is readProfile for engines dbperf does not start as servers: a key-value
// engine's profile holds LSM options that its workload applies (dbbench).
func ReadProfile(profilesDir, engine, name string) (string, Profile, error) {
	return readProfile(profilesDir, engine, name)
}

// readProfile returns the text of the profile name of engine and where it came from:
// <profilesDir>/<engine>/<name>.conf (or .cnf) when profilesDir is not "" and has it, else
// the built-in profile of that name. An unknown name is an error listing the available
// profiles.
func readProfile(profilesDir, engine, name string) (string, Profile, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", Profile{}, fmt.Errorf("%s: invalid profile name %q", engine, name)
	}
	if err := checkProfilesDir(profilesDir); err != nil {
		return "", Profile{}, err
	}
	if profilesDir != "" {
		for _, ext := range profileExts() {
			p := filepath.Join(profilesDir, engine, name+ext)
			b, err := os.ReadFile(p)
			if err == nil {
				return string(b), Profile{Name: name, Path: p}, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return "", Profile{}, fmt.Errorf("%s profile %q: %w", engine, name, err)
			}
		}
	}
	for _, ext := range profileExts() {
		b, err := builtinProfiles.ReadFile("profiles/" + engine + "/" + name + ext)
		if err == nil {
			return string(b), Profile{Name: name}, nil
		}
	}
	avail, err := Profiles(profilesDir, engine)
	if err != nil {
		return "", Profile{}, fmt.Errorf("unknown %s profile %q: %w", engine, name, err)
	}
	where := BuiltinProfiles
	if profilesDir != "" {
		where += ", or in " + filepath.Join(profilesDir, engine)
	} else {
		where += "; --profiles-dir or $DBPERF_PROFILES adds more"
	}
	return "", Profile{}, fmt.Errorf("unknown %s profile %q (available: %s; %s)", engine, name, strings.Join(avail, ", "), where)
}
