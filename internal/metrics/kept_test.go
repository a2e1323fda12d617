package metrics

import (
	"math"
	"testing"
)

// TestKeptRates: a writer at 100 rows/s in batches of 50 whose batches land 50, 100 or
// 150 to a second keeps 100/s over the window KeptWindow gives (5 s), within a tenth
// of its target once the window is full; the counts alone swing by half of it.
func TestKeptRates(t *testing.T) {
	l := LabelStats{Unit: UnitRows, Statements: 40, Rows: 2000}
	k := KeptWindow(l.Batch(), 100, 1)
	if l.Batch() != 50 || k != 5 {
		t.Fatalf("batch %g, window %d: want 50 and 5", l.Batch(), k)
	}
	counts := []float64{50, 150, 100, 50, 150, 100, 100, 50, 150, 50, 150, 100, 100, 50, 150, 100, 50, 150, 100, 100}
	secs := make([]float64, len(counts))
	for i := range secs {
		secs[i] = 1
	}
	for i, r := range KeptRates(counts, secs, k) {
		if i >= k-1 && math.Abs(r-100) > 10 {
			t.Errorf("interval %d: kept %g/s, want 100 ± 10", i, r)
		}
	}
	if got := KeptRates(counts, secs, 1); got[0] != 50 || got[1] != 150 {
		t.Errorf("a window of 1 is the counts: %v", got[:2])
	}
	if KeptWindow(1, 100, 1) != 1 || KeptWindow(50, 0, 1) != 1 || KeptWindow(50, 1000, 1) != 1 {
		t.Error("no smoothing without batches, without a target, or when a batch is a twentieth of a second's rows")
	}
}
