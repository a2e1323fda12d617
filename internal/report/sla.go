package report

import "github.com/dbperf/dbperf/internal/metrics"

// SLAFraction is the share of its target rate a background writer must achieve over a
// step to meet its SLA, and the share below which an interval counts as below target
// (spec/insert-benchmark.md "Steps": achieved ≥ 0.95 × target).
const SLAFraction = 0.95

// SLA verdicts.
const (
	SLAOK     = "ok"
	SLAFailed = "failed"
)

// slaTolerance absorbs float rounding so that a rate exactly at the boundary
// (e.g. 57 rows in 0.6 s against a target of 100/s) is judged as meeting it.
const slaTolerance = 1e-9

// Background is the SLA verdict of one rate-limited background writer over a step.
type Background struct {
	Label string
	// Role names the writer in the JSON report ("insert", "delete").
	Role           string
	Unit           metrics.Unit
	TargetPerSec   float64
	AchievedPerSec float64
	// IntervalsBelowTargetPct is the percentage of the step's intervals whose rate was
	// below SLAFraction × target (a short final interval excluded, see belowTargetPct).
	IntervalsBelowTargetPct float64
	// SLA is SLAOK when AchievedPerSec ≥ SLAFraction × TargetPerSec, else SLAFailed.
	SLA string
}

// background judges a background label from its step total and the step's intervals.
func background(l metrics.LabelStats, stepSeconds float64, ivs []metrics.Interval) Background {
	target := Finite(l.TargetPerSec)
	b := Background{
		Label:                   l.Label,
		Role:                    l.Role,
		Unit:                    l.Unit,
		TargetPerSec:            target,
		AchievedPerSec:          perSec(l.Count(), stepSeconds),
		IntervalsBelowTargetPct: belowTargetPct(l.Label, target, ivs),
		SLA:                     SLAFailed,
	}
	if meets(b.AchievedPerSec, target) {
		b.SLA = SLAOK
	}
	return b
}

func meets(rate, target float64) bool {
	return rate >= SLAFraction*target*(1-slaTolerance)
}

// belowTargetPct is the percentage of intervals in which label's rate (its count over the
// interval's seconds; absent = 0) was below SLAFraction × target.
//
// A final interval shorter than half of the longest one is left out: the step ends at an
// arbitrary point of an interval, and judging a partial tail of a few hundred milliseconds
// (in which a batch may just not have been due) would count misses that are not there.
// Intervals of zero length are left out too. With no target or no intervals it is 0.
func belowTargetPct(label string, target float64, ivs []metrics.Interval) float64 {
	if !(target > 0) || len(ivs) == 0 {
		return 0
	}
	var longest float64
	for _, iv := range ivs {
		longest = max(longest, iv.Seconds())
	}
	if last := ivs[len(ivs)-1]; len(ivs) > 1 && last.Seconds() < longest/2 {
		ivs = ivs[:len(ivs)-1]
	}
	var judged, below int
	for _, iv := range ivs {
		secs := iv.Seconds()
		if !(secs > 0) {
			continue
		}
		judged++
		var count int64
		for _, l := range iv.Labels {
			if l.Label == label {
				count = l.Count()
				break
			}
		}
		if !meets(float64(count)/secs, target) {
			below++
		}
	}
	if judged == 0 {
		return 0
	}
	return 100 * float64(below) / float64(judged)
}
