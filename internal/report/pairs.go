package report

import (
	"fmt"
	"math"
	"slices"

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
// trial twice in a group, and at least 2 trials in common — a and b hold only the matched
// trials' values, a[i] with b[i], in trial order, and paired is true. Otherwise a and b are
// every value of each group (values), unpaired.
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
		if len(keys) >= 2 {
			slices.SortFunc(keys, compareTrials)
			for _, k := range keys {
				a = append(a, ka[k])
				b = append(b, kb[k])
			}
			return a, b, true
		}
	}
	return values(base, get), values(g, get), false
}

// figureRatio is g's figure relative to the base's (g ÷ base): paired by trial when the runs
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
