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
)

// historyFlags are `dbperf history`'s flags.
type historyFlags struct {
	results, workload, engine, profile, order, format, out string
	steps, metrics                                         []string
	failPct, minPct                                        float64
	recent                                                 int
	det                                                    changepoint.Options
}

func newHistoryCmd(env Env) *cobra.Command {
	h := &historyFlags{det: changepoint.DefaultOptions()}
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
		RunE: func(cmd *cobra.Command, _ []string) error { return h.run(cmd, env) },
	}
	fl := cmd.Flags()
	fl.StringVar(&h.results, "results", "", resultsUsage)
	fl.StringVar(&h.workload, "workload", "", "only runs of this workload")
	fl.StringVar(&h.engine, "engine", "", "only runs of this engine, as stored (sqlite, postgres, mariadb/innodb, mariadb/rocksdb)")
	fl.StringVar(&h.profile, "profile", "", "only runs with this config profile")
	fl.StringSliceVar(&h.steps, "steps", nil, "only these steps (default: every step)")
	fl.StringSliceVar(&h.metrics, "metrics", []string{report.MetricThroughput}, "metrics to follow: "+strings.Join(report.HistoryMetrics(), ", "))
	fl.StringVar(&h.order, "order", report.OrderTime, "order of the runs: time (start) or version (engine version, then start)")
	fl.StringVar(&h.format, "format", "text", "output format: "+strings.Join(render.Names(render.HistoryFormats()), ", "))
	fl.StringVarP(&h.out, "output", "o", "", "write to this file instead of stdout (written whole or not at all)")
	fl.Float64Var(&h.failPct, "fail-on-regression", 0, "exit 3 when a recent change point is a regression of at least this many percent")
	fl.IntVar(&h.recent, "recent", 5, "with --fail-on-regression: how many of the newest runs of a series count as recent")
	fl.IntVar(&h.det.Window, "window", h.det.Window, "change-point detection: points per window")
	fl.Float64Var(&h.det.MaxPValue, "p-value", h.det.MaxPValue, "change-point detection: keep change points with a permutation p-value at most this")
	fl.IntVar(&h.det.Permutations, "permutations", h.det.Permutations, "change-point detection: permutations per significance test")
	fl.Float64Var(&h.minPct, "min-change", h.det.MinMagnitude*100, "change-point detection: drop change points smaller than this many percent")
	return cmd
}

// check is every problem of the flags, a line each.
func (h *historyFlags) check(failOnRegression bool) []string {
	var errs []string
	for _, m := range h.metrics {
		if !slices.Contains(report.HistoryMetrics(), m) {
			errs = append(errs, fmt.Sprintf("--metrics: unknown metric %q: use %s", m, strings.Join(report.HistoryMetrics(), ", ")))
		}
	}
	if h.order != report.OrderTime && h.order != report.OrderVersion {
		errs = append(errs, fmt.Sprintf("--order %q: use %s or %s", h.order, report.OrderTime, report.OrderVersion))
	}
	if failOnRegression && h.failPct <= 0 {
		errs = append(errs, fmt.Sprintf("--fail-on-regression must be a positive percentage, got %g", h.failPct))
	}
	if h.recent < 1 {
		errs = append(errs, fmt.Sprintf("--recent must be at least 1, got %d", h.recent))
	}
	if h.det.Window < 2 {
		errs = append(errs, fmt.Sprintf("--window must be at least 2 runs, got %d", h.det.Window))
	}
	if !(h.det.MaxPValue > 0 && h.det.MaxPValue < 1) {
		errs = append(errs, fmt.Sprintf("--p-value must be within (0, 1), got %g", h.det.MaxPValue))
	}
	if h.det.Permutations < 10 {
		errs = append(errs, fmt.Sprintf("--permutations must be at least 10, got %d", h.det.Permutations))
	}
	if !(h.minPct >= 0) {
		errs = append(errs, fmt.Sprintf("--min-change must not be negative, got %g", h.minPct))
	}
	return errs
}

// run builds the history of the stored runs the flags select, writes it, and exits 3 on
// a recent regression with --fail-on-regression.
func (h *historyFlags) run(cmd *cobra.Command, env Env) error {
	failOn := cmd.Flags().Changed("fail-on-regression")
	errs := h.check(failOn)
	f, ferr := render.Lookup(render.HistoryFormats(), h.format)
	if ferr != nil {
		errs = append([]string{"--" + ferr.Error()}, errs...)
	}
	if len(errs) > 0 {
		return badInput(fmt.Errorf("%s", strings.Join(errs, "\n")))
	}
	h.det.MinMagnitude = h.minPct / 100
	ctx := cmd.Context()
	st, err := openResults(ctx, h.results, env)
	if err != nil {
		return err
	}
	defer st.Close()
	o := report.HistoryOptions{Workload: h.workload, Engine: h.engine, Profile: h.profile, Steps: h.steps, Metrics: h.metrics, Order: h.order, Detect: h.det}
	runs, err := report.HistoryRuns(ctx, st, o)
	if err != nil {
		return err
	}
	hist, err := report.BuildHistory(runs, o)
	if err != nil {
		return badInput(err)
	}
	write := func(w io.Writer) error { return f.Render(w, hist, render.Options{}) }
	if h.out == "" || h.out == "-" {
		err = write(env.Out)
	} else {
		err = writeFileAtomic(h.out, write)
	}
	if err != nil {
		return err
	}
	if failOn {
		if regs := hist.Regressions(h.recent, h.failPct); len(regs) > 0 {
			var lines []string
			for _, r := range regs {
				lines = append(lines, "regression: "+r.String())
			}
			return &exitError{code: ExitRegression, err: fmt.Errorf("%s", strings.Join(lines, "\n"))}
		}
	}
	return nil
}
