package render

import (
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/reporttest"
	"github.com/dbperf/dbperf/internal/store"
)

// TestBackgroundLineKeptRate (issue 42): a writer at 100 rows/s in batches of 50 whose
// seconds hold 50, 150, 100, … rows is drawn at the rate it kept, averaged over 5 s
// (metrics.KeptWindow): from the fifth second within a tenth of 100, where the seconds
// alone swing from 50 to 150.
func TestBackgroundLineKeptRate(t *testing.T) {
	t.Parallel()
	rows := []int64{50, 150, 100, 50, 150, 100, 100, 50, 150, 100}
	var runs []store.Run
	for i := range 2 {
		r := reporttest.RepeatRun(int64(i+1), "a", 1, 0, 100)
		qp := &r.Steps[1]
		qp.Intervals = reporttest.RWIntervals(100, 0, func() [][3]int64 {
			var c [][3]int64
			for _, n := range rows {
				c = append(c, [3]int64{5000, n, 100})
			}
			return c
		}()...)
		qp.Result.Seconds = float64(len(rows))
		qp.Result.Labels[1] = reporttest.RowsLabel("insert", 1000, 100)
		runs = append(runs, r)
	}
	rep := report.Build(runs)
	c := report.Compare(rep, []report.Group{{Name: "a", RunIDs: []int64{1, 2}}}, 0)
	line, window := backgroundLine(c, "qp100", "insert")
	if window != 5 || len(line.Series) != 2 || len(line.Refs) != 1 || line.Refs[0].Y != 100 {
		t.Fatalf("window %d, %d series, refs %v", window, len(line.Series), line.Refs)
	}
	for _, s := range line.Series {
		if len(s.Y) != len(rows) {
			t.Fatalf("%s: %d points for %d intervals", s.Name, len(s.Y), len(rows))
		}
		for i := 4; i < len(s.Y); i++ {
			if math.Abs(s.Y[i]-100) > 10 {
				t.Errorf("%s at %g s: %g rows/s, want 100 ± 10", s.Name, s.X[i], s.Y[i])
			}
		}
	}
}
