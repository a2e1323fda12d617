package changepoint

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// detector holds one Detect call's series, options and scratch space: no permutation
// allocates.
type detector struct {
	x      []float64
	o      Options
	alpha1 float64  // the first-pass (weak point) level
	rng    rand.PCG // reseeded for every test
	// Q̂ coefficients for a window of up to cst−1 points: for a split of z[0:κ] at τ,
	// Q̂(τ, κ) = cK·G(τ,κ) − cT·G(τ,τ) − cD·G(κ,κ), indexed τ*cst+κ.
	cK, cT, cD []float64
	cst        int
	g          []float64 // the prefix table G of one interval, (L+1)² for L ≤ Window
	diag       []float64 // G(κ, κ)
	win        []float64 // a window's values, permuted in place
	seg        []float64 // a merge segment's centred values, permuted in place
}

// Test kinds, mixed into the seed of each permutation test.
const (
	kindSplit = 1
	kindMerge = 2
)

func newDetector(x []float64, o Options) *detector {
	w := min(o.Window, len(x))
	st := w + 1
	d := &detector{
		x: x, o: o, alpha1: firstPassPValue(o.MaxPValue), cst: st,
		cK: make([]float64, st*st), cT: make([]float64, st*st), cD: make([]float64, st*st),
		g: make([]float64, st*st), diag: make([]float64, st), win: make([]float64, w),
	}
	// With n = τ points before the split and m = κ−τ after it (Matteson & James, α = 1;
	// Otava calculator.py):
	//   Q̂ = 2/(n+m)·Sxy − 2m/((n+m)(n−1))·Sxx − 2n/((n+m)(m−1))·Syy,
	// Sxy the sum of |x−y| between the sides, Sxx and Syy the sums over pairs within each.
	// With G(i,j) = Σ_{p<i,q<j} |z_p−z_q|: Sxx = G(τ,τ)/2, Sxy = G(τ,κ) − G(τ,τ),
	// Syy = (G(κ,κ) − 2G(τ,κ) + G(τ,τ))/2, which gives the three coefficients. A side of
	// one point has no pairs: its term is 0. The 1/(n+m) = 1/κ is in the coefficients.
	for tau := 1; tau < w; tau++ {
		n := float64(tau)
		for kappa := tau + 1; kappa <= w; kappa++ {
			m := float64(kappa - tau)
			a, b := 0.0, 0.0 // m/(n−1), n/(m−1)
			if tau > 1 {
				a = m / (n - 1)
			}
			if kappa-tau > 1 {
				b = n / (m - 1)
			}
			i, k := tau*st+kappa, float64(kappa)
			d.cK[i] = (2 + 2*b) / k
			d.cT[i] = (2 + a + b) / k
			d.cD[i] = b / k
		}
	}
	return d
}

// seed starts the generator of one permutation test, from Options.Seed and what the test
// is about, so the same test always sees the same permutations.
func (d *detector) seed(kind, a, b, iter int) {
	h := mix64(uint64(kind))
	h = mix64(h ^ uint64(a))
	h = mix64(h ^ uint64(b))
	h = mix64(h ^ uint64(iter))
	d.rng.Seed(d.o.Seed, h)
}

// mix64 is splitmix64's finaliser: neighbouring segments get unrelated streams.
func mix64(h uint64) uint64 {
	h += 0x9e3779b97f4a7c15
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// intn returns a uniform integer in [0, n), n > 0 (Lemire's multiply-and-reject).
func (d *detector) intn(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(d.rng.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(d.rng.Uint64(), un)
		}
	}
	return int(hi)
}

// shuffle permutes z uniformly (Fisher–Yates).
func (d *detector) shuffle(z []float64) {
	for i := len(z) - 1; i > 0; i-- {
		j := d.intn(i + 1)
		z[i], z[j] = z[j], z[i]
	}
}

// split is Hunter's split step (Otava analysis.split): E-Divisive on windows of Window
// points, the next window starting half a window later or at the last change point found,
// whichever is further; the union of the points found, in order of index.
func (d *detector) split() []int {
	n, step := len(d.x), max(d.o.Window/2, 1)
	seen := make([]bool, n)
	var points []int
	for start := 0; start < n; {
		end := min(start+d.o.Window, n)
		found := d.window(start, end)
		last := 0
		for _, c := range found {
			last = max(last, c)
			if !seen[c] {
				seen[c] = true
				points = append(points, c)
			}
		}
		start = max(last, start+step)
	}
	slices.Sort(points)
	return points
}

// window runs E-Divisive on x[start:end] (Otava detector.get_change_points): the best split
// of the segments between the points found so far is kept while its permutation p-value is
// at most the first-pass level. It returns the points found, as indexes of x.
func (d *detector) window(start, end int) []int {
	z := d.x[start:end]
	bounds := []int{0, len(z)} // segment boundaries in z, sorted
	var found []int
	for iter := 0; ; iter++ {
		best, bestQ := -1, math.Inf(-1)
		for i := 0; i+1 < len(bounds); i++ {
			a, b := bounds[i], bounds[i+1]
			if b-a < 2 {
				continue
			}
			tau, q := d.maxQ(z[a:b], math.Inf(1))
			if q > bestQ {
				best, bestQ = a+tau, q
			}
		}
		if best < 0 || !d.splitSignificant(z, bounds, bestQ, start, end, iter) {
			return found
		}
		found = append(found, start+best)
		pos, _ := slices.BinarySearch(bounds, best)
		bounds = slices.Insert(bounds, pos, best)
	}
}

// splitSignificant is Matteson & James's permutation test of a window's best split: the
// points of each segment between bounds are shuffled within the segment, and the permuted
// series' best Q̂ over all segments is compared with the observed one, q. The test stops as
// soon as its p-value can no longer be at or below the first-pass level.
func (d *detector) splitSignificant(z []float64, bounds []int, q float64, start, end, iter int) bool {
	w := d.win[:len(z)]
	copy(w, z)
	d.seed(kindSplit, start, end, iter)
	thr := q - 1e-12*math.Abs(q) // permuted values equal to q up to rounding count as ≥
	r := d.o.Permutations
	count := 0
	for range r {
		perm := math.Inf(-1)
		for i := 0; i+1 < len(bounds); i++ {
			s := w[bounds[i]:bounds[i+1]]
			if len(s) < 2 {
				continue
			}
			d.shuffle(s)
			if _, pq := d.maxQ(s, thr); pq > perm {
				perm = pq
				if perm >= thr {
					break // this permutation counts; the other segments cannot undo it
				}
			}
		}
		if perm >= thr {
			count++
			if !significant(float64(1+count)/float64(1+r), d.alpha1) {
				return false
			}
		}
	}
	return true
}

// maxQ returns the split τ (1 ≤ τ < len(z)) of z's best (τ, κ), and Q̂(τ, κ), the largest
// divergence between z[0:τ] and z[τ:κ] over all τ < κ ≤ len(z) (Otava
// PairDistanceCalculator.get_candidate_change_point). The first of equal maxima wins (the
// smallest τ, then κ), as numpy's argmax does. It returns as soon as a Q̂ reaches stop
// (+Inf: never). 2 ≤ len(z) ≤ Window.
func (d *detector) maxQ(z []float64, stop float64) (int, float64) {
	l := len(z)
	st := l + 1
	g := d.g[:st*st]
	// Row t+1 of G is row t plus the prefix sums of the distances from z[t]. Only the
	// upper triangle, G(τ, κ) for κ ≥ τ, is needed; its row t+1 starts from
	// Σ_{p<t} |z_p − z_t| = G(t, t+1) − G(t, t).
	clear(g[:st])
	for t := range l {
		prev, cur := g[t*st:(t+1)*st], g[(t+1)*st:(t+2)*st]
		zt, acc := z[t], prev[t+1]-prev[t]
		for q := t; q < l; q++ {
			acc += math.Abs(zt - z[q])
			cur[q+1] = prev[q+1] + acc
		}
	}
	diag := d.diag[:st]
	for k := range st {
		diag[k] = g[k*st+k]
	}
	cst := d.cst
	bestT, bestQ := 1, math.Inf(-1)
	for tau := 1; tau < l; tau++ {
		// κ from τ+1 to l: the slices have equal lengths, so the loop has no bounds checks.
		gtt := g[tau*st+tau]
		row := g[tau*st+tau+1 : tau*st+st]
		ci := tau*cst + tau + 1
		cK, cT, cD := d.cK[ci:ci+len(row)], d.cT[ci:ci+len(row)], d.cD[ci:ci+len(row)]
		dg := diag[tau+1 : st]
		dg = dg[:len(row)]
		rowMax := math.Inf(-1)
		for j, gtk := range row {
			q := cK[j]*gtk - cT[j]*gtt - cD[j]*dg[j]
			if q > rowMax {
				rowMax = q
			}
		}
		if rowMax > bestQ {
			bestT, bestQ = tau, rowMax
			if bestQ >= stop {
				break
			}
		}
	}
	return bestT, bestQ
}
