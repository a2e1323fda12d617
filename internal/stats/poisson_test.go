package stats

import (
	"math"
	"testing"
)

func TestPoissonRateP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   int64
		ea, eb float64
		lo, hi float64
	}{
		{"same counts, same exposure", 100, 100, 1, 1, 0.9, 1},
		{"same rate, twice the exposure", 100, 200, 1, 2, 0.9, 1},
		{"a few samples more: noise", 10, 14, 1, 1, 0.3, 0.7},
		{"ten times the rate", 10, 100, 1, 1, 0, 1e-12},
		{"a function new in b: 20 samples", 0, 20, 1, 1, 0, 1e-5},
		{"new with 1 sample: noise", 0, 1, 1, 1, 0.9, 1},
		{"nothing", 0, 0, 1, 1, 1, 1},
		{"no exposure", 5, 5, 0, 1, 1, 1},
	} {
		p := PoissonRateP(tc.a, tc.b, tc.ea, tc.eb)
		if p < tc.lo || p > tc.hi || math.IsNaN(p) {
			t.Errorf("%s: p = %g, want in [%g, %g]", tc.name, p, tc.lo, tc.hi)
		}
	}
	// Symmetric in the configs.
	if p, q := PoissonRateP(12, 30, 1, 1.5), PoissonRateP(30, 12, 1.5, 1); math.Abs(p-q) > 1e-12 {
		t.Errorf("not symmetric: %g vs %g", p, q)
	}
}
