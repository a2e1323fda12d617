package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
)

// Params keys of the interleaved design: a run of a sweep stores the sweep's label and its
// trial ("b3/s2": block 3, slice 2). Runs of two configs with the same sweep and trial ran
// side by side, under the same conditions, so their figures are compared as pairs.
const (
	paramSweep = "sweep"
	paramTrial = "trial"
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

// keyedValues is a group's figure keyed by trial; ok is false when the group's runs with the
// figure cannot be paired: a run without a trial, runs of different sweeps, or a trial that
// appears twice.
func keyedValues(g GroupReport, get func(RunReport) (float64, bool), sweep *string) (map[string]float64, bool) {
	out := map[string]float64{}
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
		out[tr] = v
	}
	return out, true
}

// pairValues collects a figure from the base's and g's runs. When the runs can be paired —
// every run of both groups that has the figure carries a trial, all of the same sweep, no
// trial twice in a group, and at least 2 blocks with a trial in common — a and b hold one
// value per block, a[i] with b[i], in block order, and paired is true. Otherwise a and b are
// every value of each group (values), unpaired.
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
func pairValues(base, g GroupReport, get func(RunReport) (float64, bool)) (a, b []float64, paired bool) {
	sweep := "\x00" // not yet seen
	ka, okA := keyedValues(base, get, &sweep)
	kb, okB := keyedValues(g, get, &sweep)
	if okA && okB {
		var keys []string
		for k := range ka {
			if _, ok := kb[k]; ok {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, compareTrials)
		var blocks []string
		sumA, sumB, count := map[string]float64{}, map[string]float64{}, map[string]int{}
		for _, k := range keys {
			u := trialBlock(k)
			if count[u] == 0 {
				blocks = append(blocks, u)
			}
			sumA[u] += ka[k]
			sumB[u] += kb[k]
			count[u]++
		}
		if len(blocks) >= 2 {
			for _, u := range blocks {
				n := float64(count[u])
				a = append(a, sumA[u]/n)
				b = append(b, sumB[u]/n)
			}
			return a, b, true
		}
	}
	return values(base, get), values(g, get), false
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
func figureRatio(base, g GroupReport, get func(RunReport) (float64, bool), opt stats.RatioOptions) (stats.Ratio, bool) {
	a, b, paired := pairValues(base, g, get)
	if len(a) == 0 || len(b) == 0 {
		return stats.Ratio{}, false
	}
	if paired {
		return stats.PairedRatio(a, b, opt), true
	}
	return stats.RatioOf(a, b, opt), true
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
