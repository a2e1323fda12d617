// Package runner runs one workload step against an open engine handle: it prepares the
// step, opens one session per worker, runs closed-loop and rate-limited (open-loop) workers
// until the step's stop rule fires, ticks the metrics registry every interval, and audits.
// It sits between workload/engine and the store/progress observers; it never reads the store.
//
// On every tick it takes a /proc sample of the machine, the server's process tree and
// dbperf (with a baseline at the start), and a key-value engine's Properties, for its
// per-interval stalls and L0 files and, before and after the load, its step metrics. It
// measures per-connection CPU through engine.ProcessInfo and, for connections an engine
// opens itself, engine.ConnObserver; then the database size, the audit, and the
// HW-efficiency and noise metrics. Which processes are the server and which disks hold
// the data come from internal/session as HWTargets. The Observer is called on the
// controller goroutine, never a worker's.
//
// The Runner's options:
//
//   - Think: closed-loop workers pause after every operation (`dbperf sweep --think`),
//     measured as think_us_per_op.
//   - Pin (pin.go, the duet design): each worker's goroutine is locked to its thread, the
//     thread pinned to the point's CPUs; the step's client CPU is its threads' own
//     (RUSAGE_THREAD) and its HW is marked Shared. Procs shares GOMAXPROCS between the
//     runners whose steps run at once.
//   - Profiler (profiler.go): an optional hook, started once a step's sessions are open
//     and stopped when its load ends, given each session's role, node and server process
//     or thread id, and, if it is a ClientThreader, a pinned step's worker threads.
//     `dbperf run --cpu-profile` is the cli's, over internal/profile.
//   - Spread (spread.go): a step's sessions are placed on a cluster's nodes in a stable
//     order (every node in turn, or only read-only groups' on the standbys), each opened
//     through its node's handle, its CPU read from its node's processes, the placement in
//     the step's note.
//
// Sequence (sequence.go) is the policy of a run's steps: each step runs while those
// before it ended ok; the first failed or interrupted one stops the sequence, and every
// later step goes to the StepSink as skipped, "not run: <first error>"; the status and
// first error are kept; a sink error ends it at once. Step runs one step at a time (an
// interleaved sweep's trials), Run and Runner.RunSteps run all, and Stop stops it from
// outside.
//
// Conventions: an operation's error fails the step (unlike the reference, which ignored
// them: reference §5.1), and a failed step makes the following steps skipped. A normal
// stop (time up, quota done) lets in-flight operations finish and counts them; only an
// interrupt cancels the operation's context.
//
// The client's hot path, runtime side (the socket side is engine/blockconn's): the
// runner raises GOMAXPROCS to workers + 1 for a step (raiseProcs; since Go 1.26 a
// goroutine in a system call keeps its P, so with 2 Ps a third worker would wait for
// sysmon), and every worker yields (runtime.Gosched) every 5 ms (yieldEvery: sysmon takes
// the P of a goroutine seen on it for 10 ms, even in a system call, and moves the
// goroutine to another thread).
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/hwstat"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/workload"
)

// Observer receives a step's progress as it happens. Its methods are called from the
// runner's controller goroutine, never from a worker, so a slow observer delays a tick,
// not an operation.
type Observer interface {
	StepStarted(name string, load workload.Load)
	Interval(name string, iv metrics.Interval)
}

// Runner runs steps on one handle.
type Runner struct {
	Handle engine.Handle
	// Interval is the report interval (one metrics.Interval per tick).
	Interval time.Duration
	// Sampler reads /proc on every tick (nil: nothing is sampled, client CPU is 0).
	Sampler *hwstat.Sampler
	// HW says which server processes and devices the Sampler watches.
	HW HWTargets
	// Think, when > 0, is a client think time: every closed-loop worker (a workload.Group
	// with Rate 0; never a paced one) pauses after each operation, outside the operation's
	// timed service time, for Think on average (a timer's lateness is taken off the next
	// pauses), so a closed-loop step's throughput drops by a factor that follows from the
	// service times measured (MetricServiceUSPerOp). The pauses actually taken are
	// measured (metrics.MetricThinkUSPerOp). A Think up to spinThink is busy-waited (the
	// worker's CPU, so its client CPU per op grows by Think too), a longer one sleeps on a
	// timer. 0: no pause; the worker's loop then costs one predictable branch more per
	// operation (and, think or not, one addition to its service time).
	Think time.Duration
	// Pin, when set, pins the step's workers to CPUs of their own beside another runner's
	// step (the duet design, Pin).
	Pin *Pin
	// Profiler, when set, is started and stopped around each step's timed load
	// (profiler.go).
	Profiler Profiler
	// Spread, when set, puts each step's sessions on the nodes of a cluster (spread.go)
	// instead of all on Handle's server; each step's note says where they went.
	Spread *Spread
	// Start, when set, is shared with the runners whose steps run at the same time (the
	// duet): the step's timed load starts when every one of them is ready (StartGate).
	// Each of their next steps, and only that, must be run once with it.
	Start *StartGate
}

// spinThink is the longest Runner.Think that is busy-waited. A timer on the 2-core VM fires
// about a millisecond late, so a shorter sleep would be taken as a millisecond every few
// operations (the lateness is made up by skipping pauses), a pattern nothing like the
// think time asked for. A spin of a few µs after every operation is the pause asked for,
// every time. It does not keep the operations' own cost as it was: on the VM a 5 µs spin
// made managed PostgreSQL's queries 16–17% cheaper. So the effect of a think time is
// predicted from the service times measured (MetricServiceUSPerOp), not from the rate
// without it alone (scripts/comparisons.py).
const spinThink = 50 * time.Microsecond

type worker struct {
	w   workload.Worker
	s   engine.Session
	rec *metrics.Recorder
	// mix and recs: a worker whose ops are of several kinds (workload.Mixer) records
	// each op under its kind's label, recs[mix.LastLabel()]; nil otherwise.
	mix   workload.Mixer
	recs  []*metrics.Recorder
	group *workload.Group
	id    int
	// node is the cluster node serving s (Runner.Spread; 0: Handle's server).
	node int
	// think is the pause after each operation (Runner.Think for a closed-loop worker, else
	// 0); paused is the time the completed pauses took and pauses how many there were,
	// written by the worker's goroutine and read after it ended.
	think  time.Duration
	paused time.Duration
	pauses int64
	// served is the timed service time of the worker's completed operations and served
	// how many (MetricServiceUSPerOp), written when its loop ends.
	served    time.Duration
	servedOps int64
	// threadCPU is the CPU the worker's pinned thread used (Runner.Pin); pinOK whether it
	// was pinned.
	threadCPU time.Duration
	pinOK     bool
	// tid is the worker's pinned thread (Runner.Pin), 0 unpinned.
	tid int
}

// Run runs one step and returns its result. The result's status is interrupted when ctx
// was cancelled (Ctrl-C), failed when the engine, the setup or the audit failed, and ok
// otherwise; everything measured up to that point is in the result either way.
func (r *Runner) Run(ctx context.Context, step workload.Step, obs Observer) metrics.StepResult {
	res := r.run(ctx, step, obs)
	if res.Status == metrics.StatusFailed {
		res.Error = r.serverGone(res.Error)
	}
	measured := res.Metrics // a key-value step's metrics (kvMetrics) and the think time, set by run
	res.Metrics = res.Efficiency()
	maps.Copy(res.Metrics, res.Noise())
	maps.Copy(res.Metrics, measured)
	return res
}

func (r *Runner) run(ctx context.Context, step workload.Step, obs Observer) metrics.StepResult {
	res := metrics.StepResult{Name: step.Name(), StartedAt: time.Now()}
	gate := r.Start
	defer func() { gate.leave() }() // a step that fails before its load starts lets the others go
	fail := func(err error) metrics.StepResult {
		res.Status = metrics.StatusFailed
		if ctx.Err() != nil {
			res.Status = metrics.StatusInterrupted
		}
		res.Error = err.Error()
		return res
	}
	skipped := func(err error) metrics.StepResult {
		res.Status, res.Error = metrics.StatusSkipped, err.Error()
		return res
	}
	if err := step.Prepare(ctx, r.Handle); err != nil {
		if errors.Is(err, workload.ErrSkip) {
			return skipped(err)
		}
		return fail(fmt.Errorf("prepare: %w", err))
	}
	load, err := step.Load(ctx, r.Handle)
	if err != nil {
		if errors.Is(err, workload.ErrSkip) {
			return skipped(err)
		}
		return fail(fmt.Errorf("load: %w", err))
	}
	res.Kind, res.Primary = load.Kind, load.Primary
	if load.Duration <= 0 && !hasUntilDone(load) {
		return fail(errors.New("load has neither a duration nor a group to wait for"))
	}

	kvBefore, kvKnown := r.kvProps(ctx)
	reg := metrics.NewRegistry(time.Now())
	var place [][]int
	if _, sql := r.Handle.(engine.SQL); sql && r.Spread != nil {
		place = r.Spread.Place(load.Groups)
	}
	workers, err := r.openWorkers(ctx, load, place, reg)
	defer closeWorkers(workers)
	if err != nil {
		return fail(err)
	}

	if r.Pin != nil {
		r.Pin.Procs.add(len(workers))
		defer r.Pin.Procs.done(len(workers))
	} else if raiseProcs(len(workers)) {
		defer runtime.SetDefaultGOMAXPROCS()
	}
	probe := r.newProbe(workers)
	profiling, profNote, err := r.startProfile(ctx, step.Name(), workers)
	if err != nil {
		return fail(err)
	}
	if gate != nil {
		gate.wait(ctx)
		gate = nil
	}
	start := time.Now()
	kvt := r.newKVTicker(kvBefore, kvKnown, start)
	probe.start()
	res.StartedAt = start
	reg.Restart(start)
	obs.StepStarted(step.Name(), load)

	stopCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	doneCh := make(chan struct{}, len(workers))
	errCh := make(chan error, 1)
	var wg sync.WaitGroup
	untilDone := 0
	for _, w := range workers {
		if w.group.UntilDone {
			untilDone++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Pin != nil {
				p := pinThread(&r.Pin.CPUs)
				w.tid = p.tid
				defer func() { w.threadCPU, w.pinOK = p.unpin(), p.ok }()
			}
			work(stopCtx, probe.opContext(ctx, w), w, start, load.Duration, doneCh, errCh)
		}()
	}

	runErr := r.control(ctx, load, start, untilDone, reg, obs, step.Name(), doneCh, errCh, probe, kvt)
	stopWorkers()
	wg.Wait()
	end := time.Now()
	// The last, partial interval.
	iv := reg.Tick(end)
	probe.tick(&iv)
	kvt.tick(context.WithoutCancel(ctx), &iv, end)
	obs.Interval(step.Name(), iv)
	if profiling {
		if ct, ok := r.Profiler.(ClientThreader); ok && r.Pin != nil {
			tids := make([]int, 0, len(workers))
			for _, w := range workers {
				if w.tid != 0 {
					tids = append(tids, w.tid)
				}
			}
			ct.ClientThreads(step.Name(), tids)
		}
		if err := r.Profiler.Stop(context.WithoutCancel(ctx), step.Name()); err != nil {
			profNote = err.Error()
		}
	}

	res.Seconds = end.Sub(start).Seconds()
	res.Labels = reg.Totals()
	if kvt != nil && kvt.at.Equal(end) { // the last tick read the properties after the load
		res.Metrics = kvMetrics(kvBefore, kvt.last(), res.Seconds, load, res.Labels)
	}
	if us, ok := thinkPerOp(workers, load.Primary); ok {
		if res.Metrics == nil {
			res.Metrics = map[string]float64{}
		}
		res.Metrics[metrics.MetricThinkUSPerOp] = us
	}
	if us, ok := servicePerOp(workers, load.Primary); ok {
		if res.Metrics == nil {
			res.Metrics = map[string]float64{}
		}
		res.Metrics[metrics.MetricServiceUSPerOp] = us
	}
	if n, ok := step.(workload.Noter); ok {
		res.Note = n.Note()
	}
	if place != nil {
		res.Note = joinNote(res.Note, r.Spread.placementNote(load.Groups, place))
	}
	probe.finish(&res, len(workers))
	if profNote != "" {
		res.Note = joinNote(res.Note, profNote)
	}
	if r.Pin != nil {
		pinnedCPU(&res, workers)
	}
	switch {
	case ctx.Err() != nil:
		res.Status = metrics.StatusInterrupted
		res.Error = "interrupted"
		return res
	case runErr != nil:
		res.Status = metrics.StatusFailed
		res.Error = runErr.Error()
		return res
	}
	r.dbSize(ctx, &res)
	detail, err := step.Verify(ctx, r.Handle)
	if err != nil {
		res.Audit = metrics.Audit{Status: "failed", Detail: err.Error()}
		return fail(fmt.Errorf("audit: %w", err))
	}
	res.Audit = metrics.Audit{Status: "ok", Detail: detail}
	res.Status = metrics.StatusOK
	return res
}

// control runs the stop rule and the interval ticks until the step must end, sampling
// the machine on each tick. It returns the first worker error, if any.
func (r *Runner) control(ctx context.Context, load workload.Load, start time.Time, untilDone int,
	reg *metrics.Registry, obs Observer, name string, doneCh <-chan struct{}, errCh <-chan error, probe *probe, kvt *kvTicker) error {
	ticker := time.NewTicker(r.Interval)
	defer ticker.Stop()
	var durC, minC <-chan time.Time
	if load.Duration > 0 {
		t := time.NewTimer(time.Until(start.Add(load.Duration)))
		defer t.Stop()
		durC = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-durC:
			return nil
		case err := <-errCh:
			return err
		case <-doneCh:
			untilDone--
			if untilDone == 0 {
				rest := time.Until(start.Add(load.MinDuration))
				if rest <= 0 {
					return nil
				}
				t := time.NewTimer(rest)
				defer t.Stop()
				minC = t.C
			}
		case <-minC:
			return nil
		case now := <-ticker.C:
			iv := reg.Tick(now)
			probe.tick(&iv)
			kvt.tick(ctx, &iv, now)
			obs.Interval(name, iv)
		}
	}
}

func hasUntilDone(l workload.Load) bool {
	for _, g := range l.Groups {
		if g.UntilDone && len(g.Workers) > 0 {
			return true
		}
	}
	return false
}

// openWorkers opens every worker's session, on the node place says (nil: on Handle's
// server), and initialises the workers.
func (r *Runner) openWorkers(ctx context.Context, load workload.Load, place [][]int, reg *metrics.Registry) ([]*worker, error) {
	var out []*worker
	for gi := range load.Groups {
		g := &load.Groups[gi]
		perWorker := 0.0
		if len(g.Workers) > 0 {
			perWorker = g.TargetPerSec() / float64(len(g.Workers))
		}
		for i, w := range g.Workers {
			// A SQL engine's worker gets its own session; a key-value engine's opens its
			// KVSession in Init from the KV its step captured (s is nil).
			var s engine.Session
			node := 0
			if sh, ok := r.Handle.(engine.SQL); ok {
				var err error
				if s, node, err = r.session(ctx, sh, place, gi, i); err != nil {
					return out, fmt.Errorf("%s worker %d: open session: %w", g.Label, i+1, err)
				}
			}
			wk := &worker{w: w, s: s, group: g, id: i + 1, node: node}
			if g.Rate == 0 {
				wk.think = r.Think
			}
			out = append(out, wk)
			if err := w.Init(ctx, s); err != nil {
				return out, fmt.Errorf("%s worker %d: init: %w", g.Label, i+1, err)
			}
			spec := metrics.LabelSpec{
				Label: g.Label, Role: g.Role, Unit: metrics.Unit(g.Unit),
				OpenLoop: g.Rate > 0, TargetPerSec: perWorker, Background: g.Background,
				StatementsPerOp: g.StatementsPerOp,
			}
			wk.rec = reg.Recorder(spec)
			if mix, ok := w.(workload.Mixer); ok {
				wk.mix = mix
				for _, l := range mix.OpLabels() {
					spec.Label = l
					wk.recs = append(wk.recs, reg.Recorder(spec))
				}
			}
		}
	}
	return out, nil
}

func closeWorkers(ws []*worker) {
	for _, w := range ws {
		_ = w.w.Close()
		if w.s != nil {
			_ = w.s.Close()
		}
	}
}

// work is one worker's loop. stopCtx stops it from starting another op; opCtx (cancelled
// only on interrupt) is what the op runs under, so an op in flight at a normal stop
// finishes and is counted. A paced worker of a timed step runs only the slots scheduled
// before the step's end (start + dur), so a rate over the step is exactly its target when
// kept up.
func work(stopCtx, opCtx context.Context, w *worker, start time.Time, dur time.Duration, doneCh chan<- struct{}, errCh chan<- error) {
	var pacer *Pacer
	switch {
	case w.group.Rate > 0 && w.group.Gaps != nil:
		pacer = NewPoissonPacer(start, w.group.Gaps(w.id-1), DefaultBacklog)
	case w.group.Rate > 0:
		pacer = NewPacer(start, w.group.Rate, DefaultBacklog)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	report := func(err error) {
		select {
		case errCh <- fmt.Errorf("%s worker %d: %w", w.group.Label, w.id, err):
		default:
		}
	}
	lastYield := start
	// now reads only the monotonic clock (time.Since: one vDSO call, ~35 ns here) where
	// time.Now reads the wall clock too (two, ~60 ns), twice per op; the wall time it
	// carries is start's advanced by the monotonic time since, which is all a latency
	// or a schedule needs.
	now := func() time.Time { return start.Add(time.Since(start)) }
	think := w.think // a local: with no think time, one predictable branch per op
	var overrun time.Duration
	var served time.Duration // locals, stored once at the end: no write to w per op
	var servedOps int64
	defer func() { w.served, w.servedOps = served, servedOps }()
	for stopCtx.Err() == nil {
		// A paced op's intended start is its slot in the schedule; a closed-loop op has
		// none (it starts when it is sent: one clock read fewer per op).
		var intended time.Time
		if pacer != nil {
			in, wait, missed := pacer.Next(now())
			if dur > 0 && in.Sub(start) >= dur {
				return
			}
			if missed > 0 {
				w.rec.Missed(missed)
			}
			if wait > 0 {
				timer.Reset(wait)
				select {
				case <-stopCtx.Done():
					timer.Stop()
					return
				case <-timer.C:
				}
			}
			intended = in
		}
		if err := w.w.Ready(stopCtx); err != nil {
			if stopCtx.Err() == nil {
				report(err)
			}
			return
		}
		if stopCtx.Err() != nil {
			return
		}
		t0 := now()
		rows, err := w.w.Op(opCtx)
		t1 := now()
		if pacer == nil {
			intended = t0
		}
		if errors.Is(err, workload.ErrDone) {
			if w.group.UntilDone {
				doneCh <- struct{}{}
			}
			return
		}
		if err != nil && opCtx.Err() != nil {
			return // interrupted: the op did not complete and is not counted
		}
		rec := w.rec
		if w.mix != nil {
			if i := w.mix.LastLabel(); i >= 0 && i < len(w.recs) {
				rec = w.recs[i]
			}
		}
		rec.Record(intended, t0, t1, rows, err)
		if err != nil {
			report(err)
			return
		}
		served += t1.Sub(t0)
		servedOps++
		if think > 0 {
			// The pause follows t1: it is not the op's time. A timer fires late (on the
			// 2-core VM a 2 ms timer takes 2.2 ms on average, a 100 µs one 1.1 ms), so each
			// pause is shortened by what the pauses before it overran — skipped while they
			// overran by a whole think time — and the mean pause is think, not think plus
			// the lateness. A pause the step's stop cuts short is not counted.
			d := think - overrun
			if think <= spinThink {
				// Busy-wait: a sleep this short would be late by ten times its length and
				// would let the CPUs idle, changing the cost of the operations around it.
				for d > 0 && now().Sub(t1) < d {
				}
				d = 0
			} else if d > 0 {
				timer.Reset(d)
				select {
				case <-stopCtx.Done():
					timer.Stop()
					return
				case <-timer.C:
				}
			}
			t2 := now()
			if d > 0 {
				lastYield = t2 // the worker parked: no yield needed
			}
			pause := t2.Sub(t1)
			overrun += pause - think
			w.paused += pause
			w.pauses++
		}
		if t1.Sub(lastYield) >= yieldEvery {
			runtime.Gosched()
			lastYield = t1
		}
	}
}

// thinkPerOp is metrics.MetricThinkUSPerOp: the mean completed pause of the closed-loop
// workers that think; false when no pause was completed.
func thinkPerOp(ws []*worker, primary string) (float64, bool) {
	return meanUSPerOp(ws, primary, func(w *worker) (time.Duration, int64, bool) {
		return w.paused, w.pauses, w.think > 0
	})
}

// servicePerOp is metrics.MetricServiceUSPerOp: the mean timed service time of the
// closed-loop workers' completed operations; false when none completed.
func servicePerOp(ws []*worker, primary string) (float64, bool) {
	return meanUSPerOp(ws, primary, func(w *worker) (time.Duration, int64, bool) {
		return w.served, w.servedOps, w.group.Rate == 0
	})
}

// meanUSPerOp is a mean in µs over the workers that of says count (their time and how many
// of it): of the primary label's workers, or of all counted workers when the primary label
// has none; false when there is nothing to average.
func meanUSPerOp(ws []*worker, primary string, of func(*worker) (time.Duration, int64, bool)) (float64, bool) {
	var all, prim time.Duration
	var allN, primN int64
	for _, w := range ws {
		d, n, ok := of(w)
		if !ok {
			continue
		}
		all += d
		allN += n
		if w.group.Label == primary {
			prim += d
			primN += n
		}
	}
	if primN > 0 {
		all, allN = prim, primN
	}
	if allN == 0 {
		return 0, false
	}
	return all.Seconds() * 1e6 / float64(allN), true
}

// raiseProcs makes sure every worker can be in a system call at once with one P to spare
// for the rest (the controller, the runtime). Server engines wait for replies in blocking
// system calls (engine/blockconn), and since Go 1.26 a goroutine in a system call keeps
// its P: with GOMAXPROCS = cores, a third worker would wait for sysmon to take a P back
// from one in a system call (up to 10 ms). Measured with 4 workers on 2 cores: 25,000
// round trips/s with 6 Ps, 14,700 with 2. Not more than one spare: every idle P is one
// more thread the scheduler wakes to spin for work whenever a goroutine is readied. It
// is only ever raised, for the step's length; it reports whether it did, and the caller
// then restores the default (runtime.SetDefaultGOMAXPROCS: the GOMAXPROCS environment
// variable, else the CPUs available).
func raiseProcs(workers int) bool {
	if want := workers + 1; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
		return true
	}
	return false
}

// yieldEvery is how often a worker yields to the Go scheduler. Server engines wait for
// replies in blocking system calls (engine/blockconn), so a closed-loop worker's goroutine
// may never park: Go's sysmon then sees the same goroutine on its P for 10 ms
// (forcePreemptNS), takes the P away in the middle of a system call and hands it to
// another thread, so the goroutine hops threads and sysmon polls at 20 µs. Yielding well
// within 10 ms keeps the goroutine on its thread; it costs one scheduler pass per 5 ms.
const yieldEvery = 5 * time.Millisecond

// serverGone names the server in a failed step's error when its main process
// (HWTargets.ServerPID, on this machine) has died: the engine's own error ("unexpected
// postmaster exit", "connection refused") does not say that the server is gone.
//
// A process killed with SIGKILL closes its files (the pipe PostgreSQL's backends watch
// for the postmaster's death) before it is a zombie, so its backends' error can reach the
// client while /proc still shows it running: a failed step's check waits up to 200 ms for
// the process to end (only failed steps pay it).
func (r *Runner) serverGone(msg string) string {
	pid := r.HW.ServerPID
	if pid <= 0 || r.HW.Remote || r.Sampler == nil ||
		strings.Contains(msg, fmt.Sprintf("pid %d)", pid)) { // a cluster's node named already
		return msg
	}
	for i := 0; r.Sampler.Alive(pid); i++ {
		if i == 10 {
			return msg
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("the server (pid %d) is gone: %s", pid, msg)
}
