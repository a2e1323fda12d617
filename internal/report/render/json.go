package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// The JSON report is a contract (DESIGN.md "Contracts users and scripts rely on"):
// snake_case names, units in names, stable once released. These types are its only
// definition; add fields, never rename or remove them.

type jsonReport struct {
	Runs []jsonRun `json:"runs"`
	// Comparison is present when the report compares groups of runs (dbperf report).
	Comparison *jsonComparison `json:"comparison,omitempty"`
}

type jsonComparison struct {
	Base   string      `json:"base"`
	Groups []jsonGroup `json:"groups"`
	// NeedRuns is how many trials per config a verdict needs; NeedPairs how many pairs
	// when the trials were interleaved (paired).
	NeedRuns  int         `json:"need_runs"`
	NeedPairs int         `json:"need_pairs"`
	Tables    []jsonTable `json:"tables"`
	// Notes say what the tables cannot (report.Note).
	Notes []jsonNote `json:"notes"`
}

// jsonNote is a comparison's note: kind one_op, no_op_writes, busy, duet or too_few; share_pct
// the share it is about (no-op operations, CPU taken by other work), when it has one.
type jsonNote struct {
	Kind     string   `json:"kind"`
	Steps    []string `json:"steps"`
	Label    string   `json:"label,omitempty"`
	SharePct float64  `json:"share_pct,omitempty"`
	Text     string   `json:"text"`
}

type jsonGroup struct {
	Name   string  `json:"name"`
	RunIDs []int64 `json:"run_ids"`
}

type jsonTable struct {
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	HeadColumns []string       `json:"head_columns"`
	Columns     []string       `json:"columns"`
	Rows        []jsonTableRow `json:"rows"`
	Legend      []string       `json:"legend"`
}

type jsonTableRow struct {
	Head   []string    `json:"head"`
	Base   bool        `json:"base"`
	Target bool        `json:"target"`
	Cells  []*jsonCell `json:"cells"` // null where not measured
}

// jsonCell is one figure over a group's runs; value is the median, in base units. In
// relative tables value is the ratio's estimate, min and max its interval (ci_lo, ci_hi;
// the estimate when it has none), n the trials (pairs when paired) of the candidate, and
// the ratio's fields are set: verdict (higher, lower, same, unstable, "" for none),
// significant (higher or lower), too_few_runs (no verdict), mde_pct (the smallest change
// the trials can detect at 80% power), noise_pct, paired. class follows the verdict only.
// p_value is no longer set (it was the Mann-Whitney U test's).
type jsonCell struct {
	Value        float64  `json:"value"`
	Min          float64  `json:"min"`
	Max          float64  `json:"max"`
	N            int      `json:"n"`
	Unit         string   `json:"unit"`
	SpreadPct    float64  `json:"spread_pct"`
	Noisy        bool     `json:"noisy"`
	Class        string   `json:"class"`
	PValue       *float64 `json:"p_value,omitempty"`
	Significant  *bool    `json:"significant,omitempty"`
	TooFew       *bool    `json:"too_few_runs,omitempty"`
	Verdict      *string  `json:"verdict,omitempty"`
	CILo         *float64 `json:"ci_lo,omitempty"`
	CIHi         *float64 `json:"ci_hi,omitempty"`
	Confidence   *float64 `json:"confidence,omitempty"`
	ThresholdPct *float64 `json:"threshold_pct,omitempty"`
	MDEPct       *float64 `json:"mde_pct,omitempty"`
	NoisePct     *float64 `json:"noise_pct,omitempty"`
	Paired       *bool    `json:"paired,omitempty"`
	NA           *int     `json:"n_base,omitempty"`
	// GeomeanSteps is, for a geometric mean, how many steps' ratios it combines.
	GeomeanSteps int `json:"geomean_steps,omitempty"`
	// CPUSec, CPUSecMin and CPUSecMax are, in the conn_cpu table, the role's CPU seconds
	// over the step behind the cell (median, min, max over the config's runs), whether the
	// cell's value is µs per op or those seconds; Ops is the median of the role's own
	// operations behind a per-op cell.
	CPUSec    *float64 `json:"cpu_sec,omitempty"`
	CPUSecMin *float64 `json:"cpu_sec_min,omitempty"`
	CPUSecMax *float64 `json:"cpu_sec_max,omitempty"`
	Ops       *float64 `json:"ops,omitempty"`
}

type jsonRun struct {
	ID              int64             `json:"id"`
	Workload        string            `json:"workload"`
	WorkloadVersion int               `json:"workload_version"`
	Engine          string            `json:"engine"`
	EngineVersion   string            `json:"engine_version"`
	EngineSettings  map[string]string `json:"engine_settings"`
	Label           string            `json:"label"`
	Seed            int64             `json:"seed"`
	Status          string            `json:"status"`
	StartedAt       string            `json:"started_at"`
	FinishedAt      *string           `json:"finished_at"`
	Params          map[string]any    `json:"params"`
	Env             map[string]string `json:"env"`
	StepGroups      []store.StepGroup `json:"step_groups"`
	Steps           []jsonStep        `json:"steps"`
}

type jsonStep struct {
	Name             string                    `json:"name"`
	Group            string                    `json:"group"`
	Status           string                    `json:"status"`
	Error            string                    `json:"error"`
	Seconds          float64                   `json:"seconds"`
	Kind             string                    `json:"kind"`
	Primary          string                    `json:"primary"`
	Ops              map[string]jsonOp         `json:"ops"`
	Background       map[string]jsonBackground `json:"background"`
	Audit            jsonAudit                 `json:"audit"`
	ClientCPUSec     float64                   `json:"client_cpu_sec"`
	ClientCPUPerOpUS float64                   `json:"client_cpu_us_per_op"`
	Note             string                    `json:"note"`
	// HW holds the HW-efficiency metrics (cpupq, ...; absent when not measured, with the
	// reason under "absent") and the counters behind them (docs/metrics.md).
	HW map[string]any `json:"hw"`
	// ConnCPU is the server-side CPU seconds of the step's sessions by role.
	ConnCPU map[string]float64 `json:"conn_cpu"`
	// ConnCPUUSPerOp is, for each role with operations of its own (report.RoleCPU), its
	// CPU µs per operation: per row (insert, delete, index) or per query ("hw.conn_op_unit"
	// says which, "hw.conn_ops" counts them); a role without any is absent.
	ConnCPUUSPerOp map[string]float64 `json:"conn_cpu_us_per_op"`
	Intervals      []jsonInterval     `json:"intervals"`
}

// jsonLatency has metrics.Latency's fields, so one converts to the other.
type jsonLatency struct {
	P50  int64 `json:"p50_us"`
	P90  int64 `json:"p90_us"`
	P99  int64 `json:"p99_us"`
	P999 int64 `json:"p999_us"`
	// P9999 is absent in runs stored before it was kept.
	P9999 int64 `json:"p9999_us,omitempty"`
	Max   int64 `json:"max_us"`
}

type jsonOp struct {
	Unit  string `json:"unit"`
	Count int64  `json:"count"`
	// PerSec, EventsPerSec and the latencies are absent when no op finished.
	PerSec     *float64 `json:"per_sec,omitempty"`
	Statements int64    `json:"statements"`
	// Events are the timed operations (sysbench's transactions); Statements are what
	// they sent (16 per read-only transaction), equal to Events for one-statement ops.
	Events       int64    `json:"events"`
	EventsPerSec *float64 `json:"events_per_sec,omitempty"`
	Rows         int64    `json:"rows"`
	Errors       int64    `json:"errors"`
	Late         int64    `json:"late"`
	Missed       int64    `json:"missed"`
	*jsonLatency
	// Response is present only for rate-limited labels.
	Response *jsonLatency `json:"response,omitempty"`
	// TargetPerSec is present only when the label has a target.
	TargetPerSec float64 `json:"target_per_sec,omitempty"`
}

type jsonBackground struct {
	TargetPerSec            float64 `json:"target_per_sec"`
	AchievedPerSec          float64 `json:"achieved_per_sec"`
	IntervalsBelowTargetPct float64 `json:"intervals_below_target_pct"`
	SLA                     string  `json:"sla"`
}

type jsonAudit struct {
	Status string `json:"status"`
	Detail string `json:"detail"`
}

type jsonInterval struct {
	Seq          int                       `json:"seq"`
	StartSec     float64                   `json:"start_sec"`
	EndSec       float64                   `json:"end_sec"`
	ClientCPUSec float64                   `json:"client_cpu_sec"`
	Ops          map[string]jsonIntervalOp `json:"ops"`
	HW           *jsonIntervalHW           `json:"hw,omitempty"`
	// Metrics are the engine's figures over the interval (key-value engines).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

type jsonIntervalHW struct {
	CPUBusyPct            float64  `json:"cpu_busy_pct"`
	CPUUserPct            float64  `json:"cpu_user_pct"`
	CPUSystemPct          float64  `json:"cpu_system_pct"`
	CPUIOWaitPct          float64  `json:"cpu_iowait_pct"`
	ContextSwitchesPerSec float64  `json:"context_switches_per_sec"`
	ReadOpsPerSec         *float64 `json:"read_ops_per_sec,omitempty"`
	ReadKBPerSec          *float64 `json:"read_kb_per_sec,omitempty"`
	WriteOpsPerSec        *float64 `json:"write_ops_per_sec,omitempty"`
	WriteKBPerSec         *float64 `json:"write_kb_per_sec,omitempty"`
	ServerCPUSec          *float64 `json:"server_cpu_sec,omitempty"`
	ServerCPUPct          *float64 `json:"server_cpu_pct,omitempty"`
}

type jsonIntervalOp struct {
	Count         int64   `json:"count"`
	PerSec        float64 `json:"per_sec"`
	P50           int64   `json:"p50_us"`
	P99           int64   `json:"p99_us"`
	Max           int64   `json:"max_us"`
	ResponseP99US *int64  `json:"response_p99_us,omitempty"`
	ResponseMaxUS *int64  `json:"response_max_us,omitempty"`
}

// JSON writes rep as the JSON report of DESIGN.md, indented by two spaces. Times are
// RFC 3339 in UTC; maps have sorted keys; absent maps and lists are {} and [], not null.
func JSON(w io.Writer, rep report.Report) error {
	out := jsonReport{Runs: make([]jsonRun, 0, len(rep.Runs))}
	for _, r := range rep.Runs {
		out.Runs = append(out.Runs, toJSONRun(r))
	}
	if c := rep.Comparison; c != nil {
		out.Comparison = toJSONComparison(*c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("render: write JSON: %w", err)
	}
	return nil
}

func jsonTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func toJSONRun(r report.RunReport) jsonRun {
	jr := jsonRun{
		ID:              r.ID,
		Workload:        r.Workload,
		WorkloadVersion: r.WorkloadVersion,
		Engine:          r.Engine,
		EngineVersion:   r.EngineVersion,
		EngineSettings:  nonNil(r.EngineSettings),
		Label:           r.Label,
		Seed:            r.Seed,
		Status:          r.Status,
		StartedAt:       jsonTime(r.StartedAt),
		Params:          nonNil(r.Params),
		StepGroups:      append([]store.StepGroup{}, r.StepGroups...),
		Env:             nonNil(r.Env),
		Steps:           make([]jsonStep, 0, len(r.Steps)),
	}
	if !r.FinishedAt.IsZero() {
		f := jsonTime(r.FinishedAt)
		jr.FinishedAt = &f
	}
	for _, s := range r.Steps {
		jr.Steps = append(jr.Steps, toJSONStep(s))
	}
	return jr
}

func toJSONStep(s report.StepReport) jsonStep {
	js := jsonStep{
		Name:             s.Name,
		Group:            s.Group,
		Status:           string(s.Status),
		Error:            s.Error,
		Seconds:          report.Finite(s.Seconds),
		Kind:             s.Kind,
		Primary:          s.Primary,
		Ops:              make(map[string]jsonOp, len(s.Ops)),
		Background:       make(map[string]jsonBackground, len(s.Background)),
		Audit:            jsonAudit{Status: s.Audit.Status, Detail: s.Audit.Detail},
		ClientCPUSec:     report.Finite(s.ClientCPUSec),
		ClientCPUPerOpUS: report.Finite(s.ClientCPUPerOpUS),
		Note:             s.Note,
		HW:               jsonHW(s.HW),
		ConnCPU:          map[string]float64{},
		ConnCPUUSPerOp:   map[string]float64{},
		Intervals:        make([]jsonInterval, 0, len(s.Intervals)),
	}
	for _, c := range s.HW.ConnCPU {
		js.ConnCPU[c.Role] = report.Finite(c.CPUSec)
	}
	roles := s.RoleCPUs()
	for _, rc := range roles {
		if us, ok := rc.USPerOp(); ok {
			js.ConnCPUUSPerOp[rc.Role] = us
		}
	}
	connOps(js.HW, roles)
	for _, o := range s.Ops {
		jo := jsonOp{
			Unit:         string(o.Unit),
			Count:        o.Count,
			Statements:   o.Statements,
			Events:       o.Events,
			Rows:         o.Rows,
			Errors:       o.Errors,
			Late:         o.Late,
			Missed:       o.Missed,
			TargetPerSec: report.Finite(o.TargetPerSec),
		}
		if o.Measured() {
			perSec, evPerSec, lat := report.Finite(o.PerSec), report.Finite(o.EventsPerSec), jsonLatency(o.Service)
			jo.PerSec, jo.EventsPerSec, jo.jsonLatency = &perSec, &evPerSec, &lat
		}
		if o.HasResponse && o.Measured() {
			resp := jsonLatency(o.Response)
			jo.Response = &resp
		}
		js.Ops[o.Label] = jo
	}
	for _, b := range s.Background {
		key := b.Role
		if _, taken := js.Background[key]; key == "" || taken {
			key = b.Label
		}
		js.Background[key] = jsonBackground{
			TargetPerSec:            report.Finite(b.TargetPerSec),
			AchievedPerSec:          report.Finite(b.AchievedPerSec),
			IntervalsBelowTargetPct: report.Finite(b.IntervalsBelowTargetPct),
			SLA:                     b.SLA,
		}
	}
	for _, iv := range s.Intervals {
		ji := jsonInterval{
			Seq:          iv.Seq,
			StartSec:     report.Finite(iv.StartSec),
			EndSec:       report.Finite(iv.EndSec),
			ClientCPUSec: report.Finite(iv.ClientCPUSec),
			Ops:          make(map[string]jsonIntervalOp, len(iv.Ops)),
			Metrics:      finiteMap(iv.Metrics),
		}
		if h := iv.HW; h != nil {
			jh := &jsonIntervalHW{CPUBusyPct: h.CPUBusyPct, CPUUserPct: h.CPUUserPct, CPUSystemPct: h.CPUSystemPct,
				CPUIOWaitPct: h.CPUIOWaitPct, ContextSwitchesPerSec: h.ContextSwitchesPerSec}
			if h.IOKnown {
				jh.ReadOpsPerSec, jh.ReadKBPerSec = &h.ReadOpsPerSec, &h.ReadKBPerSec
				jh.WriteOpsPerSec, jh.WriteKBPerSec = &h.WriteOpsPerSec, &h.WriteKBPerSec
			}
			if h.ServerKnown {
				jh.ServerCPUSec, jh.ServerCPUPct = &h.ServerCPUSec, &h.ServerCPUPct
			}
			ji.HW = jh
		}
		for _, o := range iv.Ops {
			jo := jsonIntervalOp{
				Count: o.Count, PerSec: report.Finite(o.PerSec),
				P50: o.Service.P50, P99: o.Service.P99, Max: o.Service.Max,
			}
			if o.HasResponse {
				p99, mx := o.Response.P99, o.Response.Max
				jo.ResponseP99US, jo.ResponseMaxUS = &p99, &mx
			}
			ji.Ops[o.Label] = jo
		}
		js.Intervals = append(js.Intervals, ji)
	}
	return js
}

// jsonHW is a step's "hw" object: every measured metric by name, "absent" (metric → why
// it is missing), and the counters: machine CPU seconds by kind, busy and elapsed, and context switches,
// device IO ("io_devices", read/write ops and bytes, when sampled), "server" and "client"
// processes (cpu_sec, peak_mem_bytes, read_bytes/write_bytes from /proc/PID/io), database
// size and the number of sessions per role behind conn_cpu (connOps adds the roles'
// operations behind conn_cpu_us_per_op).
func jsonHW(h report.HWReport) map[string]any {
	out := map[string]any{"absent": nonNil(h.Absent)}
	for name, v := range h.Metrics {
		out[name] = report.Finite(v)
	}
	if h.DBSizeKnown {
		out["db_size_bytes"] = h.DBSizeBytes
	}
	if len(h.ConnCPU) > 0 {
		n := map[string]int{}
		for _, c := range h.ConnCPU {
			n[c.Role] = c.Sessions
		}
		out["conn_sessions"] = n
	}
	hw := h.HW
	if hw == nil {
		return out
	}
	c := hw.CPU
	for k, v := range map[string]float64{
		"cpu_user_sec": c.UserSec, "cpu_nice_sec": c.NiceSec, "cpu_system_sec": c.SystemSec, "cpu_idle_sec": c.IdleSec,
		"cpu_iowait_sec": c.IOWaitSec, "cpu_irq_sec": c.IRQSec, "cpu_softirq_sec": c.SoftIRQSec, "cpu_steal_sec": c.StealSec,
	} {
		out[k] = report.Finite(v)
	}
	out["cpu_busy_sec"] = report.Finite(c.BusySec())
	if c.ElapsedSec > 0 {
		out["cpu_elapsed_sec"] = report.Finite(c.ElapsedSec)
	}
	if t := c.SpanSec(); t > 0 {
		out["cpu_busy_pct"] = report.Finite(100 * c.BusySec() / t)
	}
	out["context_switches"] = hw.ContextSwitches
	out["embedded"] = hw.Embedded
	out["remote"] = hw.Remote
	if hw.IOKnown() {
		out["io_devices"] = hw.Devices
		out["read_ops"], out["read_bytes"] = hw.ReadOps, hw.ReadBytes
		out["write_ops"], out["write_bytes"] = hw.WriteOps, hw.WriteBytes
	}
	if hw.Server.Known {
		out["server"] = jsonProc(hw.Server)
	}
	out["client"] = jsonProc(hw.Client)
	return out
}

// connOps adds to a step's "hw" object the operations behind conn_cpu_us_per_op, for the
// roles with operations of their own: "conn_ops" (role → count) and "conn_op_unit" (role →
// "row", "query" or "op": what one is).
func connOps(hw map[string]any, rcs []report.RoleCPU) {
	ops, units := map[string]int64{}, map[string]string{}
	for _, rc := range rcs {
		if _, ok := rc.USPerOp(); ok {
			ops[rc.Role], units[rc.Role] = rc.Ops, rc.Noun
		}
	}
	if len(ops) > 0 {
		hw["conn_ops"], hw["conn_op_unit"] = ops, units
	}
}

func jsonProc(p metrics.ProcHW) map[string]any {
	m := map[string]any{"processes": p.Processes, "cpu_sec": report.Finite(p.CPUSec), "peak_mem_bytes": p.PeakMemBytes}
	if p.IOKnown {
		m["read_bytes"], m["write_bytes"] = p.ReadBytes, p.WriteBytes
	}
	return m
}

func toJSONComparison(c report.Comparison) *jsonComparison {
	jc := &jsonComparison{NeedRuns: c.NeedN, NeedPairs: c.NeedPairs, Groups: []jsonGroup{}, Tables: []jsonTable{}, Notes: []jsonNote{}}
	if c.Base < len(c.Groups) {
		jc.Base = c.Groups[c.Base].Name
	}
	for _, g := range c.Groups {
		jc.Groups = append(jc.Groups, jsonGroup{Name: g.Name, RunIDs: g.RunIDs})
	}
	for _, t := range c.Tables {
		jt := jsonTable{ID: t.ID, Title: t.Title, HeadColumns: t.HeadColumns, Columns: nonNilSlice(t.Columns),
			Legend: nonNilSlice(t.Legend), Rows: []jsonTableRow{}}
		for _, r := range t.Rows {
			jr := jsonTableRow{Head: r.Head, Base: r.Base, Target: r.Target, Cells: make([]*jsonCell, 0, len(r.Cells))}
			for _, c := range r.Cells {
				if !c.Present {
					jr.Cells = append(jr.Cells, nil)
					continue
				}
				jcell := &jsonCell{Value: report.Finite(c.Median), Min: report.Finite(c.Min), Max: report.Finite(c.Max), N: c.N, Unit: c.Unit,
					SpreadPct: report.Finite(c.SpreadPct), Noisy: c.Noisy, Class: string(c.Class)}
				if sec := c.CPUSec; sec != nil {
					med, lo, hi := report.Finite(sec.Median), report.Finite(sec.Min), report.Finite(sec.Max)
					jcell.CPUSec, jcell.CPUSecMin, jcell.CPUSecMax = &med, &lo, &hi
				}
				if ops := c.Ops; ops != nil {
					med := report.Finite(ops.Median)
					jcell.Ops = &med
				}
				if rel := c.Rel; rel != nil {
					sig, few, verdict := rel.Significant(), rel.Verdict == stats.VerdictNone, string(rel.Verdict)
					conf, th, noise, paired, na := report.Finite(rel.Confidence), report.Finite(100*rel.Threshold), report.Finite(rel.NoisePct), rel.Paired, rel.NA
					jcell.Significant, jcell.TooFew, jcell.Verdict = &sig, &few, &verdict
					jcell.Confidence, jcell.ThresholdPct, jcell.NoisePct, jcell.Paired, jcell.NA = &conf, &th, &noise, &paired, &na
					jcell.GeomeanSteps = rel.Steps
					if rel.HasCI {
						lo, hi := report.Finite(rel.Lo), report.Finite(rel.Hi)
						jcell.CILo, jcell.CIHi = &lo, &hi
					}
					if rel.HasMDE {
						mde := report.Finite(rel.MDEPct)
						jcell.MDEPct = &mde
					}
				}
				jr.Cells = append(jr.Cells, jcell)
			}
			jt.Rows = append(jt.Rows, jr)
		}
		jc.Tables = append(jc.Tables, jt)
	}
	for _, n := range c.Notes {
		jc.Notes = append(jc.Notes, jsonNote{Kind: n.Kind, Steps: nonNilSlice(n.Steps), Label: n.Label,
			SharePct: report.Finite(n.SharePct), Text: n.Text})
	}
	return jc
}

func nonNilSlice[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

// nonNil makes an absent map render as {} rather than null.
func nonNil[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}

// finiteMap drops the values JSON cannot carry (NaN, ±Inf: never stored, but a report
// must not fail on one); nil stays nil so the key is omitted.
func finiteMap(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}
