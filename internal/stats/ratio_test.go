package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// near reports whether got is within a relative tol of want.
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(math.Abs(got), math.Abs(want))
}

// checkFinite fails when a float field of r is NaN or ±Inf.
func checkFinite(t *testing.T, r Ratio) {
	t.Helper()
	for _, v := range []float64{r.Estimate, r.Lo, r.Hi, r.Confidence, r.Threshold, r.NoisePct, r.MDEPct} {
		if !isFinite(v) {
			t.Errorf("non-finite field in %+v", r)
		}
	}
}

// TestCriticalIndices checks the order-statistic indices against R 4.2.2
// (Debian 12 r-base-core):
//
//	sapply(5:12, function(n) qsignrank(0.025, n))  # 0 1 3 4 6 9 11 14
//	qsignrank(0.025, 20); qsignrank(0.025, 50)     # 53 435
//	qsignrank(0.025, 300); qsignrank(0.05, 8)      # 19629 6
//	qsignrank(0.025, 301); qsignrank(0.025, 1000)  # 19765 232347
//	qwilcox(0.025, m, n) for (2,2) (3,3) (3,4) (4,4) (3,5) (2,8) (5,5) (6,6)
//	  (8,8) (10,10) (20,20) (12,40) (1,40) (100,100) (10,5000) (300,300):
//	  0 0 0 1 1 1 3 6 14 24 128 150 1 4198 16083 40840
//
// n = 6..10 also agree with the textbook two-sided 5% critical values of
// the signed-rank statistic (0, 2, 3, 5, 8: k is one more), and 5 pairs
// have none (P(V = 0) = 1/32 > 0.025). Above the exact limits the normal
// approximation must land within 3 of R's exact index (its normal tail is a
// little heavier than the signed-rank one: the index comes out 2 lower, an
// interval a hair wider, at n = 301 and 1000).
func TestCriticalIndices(t *testing.T) {
	signed := []struct {
		n     int
		alpha float64
		k     int
	}{
		{1, 0.05, 0}, {5, 0.05, 0}, {6, 0.05, 1}, {7, 0.05, 3}, {8, 0.05, 4}, {9, 0.05, 6},
		{10, 0.05, 9}, {11, 0.05, 11}, {12, 0.05, 14}, {20, 0.05, 53}, {50, 0.05, 435},
		{300, 0.05, 19629}, {8, 0.10, 6},
	}
	for _, tt := range signed {
		if got := signedRankIndex(tt.n, tt.alpha); got != tt.k {
			t.Errorf("signedRankIndex(%d, %v) = %d, want %d", tt.n, tt.alpha, got, tt.k)
		}
	}
	for _, tt := range []struct{ n, k int }{{301, 19765}, {1000, 232347}} {
		if got := signedRankIndex(tt.n, 0.05); got < tt.k-3 || got > tt.k+3 {
			t.Errorf("signedRankIndex(%d) (normal) = %d, R exact %d", tt.n, got, tt.k)
		}
	}
	ranks := []struct{ m, n, k int }{
		{2, 2, 0}, {3, 3, 0}, {3, 4, 0}, {4, 3, 0}, {4, 4, 1}, {3, 5, 1}, {2, 8, 1}, {8, 2, 1},
		{5, 5, 3}, {6, 6, 6}, {8, 8, 14}, {10, 10, 24}, {20, 20, 128}, {12, 40, 150},
		{40, 12, 150}, {1, 40, 1}, {100, 100, 4198}, {10, 5000, 16083},
	}
	for _, tt := range ranks {
		if got := rankSumIndex(tt.m, tt.n, 0.05); got != tt.k {
			t.Errorf("rankSumIndex(%d, %d) = %d, want %d", tt.m, tt.n, got, tt.k)
		}
	}
	if got := rankSumIndex(300, 300, 0.05); got < 40840-3 || got > 40840+3 {
		t.Errorf("rankSumIndex(300, 300) (normal) = %d, R exact 40840", got)
	}
}

// TestRatioAgainstR checks estimates and intervals against R 4.2.2's
// wilcox.test on the logs (exact: no ties, n < 50), printed with
// options(digits=17) as exp(estimate), exp(conf.int):
//
//	wilcox.test(log(b), log(a), paired=TRUE, conf.int=TRUE)  # paired
//	wilcox.test(log(b), log(a), conf.int=TRUE)               # unpaired
//
// (conf.level=0.90 for the case so named). P8 by hand: the log ratios
// sorted are those of 104/102, 101/99, 99/97, 104/100, 105/100, 103/98,
// 110/103, 108/101; k = qsignrank(0.025, 8) = 4 of the 36 Walsh averages.
// The three smallest pair 104/102 with itself, 101/99 and 99/97, so the 4th
// is 101/99 with itself: Lo = 101/99 = 1.0202…. The three largest are
// 108/101 with itself, with 110/103, and 110/103 with itself; the 4th is
// 103/98 with 108/101: Hi = √(103/98 · 108/101) = 1.0601…. The estimate is
// the mean of the 18th and 19th averages (101/99 with 110/103, 99/97 with
// 110/103): (101/97 · (110/103)²)^¼ = 1.0439….
func TestRatioAgainstR(t *testing.T) {
	tests := []struct {
		name         string
		paired       bool
		conf         float64
		a, b         []float64
		est, lo, hi  float64
		verdict      Verdict
		wantNoiseMDE bool
	}{
		{"P8", true, 0.95,
			[]float64{100, 102, 98, 101, 99, 103, 97, 100}, []float64{105, 104, 103, 108, 101, 110, 99, 104},
			1.0439150050572759, 1.0202020202020206, 1.0601242411853611, VerdictHigher, true},
		{"P8 90%", true, 0.90,
			[]float64{100, 102, 98, 101, 99, 103, 97, 100}, []float64{105, 104, 103, 108, 101, 110, 99, 104},
			1.0439150050572759, 1.0206185567010309, 1.0594569267279519, VerdictHigher, true},
		{"P6", true, 0.95,
			[]float64{10, 11, 12, 13, 14, 15}, []float64{10.5, 10.8, 12.9, 13.4, 14.1, 16.2},
			1.0403401810502619, 0.9818181818181817, 1.0799999999999998, VerdictUnstable, true},
		{"P10", true, 0.95,
			[]float64{50, 52, 49, 51, 53, 48, 50, 47, 52, 51}, []float64{49.2, 54, 50, 50.5, 55, 47, 52, 49, 51.5, 53.4},
			1.0147925510017444, 0.99029034242115543, 1.0401417313793755, VerdictUnstable, true},
		{"U4v4", false, 0.95,
			[]float64{100, 103, 98, 101}, []float64{106, 104, 109, 105},
			1.0541181378496853, 1.0097087378640774, 1.112244897959183, VerdictHigher, true},
		{"U5v7", false, 0.95,
			[]float64{10, 11.5, 9.7, 10.8, 10.2}, []float64{11.1, 10.9, 12.3, 11.6, 10.4, 11.9, 12.8},
			1.1099999999999997, 1.0092592592592593, 1.2268041237113405, VerdictHigher, true},
		{"U8v8", false, 0.95,
			[]float64{20.1, 19.4, 21.3, 20.7, 18.9, 20.2, 19.8, 21.0}, []float64{19.5, 20.9, 18.7, 19.1, 20.4, 18.2, 19.3, 18.8},
			0.95897195789684742, 0.90952380952380973, 1.0096618357487921, VerdictUnstable, true},
		{"U2v8", false, 0.95,
			[]float64{3.1, 2.9}, []float64{3.3, 3.5, 3.2, 3.6, 3.4, 3.25, 3.7, 3.45},
			1.1334729133877703, 1.032258064516129, 1.2758620689655176, VerdictHigher, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := slices.Clone(tt.a), slices.Clone(tt.b)
			opt := RatioOptions{Confidence: tt.conf}
			var r Ratio
			if tt.paired {
				r = PairedRatio(a, b, opt)
			} else {
				r = RatioOf(a, b, opt)
			}
			if !slices.Equal(a, tt.a) || !slices.Equal(b, tt.b) {
				t.Errorf("inputs modified")
			}
			if !r.HasCI || !near(r.Estimate, tt.est, 1e-12) || !near(r.Lo, tt.lo, 1e-12) || !near(r.Hi, tt.hi, 1e-12) {
				t.Errorf("Estimate [Lo, Hi] = %v [%v, %v] (HasCI %v), R: %v [%v, %v]",
					r.Estimate, r.Lo, r.Hi, r.HasCI, tt.est, tt.lo, tt.hi)
			}
			if r.Verdict != tt.verdict {
				t.Errorf("Verdict = %q, want %q", r.Verdict, tt.verdict)
			}
			if r.Paired != tt.paired || r.Confidence != tt.conf || r.Threshold != DefaultThreshold {
				t.Errorf("Paired, Confidence, Threshold = %v, %v, %v", r.Paired, r.Confidence, r.Threshold)
			}
			if tt.paired && (r.NA != len(tt.a) || r.NB != len(tt.a) || r.Pairs != len(tt.a)) ||
				!tt.paired && (r.NA != len(tt.a) || r.NB != len(tt.b) || r.Pairs != 0) {
				t.Errorf("NA, NB, Pairs = %d, %d, %d", r.NA, r.NB, r.Pairs)
			}
			if !r.HasMDE || !(r.MDEPct > 0) || !(r.NoisePct > 0) {
				t.Errorf("HasMDE, MDEPct, NoisePct = %v, %v, %v", r.HasMDE, r.MDEPct, r.NoisePct)
			}
			checkFinite(t, r)
		})
	}
}

// TestKthSelection checks the bisection order statistics against sorting
// all Walsh averages and differences, with ties, negatives and zeros.
func TestKthSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		nx, ny := 1+rng.IntN(9), 1+rng.IntN(9)
		gen := func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				if trial%3 == 0 {
					xs[i] = float64(rng.IntN(5) - 2) // many ties
				} else {
					xs[i] = rng.NormFloat64()
				}
			}
			slices.Sort(xs)
			return xs
		}
		x, y := gen(nx), gen(ny)
		var walsh, diffs []float64
		for i := range x {
			for j := i; j < len(x); j++ {
				walsh = append(walsh, (x[i]+x[j])/2)
			}
			for _, yj := range y {
				diffs = append(diffs, yj-x[i])
			}
		}
		slices.Sort(walsh)
		slices.Sort(diffs)
		for k := 1; k <= len(walsh); k++ {
			if got := kthWalsh(x, k); got != walsh[k-1] {
				t.Fatalf("kthWalsh(%v, %d) = %v, want %v", x, k, got, walsh[k-1])
			}
		}
		for k := 1; k <= len(diffs); k++ {
			if got := kthDiff(x, y, k); got != diffs[k-1] {
				t.Fatalf("kthDiff(%v, %v, %d) = %v, want %v", x, y, k, got, diffs[k-1])
			}
		}
	}
}

func TestRatioFewValues(t *testing.T) {
	tests := []struct {
		name   string
		paired bool
		a, b   []float64
		est    float64
		n      int // NA (= NB, Pairs when paired)
		hasCI  bool
	}{
		{"1 pair", true, []float64{100}, []float64{110}, 1.1, 1, false},
		{"1 vs 1", false, []float64{100}, []float64{110}, 1.1, 1, false},
		// qwilcox(0.025, 1, 40) = 1, but one base value is never enough.
		// The median of the 40 ratios 10..49 is √(29·30).
		{"1 vs 40", false, []float64{1}, seq(40, 10, 1), math.Sqrt(29 * 30), 1, false},
		{"40 vs 1", false, seq(40, 10, 1), []float64{1}, 1 / math.Sqrt(29*30), 40, false},
		// Ratios 3/2, 2, 3, 4: median √6.
		{"2 vs 2", false, []float64{1, 2}, []float64{3, 4}, math.Sqrt(6), 2, false},
		{"3 vs 4", false, seq(3, 1, 1), seq(4, 10, 1), 0, 3, false},
		{"4 vs 4", false, seq(4, 1, 1), seq(4, 10, 1), 0, 4, true},
		{"5 pairs", true, seq(5, 100, 1), seq(5, 110, 1), 0, 5, false},
		{"6 pairs", true, seq(6, 100, 1), seq(6, 110, 1), 0, 6, true},
		{"empty base", false, nil, []float64{1, 2}, 0, 0, false},
		{"empty pairs", true, nil, []float64{1, 2}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Ratio
			if tt.paired {
				r = PairedRatio(tt.a, tt.b, RatioOptions{})
			} else {
				r = RatioOf(tt.a, tt.b, RatioOptions{})
			}
			checkFinite(t, r)
			if r.NA != tt.n || (tt.paired && r.Pairs != tt.n) {
				t.Errorf("NA, Pairs = %d, %d; want %d", r.NA, r.Pairs, tt.n)
			}
			if tt.est != 0 && !approx(r.Estimate, tt.est) {
				t.Errorf("Estimate = %v, want %v", r.Estimate, tt.est)
			}
			if r.HasCI != tt.hasCI || r.HasMDE != tt.hasCI {
				t.Errorf("HasCI, HasMDE = %v, %v; want %v", r.HasCI, r.HasMDE, tt.hasCI)
			}
			if !tt.hasCI && (r.Verdict != VerdictNone || r.Lo != 0 || r.Hi != 0 || r.MDEPct != 0) {
				t.Errorf("no interval but Verdict %q, Lo %v, Hi %v, MDEPct %v", r.Verdict, r.Lo, r.Hi, r.MDEPct)
			}
			if tt.hasCI && r.Verdict != VerdictHigher {
				t.Errorf("separated samples: Verdict %q (%+v)", r.Verdict, r)
			}
		})
	}
}

func TestRatioBadValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	// Pairs with a bad side are dropped; the 8 good pairs all have b/a = 1.1.
	a := []float64{10, nan, 20, 0, 30, 40, -5, 50, 60, 70, 80, inf, 1}
	b := []float64{11, 5, 22, 3, 33, 44, 5, 55, 66, 77, 88, 5, -1, 99}
	r := PairedRatio(a, b, RatioOptions{})
	checkFinite(t, r)
	if r.Pairs != 8 || r.NA != 8 || !near(r.Estimate, 1.1, 1e-12) || !near(r.Lo, 1.1, 1e-12) || !near(r.Hi, 1.1, 1e-12) {
		t.Errorf("PairedRatio = %+v; want 8 pairs, 1.1 [1.1, 1.1]", r)
	}
	if r.Verdict != VerdictHigher || r.NoisePct > 1e-9 || r.MDEPct > 1e-9 || !r.HasMDE {
		t.Errorf("Verdict, NoisePct, MDEPct, HasMDE = %q, %v, %v, %v", r.Verdict, r.NoisePct, r.MDEPct, r.HasMDE)
	}

	u := RatioOf([]float64{nan, 1, 0, -1, inf, 2}, []float64{4, nan, -inf, 2}, RatioOptions{})
	checkFinite(t, u)
	// Differences of logs {0, 2} and {2, 4}: ln 1, ln 2, ln 2, ln 4; median ln 2.
	if u.NA != 2 || u.NB != 2 || !near(u.Estimate, 2, 1e-12) {
		t.Errorf("RatioOf = %+v", u)
	}

	// A ratio beyond float64 range has no estimate.
	huge := RatioOf(seq(10, 1e-300, 1e-301), seq(10, 1e300, 1e299), RatioOptions{})
	checkFinite(t, huge)
	if huge.Estimate != 0 || huge.HasCI || huge.Verdict != VerdictNone || huge.NA != 10 {
		t.Errorf("overflowing ratio: %+v", huge)
	}

	for _, opt := range []RatioOptions{{Threshold: nan, Confidence: nan, Widen: nan}, {Threshold: -1, Confidence: 1, Widen: -0.5}, {Confidence: inf, Widen: inf}} {
		r := PairedRatio(seq(8, 100, 1), seq(8, 110, 1), opt)
		checkFinite(t, r)
		if r.Threshold != DefaultThreshold || r.Confidence != DefaultConfidence || !r.HasCI {
			t.Errorf("options %+v: %+v", opt, r)
		}
	}
}

func TestVerdictOf(t *testing.T) {
	const th = DefaultThreshold
	up, down := 1+th, 1-th
	tests := []struct {
		est, lo, hi float64
		hasCI       bool
		threshold   float64
		want        Verdict
	}{
		{1.10, 1.05, 1.15, false, th, VerdictNone},
		{1.10, 1.05, 1.15, true, th, VerdictHigher},
		{1.10, 1.00, 1.15, true, th, VerdictUnstable}, // lo must be > 1
		{up, 1.001, 1.05, true, th, VerdictUnstable},  // estimate must be > 1+threshold
		{math.Nextafter(up, 2), 1.001, 1.05, true, th, VerdictHigher},
		{1.01, 1.005, 1.015, true, th, VerdictSame},     // above 1 but within the threshold
		{1.015, 1.005, 1.03, true, th, VerdictUnstable}, // above 1, small, not within
		{0.90, 0.85, 0.95, true, th, VerdictLower},
		{0.90, 0.85, 1.00, true, th, VerdictUnstable},  // hi must be < 1
		{down, 0.95, 0.999, true, th, VerdictUnstable}, // estimate must be < 1-threshold
		{math.Nextafter(down, 0), 0.95, 0.999, true, th, VerdictLower},
		{1.0, down, up, true, th, VerdictSame}, // boundaries included
		{1.0, math.Nextafter(down, 0), up, true, th, VerdictUnstable},
		{1.0, down, math.Nextafter(up, 2), true, th, VerdictUnstable},
		{1.0, 0.9, 1.1, true, th, VerdictUnstable},
		{1.0, 0.96, 1.04, true, 0.05, VerdictSame},
		{1.04, 1.01, 1.06, true, 0.05, VerdictUnstable},
		{1.0, 0.99, 1.01, true, 0, VerdictSame},              // 0 → DefaultThreshold
		{1.0, 0.97, 1.01, true, math.NaN(), VerdictUnstable}, // NaN → DefaultThreshold
		{math.NaN(), math.NaN(), math.NaN(), true, th, VerdictUnstable},
	}
	for _, tt := range tests {
		if got := VerdictOf(tt.est, tt.lo, tt.hi, tt.hasCI, tt.threshold); got != tt.want {
			t.Errorf("VerdictOf(%v, %v, %v, %v, %v) = %q, want %q", tt.est, tt.lo, tt.hi, tt.hasCI, tt.threshold, got, tt.want)
		}
	}
}

// sim draws n trial pairs of a base with value 1 and a candidate with value
// ratio, each with lognormal noise of SD sigma in log space, both times a
// drift shared by the pair: a slow sine over the trials of amplitude
// drift (in log space), random phase.
func sim(rng *rand.Rand, n int, ratio, sigma, drift float64) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	phase := rng.Float64() * 2 * math.Pi
	for i := range n {
		d := drift * math.Sin(phase+2*math.Pi*float64(i)/float64(n))
		a[i] = math.Exp(d + sigma*rng.NormFloat64())
		b[i] = ratio * math.Exp(d+sigma*rng.NormFloat64())
	}
	return a, b
}

// TestRatioCoverage: the 95% intervals cover the true ratio in at least
// 93% of seeded repetitions (they are exact, so about 95–97%), paired and
// unpaired, with and without drift; under drift pairing cancels it, so the
// paired intervals are much narrower.
func TestRatioCoverage(t *testing.T) {
	const reps = 2000
	const sigma = 0.05 // CV 5%
	rng := rand.New(rand.NewPCG(20240601, 7))
	for _, drift := range []float64{0, 0.15} {
		for _, n := range []int{8, 12, 20} {
			for _, ratio := range []float64{1.00, 1.05, 0.90} {
				var coverP, coverU int
				var widthP, widthU []float64
				for range reps {
					a, b := sim(rng, n, ratio, sigma, drift)
					p := PairedRatio(a, b, RatioOptions{})
					u := RatioOf(a, b, RatioOptions{})
					if !p.HasCI || !u.HasCI {
						t.Fatalf("n=%d: no interval: %+v %+v", n, p, u)
					}
					if p.Lo <= ratio && ratio <= p.Hi {
						coverP++
					}
					if u.Lo <= ratio && ratio <= u.Hi {
						coverU++
					}
					widthP = append(widthP, math.Log(p.Hi/p.Lo))
					widthU = append(widthU, math.Log(u.Hi/u.Lo))
				}
				cp, cu := float64(coverP)/reps, float64(coverU)/reps
				slices.Sort(widthP)
				slices.Sort(widthU)
				mp, mu := widthP[reps/2], widthU[reps/2]
				t.Logf("drift %.2f n=%2d ratio %.2f: coverage paired %.3f unpaired %.3f; median log width paired %.4f unpaired %.4f",
					drift, n, ratio, cp, cu, mp, mu)
				if cp < 0.93 || cu < 0.93 {
					t.Errorf("drift %v n=%d ratio %v: coverage paired %.3f, unpaired %.3f; want >= 0.93", drift, n, ratio, cp, cu)
				}
				if drift > 0 && !(2*mp <= mu) {
					t.Errorf("drift %v n=%d ratio %v: median width paired %.4f not under half of unpaired %.4f", drift, n, ratio, mp, mu)
				}
			}
		}
	}
}

// TestRatioVerdicts checks the verdicts on seeded simulations.
//
// An A/A comparison (same config on both sides) is called higher or lower
// only when its interval misses 1 (and the estimate passes the threshold).
// The intervals are exact, so at 95% that happens in at most 5% of
// repetitions (the achieved level: 2·P(V ≤ k−1) ≈ 4–5% at these n), as
// long as the threshold does not bind: at 5% CV and n ≤ 50 the estimate's
// error is about as large as the 2% threshold, so the false-call rate is
// near 5% itself and "≥ 95% same or unstable" can only hold on average;
// there the test allows 5% plus three binomial standard errors. At 2% CV a
// false call also needs an estimate beyond ±2%, and at least 95% of
// repetitions must be same or unstable.
//
// A 10% effect at 5% CV with 12 pairs is called higher in at least 90%.
func TestRatioVerdicts(t *testing.T) {
	const reps = 2000
	rng := rand.New(rand.NewPCG(99, 1))
	count := func(n int, ratio, sigma float64, paired bool) map[Verdict]int {
		m := map[Verdict]int{}
		for range reps {
			a, b := sim(rng, n, ratio, sigma, 0)
			if paired {
				m[PairedRatio(a, b, RatioOptions{}).Verdict]++
			} else {
				m[RatioOf(a, b, RatioOptions{}).Verdict]++
			}
		}
		return m
	}
	maxFalse5 := reps * (0.05 + 3*math.Sqrt(0.05*0.95/reps))
	for _, n := range []int{8, 12, 20, 50} {
		for _, paired := range []bool{true, false} {
			for _, sigma := range []float64{0.02, 0.05} {
				m := count(n, 1, sigma, paired)
				t.Logf("A/A CV %.0f%% n=%d paired=%v: %v", sigma*100, n, paired, m)
				if m[VerdictNone] != 0 {
					t.Errorf("A/A n=%d paired=%v: %d without interval", n, paired, m[VerdictNone])
				}
				same := m[VerdictSame] + m[VerdictUnstable]
				if sigma == 0.02 && same < reps*95/100 {
					t.Errorf("A/A CV 2%% n=%d paired=%v: same or unstable %d of %d (%v)", n, paired, same, reps, m)
				}
				if false := float64(m[VerdictHigher] + m[VerdictLower]); false > maxFalse5 {
					t.Errorf("A/A CV %v n=%d paired=%v: %v higher or lower of %d, want <= %.0f (%v)", sigma, n, paired, false, reps, maxFalse5, m)
				}
			}
		}
	}
	m := count(12, 1.10, 0.05, true)
	t.Logf("10%% effect, 12 pairs: %v", m)
	if m[VerdictHigher] < reps*90/100 {
		t.Errorf("10%% effect, 12 pairs: higher %d of %d (%v)", m[VerdictHigher], reps, m)
	}
	// 50 pairs at 2% CV, no effect: the interval is within ±2%.
	if v := count(50, 1, 0.02, true); v[VerdictSame] < reps*90/100 {
		t.Errorf("A/A 50 pairs at 2%% CV: same %d of %d (%v)", v[VerdictSame], reps, v)
	}
}

// TestMDE: MDEPct follows its formula, shrinks like 1/√n in log space, is
// absent when no interval is possible, and is about what the design
// detects with 80% power.
func TestMDE(t *testing.T) {
	pattern := []float64{-0.05, -0.02, 0.01, 0.015, 0.06} // log ratios; median 0.01, MAD 0.03
	paired := func(n int) Ratio {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i] = 100
			b[i] = 100 * math.Exp(pattern[i%len(pattern)])
		}
		return PairedRatio(a, b, RatioOptions{})
	}
	sigma := madScale * 0.03
	// q is t_{0.975} + t_{0.80} with df degrees of freedom (R: qt(0.975, df) + qt(0.8, df)).
	q := func(df int) float64 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}
		return t.Quantile(0.975) + t.Quantile(0.8)
	}
	if got, want := q(9), 2.262157+0.8834039; !near(got, want, 1e-6) {
		t.Errorf("t quantiles, 9 df: %v, want %v", got, want)
	}
	for _, n := range []int{10, 40, 160} {
		r := paired(n)
		want := (math.Exp(q(n-1)*sigma/math.Sqrt(float64(n))*math.Sqrt(math.Pi/3)) - 1) * 100
		if !r.HasMDE || !near(r.MDEPct, want, 1e-9) {
			t.Errorf("n=%d: MDEPct %v (HasMDE %v), want %v", n, r.MDEPct, r.HasMDE, want)
		}
		if !near(r.NoisePct, 100*sigma/math.Sqrt2, 1e-9) {
			t.Errorf("n=%d: NoisePct %v, want %v", n, r.NoisePct, 100*sigma/math.Sqrt2)
		}
	}
	l10, l40 := math.Log1p(paired(10).MDEPct/100), math.Log1p(paired(40).MDEPct/100)
	if want := 2 * q(9) / q(39); !near(l10/l40, want, 1e-9) {
		t.Errorf("paired MDE 10 vs 40 pairs: log ratio %v, want %v", l10/l40, want)
	}
	if r := paired(5); r.HasMDE || r.MDEPct != 0 || r.HasCI {
		t.Errorf("5 pairs: HasMDE %v, MDEPct %v, HasCI %v; want none", r.HasMDE, r.MDEPct, r.HasCI)
	}
	if r := paired(6); !r.HasMDE {
		t.Errorf("6 pairs: no MDE")
	}

	unpaired := func(n int) Ratio {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i] = math.Exp(pattern[i%len(pattern)])
			b[i] = 1.1 * math.Exp(pattern[(i+2)%len(pattern)])
		}
		return RatioOf(a, b, RatioOptions{})
	}
	u10, u40 := unpaired(10), unpaired(40)
	wantU := (math.Exp(q(18)*sigma*math.Sqrt(2.0/10)*math.Sqrt(math.Pi/3)) - 1) * 100
	if !near(u10.MDEPct, wantU, 1e-9) || !near(u10.NoisePct, 100*sigma, 1e-9) {
		t.Errorf("unpaired 10 vs 10: MDEPct %v, NoisePct %v; want %v, %v", u10.MDEPct, u10.NoisePct, wantU, 100*sigma)
	}
	if l, want := math.Log1p(u10.MDEPct/100)/math.Log1p(u40.MDEPct/100), 2*q(18)/q(78); !near(l, want, 1e-9) {
		t.Errorf("unpaired MDE 10 vs 40 per side: log ratio %v, want %v", l, want)
	}
	if r := RatioOf(seq(3, 1, 1), seq(3, 2, 1), RatioOptions{}); r.HasMDE {
		t.Errorf("3 vs 3: HasMDE")
	}

	// A true change of the MDE (from the true noise) is detected (interval
	// above 1) about 80% of the time.
	const reps = 1000
	const n = 20
	noise := 0.05
	effect := math.Exp(q(n-1) * noise * math.Sqrt2 / math.Sqrt(n) * math.Sqrt(math.Pi/3))
	rng := rand.New(rand.NewPCG(5, 5))
	detected := 0
	for range reps {
		a, b := sim(rng, n, effect, noise, 0)
		if PairedRatio(a, b, RatioOptions{}).Lo > 1 {
			detected++
		}
	}
	p := float64(detected) / reps
	t.Logf("power at the MDE (%.2f%%, 20 pairs): %.3f", (effect-1)*100, p)
	if p < 0.70 || p > 0.90 {
		t.Errorf("power at the MDE (%.2f%%): %.3f, want about 0.8", (effect-1)*100, p)
	}
}

func TestWiden(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	b := []float64{105, 104, 103, 108, 101, 110, 99, 104}
	for _, f := range []func([]float64, []float64, RatioOptions) Ratio{PairedRatio, RatioOf} {
		plain := f(a, b, RatioOptions{})
		wide := f(a, b, RatioOptions{Widen: 0.03})
		if wide.Estimate != plain.Estimate || !near(wide.Lo, plain.Lo/1.03, 1e-15) || !near(wide.Hi, plain.Hi*1.03, 1e-15) {
			t.Errorf("Widen 3%%: %v [%v, %v] from %v [%v, %v]", wide.Estimate, wide.Lo, wide.Hi, plain.Estimate, plain.Lo, plain.Hi)
		}
	}
	// Widening can turn a verdict into "unstable".
	if p, w := PairedRatio(a, b, RatioOptions{}), PairedRatio(a, b, RatioOptions{Widen: 0.03}); p.Verdict != VerdictHigher || w.Verdict != VerdictUnstable {
		t.Errorf("verdicts %q, widened %q; want higher, unstable", p.Verdict, w.Verdict)
	}
}

func TestGeoMeanRatio(t *testing.T) {
	in := Ratio{Estimate: 1.05, Lo: 1.05 / 1.03, Hi: 1.05 * 1.03, HasCI: true, Confidence: 0.95,
		NA: 8, NB: 8, Paired: true, Pairs: 8, NoisePct: 2}
	for _, k := range []int{1, 4, 9} {
		rs := make([]Ratio, k)
		for i := range rs {
			rs[i] = in
		}
		g := GeoMeanRatio(rs, RatioOptions{})
		checkFinite(t, g)
		half := math.Log(1.03) / math.Sqrt(float64(k))
		if !near(g.Estimate, 1.05, 1e-12) || !g.HasCI || !near(math.Log(g.Hi/g.Estimate), half, 1e-9) || !near(math.Log(g.Estimate/g.Lo), half, 1e-9) {
			t.Errorf("k=%d: %v [%v, %v], want 1.05 with log half-width %v", k, g.Estimate, g.Lo, g.Hi, half)
		}
		if g.NA != 8*k || g.Pairs != 8*k || !g.Paired || !near(g.NoisePct, 2, 1e-12) || !g.HasMDE {
			t.Errorf("k=%d: fields %+v", k, g)
		}
		if g.Verdict != VerdictHigher {
			t.Errorf("k=%d: Verdict %q, want higher", k, g.Verdict)
		}
	}

	// Estimates combine geometrically; one input without an interval
	// leaves none; inputs with no estimate are skipped.
	noCI := Ratio{Estimate: 2, NA: 1, NB: 1}
	g := GeoMeanRatio([]Ratio{in, noCI, {}, {Estimate: math.NaN()}}, RatioOptions{})
	checkFinite(t, g)
	if !near(g.Estimate, math.Sqrt(1.05*2), 1e-12) || g.HasCI || g.HasMDE || g.Verdict != VerdictNone || g.Paired || g.NA != 9 {
		t.Errorf("with one input lacking an interval: %+v", g)
	}
	if g := GeoMeanRatio(nil, RatioOptions{}); g.Estimate != 0 || g.HasCI || g.Verdict != VerdictNone || g.Paired {
		t.Errorf("empty: %+v", g)
	}

	// An input at 90% has a smaller z: the same interval means a larger
	// error. Confidence and Widen of the result apply.
	in90 := in
	in90.Confidence = 0.90
	g90 := GeoMeanRatio([]Ratio{in90}, RatioOptions{Confidence: 0.95, Widen: 0.01})
	z90, z95 := zTwoSided(0.10), zTwoSided(0.05)
	if want := math.Log(1.03)*z95/z90 + math.Log(1.01); !near(math.Log(g90.Hi/g90.Estimate), want, 1e-9) || g90.Confidence != 0.95 {
		t.Errorf("90%% input: log upper half-width %v, want %v", math.Log(g90.Hi/g90.Estimate), want)
	}

	// From real ratios: the geomean of a faster and a slower step.
	a := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	b := []float64{105, 104, 103, 108, 101, 110, 99, 104}
	r1, r2 := PairedRatio(a, b, RatioOptions{}), PairedRatio(b, a, RatioOptions{})
	g = GeoMeanRatio([]Ratio{r1, r2}, RatioOptions{})
	if !near(g.Estimate, 1, 1e-12) || !g.HasCI || !(g.Lo < 1 && g.Hi > 1) {
		t.Errorf("faster and slower: %+v", g)
	}
}

// TestRatioLarge runs the normal-approximation paths and checks that they
// stay finite and sensible.
func TestRatioLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := sim(rng, 400, 1.02, 0.05, 0)
	p := PairedRatio(a, b, RatioOptions{})
	checkFinite(t, p)
	if !p.HasCI || !(p.Lo < p.Estimate && p.Estimate < p.Hi) || !near(p.Estimate, 1.02, 0.01) || !(p.Hi/p.Lo < 1.03) {
		t.Errorf("400 pairs: %+v", p)
	}
	a2, b2 := sim(rng, 3000, 1.02, 0.05, 0)
	u := RatioOf(a2, b2[:2000], RatioOptions{})
	checkFinite(t, u)
	if !u.HasCI || !(u.Lo < u.Estimate && u.Estimate < u.Hi) || !near(u.Estimate, 1.02, 0.01) || !(u.Hi/u.Lo < 1.02) {
		t.Errorf("3000 vs 2000: %+v", u)
	}
}

// The shifts are the ratios' estimators on the values: log values through PairedShift and
// UnpairedShift give the log of PairedRatio's and RatioOf's estimates and intervals.
func TestShiftsMatchRatios(t *testing.T) {
	a := []float64{100, 103, 98, 101, 99, 102, 100, 97}
	b := []float64{110, 112, 108, 109, 113, 111, 107, 112}
	la, lb := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		la[i], lb[i] = math.Log(a[i]), math.Log(b[i])
	}
	pr, ps := PairedRatio(a, b, RatioOptions{}), PairedShift(la, lb, 0)
	ur, us := RatioOf(a, b, RatioOptions{}), UnpairedShift(la, lb, 0)
	for _, c := range []struct {
		name string
		r    Ratio
		s    Shift
	}{{"paired", pr, ps}, {"unpaired", ur, us}} {
		if !c.s.HasCI || !c.r.HasCI {
			t.Fatalf("%s: no interval", c.name)
		}
		for _, p := range [][2]float64{{c.r.Estimate, c.s.Estimate}, {c.r.Lo, c.s.Lo}, {c.r.Hi, c.s.Hi}} {
			if math.Abs(math.Log(p[0])-p[1]) > 1e-12 {
				t.Errorf("%s: ratio %v vs shift %v", c.name, c.r, c.s)
			}
		}
		if !c.s.Excludes0() {
			t.Errorf("%s: %+v does not exclude 0", c.name, c.s)
		}
	}
	// Zeros are values here (a function without samples in a block).
	z := PairedShift([]float64{0, 0, 0, 0, 0, 0}, []float64{1, 2, 1, 3, 2, 1}, 0)
	if !z.HasCI || z.Lo <= 0 || z.N != 6 {
		t.Errorf("zeros: %+v", z)
	}
	if s := PairedShift([]float64{1, 2}, []float64{2, 3}, 0); s.HasCI || s.Estimate != 1 {
		t.Errorf("two pairs: %+v", s)
	}
}
