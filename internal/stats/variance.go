package stats

// Variance components of a comparison's ratio: where its noise comes from, and how small
// the noise of the seconds measured alone would have let it be.
//
// A comparison's ratio (candidate ÷ base) is estimated from units: a paired design's
// blocks (interleaved, duet), each a few slices of a step on both points, or a sequential
// design's runs. On logs, block b's slice s has the ratio
//
//	d_bs = μ + γ_c(b) + β_b + ε_bs,
//
// with γ the effect of the block's CPU assignment c(b) (a duet: which point ran on which
// CPU), β_b the block's own deviation (its freshly loaded tables, its minutes of the
// machine) and ε_bs the slice's deviation within its block, itself white second-to-second
// noise (the mean of T one-second rates, each with variance σ²_sec) plus any drift within
// the block. The ratio's estimate averages the blocks, so its variance is
//
//	Var(d̂) = (σ²_γ + σ²_β + (σ²_white + σ²_drift)/S) / n
//
// for n blocks of S slices, σ²_white = σ²_sec,a/T + σ²_sec,b/T per slice. Decompose
// estimates each term by the method of moments of the one-way random-effects model (S. R.
// Searle, G. Casella, C. E. McCulloch, Variance Components, Wiley 1992, §3.5–3.6): the
// pooled variance of the slices around their block's mean is σ²_white + σ²_drift; the
// variance of the blocks' means around their assignment's mean, less that over S, is σ²_β;
// the variance the assignments' means add is σ²_γ; σ²_white comes from the seconds. An
// estimate below 0 is 0 (the truncated moment estimator, Searle et al. §4.4).
//
// A sweep that renews its servers (--instances) adds η_i(b), the instance's: the cost the
// pair of servers block b ran on differs by for their whole life. Its blocks are nested in
// instances; the ratio's estimate averages the I instances' means, so
//
//	Var(d̂) = σ²_η/I + (σ²_β + (σ²_white + σ²_drift)/S)/n,
//
// σ²_β is estimated from the blocks within an instance, σ²_η from the instances' means
// less that over the blocks per instance, and the MDE has the instances' I − 1 degrees of
// freedom. With one server per point η is the same in every block: in none of the
// components, and in no interval.
//
// A sequential design's units are runs, unpaired: each side's runs vary by σ²_run + σ²_white
// around their mean, and Var(d̂) = Σ_side (σ²_run + σ²_white)/n_side.
//
// The white-noise limit is the smallest change (MDEPct's rule: 80% power, two-sided 1 −
// Confidence) the second-to-second noise alone would allow for the seconds measured: the
// standard error of the ratio if every second were an independent sample,
// √(σ²_sec,a/N_a + σ²_sec,b/N_b) for N seconds measured per point. Where the slices'
// (runs') means vary less than independent seconds would make them, the seconds cancel
// each other in part (secondsAtSlices), and σ²_sec is scaled down to what shows at the
// slices' scale. No order of trials beats it; only more measuring time does.
//
// Why by hand: gonum/stat has no variance-component (random-effects ANOVA) estimators and
// x/perf/benchmath none either; the moment estimators are a few sums, and so is the
// blocks' lag-1 autocorrelation (gonum/stat has none).

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Source names a component of a ratio's variance.
type Source string

// The sources, from the shortest time scale to the longest.
const (
	SourceSeconds Source = "seconds" // white second-to-second noise: only more measuring time shrinks it
	SourceSlices  Source = "slices"  // drift between a block's slices beyond the white noise
	SourceBlocks  Source = "blocks"  // between blocks (or runs): their tables, their minutes
	// SourceInstances is between the points' server instances (a sweep's --instances): the
	// cost two servers of one configuration differ by for their whole life.
	SourceInstances Source = "instances"
	SourceCPU       Source = "cpu" // a duet's CPU assignment
)

// VarianceBlock is one block of a paired comparison.
type VarianceBlock struct {
	// LogRatios are the block's slices' ln(candidate ÷ base), one per slice both points ran.
	LogRatios []float64
	// Factor is the block's CPU assignment ("" when the design has none): blocks with the
	// same factor ran each point on the same CPUs.
	Factor string
	// Instance is the servers the block ran on ("" when the design renews none): blocks
	// with the same instance ran on the same pair of servers (a sweep's --instances).
	Instance string
}

// SecondNoise is the white noise of one point's one-second rates.
type SecondNoise struct {
	// Var is the pooled variance of the log of each interval's rate around its slice's (or
	// run's) mean log rate; IntervalSec the intervals' length. Var 0: unknown.
	Var, IntervalSec float64
	// SliceSec is the mean seconds measured per slice (per run, unpaired); TotalSec all the
	// seconds measured for the point.
	SliceSec, TotalSec float64
}

// known says the noise was measured.
func (s SecondNoise) known() bool {
	return s.Var > 0 && s.IntervalSec > 0 && s.SliceSec > 0 && s.TotalSec > 0
}

// perSlice is the variance of one slice's mean log rate the white noise explains.
func (s SecondNoise) perSlice() float64 { return s.Var * s.IntervalSec / s.SliceSec }

// perTotal is the variance of the mean log rate over every second measured.
func (s SecondNoise) perTotal() float64 { return s.Var * s.IntervalSec / s.TotalSec }

// White is the white noise of a paired comparison's log ratio: PerSlice the variance of
// one slice's ratio it explains, Total that of the ratio over every second measured (the
// limit's). Zero: unknown.
type White struct{ PerSlice, Total float64 }

// Independent is the white noise of the ratio of two points measured apart (interleaved:
// their seconds' noises are independent): the sum of each point's.
func Independent(a, b SecondNoise) White {
	if !a.known() || !b.known() {
		return White{}
	}
	return White{PerSlice: a.perSlice() + b.perSlice(), Total: a.perTotal() + b.perTotal()}
}

// Joint is the white noise of the ratio of two points measured in the same seconds (a
// duet), from the noise of the per-second log ratio itself (r: its variance, interval,
// seconds per slice and per point): what both points share cancels out of it.
func Joint(r SecondNoise) White {
	if !r.known() {
		return White{}
	}
	return White{PerSlice: r.perSlice(), Total: r.perTotal()}
}

func (w White) known() bool { return w.PerSlice > 0 && w.Total > 0 }

// Decomposition is a ratio's variance by source, each the variance its source adds to the
// log ratio's estimate (so they add up to Total).
type Decomposition struct {
	Paired bool
	// Units is the blocks (paired) or the runs of the side with fewer (unpaired);
	// SlicesPerUnit the mean slices per block (1 unpaired).
	Units         int
	SlicesPerUnit float64
	// Instances is how many server instances the blocks ran on (paired, with
	// VarianceBlock.Instance on every block and at least two; else 0). Then an instance's
	// blocks are one unit of the interval (the ratio's estimate averages the instances),
	// and the MDE's degrees of freedom are the instances'.
	Instances int
	// UnitSDPct is 100 × the standard deviation of one unit's log ratio (paired: of a
	// block's; unpaired: of a run's log value, pooled over the sides).
	UnitSDPct float64
	// Var holds each source's variance; a source missing from Var could not be estimated
	// (no seconds, one slice per block, no CPU assignment).
	Var   map[Source]float64
	Total float64
	// Dominant is the source with the largest variance ("" when Total is 0).
	Dominant Source
	// BlockEffectP is the p-value of the F test that blocks differ beyond their slices'
	// noise (paired, several slices per block; else NaN): large when the slices of
	// different blocks are as alike as those of one block.
	BlockEffectP float64
	// BlockLag1 is the lag-1 autocorrelation of the blocks' ratios in their order, each
	// less its CPU assignment's mean (paired, at least MinLagBlocks blocks; else NaN), and
	// BlockLag1P the one-sided p-value that consecutive blocks are positively correlated
	// (NaN with it). The interval treats the blocks as independent; a ratio that drifts
	// over minutes longer than a block makes neighbours alike, and the interval narrower
	// than the ratio's true spread (see lagOne).
	BlockLag1, BlockLag1P float64
	// LimitMDEPct is the white-noise limit (see the package comment); HasLimit false when
	// the seconds' noise is unknown.
	LimitMDEPct float64
	HasLimit    bool
	// MDEPct is the MDE (MDEPct's rule, t with the units' degrees of freedom) of the
	// ratio's variance as decomposed, less the CPU assignment's (taken out of the
	// interval): the same model as the limit, so MDEPct ÷ LimitMDEPct is how far the
	// design is from it. A comparison's own MDE (Ratio.MDEPct) is from a robust spread of
	// the units and is smaller where a few units stray. HasMDE false with fewer than two
	// units.
	MDEPct float64
	HasMDE bool
}

// setMDE sets MDEPct from the components (df the units' degrees of freedom).
func (d *Decomposition) setMDE(confidence float64, df int) {
	v := d.Total - d.Var[SourceCPU]
	if df < 1 || !(v >= 0) {
		return
	}
	d.MDEPct, d.HasMDE = mdePct(math.Sqrt(v), 1-confidenceOr(confidence), df), true
}

// Share is source's part of the total variance, in percent (0 when not estimated).
func (d Decomposition) Share(s Source) float64 {
	v, ok := d.Var[s]
	if !ok || !(d.Total > 0) {
		return 0
	}
	return 100 * v / d.Total
}

// DecomposePaired decomposes a paired comparison's ratio: blocks as measured, wn the white
// noise of the ratio's seconds (Independent, Joint; zero: unknown). Blocks without a slice
// are ignored; with fewer than 2 blocks Units is set and nothing else.
func DecomposePaired(blocks []VarianceBlock, wn White, confidence float64) Decomposition {
	d := Decomposition{Paired: true, Var: map[Source]float64{}, BlockEffectP: math.NaN(), BlockLag1: math.NaN(), BlockLag1P: math.NaN()}
	var means []float64
	var factors, insts []string
	var within, sumInv float64
	dfWithin, slices := 0, 0
	for _, bl := range blocks {
		var xs []float64
		for _, x := range bl.LogRatios {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			continue
		}
		m := mean(xs)
		for _, x := range xs {
			within += (x - m) * (x - m)
		}
		dfWithin += len(xs) - 1
		slices += len(xs)
		sumInv += 1 / float64(len(xs))
		means = append(means, m)
		factors = append(factors, bl.Factor)
		insts = append(insts, bl.Instance)
	}
	n := len(means)
	d.Units = n
	if n < 2 {
		return d
	}
	d.SlicesPerUnit = float64(slices) / float64(n)
	sHarm := float64(n) / sumInv // the harmonic mean of the slices per block

	total := sampleVar(means)
	d.UnitSDPct = 100 * math.Sqrt(total)
	resid := total
	adj := means // the blocks' means less their CPU assignment's effect
	if r, ok := withinFactor(means, factors); ok {
		resid = r
		d.Var[SourceCPU] = math.Max(0, total-resid) / float64(n)
		adj, _ = AdjustForFactor(means, factors)
		d.BlockLag1, d.BlockLag1P = lagOne(centreByFactor(means, factors))
	} else {
		d.BlockLag1, d.BlockLag1P = lagOne(centreByFactor(means, nil))
	}
	df := n - 1
	if iv, ok := instanceVar(adj, insts); ok {
		// Blocks nested in instances: the instances' means vary by the instances' own
		// variance plus their blocks' over the blocks per instance; the blocks' variance
		// is the one within an instance. Neighbouring blocks share an instance, so their
		// lag-1 correlation is read within instances.
		d.Instances, df = iv.count, iv.count-1
		d.Var[SourceInstances] = math.Max(0, iv.between-iv.within/iv.perInstance) / float64(iv.count)
		resid = iv.within
		d.BlockLag1, d.BlockLag1P = lagOne(centreByFactor(adj, insts))
	}

	white := -1.0
	if wn.known() {
		white = wn.PerSlice
	}
	// The slices' variance around their block's mean: white noise plus drift.
	sliceVar := -1.0
	if dfWithin > 0 {
		sliceVar = within / float64(dfWithin)
		fq := distuv.F{D1: float64(n - 1), D2: float64(dfWithin)}
		if sliceVar > 0 {
			d.BlockEffectP = 1 - fq.CDF(sHarm*total/sliceVar)
		}
	}
	if wn.known() {
		scale := secondsAtSlices(white, sliceVar)
		if sliceVar < 0 {
			// One slice per block: the blocks' own variance is the only scale the seconds
			// can be seen to cancel at, as the runs' is unpaired. Without it, CPU time in
			// 10-ms ticks over 0.1-s intervals put a duet's CPU per query at a third of its
			// limit (0.5-s blocks, 110 of them, on the project's VM).
			scale = secondsAtSlices(white/sHarm, resid)
		}
		d.LimitMDEPct, d.HasLimit = mdePct(math.Sqrt(wn.Total*scale), 1-confidenceOr(confidence), 0), true
	}
	perBlock := func(v float64) float64 { return v / sHarm / float64(n) }
	switch {
	case sliceVar >= 0 && white >= 0:
		d.Var[SourceSeconds] = perBlock(math.Min(white, sliceVar))
		d.Var[SourceSlices] = perBlock(math.Max(0, sliceVar-white))
		d.Var[SourceBlocks] = math.Max(0, resid-sliceVar/sHarm) / float64(n)
	case sliceVar >= 0:
		d.Var[SourceSlices] = perBlock(sliceVar)
		d.Var[SourceBlocks] = math.Max(0, resid-sliceVar/sHarm) / float64(n)
	case white >= 0:
		w := math.Min(white/sHarm, resid)
		d.Var[SourceSeconds] = w / float64(n)
		d.Var[SourceBlocks] = (resid - w) / float64(n)
	default:
		d.Var[SourceBlocks] = resid / float64(n)
	}
	d.finish()
	d.setMDE(confidence, df)
	return d
}

// instanceSpread is how blocks' values vary by server instance (instanceVar).
type instanceSpread struct {
	// count is the instances; between the sample variance of their means (df count − 1);
	// within the pooled variance of the blocks around their instance's mean (df blocks −
	// count); perInstance the harmonic mean of the blocks per instance.
	count                        int
	between, within, perInstance float64
}

// instanceVar is the spread of xs (one per block) between and within the instances insts
// (one-way random effects, unbalanced: Searle et al. §3.6, with the harmonic mean for the
// blocks per instance), when every block has an instance, there are at least two and at
// least one instance has two blocks; ok false otherwise.
func instanceVar(xs []float64, insts []string) (instanceSpread, bool) {
	idx := map[string]int{}
	var sums []float64
	var counts []int
	for i, in := range insts {
		if in == "" {
			return instanceSpread{}, false
		}
		k, seen := idx[in]
		if !seen {
			k = len(sums)
			idx[in] = k
			sums, counts = append(sums, 0), append(counts, 0)
		}
		sums[k] += xs[i]
		counts[k]++
	}
	if len(sums) < 2 || len(xs)-len(sums) < 1 {
		return instanceSpread{}, false
	}
	ms := make([]float64, len(sums))
	var inv float64
	for k := range sums {
		ms[k] = sums[k] / float64(counts[k])
		inv += 1 / float64(counts[k])
	}
	var ss float64
	for i, x := range xs {
		m := ms[idx[insts[i]]]
		ss += (x - m) * (x - m)
	}
	return instanceSpread{count: len(sums), between: sampleVar(ms), within: ss / float64(len(xs)-len(sums)),
		perInstance: float64(len(sums)) / inv}, true
}

// DecomposeUnpaired decomposes a sequential comparison's ratio: la and lb the runs' log
// values of the base and the candidate, a and b their seconds' white noise (SliceSec the
// seconds per run).
func DecomposeUnpaired(la, lb []float64, a, b SecondNoise, confidence float64) Decomposition {
	d := Decomposition{Var: map[Source]float64{}, BlockEffectP: math.NaN(), BlockLag1: math.NaN(), BlockLag1P: math.NaN(), SlicesPerUnit: 1}
	la, lb = finiteOnly(la), finiteOnly(lb)
	d.Units = min(len(la), len(lb))
	if len(la) < 2 || len(lb) < 2 {
		return d
	}
	va, vb := sampleVar(la), sampleVar(lb)
	pooled := (float64(len(la)-1)*va + float64(len(lb)-1)*vb) / float64(len(la)+len(lb)-2)
	d.UnitSDPct = 100 * math.Sqrt(pooled)
	na, nb := float64(len(la)), float64(len(lb))
	if a.known() && b.known() {
		wa, wb := math.Min(a.perSlice(), va), math.Min(b.perSlice(), vb)
		d.Var[SourceSeconds] = wa/na + wb/nb
		d.Var[SourceBlocks] = (va-wa)/na + (vb-wb)/nb
		total := a.perTotal()*secondsAtSlices(a.perSlice(), va) + b.perTotal()*secondsAtSlices(b.perSlice(), vb)
		d.LimitMDEPct, d.HasLimit = mdePct(math.Sqrt(total), 1-confidenceOr(confidence), 0), true
	} else {
		d.Var[SourceBlocks] = va/na + vb/nb
	}
	d.finish()
	d.setMDE(confidence, len(la)+len(lb)-2)
	return d
}

// secondsAtSlices is the factor by which the seconds' noise shrinks at the slices' (or
// runs', or one-slice blocks') scale: 1 when a slice's mean varies at least as much as
// white seconds would make it (whiteSlice, the per-slice variance from successive
// differences), else the slices' own variance over it. Seconds are not always independent: two points' intervals that
// end a few milliseconds apart while the machine's rate swings, or CPU time counted in
// 10 ms ticks, put into one second what the next takes out, and that noise cancels over a
// slice. The white-noise limit then is what the seconds leave at the slices' scale, as the
// seconds' share is (min(white, slice variance)); without the factor a design whose
// seconds cancel so would beat the limit.
func secondsAtSlices(whiteSlice, sliceVar float64) float64 {
	if whiteSlice > 0 && sliceVar >= 0 && sliceVar < whiteSlice {
		return sliceVar / whiteSlice
	}
	return 1
}

// finish sums the components and names the dominant one (in the order of the sources:
// on a tie the shorter time scale).
func (d *Decomposition) finish() {
	d.Total = 0
	best := -1.0
	for _, s := range []Source{SourceSeconds, SourceSlices, SourceBlocks, SourceInstances, SourceCPU} {
		v, ok := d.Var[s]
		if !ok {
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			v = 0
			d.Var[s] = 0
		}
		d.Total += v
		if v > best {
			best, d.Dominant = v, s
		}
	}
	if !(d.Total > 0) {
		d.Dominant = ""
	}
}

// MinLagBlocks is the fewest blocks whose lag-1 autocorrelation is tested (lagOne's normal
// approximation is poor below it).
const MinLagBlocks = 10

// lagOne is the lag-1 autocorrelation r of the centred series y, and the one-sided p-value
// of r under independence. Under independence r is close to normal with mean −1/n and
// variance 1/n (M. S. Bartlett, "On the theoretical specification and sampling properties
// of autocorrelated time-series", JRSS Suppl. 8 (1946) 27–41; the 1-lag Box–Pierce test
// is its two-sided square), so p = 1 − Φ((r + 1/n)·√n). NaN, NaN for fewer than
// MinLagBlocks values or none that vary.
func lagOne(y []float64) (r, p float64) {
	n := len(y)
	if n < MinLagBlocks {
		return math.NaN(), math.NaN()
	}
	var num, den float64
	for i, v := range y {
		den += v * v
		if i > 0 {
			num += v * y[i-1]
		}
	}
	if !(den > 0) {
		return math.NaN(), math.NaN()
	}
	r = num / den
	z := (r + 1/float64(n)) * math.Sqrt(float64(n))
	return r, 1 - distuv.UnitNormal.CDF(z)
}

// centreByFactor is xs less the mean of its factor's level (factors nil, or a value
// without a level: less the mean of all).
func centreByFactor(xs []float64, factors []string) []float64 {
	out := make([]float64, len(xs))
	sum, n := map[string]float64{}, map[string]int{}
	for i, x := range xs {
		f := ""
		if factors != nil {
			f = factors[i]
		}
		sum[f] += x
		n[f]++
	}
	for i, x := range xs {
		f := ""
		if factors != nil {
			f = factors[i]
		}
		out[i] = x - sum[f]/float64(n[f])
	}
	return out
}

// withinFactor is the variance of xs around their factor level's mean (df n − levels),
// when at least two levels each hold at least two values and every value has a level;
// ok false otherwise.
func withinFactor(xs []float64, factors []string) (float64, bool) {
	groups := map[string]int{} // values per level
	for i := range xs {
		if factors[i] == "" {
			return 0, false
		}
		groups[factors[i]]++
	}
	if len(groups) < 2 {
		return 0, false
	}
	for _, n := range groups {
		if n < 2 {
			return 0, false
		}
	}
	var ss float64
	for _, c := range centreByFactor(xs, factors) {
		ss += c * c
	}
	df := len(xs) - len(groups)
	if df < 1 {
		return 0, false
	}
	return ss / float64(df), true
}

// AdjustForFactor takes a blocking factor out of paired log ratios: each value moves by
// its level's mean to the mean of the levels' means (each level weighted equally, so an
// assignment that ran in more blocks than another does not pull the estimate towards its
// own effect), and its deviation is scaled by √(n_l/(n_l−1)) to restore the variance that
// centring within a level of n_l values takes away. ok is false, and d is returned as it
// is, when a value has no level or some level has fewer than two values or there is only
// one level.
func AdjustForFactor(d []float64, factors []string) (adjusted []float64, ok bool) {
	if len(d) != len(factors) {
		return d, false
	}
	groups := map[string][]int{}
	for i, f := range factors {
		if f == "" || math.IsNaN(d[i]) || math.IsInf(d[i], 0) {
			return d, false
		}
		groups[f] = append(groups[f], i)
	}
	if len(groups) < 2 {
		return d, false
	}
	means := map[string]float64{}
	var grand float64
	for f, idx := range groups {
		if len(idx) < 2 {
			return d, false
		}
		var s float64
		for _, i := range idx {
			s += d[i]
		}
		means[f] = s / float64(len(idx))
		grand += means[f]
	}
	grand /= float64(len(groups))
	out := make([]float64, len(d))
	for f, idx := range groups {
		k := math.Sqrt(float64(len(idx)) / float64(len(idx)-1))
		for _, i := range idx {
			out[i] = grand + (d[i]-means[f])*k
		}
	}
	return out, true
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sampleVar is the sample variance (n − 1); 0 for fewer than two values.
func sampleVar(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

func finiteOnly(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// confidenceOr is c, or DefaultConfidence when c is not in (0, 1).
func confidenceOr(c float64) float64 {
	if !(c > 0 && c < 1) {
		return DefaultConfidence
	}
	return c
}
