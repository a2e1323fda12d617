package chart

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// linearTicks places labelled ticks at a round step (1, 2, 2.5 or 5 times a
// power of ten) giving about 4 to 7 labels, with unlabelled ticks in between,
// and labels them readably: just the digits the step needs (no float noise
// such as 0.30000000000000004), and large values with an SI suffix chosen from
// the step and shared by the whole axis (5k, 10k, 15k).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	step, minor := niceStep((hi - lo) / 6)
	scale, suffix := siScale(math.Max(math.Abs(lo), math.Abs(hi)))
	prec := decimals(step / scale)
	if prec > 2 && scale > 1 {
		// A small step far from 0 (1000000050): no suffix, all digits.
		scale, suffix = 1, ""
		prec = decimals(step)
	}
	eps := minor * 1e-6
	var ticks []plot.Tick
	for k := math.Ceil(lo/minor - 1e-6); ; k++ {
		v := k * minor
		if v > hi+eps {
			break
		}
		t := plot.Tick{Value: v}
		if q := v / step; math.Abs(q-math.Round(q)) < 1e-6 {
			if math.Abs(v) < eps {
				t.Label = "0"
			} else {
				t.Label = trimZeros(strconv.FormatFloat(v/scale, 'f', prec, 64)) + suffix
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// integerTicks label an axis of counts (run numbers) at a step of 1, 2 or 5 times a
// power of ten, never below 1, giving at most 8 labels (so two runs are not labelled
// 1, 1.2, …, 2, and 14 runs not only at 5 and 10 as linearTicks' 2.5 step would leave);
// while the step is at most 10 every whole number gets an unlabelled tick.
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	step := 1.0
	for i := 0; (hi-lo)/step >= 8; i++ {
		step *= []float64{2, 2.5, 2}[i%3] // 1, 2, 5, 10, 20, 50, …
	}
	minor := step
	if step <= 10 {
		minor = 1
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/minor) * minor; v <= hi; v += minor {
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', 0, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// trimZeros removes the trailing zeros of a decimal fraction ("1.50" → "1.5",
// "2.0" → "2").
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// niceStep returns the smallest round step (1, 2, 2.5 or 5 times a power of
// ten) of at least raw, and the step of the unlabelled ticks between.
func niceStep(raw float64) (step, minor float64) {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * p; step >= raw*(1-1e-9) {
			if m == 2.5 {
				return step, step / 5
			}
			return step, step / 2
		}
	}
	return step, step / 2
}

// logTicks places ticks at 1, 2, …, 9 times each power of ten in range, and
// labels the powers of ten; over a range of at most 3 decades also 2× and 5×,
// and within about one decade every tick.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(hi) {
		return nil
	}
	decades := math.Log10(hi / lo)
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || decades <= 1.2 || (decades <= 3 && (m == 2 || m == 5)) {
				scale, suffix := siScale(v)
				t.Label = formatNum(v/scale) + suffix
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// siScale returns the SI divisor and suffix for labels of values up to v
// (10k, 1M, …; below 10⁴ the plain number is shorter).
func siScale(v float64) (float64, string) {
	switch {
	case v >= 1e12:
		return 1e12, "T"
	case v >= 1e9:
		return 1e9, "G"
	case v >= 1e6:
		return 1e6, "M"
	case v >= 1e4:
		return 1e3, "k"
	}
	return 1, ""
}

// decimals returns how many decimals show multiples of a round step (1, 2,
// 2.5 or 5 times a power of ten) exactly.
func decimals(step float64) int {
	e := math.Floor(math.Log10(step) + 1e-9)
	n := max(0, int(-e))
	if m := step / math.Pow(10, e); math.Abs(m-2.5) < 1e-6 {
		n++ // 0.25, 2.5, 25k: one digit more than the step's power of ten
		if e >= 1 {
			n = 0
		}
	}
	return n
}

// formatNum formats v with up to 6 significant digits and no trailing zeros.
func formatNum(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0" // also for -0 and float noise around 0
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
