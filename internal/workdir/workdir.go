// Package workdir keeps the directories a run works in: the databases of an embedded
// engine and a managed server's data live in one.
//
// A temporary work dir (Temp) is made in the temporary dir as dbperf-<engine>-* (Pattern)
// and names the process that made it in its owner file (OwnerFile, a
// store.ProcessIdentity), so that a later dbperf tells a dir whose process died (kill -9,
// a crash, a power cut) from one in use and removes it (Stale, RemoveStale: `dbperf clean`,
// and every run before it starts). A kept dir has no owner file and is never stale.
//
// A directory the user gives (--workdir) is never removed: Lock holds its lock file
// (LockFile, flock) while a run uses it, since a second run on it would drop the first
// one's tables. CheckWritable tells whether files can be written in a directory that is
// made when missing (--cpu-profile DIR).
//
// Errors name the directory but not the flag that gave it: the command line adds that.
package workdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbperf/dbperf/internal/store"
)

// OwnerFile, in a temporary work dir dbperf made, names the process that made it.
const OwnerFile = ".dbperf-owner"

// Pattern matches the temporary work dirs (os.MkdirTemp "dbperf-<engine>-*").
const Pattern = "dbperf-*-*"

// LockFile is the lock file of a given work dir, held (flock) while a run uses it; it
// names its holder.
const LockFile = ".dbperf.lock"

// TempOptions say how a temporary work dir is made.
type TempOptions struct {
	// Engine names the dir: dbperf-<Engine>-*.
	Engine string
	// Keep keeps the dir: it gets no owner file and its release removes nothing (--keep).
	Keep bool
	// TempDir is where the dir is made; "" is os.TempDir().
	TempDir string
}

// A TempDirError is a work dir the temporary dir refused to make (another TMPDIR, or a
// work dir of the user's, helps).
type TempDirError struct{ Err error }

func (e *TempDirError) Error() string { return e.Err.Error() }
func (e *TempDirError) Unwrap() error { return e.Err }

// Temp makes a temporary work dir and returns it with its release, which removes it
// unless o.Keep. It is owned by this process (MarkOwner) unless kept: if the process dies
// before removing it, a later RemoveStale does.
func Temp(o TempOptions) (string, func(), error) {
	dir, err := os.MkdirTemp(o.TempDir, "dbperf-"+o.Engine+"-")
	if err != nil {
		return "", nil, &TempDirError{Err: err}
	}
	// A managed PostgreSQL runs as an unprivileged user when dbperf runs as root: it must
	// be able to enter the work dir (its own instance dir below stays private).
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	if o.Keep {
		return dir, func() {}, nil
	}
	if err := MarkOwner(dir); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// MarkOwner records the current process as dir's owner.
func MarkOwner(dir string) error {
	b, err := json.Marshal(store.SelfIdentity())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, OwnerFile), b, 0o644)
}

// A StaleDir is a work dir whose owner is gone.
type StaleDir struct {
	Path string
	// Bytes is the size of the files below it (what removing it frees).
	Bytes int64
}

// Stale lists the work dirs in tmp whose owning process is gone. Dirs without an owner
// file (kept with --keep, given with --workdir, or made by an older dbperf) are never
// stale.
func Stale(tmp string) []StaleDir {
	dirs, _ := filepath.Glob(filepath.Join(tmp, Pattern))
	var out []StaleDir
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, OwnerFile))
		if err != nil {
			continue
		}
		var owner store.ProcessIdentity
		if json.Unmarshal(b, &owner) != nil || owner.Alive() {
			continue
		}
		out = append(out, StaleDir{Path: d, Bytes: dirBytes(d)})
	}
	return out
}

// dirBytes is the size of the files below dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// A Removal is what RemoveStale removed, or with dryRun would remove.
type Removal struct {
	// Paths are the dirs removed, in Stale's order.
	Paths []string
	// Bytes is what removing them freed.
	Bytes int64
	// Failed are the stale dirs that could not be removed.
	Failed []Failure
}

// A Failure is a stale dir that could not be removed.
type Failure struct {
	Path string
	Err  error
}

// RemoveStale removes the stale work dirs of tmp (Stale); with dryRun it only lists them.
func RemoveStale(tmp string, dryRun bool) Removal {
	var r Removal
	for _, s := range Stale(tmp) {
		if !dryRun {
			if err := os.RemoveAll(s.Path); err != nil {
				r.Failed = append(r.Failed, Failure{Path: s.Path, Err: err})
				continue
			}
		}
		r.Paths = append(r.Paths, s.Path)
		r.Bytes += s.Bytes
	}
	return r
}

// An InUseError is a work dir whose lock another process holds.
type InUseError struct {
	Dir string
	// Holder is what the lock file says of its holder: "pid 12 on host since …".
	Holder string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s is in use by another dbperf run (%s)", e.Dir, e.Holder)
}

// Lock takes dir's lock (LockFile) for a run and returns its release; an *InUseError
// names the process that holds it, any other error reads "<dir>: lock it: …". The kernel
// releases the lock when the process dies, however it dies.
func Lock(dir string) (func(), error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: lock it: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 256))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, Holder: strings.TrimSpace(string(holder))}
		}
		return nil, fmt.Errorf("%s: lock it: %w", dir, err)
	}
	host, _ := os.Hostname()
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().Format(time.DateTime))), 0)
	return func() {
		_ = f.Truncate(0)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
