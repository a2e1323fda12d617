package changepoint

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

// level is a run of n points around mean mu with standard deviation sd.
type level struct {
	n      int
	mu, sd float64
}

// series builds levels one after the other with noise from seed. The noise is the sum of
// 12 uniforms minus 6 (Irwin–Hall: mean 0, variance 1, nearly normal) drawn from PCG, whose
// output the math/rand/v2 documentation fixes, so every test series is the same on every
// platform and Go version.
func series(seed uint64, levels ...level) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var xs []float64
	for _, l := range levels {
		for range l.n {
			s := 0.0
			for range 12 {
				s += r.Float64()
			}
			xs = append(xs, l.mu+l.sd*(s-6))
		}
	}
	return xs
}

func approx(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// wantPoint is what a test expects of one change point: its index within ±slack, its
// means within ±tolMean.
type wantPoint struct {
	index, slack           int
	before, after, tolMean float64
}

func checkPoints(t *testing.T, got []Point, want []wantPoint, o Options) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("found %d change points, want %d: %+v", len(got), len(want), got)
	}
	if !slices.IsSortedFunc(got, func(a, b Point) int { return a.Index - b.Index }) {
		t.Errorf("points not in order of index: %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.Index < w.index-w.slack || g.Index > w.index+w.slack {
			t.Errorf("point %d at index %d, want %d ±%d", i, g.Index, w.index, w.slack)
		}
		if !approx(g.MeanBefore, w.before, w.tolMean) || !approx(g.MeanAfter, w.after, w.tolMean) {
			t.Errorf("point %d: means %.3f → %.3f, want %.3f → %.3f (±%g)", i, g.MeanBefore, g.MeanAfter, w.before, w.after, w.tolMean)
		}
		if pct := (g.MeanAfter - g.MeanBefore) / math.Abs(g.MeanBefore) * 100; !approx(g.ChangePct, pct, 1e-9) {
			t.Errorf("point %d: ChangePct %v, want %v", i, g.ChangePct, pct)
		}
		if !(g.PValue > 0) || !significant(g.PValue, o.MaxPValue) {
			t.Errorf("point %d: p-value %v, want in (0, %v]", i, g.PValue, o.MaxPValue)
		}
	}
}

func TestDetectSteps(t *testing.T) {
	def := DefaultOptions()
	tests := []struct {
		name string
		x    []float64
		o    Options
		want []wantPoint
	}{
		{"down 30% at 40", series(1, level{40, 100, 2}, level{40, 70, 2}), def,
			[]wantPoint{{40, 1, 100, 70, 1}}},
		{"up 30% at 40", series(2, level{40, 70, 2}, level{40, 100, 2}), def,
			[]wantPoint{{40, 1, 70, 100, 1}}},
		{"down 10% at 137 of 300", series(3, level{137, 1000, 10}, level{163, 900, 10}), def,
			[]wantPoint{{137, 1, 1000, 900, 4}}},
		{"step in the last 10 of 200", series(4, level{190, 50, 1}, level{10, 60, 1}), def,
			[]wantPoint{{190, 1, 50, 60, 0.5}}},
		{"window larger than the series", series(5, level{30, 100, 2}, level{30, 80, 2}),
			Options{Window: 500, MaxPValue: 0.001, Permutations: 999},
			[]wantPoint{{30, 1, 100, 80, 1}}},
		{"two changes", series(6, level{60, 100, 3}, level{60, 80, 3}, level{60, 110, 3}), def,
			[]wantPoint{{60, 1, 100, 80, 1.5}, {120, 1, 80, 110, 1.5}}},
		{"two changes within one window", series(7, level{25, 100, 1}, level{20, 120, 1}, level{25, 100, 1}), def,
			[]wantPoint{{25, 1, 100, 120, 1}, {45, 1, 120, 100, 1}}},
		{"three changes, other seed", series(8, level{100, 10, 0.2}, level{100, 12, 0.2}, level{100, 11, 0.2}, level{100, 8, 0.2}),
			Options{Window: 50, MaxPValue: 0.001, Permutations: 999, Seed: 42},
			[]wantPoint{{100, 1, 10, 12, 0.1}, {200, 1, 12, 11, 0.1}, {300, 1, 11, 8, 0.1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.x, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			checkPoints(t, got, tt.want, tt.o)
		})
	}
}

// TestNoiseFalsePositives runs Detect on many series of i.i.d. noise, each with its own
// seed, and counts the series in which any change point is reported. Each level's count
// must be consistent with a rate at or below p (a one-sided binomial test at 0.001), and
// over all levels there must be no more than the levels allow (Σ p·trials). A merge step
// with a fixed-split test instead (Otava's t-test is one) reports points in 9–46% of
// such series at p = 0.05 for 30–300 points: it would fail this test.
func TestNoiseFalsePositives(t *testing.T) {
	tests := []struct {
		p      float64
		perms  int
		n      int
		trials int
	}{
		{0.05, 199, 30, 300},
		{0.05, 199, 100, 300},
		{0.05, 199, 300, 200},
		{0.01, 199, 100, 300},
		{0.001, 999, 200, 100},
	}
	found, allowed := 0, 0.0
	for _, tt := range tests {
		t.Run(fmt.Sprintf("p=%v/n=%d", tt.p, tt.n), func(t *testing.T) {
			o := Options{Window: 50, MaxPValue: tt.p, Permutations: tt.perms}
			k := 0
			for s := range tt.trials {
				o.Seed = uint64(s)
				pts, err := Detect(series(uint64(1000+s), level{tt.n, 100, 2}), o)
				if err != nil {
					t.Fatal(err)
				}
				if len(pts) > 0 {
					k++
				}
			}
			found += k
			allowed += tt.p * float64(tt.trials)
			tail := binomialTail(tt.trials, k, tt.p)
			t.Logf("%d of %d noise series with a change point (%.3f at p = %v; P(≥ %d) = %.3g)",
				k, tt.trials, float64(k)/float64(tt.trials), tt.p, k, tail)
			if tail < 0.001 {
				t.Errorf("%d false positives in %d series: P = %.3g if the rate were p = %v", k, tt.trials, tail, tt.p)
			}
		})
	}
	if float64(found) > allowed {
		t.Errorf("%d noise series with a change point in all, more than the %.1f the levels allow", found, allowed)
	}
}

// binomialTail is P(X ≥ k) for X ~ Binomial(n, p).
func binomialTail(n, k int, p float64) float64 {
	sum := 0.0
	for i := k; i <= n; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lc - li - lni + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return sum
}

func TestNoPoints(t *testing.T) {
	def := DefaultOptions()
	step := func(n int) []float64 { // a 50% drop half way: too few points to be significant
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100
			if i >= n/2 {
				xs[i] = 50
			}
		}
		return xs
	}
	tests := []struct {
		name string
		x    []float64
	}{
		{"nil", nil},
		{"empty", []float64{}},
		{"one point", []float64{1}},
		{"two points", []float64{100, 50}},
		{"three points", step(3)},
		{"six points with a step", step(6)},
		{"constant", slices.Repeat([]float64{5}, 200)},
		{"zeros", make([]float64, 120)},
		{"constant but for one outlier", append(slices.Repeat([]float64{5}, 100), 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.x, def)
			if err != nil || got != nil {
				t.Errorf("Detect = %+v, %v; want nil, nil", got, err)
			}
		})
	}
	if n := def.MinPoints(); n != 7 {
		t.Errorf("MinPoints at p = 0.001 is %d, want 7 (6! = 720 < 1000 ≤ 7!)", n)
	}
	if n := (Options{MaxPValue: 0.05}).MinPoints(); n != 4 {
		t.Errorf("MinPoints at p = 0.05 is %d, want 4", n)
	}
}

func TestMinMagnitude(t *testing.T) {
	// A 5% drop at 100, a 30% rise at 200.
	x := series(9, level{100, 100, 0.5}, level{100, 95, 0.5}, level{100, 123.5, 0.5})
	tests := []struct {
		min  float64
		want []wantPoint
	}{
		{0, []wantPoint{{100, 1, 100, 95, 0.3}, {200, 1, 95, 123.5, 0.3}}},
		{0.049, []wantPoint{{100, 1, 100, 95, 0.3}, {200, 1, 95, 123.5, 0.3}}},
		// The 5% point is dropped: the 30% one is measured from the start.
		{0.06, []wantPoint{{200, 1, 97.5, 123.5, 0.3}}},
		{0.25, []wantPoint{{200, 1, 97.5, 123.5, 0.3}}},
		{0.3, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.min), func(t *testing.T) {
			o := DefaultOptions()
			o.MinMagnitude = tt.min
			got, err := Detect(x, o)
			if err != nil {
				t.Fatal(err)
			}
			checkPoints(t, got, tt.want, o)
			for _, p := range got {
				if m := magnitude(p.MeanBefore, p.MeanAfter); m < tt.min {
					t.Errorf("point at %d has magnitude %v, below MinMagnitude %v", p.Index, m, tt.min)
				}
			}
		})
	}
}

func TestFromZero(t *testing.T) {
	x := make([]float64, 80)
	for i := 40; i < 80; i++ {
		x[i] = 10
	}
	got, err := Detect(x, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Index != 40 || got[0].MeanBefore != 0 || got[0].MeanAfter != 10 || !math.IsInf(got[0].ChangePct, 1) {
		t.Errorf("Detect(0×40, 10×40) = %+v, want one point at 40, 0 → 10, ChangePct +Inf", got)
	}
}

func TestDeterministic(t *testing.T) {
	x := series(10, level{70, 100, 4}, level{70, 92, 4}, level{70, 100, 4})
	o := DefaultOptions()
	first, err := Detect(x, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := Detect(x, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first, again) {
			t.Fatalf("Detect differs between calls: %+v then %+v", first, again)
		}
	}
}

func TestErrors(t *testing.T) {
	def := DefaultOptions()
	tests := []struct {
		name string
		x    []float64
		o    Options
		is   error
		msgs []string
	}{
		{"NaN", []float64{1, 2, math.NaN(), 4}, def, ErrValue, []string{"point 2 of 4 is NaN"}},
		{"+Inf", []float64{math.Inf(1)}, def, ErrValue, []string{"point 0 of 1 is +Inf"}},
		{"window", nil, Options{Window: 1, MaxPValue: 0.01, Permutations: 99}, ErrOptions, []string{"Window is 1"}},
		{"p zero", nil, Options{Window: 50, MaxPValue: 0, Permutations: 999}, ErrOptions, []string{"MaxPValue is 0"}},
		{"p NaN", nil, Options{Window: 50, MaxPValue: math.NaN(), Permutations: 999}, ErrOptions, []string{"MaxPValue is NaN"}},
		{"p above 1", nil, Options{Window: 50, MaxPValue: 1.5, Permutations: 999}, ErrOptions, []string{"MaxPValue is 1.5"}},
		{"too few permutations", nil, Options{Window: 50, MaxPValue: 0.001, Permutations: 100}, ErrOptions,
			[]string{"Permutations is 100", "need at least 999"}},
		{"no permutations", nil, Options{Window: 50, MaxPValue: 0.001}, ErrOptions, []string{"Permutations is 0"}},
		{"magnitude", nil, Options{Window: 50, MaxPValue: 0.001, Permutations: 999, MinMagnitude: -0.1}, ErrOptions,
			[]string{"MinMagnitude is -0.1"}},
		{"every problem at once", nil, Options{MinMagnitude: math.NaN()}, ErrOptions,
			[]string{"Window is 0", "MaxPValue is 0", "Permutations is 0", "MinMagnitude is NaN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.x, tt.o)
			if err == nil || got != nil {
				t.Fatalf("Detect = %+v, %v; want an error", got, err)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %q", err, tt.is)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
		})
	}
	if err := def.Validate(); err != nil {
		t.Errorf("DefaultOptions are invalid: %v", err)
	}
}

// TestMaxQ checks the incremental Q̂ against its definition (Matteson & James, α = 1)
// computed term by term.
func TestMaxQ(t *testing.T) {
	naive := func(z []float64) (int, float64) {
		bestT, bestQ := 1, math.Inf(-1)
		for tau := 1; tau < len(z); tau++ {
			for kappa := tau + 1; kappa <= len(z); kappa++ {
				x, y := z[:tau], z[tau:kappa]
				n, m := float64(len(x)), float64(len(y))
				between, withinX, withinY := 0.0, 0.0, 0.0
				for _, a := range x {
					for _, b := range y {
						between += math.Abs(a - b)
					}
				}
				for i := range x {
					for j := i + 1; j < len(x); j++ {
						withinX += math.Abs(x[i] - x[j])
					}
				}
				for i := range y {
					for j := i + 1; j < len(y); j++ {
						withinY += math.Abs(y[i] - y[j])
					}
				}
				e := 2 / (n * m) * between
				if len(x) > 1 {
					e -= withinX / (n * (n - 1) / 2)
				}
				if len(y) > 1 {
					e -= withinY / (m * (m - 1) / 2)
				}
				if q := n * m / (n + m) * e; q > bestQ {
					bestT, bestQ = tau, q
				}
			}
		}
		return bestT, bestQ
	}
	r := rand.New(rand.NewPCG(11, 12))
	d := newDetector(make([]float64, 50), DefaultOptions())
	for _, l := range []int{2, 3, 4, 7, 20, 50} {
		for range 20 {
			z := make([]float64, l)
			shift := r.IntN(l)
			for i := range z {
				z[i] = r.NormFloat64()
				if i >= shift {
					z[i] += 3
				}
			}
			gotT, gotQ := d.maxQ(z, math.Inf(1))
			wantT, wantQ := naive(z)
			if gotT != wantT || !approx(gotQ, wantQ, 1e-9*math.Max(1, math.Abs(wantQ))) {
				t.Errorf("maxQ(%v) = τ %d, Q̂ %v; want τ %d, Q̂ %v", z, gotT, gotQ, wantT, wantQ)
			}
		}
	}
}

// TestGolden is Detect's output on a fixed series of 400 points with four changes of level
// and one of variance only, with the defaults and with a magnitude filter.
func TestGolden(t *testing.T) {
	x := series(2026,
		level{80, 1200, 25},  // steady
		level{50, 1000, 25},  // −17%
		level{70, 1010, 60},  // noisier, same level: the merge tests means, so no point
		level{60, 1300, 25},  // +29%
		level{40, 1260, 25},  // −3%: found, dropped by MinMagnitude 0.1
		level{100, 1500, 30}, // +19%
	)
	var buf bytes.Buffer
	for _, o := range []Options{DefaultOptions(), {Window: 30, MaxPValue: 0.01, Permutations: 199, MinMagnitude: 0.1, Seed: 7}} {
		pts, err := Detect(x, o)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "options: window %d, p ≤ %v, %d permutations, magnitude ≥ %v, seed %d\n",
			o.Window, o.MaxPValue, o.Permutations, o.MinMagnitude, o.Seed)
		fmt.Fprintf(&buf, "%5s %12s %12s %9s %8s\n", "index", "before", "after", "change", "p")
		for _, p := range pts {
			fmt.Fprintf(&buf, "%5d %12.4f %12.4f %+8.3f%% %8.4g\n", p.Index, p.MeanBefore, p.MeanAfter, p.ChangePct, p.PValue)
		}
		buf.WriteString("\n")
	}
	golden(t, "detect.golden", buf.Bytes())
}
