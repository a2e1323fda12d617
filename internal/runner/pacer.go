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
type Pacer struct {
	start   time.Time
	rate    float64 // ops per second
	backlog time.Duration
	i       int64 // index of the next slot
}

// DefaultBacklog is how far behind schedule a limiter may be and still catch up (spec
// "Rate limiting": default 1 s worth).
const DefaultBacklog = time.Second

// NewPacer schedules ops at rate per second from start.
func NewPacer(start time.Time, rate float64, backlog time.Duration) *Pacer {
	return &Pacer{start: start, rate: rate, backlog: backlog}
}

func (p *Pacer) slot(i int64) time.Time {
	return p.start.Add(time.Duration(float64(i) * float64(time.Second) / p.rate))
}

// Next returns the intended start of the next op given the current time, how long to wait
// before it (0 when it is due or overdue) and how many overdue slots were dropped because
// they were more than the backlog behind. It consumes the slot it returns.
func (p *Pacer) Next(now time.Time) (intended time.Time, wait time.Duration, missed int64) {
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
