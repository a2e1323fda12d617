package render

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// benchStore writes n runs shaped like tiny Insert Benchmark runs (l.i0, l.x and qp100
// with intervals, HW and metrics), half labelled a and half b, through the store's writer.
// It goes to /dev/shm when there is one: fsync there costs nothing, and the benchmark
// measures reading and rendering, not writing.
func benchStore(b testing.TB, n int) (string, []int64, []int64) {
	b.Helper()
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "dbperf-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "results.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var a, bb []int64
	for i := range n {
		label := "a"
		if i%2 == 1 {
			label = "b"
		}
		r := reporttest.RepeatRun(int64(i+1), label, 1+float64(i%2)*0.1, float64(i%7)/1000, 100)
		id, err := st.BeginRun(ctx, r.RunMeta)
		if err != nil {
			b.Fatal(err)
		}
		for seq, s := range r.Steps {
			sid, err := st.BeginStep(ctx, id, seq, s.Result.Name, "", s.Result.StartedAt)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.AppendIntervals(ctx, sid, s.Intervals); err != nil {
				b.Fatal(err)
			}
			if err := st.FinishStep(ctx, sid, s.Result); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.FinishRun(ctx, id, store.RunOK, r.FinishedAt); err != nil {
			b.Fatal(err)
		}
		if label == "a" {
			a = append(a, id)
		} else {
			bb = append(bb, id)
		}
	}
	return path, a, bb
}

// BenchmarkReport1000Runs is issue 5's speed target: reading 1,000 stored runs and
// rendering the comparison of two configs of 500 runs each stays under a second
// (ns/op < 1e9).
func BenchmarkReport1000Runs(b *testing.B) {
	path, a, bb := benchStore(b, 1000)
	ctx := context.Background()
	ids := append(append([]int64{}, a...), bb...)
	groups := []report.Group{{Name: "a", RunIDs: a}, {Name: "b", RunIDs: bb}}
	b.ResetTimer()
	for b.Loop() {
		st, err := store.OpenExisting(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		runs, err := st.Results(ctx, ids)
		if err != nil {
			b.Fatal(err)
		}
		rep := report.Build(runs)
		c := report.Compare(rep, groups, 0)
		if err := CompareText(io.Discard, c, false); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// TestBenchStoreShape keeps the benchmark's generated runs honest: they read back whole.
func TestBenchStoreShape(t *testing.T) {
	path, a, bb := benchStore(t, 4)
	st, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Results(context.Background(), append(a, bb...))
	if err != nil || len(runs) != 4 || len(runs[0].Steps) != 2 || len(runs[0].Steps[1].Intervals) != 5 ||
		runs[0].Steps[1].Result.Metrics[metrics.MetricCPUPerOp] == 0 || runs[0].Steps[1].Intervals[0].HW == nil {
		t.Fatalf("generated store reads back wrong: %v %+v", err, runs)
	}
}
