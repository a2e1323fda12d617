// Package sysbench is the sysbench microbenchmark suite (reference-benchmarks.md §3, the
// reference's bench/sysbench.lua): about thirty tests of sysbench's OLTP Lua scripts, run
// in the reference's order on sbtest tables, with the writeback-debt cleanups between
// phases. In the flow it is a workload family: the catalog lists it, Plan turns the shared
// config.Run and the resolved Params into steps (the load, the tests at each range and
// thread count, the cleanups), and the runner runs each step's Prepare, Load (one worker
// per sysbench thread) and Verify (the data check after every write). It composes every
// statement from the engine's Dialect and never reads a clock.
//
// Files: catalog.go (the tests of §3.3 and the order of §3.4, step names), params.go
// (flags, presets, validation), sql.go (statement shapes), gen.go (c and pad values, the
// zipfian generator), load.go (the load), test.go (the tests' events), check.go (the data
// check); the cleanups (§3.5) are the kit's workload.CleanupStep.
package sysbench

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Name is the workload's name on the command line.
const Name = "sysbench"

// version is bumped whenever generated data or statements change (workload.Meta).
// 2: the key is sysbench's 32-bit INTEGER (was the engine's 64-bit auto-increment).
const version = 2

// Roles (per-connection CPU) and load kinds (workload.Load.Kind).
const (
	roleQuery  = "query"
	roleInsert = "insert"
	roleIndex  = "index"

	kindLoad    = "load"
	kindRead    = "read"
	kindWrite   = "write"
	kindCleanup = workload.KindCleanup

	labelIndex   = "index"
	labelInsert  = "insert"
	labelCleanup = workload.LabelCleanup
)

// Workload is the sysbench suite.
type Workload struct{}

// New returns the sysbench workload.
func New() *Workload { return &Workload{} }

var _ workload.Workload = (*Workload)(nil)

// Meta names the workload, its steps (one thread count, the catalogue's ranges) and its
// step groups: the reference's four (§3.6), then the load and the warm-up runs.
func (*Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Version: version, Kind: engine.KindSQL,
		Steps:   stepNames(allSteps([]int{1}, 0)),
		Summary: "the sysbench microbenchmarks (point-query … insert, reference order, QPS per group)",
		Examples: []string{
			"--scale tiny",
			"--scale tiny --tests point-query,read-only --threads 1,4",
			"--engine postgres --managed --scale tiny --prepared=false",
		},
		SweepExamples: []string{
			"--engine postgres --versions 13,15 --scale tiny --tests point-query,insert",
			"--engine mariadb --profiles default,cached --scale tiny --repeat 3",
		},
		Groups: []workload.StepGroup{
			{Name: groupPoint, Title: "point queries"},
			{Name: groupRange, Title: "range queries without aggregation"},
			{Name: groupAgg, Title: "range queries with aggregation"},
			{Name: groupWrite, Title: "writes"},
			{Name: groupLoad, Title: "load"},
			{Name: groupWarmUp, Title: "warm-up (.warm, .pre, .warmpre)"},
		}}
}

// Plan returns the selected steps in the reference's order: all of them, or the load
// with --tests' tests, or exactly --steps. It is pure: it validates and derives every
// step's parameters, but does no I/O.
func (*Workload) Plan(cfg *config.Run, params workload.Params) ([]workload.Step, error) {
	prm, err := workload.PlanParams[*Params](Name, cfg, params)
	if err != nil {
		return nil, err
	}
	sp := *prm
	sp.Threads, sp.Tests = slices.Clone(prm.Threads), slices.Clone(prm.Tests)
	specs := allSteps(sp.Threads, sp.RangeSize)
	switch {
	case len(sp.Tests) > 0:
		specs = selectByTests(specs, sp.Tests)
	case len(cfg.Steps) > 0:
		specs = slices.DeleteFunc(specs, func(s stepSpec) bool { return !slices.Contains(cfg.Steps, s.name) })
	}
	p := &plan{seed: cfg.Seed, p: sp}
	for _, s := range specs {
		if s.name == stepLoad {
			p.baseline.Created = true
		}
	}
	for i := 1; i <= sp.Tables; i++ {
		p.tables = append(p.tables, &table{n: i, name: tableName(i)})
		p.names = append(p.names, tableName(i))
	}
	var steps []workload.Step
	for _, s := range specs {
		base := stepBase{StepBase: workload.NewStepBase(s.name, s.group), p: p}
		switch s.name {
		case stepLoad:
			steps = append(steps, &loadStep{stepBase: base})
		case stepCleanupLoad, stepCleanupReadWrite:
			// §3.5 (run.sh's postwrite), on every sbtest table; nothing to check after it.
			steps = append(steps, &workload.CleanupStep{StepCore: &base,
				Cleanup: workload.Cleanup{Tables: p.names, Wait: sp.CleanupWait, Who: Name + " " + s.name}})
		default:
			steps = append(steps, &testStep{stepBase: base, t: s.test, variant: s.entry.variant,
				rng: s.rng, threads: s.threads, dur: sp.timeOf(s.test, s.entry.variant)})
		}
	}
	return steps, nil
}

// plan is the state the steps of one run share: the tables and what the run's statements
// did to them.
type plan struct {
	seed   int64
	p      Params
	tables []*table
	names  []string
	// baseline is the tables' before the run's first step (Created: the load is in the
	// run; it creates the tables, so every table starts empty).
	baseline workload.Baseline
}

// table is one sbtest table and what it must hold: its row count and sum(k) as the
// statements of the run reported them (inserts and deletes change the count; inserts,
// deletes and k = k+1 change sum(k)), from the baseline measured before the first step.
type table struct {
	n    int // 1-based
	name string

	count, sumK atomic.Int64
}

// stepBase holds what every step has: its name, group and the shared plan. Its Prepare
// records the baseline.
type stepBase struct {
	workload.StepBase
	p *plan
}

// Prepare records the tables' row counts and sums as the data check's baseline when the
// run has no load (once, at the first step).
func (s *stepBase) Prepare(ctx context.Context, h engine.Handle) error {
	return s.p.baseline.Ensure(ctx, h, Name+" "+s.Name(), func(ctx context.Context, _ engine.SQL, sess engine.Session) error {
		return s.p.measureTables(ctx, sess, s.Name())
	})
}

// measureTables is the baseline of every table (under the baseline's lock).
func (p *plan) measureTables(ctx context.Context, s engine.Session, step string) error {
	for _, t := range p.tables {
		n, sum, err := measure(ctx, s, t.name)
		if err != nil {
			return fmt.Errorf("sysbench %s: baseline of %s (run the %s step first?): %w", step, t.name, stepLoad, err)
		}
		t.count.Store(n)
		t.sumK.Store(sum)
	}
	return nil
}

// queryInt prepares, runs and closes a one-integer query.
func queryInt(ctx context.Context, s engine.Session, q string) (int64, error) {
	st, err := s.Prepare(ctx, q)
	if err != nil {
		return 0, err
	}
	v, _, err := st.QueryInt(ctx, nil)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return v, err
}
