package stats

import (
	"math"
	"slices"
	"testing"
)

// approx reports whether got is within a relative 1e-9 of want.
func approx(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-9*math.Max(math.Abs(got), math.Abs(want))
}

// seq returns n values start, start+step, ...
func seq(n int, start, step float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = start + float64(i)*step
	}
	return xs
}

// TestMannWhitneyP checks Comparison.P against p-values computed
// independently with scipy 1.17.1 (numpy 2.4.6), Python 3.11.7:
//
//	scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='exact')
//
// (method='asymptotic', use_continuity=True for the 60-vs-60 cases, where
// benchmath also switches to the normal approximation with continuity
// correction). For the case with ties, scipy's method='exact' ignores ties
// (it gives 0.17748917748917747), while benchmath uses the exact
// distribution conditional on the ties (Klotz 1966); the expected value was
// computed with
//
//	scipy.stats.permutation_test((a, b), U, permutation_type='independent',
//	    alternative='two-sided', n_resamples=np.inf)
//
// with U the tie-counting (0.5) U statistic, and confirmed by enumerating
// all C(11,5)=462 splits: 2*P(U <= 6.5) = 2*29/462.
//
// With ties benchmath's p depends on the order of the samples: it doubles
// P(U1 <= min(U1, U2)) in the distribution of the first sample's U, which
// is not symmetric when there are ties. Swapped, the same enumeration gives
// 2*P(U_b <= 6.5) = 2*33/462 = 0.14285714285714285, while scipy's
// permutation_test gives 0.12554112554112554 in both orders.
func TestMannWhitneyP(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		p    float64
	}{
		// Textbook: R. Shier, "Statistics: 2.3 The Mann-Whitney U Test",
		// Mathematics Learning Support Centre, 2004 (the worked example
		// in scipy's mannwhitneyu docs): age at type II diabetes
		// diagnosis, males vs females; U_M=17, U_F=3, p=0.11.
		{"textbook males vs females", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 0.1111111111111111},
		// Fully separated: p = 2/C(6,3) and 2/C(8,4).
		{"separated 3v3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"separated 4v4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.02857142857142857},
		// U1=5.
		{"unequal 6v7", []float64{1.1, 2.3, 3.5, 4.2, 5.9, 6.1}, []float64{3.9, 5.0, 7.2, 8.8, 9.4, 10.3, 11.0}, 0.022144522144522144},
		// Benchmark-like timings, U1=14.
		{"bench 10v10",
			[]float64{101.2, 99.8, 100.5, 102.3, 98.9, 100.1, 101.7, 99.4, 100.9, 103.0},
			[]float64{102.1, 103.5, 101.9, 104.2, 100.8, 103.1, 102.7, 105.0, 101.4, 102.9},
			0.0051960423477451344},
		// U1 == U2: the whole distribution, p = 1.
		{"U1 equals U2", []float64{1, 4}, []float64{2, 3}, 1},
		// n > 50: normal approximation. a = 0..59, b = a + 7.5 (U1=1378)
		// and b = a + 12.5 (U1=1128).
		{"asymptotic 60v60 shift 7.5", seq(60, 0, 1), seq(60, 7.5, 1), 0.02694585619564296},
		{"asymptotic 60v60 shift 12.5", seq(60, 0, 1), seq(60, 12.5, 1), 0.0004243453375935733},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compare(tt.a, tt.b).P; !approx(got, tt.p) {
				t.Errorf("P = %.17g, want %.17g", got, tt.p)
			}
			// Without ties the two-sided test is symmetric in its samples.
			if got := Compare(tt.b, tt.a).P; !approx(got, tt.p) {
				t.Errorf("swapped: P = %.17g, want %.17g", got, tt.p)
			}
		})
	}
}

// TestMannWhitneyTies checks the tie case described above TestMannWhitneyP:
// 2 three times, 3 twice, 4 twice; U1=6.5.
func TestMannWhitneyTies(t *testing.T) {
	a := []float64{1, 2, 2, 3, 5}
	b := []float64{2, 3, 4, 4, 6, 7}
	if got, want := Compare(a, b).P, 0.12554112554112554; !approx(got, want) {
		t.Errorf("Compare(a, b).P = %.17g, want %.17g (2*29/462)", got, want)
	}
	if got, want := Compare(b, a).P, 0.14285714285714285; !approx(got, want) {
		t.Errorf("Compare(b, a).P = %.17g, want %.17g (2*33/462)", got, want)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name                        string
		in                          []float64
		n                           int
		median, min, max, spreadPct float64
		noisy, hasCI                bool
		lo, hi                      float64
	}{
		{"empty", nil, 0, 0, 0, 0, 0, false, false, 0, 0},
		{"only non-finite", []float64{math.NaN(), math.Inf(1)}, 0, 0, 0, 0, 0, false, false, 0, 0},
		{"one value", []float64{7}, 1, 7, 7, 7, 0, false, false, 7, 7},
		{"odd count", []float64{3, 1, 2}, 3, 2, 1, 3, 50, true, false, 1, 3},
		{"even count", []float64{4, 1, 3, 2}, 4, 2.5, 1, 4, 60, true, false, 1, 4},
		// Spread is the larger side: (120-100)/100.
		{"noisy", []float64{90, 100, 100, 100, 120}, 5, 100, 90, 120, 20, true, false, 90, 120},
		{"quiet", []float64{98, 100, 101}, 3, 100, 98, 101, 2, false, false, 98, 101},
		// Exactly NoisyPct is not noisy.
		{"at threshold", []float64{95, 100, 105}, 3, 100, 95, 105, 5, false, false, 95, 105},
		{"negative", []float64{-110, -100, -95}, 3, -100, -110, -95, 10, true, false, -110, -95},
		{"zero median", []float64{-1, 0, 1}, 3, 0, -1, 1, 0, false, false, -1, 1},
		{"non-finite ignored", []float64{1, math.NaN(), 3, math.Inf(-1)}, 2, 2, 1, 3, 50, true, false, 1, 3},
		// Five values are too few for a 95% interval (coverage of
		// [min, max] is 1-2/32 < 0.95); six are enough: [min, max]
		// covers 1-2/64.
		{"five, no CI", []float64{10, 11, 12, 13, 14}, 5, 12, 10, 14, 100.0 * 2 / 12, true, false, 10, 14},
		{"six, CI", []float64{10, 11, 12, 13, 14, 15}, 6, 12.5, 10, 15, 100 * 2.5 / 12.5, true, true, 10, 15},
		// 1..10: the 95% interval is the 2nd to 9th order statistic
		// (binomial coverage 1002/1024 - 22/1024 = 0.978).
		{"ten, CI inside range", seq(10, 1, 1), 10, 5.5, 1, 10, 100 * 4.5 / 5.5, true, true, 2, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			s := Summarize(in)
			if s.N != tt.n || !approx(s.Median, tt.median) || s.Min != tt.min || s.Max != tt.max {
				t.Errorf("N, Median, Min, Max = %d, %v, %v, %v; want %d, %v, %v, %v",
					s.N, s.Median, s.Min, s.Max, tt.n, tt.median, tt.min, tt.max)
			}
			if !approx(s.SpreadPct, tt.spreadPct) || s.Noisy != tt.noisy {
				t.Errorf("SpreadPct, Noisy = %v, %v; want %v, %v", s.SpreadPct, s.Noisy, tt.spreadPct, tt.noisy)
			}
			if s.HasCI != tt.hasCI || s.Lo != tt.lo || s.Hi != tt.hi {
				t.Errorf("HasCI, Lo, Hi = %v, %v, %v; want %v, %v, %v", s.HasCI, s.Lo, s.Hi, tt.hasCI, tt.lo, tt.hi)
			}
			if s.N > 0 && !(s.Lo <= s.Median && s.Median <= s.Hi) {
				t.Errorf("interval [%v, %v] does not bracket median %v", s.Lo, s.Hi, s.Median)
			}
			if !slices.EqualFunc(in, tt.in, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }) {
				t.Errorf("input modified: %v, was %v", in, tt.in)
			}
		})
	}
}

func TestGeoMean(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		g    float64
		ok   bool
	}{
		{"1 2 4", []float64{1, 2, 4}, 2, true},
		{"single", []float64{3.5}, 3.5, true},
		{"2 8", []float64{2, 8}, 4, true},
		{"ratios", []float64{0.5, 2}, 1, true},
		{"large values", []float64{1e300, 1e300}, 1e300, true},
		{"empty", nil, 0, false},
		{"zero", []float64{1, 0, 4}, 0, false},
		{"negative", []float64{1, -2, 4}, 0, false},
		{"NaN", []float64{1, math.NaN()}, 0, false},
		{"Inf", []float64{1, math.Inf(1)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := GeoMean(tt.in)
			if ok != tt.ok || !approx(g, tt.g) {
				t.Errorf("GeoMean = %v, %v; want %v, %v", g, ok, tt.g, tt.ok)
			}
		})
	}
}

func TestMinSamplesForAlpha(t *testing.T) {
	// Minimum two-sided p for n vs n fully separated values is
	// 2/C(2n, n): n=2 0.333, n=3 0.1, n=4 0.0286, n=5 0.00794,
	// n=6 0.00216.
	tests := []struct {
		alpha float64
		n     int
	}{
		{0.05, 4},
		{0.1, 4}, // n=3 gives exactly 0.1, which is not < 0.1
		{0.11, 3},
		{0.01, 5},
		{0.005, 6},
		{1, 2}, // n=1 gives p = 1
		{0, 0},
		{-1, 0},
		{math.NaN(), 0},
	}
	for _, tt := range tests {
		if got := MinSamplesForAlpha(tt.alpha); got != tt.n {
			t.Errorf("MinSamplesForAlpha(%v) = %d, want %d", tt.alpha, got, tt.n)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name        string
		a, b        []float64
		alpha       float64
		significant bool
		tooFew      bool
		needN       int
		symbol      string
	}{
		// Medians 102 and 112; p = 2/252.
		{"separated 5v5", seq(5, 100, 1), seq(5, 110, 1), DefaultAlpha, true, false, 4, "+9.80%"},
		{"separated 5v5 faster", seq(5, 110, 1), seq(5, 100, 1), DefaultAlpha, true, false, 4, "-8.93%"},
		{"overlapping 5v5", []float64{100, 102, 101, 99, 103}, []float64{101, 100, 102, 103, 99.5}, DefaultAlpha, false, false, 4, "~"},
		// Min p 0.1: too few however far apart.
		{"separated 3v3", seq(3, 100, 1), seq(3, 200, 1), DefaultAlpha, false, true, 4, "~"},
		{"separated 4v4", seq(4, 100, 1), seq(4, 200, 1), DefaultAlpha, true, false, 4, "+98.52%"},
		// Min p 2/11.
		{"1 vs 10", []float64{100}, seq(10, 200, 1), DefaultAlpha, false, true, 4, "~"},
		// Unequal sizes, both below NeedN, yet min p 2/C(22,2) = 0.0087.
		{"2 vs 20", []float64{1, 2}, seq(20, 10, 1), DefaultAlpha, true, false, 4, "+1200.00%"},
		// Min p 2/C(31,1) = 0.0645 >= 0.05; 2/C(41,1) = 0.0488.
		{"1 vs 30", []float64{1}, seq(30, 10, 1), DefaultAlpha, false, true, 4, "~"},
		{"1 vs 40", []float64{1}, seq(40, 10, 1), DefaultAlpha, true, false, 4, "+2850.00%"},
		// At alpha 0.01, 4v4 (min p 0.0286) is too few; 5 runs needed.
		{"separated 4v4 alpha 0.01", seq(4, 100, 1), seq(4, 200, 1), 0.01, false, true, 5, "~"},
		{"bad alpha uses default", seq(5, 100, 1), seq(5, 110, 1), math.NaN(), true, false, 4, "+9.80%"},
		{"empty baseline", nil, seq(5, 100, 1), DefaultAlpha, false, true, 4, "~"},
		{"all equal", []float64{5, 5, 5}, []float64{5, 5, 5, 5, 5}, DefaultAlpha, false, false, 4, "~"},
		// A significant shift from a zero baseline median has no
		// percentage: "?" (benchmath's FormatDelta).
		{"zero baseline median", []float64{-1, 0, 0, 0, 1}, seq(5, 10, 1), DefaultAlpha, true, false, 4, "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CompareAlpha(tt.a, tt.b, tt.alpha)
			if c.Significant != tt.significant || c.TooFew != tt.tooFew || c.NeedN != tt.needN {
				t.Errorf("Significant, TooFew, NeedN = %v, %v, %d; want %v, %v, %d (P=%v)",
					c.Significant, c.TooFew, c.NeedN, tt.significant, tt.tooFew, tt.needN, c.P)
			}
			if got := c.Symbol(); got != tt.symbol {
				t.Errorf("Symbol = %q, want %q", got, tt.symbol)
			}
			if c.Significant != (c.P < c.Alpha) && !c.TooFew {
				t.Errorf("Significant = %v with P=%v, Alpha=%v", c.Significant, c.P, c.Alpha)
			}
			for _, v := range []float64{c.Ratio, c.DeltaPct, c.P, c.Alpha} {
				if !isFinite(v) {
					t.Errorf("non-finite field in %+v", c)
				}
			}
		})
	}
}

func TestCompareFields(t *testing.T) {
	c := Compare(seq(5, 100, 1), seq(5, 110, 1))
	if c.A.Median != 102 || c.B.Median != 112 || c.A.N != 5 || c.B.N != 5 {
		t.Errorf("summaries: A=%+v B=%+v", c.A, c.B)
	}
	if !approx(c.Ratio, 112.0/102) || !approx(c.DeltaPct, (112.0/102-1)*100) {
		t.Errorf("Ratio, DeltaPct = %v, %v", c.Ratio, c.DeltaPct)
	}
	// scipy: mannwhitneyu(range(100,105), range(110,115), method='exact') = 2/252.
	if !approx(c.P, 0.007936507936507936) || c.Alpha != DefaultAlpha {
		t.Errorf("P, Alpha = %v, %v", c.P, c.Alpha)
	}

	// One run against 60 identical runs: benchmath's normal approximation
	// with tie correction gives P ~ 2.6e-14, but untied samples of sizes 1
	// and 60 cannot get below 0.094 there, so TooFew vetoes significance.
	tied := Compare([]float64{0}, seq(60, 1, 0))
	if !(tied.P < DefaultAlpha) || !tied.TooFew || tied.Significant || tied.Symbol() != "~" {
		t.Errorf("1 vs 60 tied: P=%v TooFew=%v Significant=%v Symbol=%q; want P < %v, true, false, \"~\"",
			tied.P, tied.TooFew, tied.Significant, tied.Symbol(), DefaultAlpha)
	}

	z := Compare([]float64{0, 0, 0}, []float64{1, 2, 3})
	if z.Ratio != 0 || z.DeltaPct != 0 {
		t.Errorf("zero baseline: Ratio, DeltaPct = %v, %v; want 0, 0", z.Ratio, z.DeltaPct)
	}
}
