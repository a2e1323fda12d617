package runner

import (
	"context"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// kvProps reads a key-value engine's properties; ok is false for a SQL engine or when
// the engine could not tell (then the step has no key-value metrics).
func (r *Runner) kvProps(ctx context.Context) (engine.KVProps, bool) {
	kv, ok := r.Handle.(engine.KV)
	if !ok {
		return engine.KVProps{}, false
	}
	p, err := kv.Properties(ctx)
	return p, err == nil
}

// kvTicker reads a key-value engine's properties on every interval tick (on the
// controller goroutine, never a worker's) and gives each interval its figures
// (metrics.IntervalKVMetricNames): the stalls and compaction writes since the previous
// tick, and the L0 files and compaction debt now. A tick whose read fails leaves its
// interval without figures; the step goes on.
type kvTicker struct {
	kv   engine.KV
	prev engine.KVProps
	at   time.Time
}

// newKVTicker starts from the properties read before the load (nil for a SQL engine or
// when those could not be read).
func (r *Runner) newKVTicker(before engine.KVProps, known bool, at time.Time) *kvTicker {
	kv, ok := r.Handle.(engine.KV)
	if !ok || !known {
		return nil
	}
	return &kvTicker{kv: kv, prev: before, at: at}
}

func (t *kvTicker) tick(ctx context.Context, iv *metrics.Interval, now time.Time) {
	if t == nil {
		return
	}
	cur, err := t.kv.Properties(ctx)
	if err != nil {
		return
	}
	iv.Metrics = kvIntervalMetrics(t.prev, cur, now.Sub(t.at).Seconds())
	t.prev, t.at = cur, now
}

// last is the properties of the last tick: the step's "after".
func (t *kvTicker) last() engine.KVProps { return t.prev }

// kvIntervalMetrics are one interval's figures from the properties at its start and end.
func kvIntervalMetrics(prev, cur engine.KVProps, seconds float64) map[string]float64 {
	const mib, gib = 1 << 20, 1 << 30
	out := map[string]float64{}
	if seconds > 0 && prev.StallMicros >= 0 && cur.StallMicros >= 0 {
		out[metrics.MetricKVStallPct] = float64(cur.StallMicros-prev.StallMicros) / (seconds * 1e6) * 100
	}
	if prev.StallCount >= 0 && cur.StallCount >= 0 {
		out[metrics.MetricKVStalls] = float64(cur.StallCount - prev.StallCount)
	}
	if seconds > 0 && prev.CompactionBytesWritten >= 0 && cur.CompactionBytesWritten >= 0 {
		out[metrics.MetricKVCompactMBPerSec] = float64(cur.CompactionBytesWritten-prev.CompactionBytesWritten) / mib / seconds
	}
	for _, l := range cur.Levels {
		if l.Level == 0 {
			out[metrics.MetricKVL0Files] = float64(l.Files)
		}
	}
	if cur.PendingCompactionBytes >= 0 {
		out[metrics.MetricKVPendingCompactionGB] = float64(cur.PendingCompactionBytes) / gib
	}
	return out
}

// kvMetrics computes a key-value step's metrics (metrics.KVMetricNames and the shape
// before and after) from the engine's properties before and after the timed load, the
// load's groups and the per-label totals. A figure whose inputs the engine does not
// expose (engine.Unknown) is absent; so are ratios over zero.
func kvMetrics(before, after engine.KVProps, seconds float64, load workload.Load, labels []metrics.LabelStats) map[string]float64 {
	const mib, gib = 1 << 20, 1 << 30
	out := map[string]float64{}
	known := func(vs ...int64) bool {
		for _, v := range vs {
			if v < 0 {
				return false
			}
		}
		return true
	}
	events := map[string]int64{}
	for _, l := range labels {
		events[l.Label] = l.Events
	}
	var ingest, primary float64
	for _, g := range load.Groups {
		b := float64(events[g.Label] * g.BytesPerOp)
		if g.Role == "write" {
			ingest += b
		}
		if g.Label == load.Primary {
			primary = b
		}
	}
	if seconds > 0 && primary > 0 {
		out[metrics.MetricKVMBPerSec] = primary / mib / seconds
	}
	if ingest > 0 {
		out[metrics.MetricKVIngestGB] = ingest / gib
	}
	dcw := after.CompactionBytesWritten - before.CompactionBytesWritten
	dfw := after.FlushBytesWritten - before.FlushBytesWritten
	if known(before.CompactionBytesWritten, after.CompactionBytesWritten) {
		out[metrics.MetricKVCompactWriteGB] = float64(dcw) / gib
		if seconds > 0 {
			out[metrics.MetricKVCompactMBPerSec] = float64(dcw) / mib / seconds
		}
	}
	if known(before.CompactionBytesRead, after.CompactionBytesRead) {
		out[metrics.MetricKVCompactReadGB] = float64(after.CompactionBytesRead-before.CompactionBytesRead) / gib
	}
	if known(before.FlushBytesWritten, after.FlushBytesWritten) {
		out[metrics.MetricKVFlushGB] = float64(dfw) / gib
	}
	if ingest > 0 && known(before.CompactionBytesWritten, after.CompactionBytesWritten, before.FlushBytesWritten, after.FlushBytesWritten) {
		out[metrics.MetricKVWAmp] = float64(dcw+dfw) / ingest
	}
	if known(before.CompactionWallMicros, after.CompactionWallMicros) {
		out[metrics.MetricKVCompactWallSec] = float64(after.CompactionWallMicros-before.CompactionWallMicros) / 1e6
	}
	if known(before.CompactionCPUMicros, after.CompactionCPUMicros) {
		out[metrics.MetricKVCompactCPUSec] = float64(after.CompactionCPUMicros-before.CompactionCPUMicros) / 1e6
	}
	if seconds > 0 && known(before.StallMicros, after.StallMicros) {
		out[metrics.MetricKVStallPct] = float64(after.StallMicros-before.StallMicros) / (seconds * 1e6) * 100
	}
	if known(before.StallCount, after.StallCount) {
		out[metrics.MetricKVStalls] = float64(after.StallCount - before.StallCount)
	}
	if known(after.LiveBytes) {
		out[metrics.MetricKVLSMGB] = float64(after.LiveBytes) / gib
	}
	if known(after.PendingCompactionBytes) {
		out[metrics.MetricKVPendingCompactionGB] = float64(after.PendingCompactionBytes) / gib
	}
	for when, p := range map[string]engine.KVProps{"before": before, "after": after} {
		for _, l := range p.Levels {
			out[metrics.ShapeLevelFiles(when, l.Level)] = float64(l.Files)
			out[metrics.ShapeLevelBytes(when, l.Level)] = float64(l.Bytes)
		}
		if known(p.MemtableEntries) {
			out[metrics.ShapeMemtableEntries(when)] = float64(p.MemtableEntries)
		}
		if known(p.MemtableBytes) {
			out[metrics.ShapeMemtableBytes(when)] = float64(p.MemtableBytes)
		}
		if known(p.ImmutableMemtables) {
			out[metrics.ShapeImmutable(when)] = float64(p.ImmutableMemtables)
		}
	}
	return out
}
