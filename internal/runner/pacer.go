package runner

import "time"

// Pacer schedules the intended start times of a rate-limited worker against an absolute
// schedule, start + i/rate, so a slow op delays the ones after it but never shifts the
// schedule (golang.org/x/time/rate's token bucket cannot hold 1000/s steadily, and the
// reference's sleep-to-the-second limiter never catches up: reference §1.6, §5.3). A
// backlog up to Backlog old is caught up by running ops back to back; slots older than
// that are dropped and counted as missed. Written by hand: no maintained library offers an
// absolute schedule with a bounded catch-up. It is pure (the caller passes the time) so its
// behaviour is tested with an injected clock.
//
// A Poisson pacer (NewPoissonPacer) schedules ops as a Poisson process instead, as
// pgbench's --rate does: each slot follows the one before by a gap the workload draws
// from its own seeded stream (workload.Group.Gaps), with the same backlog rule.
type Pacer struct {
	start   time.Time
	rate    float64 // ops per second
	backlog time.Duration
	i       int64 // index of the next slot
	// gap, for a Poisson pacer, draws the gap before the next slot, due at next.
	gap  func() time.Duration
	next time.Time
}

// DefaultBacklog is how far behind schedule a limiter may be and still catch up (spec
// "Rate limiting": default 1 s worth).
const DefaultBacklog = time.Second

// NewPacer schedules ops at rate per second from start.
func NewPacer(start time.Time, rate float64, backlog time.Duration) *Pacer {
	return &Pacer{start: start, rate: rate, backlog: backlog}
}

// NewPoissonPacer schedules ops from start with the gaps gap draws: the first at
// start+gap(), each next one a gap() after the one before.
func NewPoissonPacer(start time.Time, gap func() time.Duration, backlog time.Duration) *Pacer {
	return &Pacer{start: start, backlog: backlog, gap: gap, next: start.Add(gap())}
}

// nextPoisson is Next for a Poisson pacer: slots more than the backlog behind now are
// dropped, one by one.
func (p *Pacer) nextPoisson(now time.Time) (intended time.Time, wait time.Duration, missed int64) {
	intended = p.next
	for now.Sub(intended) > p.backlog {
		missed++
		intended = intended.Add(p.gap())
	}
	p.next = intended.Add(p.gap())
	if d := intended.Sub(now); d > 0 {
		wait = d
	}
	return intended, wait, missed
}

func (p *Pacer) slot(i int64) time.Time {
	return p.start.Add(time.Duration(float64(i) * float64(time.Second) / p.rate))
}

// Next returns the intended start of the next op given the current time, how long to wait
// before it (0 when it is due or overdue) and how many overdue slots were dropped because
// they were more than the backlog behind. It consumes the slot it returns.
func (p *Pacer) Next(now time.Time) (intended time.Time, wait time.Duration, missed int64) {
	if p.gap != nil {
		return p.nextPoisson(now)
	}
	intended = p.slot(p.i)
	if lag := now.Sub(intended); lag > p.backlog {
		// Drop the slots older than the backlog: keep the first slot ≥ now − backlog.
		perSlot := float64(time.Second) / p.rate
		skip := int64(float64(lag-p.backlog) / perSlot)
		for p.slot(p.i + skip).Before(now.Add(-p.backlog)) {
			skip++
		}
		p.i += skip
		missed = skip
		intended = p.slot(p.i)
	}
	p.i++
	if d := intended.Sub(now); d > 0 {
		wait = d
	}
	return intended, wait, missed
}
