package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// Params keys of the interleaved design: a run of a sweep stores the sweep's label and its
// trial ("b3/s2": block 3, slice 2). Runs of two configs with the same sweep and trial ran
// side by side, under the same conditions, so their figures are compared as pairs.
const (
	paramSweep = store.ParamSweep
	paramTrial = store.ParamTrial
)

// runTrial is a run's sweep and trial as stored in its params ("" when absent).
func runTrial(r RunReport) (sweep, trial string) {
	return paramString(r.Params, paramSweep), paramString(r.Params, paramTrial)
}

// paramString is a stored param as a string: strings as they are, numbers as they print.
func paramString(p map[string]any, key string) string {
	switch v := p[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprint(v)
	default:
		return fmt.Sprint(v)
	}
}

// Params keys of the duet design: the CPUs a point ran on in a block ("0", "2,3"). A
// block's CPU assignment (the base's CPUs and the candidate's) is a blocking factor the
// ratio is adjusted for (figureRatio).
const paramCPUs = store.ParamCPUs

// trialValue is a run's figure in one trial and the CPUs its point ran on ("" when not a
// duet).
type trialValue struct {
	v    float64
	cpus string
	// instance is the point's server instance in the trial (store.ParamInstance; "" when
	// the sweep had one per point).
	instance string
}

// keyedValues is a group's figure keyed by trial; ok is false when the group's runs with the
// figure cannot be paired: a run without a trial, runs of different sweeps, or a trial that
// appears twice.
func keyedValues(g GroupReport, get func(RunReport) (float64, bool), sweep *string) (map[string]trialValue, bool) {
	out := map[string]trialValue{}
	for _, r := range g.Runs {
		v, ok := get(r)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		sw, tr := runTrial(r)
		if tr == "" {
			return nil, false
		}
		if *sweep == "\x00" {
			*sweep = sw
		} else if sw != *sweep {
			return nil, false
		}
		if _, dup := out[tr]; dup {
			return nil, false
		}
		out[tr] = trialValue{v: v, cpus: paramString(r.Params, paramCPUs), instance: paramString(r.Params, store.ParamInstance)}
	}
	return out, true
}

// pairedBlock is one block of paired trials: the figure of each slice both points ran, the
// block's CPU assignment in a duet ("base CPUs|candidate CPUs"; "" otherwise) and its
// server instance (--instances: "base|candidate"; "" otherwise).
type pairedBlock struct {
	a, b     []float64
	factor   string
	instance string
}

// means are the block's values for the pair: the mean over its slices of each side.
func (p pairedBlock) means() (a, b float64) {
	for i := range p.a {
		a += p.a[i]
		b += p.b[i]
	}
	n := float64(len(p.a))
	return a / n, b / n
}

// pairBlocks collects a figure from the base's and g's runs by block, in block order, when
// the runs can be paired: every run of both groups that has the figure carries a trial, all
// of the same sweep, no trial twice in a group, and at least 2 blocks with a trial in
// common. ok is false otherwise.
func pairBlocks(base, g GroupReport, get func(RunReport) (float64, bool)) (blocks []pairedBlock, ok bool) {
	sweep := "\x00" // not yet seen
	ka, okA := keyedValues(base, get, &sweep)
	kb, okB := keyedValues(g, get, &sweep)
	if !okA || !okB {
		return nil, false
	}
	var keys []string
	for k := range ka {
		if _, ok := kb[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareTrials)
	index := map[string]int{}
	for _, k := range keys {
		u := trialBlock(k)
		i, seen := index[u]
		if !seen {
			i = len(blocks)
			index[u] = i
			blocks = append(blocks, pairedBlock{})
			if ka[k].cpus != "" && kb[k].cpus != "" {
				blocks[i].factor = ka[k].cpus + "|" + kb[k].cpus
			}
			if ka[k].instance != "" && kb[k].instance != "" {
				blocks[i].instance = ka[k].instance + "|" + kb[k].instance
			}
		}
		blocks[i].a = append(blocks[i].a, ka[k].v)
		blocks[i].b = append(blocks[i].b, kb[k].v)
	}
	if len(blocks) < 2 {
		return nil, false
	}
	return blocks, true
}

// pairValues collects a figure from the base's and g's runs. When the runs can be paired
// (pairBlocks), a and b hold one value per block, a[i] with b[i], in block order, factors
// each block's CPU assignment, and paired is true. Otherwise a and b are every value of
// each group (values), unpaired.
//
// The unit of a pair is the block, not the slice. A trial key is "b<block>/s<slice>"; the
// slices of a block share that block's databases (loaded afresh for every block) and its
// minute of the machine, so their ratios are correlated: pairing them as if independent
// counts one block's luck several times and makes the interval too narrow (pseudo-
// replication; S. H. Hurlbert, "Pseudoreplication and the design of ecological field
// experiments", Ecol. Monogr. 54 (1984) 187–211). The analysis of cluster summaries is the
// standard remedy (A. Donner, N. Klar, Design and Analysis of Cluster Randomization Trials,
// 2000, §6.2): a block's value for a point is the mean over the slices both points ran in
// it, and the blocks are the pairs. The slices still serve: they alternate the points
// within a block, so a block's two means are measured in the same minutes and its ratio is
// steadier. A key without "/" is a block of its own.
func pairValues(base, g GroupReport, get func(RunReport) (float64, bool)) (a, b []float64, factors, instances []string, paired bool) {
	if blocks, ok := pairBlocks(base, g, get); ok {
		for _, bl := range blocks {
			ma, mb := bl.means()
			a, b = append(a, ma), append(b, mb)
			factors, instances = append(factors, bl.factor), append(instances, bl.instance)
		}
		return a, b, factors, instances, true
	}
	return values(base, get), values(g, get), nil, nil, false
}

// byInstance is the pairs a[i], b[i] (one per block) gathered by server instance (a sweep
// with --instances): one pair per instance, each side the geometric mean of its blocks'
// values, in the order the instances first appear. ok is false, and a and b are returned
// as they are, unless every block has an instance and there are at least two: the blocks
// of one pair of servers share those servers' own cost for their whole life, so they are
// one unit of the pair, as a block's slices are one (pairValues' comment); the servers'
// difference is then in the interval instead of in every unit alike.
func byInstance(a, b []float64, instances []string) (ua, ub []float64, ok bool) {
	idx := map[string]int{}
	var la, lb []float64
	var n []int
	for i, in := range instances {
		if in == "" || !(a[i] > 0 && b[i] > 0) {
			return a, b, false
		}
		k, seen := idx[in]
		if !seen {
			k = len(n)
			idx[in] = k
			la, lb, n = append(la, 0), append(lb, 0), append(n, 0)
		}
		la[k] += math.Log(a[i])
		lb[k] += math.Log(b[i])
		n[k]++
	}
	if len(n) < 2 {
		return a, b, false
	}
	for k := range n {
		ua = append(ua, math.Exp(la[k]/float64(n[k])))
		ub = append(ub, math.Exp(lb[k]/float64(n[k])))
	}
	return ua, ub, true
}

// unitKeys are the units of paired trials, one per trial: its block (trialBlock), or,
// when every trial's run carries a server instance (store.ParamInstance, --instances) and
// there are at least two, "i" and its instance, as byInstance pairs the throughput: an
// instance's blocks share its servers for their whole life.
func unitKeys(trials, instances []string) []string {
	out := make([]string, len(trials))
	distinct := map[string]bool{}
	for _, in := range instances {
		distinct[in] = true
	}
	byInst := len(distinct) >= 2 && !distinct[""]
	for k, tr := range trials {
		out[k] = trialBlock(tr)
		if byInst {
			out[k] = "i" + instances[k]
		}
	}
	return out
}

// trialBlock is the block of a trial key: "b3" of "b3/s2"; a key without "/" is its own block.
func trialBlock(trial string) string {
	if i := strings.IndexByte(trial, '/'); i >= 0 {
		return trial[:i]
	}
	return trial
}

// figureRatio is g's figure relative to the base's (g ÷ base): paired by block when the runs
// can be paired (pairValues), else unpaired. ok is false when a side has no value.
//
// In a duet each block ran each point on other CPUs, and a CPU may be faster than the
// other for a while (a vCPU's steal is its own): the assignment is a blocking factor. When
// every block has one and each assignment ran at least two blocks, the blocks' log ratios
// are adjusted for it (stats.AdjustForFactor) before the interval, so the assignment's
// effect leaves the interval and the estimate weighs each assignment equally. With server
// instances (--instances) the adjusted blocks are then gathered by instance (byInstance),
// an instance's blocks one pair.
func figureRatio(base, g GroupReport, get func(RunReport) (float64, bool), opt stats.RatioOptions) (stats.Ratio, bool) {
	a, b, factors, instances, paired := pairValues(base, g, get)
	if len(a) == 0 || len(b) == 0 {
		return stats.Ratio{}, false
	}
	if paired {
		b = adjustForCPUs(a, b, factors)
		if ua, ub, ok := byInstance(a, b, instances); ok {
			a, b = ua, ub
		}
		return stats.PairedRatio(a, b, opt), true
	}
	return stats.RatioOf(a, b, opt), true
}

// adjustForCPUs is b with each block's ratio to a adjusted for the blocks' CPU assignments
// (stats.AdjustForFactor); b itself when they cannot be.
func adjustForCPUs(a, b []float64, factors []string) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		if !(a[i] > 0 && b[i] > 0) {
			return b
		}
		d[i] = math.Log(b[i]) - math.Log(a[i])
	}
	adj, ok := stats.AdjustForFactor(d, factors)
	if !ok {
		return b
	}
	out := make([]float64, len(b))
	for i := range b {
		out[i] = a[i] * math.Exp(adj[i])
	}
	return out
}

// compareTrials orders trial keys naturally: runs of digits compare as numbers, so "b2/s10"
// comes after "b2/s9" and "b10/s1" after "b9/s1".
func compareTrials(x, y string) int {
	for x != "" && y != "" {
		dx, dy := digitPrefix(x), digitPrefix(y)
		if dx > 0 && dy > 0 {
			nx, ny := trimZeros(x[:dx]), trimZeros(y[:dy])
			if len(nx) != len(ny) {
				return cmpInt(len(nx), len(ny))
			}
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if x[0] != y[0] {
			return cmpInt(int(x[0]), int(y[0]))
		}
		x, y = x[1:], y[1:]
	}
	return cmpInt(len(x), len(y))
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
