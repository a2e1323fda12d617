package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/stats"
)

// TestDriftNotes: a step whose consecutive blocks' ratios correlate (lag-1 p under
// DriftP) gets a note naming it with r, the blocks and p; one whose blocks are
// independent, or too few to test, gets none.
func TestDriftNotes(t *testing.T) {
	row := func(step string, r, p float64) varianceRow {
		return varianceRow{config: "c", step: step, figure: "throughput",
			d: stats.Decomposition{Paired: true, Units: 40, BlockLag1: r, BlockLag1P: p, BlockEffectP: math.NaN()}}
	}
	cases := []struct {
		name  string
		rows  []varianceRow
		want  []string // substrings of the one note; nil: no note
		steps []string
	}{
		{"independent blocks", []varianceRow{row("qp100", 0.05, 0.3)}, nil, nil},
		{"too few blocks to test", []varianceRow{row("qp100", math.NaN(), math.NaN())}, nil, nil},
		{"at the level", []varianceRow{row("qp100", 0.3, DriftP)}, nil, nil},
		{"one step drifts", []varianceRow{row("qp100", 0.61, 0.00001), row("qr100", 0.03, 0.4)},
			[]string{"blocks of c vs a, throughput, drift together in qp100 (lag-1 r 0.61 over 40 blocks, p < 0.001)", "narrower than it should be"}, []string{"qp100"}},
		{"two steps", []varianceRow{row("qp100", 0.61, 0.00001), row("qr100", 0.35, 0.004)},
			[]string{"qp100 (lag-1 r 0.61 over 40 blocks, p < 0.001), qr100 (lag-1 r 0.35 over 40 blocks, p 0.004)"}, []string{"qp100", "qr100"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			notes := driftNotes(c.rows, "a")
			if c.want == nil {
				if len(notes) != 0 {
					t.Fatalf("notes %+v, want none", notes)
				}
				return
			}
			if len(notes) != 1 {
				t.Fatalf("%d notes %+v, want 1", len(notes), notes)
			}
			n := notes[0]
			for _, w := range c.want {
				if !strings.Contains(n.Text, w) {
					t.Errorf("note %q lacks %q", n.Text, w)
				}
			}
			if n.Kind != NoteVariance || strings.Join(n.Steps, ",") != strings.Join(c.steps, ",") || n.Label != "throughput" {
				t.Errorf("note kind %q steps %v label %q, want %q %v throughput", n.Kind, n.Steps, n.Label, NoteVariance, c.steps)
			}
		})
	}
}

// A sweep with --instances: the ratio's pairs are its instances (each the geometric mean of
// its blocks), and the decomposition nests the blocks in them; the same runs without their
// instance are paired by block.
func TestInstancesArePairs(t *testing.T) {
	get := func(r RunReport) (float64, bool) { v, ok := r.Params["v"].(float64); return v, ok }
	var a, b GroupReport
	id := int64(0)
	for blk := 1; blk <= 24; blk++ {
		inst := (blk-1)/4 + 1                                  // 6 instances of 4 blocks
		cost := 1 + 0.02*float64(inst%3) - 0.01*float64(blk%2) // the instance's own, and the block's
		for s := 1; s <= 2; s++ {
			for gi, g := range []*GroupReport{&a, &b} {
				v := 100.0
				if gi == 1 {
					v = 100 * cost * (1 + 0.001*float64(s))
				}
				id++
				g.Runs = append(g.Runs, RunReport{ID: id, Params: map[string]any{
					"sweep": "s", "trial": fmt.Sprintf("b%d/s%d", blk, s), "instance": json.Number(fmt.Sprint(inst)), "v": v}})
			}
		}
	}
	r, ok := figureRatio(a, b, get, stats.RatioOptions{})
	if !ok || r.Pairs != 6 {
		t.Fatalf("ratio %+v ok %v: want 6 pairs, one per instance", r, ok)
	}
	d := decompose(a, b, "qp100", varianceFigure{name: "throughput", get: get})
	if d.Instances != 6 || d.Units != 24 || d.Share(stats.SourceInstances) < 50 {
		t.Errorf("decomposition: %d instances, %d blocks, instances' share %.0f%%; want 6, 24, most", d.Instances, d.Units, d.Share(stats.SourceInstances))
	}
	for _, g := range []*GroupReport{&a, &b} {
		for i := range g.Runs {
			delete(g.Runs[i].Params, "instance")
		}
	}
	if r, _ := figureRatio(a, b, get, stats.RatioOptions{}); r.Pairs != 24 {
		t.Errorf("without instances: %d pairs, want 24 blocks", r.Pairs)
	}
}
