// Package stats summarises repeated measurements and compares two sets of
// them: median with a confidence interval, spread and noise flag,
// Mann-Whitney U test, geometric mean, and ratio estimates with intervals
// and verdicts. Reports call it; it reads nothing and imports nothing of
// ours.
//
// The median, its confidence interval and the U test's p-value come from
// golang.org/x/perf/benchmath (AssumeNothing), the same code benchstat uses.
// Spread, noise, ratios, sample-size checks and the geometric mean are
// computed here.
//
// Ratios (ratio.go): RatioOf (unpaired trials) and PairedRatio (trial i of
// the base ran with trial i of the candidate) estimate candidate ÷ base as
// a Hodges–Lehmann estimate on logs with an exact distribution-free
// interval (Mann–Whitney, resp. Wilcoxon signed rank; R's
// wilcox.test(conf.int=TRUE)), the trials' noise and the minimum detectable
// effect; GeoMeanRatio combines several figures' Ratios; VerdictOf is the
// one rule that turns an interval into a Verdict (higher, lower, same,
// unstable, or none without an interval) against a threshold
// (DefaultThreshold, 2%).
//
// Results never hold NaN or ±Inf: non-finite inputs are ignored, and values
// that cannot be computed are 0 and flagged instead.
//
// Summarize is the median with its interval, the spread and the noise flag.
// A Ratio's minimum detectable effect is at 80% power, from Student's t
// quantiles at the pairs' degrees of freedom. RatioOptions.Widen widens an
// interval for a busy machine. variance.go splits a ratio's variance by
// source (DecomposePaired, DecomposeUnpaired) and takes a blocking factor out
// (AdjustForFactor); PairedShift and UnpairedShift are a change's interval.
// Compare, the Mann-Whitney U p-value, is used by no report any more.
package stats

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// DefaultAlpha is the significance level of Compare.
const DefaultAlpha = 0.05

// DefaultConfidence is the confidence level of the median's interval.
const DefaultConfidence = 0.95

// NoisyPct is the noise threshold: a summary whose spread exceeds this
// percentage of its median is noisy.
const NoisyPct = 5.0

// maxRuns bounds the search of MinSamplesForAlpha. For any alpha > 0 the
// answer is far below it (the p-value of two fully separated samples of
// 1000 runs each underflows to 0).
const maxRuns = 1000

// Summary describes one set of repeated measurements.
type Summary struct {
	// N is the number of (finite) values summarised.
	N int
	// Median, Min and Max are the sample median (benchmath), smallest and
	// largest values.
	Median, Min, Max float64
	// Lo and Hi bound the median at DefaultConfidence (benchmath
	// AssumeNothing); HasCI is false when N is too small for an interval
	// (then Lo=Min, Hi=Max).
	Lo, Hi float64
	// HasCI reports whether Lo and Hi are a real confidence interval.
	HasCI bool
	// SpreadPct is max(Max-Median, Median-Min) / |Median| * 100 (0 when
	// Median is 0 or N < 2): the "± x%" shown beside a median.
	SpreadPct float64
	// Noisy is SpreadPct > NoisyPct.
	Noisy bool
}

// Summarize summarises values. NaN and ±Inf values are ignored; with no
// values left it returns the zero Summary. values is not modified.
func Summarize(values []float64) Summary {
	s := sample(values, DefaultAlpha)
	n := len(s.Values)
	if n == 0 {
		return Summary{}
	}
	bs := benchmath.AssumeNothing.Summary(s, DefaultConfidence)
	sum := Summary{
		N:      n,
		Median: bs.Center,
		Min:    s.Values[0],
		Max:    s.Values[n-1],
		Lo:     bs.Lo,
		Hi:     bs.Hi,
		HasCI:  isFinite(bs.Lo) && isFinite(bs.Hi),
	}
	if !sum.HasCI {
		sum.Lo, sum.Hi = sum.Min, sum.Max
	}
	if n >= 2 && sum.Median != 0 {
		spread := math.Max(sum.Max-sum.Median, sum.Median-sum.Min)
		sum.SpreadPct = finiteOr0(spread * 100 / math.Abs(sum.Median))
	}
	sum.Noisy = sum.SpreadPct > NoisyPct
	return sum
}

// Comparison is the outcome of comparing a baseline A with a candidate B.
type Comparison struct {
	// A and B summarise the two sets of values.
	A, B Summary
	// Ratio is B.Median / A.Median (0 when A.Median is 0); DeltaPct is
	// (Ratio-1)*100 (0 when Ratio cannot be computed).
	Ratio, DeltaPct float64
	// P is the two-sided Mann-Whitney U p-value (benchmath); 1 when it
	// cannot be computed (an empty side, or all values equal). With tied
	// values benchmath's P can depend on which side is A; like benchstat,
	// A (the baseline) is always passed first.
	P float64
	// Alpha is the significance level P is held against.
	Alpha float64
	// Significant is P < Alpha. False when TooFew.
	Significant bool
	// TooFew: with these sample sizes even completely separated samples
	// cannot reach P < Alpha; NeedN is the smallest number of runs per side
	// (equal sizes) that could. NeedN is set whether or not TooFew is.
	TooFew bool
	// NeedN is MinSamplesForAlpha(Alpha).
	NeedN int
}

// Compare compares a (baseline) with b (candidate) at DefaultAlpha.
func Compare(a, b []float64) Comparison {
	return CompareAlpha(a, b, DefaultAlpha)
}

// CompareAlpha compares a (baseline) with b (candidate) at significance
// level alpha. An alpha outside (0, 1] (or NaN) is replaced by DefaultAlpha.
// NaN and ±Inf values are ignored; a and b are not modified.
func CompareAlpha(a, b []float64, alpha float64) Comparison {
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultAlpha
	}
	c := Comparison{A: Summarize(a), B: Summarize(b), Alpha: alpha}
	if r := c.B.Median / c.A.Median; c.A.Median != 0 && isFinite(r) {
		c.Ratio = r
		c.DeltaPct = finiteOr0((r - 1) * 100)
	}
	c.P = uTestP(sample(a, alpha), sample(b, alpha))
	c.TooFew = minP(c.A.N, c.B.N) >= alpha
	c.NeedN = MinSamplesForAlpha(alpha)
	c.Significant = !c.TooFew && c.P < alpha
	return c
}

// Symbol is benchstat's verdict: "~" when not significant (or too few),
// else the signed delta like "+12.34%" / "-3.10%" ("0.00%" when the medians
// are equal, "?" when A's median is 0).
func (c Comparison) Symbol() string {
	if !c.Significant {
		return "~"
	}
	bc := benchmath.Comparison{P: c.P, Alpha: c.Alpha}
	return bc.FormatDelta(c.A.Median, c.B.Median)
}

// GeoMean is the geometric mean of positive values; ok is false when xs is
// empty or has a value <= 0 (such values make a geomean meaningless;
// callers show a blank), NaN or ±Inf.
func GeoMean(xs []float64) (g float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	var sumLog float64
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return 0, false
		}
		sumLog += math.Log(x)
	}
	return math.Exp(sumLog / float64(len(xs))), true
}

// MinSamplesForAlpha returns the smallest n such that two samples of n
// values each can give a two-sided Mann-Whitney p < alpha (all of one
// sample above the other). The p-values come from benchmath's U test
// itself, run on fully separated samples. It returns 0 when alpha <= 0 (or
// NaN), or if no n up to 1000 suffices.
func MinSamplesForAlpha(alpha float64) int {
	if !(alpha > 0) {
		return 0
	}
	for n := 1; n <= maxRuns; n++ {
		if minP(n, n) < alpha {
			return n
		}
	}
	return 0
}

// minP is the smallest two-sided p-value benchmath's U test can give for
// samples of sizes n1 and n2: that of n1 values all below n2 values, with
// no ties. It is 1 when either size is 0.
func minP(n1, n2 int) float64 {
	lo := make([]float64, n1)
	hi := make([]float64, n2)
	for i := range lo {
		lo[i] = float64(i)
	}
	for i := range hi {
		hi[i] = float64(n1 + i)
	}
	return uTestP(sample(lo, DefaultAlpha), sample(hi, DefaultAlpha))
}

// uTestP runs benchmath's two-sided Mann-Whitney U test, clamping the
// p-value into [0, 1] (1 when it is not a number).
func uTestP(s1, s2 *benchmath.Sample) float64 {
	p := benchmath.AssumeNothing.Compare(s1, s2).P
	if math.IsNaN(p) || p > 1 {
		return 1
	}
	return math.Max(p, 0)
}

// sample copies the finite values into a benchmath Sample (which sorts
// them in place, hence the copy).
func sample(values []float64, alpha float64) *benchmath.Sample {
	xs := make([]float64, 0, len(values))
	for _, v := range values {
		if isFinite(v) {
			xs = append(xs, v)
		}
	}
	return benchmath.NewSample(xs, &benchmath.Thresholds{CompareAlpha: alpha})
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func finiteOr0(x float64) float64 {
	if isFinite(x) {
		return x
	}
	return 0
}
