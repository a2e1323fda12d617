package metrics

import (
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs .. 1 h at 3 significant digits (DESIGN.md "Measurement rules").
const (
	histMinUS  = 1
	histMaxUS  = int64(time.Hour / time.Microsecond)
	histDigits = 3
)

func newHist() *hdr.Histogram { return hdr.New(histMinUS, histMaxUS, histDigits) }

// LabelSpec describes the op label a Recorder records.
type LabelSpec struct {
	Label string
	Role  string
	Unit  Unit
	// OpenLoop: ops have scheduled start times; response time is recorded too.
	OpenLoop bool
	// TargetPerSec is this recorder's share of the label's target (0 = unlimited).
	TargetPerSec float64
	Background   bool
	// StatementsPerOp is how many statements one recorded op sent (0 means 1); the op
	// counts once as an event.
	StatementsPerOp int
}

// acc accumulates one label's measurements.
type acc struct {
	statements, events, rows, errors, late, missed int64
	service, response                              *hdr.Histogram
}

func newAcc(openLoop bool) *acc {
	a := &acc{service: newHist()}
	if openLoop {
		a.response = newHist()
	}
	return a
}

func (a *acc) reset() {
	a.statements, a.events, a.rows, a.errors, a.late, a.missed = 0, 0, 0, 0, 0, 0
	a.service.Reset()
	if a.response != nil {
		a.response.Reset()
	}
}

func (a *acc) merge(b *acc) {
	a.statements += b.statements
	a.events += b.events
	a.rows += b.rows
	a.errors += b.errors
	a.late += b.late
	a.missed += b.missed
	a.service.Merge(b.service)
	if a.response != nil && b.response != nil {
		a.response.Merge(b.response)
	}
}

// Recorder is one worker's recorder. Only its worker and the Registry's tick touch it; the
// mutex is therefore uncontended on the hot path except for the instant of a tick swap,
// and it is never held across a database call.
type Recorder struct {
	spec LabelSpec
	mu   sync.Mutex
	cur  *acc
	// spare is swapped in at each tick so recording never waits for a merge.
	spare *acc
	// stmts is the statements one op counts (LabelSpec.StatementsPerOp, at least 1).
	stmts int64
}

// Record records one operation: intended is its scheduled start (equal to start for closed
// loops), start and end bracket the call, rows are the rows it affected or returned. It
// counts one event and LabelSpec.StatementsPerOp statements. Failed ops count as errors
// and stay out of the latency histograms.
func (r *Recorder) Record(intended, start, end time.Time, rows int64, err error) {
	svc := end.Sub(start).Microseconds()
	var resp int64
	late := false
	if r.spec.OpenLoop {
		resp = end.Sub(intended).Microseconds()
		late = start.Sub(intended) >= LateThreshold
	}
	r.mu.Lock()
	a := r.cur
	if err != nil {
		a.errors++
	} else {
		a.statements += r.stmts
		a.events++
		a.rows += rows
		_ = a.service.RecordValue(clampUS(svc))
		if a.response != nil {
			_ = a.response.RecordValue(clampUS(resp))
		}
		if late {
			a.late++
		}
	}
	r.mu.Unlock()
}

// Missed counts schedule slots the rate limiter dropped.
func (r *Recorder) Missed(n int64) {
	r.mu.Lock()
	r.cur.missed += n
	r.mu.Unlock()
}

func clampUS(v int64) int64 {
	if v < histMinUS {
		return histMinUS
	}
	if v > histMaxUS {
		return histMaxUS
	}
	return v
}

// swap hands the current accumulator to the caller and starts a fresh one.
func (r *Recorder) swap() *acc {
	r.mu.Lock()
	a := r.cur
	r.cur = r.spare
	r.spare = nil
	r.mu.Unlock()
	return a
}

// giveBack returns a drained accumulator for reuse as the next spare.
func (r *Recorder) giveBack(a *acc) {
	a.reset()
	r.mu.Lock()
	r.spare = a
	r.mu.Unlock()
}

// labelState is the registry's view of one label across its recorders.
type labelState struct {
	spec     LabelSpec
	target   float64
	interval *acc
	total    *acc
}

// Registry owns a step's recorders and turns them into intervals on ticks. Recorder() is
// called before the load starts; Tick and Totals from one goroutine (the ticker).
type Registry struct {
	start  time.Time
	last   time.Time
	seq    int
	recs   []*Recorder
	labels map[string]*labelState
	order  []string
}

// NewRegistry starts a registry whose intervals are offsets from start.
func NewRegistry(start time.Time) *Registry {
	return &Registry{start: start, last: start, labels: map[string]*labelState{}}
}

// Restart moves the registry's origin (when the load actually begins after setup).
func (g *Registry) Restart(start time.Time) { g.start, g.last = start, start }

// Recorder makes a recorder for one worker. Workers of the same label share a labelState
// and their targets add up.
func (g *Registry) Recorder(spec LabelSpec) *Recorder {
	ls, ok := g.labels[spec.Label]
	if !ok {
		ls = &labelState{spec: spec, interval: newAcc(spec.OpenLoop), total: newAcc(spec.OpenLoop)}
		g.labels[spec.Label] = ls
		g.order = append(g.order, spec.Label)
	}
	ls.target += spec.TargetPerSec
	r := &Recorder{spec: spec, cur: newAcc(spec.OpenLoop), spare: newAcc(spec.OpenLoop), stmts: max(1, int64(spec.StatementsPerOp))}
	g.recs = append(g.recs, r)
	return r
}

// Tick closes the interval ending at now: it merges every recorder's measurements since
// the previous tick and adds them to the step totals.
func (g *Registry) Tick(now time.Time) Interval {
	for _, r := range g.recs {
		a := r.swap()
		g.labels[r.spec.Label].interval.merge(a)
		r.giveBack(a)
	}
	iv := Interval{Seq: g.seq, Start: g.last.Sub(g.start), End: now.Sub(g.start)}
	for _, name := range g.sortedLabels() {
		ls := g.labels[name]
		iv.Labels = append(iv.Labels, ls.stats(ls.interval))
		ls.total.merge(ls.interval)
		ls.interval.reset()
	}
	g.seq++
	g.last = now
	return iv
}

// Totals are the step totals of every label over all ticks so far.
func (g *Registry) Totals() []LabelStats {
	var out []LabelStats
	for _, name := range g.sortedLabels() {
		ls := g.labels[name]
		s := ls.stats(ls.total)
		s.Hist = &LabelHist{Service: encodeHist(ls.total.service), Response: encodeHist(ls.total.response)}
		out = append(out, s)
	}
	return out
}

func (g *Registry) sortedLabels() []string {
	names := append([]string(nil), g.order...)
	sort.Strings(names)
	return names
}

func (ls *labelState) stats(a *acc) LabelStats {
	s := LabelStats{
		Label: ls.spec.Label, Role: ls.spec.Role, Unit: ls.spec.Unit,
		Statements: a.statements, Events: a.events, Rows: a.rows, Errors: a.errors, Late: a.late, Missed: a.missed,
		Service:      latencyOf(a.service),
		TargetPerSec: ls.target, Background: ls.spec.Background,
	}
	if a.response != nil {
		s.Response = latencyOf(a.response)
		s.HasResponse = true
	}
	return s
}

func latencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:   h.ValueAtQuantile(50),
		P90:   h.ValueAtQuantile(90),
		P99:   h.ValueAtQuantile(99),
		P999:  h.ValueAtQuantile(99.9),
		P9999: h.ValueAtQuantile(99.99),
		Max:   h.Max(),
	}
}
