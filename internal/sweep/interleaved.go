package sweep

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/metrics"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/record"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/session"
	"github.com/dbperf/dbperf/internal/store"
	"github.com/dbperf/dbperf/internal/workload"
	"golang.org/x/sys/unix"
)

// trialPoint is one configuration of an interleaved comparison while it runs: its
// target (kept up across blocks for a managed server, opened afresh per block for an
// embedded engine), the block's planned steps and the runs they are stored in.
type trialPoint struct {
	Point
	cfg    *config.Run
	target *session.Target
	run    *runner.Runner
	steps  []workload.Step
	// stored are the workload's parameters of the point (a key-value engine's differ by
	// profile: the shared workload.Params is resolved again for each point).
	stored map[string]any
	// recs[k] stores slice k+1 of the block's steady steps; recs[0] also every other step.
	recs []*record.Run
	// cpus are the CPUs of the point in this block of a duet ("0", "2-3"), stored with its
	// runs.
	cpus string
	// prof is the point's profiler of the sweep's recording (--cpu-profile) and diag its
	// server's statement and wait collector (--explain), for the target open; nil without.
	prof *probe.CPUProfiler
	diag *probe.Explain
}

// interleaved is one interleaved comparison: its points, the store, and how it slices.
type interleaved struct {
	// sess is the sweep's session options: workload, engine, store, streams; quiet is
	// its Config's.
	sess    session.Options
	prefix  string
	slice   time.Duration
	resolve func(p Point) (*config.Run, error)
	points  []*trialPoint
	rng     *rand.Rand
	prog    *progress.Progress
	quiet   bool
	// duet: the points' trials run at the same time, point i on cpus[i] (DuetCPUs), with
	// procs shared by their runners; byRole (PlacementRole): every point's clients on one
	// of two sets and every server on the other (placement.go).
	duet, byRole bool
	cpus         []unix.CPUSet
	procs        *runner.Procs
	// seed is --seed: the duet's CPU assignments are drawn from it (CPUAssignment).
	seed int64
	// loadOnce (--load-once): once a block has run every step on every point, the later
	// blocks run the steady steps only, on the data it left; loaded says one has.
	loadOnce, loaded bool
	// settle (--settle): each block on kept data begins with the points' cleanup
	// (settle.go); settled says this block's did.
	settle, settled bool
	// sameData (--same-data): after the first block that ran whole, every point runs on a
	// copy of the first point's data (samedata.go); copied says it does.
	sameData, copied bool
	// instances (--instances, 1: one server per point): the blocks run on this many
	// servers of each point in turn (instances.go); instance is the current one's number,
	// from 1, stored with the runs when instances is above 1.
	instances, instance int
	// cpu is the sweep's one perf recording (--cpu-profile), launched before the points'
	// servers start, with a profiler per point's target; records are every run the sweep
	// began, whose steps' profiles are stored once the recording is folded (foldProfiles).
	cpu     *probe.CPU
	records []*record.Run
}

// runBlocks runs blocks randomized blocks of the points (Abedi & Brecht, "Conducting
// Repeatable Experiments in Highly Variable Cloud Computing Environments", ICPE 2017:
// randomized multiple interleaved trials). Every block runs each step once on every point
// before the next step, in a random order of the points drawn per step and slice:
//   - a step that changes the data irreversibly (a load, an index build, a cleanup) is one
//     trial per point and block, on the database that point's block built (fresh tables
//     each block: the workloads' loads drop and create them; an embedded engine gets a
//     fresh directory per block);
//   - a steady step (workload.Steady) is cut into slices of about i.slice, alternating
//     between the points, each slice a Prepare/Load/Verify of the same planned step with a
//     shorter duration.
//
// Slice k of a block is stored in its own run of the point's label (run k holds the
// block's steady steps' slice k; run 1 also every other step), with the parameters
// design, sweep, trial ("b<block>/s<slice>"), block and slice, so reports pair the points'
// trials that ran side by side. Managed servers stay up for the whole comparison, unless
// --same-data or --instances replaces them between two blocks (samedata.go, instances.go).
func (i *interleaved) runBlocks(ctx context.Context, first, blocks int) (lastFailed error, err error) {
	defer func() {
		for _, p := range i.points {
			p.closeTarget()
		}
	}()
	for b := first; b < first+blocks; b++ {
		failed, err := i.block(ctx, b, first+blocks-1)
		if failed != nil {
			lastFailed = failed
		}
		if err != nil {
			return lastFailed, err
		}
		// A block that ran whole leaves every point's data as its steps made it.
		i.loaded = i.loaded || (i.loadOnce && failed == nil)
		if !i.loaded || b == first+blocks-1 {
			continue
		}
		next := instanceOf(b+1, first+blocks-1, i.instances, i.sameData)
		switch {
		case i.sameData && !i.copied:
			err = i.copyData(ctx, max(next, i.instance+1))
		case next > i.instance:
			err = i.renew(ctx, next)
		}
		if err != nil {
			return lastFailed, err
		}
	}
	return lastFailed, nil
}

// block runs block b (of last).
func (i *interleaved) block(ctx context.Context, b, last int) (lastFailed error, err error) {
	// In a duet each point gets other CPUs each block, counterbalanced (CPUAssignment), so
	// a CPU that is slower or busier than the others (interrupts, the hypervisor, its own
	// steal) is charged to every point equally often, and the report can take the
	// assignment out of the ratio's interval.
	var cpuOf []int
	switch {
	case i.byRole:
		cpuOf = CPUAssignment(i.seed, 2, b) // the clients' set and the servers'
	case i.duet:
		cpuOf = CPUAssignment(i.seed, len(i.points), b)
	}
	// Open (embedded: afresh) and plan every point.
	opening := false
	for _, p := range i.points {
		opening = opening || p.target == nil
	}
	for pi, p := range i.points {
		pl := placed{client: -1, server: -1}
		switch {
		case i.byRole:
			pl = placed{client: cpuOf[0], server: cpuOf[1]}
		case i.duet:
			pl = placed{client: cpuOf[pi], server: cpuOf[pi]}
		}
		if err := i.openPoint(ctx, p, pl); err != nil {
			return nil, err
		}
	}
	if opening {
		i.resetSchedules(ctx)
	}
	names := stepNames(i.points[0].steps)
	for _, p := range i.points[1:] {
		if got := stepNames(p.steps); !slices.Equal(got, names) {
			return nil, session.BadInput(fmt.Errorf("sweep points %s and %s plan different steps (%s vs %s): an interleaved comparison needs the same steps on every point; use --design sequential",
				i.points[0].Name(), p.Name(), strings.Join(names, ","), strings.Join(got, ",")))
		}
	}
	if !i.quiet {
		fmt.Fprintf(i.sess.Out, "block %d of %d\n", b, last)
	}
	if err := i.settlePoints(ctx); err != nil {
		return nil, err
	}
	finish := func() error {
		var errs []error
		for _, p := range i.points {
			for _, rec := range p.recs {
				if err := rec.Finish(); err != nil {
					errs = append(errs, err)
				}
				if f := session.Failure(rec); f != nil {
					lastFailed = f
				}
			}
		}
		return errors.Join(errs...)
	}
	steady := make([]time.Duration, len(names))
	for si, st := range i.points[0].steps {
		steady[si] = workload.SteadyTime(st)
	}
	for _, tr := range Schedule(steady, len(i.points), i.slice, i.duet, i.rng) {
		interrupted, err := i.trial(ctx, b, tr, names)
		if err != nil {
			return lastFailed, errors.Join(err, finish())
		}
		if interrupted != "" {
			// Ctrl-C: every run of the block keeps what it measured.
			for _, q := range i.points {
				for _, r := range q.recs {
					r.Steps.Stop(metrics.StatusInterrupted, "interrupted")
				}
			}
			if err := finish(); err != nil {
				return lastFailed, err
			}
			return lastFailed, &session.InterruptedError{Err: fmt.Errorf("interrupted in block %d at %s: every step measured so far is kept", b, interrupted)}
		}
	}
	return lastFailed, finish()
}

// placed is where a duet runs a point in a block: the indexes into interleaved.cpus of its
// clients' set and its server's (-1: not a duet).
type placed struct{ client, server int }

// openPoint opens point p for block b (an embedded engine afresh, unless --load-once
// keeps its data), pins its clients and server to their CPU sets in a duet and plans its
// steps.
func (i *interleaved) openPoint(ctx context.Context, p *trialPoint, pl placed) error {
	pc, err := i.resolve(p.Point)
	if err != nil {
		return err
	}
	pc.EngineVersion, pc.Label, pc.Think, pc.Clients = p.Version, p.Label, p.Think, p.Clients
	pc.ReportInterval = SliceInterval(i.slice, pc.ReportInterval)
	if pc.WorkDir != "" {
		// The points are open at once: each in a directory of its own under --workdir.
		pc.WorkDir = filepath.Join(pc.WorkDir, strings.ReplaceAll(p.Name(), "/", "-"))
	}
	p.cfg = pc
	if p.target != nil && i.sess.Engine.Meta().Embedded && !i.loaded {
		p.closeTarget()
	}
	if p.target == nil {
		if !pc.Quiet {
			fmt.Fprintf(i.sess.Out, "opening %s for %s\n", pc.Engine, p.Name())
		}
		if p.target, err = session.Open(ctx, i.sess.With(pc)); err != nil {
			return fmt.Errorf("sweep point %s: %w", p.Name(), err)
		}
		p.run = p.target.Runner(pc)
		i.attachProbes(ctx, p)
	}
	if i.duet {
		cpus, srv := &i.cpus[pl.client], &i.cpus[pl.server]
		p.run.Pin = &runner.Pin{CPUs: *cpus, Procs: i.procs}
		p.cpus = CPUList(cpus)
		if i.byRole {
			p.cpus = "clients " + CPUList(cpus) + ", server " + CPUList(srv)
		}
		// Backends and threads started later inherit the affinity of the process or
		// thread that starts them.
		if p.target.ServerPID != 0 {
			if err := PinTree(p.target.Sampler, p.target.ServerPID, srv); err != nil {
				return fmt.Errorf("sweep point %s: pin the server to its CPUs: %w", p.Name(), err)
			}
		}
	}
	if p.steps, err = i.sess.Workload.Plan(pc, i.sess.Params); err != nil {
		return session.BadInput(err)
	}
	if i.loaded {
		// --load-once after a whole block: the steady steps alone, planned as a run
		// on kept data is (the workload reads what the earlier steps left).
		pc.Steps, pc.DataKept = nil, true
		for _, st := range p.steps {
			if workload.SteadyTime(st) > 0 {
				pc.Steps = append(pc.Steps, st.Name())
			}
		}
		if len(pc.Steps) == 0 {
			return session.BadInput(fmt.Errorf("--load-once: no steady step among %s to repeat after the first block; drop --load-once", strings.Join(stepNames(p.steps), ",")))
		}
		if p.steps, err = i.sess.Workload.Plan(pc, i.sess.Params); err != nil {
			return session.BadInput(err)
		}
	}
	p.stored = maps.Clone(i.sess.Params.Stored())
	p.recs = nil
	return nil
}

// trial runs one entry of block b's schedule: the step's slice on its point, or on every
// point at once in a duet, each stored in the point's run of that slice. interrupted
// names where Ctrl-C stopped it ("" when it did not); err is the store's.
func (i *interleaved) trial(ctx context.Context, b int, tr Trial, names []string) (interrupted string, err error) {
	steps := make([]workload.Step, len(tr.Points))
	recs := make([]*record.Run, len(tr.Points))
	var where []string
	for j, pj := range tr.Points {
		p := i.points[pj]
		steps[j] = p.steps[tr.Step]
		if tr.Slices > 1 {
			steps[j] = &sliceStep{Step: steps[j], slice: tr.Slice, of: tr.Slices}
		}
		if recs[j], err = i.record(ctx, p, b, tr.Slice-1); err != nil {
			return "", err
		}
		if p.prof != nil {
			p.prof.SetRun(recs[j].ID()) // the trial's window is stored with its run
		}
		where = append(where, fmt.Sprintf("%s (run %d)", p.Name(), recs[j].ID()))
	}
	what := names[tr.Step]
	if tr.Slices > 1 {
		what = fmt.Sprintf("%s slice %d of %d", what, tr.Slice, tr.Slices)
	}
	if !i.quiet {
		at := ""
		if len(tr.Points) > 1 {
			at = " at once"
		}
		fmt.Fprintf(i.sess.Out, "  %s on %s%s\n", what, strings.Join(where, ", "), at)
	}
	// Each run's steps follow runner.Sequence's policy (a step after a failed or
	// interrupted one is stored skipped); the sink's error is the store's.
	errs := make([]error, len(tr.Points))
	if len(tr.Points) == 1 {
		errs[0] = recs[0].Steps.Step(ctx, i.points[tr.Points[0]].run, tr.Step, steps[0], recs[0].Sink(i.sess.Err, i.prog))
	} else {
		// The duet: every point's trial at once, each on its own CPUs, with no live line
		// (the points would share it), their timed loads started together.
		gate := runner.NewStartGate(len(tr.Points))
		for _, pj := range tr.Points {
			i.points[pj].run.Start = gate
		}
		var wg sync.WaitGroup
		for j, pj := range tr.Points {
			wg.Add(1)
			go func() {
				defer wg.Done()
				quiet := progress.New(i.sess.Out, false, true)
				errs[j] = recs[j].Steps.Step(ctx, i.points[pj].run, tr.Step, steps[j], recs[j].Sink(i.sess.Err, quiet))
			}()
		}
		wg.Wait()
		for _, pj := range tr.Points {
			i.points[pj].run.Start = nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	for j, pj := range tr.Points {
		p, rec := i.points[pj], recs[j]
		switch rec.Steps.Status() {
		case metrics.StatusInterrupted:
			interrupted = what + " on " + p.Name()
		case metrics.StatusFailed:
			// A failed step skips the point's following steps in every run of the block.
			for _, r := range p.recs {
				r.Steps.Stop(metrics.StatusFailed, rec.Steps.Err())
			}
		}
	}
	return interrupted, nil
}

// record is the run that stores slice k (from 0) of point p's block b, begun on first use.
func (i *interleaved) record(ctx context.Context, p *trialPoint, b, k int) (*record.Run, error) {
	for len(p.recs) <= k {
		n := len(p.recs)
		design := Interleaved
		if i.duet {
			design = Duet
		}
		extra := map[string]any{
			store.ParamDesign: design, store.ParamSweep: i.prefix,
			store.ParamTrial: fmt.Sprintf("b%d/s%d", b, n+1), store.ParamBlock: b, store.ParamSlice: n + 1,
		}
		if p.cpus != "" {
			extra[store.ParamCPUs] = p.cpus
		}
		if i.loadOnce {
			extra[store.ParamLoadOnce] = true
		}
		if i.settled {
			extra[store.ParamSettle] = true
		}
		if i.copied {
			extra[store.ParamSameData] = true
		}
		if i.instances > 1 {
			extra[store.ParamInstance] = i.instance
		}
		steps := p.steps
		if n > 0 {
			steps = nil // a later slice's run holds the steady steps only
			for _, s := range p.steps {
				if workload.SteadyTime(s) > 0 {
					steps = append(steps, s)
				}
			}
		}
		rec, err := record.Begin(ctx, i.sess.Store, p.target.Meta(p.cfg, i.sess.Workload, p.stored, steps, extra), i.sess.Record)
		if err != nil {
			return nil, session.BadInput(err)
		}
		// An earlier failure of the point in this block applies to the new run too.
		if n > 0 && p.recs[0].Steps.Stopped() {
			rec.Steps.Stop(p.recs[0].Steps.Status(), p.recs[0].Steps.Err())
		}
		if p.diag != nil {
			rec.Diag = p.diag.Take
		}
		p.recs = append(p.recs, rec)
		i.records = append(i.records, rec)
	}
	return p.recs[k], nil
}

// attachProbes gives point p's runner, for the target just opened, its probes: a
// profiler of the sweep's recording (--cpu-profile; the point's server told apart by its
// process tree) and its server's statement and wait collector (--explain), as dbperf run
// attaches them to its one target.
func (i *interleaved) attachProbes(ctx context.Context, p *trialPoint) {
	var profs probe.Set
	p.prof, p.diag = nil, nil
	if i.cpu != nil {
		p.prof = i.cpu.Profiler(p.target.HW.ServerPID, p.run.Handle)
		p.target.Env[probe.EnvCPU] = probe.CPUNote(session.CPUOptions(p.cfg))
		profs.Add("cpu profile", p.prof)
	}
	if dc := session.OpenExplain(ctx, i.sess.With(p.cfg), p.target); dc != nil {
		p.diag = dc
		profs.Add("explain", dc)
		pi, ok := p.run.Handle.(engine.ProcessInfo)
		profs.Extra = append(profs.Extra, dc.Session(ok && pi.Local()))
	}
	if profs.Len() > 0 {
		p.run.Profiler = &profs
	}
}

// closeTarget closes the point's target and its statement collector.
func (p *trialPoint) closeTarget() {
	if p.diag != nil {
		_ = p.diag.Close()
		p.diag = nil
	}
	if p.target != nil {
		p.target.Close()
		p.target = nil
	}
}

// foldProfiles folds the sweep's recording once its blocks are done (--cpu-profile) and
// stores each trial's step's profiles with its run. An interrupted sweep's are not folded
// (perf's files are removed), said on stderr, as is a fold that fails; only a failing
// store write is an error.
func (i *interleaved) foldProfiles(ctx context.Context) error {
	if i.cpu == nil {
		return nil
	}
	defer i.cpu.Close()
	if ctx.Err() != nil {
		fmt.Fprintln(i.sess.Err, "dbperf: --cpu-profile: interrupted: the trials' CPU profiles were not folded")
		return nil
	}
	byStep, err := i.cpu.Fold(ctx)
	if err != nil {
		fmt.Fprintf(i.sess.Err, "dbperf: --cpu-profile: %v\n", err)
	}
	var errs []error
	for _, rec := range i.records {
		// The run is finished (its block's end): writes of its own, not the run's.
		errs = append(errs, rec.StoreFoldedProfiles(ctx, byStep))
	}
	return errors.Join(errs...)
}

// stepNames are the steps' names, in order.
func stepNames(steps []workload.Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Name()
	}
	return out
}

// sliceStep is one slice of a steady step: the step itself with 1/of of its time. Its
// audit runs after the last slice only (each is a full check of the tables, which would
// otherwise cost a large table's scan per slice).
type sliceStep struct {
	workload.Step
	slice, of int
}

func (s *sliceStep) Load(ctx context.Context, h engine.Handle) (workload.Load, error) {
	l, err := s.Step.Load(ctx, h)
	if err == nil && l.Duration > 0 {
		l.Duration /= time.Duration(s.of)
	}
	return l, err
}

func (s *sliceStep) Verify(ctx context.Context, h engine.Handle) (string, error) {
	if s.slice < s.of {
		return fmt.Sprintf("slice %d of %d: audited after the last slice", s.slice, s.of), nil
	}
	return s.Step.Verify(ctx, h)
}

// Note forwards the step's note (workload.Noter).
func (s *sliceStep) Note() string {
	if n, ok := s.Step.(workload.Noter); ok {
		return n.Note()
	}
	return ""
}

// resetSchedules reschedules the periodic work of every point's managed server at once
// (engine.ScheduleResetter: PostgreSQL's autovacuum launcher), once the points' servers
// are all up. The sweep starts them one after another, up to seconds apart, and each
// server's launcher counts from its start, so the servers would vacuum the same table
// that far apart; a slice holding one vacuum and not the other is off by several percent
// (docs/measurements/2026-11-29-servers-together.md). Starting the servers together
// instead made identical servers differ for their whole lives (the same document). A
// server that cannot be reset is said on stderr; the sweep goes on.
func (i *interleaved) resetSchedules(ctx context.Context) {
	if !i.sess.Config.Managed {
		return // the user's servers: their configuration is not dbperf's to reload
	}
	errs := make([]error, len(i.points))
	var wg sync.WaitGroup
	for pi, p := range i.points {
		r, ok := p.target.Handle.(engine.ScheduleResetter)
		if !ok {
			continue
		}
		wg.Go(func() { errs[pi] = r.ResetSchedules(ctx) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return // Ctrl-C: the sweep ends, and says so itself
	}
	for pi, err := range errs {
		if err != nil {
			fmt.Fprintf(i.sess.Err, "dbperf: sweep point %s: its server's autovacuum keeps its own clock: %v\n", i.points[pi].Name(), err)
		}
	}
}
