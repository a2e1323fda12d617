package changepoint

import (
	"math"
	"slices"
)

// candidate is a change point during the merge, with the means of its two segments (from
// its left neighbour, or the start, to the point; from the point to its right neighbour, or
// the end) and the p-value of its test.
type candidate struct {
	index         int
	before, after float64
	p             float64
}

func (c candidate) magnitude() float64 { return magnitude(c.before, c.after) }

// merge is Hunter's merge step (Otava analysis.merge): while some point's p-value is above
// MaxPValue, the point with the largest one is removed; when all are significant, the
// point with the smallest magnitude is removed if it is below MinMagnitude. A removal joins
// two segments, so both neighbours of the removed point are tested again. points are the
// weak change points, sorted and distinct, each in [1, len(x)).
func (d *detector) merge(points []int) []Point {
	d.seg = make([]float64, len(d.x))
	cs := make([]candidate, len(points))
	for i, c := range points {
		cs[i].index = c
	}
	for i := range cs {
		d.evaluate(cs, i)
	}
	for len(cs) > 0 {
		w := 0
		for i := range cs {
			if cs[i].p > cs[w].p {
				w = i
			}
		}
		if significant(cs[w].p, d.o.MaxPValue) {
			w = 0
			for i := range cs {
				if cs[i].magnitude() < cs[w].magnitude() {
					w = i
				}
			}
			if cs[w].magnitude() >= d.o.MinMagnitude {
				break
			}
		}
		cs = slices.Delete(cs, w, w+1)
		if w > 0 {
			d.evaluate(cs, w-1)
		}
		if w < len(cs) {
			d.evaluate(cs, w)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	out := make([]Point, len(cs))
	for i, c := range cs {
		out[i] = Point{Index: c.index, MeanBefore: c.before, MeanAfter: c.after,
			ChangePct: changePct(c.before, c.after), PValue: c.p}
	}
	return out
}

// evaluate computes cs[i]'s means and p-value against its current neighbours.
func (d *detector) evaluate(cs []candidate, i int) {
	a, b, c := 0, len(d.x), cs[i].index
	if i > 0 {
		a = cs[i-1].index
	}
	if i+1 < len(cs) {
		b = cs[i+1].index
	}
	cs[i].before, cs[i].after = mean(d.x[a:c]), mean(d.x[c:b])
	cs[i].p = d.mergePValue(a, b, c)
}

// mergePValue tests the change point c of the segment x[a:b] (a < c < b): the observed
// statistic is |Σ_{a≤i<c} (x_i − x̄)|, x̄ the segment's mean, i.e. the difference of the
// two sides' means times n·m/(n+m); each permutation shuffles the segment and takes the
// largest such sum over every split of it (a CUSUM), so that choosing c as the best split
// is part of the null distribution. The p-value is (1 + #{permuted ≥ observed}) /
// (1 + permutations). The test stops as soon as the p-value can no longer be at or below
// MaxPValue and then returns the estimate (1 + count) / (1 + permutations so far), which
// is above MaxPValue.
func (d *detector) mergePValue(a, b, c int) float64 {
	y := d.seg[:b-a]
	m := mean(d.x[a:b])
	for i, v := range d.x[a:b] {
		y[i] = v - m
	}
	obs := 0.0
	for _, v := range y[:c-a] {
		obs += v
	}
	obs = math.Abs(obs)
	thr := obs - 1e-12*obs // permuted sums equal to obs up to rounding count as ≥

	d.seed(kindMerge, a, b, 0)
	r, last := d.o.Permutations, len(y)-1
	count := 0
	for done := 1; done <= r; done++ {
		// Fisher–Yates from the front, summing as the prefix is drawn; a permutation
		// counts as soon as a prefix reaches obs, and the next one shuffles the whole
		// segment again, so stopping part-way leaves the permutations uniform.
		s := 0.0
		for i := range last {
			j := i + d.intn(len(y)-i)
			y[i], y[j] = y[j], y[i]
			s += y[i]
			if math.Abs(s) >= thr {
				count++
				break
			}
		}
		if p := float64(1+count) / float64(1+done); !significant(float64(1+count)/float64(1+r), d.o.MaxPValue) {
			return p
		}
	}
	return float64(1+count) / float64(1+r)
}
