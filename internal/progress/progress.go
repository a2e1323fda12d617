// Package progress shows a running step on a terminal: one live line per step with the
// elapsed and planned time, ops/s per label and p99 latency, rewritten on every interval
// tick and finished with the step's outcome; a rate-limited label shows the rate it kept
// (metrics.KeptRates), not its batches' lumps per second. When output is not a terminal (a log, CI) it
// prints only the finished line of each step, so a long run shows it is alive without
// filling the log; --quiet silences it. It receives the runner's interval stream
// (metrics types only).
package progress

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/metrics"
)

// Progress renders progress lines. A disabled Progress does nothing.
type Progress struct {
	w       io.Writer
	enabled bool // the live line (a terminal)
	steps   bool // a line per finished step (not a terminal)
	planned time.Duration
	elapsed time.Duration
	live    bool
	// kept is the step's rate-limited labels so far, by label (keptRate).
	kept map[string]*kept
}

// kept is what a rate-limited label did in its last intervals, and its rows and
// statements over the step so far.
type kept struct {
	counts, secs     []float64
	rows, statements int64
}

// New returns a Progress writing to w: the live line when w is a terminal, else a line
// per finished step; nothing when quiet.
func New(w io.Writer, terminal, quiet bool) *Progress {
	return &Progress{w: w, enabled: terminal && !quiet, steps: !terminal && !quiet}
}

// Start begins a step's line; planned is its fixed duration (0 when the step is bounded
// by rows rather than time).
func (p *Progress) Start(step string, planned time.Duration) {
	if !p.enabled {
		return
	}
	p.planned, p.elapsed, p.kept = planned, 0, nil
	p.print(fmt.Sprintf("%-8s starting", step))
}

// Interval updates the step's line with the latest interval.
func (p *Progress) Interval(step string, iv metrics.Interval) {
	if !p.enabled {
		return
	}
	p.elapsed = iv.End
	p.print(line(step, p.elapsed, p.planned, iv, p.keptRates(iv)))
}

// keptRates are the rates the rate-limited labels of iv kept (metrics.KeptRates over
// metrics.KeptWindow's intervals, from their batches so far and their target): a writer
// of batches of 50 rows at 100/s shows 100/s, not 50, 100 or 150 by the second, as the
// report's chart and table do.
func (p *Progress) keptRates(iv metrics.Interval) map[string]float64 {
	out := map[string]float64{}
	for _, l := range iv.Labels {
		if !(l.TargetPerSec > 0) {
			continue
		}
		if p.kept == nil {
			p.kept = map[string]*kept{}
		}
		k := p.kept[l.Label]
		if k == nil {
			k = &kept{}
			p.kept[l.Label] = k
		}
		k.counts, k.secs = append(k.counts, float64(l.Count())), append(k.secs, iv.Seconds())
		if n := len(k.counts); n > metrics.MaxKeptWindow { // the widest window there is
			k.counts, k.secs = k.counts[n-metrics.MaxKeptWindow:], k.secs[n-metrics.MaxKeptWindow:]
		}
		k.rows, k.statements = k.rows+l.Rows, k.statements+l.Statements
		batch := metrics.LabelStats{Unit: l.Unit, Rows: k.rows, Statements: k.statements}.Batch()
		rates := metrics.KeptRates(k.counts, k.secs, metrics.KeptWindow(batch, l.TargetPerSec, iv.Seconds()))
		out[l.Label] = rates[len(rates)-1]
	}
	return out
}

// Finish ends the step's line with its outcome.
func (p *Progress) Finish(r metrics.StepResult) {
	if !p.enabled && !p.steps {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-11s %7.1fs", r.Name, r.Status, r.Seconds)
	if n := r.PrimaryCount(); n > 0 && r.Seconds > 0 {
		unit := "/s"
		for _, l := range r.Labels {
			if l.Label == r.Primary && l.Unit == metrics.UnitRows {
				unit = " rows/s"
			}
		}
		fmt.Fprintf(&b, "  %s %.0f%s", r.Primary, float64(n)/r.Seconds, unit)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "  %s", firstLine(r.Error))
	}
	if p.steps {
		fmt.Fprintln(p.w, b.String())
		return
	}
	p.print(b.String())
	fmt.Fprintln(p.w)
	p.live = false
}

func (p *Progress) print(s string) {
	// \r and erase-line: rewrite the live line in place.
	fmt.Fprintf(p.w, "\r\x1b[K%s", s)
	p.live = true
}

// Line formats one progress line: step, elapsed/planned, then per label ops/s and p99.
func Line(step string, elapsed, planned time.Duration, iv metrics.Interval) string {
	return line(step, elapsed, planned, iv, nil)
}

// line is Line with the rates of the labels in kept (the rate-limited ones) in place of
// their interval's.
func line(step string, elapsed, planned time.Duration, iv metrics.Interval, kept map[string]float64) string {
	var b strings.Builder
	plan := "-"
	if planned > 0 {
		plan = fmt.Sprintf("%.0fs", planned.Seconds())
	}
	fmt.Fprintf(&b, "%-8s %5.0fs/%s", step, elapsed.Seconds(), plan)
	secs := iv.Seconds()
	for _, l := range iv.Labels {
		rate := 0.0
		if secs > 0 {
			rate = float64(l.Count()) / secs
		}
		if r, ok := kept[l.Label]; ok {
			rate = r
		}
		fmt.Fprintf(&b, "  %s %.0f/s p99 %s", l.Label, rate, FormatUS(l.Service.P99))
		if l.Errors > 0 {
			fmt.Fprintf(&b, " (%d errors)", l.Errors)
		}
	}
	return b.String()
}

// FormatUS renders microseconds with a readable unit.
func FormatUS(us int64) string {
	switch {
	case us >= 1_000_000:
		return fmt.Sprintf("%.2fs", float64(us)/1e6)
	case us >= 1000:
		return fmt.Sprintf("%.1fms", float64(us)/1e3)
	default:
		return fmt.Sprintf("%dµs", us)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
