package runner

import (
	"testing"
	"time"
)

func TestPacerSchedule(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := time.Millisecond
	type call struct {
		now      time.Duration // offset of the caller's clock
		intended time.Duration
		wait     time.Duration
		missed   int64
	}
	tests := []struct {
		name    string
		rate    float64
		backlog time.Duration
		calls   []call
	}{
		{"on time: waits for each slot", 20, time.Second, []call{
			{0, 0, 0, 0},
			{1 * ms, 50 * ms, 49 * ms, 0},
			{51 * ms, 100 * ms, 49 * ms, 0},
		}},
		{"a slow op delays but does not shift the schedule", 20, time.Second, []call{
			{0, 0, 0, 0},
			{180 * ms, 50 * ms, 0, 0},  // 130 ms late: run at once
			{181 * ms, 100 * ms, 0, 0}, // still behind: back to back
			{182 * ms, 150 * ms, 0, 0}, // caught up after this one
			{183 * ms, 200 * ms, 17 * ms, 0},
		}},
		{"backlog beyond the bound is dropped and counted", 10, time.Second, []call{
			{0, 0, 0, 0},
			// 2.5 s later: slots 100..1400 ms are more than 1 s old; 1500 ms is the first kept.
			{2500 * ms, 1500 * ms, 0, 14},
			{2501 * ms, 1600 * ms, 0, 0},
		}},
		{"1000 per second keeps exact millisecond slots", 1000, time.Second, []call{
			{0, 0, 0, 0},
			{0, 1 * ms, 1 * ms, 0},
			{0, 2 * ms, 2 * ms, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPacer(t0, tt.rate, tt.backlog)
			for i, c := range tt.calls {
				intended, wait, missed := p.Next(t0.Add(c.now))
				if got := intended.Sub(t0); got != c.intended || wait != c.wait || missed != c.missed {
					t.Fatalf("call %d at %v: got intended %v wait %v missed %d, want %v %v %d",
						i, c.now, got, wait, missed, c.intended, c.wait, c.missed)
				}
			}
		})
	}
}

func TestPacerLongRunHasNoDrift(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(t0, 1000, time.Second)
	var intended time.Time
	for i := 0; i < 300_000; i++ {
		intended, _, _ = p.Next(intended) // a caller that is always exactly on time
	}
	if got, want := intended.Sub(t0), 299_999*time.Millisecond; got != want {
		t.Fatalf("slot 299999 at %v, want %v", got, want)
	}
}

func BenchmarkPacerNext(b *testing.B) {
	t0 := time.Now()
	p := NewPacer(t0, 1000, time.Second)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Next(t0.Add(time.Duration(i) * time.Millisecond))
	}
}

// TestPoissonPacer: a Poisson pacer's slots follow each other by the gaps drawn, a slow
// op delays the next without shifting the schedule, and slots more than the backlog old
// are dropped and counted.
func TestPoissonPacer(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := time.Millisecond
	gaps := []time.Duration{10 * ms, 30 * ms, 5 * ms, 400 * ms, 700 * ms, 100 * ms, 200 * ms, 50 * ms, 50 * ms}
	i := 0
	p := NewPoissonPacer(t0, func() time.Duration { g := gaps[i%len(gaps)]; i++; return g }, time.Second)
	for n, c := range []struct {
		now, intended, wait time.Duration
		missed              int64
	}{
		{0, 10 * ms, 10 * ms, 0},
		{12 * ms, 40 * ms, 28 * ms, 0},
		{100 * ms, 45 * ms, 0, 0}, // late: run at once
		// Slots at 445, 1145 and 1245 ms are more than 1 s before 2300 ms: dropped.
		{2300 * ms, 1445 * ms, 0, 3},
		{2301 * ms, 1495 * ms, 0, 0},
	} {
		intended, wait, missed := p.Next(t0.Add(c.now))
		if got := intended.Sub(t0); got != c.intended || wait != c.wait || missed != c.missed {
			t.Fatalf("call %d at %v: got intended %v wait %v missed %d, want %v %v %d",
				n, c.now, got, wait, missed, c.intended, c.wait, c.missed)
		}
	}
}
