package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/changepoint"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
	"github.com/dbperf/dbperf/internal/store"
)

// historyFormats are the values of history --format (render.HistoryFormats).
func historyFormats() []string { return render.Names(render.HistoryFormats()) }

func newHistoryCmd(env Env) *cobra.Command {
	var results, workload, engine, profile, order, format, out string
	var steps, metricsFlag []string
	var failPct float64
	var recent int
	det := changepoint.DefaultOptions()
	var minPct float64
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Follow each step's metrics over the stored runs of a series, with change points",
		Long: `Group the stored, finished runs into series of comparable runs and follow each step's
metrics over them, oldest first (--order time) or by engine version (--order version, for
sweeps), with the change points E-Divisive means finds in each.

Runs are in one series when these match: ` + report.SeriesKeyDoc + `.
The x-axis names each run by its --build-id when it has one, else by its engine version
when the series spans several, else by its start time.

--fail-on-regression PCT exits with status 3 when the newest change point of some step's
metric lies within the last --recent runs of its series and is a regression (throughput
down, a cost per op or latency up) of at least PCT percent: a nightly job fails on it.`,
		Example: `  dbperf history
  dbperf history --workload insertbench --engine postgres --metrics throughput,cpupq,p99
  dbperf history --order version --format html -o history.html
  dbperf history --steps qp100 --fail-on-regression 10 --recent 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var errs []string
			f, ferr := render.Lookup(render.HistoryFormats(), format)
			if ferr != nil {
				errs = append(errs, "--"+ferr.Error())
			}
			for _, m := range metricsFlag {
				if !slices.Contains(report.HistoryMetrics(), m) {
					errs = append(errs, fmt.Sprintf("--metrics: unknown metric %q: use %s", m, strings.Join(report.HistoryMetrics(), ", ")))
				}
			}
			if order != report.OrderTime && order != report.OrderVersion {
				errs = append(errs, fmt.Sprintf("--order %q: use %s or %s", order, report.OrderTime, report.OrderVersion))
			}
			if cmd.Flags().Changed("fail-on-regression") && failPct <= 0 {
				errs = append(errs, fmt.Sprintf("--fail-on-regression must be a positive percentage, got %g", failPct))
			}
			if recent < 1 {
				errs = append(errs, fmt.Sprintf("--recent must be at least 1, got %d", recent))
			}
			if det.Window < 2 {
				errs = append(errs, fmt.Sprintf("--window must be at least 2 runs, got %d", det.Window))
			}
			if !(det.MaxPValue > 0 && det.MaxPValue < 1) {
				errs = append(errs, fmt.Sprintf("--p-value must be within (0, 1), got %g", det.MaxPValue))
			}
			if det.Permutations < 10 {
				errs = append(errs, fmt.Sprintf("--permutations must be at least 10, got %d", det.Permutations))
			}
			if !(minPct >= 0) {
				errs = append(errs, fmt.Sprintf("--min-change must not be negative, got %g", minPct))
			}
			if len(errs) > 0 {
				return badInput(fmt.Errorf("%s", strings.Join(errs, "\n")))
			}
			det.MinMagnitude = minPct / 100
			st, err := openResults(cmd.Context(), results, env)
			if err != nil {
				return err
			}
			defer st.Close()
			sums, err := st.Runs(cmd.Context(), store.RunFilter{})
			if err != nil {
				return err
			}
			var ids []int64
			for _, s := range sums {
				if s.Status == store.RunOK && (workload == "" || s.Workload == workload) && (engine == "" || s.Engine == engine) {
					ids = append(ids, s.ID)
				}
			}
			runs, err := st.Results(cmd.Context(), ids)
			if err != nil {
				return err
			}
			h, err := report.BuildHistory(report.Build(runs).Runs, report.HistoryOptions{
				Workload: workload, Engine: engine, Profile: profile, Steps: steps, Metrics: metricsFlag, Order: order, Detect: det})
			if err != nil {
				return badInput(err)
			}
			write := func(w io.Writer) error { return f.Render(w, h, render.Options{}) }
			if out == "" || out == "-" {
				err = write(env.Out)
			} else {
				err = writeFileAtomic(out, write)
			}
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("fail-on-regression") {
				if regs := h.Regressions(recent, failPct); len(regs) > 0 {
					var lines []string
					for _, r := range regs {
						lines = append(lines, "regression: "+r.String())
					}
					return &exitError{code: ExitRegression, err: fmt.Errorf("%s", strings.Join(lines, "\n"))}
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&results, "results", "", resultsUsage)
	fl.StringVar(&workload, "workload", "", "only runs of this workload")
	fl.StringVar(&engine, "engine", "", "only runs of this engine, as stored (sqlite, postgres, mariadb/innodb, mariadb/rocksdb)")
	fl.StringVar(&profile, "profile", "", "only runs with this config profile")
	fl.StringSliceVar(&steps, "steps", nil, "only these steps (default: every step)")
	fl.StringSliceVar(&metricsFlag, "metrics", []string{report.MetricThroughput}, "metrics to follow: "+strings.Join(report.HistoryMetrics(), ", "))
	fl.StringVar(&order, "order", report.OrderTime, "order of the runs: time (start) or version (engine version, then start)")
	fl.StringVar(&format, "format", "text", "output format: "+strings.Join(historyFormats(), ", "))
	fl.StringVarP(&out, "output", "o", "", "write to this file instead of stdout (written whole or not at all)")
	fl.Float64Var(&failPct, "fail-on-regression", 0, "exit 3 when a recent change point is a regression of at least this many percent")
	fl.IntVar(&recent, "recent", 5, "with --fail-on-regression: how many of the newest runs of a series count as recent")
	fl.IntVar(&det.Window, "window", det.Window, "change-point detection: points per window")
	fl.Float64Var(&det.MaxPValue, "p-value", det.MaxPValue, "change-point detection: keep change points with a permutation p-value at most this")
	fl.IntVar(&det.Permutations, "permutations", det.Permutations, "change-point detection: permutations per significance test")
	fl.Float64Var(&minPct, "min-change", det.MinMagnitude*100, "change-point detection: drop change points smaller than this many percent")
	return cmd
}
