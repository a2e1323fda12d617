package metrics

import "fmt"

// Key-value engines' step metrics (docs/metrics.md, key-value metrics), stored with the
// HW-efficiency metrics in StepResult.Metrics under these names; db_bench's report.tsv
// names (reference §4.3) where it has one. A figure the engine does not expose is absent.
const (
	// MetricKVMBPerSec: user bytes (key + value) of the primary op per second, MB = 2²⁰.
	MetricKVMBPerSec = "mb_sec"
	// MetricKVIngestGB: user bytes the step's writers wrote, GiB.
	MetricKVIngestGB = "ingest_gb"
	// MetricKVWAmp: (bytes compactions wrote + bytes flushes wrote) / ingested bytes.
	MetricKVWAmp = "w_amp"
	// MetricKVCompactWriteGB, MetricKVCompactReadGB, MetricKVFlushGB: GiB during the step.
	MetricKVCompactWriteGB = "c_wgb"
	MetricKVCompactReadGB  = "c_rgb"
	MetricKVFlushGB        = "flush_gb"
	// MetricKVCompactMBPerSec: compaction writes per second of the step, MB = 2²⁰.
	MetricKVCompactMBPerSec = "c_mbps"
	// MetricKVCompactWallSec, MetricKVCompactCPUSec: compactions' wall and CPU seconds.
	MetricKVCompactWallSec = "c_wsecs"
	MetricKVCompactCPUSec  = "c_csecs"
	// MetricKVStallPct: write-stall time as a percentage of the step's time;
	// MetricKVStalls: stalls (or stopped writes) counted by the engine.
	MetricKVStallPct = "stall_pct"
	MetricKVStalls   = "nstall"
	// MetricKVLSMGB: the live SST files at the end of the step, GiB (lsm_sz).
	MetricKVLSMGB = "lsm_gb"
	// MetricKVPendingCompactionGB: compaction debt at the end of the step, GiB.
	MetricKVPendingCompactionGB = "pending_compaction_gb"
)

// KVMetricNames are the key-value metrics in report order (KVDefs).
func KVMetricNames() []string { return names(KVDefs()) }

// MetricKVL0Files is the files in L0 when an interval ended (interval metrics only).
const MetricKVL0Files = "l0_files"

// IntervalKVMetricNames are the key-value figures kept per interval, in report order:
// stall % and stalls during the interval, compaction writes per second of it, and the L0
// files and compaction debt at its end; the first three mean what the step's metrics of
// the same names mean, over the interval.
func IntervalKVMetricNames() []string {
	return []string{MetricKVStallPct, MetricKVStalls, MetricKVCompactMBPerSec, MetricKVL0Files, MetricKVPendingCompactionGB}
}

// Shape metric names: the LSM tree before and after the step ("before" or "after").
// ShapeLevelFiles and ShapeLevelBytes are per level.
func ShapeLevelFiles(when string, level int) string {
	return fmt.Sprintf("shape.%s.l%d_files", when, level)
}

// ShapeLevelBytes is the bytes of a level's files.
func ShapeLevelBytes(when string, level int) string {
	return fmt.Sprintf("shape.%s.l%d_bytes", when, level)
}

// ShapeMemtableEntries, ShapeMemtableBytes, ShapeImmutable: the memtables.
func ShapeMemtableEntries(when string) string { return "shape." + when + ".mem_entries" }

// ShapeMemtableBytes is the memtables' bytes.
func ShapeMemtableBytes(when string) string { return "shape." + when + ".mem_bytes" }

// ShapeImmutable is the immutable memtables waiting for a flush.
func ShapeImmutable(when string) string { return "shape." + when + ".imm_memtables" }
