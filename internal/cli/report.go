package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/store"
)

func newRunsCmd(env Env) *cobra.Command {
	var results, label string
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the stored runs, one line each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return badInput(fmt.Errorf("--limit must not be negative, got %d", limit))
			}
			st, err := openExisting(cmd.Context(), resultsPath(results, env))
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), store.RunFilter{Label: label, Limit: limit})
			if err != nil {
				return err
			}
			return report.RenderRuns(env.Out, runs)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", "results store file (default $DBPERF_RESULTS or "+DefaultResults+")")
	cmd.Flags().StringVar(&label, "label", "", "only runs with this label")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N runs (0 = all)")
	return cmd
}

func newReportCmd(env Env) *cobra.Command {
	var results, format, out string
	cmd := &cobra.Command{
		Use:   "report [RUN...]",
		Short: "Report stored runs (default: the latest) as text or JSON",
		Long: `Report stored runs: a per-step summary table per run (text) or the JSON contract
documented in the README. RUN is a run id or a label (all runs with that label);
without RUN the latest run is reported.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var render func(io.Writer, report.Report) error
			switch format {
			case "text":
				render = report.RenderText
			case "json":
				render = report.RenderJSON
			default:
				return badInput(fmt.Errorf("--format %q is not supported: use text or json", format))
			}
			ctx := cmd.Context()
			st, err := openExisting(ctx, resultsPath(results, env))
			if err != nil {
				return err
			}
			defer st.Close()
			var ids []int64
			if len(args) == 0 {
				id, err := st.LatestRunID(ctx)
				if err != nil {
					return badInput(err)
				}
				ids = []int64{id}
			} else if ids, err = st.ResolveRuns(ctx, args); err != nil {
				return badInput(err)
			}
			runs, err := st.Results(ctx, ids)
			if err != nil {
				return badInput(err)
			}
			rep := report.Build(runs)
			if out == "" || out == "-" {
				return render(env.Out, rep)
			}
			return writeFileAtomic(out, func(w io.Writer) error { return render(w, rep) })
		},
	}
	cmd.Flags().StringVar(&results, "results", "", "results store file (default $DBPERF_RESULTS or "+DefaultResults+")")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout")
	return cmd
}

func openExisting(ctx context.Context, path string) (*store.Store, error) {
	st, err := store.OpenExisting(ctx, path)
	if err != nil {
		return nil, badInput(err)
	}
	return st, nil
}
