package cli

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

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/dbperf/dbperf/internal/store"
)

// ownerFile, in a temporary work dir dbperf made, names the process that made it, so a
// later dbperf can tell a dir whose process died (kill -9, a crash, a power cut) from one
// in use and remove it.
const ownerFile = ".dbperf-owner"

// workDirPattern matches the temporary work dirs (os.MkdirTemp "dbperf-<engine>-*").
const workDirPattern = "dbperf-*-*"

// markOwner records the current process as dir's owner.
func markOwner(dir string) error {
	b, err := json.Marshal(store.SelfIdentity())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), b, 0o644)
}

// staleDir is a work dir whose owner is gone.
type staleDir struct {
	path  string
	bytes int64
}

// staleWorkDirs lists the work dirs in tmp whose owning process is gone. Dirs without an
// owner file (kept with --keep, given with --workdir, or made by an older dbperf) are
// never stale.
func staleWorkDirs(tmp string) []staleDir {
	dirs, _ := filepath.Glob(filepath.Join(tmp, workDirPattern))
	var out []staleDir
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		var owner store.ProcessIdentity
		if json.Unmarshal(b, &owner) != nil || owner.Alive() {
			continue
		}
		out = append(out, staleDir{path: d, bytes: dirBytes(d)})
	}
	return out
}

// dirBytes is the size of the files below dir (what removing it frees).
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

// removeStaleWorkDirs removes the stale work dirs of tmp and says what it freed on w
// (nothing when there were none); with dryRun it only lists them.
func removeStaleWorkDirs(w io.Writer, tmp string, dryRun bool) (removed int, freed int64) {
	stale := staleWorkDirs(tmp)
	var paths []string
	for _, s := range stale {
		if !dryRun {
			if err := os.RemoveAll(s.path); err != nil {
				fmt.Fprintf(w, "could not remove the stale work dir %s: %v\n", s.path, err)
				continue
			}
		}
		removed++
		freed += s.bytes
		paths = append(paths, s.path)
	}
	if removed > 0 {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		}
		fmt.Fprintf(w, "%s %d work dirs left by dbperf processes that died, %.1f MiB: %s\n",
			verb, removed, float64(freed)/(1<<20), strings.Join(paths, " "))
	}
	return removed, freed
}

func newCleanCmd(env Env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the temporary work dirs of dbperf processes that died",
		Long: `Remove the temporary work directories (` + workDirPattern + ` in $TMPDIR) that dbperf
processes made and could not remove because they died (kill -9, a crash, a power cut),
with the databases and managed servers' data in them, and say how much that freed. A run
does the same when it starts. Dirs kept with --keep or given with --workdir are never
removed.`,
		Example: "  dbperf clean --dry-run\n  dbperf clean",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n, _ := removeStaleWorkDirs(env.Out, os.TempDir(), dryRun); n == 0 {
				fmt.Fprintf(env.Out, "no stale work dirs in %s\n", os.TempDir())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	return cmd
}

// workDirLock is the lock file of a --workdir, held (flock) while a run uses it; it
// names its holder.
const workDirLock = ".dbperf.lock"

// lockWorkDir takes dir's lock for a run (a second run on the same --workdir would drop
// the first one's tables) and returns its release; an error names the process that
// holds it. The kernel releases the lock when the process dies, however it dies.
func lockWorkDir(dir string) (func(), error) {
	path := filepath.Join(dir, workDirLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--workdir %s: lock it: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 256))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("--workdir %s is in use by another dbperf run (%s): wait for it to end, or give another --workdir", dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("--workdir %s: lock it: %w", dir, err)
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
