// Package changepoint finds the points where a series of measurements changes level, as
// Apache Otava (formerly Hunter) does: E-Divisive means in sliding windows finds "weak"
// change points at a relaxed significance level, then the weak points are merged away
// until every remaining point is significant at the requested level and large enough.
//
// Sources:
//
//   - D. S. Matteson and N. A. James, "A Nonparametric Approach for Multiple Change Point
//     Analysis of Multivariate Data", Journal of the American Statistical Association
//     109(505):334–345, 2014, doi:10.1080/01621459.2013.849605, arXiv:1306.4933. The
//     divergence Q̂ (energy distance, α = 1), its maximisation over (τ, κ), the divisive
//     (bisection) search and the permutation test that permutes the points within each
//     segment between the change points found so far.
//   - M. Fleming, P. Kołaczkowski, I. Kumar, S. Das, S. McCarthy, P. Pattabhiraman and
//     H. Ingo, "Hunter: Using Change Point Detection to Hunt for Performance Regressions",
//     ICPE 2023, doi:10.1145/3578244.3583719, arXiv:2301.03034. Fixed-size overlapping
//     windows, weak change points at a relaxed level, and the merge that removes the
//     weakest point and re-tests its neighbours.
//   - Apache Otava, otava/analysis.py (compute_change_points, split, merge) and
//     otava/change_point_divisive/ (calculator.py: the Q̂ formula; detector.py,
//     significance_test.py: E-Divisive with a permutation test), read at commit
//     1ceb1537a49d516cf6cef9a79bea6926002082f8 (2026-04-22); datastax-labs/hunter
//     hunter/analysis.py at 5c0b480815a281322ebbbf157f70fc785212a892 has the same split
//     and merge on mongodb/signal-processing-algorithms' E-Divisive.
//
// Otava's defaults, which DefaultOptions returns (otava/series.py AnalysisOptions and the
// CLI flags in otava/main.py; Hunter's are the same): window_len = 50 (--window),
// max_pvalue = 0.001 (-P, --p-value), min_magnitude = 0.0 (-M, --magnitude). The weak
// points are found at 10 × max_pvalue when max_pvalue < 0.05, 2 × max_pvalue when it is
// < 0.5, else max_pvalue (compute_change_points' first_pass_pvalue). Otava's own
// permutation E-Divisive (--orig-edivisive) uses 100 permutations, ecp's e.divisive (the
// paper's R package) 199; here the p-value is (1 + #{permuted ≥ observed}) / (1 +
// permutations), a valid p-value for any number of permutations, so reaching 0.001 takes
// 999 permutations, the default.
//
// Where this differs from Otava, and why:
//
//   - Significance is a permutation test throughout, never Student's t-test. Otava's
//     windowed algorithm uses the E-Divisive Q̂ only to place a candidate and a two-sample
//     t-test on the means for every significance decision (split and merge; its permutation
//     test is only in the unwindowed --orig-edivisive mode). Here the split step uses
//     Matteson & James's permutation test on Q̂ inside each window, and the merge step a
//     permutation test on the means (below).
//   - The merge step's test accounts for the point having been chosen. A point c between
//     its neighbours a and b is tested with the statistic |Σ_{a≤i<c} (x_i − x̄)|, x̄ the
//     mean of x[a:b] (the mean shift weighted by n·m/(n+m), the same weight as Q̂); the
//     permutations shuffle x[a:b] and take the largest |partial sum| over every split of
//     the segment. A fixed-split test of a point that was chosen because it splits best
//     (which Otava's t-test is) finds changes in pure noise far more often than its level:
//     the same permutation test without the maximum over splits reported points in 9–46%
//     of i.i.d. series of 30–300 points at p = 0.05. This one keeps a series without any
//     change to a false-positive rate at or below MaxPValue (TestNoiseFalsePositives),
//     at almost no cost in power (the windows' test is what limits it).
//   - Otava's merge recomputes the points at the removed point's position and the one
//     after it (which is not a neighbour); here both neighbours of the removed point are
//     recomputed.
//   - MinMagnitude is |after − before| / |before| as Options documents it; Otava compares
//     max(|after/before − 1|, |before/after − 1|).
//
// Every permutation test draws from a PCG generator (math/rand/v2) seeded with
// Options.Seed and the test's segment, so Detect is deterministic, and a given segment is
// always tested with the same permutations whatever was tested before.
package changepoint

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Options of the detection; DefaultOptions returns Otava's defaults.
type Options struct {
	Window       int     // points per sliding window (Otava window_len)
	MaxPValue    float64 // a change point is kept when its permutation p-value is ≤ this
	Permutations int     // permutations per significance test
	MinMagnitude float64 // relative change |after-before|/|before| below which a point is dropped (0 = keep all)
	Seed         uint64
}

// DefaultOptions returns Otava's defaults (window_len 50, max_pvalue 0.001, min_magnitude
// 0) with 999 permutations, the fewest that can give a p-value of 0.001, and seed 0.
func DefaultOptions() Options {
	return Options{Window: 50, MaxPValue: 0.001, Permutations: 999, MinMagnitude: 0, Seed: 0}
}

// Point is one change point: the series changes at Index (the first point of the new level).
type Point struct {
	Index      int
	MeanBefore float64 // mean of the points since the previous change point (or the start)
	MeanAfter  float64 // mean of the points up to the next change point (or the end)
	ChangePct  float64 // (MeanAfter-MeanBefore)/|MeanBefore|*100
	PValue     float64
}

// ErrOptions is wrapped by the errors of invalid Options.
var ErrOptions = errors.New("invalid change-point options")

// ErrValue is wrapped by the error of a series value that is NaN or infinite.
var ErrValue = errors.New("not a finite number")

// Validate reports every problem of o at once, each wrapping ErrOptions.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("changepoint: %w: "+format, append([]any{ErrOptions}, args...)...))
	}
	if o.Window < 2 {
		bad("Window is %d, must be at least 2", o.Window)
	}
	pOK := o.MaxPValue > 0 && o.MaxPValue <= 1 // false for NaN
	if !pOK {
		bad("MaxPValue is %v, must be in (0, 1]", o.MaxPValue)
	}
	if o.Permutations < 1 {
		bad("Permutations is %d, must be at least 1", o.Permutations)
	} else if pOK && !significant(1/float64(o.Permutations+1), o.MaxPValue) {
		bad("Permutations is %d: the smallest p-value it can give, 1/%d, is above MaxPValue %v (need at least %d)",
			o.Permutations, o.Permutations+1, o.MaxPValue, int(math.Ceil(1/o.MaxPValue))-1)
	}
	if !(o.MinMagnitude >= 0) || math.IsInf(o.MinMagnitude, 1) {
		bad("MinMagnitude is %v, must be a finite number ≥ 0", o.MinMagnitude)
	}
	return errors.Join(errs...)
}

// MinPoints is the length below which Detect finds no change point without testing: a
// series of fewer points has fewer than 1/MaxPValue orderings, so no permutation test
// over it can reach MaxPValue (7 points at 0.001). It is a necessary condition, not a
// sufficient one. o must be valid.
func (o Options) MinPoints() int {
	if !(o.MaxPValue > 0) {
		return math.MaxInt
	}
	orderings := 1.0
	n := 1
	for orderings*o.MaxPValue < 1 {
		n++
		orderings *= float64(n)
	}
	return max(n, 2)
}

// Detect finds the change points of series (in order of Index). NaN values are an error.
//
// Infinite values are an error too. A series shorter than o.MinPoints() has no change
// point (nil, no error); so has a constant one. Detect returns nil when it finds none.
// ChangePct is ±Inf when MeanBefore is 0 and MeanAfter is not (0 when both are), and such
// a point passes any MinMagnitude. The cost grows with the square of the window: each
// permutation of a window is O(Window²), and Detect holds 4·(Window+1)² float64s (the
// window is at most the series' length).
func Detect(series []float64, o Options) ([]Point, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	for i, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("changepoint: point %d of %d is %v: %w", i, len(series), v, ErrValue)
		}
	}
	if len(series) < o.MinPoints() {
		return nil, nil
	}
	d := newDetector(series, o)
	weak := d.split()
	if len(weak) == 0 {
		return nil, nil
	}
	return d.merge(weak), nil
}

// firstPassPValue is the relaxed level at which the windows find weak change points:
// Otava's compute_change_points (otava/analysis.py).
func firstPassPValue(p float64) float64 {
	switch {
	case p < 0.05:
		return p * 10
	case p < 0.5:
		return p * 2
	}
	return p
}

// significant reports whether p is at or below alpha, allowing for the rounding of
// (1+k)/(1+R) against a threshold such as 0.001 that is not exact in binary.
func significant(p, alpha float64) bool {
	return p <= alpha*(1+1e-9)
}

// magnitude is |after-before|/|before|: +Inf when only before is 0, 0 when both are.
func magnitude(before, after float64) float64 {
	if before == 0 {
		if after == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(after-before) / math.Abs(before)
}

// changePct is (after-before)/|before|*100: ±Inf when only before is 0, 0 when both are.
func changePct(before, after float64) float64 {
	if before == 0 {
		if after == 0 {
			return 0
		}
		return math.Copysign(math.Inf(1), after)
	}
	return (after - before) / math.Abs(before) * 100
}

// mean is the arithmetic mean of xs (not empty).
func mean(xs []float64) float64 { return stat.Mean(xs, nil) }
