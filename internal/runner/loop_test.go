package runner

import (
	"context"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// nopWorker's op does nothing: what a closed-loop op costs the runner itself.
type nopWorker struct{ quota, done int }

func (w *nopWorker) Init(context.Context, engine.Session) error { return nil }
func (w *nopWorker) Ready(context.Context) error                { return nil }
func (w *nopWorker) Close() error                               { return nil }
func (w *nopWorker) Op(context.Context) (int64, error) {
	if w.done >= w.quota {
		return 0, workload.ErrDone
	}
	w.done++
	return 1, nil
}

// BenchmarkClosedLoop is the runner's own cost per closed-loop op (two clock reads, the
// histogram, the stop checks) around an op that does nothing: what every measured op
// pays on top of the engine's work.
func BenchmarkClosedLoop(b *testing.B) {
	b.ReportAllocs()
	reg := metrics.NewRegistry(time.Now())
	g := &workload.Group{Label: "nop", Unit: workload.UnitOps, UntilDone: true}
	w := &worker{w: &nopWorker{quota: b.N}, group: g, id: 1,
		rec: reg.Recorder(metrics.LabelSpec{Label: "nop", Unit: metrics.Unit(g.Unit)})}
	ctx := context.Background()
	done, errs := make(chan struct{}, 1), make(chan error, 1)
	b.ResetTimer()
	work(ctx, ctx, w, time.Now(), 0, done, errs)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
