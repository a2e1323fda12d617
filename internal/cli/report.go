package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/store"
)

func newRunsCmd(env Env) *cobra.Command {
	var results, label string
	var limit int
	cmd := &cobra.Command{
		Use:     "runs",
		Short:   "List the stored runs, one line each",
		Example: "  dbperf runs\n  dbperf runs --label rpc100 --limit 5",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return badInput(fmt.Errorf("--limit must not be negative, got %d", limit))
			}
			st, err := openResults(cmd.Context(), results, env)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), store.RunFilter{Label: label, Limit: limit})
			if err != nil {
				return err
			}
			return render.Runs(env.Out, runs)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringVar(&label, "label", "", "only runs with this label")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N runs (0 = all)")
	return cmd
}

// lookupFormat finds --format among formats: exit 2 naming the formats there are.
func lookupFormat[V any](formats []render.Format[V], name string) (render.Format[V], error) {
	f, err := render.Lookup(formats, name)
	if err != nil {
		return f, badInput(fmt.Errorf("--%w", err))
	}
	return f, nil
}

func newReportCmd(env Env) *cobra.Command {
	var results, format, out, base, color string
	var force bool
	cmd := &cobra.Command{
		Use:   "report [RUN...]",
		Short: "Report and compare stored runs: text, Markdown, CSV, TSV, JSON or an HTML page with charts",
		Long: `Report stored runs. RUN is a run id or a label; a label stands for all runs with it
(repeats of one config, e.g. from run --repeat) and is one config in the comparison.
Without RUN the latest run is reported.

One run: its per-step summary, latency and HW-efficiency tables (text). Several: tables
comparing the configs, rows = configs, columns = steps: absolute throughput, throughput
relative to the base (--base; default the first RUN), geometric means per step family,
background writers against their target (SLA), HW efficiency absolute and relative,
server CPU per connection role, and latency. Repeated runs show median [min–max], ! when
noisy (a spread over 5% of the median); relative cells show the ratio with its 95%
confidence interval, better or worse only when the interval excludes 1 and the change is
over 2%, = the same, ? unstable, no mark with too few runs for an interval (4 per config).

Runs reported together must be comparable: one workload, workload version and scale,
the same stored parameters (except ` + report.MismatchIgnoredDoc + `).
Otherwise report exits with status 2 naming each difference and writes nothing; --force
reports them anyway, with a warning per difference.

Formats: text (colour on a terminal: --color), md, csv and tsv (one file, one line per
table cell, with a table column), json (every run, plus "comparison"), html (one
self-contained page with the tables and charts; works offline).`,
		Example: `  dbperf report
  dbperf report rpc100 rpc1000
  dbperf report --base a a b --format html -o report.html
  dbperf report 12 15 --format csv -o cmp.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := lookupFormat(render.ReportFormats(), format)
			if err != nil {
				return err
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
			if len(rep.Runs) > 1 {
				if err := checkComparable(env, rep, groups, force); err != nil {
					return err
				}
			}
			cmp := report.Compare(rep, groups, baseIdx)
			rep.Comparison = &cmp
			toStdout := out == "" || out == "-"
			colour := color == "always" || color == "auto" && toStdout && env.IsTerminal && env.getenv("NO_COLOR") == ""
			write := func(w io.Writer) error { return f.Render(w, rep, render.Options{Colour: colour}) }
			if toStdout {
				return write(env.Out)
			}
			// A file's text is as wide as a pipe's: $COLUMNS, else 80.
			return writeFileAtomic(out, func(w io.Writer) error { return write(render.Fit(w, Env{Getenv: env.Getenv}.columns())) })
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(render.Names(render.ReportFormats()), ", "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout (written whole or not at all)")
	cmd.Flags().StringVar(&base, "base", "", "the RUN (id or label, one of those reported) others are compared with (default: the first)")
	cmd.Flags().StringVar(&color, "color", "auto", "colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never")
	cmd.Flags().BoolVar(&force, "force", false, "report runs that differ in workload, version, scale or parameters together anyway (a warning per difference)")
	return cmd
}

// loadGroups reads the runs that RUN arguments name from the results store, grouped into
// the compared configs (report.ResolveGroups). Every error is the user's: exit 2.
func loadGroups(ctx context.Context, env Env, results string, refs []string) (report.Report, []report.Group, error) {
	st, err := openResults(ctx, results, env)
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

// openResults opens the results store --results (or DBPERF_RESULTS) names for reading.
func openResults(ctx context.Context, results string, env Env) (*store.Store, error) {
	path, err := resultsPath(results, env)
	if err != nil {
		return nil, badInput(err)
	}
	return openExisting(ctx, path)
}

func openExisting(ctx context.Context, path string) (*store.Store, error) {
	st, err := store.OpenExisting(ctx, path)
	if err != nil {
		return nil, badInput(err)
	}
	return st, nil
}

func newCompareCmd(env Env) *cobra.Command {
	var results, base string
	var metricList []string
	var force bool
	cmd := &cobra.Command{
		Use:   "compare A B [C...]",
		Short: "Compare configs step by step, benchstat-style: medians with confidence intervals, ratios with verdicts",
		Long: `Compare configs (labels, or run ids) step by step, one table per --metric. Per config:
the median ± the larger distance to the ends of its 95% confidence interval (with fewer
than 6 runs: to the min or max) and the number of runs; one run shows its value alone.
Per config other than the base (--base; default the first): its figure ÷ the base's as a
change with the 95% confidence interval of that ratio (Hodges–Lehmann; paired trial by
trial when the runs are the trials of one interleaved sweep), and the minimum detectable
effect (mde: the smallest change these runs would detect with 80% power). A change is
marked ~ when the interval lies within ±2% (the same), ? when it is wider than that yet
shows no change beyond it (unstable: more noise than the threshold); unmarked, it is
higher or lower by more than 2%. Too few runs for an interval (fewer than 4 per config,
or 6 interleaved blocks) show the change in parentheses, with no verdict.

The configs must be comparable: runs of one workload and workload version, at one
scale, with the same stored parameters (except ` + report.MismatchIgnoredDoc + `).
Otherwise compare exits with status 2 naming each difference; --force compares anyway,
with a warning per difference.`,
		Example: `  dbperf compare a b
  dbperf compare pg15 pg16 pg17 --base pg16 --metric throughput,p99,cpupq
  dbperf compare 12 15 --metric server_cpupq --force`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return badInput(fmt.Errorf("compare needs two configs or more, e.g. \"dbperf compare a b\" (got %d arguments)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var ms []string
			for _, m := range metricList {
				m = strings.TrimSpace(m)
				if !slices.Contains(report.HistoryMetrics(), m) {
					return badInput(fmt.Errorf("--metric %q: use one of %s", m, strings.Join(report.HistoryMetrics(), ", ")))
				}
				if !slices.Contains(ms, m) {
					ms = append(ms, m)
				}
			}
			rep, groups, err := loadGroups(cmd.Context(), env, results, args)
			if err != nil {
				return err
			}
			baseIdx, err := baseGroup(groups, args, base)
			if err != nil {
				return badInput(err)
			}
			if err := checkComparable(env, rep, groups, force); err != nil {
				return err
			}
			var tables []report.BenchTable
			for _, m := range ms {
				t, err := report.CompareBench(rep, groups, baseIdx, m)
				if err != nil {
					return badInput(err)
				}
				tables = append(tables, t)
			}
			return render.BenchFormats()[0].Render(env.Out, tables, render.Options{})
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringSliceVar(&metricList, "metric", []string{report.MetricThroughput}, "what to compare, repeated or comma-separated: "+strings.Join(report.HistoryMetrics(), ", "))
	cmd.Flags().StringVar(&base, "base", "", "the config (id or label, one of those compared) the others are compared with (default: the first)")
	cmd.Flags().BoolVar(&force, "force", false, "compare configs that differ in workload, version, scale or parameters anyway (a warning per difference)")
	return cmd
}

// checkComparable refuses configs whose runs differ in what makes their figures
// incomparable (report.Mismatches): exit 2 with one line naming every difference and the
// fix. With force it writes a warning line per difference to stderr instead and lets the
// comparison go on.
func checkComparable(env Env, rep report.Report, groups []report.Group, force bool) error {
	ms := report.Mismatches(rep, groups)
	if len(ms) == 0 {
		return nil
	}
	for i, m := range ms {
		ms[i] = report.Printable(m) // they name the configs: labels
	}
	if !force {
		return badInput(fmt.Errorf("the runs compared differ: %s; compare runs of one workload, scale and parameters, or add --force to compare them anyway",
			strings.Join(ms, "; ")))
	}
	for _, m := range ms {
		fmt.Fprintf(env.Err, "dbperf: warning: compared anyway (--force): %s\n", m)
	}
	return nil
}
