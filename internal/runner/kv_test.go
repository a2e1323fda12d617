package runner

import (
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

func TestKVMetrics(t *testing.T) {
	load := workload.Load{Primary: "get", Groups: []workload.Group{
		{Label: "get", Role: "read", BytesPerOp: 420},
		{Label: "put", Role: "write", BytesPerOp: 420},
	}}
	labels := []metrics.LabelStats{{Label: "get", Events: 1000}, {Label: "put", Events: 100}}
	before := engine.KVProps{CompactionBytesWritten: 1000, FlushBytesWritten: 500, CompactionBytesRead: 10,
		StallMicros: 0, StallCount: 1, CompactionCPUMicros: engine.Unknown, CompactionWallMicros: 0,
		MemtableEntries: 7, Levels: []engine.KVLevel{{Level: 0, Files: 2, Bytes: 200}}}
	after := engine.KVProps{CompactionBytesWritten: 1000 + 42000, FlushBytesWritten: 500 + 42000, CompactionBytesRead: 10,
		StallMicros: 500_000, StallCount: 3, CompactionCPUMicros: engine.Unknown, CompactionWallMicros: 2_000_000,
		MemtableEntries: engine.Unknown, LiveBytes: 1 << 30, Levels: []engine.KVLevel{{Level: 0, Files: 0}, {Level: 1, Files: 3, Bytes: 300}}}
	m := kvMetrics(before, after, 2, load, labels)
	for name, want := range map[string]float64{
		metrics.MetricKVMBPerSec:               420e3 / (1 << 20) / 2,
		metrics.MetricKVWAmp:                   84000.0 / 42000, // (compaction + flush written) / ingested
		metrics.MetricKVStallPct:               25,              // 0.5 s of 2 s
		metrics.MetricKVStalls:                 2,
		metrics.MetricKVCompactWallSec:         2,
		metrics.MetricKVLSMGB:                  1,
		metrics.ShapeLevelFiles("after", 1):    3,
		metrics.ShapeLevelFiles("before", 0):   2,
		metrics.ShapeMemtableEntries("before"): 7,
	} {
		if got, ok := m[name]; !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	// Unknown inputs: absent, never 0.
	for _, name := range []string{metrics.MetricKVCompactCPUSec, metrics.ShapeMemtableEntries("after")} {
		if v, ok := m[name]; ok {
			t.Errorf("%s = %v, want absent (the engine does not expose it)", name, v)
		}
	}
	// No writer: no ingest, no w_amp.
	m = kvMetrics(before, after, 2, workload.Load{Primary: "get", Groups: load.Groups[:1]}, labels)
	if v, ok := m[metrics.MetricKVWAmp]; ok {
		t.Errorf("w_amp without writes = %v, want absent", v)
	}
}

func TestKVIntervalMetrics(t *testing.T) {
	prev := engine.KVProps{StallMicros: 100_000, StallCount: 4, CompactionBytesWritten: 1 << 20,
		Levels: []engine.KVLevel{{Level: 0, Files: 9}}}
	cur := engine.KVProps{StallMicros: 350_000, StallCount: 6, CompactionBytesWritten: 5 << 20, PendingCompactionBytes: 1 << 29,
		Levels: []engine.KVLevel{{Level: 0, Files: 3}, {Level: 1, Files: 8}}}
	m := kvIntervalMetrics(prev, cur, 0.5)
	for name, want := range map[string]float64{
		metrics.MetricKVStallPct:            50, // 0.25 s of 0.5 s
		metrics.MetricKVStalls:              2,
		metrics.MetricKVCompactMBPerSec:     8, // 4 MiB in 0.5 s
		metrics.MetricKVL0Files:             3, // now, not before
		metrics.MetricKVPendingCompactionGB: 0.5,
	} {
		if got, ok := m[name]; !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	// What the engine does not expose is absent, never 0.
	unknown := engine.KVProps{StallMicros: engine.Unknown, StallCount: engine.Unknown,
		CompactionBytesWritten: engine.Unknown, PendingCompactionBytes: engine.Unknown}
	if m := kvIntervalMetrics(unknown, unknown, 1); len(m) != 0 {
		t.Errorf("figures from unknown properties: %v, want none", m)
	}
}
