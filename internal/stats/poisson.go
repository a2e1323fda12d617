package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// PoissonRateP is the two-sided p-value of the exact conditional test that two Poisson
// counts have the same rate per unit of exposure: a profile's samples of one function in
// two configs, each config's exposure its sampling rate × its operations, so the rate is
// samples per operation. Given the total n = a + b, b is Binomial(n, eb/(ea+eb)) when
// the rates are equal; the p-value doubles the smaller tail (at most 1). It says whether
// a change of CPU per operation exceeds the noise of sampling alone — not the runs' own
// noise, which only repeated runs show. 1 when there is nothing to test.
func PoissonRateP(a, b int64, ea, eb float64) float64 {
	n := a + b
	if n <= 0 || ea <= 0 || eb <= 0 || a < 0 || b < 0 {
		return 1
	}
	d := distuv.Binomial{N: float64(n), P: eb / (ea + eb)}
	lower := d.CDF(float64(b))       // P(X ≤ b)
	upper := 1 - d.CDF(float64(b)-1) // P(X ≥ b)
	return math.Min(1, 2*math.Min(lower, upper))
}
