package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
)

func newResultsCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "results",
		Short:   "Manage results stores: copy runs between them",
		Example: "  dbperf results copy --from laptop.db --to team.db",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return badInput(errors.New("results needs a subcommand: dbperf results copy --from A --to B"))
		},
	}
	cmd.AddCommand(newResultsCopyCmd(env))
	return cmd
}

func newResultsCopyCmd(env Env) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "copy --from A --to B [RUN...]",
		Short: "Copy runs (with their steps and intervals) from one results store into another",
		Long: `Copy the finished runs of store A (or the runs and labels RUN names) into store B, which
is created when missing: their steps, intervals, HW figures and metrics, so that dbperf
report shows the same in B as in A (only the run ids are B's). A run keeps its identity
(its origin), so copying again adds nothing: local runs can be published to a shared
store as often as you like. Each run is written in one transaction, whole or not at
all: a copy stopped half-way (Ctrl-C, kill -9, a lost connection) leaves no part of a
run, and copying again completes it; copies run at the same time into one store add
each run once. Runs still running are left out and counted.

Exit status: 0 copied, 2 bad input (no store A, A and B the same file, an unknown RUN).`,
		Example: `  dbperf results copy --from dbperf-results.db --to /shared/team.db
  dbperf results copy --from dbperf-results.db --to team.db nightly-pg16`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return badInput(errors.New("results copy needs --from STORE and --to STORE"))
			}
			var err error
			if from, err = session.ReadAt("--from", from); err != nil {
				return badInput(err)
			}
			if to, err = session.ReadAt("--to", to); err != nil {
				return badInput(err)
			}
			if store.Same(from, to) {
				return badInput(fmt.Errorf("--from and --to are the same store: copy into another one"))
			}
			ctx := cmd.Context()
			src, err := openExisting(ctx, from)
			if err != nil {
				return err
			}
			defer src.Close()
			ids, err := src.Select(ctx, args)
			if err != nil {
				return badInput(err)
			}
			dst, err := store.Open(ctx, to)
			if err != nil {
				return badInput(err)
			}
			defer dst.Close()
			n, err := store.CopyRuns(ctx, src, dst, ids)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Out, "copied %d runs from %s to %s; %d were there already", n.Copied, src.Path(), dst.Path(), n.Present)
			if n.Running > 0 {
				fmt.Fprintf(env.Out, "; %d still running, left out (copy them again when they end)", n.Running)
			}
			fmt.Fprintln(env.Out)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy from (a SQLite file, postgres://…, or @FILE: the first line of FILE)")
	cmd.Flags().StringVar(&to, "to", "", "the store to copy into, created when missing (a SQLite file, postgres://…, or @FILE)")
	return cmd
}
