package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

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
	cmd.Flags().StringVar(&results, "results", "", "results store: a SQLite file or postgres://user:pass@host/db (default $DBPERF_RESULTS or "+DefaultResults+")")
	cmd.Flags().StringVar(&label, "label", "", "only runs with this label")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N runs (0 = all)")
	return cmd
}

// reportFormats are the values of report --format.
func reportFormats() []string { return []string{"text", "md", "csv", "tsv", "json", "html"} }

func newReportCmd(env Env) *cobra.Command {
	var results, format, out, base, color string
	cmd := &cobra.Command{
		Use:   "report [RUN...]",
		Short: "Report and compare stored runs: text, Markdown, CSV, TSV, JSON or an HTML page with charts",
		Long: `Report stored runs. RUN is a run id or a label; a label stands for all runs with it
(repeats of one config, e.g. from run --repeat) and is one config in the comparison.
Without RUN the latest run is reported.

One run: its per-step summary, latency and HW-efficiency tables (text). Several: tables
comparing the configs, rows = configs, columns = steps: absolute throughput, throughput
relative to the base (--base; default the first RUN; worse < 0.95, better > 1.05),
geometric means per step family, background writers against their target (SLA), HW
efficiency absolute and relative, server CPU per connection role, and latency. Repeated
runs show median [min–max]; relative cells are marked ~ unless the difference is
significant (Mann-Whitney U, p < 0.05, which needs 4 runs per config), ! when noisy (a
spread over 5% of the median).

Formats: text (colour on a terminal: --color), md, csv and tsv (one file, one line per
table cell, with a table column), json (every run, plus "comparison"), html (one
self-contained page with the tables and charts; works offline).`,
		Example: `  dbperf report
  dbperf report rpc100 rpc1000
  dbperf report --base a a b --format html -o report.html
  dbperf report 12 15 --format csv -o cmp.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(reportFormats(), format) {
				return badInput(fmt.Errorf("--format %q is not supported: use one of %s", format, strings.Join(reportFormats(), ", ")))
			}
			if !slices.Contains([]string{"auto", "always", "never"}, color) {
				return badInput(fmt.Errorf("--color %q: use auto, always or never", color))
			}
			rep, groups, err := loadGroups(cmd.Context(), env, results, args)
			if err != nil {
				return err
			}
			baseIdx, err := baseGroup(groups, args, base)
			if err != nil {
				return badInput(err)
			}
			cmp := report.Compare(rep, groups, baseIdx)
			rep.Comparison = &cmp
			toStdout := out == "" || out == "-"
			colour := color == "always" || color == "auto" && toStdout && env.IsTerminal && env.getenv("NO_COLOR") == ""
			render := func(w io.Writer) error {
				switch format {
				case "md":
					return report.RenderMarkdown(w, cmp)
				case "csv":
					return report.RenderCSV(w, cmp, ',')
				case "tsv":
					return report.RenderCSV(w, cmp, '\t')
				case "json":
					return report.RenderJSON(w, rep)
				case "html":
					return report.RenderHTML(w, rep)
				}
				if len(rep.Runs) == 1 {
					return report.RenderText(w, rep)
				}
				return report.RenderCompareText(w, cmp, colour)
			}
			if toStdout {
				return render(env.Out)
			}
			return writeFileAtomic(out, render)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", "results store: a SQLite file or postgres://user:pass@host/db (default $DBPERF_RESULTS or "+DefaultResults+")")
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(reportFormats(), ", "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout (written whole or not at all)")
	cmd.Flags().StringVar(&base, "base", "", "the RUN (id or label, one of those reported) others are compared with (default: the first)")
	cmd.Flags().StringVar(&color, "color", "auto", "colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never")
	return cmd
}

// loadGroups reads the runs that RUN arguments name from the results store, grouped into
// the compared configs (report.ResolveGroups). Every error is the user's: exit 2.
func loadGroups(ctx context.Context, env Env, results string, refs []string) (report.Report, []report.Group, error) {
	st, err := openExisting(ctx, resultsPath(results, env))
	if err != nil {
		return report.Report{}, nil, err
	}
	defer st.Close()
	groups, err := report.ResolveGroups(ctx, st, refs)
	if err != nil {
		return report.Report{}, nil, badInput(err)
	}
	rep, err := report.Load(ctx, st, groups)
	if err != nil {
		return report.Report{}, nil, badInput(err)
	}
	return rep, groups, nil
}

// baseGroup finds --base among the reported configs (report.BaseIndex).
func baseGroup(groups []report.Group, refs []string, base string) (int, error) {
	i, err := report.BaseIndex(groups, refs, base)
	if err != nil {
		return 0, fmt.Errorf("--%w", err)
	}
	return i, nil
}

func openExisting(ctx context.Context, path string) (*store.Store, error) {
	st, err := store.OpenExisting(ctx, path)
	if err != nil {
		return nil, badInput(err)
	}
	return st, nil
}

func newCompareCmd(env Env) *cobra.Command {
	var results, metric string
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two configs step by step, benchstat-style: medians, spread, delta and p-value",
		Long: `Compare two configs (labels, or run ids) step by step: each side's median ± spread
(the larger distance from the median to the min or max, in % of the median) and number
of runs, the change of B against A, and the two-sided Mann-Whitney U p-value. A change
is marked ~ when it is not significant at p < 0.05; that needs at least 4 runs per
config (dbperf run ... --repeat 4 --label NAME).`,
		Example: `  dbperf compare a b
  dbperf compare pg15 pg16 --metric cpupq`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return badInput(fmt.Errorf("compare needs two configs, e.g. \"dbperf compare a b\" (got %d arguments)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(report.CompareMetrics(), metric) {
				return badInput(fmt.Errorf("--metric %q: use one of %s", metric, strings.Join(report.CompareMetrics(), ", ")))
			}
			rep, groups, err := loadGroups(cmd.Context(), env, results, args)
			if err != nil {
				return err
			}
			tw, err := report.CompareTwo(rep, groups[0], groups[1], metric)
			if err != nil {
				return badInput(err)
			}
			return report.RenderTwoWay(env.Out, tw)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", "results store: a SQLite file or postgres://user:pass@host/db (default $DBPERF_RESULTS or "+DefaultResults+")")
	cmd.Flags().StringVar(&metric, "metric", report.MetricThroughput, "what to compare: "+strings.Join(report.CompareMetrics(), ", "))
	return cmd
}
