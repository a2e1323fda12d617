package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/changepoint"
	"github.com/dbperf/dbperf/internal/store"
)

// MetricP99 names the primary op's 99th-percentile service latency (µs) in a history.
const MetricP99 = "p99"

// HistoryMetrics are the metrics a history can follow: throughput, the primary op's p99
// latency and the HW-efficiency metrics.
func HistoryMetrics() []string {
	return append([]string{MetricThroughput, MetricP99}, CompareMetrics()[1:]...)
}

// higherBetter says whether a rise of the metric is an improvement: throughput is, a
// latency is not, a stored metric as its definition says (metrics.Def: every cost per op,
// CPU, IO, size, is better lower).
func higherBetter(metric string) bool {
	return metric == MetricThroughput || metricHigherBetter(metric)
}

// Orders of a history's points.
const (
	OrderTime    = "time"
	OrderVersion = "version"
)

// HistoryOptions select and order a history.
type HistoryOptions struct {
	// Workload, Engine and Profile keep only runs of that workload, engine label and
	// config profile ("" = any).
	Workload, Engine, Profile string
	// Steps keeps only these steps (nil = every step of the series).
	Steps []string
	// Metrics are followed per step (nil = throughput).
	Metrics []string
	// Order is OrderTime (by start) or OrderVersion (by engine version, then start).
	Order string
	// Detect configures the change-point detection.
	Detect changepoint.Options
}

// History is every series found in a set of runs.
type History struct {
	Order  string
	Detect changepoint.Options
	Series []HistorySeries
}

// HistorySeries is one comparable series of runs: same workload (and version), engine,
// profile, parameters and host, with one line per step and metric.
type HistorySeries struct {
	// Key identifies the series (what must match for runs to be comparable).
	Key string
	// Title describes it for people.
	Title string
	// Runs are the series' runs in order: the x-axis.
	Runs  []HistoryRun
	Lines []HistoryLine
}

// HistoryRun is one point of the x-axis.
type HistoryRun struct {
	ID            int64
	Label         string
	StartedAt     time.Time
	EngineVersion string
	// BuildID is the run's --build-id ("" when not given).
	BuildID string
	// X names the point on the axis: the build id, else the engine version when the
	// series spans several, else the start time.
	X string
}

// HistoryLine is one step's metric over the series' runs.
type HistoryLine struct {
	Step, Metric string
	HigherBetter bool
	// Values has one entry per run of the series; NaN where the run did not measure it.
	Values []float64
	// Changes are the change points found over the measured values, oldest first.
	Changes []HistoryChange
}

// HistoryChange is one change point of a line.
type HistoryChange struct {
	changepoint.Point
	// RunID is the first run at the new level; Pos its index in HistorySeries.Runs.
	RunID int64
	Pos   int
	// Worse is true when the change is a regression for the metric (throughput down,
	// a cost per op or a latency up).
	Worse bool
}

// Verdict is "better" or "worse".
func (c HistoryChange) Verdict() string {
	if c.Worse {
		return "worse"
	}
	return "better"
}

// seriesParamsIgnored are stored parameters that do not make runs incomparable: the
// steps a run selected (each step is its own line), repeats, the measurement interval,
// the engine version (the x-axis of a sweep or of nightly builds), and where a run of an
// interleaved sweep stood in it (its sweep, trial, block and slice, and the design).
var seriesParamsIgnored = append([]string{"steps", "repeat", "report_interval_sec", "engine_version"},
	store.SweepParams()...)

// seriesEnvKeys are the host's fingerprint in a run's env.
var seriesEnvKeys = []string{"hostname", "cpu_model", "cores", "ram_bytes"}

// SeriesKeyDoc says what must match for two runs to be in one series (README, --help).
const SeriesKeyDoc = "workload and its version, engine (with MariaDB's storage engine), every stored " +
	"parameter except steps, repeat, report interval, engine version and an interleaved sweep's trial (so profile, scale, clients, " +
	"rows, time, managed or --dsn all must match), and the host: hostname, CPU model, cores and RAM"

// seriesKey is the canonical key of a run's series and its description.
func seriesKey(r RunReport) (key, title string) {
	params := map[string]any{}
	for k, v := range r.Params {
		if !slices.Contains(seriesParamsIgnored, k) {
			params[k] = v
		}
	}
	host := map[string]string{}
	for _, k := range seriesEnvKeys {
		host[k] = r.Env[k]
	}
	b, _ := json.Marshal(struct { // maps marshal with sorted keys: canonical
		W  string
		V  int
		E  string
		P  map[string]any
		Hw map[string]string
	}{r.Workload, r.WorkloadVersion, r.Engine, params, host})
	title = fmt.Sprintf("%s v%d on %s", r.Workload, r.WorkloadVersion, r.Engine)
	for _, k := range []string{"profile", "scale", "clients"} {
		if v, ok := r.Params[k]; ok && fmt.Sprint(v) != "" {
			title += fmt.Sprintf(", %s %v", k, v)
		}
	}
	if h := r.Env["hostname"]; h != "" {
		title += ", host " + h
	}
	return string(b), title
}

// distinguish adds to the titles of series that would read the same (seriesKey's title
// names only the profile, scale, clients and host) every stored parameter and host figure
// whose value differs between them, so that each series' heading says what sets it apart
// (issue 42: three series headed alike differed in --server-memory and --rows).
// members[i] are series[i]'s runs; the first run's values stand for the series.
func distinguish(series []HistorySeries, members [][]RunReport) {
	byTitle := map[string][]int{}
	for i, s := range series {
		byTitle[s.Title] = append(byTitle[s.Title], i)
	}
	for _, idx := range byTitle {
		if len(idx) < 2 {
			continue
		}
		value := func(i int, k string) string {
			r := members[i][0]
			if v, ok := r.Params[k]; ok {
				return fmt.Sprint(v)
			}
			return r.Env[k]
		}
		keys := map[string]bool{}
		for _, i := range idx {
			for k := range members[i][0].Params {
				if !slices.Contains(seriesParamsIgnored, k) {
					keys[k] = true
				}
			}
			for _, k := range seriesEnvKeys {
				keys[k] = true
			}
		}
		var differ []string
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			for _, i := range idx[1:] {
				if value(i, k) != value(idx[0], k) {
					differ = append(differ, k)
					break
				}
			}
		}
		for _, i := range idx {
			for _, k := range differ {
				v := value(i, k)
				if v == "" {
					v = "–"
				}
				series[i].Title += fmt.Sprintf(", %s %s", k, v)
			}
		}
	}
}

// HistoryRuns are the stored runs a history of o may follow, reported: those finished ok
// of o's workload and engine ("" = any), for BuildHistory.
func HistoryRuns(ctx context.Context, st *store.Store, o HistoryOptions) ([]RunReport, error) {
	sums, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, s := range sums {
		if s.Status == store.RunOK && (o.Workload == "" || s.Workload == o.Workload) && (o.Engine == "" || s.Engine == o.Engine) {
			ids = append(ids, s.ID)
		}
	}
	runs, err := st.Results(ctx, ids)
	if err != nil {
		return nil, err
	}
	return Build(runs).Runs, nil
}

// BuildHistory groups runs into series and follows each step's metrics over them, with
// their change points. Only finished runs (status ok) count.
func BuildHistory(runs []RunReport, o HistoryOptions) (History, error) {
	if o.Order == "" {
		o.Order = OrderTime
	}
	if o.Order != OrderTime && o.Order != OrderVersion {
		return History{}, fmt.Errorf("order %q: use %s or %s", o.Order, OrderTime, OrderVersion)
	}
	if len(o.Metrics) == 0 {
		o.Metrics = []string{MetricThroughput}
	}
	for _, m := range o.Metrics {
		if !slices.Contains(HistoryMetrics(), m) {
			return History{}, fmt.Errorf("unknown metric %q: use %s", m, strings.Join(HistoryMetrics(), ", "))
		}
	}
	h := History{Order: o.Order, Detect: o.Detect}
	byKey := map[string]int{}
	var members [][]RunReport
	for _, r := range runs {
		if r.Status != store.RunOK || (o.Workload != "" && r.Workload != o.Workload) || (o.Engine != "" && r.Engine != o.Engine) ||
			(o.Profile != "" && fmt.Sprint(r.Params["profile"]) != o.Profile) {
			continue
		}
		key, title := seriesKey(r)
		i, ok := byKey[key]
		if !ok {
			i = len(h.Series)
			byKey[key] = i
			h.Series = append(h.Series, HistorySeries{Key: key, Title: title})
			members = append(members, nil)
		}
		members[i] = append(members[i], r)
	}
	distinguish(h.Series, members)
	for i := range h.Series {
		rs := members[i]
		slices.SortStableFunc(rs, func(a, b RunReport) int {
			if o.Order == OrderVersion {
				if c := compareVersion(a.EngineVersion, b.EngineVersion); c != 0 {
					return c
				}
			}
			return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
		})
		if err := h.Series[i].build(rs, o); err != nil {
			return History{}, fmt.Errorf("series %s: %w", h.Series[i].Title, err)
		}
	}
	return h, nil
}

func (s *HistorySeries) build(runs []RunReport, o HistoryOptions) error {
	versions := map[string]bool{}
	for _, r := range runs {
		versions[r.EngineVersion] = true
	}
	var steps []string
	for _, r := range runs {
		hr := HistoryRun{ID: r.ID, Label: r.Label, StartedAt: r.StartedAt, EngineVersion: r.EngineVersion, BuildID: r.Env["build_id"]}
		switch {
		case hr.BuildID != "":
			hr.X = hr.BuildID
		case len(versions) > 1:
			hr.X = r.EngineVersion
		default:
			hr.X = r.StartedAt.UTC().Format("2006-01-02 15:04")
		}
		s.Runs = append(s.Runs, hr)
		for _, st := range r.Steps {
			if st.Kind != "cleanup" && !slices.Contains(steps, st.Name) && (len(o.Steps) == 0 || slices.Contains(o.Steps, st.Name)) {
				steps = append(steps, st.Name)
			}
		}
	}
	for _, step := range steps {
		for _, m := range o.Metrics {
			get := historyValue(step, m)
			line := HistoryLine{Step: step, Metric: m, HigherBetter: higherBetter(m)}
			var measured []float64
			var at []int // measured[j] is the value of run at[j]
			for ri, r := range runs {
				v, ok := get(r)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					v = math.NaN()
				} else {
					measured = append(measured, v)
					at = append(at, ri)
				}
				line.Values = append(line.Values, v)
			}
			if len(measured) == 0 {
				continue
			}
			points, err := changepoint.Detect(measured, o.Detect)
			if err != nil {
				return fmt.Errorf("%s %s: %w", step, m, err)
			}
			for _, p := range points {
				pos := at[p.Index]
				worse := p.MeanAfter < p.MeanBefore
				if !line.HigherBetter {
					worse = p.MeanAfter > p.MeanBefore
				}
				line.Changes = append(line.Changes, HistoryChange{Point: p, RunID: runs[pos].ID, Pos: pos, Worse: worse})
			}
			s.Lines = append(s.Lines, line)
		}
	}
	return nil
}

// historyValue reads one step's metric from a run.
func historyValue(step, metric string) func(RunReport) (float64, bool) {
	switch metric {
	case MetricThroughput:
		return throughputOf(step)
	case MetricP99:
		return func(r RunReport) (float64, bool) {
			s, ok := r.Step(step)
			if !ok {
				return 0, false
			}
			p, ok := s.PrimaryOp()
			if !ok || p.Statements == 0 {
				return 0, false
			}
			return float64(p.Service.P99), true
		}
	}
	return metricOf(step, metric)
}

// compareVersion orders engine versions naturally: "9.6" < "10.11.2-MariaDB" < "15.4"
// (numeric runs compare as numbers, other runs as text).
func compareVersion(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range min(len(pa), len(pb)) {
		x, y := pa[i], pb[i]
		nx, ex := strconv.ParseInt(x, 10, 64)
		ny, ey := strconv.ParseInt(y, 10, 64)
		var c int
		if ex == nil && ey == nil {
			c = cmp.Compare(nx, ny)
		} else {
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// versionParts splits a version into runs of digits and runs of other characters
// (separators dropped).
func versionParts(v string) []string {
	var parts []string
	cur, digits := "", false
	flush := func() {
		if cur != "" {
			parts = append(parts, cur)
		}
		cur = ""
	}
	for _, ch := range v {
		isDigit := ch >= '0' && ch <= '9'
		switch {
		case ch == '.' || ch == '-' || ch == ' ' || ch == '_':
			flush()
		case cur != "" && isDigit != digits:
			flush()
			cur = string(ch)
		default:
			cur += string(ch)
		}
		digits = isDigit
	}
	flush()
	return parts
}

// Regressions are the newest change point of each line when it lies within the last
// recent runs of its series, is a regression and changes the metric by at least pct
// percent: what `dbperf history --fail-on-regression` fails on.
func (h History) Regressions(recent int, pct float64) []Regression {
	var out []Regression
	for _, s := range h.Series {
		for _, l := range s.Lines {
			if len(l.Changes) == 0 {
				continue
			}
			c := l.Changes[len(l.Changes)-1]
			if c.Worse && c.Pos >= len(s.Runs)-recent && math.Abs(c.ChangePct) >= pct {
				out = append(out, Regression{Series: s.Title, Step: l.Step, Metric: l.Metric, Change: c})
			}
		}
	}
	return out
}

// Regression is a recent change for the worse.
type Regression struct {
	Series, Step, Metric string
	Change               HistoryChange
}

func (r Regression) String() string {
	return fmt.Sprintf("%s: %s %s changed %+.1f%% (%s → %s) at run %d (p=%.3g)", r.Series, r.Step, r.Metric,
		r.Change.ChangePct, FormatNum(r.Change.MeanBefore), FormatNum(r.Change.MeanAfter), r.Change.RunID, r.Change.PValue)
}
