package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf/dbperf/internal/stats"
	"github.com/dbperf/dbperf/internal/store"
)

// StepSummary is one step's explanation in words: what an engineer reads before the
// tables.
type StepSummary struct {
	Step string
	// Ratio is the step's throughput, new ÷ base, compared as the report compares it
	// (paired by block for a sweep's runs); HasRatio false when it could not be.
	Ratio    stats.Ratio
	HasRatio bool
	Text     string
}

// minWaitPts is the smallest change of a wait class's share, in percentage points, a
// summary names.
const minWaitPts = 5

// summarize writes e's summary: a paragraph for each step whose throughput changed (by
// the report's rule) or whose roles' CPU per op changed (by explain's), in e's step order;
// one line saying so when none did.
func summarize(e *Explain, baseRuns, newRuns []store.Run) {
	base := GroupReport{Group: Group{Name: e.Base}, Runs: Build(baseRuns).Runs}
	neu := GroupReport{Group: Group{Name: e.New}, Runs: Build(newRuns).Runs}
	for _, s := range e.Steps {
		sum := StepSummary{Step: s.Step}
		sum.Ratio, sum.HasRatio = figureRatio(base, neu, throughputOf(s.Step), stats.RatioOptions{})
		sum.HasRatio = sum.HasRatio && sum.Ratio.Estimate > 0
		moved := sum.HasRatio && (sum.Ratio.Verdict == stats.VerdictHigher || sum.Ratio.Verdict == stats.VerdictLower)
		var changed []ExplainRole
		for _, r := range s.Roles {
			if r.Changed {
				changed = append(changed, r)
			}
		}
		stmt := slices.ContainsFunc(s.Statements, func(c StatementChange) bool { return c.Changed })
		if !moved && len(changed) == 0 && !stmt {
			continue
		}
		sum.Text = summaryText(s, sum, changed)
		e.Summary = append(e.Summary, sum)
	}
}

// summaryText is one step's paragraph: its throughput's change, the roles whose CPU per op
// changed and what explains them, the statement that changed most with its reads, the
// plans, and the waits that moved.
func summaryText(s ExplainStep, sum StepSummary, changed []ExplainRole) string {
	var parts []string
	head := s.Step
	switch {
	case sum.HasRatio && sum.Ratio.HasCI:
		head += fmt.Sprintf(" %s [%s, %s] (%s)", signedPct(sum.Ratio.Estimate), signedPct(sum.Ratio.Lo), signedPct(sum.Ratio.Hi), verdictWords(sum.Ratio.Verdict))
	case sum.HasRatio:
		head += fmt.Sprintf(" %s (too few trials for an interval)", signedPct(sum.Ratio.Estimate))
	}
	slices.SortStableFunc(changed, func(a, b ExplainRole) int {
		return cmp.Compare(math.Abs(b.Shift.Estimate), math.Abs(a.Shift.Estimate))
	})
	for _, r := range changed {
		p := fmt.Sprintf("the %s role's CPU per op %s [%s, %s]", r.Role, pctOfBase(r.Shift.Estimate, r.Base), pctOfBase(r.Shift.Lo, r.Base), pctOfBase(r.Shift.Hi, r.Base))
		switch {
		case len(r.ExplainedBy) > 0 && !math.IsNaN(r.Explained):
			p += fmt.Sprintf(", %.0f%% of it in %s", 100*r.Explained, strings.Join(r.ExplainedBy[:min(3, len(r.ExplainedBy))], ", "))
		case r.Beneath != "":
			p += fmt.Sprintf(", %.0f%% of it under %s (its callees' CPU, no one of them a finding on its own)", 100*r.BeneathFraction, r.Beneath)
		default:
			p += ", no single function's change a finding"
		}
		parts = append(parts, p)
	}
	if len(changed) == 0 && len(s.Roles) > 0 {
		parts = append(parts, "no role's CPU per op changed beyond its interval")
	}
	if len(s.Statements) > 0 {
		top := s.Statements[0] // sorted by the size of their change
		for _, c := range s.Statements {
			if c.Changed {
				top = c // the largest change that is a finding
				break
			}
		}
		p := fmt.Sprintf("statement %s %s µs/op", describeStatement(top.Query), signedNum(top.DeltaUSPerOp))
		switch {
		case top.Changed:
			p += fmt.Sprintf(" [%s, %s] (changed)", signedNum(top.Shift.Lo), signedNum(top.Shift.Hi))
		case top.Shift.HasCI:
			p += fmt.Sprintf(" [%s, %s] (no change beyond its interval)", signedNum(top.Shift.Lo), signedNum(top.Shift.Hi))
		}
		if top.Base.ReadPerCall != 0 || top.New.ReadPerCall != 0 {
			if FormatNum(top.Base.ReadPerCall) == FormatNum(top.New.ReadPerCall) {
				p += ", reads per call unchanged"
			} else {
				p += fmt.Sprintf(", reads per call %s → %s", FormatNum(top.Base.ReadPerCall), FormatNum(top.New.ReadPerCall))
			}
		}
		parts = append(parts, p)
		var plans []string
		for _, st := range s.Statements {
			if st.PlanChanged {
				plans = append(plans, describeStatement(st.Query))
			}
		}
		if len(plans) == 0 {
			parts = append(parts, "plans unchanged")
		} else {
			parts = append(parts, "plan changed: "+strings.Join(plans, ", "))
		}
	}
	for _, w := range s.Waits {
		if math.Abs(100*w.Delta) >= minWaitPts {
			parts = append(parts, fmt.Sprintf("%s waits on %s %+.0f pts", w.Role, w.Wait, 100*w.Delta))
		}
	}
	if len(parts) == 0 {
		return head
	}
	return head + ": " + strings.Join(parts, "; ")
}

// signedPct is a ratio as a signed percentage change: 0.9 → "-10.0%".
func signedPct(r float64) string {
	p := 100 * (r - 1)
	if math.Abs(p) >= 10 {
		return fmt.Sprintf("%+.0f%%", p)
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// pctOfBase is a change of µs/op in % of the base's µs/op ("+13%"), or in µs when the
// base has none.
func pctOfBase(delta, base float64) string {
	if base <= 0 {
		return signedNum(delta) + " µs"
	}
	return signedPct(1 + delta/base)
}

func signedNum(v float64) string {
	if v >= 0 {
		return "+" + FormatNum(v)
	}
	return FormatNum(v)
}

// verdictWords names a throughput ratio's verdict.
func verdictWords(v stats.Verdict) string {
	switch v {
	case stats.VerdictHigher:
		return "faster"
	case stats.VerdictLower:
		return "slower"
	case stats.VerdictSame:
		return "the same"
	case stats.VerdictUnstable:
		return "cannot tell"
	}
	return "no verdict"
}
