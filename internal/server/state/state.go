// Package state is the record of a server that `dbperf server start` started and left
// running, for `dbperf server stop` and `status` to find it again.
//
// A started server leaves two files in the work dir: <engine>.json, the state (Server:
// its pid, dirs, log, version and DSN with the password redacted), and <engine>.dsn, the
// DSN with its password, readable by its owner only (dbperf run … --dsn @FILE reads
// it). Start starts the server and writes both; Read reads the state back. StartIn and
// StopIn are `dbperf server start` and `stop` in a work dir (a server still running
// there refused, its files removed), Server.Status what `status` says.
//
// A pid outlives its process: the kernel gives it to another one once the server is
// gone. So the state records the server process's start time (/proc/PID/stat, clock ticks
// since boot) and the boot it ran in, and Server.Running takes the pid for the server
// only while both match; a state file written before they were recorded is matched on the
// process's command line naming the server's data dir or dir. A pid that is another
// process now is neither reported as the server nor signalled (Server.Stop).
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/server"
	"github.com/dbperf/dbperf/internal/store"
)

// Server is what `dbperf server start` leaves in the work dir for stop and status (the
// file at Path). DSN is redacted: the DSN with the instance's password is in DSNFile,
// readable by its owner only.
type Server struct {
	Engine  string `json:"engine"`
	PID     int    `json:"pid"`
	DSN     string `json:"dsn"`
	DSNFile string `json:"dsn_file"`
	Port    int    `json:"port"`
	Version string `json:"version"`
	Profile string `json:"profile"`
	Dir     string `json:"dir"`
	DataDir string `json:"data_dir"`
	Socket  string `json:"socket"`
	Log     string `json:"log"`
	Started string `json:"started"`
	// StartTicks is the server process's start time (/proc/PID/stat, clock ticks since
	// boot) and BootID the boot it ran in: a pid names the server only while both match,
	// so a pid reused by another process is neither reported as the server nor signalled.
	StartTicks uint64 `json:"start_ticks,omitempty"`
	BootID     string `json:"boot_id,omitempty"`
}

// Path is the state file of the server of engineName started in workdir.
func Path(workdir, engineName string) string {
	return filepath.Join(workdir, engineName+".json")
}

// DSNPath is the file holding a started server's DSN with its password (0600).
func DSNPath(workdir, engineName string) string {
	return filepath.Join(workdir, engineName+".dsn")
}

// Options say which server Start starts, and where.
type Options struct {
	// WorkDir is the work dir, absolute and existing: the server's own dir goes below it,
	// its state and DSN files in it.
	WorkDir string
	// CacheDir holds installed server versions; ProfilesDir more config profiles ("":
	// the built-in ones only).
	CacheDir, ProfilesDir string
	// Version, Profile and StorageEngine are server.Options': the server's version ("":
	// the engine's default), config profile and storage engine ("": the engine's default).
	Version, Profile, StorageEngine string
}

// Started is a server Start started: its state, as written to its state file, and the
// profile's lines its version left out.
type Started struct {
	State          Server
	ProfileSkipped []string
}

// Start checks o, installs the version when it must, starts a detached server of srv
// and writes its DSN file (DSNPath) and state file (Path). On any error nothing is left
// running.
func Start(ctx context.Context, srv server.Engine, o Options) (Started, error) {
	so := server.Options{WorkDir: o.WorkDir, CacheDir: o.CacheDir, ProfilesDir: o.ProfilesDir,
		Version: o.Version, Profile: o.Profile, StorageEngine: o.StorageEngine, Detached: true}
	if err := srv.Check(so); err != nil {
		return Started{}, err
	}
	if err := server.Ensure(ctx, srv, so.CacheDir, so.Version); err != nil {
		return Started{}, err
	}
	in, err := srv.Start(ctx, so)
	if err != nil {
		return Started{}, err
	}
	// The DSN with the password goes to a file only this user can read; the state
	// file, the output and everything else have it redacted.
	df := DSNPath(o.WorkDir, srv.Name())
	st := Server{Engine: in.Engine, PID: in.PID(), DSN: store.RedactDSN(in.DSN), DSNFile: df, Port: in.Port, Version: in.Version, Profile: in.Profile,
		Dir: in.Dir, DataDir: in.DataDir, Socket: in.Socket, Log: in.LogPath, Started: time.Now().Format(time.RFC3339)}
	st.StartTicks, _ = StartTicks(in.PID())
	st.BootID = BootID()
	if err := errors.Join(WriteDSNFile(df, in.DSN), Write(Path(o.WorkDir, srv.Name()), st)); err != nil {
		_ = in.Stop(context.WithoutCancel(ctx))
		_ = os.Remove(df)
		return Started{}, err
	}
	return Started{State: st, ProfileSkipped: in.ProfileSkipped}, nil
}

// WriteDSNFile writes dsn to a new file path readable by its owner only, replacing any
// file there (whatever its mode).
func WriteDSNFile(path, dsn string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write the DSN file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write the DSN file: %w", err)
	}
	if _, err := f.WriteString(dsn + "\n"); err != nil {
		f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("write the DSN file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write the DSN file %s: %w", path, err)
	}
	return nil
}

// Read reads the state file at path; when none is there (no server was started in its
// work dir) the error is os.ErrNotExist's.
func Read(path string) (Server, error) {
	var st Server
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// Write writes st to the state file at path.
func Write(path string, st Server) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Liveness is what became of a started server's process.
type Liveness int

const (
	// Alive: the state's pid is still the server started here.
	Alive Liveness = iota
	// Died: no process has the state's pid.
	Died
	// PIDReused: the state's pid is another process now; the server died.
	PIDReused
)

// Liveness says whether the state's server runs, died, or died and left its pid to
// another process.
func (st Server) Liveness() Liveness {
	switch {
	case !PIDRunning(st.PID):
		return Died
	case !st.Running():
		return PIDReused
	}
	return Alive
}

// Stop stops the server st names when its pid is still that server (Running), giving it
// a minute to shut down cleanly. A pid that is another process now is left alone:
// foreign says so.
func (st Server) Stop(srv server.Engine) (foreign bool, err error) {
	if st.Running() {
		return false, server.StopPID(srv, st.PID, time.Minute)
	}
	return PIDRunning(st.PID), nil
}

// Remove removes the server's dir (unless keep), its DSN file and its state file, path.
func (st Server) Remove(path string, keep bool) error {
	if !keep && st.Dir != "" {
		if err := os.RemoveAll(st.Dir); err != nil {
			return fmt.Errorf("remove %s: %w", st.Dir, err)
		}
	}
	if st.DSNFile != "" {
		if err := os.Remove(st.DSNFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the DSN file: %w", err)
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove the state file: %w", err)
	}
	return nil
}

// PIDRunning says whether a process has pid (whichever process it is).
func PIDRunning(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return pid > 0 && err == nil
}

// Running says whether the state's pid is still the server started here: the process
// exists and started when the recorded one did, in the same boot. A state file written
// before the start time was recorded is matched on the server's command line naming its
// data dir or its dir. A pid the kernel gave to another process since is not the server.
func (st Server) Running() bool {
	if !PIDRunning(st.PID) {
		return false
	}
	if st.StartTicks != 0 {
		t, ok := StartTicks(st.PID)
		return ok && t == st.StartTicks && (st.BootID == "" || st.BootID == BootID())
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", st.PID))
	if err != nil {
		return false
	}
	for _, a := range strings.Split(string(cmdline), "\x00") {
		// postgres -D DATADIR; mariadbd --defaults-file=DIR/….cnf
		if (st.DataDir != "" && strings.Contains(a, st.DataDir)) || (st.Dir != "" && strings.Contains(a, st.Dir+"/")) {
			return true
		}
	}
	return false
}

// StartTicks reads a process's start time, in clock ticks since boot (the 22nd field of
// /proc/PID/stat).
func StartTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return 0, false
	}
	t, err := strconv.ParseUint(f[19], 10, 64)
	return t, err == nil
}

// BootID is the kernel's id of this boot ("" when unknown).
func BootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
