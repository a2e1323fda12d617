package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/fleet/sweepq"
	"github.com/dbperf/dbperf/internal/probe"
	"github.com/dbperf/dbperf/internal/progress"
	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/runner"
	"github.com/dbperf/dbperf/internal/session"
)

// Options are a sweep to run: its points, how a point's configuration is resolved, and
// the design.
type Options struct {
	// Session is the sweep's: Config is the sweep's own configuration (its --repeat,
	// --seed, --quiet, --cpu-profile), each point's runs get Session.With the point's.
	Session session.Options
	Points  []Point
	// Resolve is the configuration of one point (the sweep's, with the point's profile,
	// --vary values and node latency).
	Resolve func(Point) (*config.Run, error)
	// Prefix is the sweep's label, before each point's name.
	Prefix string
	// Design is Interleaved, Sequential or Duet; a sweep of one point is sequential.
	Design string
	// Slice is the interleaved designs' slice of a steady step (0: whole steps).
	Slice time.Duration
	// LoadOnce (--load-once): the interleaved designs run the data-changing steps in
	// their first block only. Resume (--resume) skips what is stored finished.
	LoadOnce, Resume bool
	// Settle (--settle, with LoadOnce): before every block on kept data each point's
	// engine reduces its writeback debt (settle.go).
	Settle bool
	// SameData (--same-data, with LoadOnce; managed servers of one version): once the
	// first block has run, every point's server is replaced by one started from a
	// physical copy of the first point's data (samedata.go).
	SameData bool
	// Instances (--instances, with LoadOnce; 1 or 0: one server per point): the blocks
	// are split into this many runs of consecutive blocks, and between two every point's
	// server is replaced by one started from a copy of its data (instances.go).
	Instances int
	// Placement is the duet's --duet-placement: PlacementPoint (the default, "" too) or
	// PlacementRole (placement.go).
	Placement string
}

// Run runs the points in the design asked for and returns the points' finished runs, a
// group each (the compared groups), and the error of the last run with a failed step (a
// *session.StepFailedError); err is an interruption (a *session.InterruptedError saying
// how to resume), bad input or the environment's, which ends the sweep.
func Run(ctx context.Context, o Options) (groups []report.Group, lastFailed, err error) {
	if o.Design != Sequential && len(o.Points) > 1 {
		return runInterleaved(ctx, o)
	}
	return runSequential(ctx, o)
}

// runInterleaved runs the points in randomized blocks (interleaved.runBlocks), --repeat
// blocks (less those a --resume finds stored), and returns the points' finished runs.
func runInterleaved(ctx context.Context, o Options) ([]report.Group, error, error) {
	cfg, out := o.Session.Config, o.Session.Out
	first, blocks := 1, cfg.Repeat
	if o.Resume {
		var labels []string
		for _, p := range o.Points {
			labels = append(labels, p.Label)
		}
		done, maxBlock, err := BlocksDone(ctx, o.Session.Store, labels)
		if err != nil {
			return nil, nil, err
		}
		first, blocks = maxBlock+1, cfg.Repeat-done
		if !cfg.Quiet {
			fmt.Fprintf(out, "sweep %s: %d of %d blocks stored finished, %d to run\n", o.Prefix, min(done, cfg.Repeat), cfg.Repeat, max(blocks, 0))
		}
	}
	il, err := newInterleaved(o)
	if err != nil {
		return nil, nil, err
	}
	if !cfg.Quiet && blocks > 0 {
		var names []string
		for _, p := range o.Points {
			names = append(names, p.Name())
		}
		switch {
		case il.duet && il.byRole:
			fmt.Fprintf(out, "sweep %s: %s in a duet, %s of every step on all points at once, every point's clients on one CPU set and every server on the other\n", o.Prefix, strings.Join(names, ", "), plural(max(blocks, 0), "block"))
		case il.duet:
			fmt.Fprintf(out, "sweep %s: %s in a duet, %s of every step on all points at once, each point on CPUs of its own\n", o.Prefix, strings.Join(names, ", "), plural(max(blocks, 0), "block"))
		default:
			fmt.Fprintf(out, "sweep %s: %s interleaved, %s of every step in a random order each\n", o.Prefix, strings.Join(names, ", "), plural(max(blocks, 0), "block"))
		}
		if asked := o.Session.Config.ReportInterval; SliceInterval(o.Slice, asked) != asked {
			fmt.Fprintf(out, "sweep %s: measurement intervals of %s, five to a %s slice (%s would not fit two in one)\n", o.Prefix, SliceInterval(o.Slice, asked), o.Slice, asked)
		}
	}
	var lastFailed error
	if blocks > 0 {
		if lastFailed, err = il.run(ctx, first, blocks); err != nil {
			return nil, lastFailed, err
		}
	}
	groups, err := finishedGroups(ctx, o)
	return groups, lastFailed, err
}

// newInterleaved is the interleaved (or duet) comparison of o's points.
func newInterleaved(o Options) (*interleaved, error) {
	cfg := o.Session.Config
	il := &interleaved{sess: o.Session, prefix: o.Prefix,
		slice: o.Slice, resolve: o.Resolve, quiet: cfg.Quiet, loadOnce: o.LoadOnce, settle: o.Settle, sameData: o.SameData, instances: max(o.Instances, 1), instance: 1, seed: cfg.Seed,
		// The blocks' orders come from --seed, so a sweep can be repeated exactly.
		rng:  rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		prog: progress.New(o.Session.Out, o.Session.IsTerminal, cfg.Quiet)}
	for _, p := range o.Points {
		il.points = append(il.points, &trialPoint{Point: p})
	}
	if o.Design == Duet {
		sets := len(o.Points)
		if o.Placement == PlacementRole { // a server engine's (Asked.KindProblems)
			sets, il.byRole = 2, true
		}
		cpus, err := DuetCPUs(sets)
		if err != nil {
			return nil, session.BadInput(err)
		}
		il.duet, il.cpus, il.procs = true, cpus, &runner.Procs{}
	}
	return il, nil
}

// run runs blocks blocks from first, with the sweep's one CPU recording (--cpu-profile)
// folded after the last.
func (i *interleaved) run(ctx context.Context, first, blocks int) (lastFailed, err error) {
	cfg := i.sess.Config
	// --cpu-profile: one recording for the sweep, sampling before the points' servers
	// start (probe.Launch's reason), folded once after the last block.
	if rec, err := probe.Launch(ctx, session.CPUOptions(cfg)); err != nil {
		fmt.Fprintf(i.sess.Err, "dbperf: no CPU profiles: %v\n", err)
	} else if rec != nil {
		if i.cpu, err = probe.NewCPU(session.CPUOptions(cfg), rec); err != nil {
			_ = rec.Close()
			return nil, session.BadInput(err)
		}
	}
	lastFailed, err = i.runBlocks(ctx, first, blocks)
	if perr := i.foldProfiles(ctx); perr != nil && err == nil {
		err = perr
	}
	if ie, ok := session.Interrupted(err); ok {
		return lastFailed, &session.InterruptedError{Err: fmt.Errorf("sweep interrupted: %w; resume with --label %s --resume", ie, i.prefix)}
	}
	return lastFailed, err
}

// finishedGroups are the points' finished runs, a group each (none for a point without).
func finishedGroups(ctx context.Context, o Options) ([]report.Group, error) {
	var groups []report.Group
	for _, p := range o.Points {
		ids, err := sweepq.FinishedRuns(ctx, o.Session.Store, p.Label)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			groups = append(groups, report.Group{Name: p.Name(), RunIDs: ids})
		}
	}
	return groups, nil
}

// runSequential runs each point's --repeat runs in turn, points in order (--design
// sequential; also a sweep of one point).
func runSequential(ctx context.Context, o Options) ([]report.Group, error, error) {
	cfg, st, out := o.Session.Config, o.Session.Store, o.Session.Out
	var groups []report.Group
	var lastFailed error
	for i, pt := range o.Points {
		var ids []int64
		var err error
		if o.Resume {
			if ids, err = sweepq.FinishedRuns(ctx, st, pt.Label); err != nil {
				return nil, lastFailed, err
			}
		}
		todo := cfg.Repeat - len(ids)
		if !cfg.Quiet {
			if todo <= 0 {
				fmt.Fprintf(out, "sweep point %d of %d, %s: %d finished runs stored, skipped\n", i+1, len(o.Points), pt.Name(), len(ids))
			} else {
				fmt.Fprintf(out, "sweep point %d of %d, %s (label %s)\n", i+1, len(o.Points), pt.Name(), pt.Label)
			}
		}
		if todo > 0 {
			got, failed, err := runPoint(ctx, o, pt, todo)
			ids = append(ids, got...)
			if failed != nil {
				lastFailed = failed
			}
			if err != nil {
				return nil, lastFailed, err
			}
		}
		if len(ids) > 0 {
			groups = append(groups, report.Group{Name: pt.Name(), RunIDs: ids})
		}
	}
	return groups, lastFailed, nil
}

// runPoint runs todo repeats of point pt (session.Repeat).
func runPoint(ctx context.Context, o Options, pt Point, todo int) (ids []int64, lastFailed, err error) {
	pc, err := o.Resolve(pt)
	if err != nil {
		return nil, nil, err // checked before the sweep for every point
	}
	pc.EngineVersion, pc.Label = pt.Version, pt.Label
	pc.Think, pc.Clients = pt.Think, pt.Clients
	ids, lastFailed, err = session.Repeat(ctx, o.Session.With(pc), todo)
	if err != nil {
		if ie, ok := session.Interrupted(err); ok {
			// ie says what the run kept, and where: a spill file's path when the store
			// failed (issue 40 M3: it was dropped here).
			return ids, lastFailed, &session.InterruptedError{Err: fmt.Errorf("sweep interrupted at %s: %w; resume with --label %s --resume", pt.Name(), ie, o.Prefix)}
		}
		return ids, lastFailed, fmt.Errorf("sweep point %s: %w", pt.Name(), err)
	}
	return ids, lastFailed, nil
}

// plural is "1 noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
