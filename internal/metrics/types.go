// Package metrics turns timed operations into measurements: each worker records into its
// own Recorder (HdrHistogram, no shared lock on the hot path); the Registry merges them on
// every interval tick into Intervals and keeps the step totals. The runner feeds it; the
// store persists its types; reports read them back. Values are in base units (µs, seconds).
//
// Recorder is per worker. Registry turns a tick into an Interval; its step Totals carry
// each label's encoded histograms (LabelHist). StepResult is a step's result. hist.go:
// MergeLabels merges the totals of a run's parts (counts summed, percentiles from the
// merged histograms). roleops.go: RoleOps, a role's operations of its own work, for
// per-connection CPU per op. defs.go holds the step metrics' definitions as data: Def
// (name, unit, basis per op or per inserted row, better higher or lower, disturbed by
// other work, charted, legend), in HWDefs and KVDefs, found by DefOf. Every report table,
// legend, chart, `dbperf compare` and the history read them.
//
// Derived metrics are stored. A step's derived figures are computed once, when it ends:
// StepResult.Efficiency, the HW-efficiency metrics (cpupq, wkbpi, …; none of the
// machine-wide ones when HW.Remote, or HW.Shared: a duet's step, whose machine figures
// describe every point); StepResult.Noise, other_cpu_pct (the CPU of processes neither
// dbperf nor the server, kernel threads aside) and steal_pct, with NoisyOtherCPUPct = 10
// the busy-machine threshold reports use; and think_us_per_op, the measured pause of
// the runner's Think. The store keeps them in step_metrics beside the raw counters
// (step_hw), so SQL users and reports read the same numbers, and a report never
// recomputes them.
package metrics

import "time"

// Status of a step.
type Status string

// Step statuses (DESIGN.md JSON contract).
const (
	StatusOK          Status = "ok"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
	StatusSkipped     Status = "skipped"
)

// Unit says what Count means for a label.
type Unit string

// Units.
const (
	UnitRows Unit = "rows" // rows affected: insert, delete, index
	UnitOps  Unit = "ops"  // statements: queries
)

// Latency holds percentiles in microseconds.
type Latency struct {
	P50  int64 `json:"p50_us"`
	P90  int64 `json:"p90_us"`
	P99  int64 `json:"p99_us"`
	P999 int64 `json:"p999_us"`
	// P9999 is the 99.99th percentile; 0 in runs stored before schema 6, which did not
	// keep it (reports then show it as absent).
	P9999 int64 `json:"p9999_us"`
	Max   int64 `json:"max_us"`
}

// LabelStats is one op label's measurements over a span (an interval or a whole step).
type LabelStats struct {
	Label string
	Role  string
	Unit  Unit
	// Statements is the statements the timed operations that succeeded sent: one per
	// operation, or the group's StatementsPerOp (a sysbench transaction's BEGIN … COMMIT).
	Statements int64
	// Events is the number of timed operations that succeeded (sysbench's events or
	// transactions); equal to Statements when an operation is one statement. Runs stored
	// before schema 5 read back with Events = Statements.
	Events int64
	// Rows is the rows they affected (writes) or returned (queries).
	Rows int64
	// Errors counts failed operations (not in the histograms).
	Errors int64
	// Late counts rate-limited ops that began LateThreshold or more after their scheduled start.
	Late int64
	// Missed counts schedule slots dropped because the backlog exceeded the catch-up bound.
	Missed int64
	// Service is send → done.
	Service Latency
	// Response is scheduled start → done, for rate-limited labels only (HasResponse).
	Response    Latency
	HasResponse bool
	// TargetPerSec is the target rate in the label's unit over all workers (0 = unlimited).
	TargetPerSec float64
	// Background marks a rate-limited writer judged by the SLA.
	Background bool
	// Hist is the label's histograms, on a step's totals only (nil on intervals, and in
	// runs stored before schema 11).
	Hist *LabelHist
}

// Count is the label's count in its unit: rows for UnitRows, statements for UnitOps.
func (s LabelStats) Count() int64 {
	if s.Unit == UnitRows {
		return s.Rows
	}
	return s.Statements
}

// LateThreshold is how far past its scheduled start an op must begin to count as late.
const LateThreshold = 10 * time.Millisecond

// Interval is the measurements of one report interval of one step.
type Interval struct {
	Seq int
	// Start and End are offsets from the step's start.
	Start, End time.Duration
	Labels     []LabelStats
	// ClientCPUSec is dbperf's own CPU (user+system) during the interval.
	ClientCPUSec float64
	// HW is the machine, server and client over the interval; nil when not sampled.
	HW *HW
	// Metrics are the interval's engine figures by name (a key-value engine's stalls,
	// compaction rate and L0 files: IntervalKVMetricNames); nil when the engine has none.
	Metrics map[string]float64
}

// Seconds is the interval's length in seconds.
func (iv Interval) Seconds() float64 { return (iv.End - iv.Start).Seconds() }

// Audit is the outcome of a step's Verify.
type Audit struct {
	Status string // "ok", "failed", or "" when not run
	Detail string
}

// StepResult is everything measured for one step.
type StepResult struct {
	Name      string
	Status    Status
	Error     string
	StartedAt time.Time
	// Seconds is the measured wall time of the timed load.
	Seconds float64
	// Kind is "load" or "read-write"; Primary is the label that is the step's throughput.
	Kind    string
	Primary string
	// Labels are the whole-step totals per op label.
	Labels []LabelStats
	Audit  Audit
	// ClientCPUSec is dbperf's own CPU seconds (user+system, /proc/self/stat) during the load.
	ClientCPUSec float64
	// Note is what the step reports besides metrics (e.g. what a cleanup did).
	Note string
	// HW is the machine, server and client over the timed load; nil when not sampled.
	HW *HW
	// ConnCPU is the server-side CPU of the step's sessions by role (nil when the server's
	// processes are not visible).
	ConnCPU []ConnCPU
	// DBSizeBytes is the database's size at the end of the step (Handle.Size), when
	// DBSizeKnown.
	DBSizeBytes int64
	DBSizeKnown bool
	// Metrics are the step's figures by metric name: the HW-efficiency figures
	// (Efficiency), the noise figures (Noise), a key-value engine's (KVMetricNames) and the
	// measured think time (MetricThinkUSPerOp); a metric that could not be measured is
	// absent.
	Metrics map[string]float64
}

// PrimaryCount is the primary label's count (0 when absent).
func (r StepResult) PrimaryCount() int64 {
	for _, l := range r.Labels {
		if l.Label == r.Primary {
			return l.Count()
		}
	}
	return 0
}

// ClientCPUPerOpUS is the client's CPU µs per primary op (0 when there were none).
func (r StepResult) ClientCPUPerOpUS() float64 {
	n := r.PrimaryCount()
	if n == 0 {
		return 0
	}
	return r.ClientCPUSec * 1e6 / float64(n)
}
