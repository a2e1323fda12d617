package store

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// TestReadersDuringWrites (issue 23): a reader of a run being written sees whole intervals
// only — every interval with its labels and HW, numbered without a gap — on both kinds of
// store, reading through a second handle as another process would, while the writer adds an
// interval every 2 ms (a run at --report-interval 0.05 writes one every 50 ms). Before reads
// were one snapshot, a read that fell between an interval and its HW row failed with "no
// interval N in step M".
func TestReadersDuringWrites(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t)
			ctx := context.Background()
			r := w
			if b.name == "sqlite" {
				var err error
				if r, err = Open(ctx, w.Path()); err != nil {
					t.Fatal(err)
				}
				defer r.Close()
			}
			id, err := w.BeginRun(ctx, testMeta("live"))
			if err != nil {
				t.Fatal(err)
			}
			sid, err := w.BeginStep(ctx, id, 0, "qr100", "", t0)
			if err != nil {
				t.Fatal(err)
			}
			const n = 300
			var written atomic.Int64
			done := make(chan error, 1)
			go func() {
				for i := range n {
					x := iv(i, lbl("query", metrics.UnitOps, 10, false, 0), lbl("insert", metrics.UnitRows, 1, true, 100))
					x.HW = testHW(true, true)
					if err := w.AppendIntervals(ctx, sid, []metrics.Interval{x}); err != nil {
						done <- err
						return
					}
					written.Store(int64(i + 1))
					time.Sleep(2 * time.Millisecond)
				}
				done <- nil
			}()
			reads, last := 0, 0
			for writing := true; writing; {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					writing = false
				default:
				}
				before := int(written.Load())
				runs, err := r.Results(ctx, []int64{id})
				if err != nil {
					t.Fatalf("read %d (%d intervals written): %v", reads, before, err)
				}
				reads++
				ivs := runs[0].Steps[0].Intervals
				if len(ivs) < before || len(ivs) < last {
					t.Fatalf("read %d: %d intervals, %d were written before it began (%d read before)", reads, len(ivs), before, last)
				}
				last = len(ivs)
				for k, x := range ivs {
					if x.Seq != k || len(x.Labels) != 2 || x.HW == nil {
						t.Fatalf("read %d: interval %d of %d: seq %d, %d labels, HW %v", reads, k, len(ivs), x.Seq, len(x.Labels), x.HW != nil)
					}
				}
			}
			if last != n || reads < 10 {
				t.Errorf("%d reads, the last saw %d of %d intervals", reads, last, n)
			}
			t.Logf("%s: %d reads during %d interval writes", b.name, reads, n)
		})
	}
}
