package metrics

// Basis is what a metric is counted per: an operation, an inserted row, or nothing (a
// size, a time or a share of the step).
type Basis string

// Bases of the step metrics.
const (
	PerOp  Basis = "op"
	PerRow Basis = "row" // per inserted row (InsertedRows)
	PerRun Basis = ""    // the step's own figure
)

// Def is one step metric's definition: its name as stored, its unit, which way is
// better, what it is, and how reports treat it. Every report, comparison, chart and history
// reads a metric's properties from here, so a metric is defined in one place (Defs).
type Def struct {
	Name string
	// Unit is shown after the value: "µs/op", "GiB", "s", "MB/s", "%", "count", or ""
	// (a count or a ratio whose basis says what it is per).
	Unit string
	// Basis is what the figure is per. A one-op step's single operation would make a
	// per-op or per-row figure the step's total: reports leave those out for it.
	Basis Basis
	// HigherBetter says a rise is an improvement (a rate of user work); every cost is
	// better lower.
	HigherBetter bool
	// Time marks a time, a CPU figure or a rate: what other work on the machine disturbs,
	// so a comparison widens its interval on a busy machine as it does throughput's.
	Time bool
	// Charted: a comparison's HTML page draws a bar chart of it per step.
	Charted bool
	// Legend says what it is, in a few words, for the reports' legends.
	Legend string
}

// PerOpFigure says whether the figure is a rate per op or per row.
func (d Def) PerOpFigure() bool { return d.Basis == PerOp || d.Basis == PerRow }

// HWDefs are the HW-efficiency metrics' definitions (reference §2.2) in report order. "op"
// is the step's primary op: an inserted row in l.i0/l.i1/l.i2, an indexed row in l.x, a
// query in read-write steps. A function, not a variable: no package-level mutable state.
func HWDefs() []Def {
	return []Def{
		{Name: MetricCPUPerOp, Unit: "µs/op", Basis: PerOp, Time: true, Charted: true,
			Legend: "machine CPU µs per op (busy: not idle, iowait or steal)"},
		{Name: MetricServerCPUPerOp, Unit: "µs/op", Basis: PerOp, Time: true, Charted: true,
			Legend: "the server processes' CPU µs per op"},
		{Name: MetricClientCPUPerOp, Unit: "µs/op", Basis: PerOp, Time: true,
			Legend: "dbperf's CPU µs per op"},
		{Name: MetricCSPerOp, Basis: PerOp, Time: true, Legend: "context switches per op"},
		{Name: MetricReadsPerOp, Basis: PerOp, Legend: "device reads per op"},
		{Name: MetricReadKBPerOp, Basis: PerOp, Charted: true, Legend: "KiB read from the devices per op"},
		{Name: MetricWritesPerRow, Basis: PerRow, Legend: "device writes per inserted row"},
		{Name: MetricWriteKBPerRow, Basis: PerRow, Charted: true, Legend: "KiB written to the devices per inserted row"},
		{Name: MetricDBGB, Unit: "GiB", Legend: "database GiB at the step's end"},
		{Name: MetricRSSGB, Unit: "GiB", Legend: "the server's peak resident GiB"},
		{Name: MetricMaxOpSec, Unit: "s", Time: true, Legend: "the primary op's worst response time, seconds"},
	}
}

// KVDefs are the key-value engines' metrics' definitions (db_bench's report.tsv names,
// reference §4.3) in report order.
func KVDefs() []Def {
	return []Def{
		{Name: MetricKVMBPerSec, Unit: "MB/s", Basis: PerOp, HigherBetter: true, Time: true,
			Legend: "user MB/s of the primary op"},
		{Name: MetricKVWAmp, Legend: "(compaction + flush bytes written) / bytes the writers wrote"},
		{Name: MetricKVCompactMBPerSec, Unit: "MB/s", Time: true, Legend: "compaction MB written per second"},
		{Name: MetricKVCompactWallSec, Unit: "s", Time: true, Legend: "compactions' wall seconds"},
		{Name: MetricKVCompactCPUSec, Unit: "s", Time: true, Legend: "compactions' CPU seconds"},
		{Name: MetricKVStallPct, Unit: "%", Time: true, Legend: "write-stall time, % of the step"},
		{Name: MetricKVStalls, Unit: "count", Time: true, Legend: "write stalls"},
		{Name: MetricKVLSMGB, Unit: "GiB", Legend: "live SST GiB at the step's end"},
		{Name: MetricKVIngestGB, Unit: "GiB", Legend: "user GiB the writers wrote"},
		{Name: MetricKVCompactWriteGB, Unit: "GiB", Legend: "GiB compactions wrote"},
		{Name: MetricKVCompactReadGB, Unit: "GiB", Legend: "GiB compactions read"},
		{Name: MetricKVFlushGB, Unit: "GiB", Legend: "GiB flushes wrote"},
		{Name: MetricKVPendingCompactionGB, Unit: "GiB", Legend: "compaction debt at the step's end, GiB"},
	}
}

// DefOf is the definition of a stored step metric, HW or key-value.
func DefOf(name string) (Def, bool) {
	for _, ds := range [][]Def{HWDefs(), KVDefs()} {
		for _, d := range ds {
			if d.Name == name {
				return d, true
			}
		}
	}
	return Def{}, false
}

func names(ds []Def) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}
