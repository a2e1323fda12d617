// Package insertbench is the Insert Benchmark (spec/insert-benchmark.md, following the
// reference client of reference-benchmarks.md §1). In the flow it is a workload family:
// the catalog lists it, Plan turns a validated config.Run into the eleven named steps, and
// the runner runs each step's Prepare, Load (worker groups it times) and Verify (the audit).
// It composes every statement from the engine's Dialect and never reads a clock.
//
// Files: insertbench.go (plan, shared state, the cleanup step: the kit's
// workload.CleanupStep), params.go (flags, presets, validation), gen.go (row generation,
// §1.4), sql.go (statement shapes; the delete's shape per engine), insert.go / delete.go
// / query.go (the actors), load.go (l.i0, l.i1, l.i2), index.go (l.x), rw.go (qr*, qp*),
// audit.go (the audit after every step), content.go (its check of the rows' contents
// against the generator), auditstate.go (its expectations, kept in the benchmark
// database for a later run on the same data).
//
// On the client's hot path, the row generator appends a 100-row batch to engine.Args
// without allocating, and reads the data buffer's random offsets in one pass, so their
// cache misses overlap.
package insertbench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/workload"
)

// Name is the workload's name on the command line.
const Name = "insertbench"

// version is bumped whenever generated data or statements change (workload.Meta).
const version = 1

// Step names (spec "Steps"; stable: reports and users refer to them).
const (
	stepLoad    = "l.i0"
	stepIndex   = "l.x"
	stepWrite1  = "l.i1"
	stepWrite2  = "l.i2"
	stepCleanup = "cleanup"
)

// Op labels and roles (DESIGN.md conventions).
const (
	labelInsert     = "insert"
	labelDelete     = "delete"
	labelIndex      = "index"
	labelCleanup    = workload.LabelCleanup
	labelRangeQuery = "range-query"
	labelPointQuery = "point-query"
	roleQuery       = "query"
)

// Load kinds (workload.Load.Kind).
const (
	kindLoad      = "load"
	kindReadWrite = "read-write"
	kindCleanup   = workload.KindCleanup
)

// Rows per commit by default (spec "Steps", reference §1.9).
const (
	rpcLoad   = 100 // l.i0
	rpcWrite1 = 50  // l.i1: big transactions
	rpcWrite2 = 5   // l.i2: small transactions
	rpcRW     = 50  // qr*, qp*
)

// Step groups (workload.Meta.Groups): the reference's write-heavy, range and point families.
const (
	groupWrite = "write"
	groupRange = "range"
	groupPoint = "point"
)

// stepSpec is one step of the sequence with what defines it.
type stepSpec struct {
	name  string
	kind  string // kindLoad, kindReadWrite, kindCleanup (workload.Load.Kind)
	group string
	rpc   int  // default rows per commit; 0: the step inserts nothing
	rate  int  // read-write steps: the insert and delete rate per client, rows/s
	point bool // read-write steps: point queries (qp) rather than range queries (qr)
}

// readWriteRates are the per-client insert (and delete) rates of the read-write steps, in
// rows/s (reference §1.9: 100, 500, 1000); each has a range (qr) and a point (qp) step.
func readWriteRates() []int { return []int{100, 500, 1000} }

// stepTable lists every step in run order.
func stepTable() []stepSpec {
	t := []stepSpec{
		{name: stepLoad, kind: kindLoad, group: groupWrite, rpc: rpcLoad},
		{name: stepIndex, kind: kindLoad, group: groupWrite},
		{name: stepWrite1, kind: kindLoad, group: groupWrite, rpc: rpcWrite1},
		{name: stepWrite2, kind: kindLoad, group: groupWrite, rpc: rpcWrite2},
		{name: stepCleanup, kind: kindCleanup},
	}
	for _, r := range readWriteRates() {
		n := strconv.Itoa(r)
		t = append(t,
			stepSpec{name: "qr" + n, kind: kindReadWrite, group: groupRange, rpc: rpcRW, rate: r},
			stepSpec{name: "qp" + n, kind: kindReadWrite, group: groupPoint, rpc: rpcRW, rate: r, point: true})
	}
	return t
}

// stepByName finds a step of the sequence.
func stepByName(name string) (stepSpec, bool) {
	for _, st := range stepTable() {
		if st.name == name {
			return st, true
		}
	}
	return stepSpec{}, false
}

// stepNames lists every step in run order.
func stepNames() []string {
	var names []string
	for _, st := range stepTable() {
		names = append(names, st.name)
	}
	return names
}

// rpcSteps lists the steps --rows-per-commit applies to.
func rpcSteps() []string {
	var names []string
	for _, st := range stepTable() {
		if st.rpc > 0 {
			names = append(names, st.name)
		}
	}
	return names
}

// Workload is the Insert Benchmark.
type Workload struct{}

// New returns the Insert Benchmark workload.
func New() *Workload { return &Workload{} }

var _ workload.Workload = (*Workload)(nil)

// Plan returns the selected steps (cfg.Steps, all when empty) in the spec's order, whatever
// order they were listed in. It is pure: it validates, derives the parameters of every
// step and builds the shared immutable data (the data buffer), but does no I/O.
func (*Workload) Plan(cfg *config.Run, params workload.Params) ([]workload.Step, error) {
	prm, err := workload.PlanParams[*Params](Name, cfg, params)
	if err != nil {
		return nil, err
	}
	selected, _ := selectSteps(cfg)
	ib := *prm
	ib.RowsPerCommit = maps.Clone(ib.RowsPerCommit)

	p := &plan{
		seed:     cfg.Seed,
		ib:       ib,
		baseline: workload.Baseline{Created: selected[stepLoad]},
		data:     NewDataBuffer(cfg.Seed),
	}
	// Clients are numbered from cfg.ClientOffset+1: a part of a run shared by several
	// agents (dbperf run --agents) owns its own clients' tables.
	for i := cfg.ClientOffset + 1; i <= cfg.ClientOffset+cfg.Clients; i++ {
		c := &client{id: i, table: "pi" + strconv.Itoa(i)}
		p.clients = append(p.clients, c)
		p.tables = append(p.tables, c.table)
	}

	var steps []workload.Step
	for _, st := range stepTable() {
		if !selected[st.name] {
			continue
		}
		base := stepBase{StepBase: workload.NewStepBase(st.name, st.group), p: p}
		switch {
		case st.name == stepLoad:
			steps = append(steps, &writeStep{stepBase: base, create: true,
				rpc: rpcOf(&ib, st), quota: ib.Rows})
		case st.name == stepIndex:
			steps = append(steps, &indexStep{stepBase: base})
		case st.name == stepWrite1 || st.name == stepWrite2:
			steps = append(steps, &writeStep{stepBase: base, deletes: ib.Delete,
				rpc: rpcOf(&ib, st), quota: writeQuota(st.name, ib.Rows2)})
		case st.name == stepCleanup:
			// The cleanup (spec "Cleanup per engine", reference §1.10), then the audit.
			steps = append(steps, &workload.CleanupStep{StepCore: &base, Audit: base.Verify,
				Cleanup: workload.Cleanup{Tables: p.tables, Wait: ib.CleanupWait, Who: Name + " " + st.name}})
		default:
			steps = append(steps, newRWStep(base, st, &ib))
		}
	}
	return steps, nil
}

// Meta names the workload and lists its steps in run order.
func (*Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Version: version, Kind: engine.KindSQL, Steps: stepNames(),
		Summary: "the Insert Benchmark: l.i0 l.x l.i1 l.i2 cleanup qr100 qp100 qr500 qp500 qr1000 qp1000",
		Examples: []string{
			"--scale tiny",
			"--scale tiny --steps l.i0,l.x,qp100 --repeat 4 --label a",
			"--engine postgres --managed --scale tiny --profile cached",
			"--engine mariadb --managed --mysql-storage-engine rocksdb --scale tiny",
		},
		SweepExamples: []string{
			"--engine postgres --versions 13,15 --scale tiny",
			"--engine mariadb --profiles default,cached --scale tiny --repeat 3",
			"--engine sqlite --profiles a=default,b=default --scale tiny --steps l.i0,qp100 --repeat 6",
		},
		// The read-write steps: a query, an insert and a delete actor per client.
		SessionsPerClient: 3,
		// Client i's table is pi<i> (Plan), so --agents can split the clients.
		ClientsOwnTables: true,
		Groups: []workload.StepGroup{
			{Name: groupWrite, Title: "write (l.*)"},
			{Name: groupRange, Title: "range (qr*)"},
			{Name: groupPoint, Title: "point (qp*)"},
		},
	}
}

// selectSteps resolves cfg.Steps into a set; empty selects every step.
func selectSteps(cfg *config.Run) (map[string]bool, error) {
	sel := map[string]bool{}
	if len(cfg.Steps) == 0 {
		for _, n := range stepNames() {
			sel[n] = true
		}
		return sel, nil
	}
	var pr workload.Problems
	pr.Steps(cfg, stepNames(), Name+" has")
	for _, n := range cfg.Steps {
		sel[n] = true
	}
	return sel, pr.Err()
}

// writeQuota is a client's rows for l.i1 (4/5 of rows2, rounded half up as the reference's
// round(nr2·4/5)) and l.i2 (the rest, so that the two add up to rows2 exactly).
func writeQuota(step string, rows2 int64) int64 {
	i1 := (4*rows2 + 2) / 5
	if step == stepWrite1 {
		return i1
	}
	return rows2 - i1
}

// plan is the state the steps of one run share: per-client tables and counters, and the
// immutable data every insert actor draws from.
type plan struct {
	seed    int64
	ib      Params
	clients []*client
	tables  []string
	data    *DataBuffer

	// baseline is the tables' before the run's first step (Created: l.i0 is in the run;
	// it creates the tables, so every table starts empty). Its lock guards the audit's
	// state too (client.model, client.noContent, buffers).
	baseline workload.Baseline
	// buffers are the data buffers of other seeds than the run's (stored segments).
	buffers map[int64]*DataBuffer
}

// client is one client's table and what its actors did to it during the run. Counters are
// cumulative over the run and written only by the client's own actors.
type client struct {
	id    int // 1-based
	table string

	// inserted and deleted count rows the actors' statements reported as affected.
	inserted atomic.Int64
	deleted  atomic.Int64
	// baseline is the row count before the run's first step (0 when l.i0 created the table).
	baseline atomic.Int64
	// minEst is the deleter's estimate of min(transactionid): every id below it has been
	// deleted. Published to the query actors (point-query ids) and checked by the audit.
	minEst atomic.Int64
	// indexed: the secondary indexes exist (l.x created them, or they were found at baseline).
	indexed atomic.Bool

	// model is what the table must contain, for the audit's content check; nil when it is
	// not known, for the reason in noContent. Used by Prepare and Verify only.
	model     *contentModel
	noContent string
}

// rpcOf returns the rows per commit of a step: the override keyed by step name, or the
// step's default.
func rpcOf(ib *Params, st stepSpec) int {
	if n, ok := ib.RowsPerCommit[st.name]; ok && n > 0 {
		return n
	}
	return st.rpc
}

// stepBase holds what every step has: its name, group and the shared plan. Its Prepare
// records the baseline and its Verify is the audit (spec "Audit after every step").
type stepBase struct {
	workload.StepBase
	p *plan
}

// Prepare records the tables' row counts as the audit's baseline when the run did not
// start with l.i0 (once, at the first step).
func (s *stepBase) Prepare(ctx context.Context, h engine.Handle) error {
	return s.p.ensureBaseline(ctx, h, s.Name())
}

// Verify audits every client's table (a step without insert actors).
func (s *stepBase) Verify(ctx context.Context, hh engine.Handle) (string, error) {
	h, sqlErr := engine.AsSQL(hh)
	if sqlErr != nil {
		return "", sqlErr
	}
	return s.p.auditAll(ctx, h, s.Name(), 0)
}

// prepareWrites is the Prepare of a step that inserts or deletes: the baseline, then the
// stored expectations are marked open until the step's audit passes.
func (s *stepBase) prepareWrites(ctx context.Context, h engine.SQL) error {
	if err := s.p.ensureBaseline(ctx, h, s.Name()); err != nil {
		return err
	}
	return s.p.markOpen(ctx, h, s.Name())
}

// ensureBaseline counts every table once when the run does not create them (no l.i0), and
// probes whether the secondary indexes exist, so the audit knows what to expect. Where the
// run that wrote a table stored its expectations (auditstate.go), the table is audited
// against them at once, contents included, and they become this run's baseline.
func (p *plan) ensureBaseline(ctx context.Context, h engine.Handle, step string) error {
	return p.baseline.Ensure(ctx, h, Name+" "+step, func(ctx context.Context, h engine.SQL, s engine.Session) error {
		return p.measure(ctx, s, h.Dialect(), step)
	})
}

// measure is the baseline of every client's table (under the baseline's lock).
func (p *plan) measure(ctx context.Context, s engine.Session, d engine.Dialect, step string) error {
	for _, c := range p.clients {
		n, _, err := queryInt(ctx, s, countSQL(c.table))
		if err != nil {
			return fmt.Errorf("insertbench %s client %d: baseline count of %s (run %s first?): %w",
				step, c.id, c.table, stepLoad, err)
		}
		c.baseline.Store(n)
		c.indexed.Store(indexesExist(ctx, s, d, c.table))
		st, err := readState(ctx, s, d, c.table)
		switch {
		case errors.Is(err, errNoState):
			c.model, c.noContent = nil, err.Error()
		case err != nil:
			return fmt.Errorf("insertbench %s client %d: %w", step, c.id, err)
		default:
			if err := p.checkStored(ctx, s, d, c, st); err != nil {
				return fmt.Errorf("insertbench %s client %d: before the run's first step, %s is not as the run that wrote it left it (kept in %s): %w",
					step, c.id, c.table, stateTable, err)
			}
			c.model, c.noContent = st.model, ""
			c.baseline.Store(st.rowsLeft)
		}
	}
	return nil
}

// resetTables records that l.i0 has (re)created every table empty.
func (p *plan) resetTables() {
	p.baseline.Reset(func() {
		for _, c := range p.clients {
			c.baseline.Store(0)
			c.inserted.Store(0)
			c.deleted.Store(0)
			c.minEst.Store(0)
			c.indexed.Store(false)
			c.model, c.noContent = &contentModel{}, ""
		}
	})
}

// queryInt prepares, runs and closes a one-integer query.
func queryInt(ctx context.Context, s engine.Session, q string, args ...any) (int64, bool, error) {
	st, err := s.Prepare(ctx, q)
	if err != nil {
		return 0, false, err
	}
	v, ok, err := st.QueryInt(ctx, engine.NewArgs(args...))
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return v, ok, err
}

// indexesExist probes the three secondary indexes through the engine's index hint; an
// engine without a hint cannot tell (and the audit then has no index counts to compare).
func indexesExist(ctx context.Context, s engine.Session, d engine.Dialect, table string) bool {
	for _, ix := range secondaryIndexes(table) {
		from, ok := d.FromIndex(table, ix.Name)
		if !ok {
			return false
		}
		if _, _, err := queryInt(ctx, s, "SELECT count(*) FROM (SELECT 1 FROM "+from+" LIMIT 1) probe"); err != nil {
			return false
		}
	}
	return true
}
