// Package report is the last stage of the flow: it reads stored runs (store.Run values,
// never an engine) and projects them into a Report — per run, per step: throughput,
// per-label rates and latencies, background SLA verdicts computed from the stored
// intervals, client CPU per op, audit — which the renderers format as text or JSON.
// Build computes every derived number; renderers only format.
package report

import (
	"math"
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
	secs := finite(res.Seconds)
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
		ClientCPUSec:     finite(res.ClientCPUSec),
		ClientCPUPerOpUS: finite(res.ClientCPUPerOpUS()),
		Note:             res.Note,
		HW:               buildHW(res, env),
		Intervals:        make([]IntervalReport, 0, len(st.Intervals)),
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
			ClientCPUSec: finite(iv.ClientCPUSec),
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
	l.TargetPerSec = finite(l.TargetPerSec)
	return Op{LabelStats: l, Count: l.Count(), PerSec: perSec(l.Count(), seconds), EventsPerSec: perSec(l.Events, seconds)}
}

// perSec is count per second, 0 when seconds is not positive.
func perSec(count int64, seconds float64) float64 {
	if !(seconds > 0) {
		return 0
	}
	return finite(float64(count) / seconds)
}

// finite maps NaN and ±Inf to 0 so that no renderer ever emits them.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
