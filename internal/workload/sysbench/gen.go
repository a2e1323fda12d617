package sysbench

import (
	"math"
	"math/rand/v2"
)

// Column shapes of reference §3.1 (sysbench's oltp_common.lua): c is 10 groups of 11
// random digits joined by '-' (119 characters), pad 5 groups (59 characters).
const (
	cGroups   = 10
	padGroups = 5
	groupLen  = 11
	cLen      = cGroups*groupLen + cGroups - 1     // 119
	padLen    = padGroups*groupLen + padGroups - 1 // 59
)

// pow11 is 10¹¹: one group's values.
const pow11 = 100_000_000_000

// appendDigits appends groups groups of 11 random decimal digits joined by '-', as
// sysbench's "###########-…" templates. Each group is one 64-bit draw reduced mod 10¹¹
// (a bias of 10¹¹/2⁶⁴ ≈ 5·10⁻⁹, none that matters for benchmark data) written as 11
// digits, so a c value costs 10 draws, not 110.
func appendDigits(dst []byte, rng *rand.Rand, groups int) []byte {
	for g := range groups {
		if g > 0 {
			dst = append(dst, '-')
		}
		v := rng.Uint64() % pow11
		n := len(dst)
		dst = append(dst, "00000000000"...)
		for i := groupLen - 1; i >= 0 && v > 0; i-- {
			dst[n+i] = byte('0' + v%10)
			v /= 10
		}
	}
	return dst
}

// zipf draws integers in [1, n] with P(k) ∝ 1/k^e for any exponent e ≥ 0, as sysbench's
// --rand-type=zipfian (default --rand-zipfian-exp=0.8; reference §3.3 update-zipf), so 1
// is the most frequent value. math/rand's Zipf needs an exponent above 1, so this is
// written by hand with the algorithm sysbench uses (sb_rand.c, after Apache Commons RNG's
// RejectionInversionZipfSampler): rejection-inversion sampling, W. Hörmann and G.
// Derflinger, "Rejection-inversion to generate variates from monotone discrete
// distributions", ACM TOMACS 6.3 (1996), 169–184, with the hat function's integral
// H(x) = ((x)^(1−e) − 1)/(1−e), which has a limit at e = 1 and so works for every
// positive exponent. One draw costs one uniform variate, a log and an exp on average,
// and never allocates.
type zipf struct {
	n, e float64
	// hX1 = H(1.5) − 1, hN = H(n + 0.5), s = 2 − H⁻¹(H(2.5) − h(2)): precomputed once.
	hX1, hN, s float64
}

func newZipf(n int64, e float64) *zipf {
	z := &zipf{n: float64(n), e: e}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.s = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// next draws one value in [1, n].
func (z *zipf) next(rng *rand.Rand) int64 {
	for {
		// u is uniform in (hX1, hN].
		u := z.hN + rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		// Numerical inaccuracies may put k just outside [1, n].
		k = max(1, min(k, z.n))
		// k − x ≤ s is a cheap test implying the exact one (Theorem 2 of the paper);
		// for k = 1 the exact test always holds.
		if k-x <= z.s || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

// h is the unnormalized probability of x: x^−e.
func (z *zipf) h(x float64) float64 { return math.Exp(-z.e * math.Log(x)) }

// hIntegral is H(x) = (x^(1−e) − 1)/(1−e), written as log(x)·helper2((1−e)·log(x)).
func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1Over((1-z.e)*lx) * lx
}

// hIntegralInverse is H⁻¹(x) = exp(log1p(x(1−e))/(1−e)), written with helper1.
func (z *zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.e)
	if t < -1 {
		t = -1 // numerical inaccuracy: the argument of log1p must stay ≥ −1
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, 1 at x = 0 (Taylor series near 0).
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (e^x − 1)/x, 1 at x = 0 (Taylor series near 0).
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
