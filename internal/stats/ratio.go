package stats

// Ratio estimates: candidate ÷ base with a distribution-free confidence
// interval, and the verdict a report may print from it.
//
// Everything works on logs, so a ratio is a shift: d = ln b − ln a.
//
//   - Paired trials (PairedRatio): d_i = ln b_i − ln a_i. The estimate is
//     exp of the Hodges–Lehmann one-sample estimate, the median of the
//     M = n(n+1)/2 Walsh averages (d_i+d_j)/2, i ≤ j. The interval is
//     exp of the k-th smallest and k-th largest Walsh averages, k from the
//     exact null distribution of the Wilcoxon signed-rank statistic.
//   - Unpaired trials (RatioOf): the estimate is exp of the Hodges–Lehmann
//     two-sample estimate, the median of the nA·nB differences
//     ln b_j − ln a_i; the interval is exp of their k-th smallest and k-th
//     largest, k from the exact null distribution of the Mann–Whitney U.
//
// References: J. L. Hodges, E. L. Lehmann, "Estimates of location based on
// rank tests", Ann. Math. Statist. 34 (1963) 598–611; M. Hollander,
// D. A. Wolfe, Nonparametric Statistical Methods (Wiley), §3.2–3.3 (one
// sample: estimator and interval from the signed-rank statistic) and
// §4.2–4.3 (two samples: from the rank-sum statistic); D. F. Bauer,
// "Constructing confidence sets using rank statistics", JASA 67 (1972)
// 687–690. The order-statistic index follows R's wilcox.test(conf.int=TRUE)
// (k = qsignrank(α/2, n), resp. qwilcox(α/2, nA, nB)), so that for untied
// data and sizes where R is exact (n < 50) the intervals are R's; the tests
// hold values R 4.2.2 printed. Unlike R, ties do not switch to a normal
// approximation: the exact index is used with ties too (the interval then
// covers at least about as often; measurements are rarely tied).
//
// Why by hand: no maintained Go library computes these intervals.
// golang.org/x/perf/benchmath (used in stats.go) has the U test's p-value
// and the median's interval but no interval of a shift, and gonum/stat has
// no rank-based estimators at all.
//
// Sizes: the null distributions are computed exactly by dynamic programming
// (signed rank up to exactSignedRankMax pairs, rank sum while
// min(nA,nB)·nA·nB ≤ exactRankSumWork and nA·nB ≤ exactRankSumSize), above that from the normal
// approximation with continuity correction. The order statistics are found
// without materialising the O(n²) Walsh averages or differences: a
// bisection over the float64 values counts, in O(n), how many are ≤ a
// candidate (two pointers over the sorted logs), so memory stays O(n).

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultThreshold is the smallest relative change a verdict calls higher or lower (2%).
const DefaultThreshold = 0.02

// Verdict is what a Ratio says about the candidate against the base.
type Verdict string

// The verdicts; VerdictOf is their rule.
const (
	VerdictNone     Verdict = ""         // too few values for an interval: show values, no verdict
	VerdictHigher   Verdict = "higher"   // interval above 1 and the estimate above 1+Threshold
	VerdictLower    Verdict = "lower"    // interval below 1 and the estimate below 1-Threshold
	VerdictSame     Verdict = "same"     // interval within [1-Threshold, 1+Threshold]
	VerdictUnstable Verdict = "unstable" // neither: the noise at this n is larger than the threshold
)

// RatioOptions tune RatioOf, PairedRatio and GeoMeanRatio; the zero value is the default.
type RatioOptions struct {
	Threshold  float64 // relative, e.g. 0.02; 0 → DefaultThreshold
	Confidence float64 // 0 → DefaultConfidence (0.95)
	// Widen (relative, e.g. 0.03) widens the interval on both sides in log space by
	// log(1+Widen): used when the machine was busy with other work during a step.
	Widen float64
}

// Ratio is candidate ÷ base for one figure.
type Ratio struct {
	NA, NB     int // values used per side (finite, > 0)
	Paired     bool
	Pairs      int     // pairs used when Paired
	Estimate   float64 // point estimate of B/A (Hodges–Lehmann, see above); 0 when it cannot be computed
	Lo, Hi     float64 // interval of the ratio at Confidence; meaningful only when HasCI
	HasCI      bool
	Confidence float64
	Threshold  float64
	// NoisePct is the trials' own spread: 100 × a robust SD of the log values of one point
	// (paired: SD of log ratios / √2; unpaired: pooled), i.e. ≈ the coefficient of variation.
	NoisePct float64
	// MDEPct is the minimum detectable effect in percent: the smallest change this design
	// would detect with 80% power at two-sided 5% (generally: 1−Confidence) with this noise
	// and n. HasMDE false when n is too small for the exact interval to ever exclude 1.
	MDEPct  float64
	HasMDE  bool
	Verdict Verdict
}

const (
	// zPower is z_{0.80}, the normal quantile for 80% power in MDEPct.
	zPower = 0.8416212335729143
	// madScale makes the MAD a consistent estimate of a normal SD.
	madScale = 1.4826
	// exactSignedRankMax is the largest number of pairs whose signed-rank
	// distribution is computed exactly (≈ n³/4 additions: 7M at 300).
	exactSignedRankMax = 300
	// exactRankSumWork bounds min(nA,nB)·nA·nB, about the work of the exact
	// rank-sum distribution (e.g. 200 vs 200, or 20 vs 5000).
	exactRankSumWork = 10_000_000
	// exactRankSumSize bounds nA·nB for the exact rank-sum distribution
	// (its table holds nA·nB/2 float64s).
	exactRankSumSize = 2_000_000
)

// efficiency is sqrt(π/3): the Hodges–Lehmann estimate's standard error
// over the mean's for normal data (the Wilcoxon tests' asymptotic relative
// efficiency is 3/π).
var efficiency = math.Sqrt(math.Pi / 3)

// resolve returns the options with their defaults applied: a threshold or
// confidence that is 0, out of range or NaN is the default, a negative or
// NaN Widen is 0.
func (o RatioOptions) resolve() (threshold, confidence, widen float64) {
	threshold = o.Threshold
	if !(threshold > 0) || math.IsInf(threshold, 1) {
		threshold = DefaultThreshold
	}
	confidence = o.Confidence
	if !(confidence > 0 && confidence < 1) {
		confidence = DefaultConfidence
	}
	widen = o.Widen
	if !(widen > 0) || math.IsInf(widen, 1) {
		widen = 0
	}
	return threshold, confidence, widen
}

// VerdictOf is the verdict rule, shared by the Ratio functions and the
// report: VerdictNone without an interval; VerdictHigher when lo > 1 and
// estimate > 1+threshold; VerdictLower when hi < 1 and estimate <
// 1−threshold; VerdictSame when the interval lies within [1−threshold,
// 1+threshold]; else VerdictUnstable. A threshold that is not > 0 (or is
// NaN or +Inf) is DefaultThreshold, as in RatioOptions.
func VerdictOf(estimate, lo, hi float64, hasCI bool, threshold float64) Verdict {
	if !hasCI {
		return VerdictNone
	}
	if !(threshold > 0) || math.IsInf(threshold, 1) {
		threshold = DefaultThreshold
	}
	switch {
	case lo > 1 && estimate > 1+threshold:
		return VerdictHigher
	case hi < 1 && estimate < 1-threshold:
		return VerdictLower
	case lo >= 1-threshold && hi <= 1+threshold:
		return VerdictSame
	}
	return VerdictUnstable
}

// RatioOf estimates b ÷ a from unpaired values (a the base, b the
// candidate): the Hodges–Lehmann two-sample estimate on logs with the exact
// Mann–Whitney interval at opt.Confidence. Values that are not finite and
// > 0 are ignored; a and b are not modified. With one value on either side
// (or too few for the interval at this confidence: 2 vs 2, 3 vs 4 at 95%)
// HasCI and HasMDE are false and the Verdict is VerdictNone; Estimate is
// still set (b/a for 1 vs 1). With no value on a side only NA, NB,
// Confidence and Threshold are set (Estimate 0).
func RatioOf(a, b []float64, opt RatioOptions) Ratio {
	threshold, confidence, widen := opt.resolve()
	la, lb := sortedLogs(a), sortedLogs(b)
	r := Ratio{NA: len(la), NB: len(lb), Confidence: confidence, Threshold: threshold}
	if r.NA == 0 || r.NB == 0 {
		return r
	}
	m := r.NA * r.NB
	r.Estimate = math.Exp(medianOf(m, func(k int) float64 { return kthDiff(la, lb, k) }))

	sa, sb := robustSD(la), robustSD(lb)
	if df := r.NA + r.NB - 2; df > 0 {
		pooled := (float64(r.NA-1)*sa*sa + float64(r.NB-1)*sb*sb) / float64(df)
		r.NoisePct = 100 * math.Sqrt(pooled)
	}

	alpha := 1 - confidence
	k := 0
	if r.NA >= 2 && r.NB >= 2 {
		k = rankSumIndex(r.NA, r.NB, alpha)
	}
	if k >= 1 {
		r.Lo = math.Exp(kthDiff(la, lb, k)) / (1 + widen)
		r.Hi = math.Exp(kthDiff(la, lb, m-k+1)) * (1 + widen)
		r.HasCI = true
		se := math.Sqrt(sa*sa/float64(r.NA) + sb*sb/float64(r.NB))
		r.MDEPct, r.HasMDE = mdePct(se*efficiency, alpha, r.NA+r.NB-2), true
	}
	return finish(r)
}

// PairedRatio estimates b ÷ a from paired values: a[i] (base) ran with b[i]
// (candidate), so b[i]/a[i] cancels what the pair shares. It is the
// Hodges–Lehmann estimate of the log ratios with the exact Wilcoxon
// signed-rank interval at opt.Confidence. A pair with a side that is not
// finite and > 0 is dropped; values beyond the shorter slice are ignored; a
// and b are not modified. NA, NB and Pairs are the pairs used. With too few
// pairs for the interval at this confidence (fewer than 6 at 95%) HasCI and
// HasMDE are false and the Verdict is VerdictNone; Estimate is still set
// (b/a for one pair).
func PairedRatio(a, b []float64, opt RatioOptions) Ratio {
	threshold, confidence, widen := opt.resolve()
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if usable(a[i]) && usable(b[i]) {
			d = append(d, math.Log(b[i])-math.Log(a[i]))
		}
	}
	slices.Sort(d)
	n = len(d)
	r := Ratio{NA: n, NB: n, Paired: true, Pairs: n, Confidence: confidence, Threshold: threshold}
	if n == 0 {
		return r
	}
	m := n * (n + 1) / 2
	r.Estimate = math.Exp(medianOf(m, func(k int) float64 { return kthWalsh(d, k) }))

	sd := robustSD(d)
	r.NoisePct = 100 * sd / math.Sqrt2

	alpha := 1 - confidence
	if k := signedRankIndex(n, alpha); k >= 1 {
		r.Lo = math.Exp(kthWalsh(d, k)) / (1 + widen)
		r.Hi = math.Exp(kthWalsh(d, m-k+1)) * (1 + widen)
		r.HasCI = true
		r.MDEPct, r.HasMDE = mdePct(sd/math.Sqrt(float64(n))*efficiency, alpha, n-1), true
	}
	return finish(r)
}

// GeoMeanRatio combines several figures' ratios (e.g. the steps of a group) into their
// geometric mean with an interval and a verdict. Ratios without HasCI contribute their
// Estimate; the result HasCI only if every input HasCI.
//
// The log estimate is the mean of the inputs' ln Estimate. Each input's
// interval is read as a normal error of its log estimate, se_i = (ln Hi_i −
// ln Lo_i) / (2 z_i) with z_i the normal quantile of the input's own
// Confidence, and the inputs' errors are assumed independent (they come
// from different steps or metrics; errors shared by the figures, such as a
// machine that was slower for a whole run, are not in se): se =
// sqrt(Σ se_i²)/k, and the interval is exp(mean ± z·se) at opt.Confidence,
// symmetric in log space even where the inputs' intervals are not. k
// identical inputs thus give the same estimate with a log half-width ÷ √k.
// An input's Widen is already in its interval and so carries over; a Widen
// in opt widens the combined interval once more. Inputs whose Estimate is
// not > 0 (nothing could be computed) are skipped. NA, NB and Pairs are the
// inputs' totals, Paired is whether every input used is paired, NoisePct is
// the root mean square of the inputs' NoisePct, and MDEPct is that of the
// combined interval: (z + z_{0.80})·se.
func GeoMeanRatio(rs []Ratio, opt RatioOptions) Ratio {
	threshold, confidence, widen := opt.resolve()
	out := Ratio{Confidence: confidence, Threshold: threshold, Paired: true}
	var sumLog, sumVar, sumNoise2, sumMDE2 float64
	k := 0
	allCI, allMDE := true, true
	for _, r := range rs {
		if !usable(r.Estimate) {
			continue
		}
		k++
		sumLog += math.Log(r.Estimate)
		out.NA += r.NA
		out.NB += r.NB
		out.Pairs += r.Pairs
		out.Paired = out.Paired && r.Paired
		sumNoise2 += r.NoisePct * r.NoisePct
		if r.HasMDE {
			l := math.Log1p(r.MDEPct / 100)
			sumMDE2 += l * l
		} else {
			allMDE = false
		}
		if !r.HasCI || !usable(r.Lo) || !usable(r.Hi) || r.Hi < r.Lo {
			allCI = false
			continue
		}
		rc := r.Confidence
		if !(rc > 0 && rc < 1) {
			rc = DefaultConfidence
		}
		se := (math.Log(r.Hi) - math.Log(r.Lo)) / (2 * zTwoSided(1-rc))
		sumVar += se * se
	}
	if k == 0 {
		out.Paired = false
		return out
	}
	mean := sumLog / float64(k)
	out.Estimate = math.Exp(mean)
	out.NoisePct = math.Sqrt(sumNoise2 / float64(k))
	if allCI {
		se := math.Sqrt(sumVar) / float64(k)
		z := zTwoSided(1 - confidence)
		out.Lo = math.Exp(mean-z*se) / (1 + widen)
		out.Hi = math.Exp(mean+z*se) * (1 + widen)
		out.HasCI = true
		out.MDEPct, out.HasMDE = mdePct(se, 1-confidence, 0), true
		if allMDE {
			// The inputs' own MDEs (from their trials' noise) combined as their errors are:
			// the geomean of one figure then has that figure's MDE, not one derived from its
			// exact interval, which is wider than the normal one by its discreteness.
			out.MDEPct = math.Expm1(math.Sqrt(sumMDE2)/float64(k)) * 100
		}
	}
	return finish(out)
}

// finish enforces the package rule (no NaN or ±Inf: a ratio too large for
// a float64 loses its estimate or interval) and sets the verdict.
func finish(r Ratio) Ratio {
	if !isFinite(r.Estimate) {
		r.Estimate = 0
		r.HasCI = false
	}
	if !r.HasCI || !isFinite(r.Lo) || !isFinite(r.Hi) {
		r.Lo, r.Hi, r.HasCI = 0, 0, false
	}
	r.NoisePct = finiteOr0(r.NoisePct)
	r.MDEPct = finiteOr0(r.MDEPct)
	if !r.HasMDE {
		r.MDEPct = 0
	}
	r.Verdict = VerdictOf(r.Estimate, r.Lo, r.Hi, r.HasCI, r.Threshold)
	return r
}

// mdePct is the minimum detectable effect in percent of a log estimate
// with standard error se: (t_{1−α/2} + t_{0.80})·se, as exp(x)−1, with t the
// quantiles of Student's t with df degrees of freedom (df ≤ 0: the normal
// quantiles z). alpha is 1 − the confidence of the interval (0.05 by
// default, the "two-sided 5%"). The t quantiles matter at the small n of a
// sweep: with 6 pairs they are 2.57 + 0.92 against 1.96 + 0.84, so an MDE
// from z would promise changes that 6 pairs' interval cannot show (the
// noncentral-t power of a paired t test at δ = (t_{1−α/2,df} + t_{0.8,df})·se
// is about 80%; J. Cohen, Statistical Power Analysis, 1988, §2.3).
func mdePct(se, alpha float64, df int) float64 {
	q := zTwoSided(alpha) + zPower
	if df > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}
		q = t.Quantile(1-alpha/2) + t.Quantile(0.8)
	}
	return (math.Exp(q*se) - 1) * 100
}

// zTwoSided is the normal quantile z_{1−α/2}.
func zTwoSided(alpha float64) float64 {
	return -normalQuantile(alpha / 2)
}

// normalQuantile is the standard normal quantile Φ⁻¹(p), 0 < p < 1.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// usable reports whether x is a value a ratio can use: finite and > 0.
func usable(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// sortedLogs returns the logs of the usable values, sorted.
func sortedLogs(xs []float64) []float64 {
	ls := make([]float64, 0, len(xs))
	for _, x := range xs {
		if usable(x) {
			ls = append(ls, math.Log(x))
		}
	}
	slices.Sort(ls)
	return ls
}

// robustSD is a robust standard deviation of sorted xs: the MAD × 1.4826,
// or the sample SD when the MAD is 0 (more than half the values equal); 0
// for fewer than two values.
func robustSD(sorted []float64) float64 {
	n := len(sorted)
	if n < 2 {
		return 0
	}
	med := sortedMedian(sorted)
	dev := make([]float64, n)
	for i, x := range sorted {
		dev[i] = math.Abs(x - med)
	}
	slices.Sort(dev)
	if mad := sortedMedian(dev); mad > 0 {
		return madScale * mad
	}
	var mean, ss float64
	for _, x := range sorted {
		mean += x
	}
	mean /= float64(n)
	for _, x := range sorted {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(n-1))
}

// sortedMedian is the median of sorted xs (mean of the middle two for an
// even count); xs is not empty.
func sortedMedian(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// medianOf is the median of m values given their k-th smallest (1-based),
// R's median: the mean of the middle two for even m.
func medianOf(m int, kth func(k int) float64) float64 {
	if m%2 == 1 {
		return kth((m + 1) / 2)
	}
	return (kth(m/2) + kth(m/2+1)) / 2
}

// kthDiff is the k-th smallest (1-based, 1 ≤ k ≤ len(x)·len(y)) of the
// differences y[j] − x[i] of sorted x and y.
func kthDiff(x, y []float64, k int) float64 {
	// count is the number of differences ≤ v. As x[i] grows, y[j] − x[i]
	// shrinks (float subtraction is monotone), so the j-prefix that counts
	// only grows: two pointers.
	count := func(v float64) int {
		c, j := 0, 0
		for _, xi := range x {
			for j < len(y) && y[j]-xi <= v {
				j++
			}
			c += j
		}
		return c
	}
	return kthValue(y[0]-x[len(x)-1], y[len(y)-1]-x[0], k, count)
}

// kthWalsh is the k-th smallest (1-based, 1 ≤ k ≤ n(n+1)/2) of the Walsh
// averages (d[i] + d[j])/2, i ≤ j, of sorted d.
func kthWalsh(d []float64, k int) float64 {
	// count is the number of averages ≤ v: for each i the j ≥ i with
	// (d[i]+d[j])/2 ≤ v form a prefix whose end only moves down as i grows.
	count := func(v float64) int {
		c, j := 0, len(d)-1
		for i := range d {
			for j >= i && (d[i]+d[j])/2 > v {
				j--
			}
			if j < i {
				break
			}
			c += j - i + 1
		}
		return c
	}
	return kthValue(d[0], d[len(d)-1], k, count)
}

// kthValue returns the smallest float64 v in [lo, hi] with count(v) ≥ k,
// where count(v) is the number of (computed) values ≤ v, count(hi) ≥ k,
// and lo is the smallest value. That v is the k-th smallest value itself,
// since count only steps up at the values. It bisects over the float64s in
// their order (at most 64 steps), so the result is exact.
func kthValue(lo, hi float64, k int, count func(float64) int) float64 {
	l, h := orderedKey(lo), orderedKey(hi)
	for l < h {
		mid := l + (h-l)/2
		if count(fromOrderedKey(mid)) >= k {
			h = mid
		} else {
			l = mid + 1
		}
	}
	return fromOrderedKey(h)
}

// orderedKey maps a float64 to a uint64 whose order is the floats' order
// (−0 just below +0); between the keys of two finite floats lie only the
// keys of finite floats.
func orderedKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// fromOrderedKey inverts orderedKey.
func fromOrderedKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// critKey identifies a cached order-statistic index.
type critKey struct {
	paired bool
	m, n   int
	alpha  float64
}

// critCache holds computed indices: a report asks for the same sizes many
// times, and the exact distributions of a few hundred values take
// milliseconds. It stops growing at critCacheMax entries.
var (
	critMu    sync.Mutex
	critCache = map[critKey]int{}
)

const critCacheMax = 4096

func cachedIndex(key critKey, compute func() int) int {
	critMu.Lock()
	k, ok := critCache[key]
	critMu.Unlock()
	if ok {
		return k
	}
	k = compute()
	critMu.Lock()
	if len(critCache) < critCacheMax {
		critCache[key] = k
	}
	critMu.Unlock()
	return k
}

// quantileTol is R's fuzz in qsignrank and qwilcox (10·DBL_EPSILON).
const quantileTol = 10 * 2.220446049250313e-16

// signedRankIndex is the order-statistic index k of the two-sided interval
// at level 1−alpha from n Walsh averages: the smallest x with
// P(V ≤ x) ≥ alpha/2 for the Wilcoxon signed-rank statistic V of n pairs
// (R's qsignrank(alpha/2, n)). The interval [W_(k), W_(M−k+1)] then covers
// with probability 1 − 2·P(V ≤ k−1) ≥ 1 − alpha. 0 means no interval at
// this level (n < 6 at 95%).
func signedRankIndex(n int, alpha float64) int {
	if n < 1 {
		return 0
	}
	return cachedIndex(critKey{paired: true, n: n, alpha: alpha}, func() int {
		half := n * (n + 1) / 4 // V is symmetric about n(n+1)/4
		if n > exactSignedRankMax {
			fn := float64(n)
			mu := fn * (fn + 1) / 4
			sigma := math.Sqrt(fn * (fn + 1) * (2*fn + 1) / 24)
			return clampIndex(math.Ceil(mu+normalQuantile(alpha/2)*sigma-0.5), half)
		}
		// c[s] counts the subsets of {1..n} with sum s, s ≤ half: the
		// 2ⁿ equally likely sign patterns (at most 2³⁰⁰, within float64).
		c := make([]float64, half+1)
		c[0] = 1
		for j := 1; j <= n; j++ {
			for s := min(half, j*(j+1)/2); s >= j; s-- {
				c[s] += c[s-j]
			}
		}
		return lowerQuantile(c, math.Ldexp(1, n), alpha/2)
	})
}

// rankSumIndex is the order-statistic index k of the two-sided interval at
// level 1−alpha from the na·nb differences: the smallest x with
// P(U ≤ x) ≥ alpha/2 for the Mann–Whitney U of sizes na and nb (R's
// qwilcox(alpha/2, na, nb)); 0 means no interval at this level.
func rankSumIndex(na, nb int, alpha float64) int {
	m, n := min(na, nb), max(na, nb) // U's distribution is symmetric in the sizes
	if m < 1 {
		return 0
	}
	return cachedIndex(critKey{m: m, n: n, alpha: alpha}, func() int {
		half := m * n / 2 // U is symmetric about mn/2
		if float64(m)*float64(m)*float64(n) > exactRankSumWork || m*n > exactRankSumSize {
			mu := float64(m) * float64(n) / 2
			sigma := math.Sqrt(float64(m) * float64(n) * float64(m+n+1) / 12)
			return clampIndex(math.Ceil(mu+normalQuantile(alpha/2)*sigma-0.5), half)
		}
		// The counts of U are the coefficients of the Gaussian binomial
		// [m+n choose m]_q = Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i).
		// Dividing then multiplying factor by factor keeps every
		// intermediate series' coefficients at most C(m+n, m): no
		// overflow at these sizes, and the small counts of the tail are
		// exact. Coefficients above half are not needed.
		c := make([]float64, half+1)
		c[0] = 1
		total := 1.0
		for i := 1; i <= m; i++ {
			for s := i; s <= half; s++ { // ÷ (1 − q^i)
				c[s] += c[s-i]
			}
			for s := half; s >= n+i; s-- { // × (1 − q^{n+i})
				c[s] -= c[s-n-i]
			}
			total *= float64(n+i) / float64(i)
		}
		return lowerQuantile(c, total, alpha/2)
	})
}

// lowerQuantile is the smallest x with Σ_{s≤x} c[s]/total ≥ p (less R's
// fuzz), or len(c)−1 when none is.
func lowerQuantile(c []float64, total, p float64) int {
	target := p - quantileTol
	cum := 0.0
	for x, cx := range c {
		cum += cx
		if cum/total >= target {
			return x
		}
	}
	return len(c) - 1
}

// clampIndex converts a normal-approximation index to an int in [0, half].
func clampIndex(x float64, half int) int {
	if !(x > 0) {
		return 0
	}
	if x > float64(half) {
		return half
	}
	return int(x)
}

// Shift is candidate − base for a figure that may be 0 in a trial (a function's CPU per
// operation): the Hodges–Lehmann estimate of the difference with its exact interval, the
// same estimators as PairedRatio and RatioOf on the values themselves instead of their
// logs. HasCI is false with too few trials for the interval at Confidence.
type Shift struct {
	N          int // pairs (paired) or the smaller side's values
	Paired     bool
	Estimate   float64
	Lo, Hi     float64
	HasCI      bool
	Confidence float64
}

// Excludes0 says the interval lies wholly above or below 0.
func (s Shift) Excludes0() bool { return s.HasCI && (s.Lo > 0 || s.Hi < 0) }

// PairedShift estimates b − a from paired values (a[i] ran with b[i]): the median of the
// Walsh averages of the differences with the exact Wilcoxon signed-rank interval. Pairs
// with a side that is not finite are dropped.
func PairedShift(a, b []float64, confidence float64) Shift {
	confidence = confidenceOr(confidence)
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if isFinite(a[i]) && isFinite(b[i]) {
			d = append(d, b[i]-a[i])
		}
	}
	slices.Sort(d)
	s := Shift{N: len(d), Paired: true, Confidence: confidence}
	if len(d) == 0 {
		return s
	}
	m := len(d) * (len(d) + 1) / 2
	s.Estimate = medianOf(m, func(k int) float64 { return kthWalsh(d, k) })
	if k := signedRankIndex(len(d), 1-confidence); k >= 1 {
		s.Lo, s.Hi, s.HasCI = kthWalsh(d, k), kthWalsh(d, m-k+1), true
	}
	return s
}

// UnpairedShift estimates b − a from unpaired values: the median of the differences
// b[j] − a[i] with the exact Mann–Whitney interval. Values that are not finite are
// dropped.
func UnpairedShift(a, b []float64, confidence float64) Shift {
	confidence = confidenceOr(confidence)
	fa, fb := finiteOnly(a), finiteOnly(b)
	slices.Sort(fa)
	slices.Sort(fb)
	s := Shift{N: min(len(fa), len(fb)), Confidence: confidence}
	if len(fa) == 0 || len(fb) == 0 {
		return s
	}
	m := len(fa) * len(fb)
	s.Estimate = medianOf(m, func(k int) float64 { return kthDiff(fa, fb, k) })
	if len(fa) >= 2 && len(fb) >= 2 {
		if k := rankSumIndex(len(fa), len(fb), 1-confidence); k >= 1 {
			s.Lo, s.Hi, s.HasCI = kthDiff(fa, fb, k), kthDiff(fa, fb, m-k+1), true
		}
	}
	return s
}
