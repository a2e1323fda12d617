package metrics

import (
	"math"

	"github.com/dbperf/dbperf/internal/hwstat"
)

// HW is what the machine, the server's processes and dbperf did over a span (an interval
// or a whole step), from /proc (DESIGN.md "Measurement rules"). Counters are differences
// between the span's first and last samples; the first sample of a step is a baseline only.
type HW struct {
	// CPU is machine-wide CPU seconds by kind, summed over all CPUs (/proc/stat), and the
	// CPU time elapsed (wall seconds × CPUs online); CPU.BusySec is the numerator of cpupq.
	CPU             hwstat.CPUTimes
	ContextSwitches uint64
	// Devices are the block devices holding the data directory whose IO is counted; empty
	// when IO was not sampled (then the IO fields are absent, not zero).
	Devices    []string
	ReadOps    uint64
	ReadBytes  uint64
	WriteOps   uint64
	WriteBytes uint64
	// Server is the database server's processes (all PostgreSQL processes, mariadbd);
	// Server.Known is false when dbperf cannot see them (a remote server) and for embedded
	// engines, whose work is in Client.
	Server ProcHW
	// Client is dbperf's own process.
	Client ProcHW
	// Embedded: the engine runs inside dbperf, so its CPU and memory are Client's.
	Embedded bool
	// Remote: the server runs on another machine, so the machine-wide figures (CPU,
	// context switches) describe only the client's machine and yield no per-op metric.
	Remote bool
	// Shared: another step ran on the machine at the same time (the duet design), so the
	// machine-wide figures (CPU, context switches, the devices' IO) describe both and yield
	// no per-op metric; Client is this step's worker threads only.
	Shared bool
}

// IOKnown says whether the device IO fields were measured.
func (h HW) IOKnown() bool { return len(h.Devices) > 0 }

// ProcHW is one process or a group of processes over a span.
type ProcHW struct {
	Known bool
	// Processes is how many processes were seen during the span.
	Processes int
	// CPUSec is the processes' utime+stime over the span; for a server's process tree it
	// includes processes that exited within the span (hwstat.GroupDelta).
	CPUSec float64
	// PeakMemBytes is the largest resident memory seen at any sample of the span: RSS for
	// one process; for a server of several processes hwstat.ServerMemoryBytes (private
	// memory summed, shared memory counted once).
	PeakMemBytes uint64
	// IOKnown: /proc/PID/io was readable for every process. ReadBytes is what the
	// processes made the storage read (read_bytes). WriteBytes is write_bytes less
	// cancelled_write_bytes: page-cache pages or folios the processes dirtied — whole
	// folios, up to 2 MiB each with large folios, however few bytes were written — and
	// direct writes, not what reached the disks nor when (hwstat.ProcSample).
	IOKnown    bool
	ReadBytes  uint64
	WriteBytes uint64
}

// ConnCPU is the server-side CPU of the sessions of one role during a step: the backends'
// (PostgreSQL) or the connection threads' (MariaDB) utime+stime.
type ConnCPU struct {
	Role string
	// Sessions is how many sessions of the role were measured.
	Sessions int
	CPUSec   float64
}

// ConnCPUClientProcess is the ConnCPU role used for embedded engines: their sessions run in
// dbperf's goroutines, whose threads cannot be told apart, so the only per-connection
// figure is the client process's CPU.
const ConnCPUClientProcess = "client_process"

// Metric names of the HW-efficiency figures per step (reference §2.2; docs/metrics.md).
// "op" is the step's primary op: an inserted row in l.i0/l.i1/l.i2, an indexed
// row in l.x, a query in read-write steps.
const (
	MetricCPUPerOp       = "cpupq"        // machine CPU µs (busy: not idle, iowait or steal) per op
	MetricServerCPUPerOp = "server_cpupq" // server processes' CPU µs per op
	MetricClientCPUPerOp = "client_cpupq" // dbperf's CPU µs per op
	MetricCSPerOp        = "cspq"         // context switches per op
	MetricReadsPerOp     = "rpq"          // device reads per op
	MetricReadKBPerOp    = "rkbpq"        // KiB read from the devices per op
	MetricWritesPerRow   = "wpi"          // device writes per inserted row
	MetricWriteKBPerRow  = "wkbpi"        // KiB written to the devices per inserted row
	MetricDBGB           = "dbgb"         // database size at step end, GiB
	MetricRSSGB          = "rss_gb"       // server's peak resident memory, GiB
	MetricMaxOpSec       = "maxop_s"      // worst response time of the primary op, seconds
)

// MetricNames lists the HW-efficiency metrics in report order (HWDefs).
func MetricNames() []string { return names(HWDefs()) }

// MetricThinkUSPerOp is the mean pause, in µs, that the closed-loop workers took after
// each operation when the runner's think time was set (runner.Runner.Think), measured
// from the end of the operation to the moment the worker ran again: over the closed-loop
// workers of the step's primary label, or over all closed-loop workers when the primary
// label has none. The runner takes a timer's lateness off the next pauses, so it is the
// think time or a little more. Present only when a think time was set and some pause was
// completed. It is a setting's measurement, not an efficiency figure, so it is not in
// MetricNames.
const MetricThinkUSPerOp = "think_us_per_op"

// MetricServiceUSPerOp is the mean service time, in µs, of the completed operations of the
// closed-loop workers (of the primary label, or of all when it has none): each operation
// timed from its start to its end, as the latency percentiles are but exact rather than
// from a histogram of whole µs. With the pause after each (MetricThinkUSPerOp) it tells
// what a closed loop's rate should be, 1/(service + pause + the loop's own time), so it
// gives the known effect of a think time from the latencies measured
// (scripts/comparisons.py). Like the think time it is not in MetricNames.
const MetricServiceUSPerOp = "service_us_per_op"

// gib is the unit of dbgb and rss_gb (the reference divides du's bytes by 1024³).
const gib = 1 << 30

// InsertedRows is the denominator of wpi and wkbpi: rows of the labels whose role is
// insert, or for a load step without an inserter (l.x) its primary count (indexed rows),
// as the reference's insert_rate is for l.x, and for a "write" step (a sysbench write
// test) its primary count, the statements, as the reference's wKB/o. 0 when the step
// inserts nothing.
func (r StepResult) InsertedRows() int64 {
	var n int64
	found := false
	for _, l := range r.Labels {
		if l.Role == "insert" && l.Unit == UnitRows {
			n += l.Rows
			found = true
		}
	}
	if !found && (r.Kind == "load" || r.Kind == "write") {
		return r.PrimaryCount()
	}
	return n
}

// Efficiency computes the HW-efficiency metrics of a finished step from its measurements.
// A metric whose inputs were not measured (no HW sample, IO not sampled, server not
// visible, database size unknown) or whose denominator is 0 is left out — never 0.
func (r StepResult) Efficiency() map[string]float64 {
	out := map[string]float64{}
	set := func(name string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[name] = v
		}
	}
	ops := float64(r.PrimaryCount())
	rows := float64(r.InsertedRows())
	if p, ok := r.primary(); ok && p.Statements > 0 {
		worst := p.Service.Max
		if p.HasResponse {
			worst = max(worst, p.Response.Max)
		}
		set(MetricMaxOpSec, float64(worst)/1e6)
	}
	if r.DBSizeKnown {
		set(MetricDBGB, float64(r.DBSizeBytes)/gib)
	}
	if ops > 0 {
		set(MetricClientCPUPerOp, r.ClientCPUSec*1e6/ops)
	}
	hw := r.HW
	if hw == nil {
		return out
	}
	switch {
	case hw.Server.Known:
		set(MetricRSSGB, float64(hw.Server.PeakMemBytes)/gib)
	case hw.Embedded && hw.Client.Known:
		// The engine lives in dbperf: its memory is the client's.
		set(MetricRSSGB, float64(hw.Client.PeakMemBytes)/gib)
	}
	if ops > 0 && !hw.Remote && !hw.Shared {
		set(MetricCPUPerOp, hw.CPU.BusySec()*1e6/ops)
		set(MetricCSPerOp, float64(hw.ContextSwitches)/ops)
	}
	if ops > 0 {
		if hw.Server.Known {
			set(MetricServerCPUPerOp, hw.Server.CPUSec*1e6/ops)
		}
		if hw.IOKnown() && !hw.Shared {
			set(MetricReadsPerOp, float64(hw.ReadOps)/ops)
			set(MetricReadKBPerOp, float64(hw.ReadBytes)/1024/ops)
		}
	}
	if rows > 0 && hw.IOKnown() && !hw.Shared {
		set(MetricWritesPerRow, float64(hw.WriteOps)/rows)
		set(MetricWriteKBPerRow, float64(hw.WriteBytes)/1024/rows)
	}
	return out
}

func (r StepResult) primary() (LabelStats, bool) {
	for _, l := range r.Labels {
		if l.Label == r.Primary {
			return l, true
		}
	}
	return LabelStats{}, false
}
