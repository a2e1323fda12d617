package render

import (
	"math"
	"testing"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/stats"
)

// The relative chart's bars carry what the table's cells say: the interval, the mark of
// the verdict, and a faint bar where there is no verdict (issue 42: l.i0 drew as a plain
// 0.75 bar while its cell read 0.75 [0.25–1.78] ?).
func TestRelativeBars(t *testing.T) {
	rel := func(est, lo, hi float64, ci bool, class report.Class) report.Cell {
		return report.Cell{Present: true, Summary: stats.Summary{Median: est}, Class: class,
			Rel: &report.Rel{Ratio: stats.Ratio{Estimate: est, Lo: lo, Hi: hi, HasCI: ci}, HigherBetter: true}}
	}
	row := report.Row{Head: []string{"new"}, Cells: []report.Cell{
		rel(1.2, 1.1, 1.3, true, report.ClassBetter),
		rel(0.8, 0.7, 0.9, true, report.ClassWorse),
		rel(1.0, 0.99, 1.01, true, report.ClassSame),
		rel(0.75, 0.25, 1.78, true, report.ClassUnstable),
		rel(0.9, 0, 0, false, report.ClassNone),
		{},
	}}
	g := relativeBars(row)
	for i, want := range []struct {
		mark  string
		faint bool
		ci    bool
	}{{markBetter, false, true}, {markWorse, false, true}, {markSame, false, true}, {markUnstable, true, true}, {"", true, false}, {"", false, false}} {
		if g.Marks[i] != want.mark || g.Faint[i] != want.faint || !math.IsNaN(g.Lo[i]) != want.ci {
			t.Errorf("bar %d: mark %q faint %v interval [%g, %g]; want %q, %v, interval %v", i, g.Marks[i], g.Faint[i], g.Lo[i], g.Hi[i], want.mark, want.faint, want.ci)
		}
	}
	if g.Lo[3] != 0.25 || g.Hi[3] != 1.78 || !math.IsNaN(g.Values[5]) {
		t.Errorf("values %v, intervals %v–%v", g.Values, g.Lo, g.Hi)
	}
	// The base's row shows no marks (report.Row.Shown).
	row.Base = true
	if g := relativeBars(row); g.Marks[0] != "" {
		t.Errorf("the base's row: mark %q", g.Marks[0])
	}
}
