package sysbench

import (
	"math"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/dbperf/dbperf/internal/workload"
)

// The zipfian generator's frequencies match P(k) = k^−e / Σ j^−e over [1, n]: for each
// case, every value's observed share is within 4.5 standard errors of its probability,
// and Pearson's χ² over all n values stays below a bound that a correct generator
// exceeds with probability well under 10⁻⁶ (the draws are seeded, so the test is
// deterministic).
func TestZipfDistribution(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		e     float64
		draws int
	}{
		{10, 0.8, 200_000},    // sysbench's default exponent (update-zipf)
		{1000, 0.8, 400_000},  // a table of 1000 rows
		{10, 0, 100_000},      // exponent 0: uniform
		{50, 1, 200_000},      // the limit case of the hat function's integral
		{20, 1.5, 200_000},    // above 1, where math/rand's Zipf would also work
		{1, 0.8, 1000},        // one row: always 1
		{100_000, 0.8, 10000}, // large n: only the range is checked per value
	} {
		z := newZipf(tc.n, tc.e)
		rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
		counts := make([]int, tc.n+1)
		for range tc.draws {
			k := z.next(rng)
			if k < 1 || k > tc.n {
				t.Fatalf("n=%d e=%v: drew %d, outside [1, %d]", tc.n, tc.e, k, tc.n)
			}
			counts[k]++
		}
		if tc.n > 1000 {
			if counts[1] <= counts[2] || counts[2] <= counts[100] {
				t.Errorf("n=%d e=%v: 1, 2, 100 drawn %d, %d, %d times: not decreasing", tc.n, tc.e, counts[1], counts[2], counts[100])
			}
			continue
		}
		var norm float64
		for k := int64(1); k <= tc.n; k++ {
			norm += math.Pow(float64(k), -tc.e)
		}
		var chi2 float64
		for k := int64(1); k <= tc.n; k++ {
			p := math.Pow(float64(k), -tc.e) / norm
			want := p * float64(tc.draws)
			got := float64(counts[k])
			chi2 += (got - want) * (got - want) / want
			if sd := math.Sqrt(want * (1 - p)); math.Abs(got-want) > 4.5*sd+1e-9 {
				t.Errorf("n=%d e=%v: %d drawn %.0f times, want %.0f ± %.0f", tc.n, tc.e, k, got, want, sd)
			}
		}
		// χ² with n−1 degrees of freedom: mean n−1, sd √(2(n−1)); 6 sd above is far in
		// the tail.
		if df := float64(tc.n - 1); df > 0 && chi2 > df+6*math.Sqrt(2*df) {
			t.Errorf("n=%d e=%v: χ² = %.1f with %v degrees of freedom", tc.n, tc.e, chi2, df)
		}
	}
}

// c and pad have §3.1's shape: 10 (5) groups of 11 digits joined by '-', 119 (59)
// characters, the same for the same seed, and different values draw different digits.
func TestColumnValues(t *testing.T) {
	cShape := regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){9}$`)
	padShape := regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){4}$`)
	a, b := workload.Stream(1, "x"), workload.Stream(1, "x")
	seen := map[string]bool{}
	digits := [10]int{}
	for range 1000 {
		c := string(appendDigits(nil, a, cGroups))
		pad := string(appendDigits(nil, a, padGroups))
		if len(c) != cLen || !cShape.MatchString(c) || len(pad) != padLen || !padShape.MatchString(pad) {
			t.Fatalf("c %q pad %q", c, pad)
		}
		if c2, pad2 := string(appendDigits(nil, b, cGroups)), string(appendDigits(nil, b, padGroups)); c2 != c || pad2 != pad {
			t.Fatal("the same stream gave different values")
		}
		if seen[c] {
			t.Fatalf("c %q drawn twice", c)
		}
		seen[c] = true
		for _, ch := range c {
			if ch != '-' {
				digits[ch-'0']++
			}
		}
	}
	for d, n := range digits {
		if n < 10_000 || n > 12_000 { // 110,000 digits: 11,000 each
			t.Errorf("digit %d drawn %d times of 110000", d, n)
		}
	}
	buf := make([]byte, 0, 128)
	if got := testing.AllocsPerRun(100, func() { buf = appendDigits(buf[:0], a, cGroups) }); got != 0 {
		t.Errorf("appendDigits allocates %v times", got)
	}
}
