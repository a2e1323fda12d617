package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workdir"
)

// The work dirs of the command line (internal/workdir): --workdir and the temporary ones,
// `dbperf clean`, and the check of a directory a flag names.

// workDir returns the engine's directory and a function that removes it when dbperf made
// it (unless --keep).
func workDir(cfg *config.Run, engineName string) (string, func(), error) {
	if cfg.WorkDir != "" {
		if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
			return "", nil, fmt.Errorf("--workdir: %w", err)
		}
		unlock, err := workdir.Lock(cfg.WorkDir)
		var inUse *workdir.InUseError
		switch {
		case errors.As(err, &inUse):
			return "", nil, fmt.Errorf("--workdir %s is in use by another dbperf run (%s): wait for it to end, or give another --workdir", inUse.Dir, inUse.Holder)
		case err != nil:
			return "", nil, fmt.Errorf("--workdir %w", err)
		}
		return cfg.WorkDir, unlock, nil
	}
	dir, remove, err := workdir.Temp(workdir.TempOptions{Engine: engineName, Keep: cfg.Keep})
	var tempErr *workdir.TempDirError
	switch {
	case errors.As(err, &tempErr):
		return "", nil, fmt.Errorf("create a work directory: %w (set TMPDIR or pass --workdir)", err)
	case err != nil:
		return "", nil, fmt.Errorf("create a work directory: %w", err)
	}
	return dir, remove, nil
}

// removeStaleWorkDirs removes the stale work dirs of tmp (workdir.RemoveStale) and says
// what it freed on w (nothing when there were none); with dryRun it only lists them.
func removeStaleWorkDirs(w io.Writer, tmp string, dryRun bool) (removed int, freed int64) {
	r := workdir.RemoveStale(tmp, dryRun)
	for _, f := range r.Failed {
		fmt.Fprintf(w, "could not remove the stale work dir %s: %v\n", f.Path, f.Err)
	}
	if len(r.Paths) > 0 {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		}
		fmt.Fprintf(w, "%s %d work dirs left by dbperf processes that died, %.1f MiB: %s\n",
			verb, len(r.Paths), float64(r.Bytes)/(1<<20), strings.Join(r.Paths, " "))
	}
	return len(r.Paths), r.Bytes
}

func newCleanCmd(env Env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the temporary work dirs of dbperf processes that died",
		Long: `Remove the temporary work directories (` + workdir.Pattern + ` in $TMPDIR) that dbperf
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

// checkWritableDir says whether files can be written in dir, the directory a flag names
// that is made when missing (--cpu-profile DIR), in one line naming the flag
// (workdir.CheckWritable).
func checkWritableDir(flag, dir string) error {
	if err := workdir.CheckWritable(dir); err != nil {
		return fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	return nil
}
