package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/workdir"
)

// The work dirs of the command line (internal/workdir): --workdir and the temporary ones,
// `dbperf clean`, and the check of a directory a flag names.

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
			if n, _ := session.RemoveStaleWorkDirs(env.Out, os.TempDir(), dryRun); n == 0 {
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
