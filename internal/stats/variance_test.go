package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// synthBlocks makes n blocks of s slices of log ratios with known components: a CPU
// effect ±cpu/2 by assignment (alternating, balanced), block deviations of SD block, slice
// drift of SD drift, and white noise of SD sec per one-second interval on each point over
// sliceSec seconds (so √(2·sec²/sliceSec) per slice ratio).
func synthBlocks(rng *rand.Rand, n, s int, cpu, block, drift, sec, sliceSec float64) []VarianceBlock {
	out := make([]VarianceBlock, n)
	whiteSD := math.Sqrt(2 * sec * sec / sliceSec)
	for b := range n {
		f, g := "a0/b1", cpu/2
		if b%2 == 1 {
			f, g = "a1/b0", -cpu/2
		}
		if cpu == 0 {
			f = ""
		}
		beta := rng.NormFloat64() * block
		bl := VarianceBlock{Factor: f}
		for range s {
			bl.LogRatios = append(bl.LogRatios, 0.01+g+beta+rng.NormFloat64()*drift+rng.NormFloat64()*whiteSD)
		}
		out[b] = bl
	}
	return out
}

func TestDecomposePairedRecoversKnownComponents(t *testing.T) {
	const n, s, sliceSec = 2000, 5, 2.0
	cases := []struct {
		name                   string
		cpu, block, drift, sec float64
		dominant               Source
	}{
		{"white noise only", 0, 0, 0, 0.12, SourceSeconds},
		{"between blocks dominate", 0, 0.06, 0, 0.05, SourceBlocks},
		{"drift within blocks", 0, 0.005, 0.08, 0.03, SourceSlices},
		{"cpu assignment", 0.12, 0.01, 0, 0.03, SourceCPU},
		{"all four", 0.04, 0.03, 0.03, 0.06, SourceBlocks},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			blocks := synthBlocks(rng, n, s, c.cpu, c.block, c.drift, c.sec, sliceSec)
			noise := SecondNoise{Var: c.sec * c.sec, IntervalSec: 1, SliceSec: sliceSec, TotalSec: n * s * sliceSec}
			d := DecomposePaired(blocks, Independent(noise, noise), 0.95)
			if d.Units != n || d.SlicesPerUnit != s {
				t.Fatalf("units %d slices %g, want %d and %d", d.Units, d.SlicesPerUnit, n, s)
			}
			// The true variance each source adds to the estimate (of n blocks).
			want := map[Source]float64{
				SourceSeconds: 2 * c.sec * c.sec / sliceSec / s / n,
				SourceSlices:  c.drift * c.drift / s / n,
				SourceBlocks:  c.block * c.block / n,
			}
			if c.cpu > 0 {
				want[SourceCPU] = c.cpu * c.cpu / 4 / n
			}
			var total float64
			for _, v := range want {
				total += v
			}
			for src, w := range want {
				got, ok := d.Var[src]
				if !ok {
					t.Fatalf("%s not estimated: %+v", src, d.Var)
				}
				// Each estimate within 3 percentage points of its true share of the total.
				if gs, ws := 100*got/d.Total, 100*w/total; math.Abs(gs-ws) > 3 {
					t.Errorf("%s: share %.1f%%, want %.1f%% (var %.3g, want %.3g)", src, gs, ws, got, w)
				}
			}
			if c.cpu == 0 {
				if _, ok := d.Var[SourceCPU]; ok {
					t.Errorf("a CPU component without assignments: %+v", d.Var)
				}
			}
			if d.Dominant != c.dominant {
				t.Errorf("dominant %q, want %q (shares: seconds %.0f%%, slices %.0f%%, blocks %.0f%%, cpu %.0f%%)", d.Dominant, c.dominant,
					d.Share(SourceSeconds), d.Share(SourceSlices), d.Share(SourceBlocks), d.Share(SourceCPU))
			}
			// The limit: 2.80 × √(2σ²/N) as a percentage, N the seconds per point; within
			// 2% of it, as white noise alone leaves the slices' variance estimated a little
			// under the seconds' (df 8,000: about 1.6% in variance), which scales it.
			wantLimit := whiteLimit(c.sec, n*s*sliceSec)
			if !d.HasLimit || math.Abs(d.LimitMDEPct-wantLimit) > 0.02*wantLimit {
				t.Errorf("limit %.4f%%, want %.4f%%", d.LimitMDEPct, wantLimit)
			}
			// The MDE of the decomposed variance, CPU taken out: at the limit with white
			// noise alone, √(total ÷ seconds) times it otherwise.
			wantMDE := wantLimit * math.Sqrt((total-want[SourceCPU])/want[SourceSeconds])
			if !d.HasMDE || math.Abs(d.MDEPct-wantMDE) > 0.05*wantMDE {
				t.Errorf("MDE %.4f%%, want %.4f%%", d.MDEPct, wantMDE)
			}
			if (c.block >= 0.03 || c.cpu > 0) && !(d.BlockEffectP < 0.001) {
				t.Errorf("block effect p %.3g, want < 0.001", d.BlockEffectP)
			}
			if c.block == 0 && c.cpu == 0 && !(d.BlockEffectP > 0.001) {
				t.Errorf("block effect p %.3g without one, want > 0.001", d.BlockEffectP)
			}
		})
	}
}

// whiteLimit is the white-noise limit in percent of a ratio of two points with white noise
// of SD sec per one-second interval each, over secs seconds per point: 2.80 × √(2σ²/N).
func whiteLimit(sec, secs float64) float64 {
	return (math.Exp((1.959964+0.841621)*math.Sqrt(2*sec*sec/secs)) - 1) * 100
}

// TestDecomposePairedSecondsThatCancel: seconds whose noise cancels over a slice (their
// successive differences say 0.12 per second, the slices vary as 0.03 per second would
// make them) give the limit of the slices' scale, so a design whose blocks add nothing
// sits at it (MDE/limit about 1), not far under it.
func TestDecomposePairedSecondsThatCancel(t *testing.T) {
	const n, s, sliceSec = 2000, 5, 2.0
	blocks := synthBlocks(rand.New(rand.NewPCG(9, 9)), n, s, 0, 0, 0, 0.03, sliceSec)
	noise := SecondNoise{Var: 0.12 * 0.12, IntervalSec: 1, SliceSec: sliceSec, TotalSec: n * s * sliceSec}
	d := DecomposePaired(blocks, Independent(noise, noise), 0.95)
	want := whiteLimit(0.03, n*s*sliceSec)
	if !d.HasLimit || math.Abs(d.LimitMDEPct-want) > 0.03*want {
		t.Errorf("limit %.4f%%, want %.4f%% (the slices' scale), not %.4f%% (the seconds')", d.LimitMDEPct, want, whiteLimit(0.12, n*s*sliceSec))
	}
	if d.Dominant != SourceSeconds || d.Share(SourceSlices) != 0 {
		t.Errorf("dominant %q, slices' share %.1f%%: want seconds and 0", d.Dominant, d.Share(SourceSlices))
	}
	// One slice per block: the blocks vary as 0.03 per second would make them, likewise.
	one := synthBlocks(rand.New(rand.NewPCG(7, 7)), n, 1, 0, 0, 0, 0.03, sliceSec)
	noise1 := SecondNoise{Var: 0.12 * 0.12, IntervalSec: 1, SliceSec: sliceSec, TotalSec: n * sliceSec}
	d1 := DecomposePaired(one, Independent(noise1, noise1), 0.95)
	if want := whiteLimit(0.03, n*sliceSec); !d1.HasLimit || math.Abs(d1.LimitMDEPct-want) > 0.05*want {
		t.Errorf("one slice per block: limit %.4f%%, want %.4f%% (the blocks' scale), not %.4f%%", d1.LimitMDEPct, want, whiteLimit(0.12, n*sliceSec))
	}
	if r := d1.MDEPct / d1.LimitMDEPct; r < 0.9 {
		t.Errorf("one slice per block: MDE/limit %.2f, under the limit", r)
	}
	// Unpaired: runs that vary less than their seconds would make them, likewise.
	rng := rand.New(rand.NewPCG(5, 5))
	la, lb := make([]float64, 400), make([]float64, 400)
	for i := range la {
		la[i] = rng.NormFloat64() * 0.03 / math.Sqrt(10)
		lb[i] = 0.01 + rng.NormFloat64()*0.03/math.Sqrt(10)
	}
	run := SecondNoise{Var: 0.12 * 0.12, IntervalSec: 1, SliceSec: 10, TotalSec: 4000}
	du := DecomposeUnpaired(la, lb, run, run, 0.95)
	if want := whiteLimit(0.03, 4000); !du.HasLimit || math.Abs(du.LimitMDEPct-want) > 0.1*want {
		t.Errorf("unpaired limit %.4f%%, want %.4f%%", du.LimitMDEPct, want)
	}
}

func TestDecomposePairedPartialInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// One slice per block and no seconds: all of it is between blocks.
	one := synthBlocks(rng, 50, 1, 0, 0.05, 0, 0.01, 2)
	d := DecomposePaired(one, White{}, 0)
	if d.Dominant != SourceBlocks || len(d.Var) != 1 || d.HasLimit || !math.IsNaN(d.BlockEffectP) {
		t.Errorf("one slice, no seconds: %+v", d)
	}
	// One slice per block with seconds: the seconds' share comes from them, capped by the
	// blocks' variance.
	noise := SecondNoise{Var: 0.01 * 0.01, IntervalSec: 1, SliceSec: 2, TotalSec: 100}
	d = DecomposePaired(one, Independent(noise, noise), 0)
	if _, ok := d.Var[SourceSeconds]; !ok || d.Dominant != SourceBlocks || !d.HasLimit {
		t.Errorf("one slice with seconds: %+v", d)
	}
	// Fewer than two blocks: nothing but the count.
	d = DecomposePaired(one[:1], Independent(noise, noise), 0)
	if d.Units != 1 || d.Total != 0 || d.Dominant != "" {
		t.Errorf("one block: %+v", d)
	}
	// NaN slices are ignored; a block of none is no block.
	d = DecomposePaired([]VarianceBlock{{LogRatios: []float64{math.NaN()}}, {LogRatios: []float64{0.1, 0.2}}, {LogRatios: []float64{0.0, 0.1}}}, White{}, 0)
	if d.Units != 2 {
		t.Errorf("units %d, want 2", d.Units)
	}
}

func TestDecomposeUnpaired(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, runSec = 400, 10.0
	for _, c := range []struct {
		name     string
		run, sec float64
		dominant Source
	}{
		{"between runs", 0.05, 0.05, SourceBlocks},
		{"white", 0.005, 0.12, SourceSeconds},
	} {
		t.Run(c.name, func(t *testing.T) {
			gen := func() []float64 {
				out := make([]float64, n)
				for i := range out {
					out[i] = 9 + rng.NormFloat64()*c.run + rng.NormFloat64()*c.sec/math.Sqrt(runSec)
				}
				return out
			}
			noise := SecondNoise{Var: c.sec * c.sec, IntervalSec: 1, SliceSec: runSec, TotalSec: n * runSec}
			d := DecomposeUnpaired(gen(), gen(), noise, noise, 0.95)
			if d.Dominant != c.dominant {
				t.Errorf("dominant %q, want %q: %+v", d.Dominant, c.dominant, d.Var)
			}
			wantSec := 2 * c.sec * c.sec / runSec / n
			if got := d.Var[SourceSeconds]; math.Abs(got-wantSec) > 0.2*wantSec {
				t.Errorf("seconds %.3g, want %.3g", got, wantSec)
			}
			wantRun := 2 * c.run * c.run / n
			if got := d.Var[SourceBlocks]; math.Abs(got-wantRun) > 0.25*wantRun+0.1*wantSec {
				t.Errorf("runs %.3g, want %.3g", got, wantRun)
			}
		})
	}
	if d := DecomposeUnpaired([]float64{1}, []float64{1, 2}, SecondNoise{}, SecondNoise{}, 0); d.Total != 0 || d.Units != 1 {
		t.Errorf("one run: %+v", d)
	}
}

func TestAdjustForFactor(t *testing.T) {
	cases := []struct {
		name    string
		d       []float64
		factors []string
		ok      bool
		want    []float64
	}{
		{"no factor", []float64{1, 2, 3}, []string{"", "", ""}, false, []float64{1, 2, 3}},
		{"one level", []float64{1, 2, 3}, []string{"x", "x", "x"}, false, []float64{1, 2, 3}},
		{"a level of one", []float64{1, 2, 3}, []string{"x", "x", "y"}, false, []float64{1, 2, 3}},
		// Levels x (mean 1.1) and y (mean 0.9): grand mean 1.0, deviations ±0.1 × √2.
		{"two levels", []float64{1.0, 1.2, 0.8, 1.0}, []string{"x", "x", "y", "y"}, true,
			[]float64{1 - 0.1*math.Sqrt2, 1 + 0.1*math.Sqrt2, 1 - 0.1*math.Sqrt2, 1 + 0.1*math.Sqrt2}},
		// Unbalanced: the grand mean weighs the levels equally (1.0), not the values (1.05).
		{"unbalanced", []float64{1.1, 1.1, 1.1, 0.9, 0.9}, []string{"x", "x", "x", "y", "y"}, true,
			[]float64{1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := AdjustForFactor(c.d, c.factors)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			for i := range c.want {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestAdjustForFactorNarrowsTheInterval: a CPU effect of ±5% in a balanced duet widens the
// plain paired interval; taken out, the interval is about the noise's again and still
// covers the true ratio.
func TestAdjustForFactorNarrowsTheInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 24
	a, b := make([]float64, n), make([]float64, n)
	d, f := make([]float64, n), make([]string, n)
	for i := range n {
		g := 0.05
		f[i] = "0/1"
		if i%2 == 1 {
			g, f[i] = -0.05, "1/0"
		}
		d[i] = 0.02 + g + rng.NormFloat64()*0.01
		a[i] = 1000
		b[i] = 1000 * math.Exp(d[i])
	}
	plain := PairedRatio(a, b, RatioOptions{})
	adj, ok := AdjustForFactor(d, f)
	if !ok {
		t.Fatal("not adjusted")
	}
	for i := range b {
		b[i] = 1000 * math.Exp(adj[i])
	}
	model := PairedRatio(a, b, RatioOptions{})
	if !(model.Hi-model.Lo < (plain.Hi-plain.Lo)/2) {
		t.Errorf("adjusted interval %.4f–%.4f not under half the plain %.4f–%.4f", model.Lo, model.Hi, plain.Lo, plain.Hi)
	}
	if want := math.Exp(0.02); !(model.Lo < want && want < model.Hi) {
		t.Errorf("adjusted interval %.4f–%.4f misses the true ratio %.4f", model.Lo, model.Hi, want)
	}
}

// Joint takes the per-second ratio's own noise: two points measured in the same seconds
// share most of it (a duet), so their ratio's white noise is far below the sum of each
// point's, and the limit with it.
func TestJointWhiteNoise(t *testing.T) {
	each := SecondNoise{Var: 0.12 * 0.12, IntervalSec: 1, SliceSec: 2, TotalSec: 600}
	ratio := SecondNoise{Var: 0.03 * 0.03, IntervalSec: 1, SliceSec: 2, TotalSec: 600}
	ind, joint := Independent(each, each), Joint(ratio)
	if math.Abs(ind.PerSlice-2*0.0144/2) > 1e-12 || math.Abs(ind.Total-2*0.0144/600) > 1e-12 {
		t.Errorf("independent %+v", ind)
	}
	if math.Abs(joint.PerSlice-0.0009/2) > 1e-12 || math.Abs(joint.Total-0.0009/600) > 1e-12 {
		t.Errorf("joint %+v", joint)
	}
	if w := Independent(each, SecondNoise{}); w.known() {
		t.Errorf("one side unknown: %+v", w)
	}
}

// TestBlockLag1: block deviations that follow an AR(1) drift (each block keeps phi of the
// one before) are flagged as correlated; independent ones, and blocks whose only
// structure is the CPU assignment's alternating effect, are not, beyond the test's level.
func TestBlockLag1(t *testing.T) {
	const n, trials = 40, 400
	cases := []struct {
		name       string
		phi, cpu   float64
		wantR      float64 // the mean r over the trials, ± 0.1
		minFlagged float64 // share of trials with p < 0.01: at least
		maxFlagged float64 // and at most
	}{
		{"independent blocks", 0, 0, -1.0 / n, 0, 0.03},
		{"independent blocks, alternating CPU effect", 0, 0.05, -1.0 / n, 0, 0.03},
		{"drift over blocks (AR(1) 0.6)", 0.6, 0, 0.55, 0.75, 1},
		{"drift and CPU effect", 0.6, 0.05, 0.55, 0.75, 1},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			flagged, sumR := 0, 0.0
			for range trials {
				blocks := make([]VarianceBlock, n)
				dev := 0.0
				for b := range n {
					dev = c.phi*dev + math.Sqrt(1-c.phi*c.phi)*rng.NormFloat64()*0.01
					f, g := "", 0.0
					if c.cpu > 0 {
						f, g = "x", c.cpu/2
						if b%2 == 1 {
							f, g = "y", -c.cpu/2
						}
					}
					bl := VarianceBlock{Factor: f}
					for range 3 {
						bl.LogRatios = append(bl.LogRatios, g+dev+rng.NormFloat64()*0.002)
					}
					blocks[b] = bl
				}
				d := DecomposePaired(blocks, White{}, 0.95)
				if math.IsNaN(d.BlockLag1) || math.IsNaN(d.BlockLag1P) {
					t.Fatalf("lag-1 not computed for %d blocks", n)
				}
				sumR += d.BlockLag1
				if d.BlockLag1P < 0.01 {
					flagged++
				}
			}
			if r := sumR / trials; math.Abs(r-c.wantR) > 0.1 {
				t.Errorf("mean r %.3f, want %.3f ± 0.1", r, c.wantR)
			}
			if f := float64(flagged) / trials; f < c.minFlagged || f > c.maxFlagged {
				t.Errorf("flagged in %.1f%% of %d sweeps, want %.0f–%.0f%%", 100*f, trials, 100*c.minFlagged, 100*c.maxFlagged)
			}
		})
	}
	// Too few blocks: not tested.
	few := make([]VarianceBlock, MinLagBlocks-1)
	for i := range few {
		few[i].LogRatios = []float64{float64(i) * 0.01}
	}
	if d := DecomposePaired(few, White{}, 0.95); !math.IsNaN(d.BlockLag1P) {
		t.Errorf("lag-1 p %.3g with %d blocks, want NaN", d.BlockLag1P, len(few))
	}
}

// With server instances (VarianceBlock.Instance) the blocks are nested in them: each
// instance's own difference, known here, is recovered as SourceInstances, the blocks'
// within an instance as SourceBlocks, the MDE takes the instances' degrees of freedom, and
// consecutive blocks of one instance are not called drift. Without instances the same
// blocks' instance effect hides in SourceBlocks and their lag-1 correlation.
func TestDecomposePairedInstances(t *testing.T) {
	const s, sliceSec, sec = 3, 2.0, 0.05
	cases := []struct {
		name               string
		instances, perInst int
		inst, block        float64
		dominant           Source
		slack              float64 // how far a share may be off its true one, in points
	}{
		{"instances dominate", 3000, 5, 0.02, 0.005, SourceInstances, 5},
		{"blocks dominate", 3000, 5, 0.003, 0.03, SourceBlocks, 5},
		{"no instance effect", 3000, 5, 0, 0.04, SourceBlocks, 3},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			var blocks []VarianceBlock
			whiteSD := math.Sqrt(2 * sec * sec / sliceSec)
			for k := range c.instances {
				eta := rng.NormFloat64() * c.inst
				for range c.perInst {
					beta := rng.NormFloat64() * c.block
					bl := VarianceBlock{Instance: fmt.Sprintf("%d|%d", k+1, k+1)}
					for range s {
						bl.LogRatios = append(bl.LogRatios, eta+beta+rng.NormFloat64()*whiteSD)
					}
					blocks = append(blocks, bl)
				}
			}
			n := c.instances * c.perInst
			noise := SecondNoise{Var: sec * sec, IntervalSec: 1, SliceSec: sliceSec, TotalSec: float64(n*s) * sliceSec}
			d := DecomposePaired(blocks, Independent(noise, noise), 0.95)
			if d.Instances != c.instances || d.Units != n {
				t.Fatalf("instances %d units %d, want %d and %d", d.Instances, d.Units, c.instances, n)
			}
			want := map[Source]float64{
				SourceSeconds:   2 * sec * sec / sliceSec / s / float64(n),
				SourceBlocks:    c.block * c.block / float64(n),
				SourceInstances: c.inst * c.inst / float64(c.instances),
			}
			var total float64
			for _, v := range want {
				total += v
			}
			for src, w := range want {
				if gs, ws := d.Share(src), 100*w/total; math.Abs(gs-ws) > c.slack {
					t.Errorf("%s: share %.1f%%, want %.1f%%", src, gs, ws)
				}
			}
			if d.Dominant != c.dominant {
				t.Errorf("dominant %q, want %q", d.Dominant, c.dominant)
			}
			// The MDE is the decomposed variance's with the instances' degrees of freedom.
			if wantMDE := mdePct(math.Sqrt(d.Total), 0.05, c.instances-1); math.Abs(d.MDEPct-wantMDE) > 1e-9 {
				t.Errorf("MDE %.4f%%, want %.4f%%", d.MDEPct, wantMDE)
			}
			if c.inst > 0 && d.BlockLag1P < 0.01 {
				t.Errorf("blocks of one instance called drift: lag-1 %.2f, p %.3g", d.BlockLag1, d.BlockLag1P)
			}
			// The same blocks without their instances: the instance effect is then the
			// blocks', and neighbours of one instance look like drift.
			for i := range blocks {
				blocks[i].Instance = ""
			}
			flat := DecomposePaired(blocks, Independent(noise, noise), 0.95)
			if _, ok := flat.Var[SourceInstances]; ok || flat.Instances != 0 {
				t.Errorf("without instances: %+v, instances %d", flat.Var, flat.Instances)
			}
			if c.dominant == SourceInstances && !(flat.BlockLag1P < 0.01) {
				t.Errorf("without instances the instance effect should read as drift: lag-1 %.2f, p %.3g", flat.BlockLag1, flat.BlockLag1P)
			}
		})
	}
	// One instance, or a block without one: no nesting.
	one := []VarianceBlock{{LogRatios: []float64{0.01, 0.02}, Instance: "1|1"}, {LogRatios: []float64{0.03, 0.01}, Instance: "1|1"}, {LogRatios: []float64{0.02, 0.00}, Instance: "1|1"}}
	if d := DecomposePaired(one, White{}, 0.95); d.Instances != 0 {
		t.Errorf("one instance: nested, %d instances", d.Instances)
	}
	mixed := append(slices.Clone(one), VarianceBlock{LogRatios: []float64{0.02}, Instance: ""}, VarianceBlock{LogRatios: []float64{0.02, 0.03}, Instance: "2|2"})
	if d := DecomposePaired(mixed, White{}, 0.95); d.Instances != 0 {
		t.Errorf("a block without an instance: nested, %d instances", d.Instances)
	}
}
