// Package report is the last stage of the flow: it reads stored runs (store.Run values,
// never an engine) and projects them into a Report — per run, per step: throughput,
// per-label rates and latencies, background SLA verdicts computed from the stored
// intervals, client CPU per op, audit — and compares them (Compare, CompareBench,
// BuildHistory). It decides everything a report says: every derived number, every
// verdict and cell class, the text of every note and legend. Its renderers (package
// render, which imports this one and never the other way round) only format.
//
// # The model and its renderers are two packages
//
// report was once four jobs in one package (model, store loading, analyses,
// renderers), with two aligned-text table implementations and a switch on the format in
// each command. Now report decides everything a report says, as data: every figure,
// ratio, verdict, cell class and how a row marks it (Row.Shown: the base's row and blank
// cells unmarked), legend, note and its text, MDE line, and a run's notes. Printable and
// Clip are used for every stored string shown as text. Package render only spells that
// out, all text through one table (render/table.go); a new format is an entry in
// render.ReportFormats (or HistoryFormats, BenchFormats), and no command switches on a
// format name. The tests' fixtures live in report/reporttest, shared by both packages'
// tests.
//
// # Comparisons are of configs, not runs
//
// Reports are built from store.Run values (Build, Load, ResolveGroups, BaseIndex).
// `dbperf report a b` compares groups: a label is one config with its repeats, a run id a
// config of one run. Compare turns the groups into tables of Cells (a stats.Summary over
// the group's runs, and for relative tables a Rel: the stats.Ratio of the group's figure
// to the base's, paired by block when both groups' runs are trials of one interleaved
// sweep (pairValues, pairs.go), else unpaired) and Notes; every renderer formats those
// same cells and notes, so text, Markdown, CSV, JSON and HTML never disagree. In a duet
// the CPU assignment is a blocking factor taken out of the interval
// (stats.AdjustForFactor). variance.go splits each ratio's variance by source (seconds,
// slices, blocks, CPU assignment) with the white-noise limit (stats.DecomposePaired,
// DecomposeUnpaired).
//
// A relative cell's class (better, worse, same, unstable, none) comes from its ratio's
// verdict alone (stats.VerdictOf: the interval against ±2%), never from the estimate, so
// no cell is coloured better while its interval says the same, and a geomean carries an
// interval and verdict of its own (stats.GeoMeanRatio) instead of averaging marks. Per
// step the comparison decides once what it shows: a one-op step (oneOp: a cleanup, or a
// primary op run at most once per client) shows its duration and CPU seconds and is left
// out of geomeans and the latency table (StepFigure, figureOf); a step some run measured
// on a busy machine (other_cpu_pct plus steal_pct over 10%) gets an interval widened by
// the difference of the configs' mean busy shares (noiseWiden, stats.RatioOptions.Widen).
// notes.go writes the notes: one-op steps, no-op writes, a busy machine, too few trials.
//
// Before any of it, Mismatches (mismatch.go) says whether the runs are comparable at all:
// one workload, workload version, scale and stored parameters, MismatchIgnoredDoc
// aside; the cli and `dbperf serve` refuse them unless forced. `dbperf compare` is the
// same comparison seen per metric (CompareBench, the benchstat-style view of N configs:
// the same figureRatio and options, so a figure both show gets the same ratio and
// verdict). One run alone keeps the detailed per-run text report.
//
// # Other files
//
//   - history.go: runs in series with their change points (BuildHistory).
//   - explain.go: the model of `dbperf explain`. Folded stacks are parsed; self and total
//     CPU per function and µs per primary op are summed over a config's runs and ranked
//     by change, each with its share of its role's change (BuildExplain, LoadExplain).
//     explainpairs.go: each role's and function's change across blocks or runs with its
//     interval (stats.PairedShift), the verdict and a role's explained fraction.
//     explainsummary.go: the paragraph per changed step. explaindiag.go: statements
//     matched by text, per call and per op, plans outlined (PlanOutline), wait shares.
//     plans.go: plans compared by their tree of nodes and the attributes that make them,
//     conditions with their values masked, the keys a version adds left out
//     (ComparePlans, SamePlan), with the first difference. Steps are ranked by the change
//     of their rate, roles by their change.
//   - flame.go: differential flame graphs' trees (BuildFlameDiff, Comparison.FlameDiffs);
//     flameunits.go: a frame is coloured only when its interval across blocks or runs
//     excludes 0.
//   - comparetables.go and comparehw.go: the comparison's tables.
//   - pointer.go: Comparison.ExplainPointers, the last lines of a two-config report.
//   - concurrency.go: the tables of a concurrency axis (ConcurrencyTables for a sweep's
//     --clients, ThreadTables for steps a run repeats at several thread counts, TEST.tN).
//   - conncpu.go: per-connection CPU per operation of the role's own work.
package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/store"
)

// Report is stored runs projected for rendering.
type Report struct {
	Runs []RunReport
	// Location is the zone the text renderer shows times in; nil means time.Local.
	// JSON always uses UTC.
	Location *time.Location
	// Comparison, when set, is rendered too (JSON "comparison", the HTML page's tables).
	Comparison *Comparison
}

// RunReport is one run.
type RunReport struct {
	ID              int64
	Workload        string
	WorkloadVersion int
	Engine          string
	EngineVersion   string
	EngineSettings  map[string]string
	Label           string
	Seed            int64
	// Status is running, ok, failed or interrupted.
	Status     string
	StartedAt  time.Time
	FinishedAt time.Time // zero when the run did not finish
	Params     map[string]any
	Env        map[string]string
	// StepGroups are the workload's step groups in report order, as stored with the run.
	StepGroups []store.StepGroup
	Steps      []StepReport
}

// StepReport is one step of a run.
type StepReport struct {
	Seq  int
	Name string
	// Group names the step's group in its run's StepGroups ("" = none).
	Group   string
	Status  metrics.Status
	Error   string
	Seconds float64
	Kind    string
	// Primary is the label whose rate is the step's throughput.
	Primary string
	// Ops are the whole-step figures per label, in stored order.
	Ops []Op
	// Background holds the SLA verdicts of the rate-limited background writers.
	Background []Background
	Audit      metrics.Audit
	// ClientCPUSec is dbperf's own CPU; ClientCPUPerOpUS is it per primary op.
	ClientCPUSec     float64
	ClientCPUPerOpUS float64
	Note             string
	// HW is the step's HW-efficiency metrics, why any is missing, and their inputs.
	HW        HWReport
	Intervals []IntervalReport
	// Profiles are the step's stored CPU profiles per role (dbperf run --cpu-profile), as
	// the store read them: what the differential flame graphs draw (flame.go). No text
	// or JSON report shows them.
	Profiles []store.StepProfile
	// Explained says the step recorded statements or waits (dbperf run --explain).
	Explained bool
}

// PrimaryOp is the primary label's figures, if the step has them.
func (s StepReport) PrimaryOp() (Op, bool) {
	for _, o := range s.Ops {
		if o.Label == s.Primary {
			return o, true
		}
	}
	return Op{}, false
}

// Op is one label's figures over a span (a step or an interval).
type Op struct {
	metrics.LabelStats
	// Count is LabelStats.Count(): rows for row labels, statements for the others.
	Count int64
	// PerSec is Count over the span's seconds.
	PerSec float64
	// EventsPerSec is LabelStats.Events over the span's seconds: transactions per second
	// where an op is several statements (sysbench), else the same as statements per second.
	EventsPerSec float64
}

// Measured says some op of the label finished: its rate and latencies mean something (a
// renderer shows "-", never a 0 that was not measured).
func (o Op) Measured() bool { return o.Events > 0 }

// Single says the label is one op (a cleanup's wait, l.x's index build): its rate and
// percentiles would all be that op's time, so only its duration is shown.
func (o Op) Single() bool { return o.Events == 1 }

// RateUnit is the unit of the label's rate: rows/s where it counts rows, q/s for queries,
// else ops/s.
func (o Op) RateUnit() string {
	switch {
	case o.Unit == metrics.UnitRows:
		return "rows/s"
	case o.Role == "query" || strings.HasSuffix(o.Label, "query"):
		return "q/s"
	}
	return "ops/s"
}

// Notes are what the run's tables cannot show, a line each: a step's error, its audit's
// details, that an interrupted step has no totals, a step's note.
func (r RunReport) Notes() []string {
	var notes []string
	for _, s := range r.Steps {
		if s.Error != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", s.Name, s.Status, s.Error))
		}
		if s.Audit.Detail != "" {
			audit := s.Audit.Status
			if audit == "" {
				audit = "-"
			}
			notes = append(notes, fmt.Sprintf("%s audit %s: %s", s.Name, audit, s.Audit.Detail))
		}
		if s.Status == metrics.StatusInterrupted && len(s.Ops) == 0 && len(s.Intervals) > 0 {
			notes = append(notes, fmt.Sprintf("%s interrupted: no step totals (the process ended mid-step); %s stored, see --format json",
				s.Name, Plural(len(s.Intervals), "interval")))
		}
		if s.Note != "" {
			notes = append(notes, fmt.Sprintf("%s note: %s", s.Name, s.Note))
		}
	}
	if n := r.cachedNote(); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// serverMemoryRe reads the limit at the start of a run's env server_memory ("128MiB, page
// cache included (cgroup v1 …)", server.FormatSize's spelling).
var serverMemoryRe = regexp.MustCompile(`^(\d+) ?(TiB|GiB|MiB|KiB|bytes)\b`)

// cachedNote warns when a run under --server-memory never had a database larger than
// the limit: the server could keep all of it in memory, so the run was not the IO-bound
// one the limit is for (issue 42: a 0.084 GiB database under 128 MiB ran cached, with no
// note). "" when the run had no limit, no database size, or outgrew it.
func (r RunReport) cachedNote() string {
	m := serverMemoryRe.FindStringSubmatch(r.Env["server_memory"])
	if m == nil {
		return ""
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n <= 0 {
		return ""
	}
	limit := n << map[string]uint{"TiB": 40, "GiB": 30, "MiB": 20, "KiB": 10, "bytes": 0}[m[2]]
	largest, known := int64(0), false
	for _, s := range r.Steps {
		if s.HW.DBSizeKnown {
			largest, known = max(largest, s.HW.DBSizeBytes), true
		}
	}
	if !known || largest > limit {
		return ""
	}
	return fmt.Sprintf("the database stayed under --server-memory %s%s (%s GiB at its largest): the server could cache all of it, so this run was not IO-bound; for an IO-bound run give --rows (or --scale) a database several times the limit",
		m[1], m[2], FormatNum(float64(largest)/(1<<30)))
}

// IsOneOp says whether the run's step is one operation per client (a cleanup, an index
// build): its per-op figures would be the whole step's, so it has none.
func (r RunReport) IsOneOp(s StepReport) bool { return oneOp(r, s) }

// IntervalReport is one interval of a step.
type IntervalReport struct {
	Seq          int
	StartSec     float64
	EndSec       float64
	ClientCPUSec float64
	Ops          []Op
	// HW is the interval's machine, server and client rates (nil when not sampled).
	HW *IntervalHW
	// Metrics are the engine's figures over the interval (metrics.IntervalKVMetricNames
	// for a key-value engine); nil when it has none.
	Metrics map[string]float64
}

// Build projects stored runs into a Report, computing every derived number.
func Build(runs []store.Run) Report {
	rep := Report{Runs: make([]RunReport, 0, len(runs))}
	for _, r := range runs {
		rep.Runs = append(rep.Runs, buildRun(r))
	}
	return rep
}

func buildRun(r store.Run) RunReport {
	rr := RunReport{
		ID:              r.ID,
		Workload:        r.Workload,
		WorkloadVersion: r.WorkloadVersion,
		Engine:          r.Engine,
		EngineVersion:   r.EngineVersion,
		EngineSettings:  r.EngineSettings,
		Label:           r.Label,
		Seed:            r.Seed,
		Status:          r.Status,
		StartedAt:       r.StartedAt,
		FinishedAt:      r.FinishedAt,
		Params:          r.Params,
		Env:             r.Env,
		StepGroups:      r.StepGroups,
		Steps:           make([]StepReport, 0, len(r.Steps)),
	}
	for _, st := range r.Steps {
		rr.Steps = append(rr.Steps, buildStep(st, r.Env))
	}
	return rr
}

func buildStep(st store.Step, env map[string]string) StepReport {
	res := st.Result
	secs := Finite(res.Seconds)
	sr := StepReport{
		Seq:              st.Seq,
		Name:             res.Name,
		Group:            st.Group,
		Status:           res.Status,
		Error:            res.Error,
		Seconds:          secs,
		Kind:             res.Kind,
		Primary:          res.Primary,
		Audit:            res.Audit,
		ClientCPUSec:     Finite(res.ClientCPUSec),
		ClientCPUPerOpUS: Finite(res.ClientCPUPerOpUS()),
		Note:             res.Note,
		HW:               buildHW(res, env),
		Intervals:        make([]IntervalReport, 0, len(st.Intervals)),
		Profiles:         st.Profiles,
		Explained:        len(st.Statements) > 0 || len(st.Waits) > 0,
	}
	for _, l := range res.Labels {
		sr.Ops = append(sr.Ops, op(l, secs))
		if l.Background {
			sr.Background = append(sr.Background, background(l, secs, st.Intervals))
		}
	}
	for _, iv := range st.Intervals {
		ir := IntervalReport{
			Seq:          iv.Seq,
			StartSec:     iv.Start.Seconds(),
			EndSec:       iv.End.Seconds(),
			ClientCPUSec: Finite(iv.ClientCPUSec),
			HW:           buildIntervalHW(iv.HW, iv.Seconds()),
			Metrics:      iv.Metrics,
		}
		for _, l := range iv.Labels {
			ir.Ops = append(ir.Ops, op(l, iv.Seconds()))
		}
		sr.Intervals = append(sr.Intervals, ir)
	}
	return sr
}

func op(l metrics.LabelStats, seconds float64) Op {
	l.TargetPerSec = Finite(l.TargetPerSec)
	return Op{LabelStats: l, Count: l.Count(), PerSec: perSec(l.Count(), seconds), EventsPerSec: perSec(l.Events, seconds)}
}

// perSec is count per second, 0 when seconds is not positive.
func perSec(count int64, seconds float64) float64 {
	if !(seconds > 0) {
		return 0
	}
	return Finite(float64(count) / seconds)
}

// Finite maps NaN and ±Inf to 0 so that no renderer ever emits them.
func Finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
