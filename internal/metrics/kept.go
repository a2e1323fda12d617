package metrics

import "math"

// KeptWindow is how many intervals of secs seconds a rate-limited label's rate is
// averaged over to show the rate it kept: enough that one batch more or less in the
// window moves the average by at most a tenth of target. A writer inserting batch rows
// at a time at target rows/s finishes 0, 1 or 2 batches in a given second (50, 100 or
// 150 rows/s at 100/s in batches of 50) while keeping its rate. 1 without a target or
// with batches of one.
func KeptWindow(batch, target, secs float64) int {
	if !(batch > 1) || !(target > 0) || !(secs > 0) {
		return 1
	}
	n := math.Ceil(batch/(0.1*target*secs) - 1e-9)
	return int(min(max(n, 1), MaxKeptWindow))
}

// MaxKeptWindow is the widest KeptWindow: a minute of 1-s intervals.
const MaxKeptWindow = 60

// KeptRates are, per interval, a label's count over the last window intervals (fewer at
// the start) divided by their seconds: the rate it kept (KeptWindow). counts and secs
// are per interval; an interval of no length adds nothing.
func KeptRates(counts, secs []float64, window int) []float64 {
	out := make([]float64, len(counts))
	window = max(window, 1)
	for i := range counts {
		var n, s float64
		for j := max(0, i-window+1); j <= i; j++ {
			n, s = n+counts[j], s+secs[j]
		}
		if s > 0 {
			out[i] = n / s
		}
	}
	return out
}

// Batch is the label's rows per statement: the batch a writer inserts or deletes at a
// time (1 for a label that does not count rows, or ran no statement).
func (l LabelStats) Batch() float64 {
	if l.Unit != UnitRows || l.Statements == 0 {
		return 1
	}
	return float64(l.Rows) / float64(l.Statements)
}
