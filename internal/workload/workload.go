// Package workload defines the shape every benchmark family takes: a pure Plan of named
// Steps, each with a Prepare, a Load (groups of workers plus a stop rule) that the runner
// times, and a Verify (the audit). Workloads never read a clock and never time anything:
// the runner does. It sits after config/catalog and before the runner in the flow.
//
// # The kit
//
// The package is also the kit every workload is built from, so that no workload copies
// another's plumbing. A new workload implements only what is its own:
//
//   - Meta (its name, steps, step groups, examples), NewParams and Plan (Workload);
//   - its Params: a struct embedding ParamsBase, with its parameters; AddFlags, which
//     registers each flag bound to the parameter it sets (BindFlags, then Flags.Int,
//     Seconds, Parsed, …: name, default and help text as --help shows them); a preset
//     function (scale name → parameters, Scales.Unknown for a name it does not know);
//     Resolve, which is ApplyScale, whatever --time and the like mean for the workload,
//     ApplyFlags, Threads where --clients N means --threads N, then Validate; Validate,
//     collecting every problem (Problems: Add, Join, Steps for --steps, NeedsData for a
//     selection without the step that creates the data); and Stored (Stored with the
//     parameters no flag sets);
//   - its steps: a step base embedding StepBase (Name, Group) and the plan its steps
//     share, with the Prepare its steps have in common; the steps' Load and Verify; its
//     workers.
//
// It gets: ParamsBase (Scale, Scales — StandardScales unless it defines its own —,
// ReportInterval, the flag binding), Flags (registration, application after the preset,
// refused values as one-line problems, the stored key of every flag's parameter),
// Seconds, Threads, Problems, PlanParams (the start of every Plan: configuration and
// parameters checked and validated), StepBase, Baseline (a SQL workload's once-per-run
// measurement of tables it did not create, and its reset when its load creates them),
// SQLDialect, CleanupStep and Cleanup (the writeback-debt cleanup step, whole), Indexer
// (a worker building a table's indexes in one op), CloseStmts, Stream (deterministic
// random streams). Package workloadtest resolves and plans a workload as `dbperf run`
// does, for its tests. CleanupStep is the step insertbench and sysbench share.
//
// # The types
//
// Workload; Params (a workload's flags, presets, validation and stored values);
// Meta.Groups; Step; Steady (a step that measures a steady state for a fixed time, which
// may run as slices); Load; Group (ReadOnly: its workers only read, so a standby may
// serve them); Worker; Mixer (a worker whose ops are of several kinds, each measured
// under a label of its own: TPROC-C's transactions); ErrDone.
//
// Workloads own their parameters. config.Run holds only what every workload shares;
// each workload's Params registers its own flags, applies its scale presets, validates
// every parameter once (Resolve; Plan calls the same function for configurations built
// in tests) and says what is stored with the run. Plan(*config.Run, Params) gets both.
//
// Step groups are data. A workload declares its groups (Meta.Groups, in report order)
// and each step names its group (Step.Group); both are stored with the run (schema 4),
// and reports take geomeans per group from the store, never from step names.
//
// Workers, not bare ops. A Group holds one Worker per actor instead of one Op function:
// the Insert Benchmark's actors carry per-client state (prepared statements, the
// deleter's minimum-id estimate, the inserter's batch counter) that a stateless Op would
// have to rebuild or share. A worker has Init(session) (untimed: prepares statements),
// Ready (untimed, blocking, e.g. the deleter waiting for the inserter; it counts in the
// response time of paced actors), Op (timed; returns rows; ErrDone ends the worker) and
// Close.
//
// An op may be several statements. A sysbench transaction (BEGIN … COMMIT) is one
// Worker.Op, timed as one event; Group.StatementsPerOp makes the recorder count its
// statements too, so a label's count is sysbench's queries and its events are the
// transactions (metrics.LabelStats.Events, stored since schema 5).
//
// # Adding a workload
//
//  1. A package internal/workload/<name> with a type implementing Workload: Meta (name,
//     version, kind, step names in run order, step groups in report order, a one-line
//     summary), NewParams and Plan(cfg, params).
//  2. Its Params embed ParamsBase (scale, the standard presets tiny, small, medium and
//     large or the workload's own, the report interval) and bind each of the workload's
//     own flags to the parameter it sets with Flags. The shared flags (--engine,
//     --clients, --steps, --scale, --time, --seed, --label, --repeat, --results,
//     --report-interval, --workdir, --managed, --dsn, …) are the cli's. Resolve applies
//     the preset (ApplyScale) and the flags the user set, then validates everything with
//     Problems: every problem at once, one line each, naming the flag. Stored keeps every
//     flag's value with the run. PlanParams starts Plan.
//  3. Steps implement Step (Name and Group from an embedded StepBase, Prepare, Load,
//     Verify); the timed work is Groups of Workers (CloseStmts closes their statements;
//     CleanupStep, Indexer and Baseline are there for SQL workloads). Statements are built
//     from engine.Dialect; SQL that only this workload needs stays in its package.
//  4. One line in catalog.Workloads. `dbperf run <name>` (with --help), the store,
//     `dbperf report`, comparisons and geomeans per group then work unchanged; the
//     package needs no row of its own in docs/architecture.md.
//  5. Tests: Plan and Params table tests in the package (workloadtest resolves and plans
//     a workload as the cli does). TestEveryWorkload (internal/cli) covers a new catalog
//     line by itself: it plans at every scale, checks that its groups and step names are
//     consistent, and runs its first two steps at tiny scale on the first engine of its
//     kind. Add a run through the cli on SQLite and on the managed servers
//     (internal/cli); its docs page (docs/<name>.md, linked from the README's short
//     section); and Meta.Examples and SweepExamples, the --help examples that
//     TestWorkloadExamples parses and validates.
package workload

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

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
	// Groups are the families a report summarizes steps in (a geometric mean and a
	// section each), in the order reports show them. Every step names its group
	// (Step.Group); the groups and each step's group are stored with the run, and reports
	// read them from the store.
	Groups []StepGroup
	// Summary is one line for `dbperf run --help`.
	Summary string
	// Examples are the flags of working `dbperf run NAME …` commands, one per line of
	// `dbperf run NAME --help` (the cli's tests check each parses and validates).
	Examples []string
	// SweepExamples are the same for `dbperf sweep NAME …`.
	SweepExamples []string
	// SessionsPerClient is the most sessions one client (--clients) holds open at once in
	// any step (0 means 1), so a run is refused before it opens more than the engine
	// accepts.
	SessionsPerClient int
	// ClientsOwnTables is true when each client works on tables of its own, numbered from
	// config.Run.ClientOffset+1, so that the parts of one run over several agents (dbperf
	// run --agents) share a server without touching each other's data.
	ClientsOwnTables bool
}

// Sessions is the most sessions a run of m with clients clients holds open at once: its
// clients' and one of dbperf's own (baseline, audit, size).
func (m Meta) Sessions(clients int) int {
	return clients*max(m.SessionsPerClient, 1) + 1
}

// StepGroup is one family of steps in reports.
type StepGroup struct {
	Name  string `json:"name"`  // stored with each step: "point"
	Title string `json:"title"` // shown in reports: "point queries"
	// PerMinute are figures the workload's reference reports for the group's steps in
	// counts per minute (TPROC-C's NOPM and TPM): comparisons show each per config as
	// its labels' measured rates × 60, with the throughput's ranges and ratio intervals.
	PerMinute []PerMinute `json:"per_minute,omitempty"`
}

// PerMinute is one figure of a step group counted per minute: the sum of Labels' rates
// (their counts per second, as the step measured them) × 60.
type PerMinute struct {
	Name   string   `json:"name"`   // "NOPM"
	Title  string   `json:"title"`  // for the legend: "committed new orders per minute"
	Labels []string `json:"labels"` // the op labels whose counts it sums
}

// Workload is one benchmark family.
type Workload interface {
	Meta() Meta
	// NewParams returns the workload's parameters, unresolved: the cli registers their
	// flags on `run <workload>`, then calls Resolve.
	NewParams() Params
	// Plan turns the shared configuration and the resolved parameters into the steps to
	// run, in order. It is pure: no I/O, no clock, table-testable without an engine.
	Plan(cfg *config.Run, p Params) ([]Step, error)
}

// Params is one workload's own parameters: its flags, scale presets, defaults, the
// validation of every one of them (step-dependency rules included) and the values stored
// with the run. The cli keeps only the flags every workload shares (config.Run).
type Params interface {
	// AddFlags registers the workload's own flags.
	AddFlags(fs *pflag.FlagSet)
	// Scales lists the scale presets (--scale) and names the default.
	Scales() (names []string, def string)
	// Resolve fills every parameter from the preset of cfg.Scale, the shared settings
	// (cfg.Time, cfg.Clients, …) and the flags the user set (set reports whether a flag
	// was given), then validates them all against cfg: every problem at once, one line
	// each, naming the flag to fix. It is the one place each parameter is validated.
	Resolve(cfg *config.Run, set func(flag string) bool) error
	// ReportInterval is the measurement interval when --report-interval is not given.
	ReportInterval() time.Duration
	// Stored returns the resolved values stored with the run (JSON-encodable).
	Stored() map[string]any
}

// KVOptioner is implemented by the Params of a key-value workload: the LSM options the
// engine opens with (engine.Target.KV), which the cli passes when it opens an embedded KV
// engine. Steps that need other options reopen the engine themselves (engine.KV.Reopen).
type KVOptioner interface {
	KVOptions() engine.KVOptions
}

// Step is one named phase of a workload.
type Step interface {
	// Name is exactly the spec's step name ("l.i0", "qr100").
	Name() string
	// Group is the name of the step's group in Meta.Groups; "" for a step no group
	// summarizes (a cleanup).
	Group() string
	// Prepare runs before the step's clock starts (e.g. create tables for l.i0).
	Prepare(ctx context.Context, h engine.Handle) error
	// Load describes the timed work.
	Load(ctx context.Context, h engine.Handle) (Load, error)
	// Verify is the audit after the step. detail says what was checked and found; a
	// non-nil error fails the step and carries the numbers.
	Verify(ctx context.Context, h engine.Handle) (detail string, err error)
}

// Steady is implemented by steps that measure a steady state for a fixed time: the
// Insert Benchmark's query steps, sysbench's tests, db_bench's timed reads and overwrites.
// SteadyTime is that time (its Load.Duration), 0 for a step of such a type bounded by a
// count instead. Running a steady step as several shorter slices, each a Prepare, Load
// and Verify of the same step with a shorter Load.Duration, measures the same thing:
// interleaved comparisons (dbperf sweep) alternate the slices of the configs they
// compare. Steps that change the data irreversibly — loads, index builds, cleanups — do
// not implement it and run whole.
type Steady interface {
	SteadyTime() time.Duration
}

// SteadyTime is step's steady time (Steady), 0 when it is not a steady step.
func SteadyTime(step Step) time.Duration {
	if s, ok := step.(Steady); ok {
		return s.SteadyTime()
	}
	return 0
}

// Noter is implemented by steps that have something to record besides their metrics,
// such as what a cleanup did. The runner calls Note after the load and stores it.
type Noter interface {
	Note() string
}

// Load is the timed part of a step.
type Load struct {
	// Kind is "load" for steps whose primary op counts inserted or indexed rows,
	// "read-write" for steps whose primary op is a query (reference §2.2), "read" and
	// "write" for steps whose primary op is a statement that only reads or that writes
	// (sysbench's tests: writes per op, wpi and wkbpi, are then per primary op), and
	// "cleanup" for a writeback-debt cleanup.
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
	// Rate is the scheduled ops per second of each worker; 0 = closed loop.
	Rate float64
	// Gaps, on a rate-limited group, makes each worker's schedule a Poisson process (as
	// pgbench's --rate) instead of evenly spaced slots: Gaps(i) is worker i's (0-based)
	// stream of gaps between scheduled starts, mean 1/Rate, drawn from the workload's
	// seeded randomness. Nil: slot n at start + n/Rate.
	Gaps func(worker int) func() time.Duration
	// StatementsPerOp is how many statements one Op sends (0 means 1): a sysbench
	// transaction's BEGIN … COMMIT, 16 in read-only. The label's statement count (its
	// count for UnitOps: queries per second as sysbench counts them) grows by it per op
	// and its event count (transactions) by one.
	StatementsPerOp int
	// RowsPerOp converts Rate into the target rows/s of a rate-limited, row-counting
	// group: target = Rate × RowsPerOp × len(Workers).
	RowsPerOp int
	// BytesPerOp is the user data one op reads or writes (key + value bytes per key ×
	// keys per op: db_bench's MB/s), 0 when the workload does not count bytes. The
	// step's MB/s and a KV engine's write amplification (bytes flushed and compacted per
	// byte written) are computed from it.
	BytesPerOp int64
	// Background marks rate-limited writers whose achieved rate is judged against the SLA.
	Background bool
	// ReadOnly: the workers' operations only read (the Insert Benchmark's queries, a
	// sysbench test that writes nothing), so their sessions may go to a server that takes
	// no writes: a PostgreSQL cluster's standbys under dbperf run --cluster N --spread.
	ReadOnly bool
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
	switch {
	case g.Unit == UnitRows && g.RowsPerOp > 0:
		per = float64(g.RowsPerOp)
	case g.Unit == UnitOps && g.StatementsPerOp > 1:
		per = float64(g.StatementsPerOp)
	}
	return g.Rate * per * float64(len(g.Workers))
}

// Worker is one actor. The runner calls Init once with the worker's own session before
// the clock starts, then Ready and Op until Op returns ErrDone or the step stops, then Close.
// On a key-value engine the session is nil: the worker opens its engine.KVSession in Init
// from the engine.KV its step's Load captured.
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

// Mixer is implemented by a Worker whose ops are of several kinds, each measured under
// a label of its own (TPROC-C's five transactions, one client running their mix): the
// runner makes a recorder per label of OpLabels, with its group's role and unit, and
// records each op under the label LastLabel names, an index into OpLabels (out of range:
// the group's label). The step's Primary may be one of them.
type Mixer interface {
	OpLabels() []string
	// LastLabel is the kind of the op Op returned last; it is called right after Op.
	LastLabel() int
}

// ErrSkip is wrapped by the error a step's Prepare or Load returns when the step cannot
// run on this engine (an operation the engine does not have): the runner records the step
// as skipped with the error's text as the reason, and the run goes on. Use Skip.
var ErrSkip = errors.New("skipped")

// Skip returns an error wrapping ErrSkip whose text is the reason.
func Skip(reason string) error { return skipError(reason) }

type skipError string

func (e skipError) Error() string        { return string(e) }
func (e skipError) Is(target error) bool { return target == ErrSkip }

// ErrDone is returned by Worker.Op when the worker has nothing left to do.
var ErrDone = errors.New("worker done")
