// Package workload defines the shape every benchmark family takes: a pure Plan of named
// Steps, each with a Prepare, a Load (groups of workers plus a stop rule) that the runner
// times, and a Verify (the audit). Workloads never read a clock and never time anything:
// the runner does. It sits after config/catalog and before the runner in the flow.
package workload

import (
	"context"
	"errors"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
)

// Meta names a workload.
type Meta struct {
	Name string
	// Version is bumped whenever the generated data or statements change, so results of
	// different versions are never compared unknowingly.
	Version int
	Kind    engine.Kind
	// Steps lists every step name in run order (the spec's names, verbatim).
	Steps []string
}

// Workload is one benchmark family.
type Workload interface {
	Meta() Meta
	// Plan turns a validated configuration into the steps to run, in order. It is pure:
	// no I/O, no clock, table-testable without an engine.
	Plan(cfg *config.Run) ([]Step, error)
}

// Step is one named phase of a workload.
type Step interface {
	// Name is exactly the spec's step name ("l.i0", "qr100").
	Name() string
	// Prepare runs before the step's clock starts (e.g. create tables for l.i0).
	Prepare(ctx context.Context, h engine.Handle) error
	// Load describes the timed work.
	Load(ctx context.Context, h engine.Handle) (Load, error)
	// Verify is the audit after the step. detail says what was checked and found; a
	// non-nil error fails the step and carries the numbers.
	Verify(ctx context.Context, h engine.Handle) (detail string, err error)
}

// Noter is implemented by steps that have something to record besides their metrics,
// such as what a cleanup did. The runner calls Note after the load and stores it.
type Noter interface {
	Note() string
}

// Load is the timed part of a step.
type Load struct {
	// Kind is "load" for steps whose primary op counts inserted or indexed rows, and
	// "read-write" for steps whose primary op is a query (reference §2.2).
	Kind string
	// Primary is the label whose throughput is the step's throughput.
	Primary string
	Groups  []Group
	// Duration > 0 stops the step after that long, whatever the groups are doing.
	Duration time.Duration
	// MinDuration keeps the step running (idle) at least this long after the groups
	// marked UntilDone have finished (e.g. the cleanup's wait).
	MinDuration time.Duration
}

// Unit says what a label's count means.
type Unit string

// Units.
const (
	UnitRows Unit = "rows" // count = rows affected (insert, delete, index)
	UnitOps  Unit = "ops"  // count = statements executed (queries)
)

// Group is a set of workers doing the same kind of op.
type Group struct {
	// Label is the op label ("insert", "delete", "range-query", "point-query", "index").
	Label string
	// Role is the actor's role for per-connection accounting ("insert", "delete", "query",
	// "load", "index", "cleanup").
	Role string
	Unit Unit
	// Workers, one session each.
	Workers []Worker
	// Rate is the scheduled ops (statements) per second of each worker; 0 = closed loop.
	Rate float64
	// RowsPerOp converts Rate into the target rows/s of a rate-limited, row-counting
	// group: target = Rate × RowsPerOp × len(Workers).
	RowsPerOp int
	// Background marks rate-limited writers whose achieved rate is judged against the SLA.
	Background bool
	// UntilDone: the step ends (subject to MinDuration) once every worker of every such
	// group has returned ErrDone. Groups without it are stopped then.
	UntilDone bool
}

// TargetPerSec is the group's target in its unit per second (0 when not rate-limited).
func (g Group) TargetPerSec() float64 {
	if g.Rate <= 0 {
		return 0
	}
	per := 1.0
	if g.Unit == UnitRows && g.RowsPerOp > 0 {
		per = float64(g.RowsPerOp)
	}
	return g.Rate * per * float64(len(g.Workers))
}

// Worker is one actor. The runner calls Init once with the worker's own session before
// the clock starts, then Ready and Op until Op returns ErrDone or the step stops, then Close.
type Worker interface {
	Init(ctx context.Context, s engine.Session) error
	// Ready blocks until the next op may run (e.g. a deleter waiting for the inserter). It
	// is not timed as service time; for rate-limited workers it counts in response time.
	Ready(ctx context.Context) error
	// Op does one operation and returns the rows it affected or returned. It returns
	// ErrDone (and does nothing) when the worker's quota is complete.
	Op(ctx context.Context) (rows int64, err error)
	Close() error
}

// ErrDone is returned by Worker.Op when the worker has nothing left to do.
var ErrDone = errors.New("worker done")
