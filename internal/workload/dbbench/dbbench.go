// Package dbbench is the db_bench-style key-value suite (reference-benchmarks.md §4): the
// sequence benchmark_compare.sh runs per RocksDB version (§4.1), all3.sh's legacy one
// (§4.5) and an LSM-shape experiment built from the shape commands of §4.2, on the
// embedded key-value engines (engine.KV: rocksdb, pebble). In the flow it is a workload
// family: the catalog lists it, Plan turns the shared config.Run and the resolved Params
// into steps, and the runner runs each step's Prepare (which reopens the engine when the
// step's LSM options differ, as db_bench runs each job as a new process), Load (one
// worker per db_bench thread, each with its own engine.KVSession and buffers) and Verify
// (an audit of the keys and values). Workers never read a clock.
//
// Files: catalog.go (the sequences, step names), params.go (flags, presets, validation,
// the LSM options as engine.KVOptions, through workload.KVOptioner), gen.go (keys,
// compressible values, the fill permutation), steps.go (fill, reads, range scans,
// overwrites, *whilewriting, each worker on an engine.KVSession), shape.go (the LSM-shape
// commands).
package dbbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Name is the workload's name on the command line.
const Name = "dbbench"

// version is bumped whenever generated data or the steps' operations change.
const version = 1

// Load kinds (workload.Load.Kind) and roles.
const (
	kindLoad      = "load"
	kindRead      = "read"
	kindWrite     = "write"
	kindReadWrite = "read-write"
	kindShape     = "shape"

	roleRead  = "read"
	roleWrite = "write"
	roleShape = "shape"
)

// Op labels.
const (
	labelPut      = "put"
	labelGet      = "get"
	labelMultiGet = "multiget"
	labelSeek     = "seek"
	labelSeekRev  = "seek-reverse"
	labelNext     = "next"
)

// Workload is the db_bench-style suite.
type Workload struct{}

// New returns the dbbench workload.
func New() *Workload { return &Workload{} }

var _ workload.Workload = (*Workload)(nil)

// Meta names the workload, its steps (the current sequence) and its step groups.
func (*Workload) Meta() workload.Meta {
	p, _ := Preset(scales().Default)
	return workload.Meta{Name: Name, Version: version, Kind: engine.KindKV,
		Steps:   stepNames(currentSpecs(p)),
		Summary: "db_bench-style key-value suite (benchmark_compare.sh's sequence, all3.sh's, LSM shapes) on rocksdb and pebble",
		Examples: []string{
			"--scale tiny",
			"--engine pebble --scale tiny --sequence shape",
			"--engine rocksdb --scale small --profile zstd --steps fillseq_disable_wal,readrandom --duration 30",
		},
		SweepExamples: []string{
			"--engine rocksdb --profiles default,zstd --scale tiny",
			"--engine pebble --profiles a=default,b=default --scale tiny --repeat 6",
		},
		Groups: []workload.StepGroup{
			{Name: groupLoad, Title: "load (fill)"},
			{Name: groupRead, Title: "point reads"},
			{Name: groupRange, Title: "range reads (seek + nexts)"},
			{Name: groupWrite, Title: "overwrites"},
			{Name: groupRW, Title: "reads while writing (rate-limited writer)"},
			{Name: groupShape, Title: "LSM shape (flush, compaction)"},
		}}
}

// Plan returns the steps of the sequence, or exactly --steps of it, in order. It is pure.
func (*Workload) Plan(cfg *config.Run, params workload.Params) ([]workload.Step, error) {
	prm, err := workload.PlanParams[*Params](Name, cfg, params)
	if err != nil {
		return nil, err
	}
	pl := &plan{seed: cfg.Seed, p: *prm, unreached: map[string]string{}}
	specs := specsOf(&pl.p)
	if len(cfg.Steps) > 0 {
		specs = slices.DeleteFunc(specs, func(s stepSpec) bool { return !slices.Contains(cfg.Steps, s.name) })
	}
	steps := make([]workload.Step, 0, len(specs))
	for _, s := range specs {
		base := stepBase{StepBase: workload.NewStepBase(s.name, s.group), spec: s, p: pl}
		switch s.op {
		case opFill:
			steps = append(steps, &fillStep{stepBase: base})
		case opShape:
			steps = append(steps, &shapeStep{stepBase: base})
		case opOverwrite:
			steps = append(steps, &writeStep{stepBase: base})
		default:
			steps = append(steps, &readStep{stepBase: base})
		}
	}
	return steps, nil
}

// plan is what the steps of one run share: the parameters, the value generator and the
// shape states the run could not reach.
type plan struct {
	seed int64
	p    Params

	valsOnce sync.Once
	vals     *values

	mu sync.Mutex
	// unreached: shape state → why it was not reached (an unsupported command).
	unreached map[string]string
}

// values returns the run's value generator, built on first use.
func (p *plan) values() *values {
	p.valsOnce.Do(func() {
		p.vals = newValues(workload.Stream(p.seed, Name, "values"), splitmix64(uint64(p.seed)), p.p.ValueSize)
	})
	return p.vals
}

func (p *plan) setUnreached(state, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unreached[state] = why
}

func (p *plan) unreachedWhy(state string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unreached[state]
}

// stepBase holds what every step has: its name and group (catalog.go's; no group for
// revrange and overwritesome), its spec and the shared plan. Its Prepare opens the engine
// with the step's options.
type stepBase struct {
	workload.StepBase
	spec stepSpec
	p    *plan
	// streams are the workers' random streams by role and index (stream).
	streams map[string]*rand.Rand
}

// options are the LSM options the step runs with: the run's, fillseq_disable_wal's
// (§4.1 row 1: the vector memtable, which also means no concurrent memtable writes, no
// WAL, every level compressed so trivially moved files are) or without bloom filters.
func (s *stepBase) options() engine.KVOptions {
	o := s.p.p.KV
	if s.spec.walOff {
		o.VectorMemtable, o.DisableWAL, o.MinLevelToCompress = true, true, 0
	}
	if s.spec.noBloom {
		o.BloomBitsPerKey = 0
	}
	return o
}

// Prepare reopens the engine when its options are not the step's, and skips a read of
// the shape sequence whose shape could not be made.
func (s *stepBase) Prepare(ctx context.Context, h engine.Handle) error {
	kv, err := engine.AsKV(h)
	if err != nil {
		return err
	}
	if s.spec.state != "" && s.spec.op != opShape {
		if why := s.p.unreachedWhy(s.spec.state); why != "" {
			return workload.Skip(fmt.Sprintf("the %s shape was not made: %s", s.spec.state, why))
		}
	}
	return reopen(ctx, kv, s.options(), s.spec.name)
}

// reopen reopens kv with o unless those are its options already. A database open without
// its WAL is flushed first, as RocksDB does when it closes (db_bench's next job finds
// every key).
func reopen(ctx context.Context, kv engine.KV, o engine.KVOptions, step string) error {
	cur := kv.Options()
	if cur == o {
		return nil
	}
	if cur.DisableWAL {
		if err := kv.Flush(ctx); err != nil {
			return fmt.Errorf("dbbench %s: flush before reopening (the WAL was off): %w", step, err)
		}
	}
	if err := kv.Reopen(ctx, o); err != nil {
		return fmt.Errorf("dbbench %s: reopen with the step's options: %w", step, err)
	}
	return nil
}
